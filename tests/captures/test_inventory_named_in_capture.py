"""Issue 46 (INV2): inventory --from lists what a capture names and nothing it does not: topo -m's NIC rows as
the node's NICs (their ports not in the matrix), every host a multi-node log names, and no host where the file
names none (never the file's own name). Lines written here in the tools' formats, not copies of captures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.helpers import call

TOPO_NICS = """\
\tGPU0\tGPU1\tNIC0\tNIC1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID
GPU0\t X \tNV12\tPXB\tSYS\t0-31\t0\t\tN/A
GPU1\tNV12\t X \tSYS\tPXB\t32-63\t1\t\tN/A
NIC0\tPXB\tSYS\t X \tSYS
NIC1\tSYS\tPXB\tSYS\t X

Legend:

  X    = Self
  NV#  = Connection traversing a bonded set of # NVLinks

NIC Legend:

  NIC0: mlx5_4
  NIC1: mlx5_9
"""

TWO_HOSTS = """\
gpu-a17:20311:20311 [0] NCCL INFO Bootstrap : Using eth0:10.1.0.17<0>
gpu-a17:20311:20311 [0] NCCL INFO NET/Socket : Using [0]eth0:10.1.0.17<0>
gpu-b04:9120:9120 [0] NCCL INFO NET/Socket : Using [0]eth0:10.1.0.44<0>
gpu-a17:20311:20400 [0] NCCL INFO comm 0x55d1 rank 0 nranks 2 cudaDev 0 busId 41000 - Init COMPLETE
gpu-b04:9120:9190 [0] NCCL INFO comm 0x7f02 rank 1 nranks 2 cudaDev 0 busId 41000 - Init COMPLETE
"""

RANKS_NO_HOST = """\
# nThread 1 nGpus 2 minBytes 8 maxBytes 1048576 step: 2(factor) warmup iters: 5 iters: 20 validation: 1
#
# Using devices
#  Rank  0 Group  0 Pid   7001 on        device  0 [0x17] NVIDIA L40S
#  Rank  1 Group  0 Pid   7001 on        device  1 [0x31] NVIDIA L40S
#
#                                                       out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
     1048576        262144     float     sum      -1    61.20   17.13   17.13      0    60.90   17.22   17.22      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 17.17
"""


def _inventory(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, name: str) -> dict[str, object]:
    path = tmp_path / name
    path.write_text(text)
    code, out, _ = call(capsys, "inventory", "--from", str(path), "--json")
    assert code == 0
    listed: dict[str, object] = json.loads(out)
    return listed


def test_topo_nic_rows_are_listed_as_the_nodes_nics(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    listed = _inventory(capsys, tmp_path, TOPO_NICS, "topo.txt")
    nics = listed["nics"]
    assert isinstance(nics, list)
    assert [n["device"] for n in nics] == ["mlx5_4", "mlx5_9"]  # the legend's names, in the matrix's order
    assert all(n["ports"] == [] and n["bus_id"] is None for n in nics)  # not in the matrix: none invented
    modules = listed["modules"]
    assert isinstance(modules, list) and [m["numa_node"] for m in modules] == [0, 1]


def test_topo_nics_leave_doctors_nic_checks_alone(tmp_path: Path) -> None:
    """doctor judges the NICs a tool read the ports of; a NIC topo -m only names gives it nothing to judge."""
    from gpuvet.backends.capture.backend import CaptureBackend

    path = tmp_path / "topo.txt"
    path.write_text(TOPO_NICS)
    backend = CaptureBackend([str(path)])
    listed = backend.listed_nics()
    assert backend.nics() is None and listed is not None and len(listed.nics) == 2


def test_every_host_a_multi_node_log_names(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    host = _inventory(capsys, tmp_path, TWO_HOSTS, "job.log")["host"]
    assert isinstance(host, dict)
    assert host["hosts"] == ["gpu-a17", "gpu-b04"] and host["hostname"] == "gpu-a17, gpu-b04"


def test_no_host_named_is_not_the_files_name(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """nccl-tests' rank lines with the host column empty ('on        device 0'): 'device' is no host, and the
    file's own name is not one either."""
    listed = _inventory(capsys, tmp_path, RANKS_NO_HOST, "allreduce_run7.txt")
    host = listed["host"]
    assert isinstance(host, dict)
    assert host["hosts"] == [] and host["hostname"] is None  # the key kept; the absence is null, not words
    modules = listed["modules"]
    assert isinstance(modules, list) and [m["model"] for m in modules] == ["NVIDIA L40S"] * 2
    code, out, _ = call(capsys, "inventory", "--from", str(tmp_path / "allreduce_run7.txt"))
    said = " ".join(out.split())
    assert code == 0 and "host not in the captured file" in said and "Host not in the captured file:" in said


NVRM_PROBE = """\
[    7.120411] NVRM: The NVIDIA GPU 0000:c3:00.0 (PCI ID: 10de:20b5)
               NVRM: installed in this system is not supported by open
[    7.120530] nvidia: probe of 0000:c3:00.0 failed with error -1
"""

AMDGPU_BOOT = """\
[    2.401120] [drm] initializing kernel modesetting (NAVI21 0x1002:0x73BF 0x1002:0x0E3A 0xC1).
[    2.415003] amdgpu 0000:2d:00.0: amdgpu: VRAM: 16368M 0x0000008000000000 - 0x00000083FEFFFFFF (16368M used)
[    2.415190] [drm] amdgpu: 16368M of VRAM memory ready
[    9.880012] amdgpu 0000:2d:00.0: amdgpu: ring gfx_0.0.0 timeout, signaled seq=4411, emitted seq=4413
"""


def test_a_kernel_lines_pci_id_names_the_model(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    modules = _inventory(capsys, tmp_path, NVRM_PROBE, "dmesg.txt")["modules"]
    assert isinstance(modules, list)
    assert [(m["bus_id"], m["model"]) for m in modules] == [("0000:C3:00.0", "NVIDIA A100 PCIe 80GB")]


def test_amdgpu_lines_give_the_chip_product_and_vram(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    modules = _inventory(capsys, tmp_path, AMDGPU_BOOT, "dmesg.txt")["modules"]
    assert isinstance(modules, list) and len(modules) == 1
    assert modules[0]["bus_id"] == "0000:2D:00.0" and modules[0]["memory_bytes"] == 16368 * 2**20
    assert modules[0]["model"] == "AMD Radeon RX 6800/6800 XT / 6900 XT (Navi 21)"


def test_an_id_without_a_bus_is_given_to_no_one_of_several(capsys: pytest.CaptureFixture[str],
                                                             tmp_path: Path) -> None:
    """Two AMD modules and a modesetting line naming no bus: which one it is is not in the log."""
    second = "[   10.100000] amdgpu 0000:43:00.0: amdgpu: ring sdma0 timeout, signaled seq=10, emitted seq=12\n"
    modules = _inventory(capsys, tmp_path, AMDGPU_BOOT + second, "dmesg.txt")["modules"]
    assert isinstance(modules, list)
    shown = {m["bus_id"]: (m["model"], m["memory_bytes"]) for m in modules}
    assert shown["0000:43:00.0"] == ("unknown AMD module", None)
    assert shown["0000:2D:00.0"] == ("unknown AMD module", 16368 * 2**20)  # its own VRAM line names its bus


def test_a_module_named_only_by_an_nvrm_bus_line_is_listed(capsys: pytest.CaptureFixture[str],
                                                            tmp_path: Path) -> None:
    """'NVRM: GPU BUS is already bound to vfio-pci.' names a module (its model not said): listed by that bus."""
    text = "[  812.004411] NVRM: GPU 0000:65:00.0 is already bound to vfio-pci.\n"
    modules = _inventory(capsys, tmp_path, text, "dmesg.txt")["modules"]
    assert isinstance(modules, list)
    assert [(m["bus_id"], m["model"]) for m in modules] == [("0000:65:00.0", "unknown NVIDIA module")]
