"""`nvidia-smi -L` (issue 46): one module per line, older drivers without the NVIDIA prefix, MIG
instances under their module, and several modules on one line as an issue form joins them.
The captures are written in the tool's format (NVIDIA's MIG user guide, "Device Enumeration", shows
the MIG lines); the UUIDs are made up."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuvet.captures import smi_list
from gpuvet.captures.text import clean
from tests.support.helpers import call, doctor_capture, found_causes

LISTING = ("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-2b6c3d1e-8f0a-4c5b-9d7e-1a2b3c4d5e6f)\n"
           "GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-7e8f9a0b-1c2d-4e3f-8a9b-0c1d2e3f4a5b)\n")
MIG = ("GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9)\n"
       "  MIG 3g.40gb     Device  0: (UUID: MIG-1f2e3d4c-5b6a-5798-8a7b-6c5d4e3f2a1b)\n"
       "  MIG 1g.10gb     Device  1: (UUID: MIG-9a8b7c6d-5e4f-5a3b-9c2d-1e0f9a8b7c6d)\n"
       "GPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-1b2c3d4e-5f60-7182-93a4-b5c6d7e8f90a)\n")
OLD_MIG = ("GPU 0: A100-SXM4-40GB (UUID: GPU-e86cb44c-6756-fd30-cd4a-1e6da3caf9b0)\n"
           "  MIG 3g.20gb Device 0: (UUID: MIG-GPU-e86cb44c-6756-fd30-cd4a-1e6da3caf9b0/2/0)\n")


def _parse(text: str) -> smi_list.SmiText:
    return smi_list.parse(clean(text).lines)


def test_each_line_is_a_module_with_its_index_name_and_uuid() -> None:
    got = _parse(LISTING)
    assert [(m.bus_id, m.product, m.fields["Index"]) for m in got.modules] == [
        ("GPU 0", "NVIDIA H100 80GB HBM3", "0"), ("GPU 1", "NVIDIA H100 80GB HBM3", "1")]
    assert got.modules[1].fields["GPU UUID"] == "GPU-7e8f9a0b-1c2d-4e3f-8a9b-0c1d2e3f4a5b"
    assert got.claimed == {1, 2}


def test_mig_instances_are_counted_under_their_module_in_either_driver_spelling() -> None:
    got = _parse(MIG)
    assert [m.fields.get("MIG Devices") for m in got.modules] == ["2", None]
    assert got.modules[0].fields["MIG Profiles"] == "3g.40gb, 1g.10gb"
    assert got.claimed == {1, 2, 3, 4} and "2 MIG instance(s)" in got.notes[0]
    old = _parse(OLD_MIG)
    assert old.modules[0].product == "A100-SXM4-40GB" and old.modules[0].fields["MIG Devices"] == "1"


def test_several_modules_on_one_line_of_prose_and_a_listing_pasted_twice() -> None:
    prose = "### Hardware\n\n" + LISTING.replace("\n", " ") + "\nthe second one drops off the bus\n"
    got = _parse(prose)
    assert [m.fields["Index"] for m in got.modules] == ["0", "1"] and got.claimed == {3}
    assert len(_parse(LISTING + LISTING).modules) == 2  # one module per UUID
    assert _parse("GPU 0: is hot today\nGPU 0 (UUID: GPU-1)\n").modules == []


def test_inventory_lists_the_modules_without_inventing_bus_ids(capsys: pytest.CaptureFixture[str],
                                                                 tmp_path: Path) -> None:
    path = tmp_path / "l.txt"
    path.write_text(MIG)
    code, out, _ = call(capsys, "inventory", "--from", str(path), "--json")
    assert code == 0
    import json

    modules = json.loads(out)["modules"]
    assert [(m["model"], m["bus_id"]) for m in modules] == [("NVIDIA A100-SXM4-80GB", None)] * 2
    assert modules[1]["uuid"] == "GPU-1b2c3d4e-5f60-7182-93a4-b5c6d7e8f90a"


def test_a_listing_beside_the_error_of_the_module_that_fell_off(capsys: pytest.CaptureFixture[str],
                                                                 tmp_path: Path) -> None:
    text = LISTING + "Unable to determine the device handle for GPU 0000:41:00.0: Unknown Error\n"
    code, data = doctor_capture(capsys, tmp_path, text)
    assert code == 1 and found_causes(data) == {("module_fell_off_bus", "0000:41:00.0")}


def test_nvlink_capabilities_under_a_module_line_are_read() -> None:
    text = ("GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9)\n"
            + "".join(f"\t Link {k}, P2P is supported: true\n\t Link {k}, Access to system memory supported: true\n"
                      f"\t Link {k}, Link is supported: {'false' if k == 2 else 'true'}\n" for k in range(3)))
    got = _parse(text)
    assert got.modules[0].fields["NVLink Links Supported"] == "0,1" and got.claimed == set(range(1, 11))


def test_a_redacted_uuid_still_lists_the_module_without_one() -> None:
    got = _parse("GPU 0: NVIDIA A10 (UUID: <redacted>)\nGPU 1: NVIDIA A10 (UUID: GPU-xxxxxxxx)\n")
    assert [(m.product, m.fields.get("GPU UUID")) for m in got.modules] == [("NVIDIA A10", None), ("NVIDIA A10", None)]


@pytest.mark.parametrize("second", ["GPU-1b2c3d4e-5f60-7182-93a4-b5c6d7e8f90a", "GPU-xxxxxxxx"])
def test_two_listings_of_one_index_are_refused_never_renumbered(capsys: pytest.CaptureFixture[str],
                                                                tmp_path: Path, second: str) -> None:
    """Two nvidia-smi -L listings pasted together (issue 46 review): a second 'GPU 1' was renumbered gpu2
    and the node counted 3 modules; it is refused, naming the index, exit 2."""
    text = ("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9)\n"
            "GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-99999999-8888-7777-6666-555555555555)\n"
            f"GPU 1: NVIDIA H100 80GB HBM3 (UUID: {second})\n")
    path = tmp_path / "l.txt"
    path.write_text(text)
    code, out, err = call(capsys, "inventory", "--from", str(path))
    assert code == 2 and "two listings of GPU 1" in err and "gpu2" not in out + err


def test_one_listing_keeps_the_indexes_it_printed(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    text = ("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9)\n"
            "GPU 3: NVIDIA H100 80GB HBM3 (UUID: GPU-99999999-8888-7777-6666-555555555555)\n")
    path = tmp_path / "l.txt"
    path.write_text(text)
    code, out, _ = call(capsys, "inventory", "--from", str(path), "--json")
    import json

    assert code == 0 and [m["id"] for m in json.loads(out)["modules"]] == ["gpu0", "gpu3"]


def test_a_line_whose_uuid_the_poster_elided_keeps_its_index_and_model() -> None:
    """gpu-burn echoes the -L listing first; a poster who shortens it leaves 'GPU 0: MODEL ...'."""
    burn = ("$ gpu_burn -d 30\nBurning for 30 seconds.\nGPU 0: NVIDIA A100-SXM4-80GB ...\n...\n"
            "GPU 3: NVIDIA A100-SXM4-80GB …\nGPU 3: OK\nGPU 1: hot again ...\n")
    got = _parse(burn)
    assert [(m.fields["Index"], m.product) for m in got.modules] == [("0", "NVIDIA A100-SXM4-80GB"),
                                                                    ("3", "NVIDIA A100-SXM4-80GB")]
    assert "GPU UUID" not in got.modules[0].fields and got.claimed == {3, 5}



def test_an_elided_line_is_a_module_only_when_it_names_a_gpu_model() -> None:
    """Review 53: any 'GPU N: <words with a digit> ...' was a module ('loading shard 1 of 8', 'epoch 3'), and
    the note claimed a UUID for lines that printed none."""
    progress = "GPU 0: loading shard 1 of 8 ...\nGPU 1: loading shard 2 of 8 ...\nGPU 0: epoch 3 ...\n"
    assert _parse(progress).modules == []
    old = _parse("GPU 0: Tesla T4 ...\nGPU 1: GeForce GTX 1080 Ti …\nGPU 2: A100-SXM4-40GB ...\n")
    assert [m.product for m in old.modules] == ["Tesla T4", "GeForce GTX 1080 Ti", "A100-SXM4-40GB"]
    assert "no UUID" in old.notes[-1] and "(index, name, UUID" not in old.notes[-1]

PROC_INFO = ("____________________________________________\n\n"
             "*** /proc/driver/nvidia/gpus/0000:86:00.0/information\n"
             "*** ls: -r--r--r-- 1 root root 0 2024-02-01 09:00:00.000000000 +0000 "
             "/proc/driver/nvidia/gpus/0000:86:00.0/information\n"
             "Model: \t\t NVIDIA A40\nIRQ:   \t\t 212\nGPU UUID: \t GPU-5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b\n"
             "Video BIOS: \t 94.02.5c.00.04\nBus Type: \t PCIe\nDMA Size: \t 47 bits\nDMA Mask: \t 0x7fffffffffff\n"
             "Bus Location: \t 0000:86:00.0\nDevice Minor: \t 1\nGPU Excluded:\t No\n"
             "____________________________________________\n")


def test_the_drivers_proc_listing_in_a_bug_report_names_each_module_with_its_bus_id() -> None:
    got = _parse(PROC_INFO)
    assert [(m.bus_id, m.product) for m in got.modules] == [("0000:86:00.0", "NVIDIA A40")]
    assert got.modules[0].fields == {"GPU UUID": "GPU-5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b",
                                     "VBIOS Version": "94.02.5c.00.04", "Minor Number": "1"}
    assert _parse("Model: my own\nBus Location: the lab\n").modules == []  # no bus id: no module


BESIDE_TABLE = """\
$ nvidia-smi -L
GPU 0: NVIDIA GeForce RTX 3090 (UUID: GPU-0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9)
GPU 1: NVIDIA GeForce RTX 3090 (UUID: GPU-99999999-8888-7777-6666-555555555555)
$ nvidia-smi
+---------------------------------------------------------------------------------------+
| NVIDIA-SMI 535.129.03             Driver Version: 535.129.03   CUDA Version: 12.2     |
|-----------------------------------------+----------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |
|=========================================+======================+======================|
|   0  NVIDIA GeForce RTX 3090        Off | 00000000:06:00.0 Off |                  N/A |
| 30%   25C    P8              10W / 350W |      1MiB / 24576MiB |      0%      Default |
+-----------------------------------------+----------------------+----------------------+
|   1  NVIDIA GeForce ...             Off | 00000000:07:00.0 Off |                  N/A |
| 30%   25C    P8              11W / 350W |      1MiB / 24576MiB |      0%      Default |
+-----------------------------------------+----------------------+----------------------+
"""


def test_a_listing_beside_the_table_gives_each_module_its_uuid_by_index_and_name(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import json

    path = tmp_path / "l.txt"
    path.write_text(BESIDE_TABLE)
    modules = json.loads(call(capsys, "inventory", "--from", str(path), "--json")[1])["modules"]
    assert [(m["bus_id"], m["uuid"]) for m in modules] == [
        ("0000:06:00.0", "GPU-0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9"),
        ("0000:07:00.0", "GPU-99999999-8888-7777-6666-555555555555")]  # the table's '...' name agrees
    path.write_text(BESIDE_TABLE.replace("GeForce RTX 3090 (", "A100-SXM4-80GB ("))  # another node's listing
    modules = json.loads(call(capsys, "inventory", "--from", str(path), "--json")[1])["modules"]
    assert [m["uuid"] for m in modules] == [None, None]
