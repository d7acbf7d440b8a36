"""Issue 46 (MX1): text naming GPUs in a form no reader reads is listed, not refused (captures/gpu_mentions.py)."""

from __future__ import annotations

import pytest

from gpuvet.captures.gpu_mentions import KIND
from gpuvet.captures.read import parse_text
from gpuvet.errors import CaptureError

# written for this test in FAHClient --lspci's row form (vendor:device:bus:slot:function:vendor name:)
_FAH = """FAHClient --lspci lists:
0x10de:0x1b80:1:0:0:NVIDIA Corporation:
0x10de:0x10f0:1:0:1:NVIDIA Corporation:
0x10de:0x1b80:2:0:0:NVIDIA Corporation:
0x10de:0x10f0:2:0:1:NVIDIA Corporation:
"""


def test_a_listing_rows_gpu_functions_are_listed_their_audio_functions_not() -> None:
    fc = parse_text(_FAH, "fah.txt")
    assert fc.kinds == [KIND]
    assert fc.smi is not None and [m.product for m in fc.smi.modules] == ["PCI device 10de:1b80"] * 2
    assert any("its format is not one gpuvet reads; 2 GPU(s) named" in n for n in fc.notes)
    twice = parse_text(_FAH.replace("0x1b80:2:0:0", "0x1b80:1:0:0"), "fah.txt")  # a client listing one address twice
    assert twice.smi is not None and len(twice.smi.modules) == 2
    assert any("2 of its rows give the same PCI address (bus:slot:function 1:0:0)" in n for n in twice.notes)


def test_a_json_dump_naming_an_amd_model_lists_it_as_amd() -> None:
    text = '{"card":"card1","DeviceName":"AMD Radeon RX 6800 XT","Sensors":{"Fan":{"unit":"RPM","value":900}}}\n'
    fc = parse_text(text, "dump.txt")
    assert [m.name for m in fc.amd.modules] == ["AMD Radeon RX 6800 XT"] and fc.smi is None
    assert fc.amd.modules[0].bus_id is None  # never invented


def test_one_device_named_twice_is_counted_once_with_the_bus_id_its_line_gives() -> None:
    text = ("some-tool v2 probing\n"
            "found NVIDIA GeForce RTX 3090 at 0000:41:00.0\n"
            "0000:41:00.0 NVIDIA GeForce RTX 3090 ready\n"
            "my GeForce RTX 3090 is the only card\n")
    fc = parse_text(text, "probe.txt")
    assert fc.smi is not None and len(fc.smi.modules) == 1
    assert fc.smi.modules[0].bus_id == "0000:41:00.0"


def test_indexed_lines_name_one_device_each() -> None:
    text = "Device 0: NVIDIA A100-SXM4-80GB\nDevice 1: NVIDIA A100-SXM4-80GB\n"
    fc = parse_text(text, "dev.txt")
    assert fc.smi is not None and len(fc.smi.modules) == 2


def test_an_amd_gfx_target_and_an_intel_arc_are_read() -> None:
    assert len(parse_text("agent gfx90a online\n", "gfx.txt").amd.modules) == 1
    assert [m.name for m in parse_text("Intel(R) Arc(TM) A770 Graphics detected\n", "arc.txt").xpu.modules] \
        == ["Intel(R) Arc(TM) A770"]


@pytest.mark.parametrize("text", ["hello world\nno devices here\n", "0x8086:0x1572 Ethernet controller\n"])
def test_text_naming_no_gpu_is_still_refused(text: str) -> None:
    with pytest.raises(CaptureError, match="nothing in it is output gpuvet can read"):
        parse_text(text, "none.txt")


def test_a_gpu_drivers_line_no_reader_read_keeps_the_file_refused() -> None:
    """Never 'text naming GPUs' (whose kernel checks would read clear) beside a driver line gpuvet can't read."""
    text = ("one of my GeForce GTX 750 cards threw:\n"
            "frobd[12]: NVRM Xid frobbed on PCI 0000:0b:00 zz\n")  # a form no reader reads (written for this test)
    with pytest.raises(CaptureError):
        parse_text(text, "kern.txt")
