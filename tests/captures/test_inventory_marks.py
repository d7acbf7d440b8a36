"""Issue 46 (R10D): inventory never invents or drops a module. A reader takes a format only by its own marks (a
block of 'Key : value' lines is -q's only by -q's names; ethtool -m's module EEPROM is ethtool's), and modules keyed
by bus id or index are never merged (mx-smi's GPU 1 row is not GPU 0's second row; a headless xpu-smi discovery box
keeps each device). Lines below are written in each tool's format (ethtool's sfpid.c/sfpdiag.c, MetaX mx-smi,
Intel xpu-smi discovery, nvidia-smi topo -m)."""

from __future__ import annotations

import re
import zlib
from pathlib import Path

from gpuvet.backends.capture.backend import CaptureBackend
from gpuvet.captures import ethtool_module, mx_smi, npu_smi, smi_text
from gpuvet.captures.text import clean
from tests.support.corpus import CAPTURES, corpus_files

_ETHTOOL_M = """$ sudo ethtool -m eth2
\tIdentifier                                : 0x03 (SFP)
\tConnector                                 : 0x07 (LC)
\tTransceiver codes                         : 0x10 0x00 0x00 0x00 0x00 0x00 0x00 0x00 0x00
\tTransceiver type                          : 10G Ethernet: 10G Base-SR
\tTransceiver type                          : Extended: 25GBase-SR
\tLaser wavelength                          : 850nm
\tVendor name                               : FS
\tLaser bias current                        : 6.750 mA
\tModule temperature                        : 41.20 degrees C / 106.16 degrees F
\tModule temperature high alarm             : Off
\tModule temperature high warning           : On
\tLaser bias current high alarm             : Off
"""

_MX_SMI = """mx-smi  version: 2.1.12
Attached GPUs                                     : 4
+---------------------------------------------------------------------------------+
| MX-SMI 2.1.12                       Kernel Mode Driver Version: 2.12.13         |
| MACA Version: 2.29.0.19             BIOS Version: 1.20.3.0                      |
|------------------------------------+---------------------+----------------------+
| GPU         NAME                   | Bus-id              | GPU-Util             |
| Temp        Pwr:Usage/Cap          | Memory-Usage        |                      |
|====================================+=====================+======================|
| 0           MetaX C500             | 0000:0e:00.0        | 0%                   |
| 35C         54W / 350W             | 826/65536 MiB       |                      |
+------------------------------------+---------------------+----------------------+
| 1           MetaX C500             | 0000:0f:00.0        | 3%                   |
| 36C         45W / 350W             | 826/65536 MiB       |                      |
+------------------------------------+---------------------+----------------------+
"""

_XPU_HEADLESS = """+-----------+--------------------------------------------------------------------------------------+
| 0         | Device Name: Intel(R) Data Center GPU Flex 170                                       |
|           | Vendor Name: Intel(R) Corporation                                                    |
|           | PCI BDF Address: 0000:4d:00.0                                                        |
|           | DRM Device: /dev/dri/card1                                                           |
+-----------+--------------------------------------------------------------------------------------+
| 1         | Device Name: Intel(R) Data Center GPU Flex 170                                       |
|           | Vendor Name: Intel(R) Corporation                                                    |
|           | PCI BDF Address: 0000:b3:00.0                                                        |
|           | DRM Device: /dev/dri/card2                                                           |
+-----------+--------------------------------------------------------------------------------------+
"""

_TOPO_CUT = """\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\tNUMA Affinity
GPU0\t X \tNV12\tNV12\tNV12\t0-23\t0
GPU1\tNV12\t X \tNV12\tNV12\t0-23\t0
"""


def _inventory(tmp_path: Path, text: str, name: str = "cap.txt"):  # type: ignore[no-untyped-def]
    path = tmp_path / name
    path.write_text(text)
    return CaptureBackend([str(path)]).inventory()


def test_ethtool_m_is_no_gpu(tmp_path: Path) -> None:
    assert smi_text.parse(clean(_ETHTOOL_M).lines).modules == []  # no key of -q's: not a GPU block
    claimed = ethtool_module.read(clean(_ETHTOOL_M).lines, set())
    assert 1 in claimed and 12 not in claimed and 13 in claimed  # the command read; the warning flag On left
    assert not _inventory(tmp_path, _ETHTOOL_M).modules


def test_q_excerpt_without_gpu_line_still_read() -> None:
    text = "    Clocks Event Reasons\n        Idle                              : Active\n        HW Slowdown : Not Active\n"
    assert len(smi_text.parse(clean(text).lines).modules) == 1


def test_mx_smi_gpus_keyed_by_their_own_bus_ids(tmp_path: Path) -> None:
    got = npu_smi.parse(clean(_MX_SMI).lines)
    assert got.kinds == [mx_smi.KIND]
    assert [(m.label, m.bus_id, m.memory_mib) for m in got.modules] == [
        ("GPU 0", "0000:0E:00.0", 65536.0), ("GPU 1", "0000:0F:00.0", 65536.0)]
    assert any("Attached GPUs : 4" in n for n in got.notes)
    assert [m.bus_id for m in _inventory(tmp_path, _MX_SMI).modules] == ["0000:0E:00.0", "0000:0F:00.0"]


def test_npu_smi_chip_row_is_digits_only() -> None:
    text = ("| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|\n"
            "| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |\n"
            "| 0     910B4               | OK            | 86.0        45                0    / 0             |\n"
            "| 0                         | 0000:C1:00.0  | 0           0    / 0          3379 / 65536         |\n")
    assert [m.bus_id for m in npu_smi.parse(clean(text).lines).modules] == ["0000:C1:00.0"]


def test_xpu_smi_discovery_cut_above_its_header_keeps_each_device(tmp_path: Path) -> None:
    mods = _inventory(tmp_path, _XPU_HEADLESS).modules
    assert [(m.id, m.bus_id) for m in mods] == [("gpu0", "0000:4D:00.0"), ("gpu1", "0000:B3:00.0")]


def test_xpu_smi_device_whose_id_row_is_cut_is_said() -> None:
    from gpuvet.captures import xpu_smi

    text = "|           | PCI BDF Address: 0000:9b:00.0                        |\n" + _XPU_HEADLESS
    got = xpu_smi.parse(clean(text).lines)
    assert [m.bus_id for m in got.modules] == ["0000:4D:00.0", "0000:B3:00.0"]
    assert any("0000:9b:00.0" in n and "not listed" in n for n in got.notes)


def test_topo_cut_rows_listed_as_cut(tmp_path: Path) -> None:
    mods = _inventory(tmp_path, _TOPO_CUT).modules
    assert [m.id for m in mods] == ["gpu0", "gpu1", "gpu2", "gpu3"]
    assert ["row cut" in m.model for m in mods] == [False, False, True, True]


# a word a module's line holds, whoever's tool printed it: the cap on how many modules a text can list
_MODULE_WORD = re.compile(r"gpu|npu|xpu|hpu|tpu|card|device|chip|accelerator|neuron|nvidia|nvrm|xid|pci|amd|radeon|"
                          r"tesla|geforce|quadro|instinct|\barc\b|gaudi|ascend|tenstorrent|metax|\bdev\b|\bbus|"
                          r"\d+:\d+\.\d|^\W*\d{1,4}\b", re.I)
# (the last: a per-device row that starts with the device's index, a bandwidth matrix's)
_SEVERAL_HOSTS = re.compile(r"on ([2-9]|\d{2,}) host\(s\) .*; bus ids repeat from host to host")
_SAMPLE = ("fresh_as/ethtoolm_beszel554_sfp_module_temp.txt", "fresh_as/ethtoolm_nixpkgs145429_sfp28_sr.txt",
           "fresh_as/mxsmi_gpustack4832_metax_c500.txt", "fresh_ar/xpu-smi_ipexllm13214_4x_a770_discovery.txt",
           "fresh_ar/topo_vllm40604_b200_nv18.txt")


def _sampled(path: Path) -> bool:
    return zlib.crc32(path.relative_to(CAPTURES).as_posix().encode()) % 100 == 0


def test_corpus_inventory_never_exceeds_its_module_marks() -> None:
    """For a sample of scored captures (one in a hundred by name, and the rows of issue 46's R10D): no two modules
    share a bus id (save a run over several hosts, which says so), and no more modules are listed than the text
    mentions a module's word."""
    files = corpus_files()
    # a file is in the sample by its own name (one in a hundred), so a new batch adds its own files without
    # moving the sample off the old ones
    sample = [p for p in files if _sampled(p) and p.stat().st_size < 200_000] + [CAPTURES / s for s in _SAMPLE]
    for path in sample:
        text = path.read_text(errors="replace")
        try:
            inventory = CaptureBackend([str(path)]).inventory()
        except Exception:  # noqa: BLE001 (a refused file lists nothing)
            continue
        mods = inventory.modules
        buses = [m.bus_id.lower() for m in mods if isinstance(m.bus_id, str)]
        # a benchmark run over several hosts lists each host's modules, whose bus ids repeat, and says so
        several_hosts = any(_SEVERAL_HOSTS.search(note) for note in inventory.notes)
        assert len(buses) == len(set(buses)) or several_hosts, path.name
        # one NCCL topology line names every GPU of the node ('GPU/100000 ... GPU/800000'): the cap counts mentions
        assert len(mods) <= sum(len(_MODULE_WORD.findall(line)) for line in text.splitlines()), (path.name, len(mods))
