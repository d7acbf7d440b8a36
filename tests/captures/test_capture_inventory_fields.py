"""Every field a capture holds (issue 46, batch H's inventory and wording misses), each as its class: inputs
written in each tool's own layout (other models, counts and values than batch H's files), never one capture's
strings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.helpers import run


def _json(tmp_path: Path, command: str, text: str) -> dict[str, Any]:
    path = tmp_path / "capture.txt"
    path.write_text(text)
    code, out, err = run([command, "--from", str(path), "--json"])
    assert "Traceback" not in err and code in (0, 1), err
    data: dict[str, Any] = json.loads(out)
    return data


def _text(tmp_path: Path, command: str, text: str) -> str:
    path = tmp_path / "capture.txt"
    path.write_text(text)
    return run([command, "--from", str(path)])[1]


# --- nvidia-smi topo -m: CPU Affinity, NUMA Affinity, GPU NUMA ID ------------------------------------------
_TOPO_4 = (
    "\tGPU0\tGPU1\tGPU2\tGPU3\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
    "GPU0\t X \tNV12\tNV12\tNV12\tPXB\t0-23,48-71\t0\t\tN/A\n"
    "GPU1\tNV12\t X \tNV12\tNV12\tPXB\t0-23,48-71\t0\t\tN/A\n"
    "GPU2\tNV12\tNV12\t X \tNV12\tSYS\t24-47,72-95\t1\t\tN/A\n"
    "GPU3\tNV12\tNV12\tNV12\t X \tSYS\t24-47,72-95\t1\t\tN/A\n"
    "NIC0\tPXB\tPXB\tSYS\tSYS\t X \t\t\t\t\n"
    "\nLegend:\n\n  X    = Self\n  NV#  = Connection traversing a bonded set of # NVLinks\n"
)


def test_topo_m_affinity_columns_are_read_per_module(tmp_path: Path) -> None:
    modules = _json(tmp_path, "inventory", _TOPO_4)["modules"]
    assert [m["cpu_affinity"] for m in modules] == ["0-23,48-71"] * 2 + ["24-47,72-95"] * 2
    assert [m["numa_node"] for m in modules] == [0, 0, 1, 1]
    assert [m["gpu_numa_id"] for m in modules] == [None] * 4  # N/A: no NUMA node of its own, said why
    assert all("no NUMA node of its own" in m["unavailable"]["gpu_numa_id"] for m in modules)
    text = _text(tmp_path, "inventory", _TOPO_4)
    assert "Affinity" in text and "24-47,72-95" in text


def test_an_older_topo_m_with_cpu_affinity_alone_and_a_cut_row(tmp_path: Path) -> None:
    older = ("        GPU0    GPU1    GPU2    CPU Affinity\n"
             "GPU0     X      PHB     SYS     0-11\n"
             "GPU1    PHB      X      SYS     0-11\n"
             "GPU2    SYS     SYS      X      12-23\n")
    modules = _json(tmp_path, "inventory", older)["modules"]
    assert [m["cpu_affinity"] for m in modules] == ["0-11", "0-11", "12-23"]
    assert all(m["gpu_numa_id"] is None and "gpu_numa_id" in m["unavailable"] for m in modules)
    cut = older.rsplit("\n", 2)[0] + "\nGPU2    SYS     SYS\n"  # the last row cut inside its cells
    modules = _json(tmp_path, "inventory", cut)["modules"]
    assert [m["cpu_affinity"] for m in modules] == ["0-11", "0-11", None]  # never a link cell read as CPUs


# --- deviceQuery: the CUDA driver and runtime versions --------------------------------------------------------
_DEVICE_QUERY = """\
./deviceQuery Starting...

 CUDA Device Query (Runtime API) version (CUDART static linking)

Detected 1 CUDA Capable device(s)

Device 0: "Tesla T4"
  CUDA Driver Version / Runtime Version          12.2 / 11.8
  CUDA Capability Major/Minor version number:    7.5
  Total amount of global memory:                 14931 MBytes (15655829504 bytes)
"""


def test_device_query_gives_the_driver_api_and_the_runtime_versions(tmp_path: Path) -> None:
    software = _json(tmp_path, "inventory", _DEVICE_QUERY)["software"]
    assert (software["cuda_driver_version"], software["cuda_runtime_version"]) == ("12.2", "11.8")
    assert "CUDA runtime 11.8" in _text(tmp_path, "inventory", _DEVICE_QUERY)


# --- dcgmi discovery -l: the count DCGM announced ------------------------------------------------------------
def _discovery(count_line: str) -> str:
    return (f"{count_line}\n"
            "+--------+----------------------------------------------------------------------+\n"
            "| GPU ID | Device Information                                                   |\n"
            "+--------+----------------------------------------------------------------------+\n"
            "| 0      | Name: NVIDIA A100-SXM4-40GB                                          |\n"
            "|        | PCI Bus ID: 00000000:07:00.0                                         |\n"
            "|        | Device UUID: GPU-2b1e1a3c-7f2d-4b7e-9a51-0c3d5e6f7a8b                 |\n"
            "+--------+----------------------------------------------------------------------+\n"
            "| 1      | Name: NVIDIA A100-SXM4-40GB                                          |\n"
            "|        | PCI Bus ID: 00000000:0F:00.0                                         |\n"
            "+--------+----------------------------------------------------------------------+\n"
            "...\n")


def test_dcgmi_discovery_says_its_count_and_lists_only_the_rows_shown(tmp_path: Path) -> None:
    for line in ("4 GPUs found.", "4 GPUs found (Active)."):
        data = _json(tmp_path, "inventory", _discovery(line))
        assert [m["bus_id"] for m in data["modules"]] == ["0000:07:00.0", "0000:0F:00.0"]  # none invented
        notes = " ".join(data["notes"])
        assert "4 GPUs found, 2 module(s) read" in notes and "2 module(s) DCGM found are not in the excerpt" in notes


# --- nvidia-smi's table: a module cut inside its first row ----------------------------------------------------
_TABLE_CUT = """\
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 470.82.01    Driver Version: 470.82.01    CUDA Version: 11.4     |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|===============================+======================+======================|
|   0  Tesla V100-SXM2...  On   | 00000000:1A:00.0 Off |                    0 |
| N/A   35C    P0    42W / 300W |      0MiB / 32510MiB |      0%      Default |
+-------------------------------+----------------------+----------------------+
|   1  Tesla V100-SXM2...  On   | 00000000:1C:00.0 Off |
"""


def test_a_module_cut_inside_its_first_table_row_is_still_listed(tmp_path: Path) -> None:
    data = _json(tmp_path, "inventory", _TABLE_CUT)
    assert [m["bus_id"] for m in data["modules"]] == ["0000:1A:00.0", "0000:1C:00.0"]
    assert data["modules"][1]["memory_bytes"] is None  # its readings were cut: unknown, never guessed
    assert any("cut inside its first row" in n for n in data["notes"])
    shortest = _TABLE_CUT.replace("00000000:1C:00.0 Off |", "00000000:1C:00.0")  # cut right after the bus id
    assert len(_json(tmp_path, "inventory", shortest)["modules"]) == 2


def test_a_first_row_followed_by_more_table_is_not_taken_as_cut(tmp_path: Path) -> None:
    broken = _TABLE_CUT + "| N/A   36C    P0    ERR! / 300W \n+---------+\n"  # more of the table follows
    assert len(_json(tmp_path, "inventory", broken)["modules"]) == 1


# --- the kernel: the release does not support the module -----------------------------------------------------
_UNSUPPORTED = """\
[   31.118402] NVRM: The NVIDIA GPU 0000:02:00.0 (PCI ID: 10de:0a75) installed
[   31.118404] NVRM: in this system is not supported by the 470.199.02 NVIDIA Linux
[   31.118405] NVRM: graphics driver release.  Please see 'Appendix A -
[   31.118406] NVRM: Supported NVIDIA GPU Products' in this release's README,
[   31.118407] NVRM: available on the Linux graphics driver download page at
[   31.118408] NVRM: www.nvidia.com.
[   31.118431] nvidia: probe of 0000:02:00.0 failed with error -1
[   31.118462] NVRM: The NVIDIA probe routine failed for 1 device(s).
"""
_LEGACY = """\
[    5.402117] NVRM: The NVIDIA GeForce GT 730 GPU installed in this system is
[    5.402118] NVRM:  supported through the NVIDIA 470.xx Legacy drivers. Please
[    5.402119] NVRM:  visit http://www.nvidia.com/object/unix.html for more
[    5.402120] NVRM:  information.  The 535.129.03 NVIDIA driver will ignore
[    5.402121] NVRM:  this GPU.  Continuing probe...
[    5.402140] NVRM: No NVIDIA GPU found.
"""


def test_not_supported_by_the_release_is_the_reason_the_probe_failed(tmp_path: Path) -> None:
    for text in (_UNSUPPORTED, _LEGACY):
        findings = _json(tmp_path, "doctor", text)["findings"]
        failed = [f for f in findings if f["cause"] == "module_init_failed"]
        assert failed and failed[0]["severity"] == "critical", findings
        assert failed[0]["evidence"]["message"] == "unsupported_by_driver", failed[0]["evidence"]
    failed = [f for f in _json(tmp_path, "doctor", _UNSUPPORTED)["findings"] if f["cause"] == "module_init_failed"]
    assert [f["module"] for f in failed] == ["0000:02:00.0"]


def test_rm_init_adapter_failure_names_the_bios_bar_settings(tmp_path: Path) -> None:
    text = ("Mar 03 09:12:44 node7 kernel: NVRM: GPU 0000:41:00.0: RmInitAdapter failed! (0x24:0x65:1475)\n"
            "Mar 03 09:12:44 node7 kernel: NVRM: GPU 0000:41:00.0: rm_init_adapter failed, device minor number 0\n")
    failed = [f for f in _json(tmp_path, "doctor", text)["findings"] if f["cause"] == "module_init_failed"]
    assert failed and "Above 4G Decoding" in failed[0]["fix"] and "Resizable BAR" in failed[0]["fix"]


# --- HCCL: the collective that stalled -----------------------------------------------------------------------
def test_hccl_notify_timeout_names_the_stalled_collective(tmp_path: Path) -> None:
    line = ("EI0002: [PID: 40211] 2024-11-02-08:14:55.101.220 The wait execution of the Notify register times out. "
            "Reason: The Notify register has not received the Notify record from remote rank: [3]. base information: "
            "[streamID:[18], taskID[512], tag[AllReduce_10.0.0.5%enp61s0_60000_0_1730535295000000], "
            "AlgType(level 0-1-2):[fullmesh-ring-NHR].]. task information: []. group information: [rankSize[4], "
            "rankId[1].]\n")
    findings = _json(tmp_path, "doctor", line)["findings"]
    stalled = [f for f in findings if f["cause"] == "collective_stalled"]
    assert stalled and stalled[0]["evidence"]["collective"] == "AllReduce", findings


# --- a program's CUDA error beside NCCL's failure in the same file -------------------------------------------
def test_a_programs_cuda_error_is_said_beside_the_library_failure(tmp_path: Path) -> None:
    text = ("node12:5510:5630 [2] transport/nvls.cc:157 NCCL WARN Cuda failure 2 'out of memory'\n"
            "some other text from the report\n"
            "HPL ERROR: CUDART Error: cudaStreamSynchronize(stream) = 700 (an illegal memory access was encountered) "
            "on node12 at (hpl_cuda/update.cu:318)\n")
    findings = _json(tmp_path, "doctor", text)["findings"]
    nvls = [f for f in findings if f["cause"] == "nvls_setup_failed"]
    assert nvls, findings
    beside = nvls[0]["evidence"]["also_in_the_file"]
    assert len(beside) == 1 and beside[0].startswith("line 3: ") and "= 700 (an illegal memory access" in beside[0]


def test_topo_m_affinity_values_no_tool_prints_are_unreadable(tmp_path: Path) -> None:
    """newcomer 55: a NUMA id past Linux's 1023, 'banana', '1e309', '-5' and a CPU list 'RED' were listed."""
    bad = ("\tGPU0\tGPU1\tGPU2\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
           "GPU0\t X \tNV4\tNV4\t0-7\tbanana\t\t-5\n"
           "GPU1\tNV4\t X \tNV4\tRED\t99999999999999999999\t\t1e309\n"
           "GPU2\tNV4\tNV4\t X \t0-63,128-191\t1\t\t9\n")
    data = _json(tmp_path, "inventory", bad)
    modules = data["modules"]
    assert [(m["cpu_affinity"], m["numa_node"], m["gpu_numa_id"]) for m in modules] == [
        ("0-7", None, None), (None, None, None), ("0-63,128-191", 1, 9)]
    assert any("unreadable" in n and "banana" in n and "RED" in n for n in data["notes"]), data["notes"]


def test_a_cpu_list_as_wide_as_its_title_runs_into_the_numa_column_and_is_put_back(tmp_path: Path) -> None:
    """topo -m pads CPU Affinity to its title's width and one space: '112-127,240-255 7' is the list, then node 7."""
    wide = ("        GPU0    GPU1    CPU Affinity    NUMA Affinity   GPU NUMA ID\n"
            "GPU0     X      NV12    48-63,176-191   3               N/A\n"
            "GPU1    NV12     X      112-127,240-255 7               N/A\n")
    modules = _json(tmp_path, "inventory", wide)["modules"]
    assert [(m["cpu_affinity"], m["numa_node"]) for m in modules] == [("48-63,176-191", 3), ("112-127,240-255", 7)]
