"""Issue 46, R14C: listings of AMD and Ascend accelerators read whole (the Level Zero init refusals:
test_r14c_level_zero.py). Every capture here is written from the tool's own
source or documentation, the values made up: AMD's clinfo (ROCm's /opt/rocm/opencl/bin/clinfo, the AMD APP SDK's),
Oblomov/clinfo src/clinfo.c (--raw's '[P/N]' prefix and CL_ names, --json's keys), ROCm/rocminfo rocminfo.cc (the
driver line, 'HSA System Attributes', the agent fields), Huawei's npu-smi manual (info -m, the process table),
rocm-smi's ROCm 6 default table (its Partitions column), intel/xpumanager's xpumd log and level-zero's ze_api.h."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpuvet.cli.app import main


def _run(cmd: str, tmp_path: Path, text: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    path = tmp_path / "capture.txt"
    path.write_text(text, encoding="utf-8")
    code = main([cmd, "--from", str(path), "--json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, json.loads(out) if out.strip() else {}


def _notes(data: dict[str, Any]) -> str:
    return "\n".join(data["notes"])


# --- clinfo: AMD's own, the common clinfo's --raw and --json ----------------------------------------------------
AMD_CLINFO = """Number of platforms:\t\t\t\t 1
  Platform Profile:\t\t\t\t FULL_PROFILE
  Platform Version:\t\t\t\t OpenCL 2.1 AMD-APP (3361.0)
  Platform Name:\t\t\t\t AMD Accelerated Parallel Processing
  Platform Vendor:\t\t\t\t Advanced Micro Devices, Inc.


  Platform Name:\t\t\t\t AMD Accelerated Parallel Processing
Number of devices:\t\t\t\t 2
  Device Type:\t\t\t\t\t CL_DEVICE_TYPE_GPU
  Vendor ID:\t\t\t\t\t 1002h
  Board name:\t\t\t\t\t AMD Radeon VII
  Device Topology:\t\t\t\t PCI[ B#67, D#0, F#0 ]
  Max compute units:\t\t\t\t 60
  Max clock frequency:\t\t\t\t 1801Mhz
  Global memory size:\t\t\t\t 17163091968
  Name:\t\t\t\t\t\t gfx906:sramecc+:xnack-
  Vendor:\t\t\t\t\t Advanced Micro Devices, Inc.
  Driver version:\t\t\t\t 3361.0 (HSA1.1,LC)
  Device Type:\t\t\t\t\t CL_DEVICE_TYPE_CPU
  Vendor ID:\t\t\t\t\t 1002h
  Max compute units:\t\t\t\t 32
  Name:\t\t\t\t\t\t AMD Ryzen Threadripper 2950X 16-Core Processor
  Driver version:\t\t\t\t 3361.0 (sse2,avx)
"""
RAW = """  CL_PLATFORM_NAME                                AMD Accelerated Parallel Processing
[AMD/0]    CL_DEVICE_NAME                                  gfx1030
[AMD/0]    CL_DEVICE_VENDOR                                Advanced Micro Devices, Inc.
[AMD/0]    CL_DRIVER_VERSION                               3590.0 (HSA1.1,LC)
[AMD/0]    CL_DEVICE_TYPE                                  CL_DEVICE_TYPE_GPU
[AMD/0]    CL_DEVICE_BOARD_NAME_AMD                        AMD Radeon RX 6800 XT
[AMD/0]    CL_DEVICE_TOPOLOGY_AMD                          PCI-E, 0000:0b:00.0
[AMD/0]    CL_DEVICE_MAX_COMPUTE_UNITS                     36
[AMD/0]    CL_DEVICE_GLOBAL_MEM_SIZE                       17163091968
"""
JSON = """{"platforms" : [ { "CL_PLATFORM_NAME" : "AMD Accelerated Parallel Processing",
  "online" : [ { "CL_DEVICE_NAME" : "gfx90a:sramecc+:xnack-", "CL_DEVICE_VENDOR" : "Advanced Micro Devices, Inc.",
  "CL_DRIVER_VERSION" : "3614.0 (HSA1.1,LC)", "CL_DEVICE_BOARD_NAME_AMD" : "AMD Instinct MI210",
  "CL_DEVICE_TOPOLOGY_AMD" : "PCI-E, 0000:c1:00.0", "CL_DEVICE_MAX_COMPUTE_UNITS" : 104,
  "CL_DEVICE_GLOBAL_MEM_SIZE" : 68702699520 } ] } ] }
"""


@pytest.mark.parametrize(("text", "name", "bus", "said"), [
    (AMD_CLINFO, "AMD Radeon VII", "0000:43:00.0", ("gfx906", "60 compute units", "driver 3361.0")),
    # the rows a poster greps from it (ROC-smi's issue form): the board and its topology
    ("clinfo\nBoard name:\t\t\t\t\t Radeon RX Vega\nDevice Topology:\t\t\t\t PCI[ B#10, D#0, F#0 ]\n",
     "Radeon RX Vega", "0000:0A:00.0", ()),
    (RAW, "AMD Radeon RX 6800 XT", "0000:0B:00.0", ("gfx1030", "36 compute units")),
    (JSON, "AMD Instinct MI210", "0000:C1:00.0", ("gfx90a", "104 compute units")),
])
def test_clinfo_forms_list_their_gpus_in_the_inventory_with_no_finding(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, name: str, bus: str,
        said: tuple[str, ...]) -> None:
    code, inv = _run("inventory", tmp_path, text, capsys)
    assert code == 0
    assert [(m["model"], m["bus_id"].upper()) for m in inv["modules"]] == [(name, bus)]  # the CPU device left out
    assert all(s in _notes(inv) for s in said)
    code, doc = _run("doctor", tmp_path, text, capsys)
    assert code == 0 and doc["findings"] == []


def test_two_key_value_lines_of_prose_are_not_a_clinfo_listing(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    code, inv = _run("inventory", tmp_path, "Name: my build box\nVendor: me\n", capsys)
    assert code == 2 or not inv.get("modules")


# --- rocminfo: its driver line, the agents' gfx target, compute units and BDFID, its head alone -----------------
def _agent(n: int, name: str, marketing: str, kind: str, bdfid: int, units: int) -> str:
    return (f"*******\nAgent {n}\n*******\n  Name:                    {name}\n  Uuid:                    "
            f"{f'GPU-0123456789abcde{n}' if kind == 'GPU' else 'CPU-XX'}\n  Marketing Name:          {marketing}\n"
            f"  Vendor Name:             {'AMD' if kind == 'GPU' else 'CPU'}\n  Feature:                 "
            f"{'KERNEL_DISPATCH' if kind == 'GPU' else 'None specified'}\n  Node:                    {n - 1}\n"
            f"  Device Type:             {kind}\n  Cache Info:\n    L1:                      16(0x10) KB\n"
            f"  Chip ID:                 29711(0x740f)\n  Cacheline Size:          64(0x40)\n"
            f"  Max Clock Freq. (MHz):   1700\n  BDFID:                   {bdfid}\n  Internal Node ID:        {n - 1}\n"
            f"  Compute Unit:            {units}\n  SIMDs per CU:            4\n")


HEAD = ("ROCk module version 6.8.5 is loaded\n=====================\nHSA System Attributes\n=====================\n"
        "Runtime Version:         1.14\nRuntime Ext Version:     1.6\nSystem Timestamp Freq.:  1000.000000MHz\n"
        "Machine Model:           LARGE\nSystem Endianness:       LITTLE\nMwaitx:                  DISABLED\n")
ROCMINFO = (HEAD + "\n==========\nHSA Agents\n==========\n"
            + _agent(1, "AMD EPYC 7763 64-Core Processor", "AMD EPYC 7763 64-Core Processor", "CPU", 0, 128)
            + _agent(2, "gfx90a", "AMD Instinct MI210", "GPU", 768, 104)
            + _agent(3, "gfx90a", "AMD Instinct MI210", "GPU", 1024, 104) + "*** Done ***\n")


def test_rocminfo_names_the_driver_gfx_target_compute_units_and_bus(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    code, inv = _run("inventory", tmp_path, ROCMINFO, capsys)
    assert code == 0
    assert [m["bus_id"] for m in inv["modules"]] == ["0000:03:00.0", "0000:04:00.0"]
    notes = _notes(inv)
    assert "gfx90a, 104 compute units" in notes and "ROCk module 6.8.5" in notes
    assert "HSA Runtime Version 1.14, Runtime Ext Version 1.6" in notes  # its system attributes said too
    assert _run("doctor", tmp_path, ROCMINFO, capsys)[1]["findings"] == []


@pytest.mark.parametrize("text", [
    HEAD,  # rocminfo | head
    "$ rocm-smi -V\nROCM-SMI version: 2.3.0+a1b2c3d\nROCM-SMI-LIB version: 7.4.0\n$ rocminfo | head -10\n" + HEAD,
    "\x1b[37mhygon module is loaded\x1b[0m\n" + HEAD.split("\n", 1)[1],  # Hygon DTK's build, in colour
])
def test_rocminfo_head_alone_is_read_as_rocminfo_with_its_driver(tmp_path: Path, text: str,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    code, inv = _run("inventory", tmp_path, text, capsys)
    notes = _notes(inv)
    assert code == 0 and "rocminfo: its head only" in notes and "no reader for" not in notes
    assert "ROCk module 6.8.5" in notes or "hygon" in notes
    assert _run("doctor", tmp_path, text, capsys)[1]["findings"] == []


def test_rocminfo_driver_not_loaded_stays_a_finding(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, doc = _run("doctor", tmp_path, "ROCk module is NOT loaded, possibly no GPU devices\n", capsys)
    assert doc["findings"], "rocminfo's 'NOT loaded' is the driver missing, not a healthy head"


# --- npu-smi: info -m, and the process table under the chip table -----------------------------------------------
_COL = 31


def _m_row(*cells: str) -> str:
    return "        " + "".join(c.ljust(_COL) for c in cells[:-1]) + cells[-1] + "\n"


MAP_310P = (_m_row("NPU ID", "Chip ID", "Chip Logic ID", "Chip Name") + _m_row("8", "0", "0", "Ascend 310P3")
            + _m_row("8", "1", "1", "Ascend 310P3") + _m_row("8", "2", "-", "Mcu"))
MAP_910B = _m_row("NPU ID", "Chip ID", "Chip Logic ID", "Chip Phy-ID", "Chip Name") + "".join(
    _m_row(str(i), "0", str(i), str(i), "Ascend 910B3") for i in range(8))


@pytest.mark.parametrize(("text", "count", "name"), [(MAP_310P, 2, "Ascend 310P3"), (MAP_910B, 8, "Ascend 910B3")])
def test_npu_smi_info_m_lists_each_compute_chip_with_its_logic_id(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                  text: str, count: int, name: str) -> None:
    code, inv = _run("inventory", tmp_path, text, capsys)
    assert code == 0
    assert [m["model"] for m in inv["modules"]] == [name] * count
    notes = _notes(inv)
    assert "npu-smi info -m" in notes and f"logic id {count - 1}" in notes
    assert ("Mcu" in notes) == (name == "Ascend 310P3")  # the card's MCU: no logic id, not a module
    assert _run("doctor", tmp_path, text, capsys)[1]["findings"] == []


_BORDER = "+======================+===============+====================================================+\n"


def _chip(npu: int, bus: str) -> str:
    return (f"| {npu}     910B3          | OK            | 95.1        40                0    / 0             |\n"
            f"| 0                    | {bus}  | 0           0    / 0          3390 / 65536         |\n" + _BORDER)


TABLE = ("+------------------------------------------------------------------------------------------------+\n"
         "| npu-smi 23.0.3                   Version: 23.0.3                                               |\n"
         "+----------------------+---------------+----------------------------------------------------+\n"
         "| NPU   Name           | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|\n"
         "| Chip                 | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |\n" + _BORDER
         + _chip(0, "0000:C1:00.0") + _chip(1, "0000:01:00.0")
         + "+----------------------+---------------+----------------------------------------------------+\n"
         "| NPU     Chip         | Process id    | Process name             | Process memory(MB)      |\n" + _BORDER
         + "| 0       0            | 2210          | python3.9                | 3012                    |\n"
         "| 0       0            | 2211          | python3.9                | 3012                    |\n" + _BORDER
         + "| No running processes found in NPU 1                                                            |\n"
         + _BORDER)


def test_npu_smi_process_rows_are_processes_not_cut_chips(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, inv = _run("inventory", tmp_path, TABLE, capsys)
    assert code == 0 and len(inv["modules"]) == 2
    notes = _notes(inv)
    assert "second row is cut" not in notes and "2 process(es) read" in notes
    assert inv["modules"][0]["processes"] == [2210, 2211]
    code, doc = _run("doctor", tmp_path, TABLE, capsys)
    assert code == 0 and all(f["severity"] == "info" for f in doc["findings"])


# --- rocm-smi: a partitioned GPU's rows -----------------------------------------------------------------------------
_RULE = "=" * 122
CPX = "\n".join([
    "=" * 44 + " ROCm System Management Interface " + "=" * 44, "=" * 54 + " Concise Info " + "=" * 54,
    "Device  Node  IDs              Temp        Power     Partitions          SCLK    MCLK    Fan  Perf  PwrCap  VRAM%"
    "  GPU%",
    "              (DID,     GUID)  (Junction)  (Socket)  (Mem, Compute, ID)", _RULE,
    "0       2     0x74a1,   1234   41.0°C      140.0W    NPS1, CPX, 0        131Mhz  900Mhz  0%   auto  750.0W  0%     0%",
    "1       3     0x74a1,   5678   N/A         N/A       N/A, N/A, 1         N/A     N/A     0%   n/a   N/A     0%     N/A",
    "2       4     0x74a1,   9012   N/A         N/A       N/A, N/A, 2         N/A     N/A     0%   n/a   N/A     0%     N/A",
    _RULE, "=" * 50 + " End of ROCm SMI Log " + "=" * 51, ""])


def test_rocm_smi_names_the_partitions_and_judges_no_silent_one_dead(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    code, inv = _run("inventory", tmp_path, CPX, capsys)
    assert code == 0 and len(inv["modules"]) == 3
    notes = _notes(inv)
    assert "GPU[0] NPS1/CPX partition 0" in notes and "GPU[1] (partition 1), GPU[2] (partition 2)" in notes
    code, doc = _run("doctor", tmp_path, CPX, capsys)
    assert code == 0 and not [f for f in doc["findings"] if f["severity"] in ("warn", "critical")]


# --- neuron-ls: each device's NeuronCores said ----------------------------------------------------------------
NEURON_LS = """instance-type: trn1.2xlarge
instance-id: i-0a1b2c3d4e5f60718
+--------+--------+--------+---------+
| NEURON | NEURON | NEURON |   PCI   |
| DEVICE | CORES  | MEMORY |   BDF   |
+--------+--------+--------+---------+
| 0      | 2      | 32 GB  | 00:1e.0 |
+--------+--------+--------+---------+
"""


def test_neuron_ls_says_each_devices_neuron_cores(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, inv = _run("inventory", tmp_path, NEURON_LS, capsys)
    assert code == 0 and [m["model"] for m in inv["modules"]] == ["AWS Trainium"]
    assert "NeuronCores ND 0: 2" in _notes(inv)
