"""Issue 46 (STJ): a state table's snapshot read across its own fields (doctor/state_judgment.py). A module ~100 %
busy at idle power is a warn on that module, named with its figures, its design and its peers; a busy module at
high power, a light job at a working performance state or full clocks, a desktop at idle, a container's view, a
capped card and a die that reports no power of its own stay clear. The snapshots are written in each tool's
layout (nvidia-smi's table and -q, amd-smi's default table, rocm-smi's ROCm 5 table), figures our own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers import doctor_capture

CAUSE = "module_busy_at_idle_power"
AMD_HEAD = (
    "+------------------------------------------------------------------------------+\n"
    "| AMD-SMI 25.3.0+ede62f2       amdgpu version: 6.10.5   ROCm version: 6.3.1    |\n"
    "|-------------------------------------+----------------------------------------|\n"
    "| BDF                        GPU-Name | Mem-Uti   Temp   UEC       Power-Usage |\n"
    "| GPU  HIP-ID  OAM-ID  Partition-Mode | GFX-Uti    Fan               Mem-Usage |\n"
    "|=====================================+========================================|\n"
)
NV_HEAD = (
    "| NVIDIA-SMI 535.154.05             Driver Version: 535.154.05   CUDA Version: 12.2     |\n"
    "|-----------------------------------------+----------------------+----------------------+\n"
    "| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |\n"
    "| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |\n"
    "|=========================================+======================+======================|\n"
)
NV_PROCS = (
    "| Processes:                                                                            |\n"
    "|  GPU   GI   CI        PID   Type   Process name                            GPU Memory |\n"
    "|=======================================================================================|\n"
)


def _amd(busy: str, power: str) -> str:
    return AMD_HEAD + (
        "| 0000:04:00.0     AMD Instinct MI210 | 0 %      40 °C   0             " + power + " |\n"
        "|   0       0     N/A             N/A | " + busy + "           40762/65520 MB |\n"
        "|-------------------------------------+----------------------------------------|\n"
        "| 0000:08:00.0     AMD Instinct MI210 | 0 %      32 °C   0             32/300 W |\n"
        "|   1       1     N/A             N/A | 0 %        N/A              10/65520 MB |\n"
        "+-------------------------------------+----------------------------------------+\n"
    )


def _nv(model: str, pstate: str, power: str, busy: str, procs: str) -> str:
    return (
        NV_HEAD
        + (
            f"|   0  {model:<31}On  | 00000000:47:00.0 Off |                    0 |\n"
            f"| N/A   33C    {pstate}  {power:>24} |   1234MiB / 81920MiB | {busy:>7}      Default |\n"
            "+-----------------------------------------+----------------------+----------------------+\n"
        )
        + NV_PROCS
        + procs
    )


PYTHON = "|    0   N/A  N/A       8812      C   python3                                  1200MiB |\n"
NONE = "|  No running processes found                                                           |\n"


def _on(answer: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in answer["findings"] if f["cause"] == CAUSE]


def test_amd_smi_busy_at_idle_power_is_a_warn_on_that_module(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, answer = doctor_capture(capsys, tmp_path, _amd("100 %      N/A", "57/300 W"))
    [f] = _on(answer)
    assert code == 1 and f["module"] == "GPU 0 (0000:04:00.0)" and f["severity"] == "warn"
    ev = f["evidence"]
    assert (ev["busy_pct"], ev["power_w"], ev["design_w"]) == (100.0, 57.0, 300.0)
    assert "GPU 1 (0000:08:00.0) 0 % at 32 W" in ev["peers"] and "no clocks" in ev["clocks"]


def test_amd_smi_busy_at_high_power_is_clear(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, answer = doctor_capture(capsys, tmp_path, _amd("100 %      N/A", "291/300 W"))
    assert code == 0 and not _on(answer)


def test_a_die_reporting_no_power_of_its_own_is_not_idle(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, answer = doctor_capture(capsys, tmp_path, _amd("100 %      N/A", "      0/0 W"))
    assert code == 0 and not _on(answer)


@pytest.mark.parametrize(
    ("pstate", "power", "procs", "found"),
    [
        ("P0", "63W / 400W", NONE, False),  # no process at a working state: a container's light job or a stuck one
        ("P8", "63W / 400W", NONE, True),  # no process, busy at a sixth of its design at the idle state
        ("P0", "63W / 400W", PYTHON, False),  # a job holds it at a working state: light work, not judged
        ("P8", "63W / 400W", PYTHON, True),  # the same job at the idle performance state: not running
        ("P0", "352W / 400W", NONE, False),  # a container's view of a busy module: busy at high power
        ("P2", "99W / 100W", PYTHON, False),  # at a cap set low: power_limit's, not idle
    ],
)
def test_nvidia_table_reads_busy_against_power_state_and_processes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, pstate: str, power: str, procs: str, found: bool
) -> None:
    code, answer = doctor_capture(capsys, tmp_path, _nv("NVIDIA A100-SXM4-80GB", pstate, power, "100%", procs))
    got = _on(answer)
    assert bool(got) == found and code == (1 if found else 0)
    if found:
        assert got[0]["module"] == "0000:47:00.0" and "of 400 W" in got[0]["evidence"]["said"]


def test_a_desktop_at_idle_is_clear(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, answer = doctor_capture(capsys, tmp_path, _nv("NVIDIA GeForce RTX 3090", "P8", "24W / 350W", "3%", PYTHON))
    assert code == 0 and not _on(answer)


def _q(sm: int, procs: str) -> str:
    return (
        "==============NVSMI LOG==============\n\nDriver Version                            : 550.54.15\n\n"
        "GPU 00000000:18:00.0\n    Product Name                          : NVIDIA H100 80GB HBM3\n"
        "    Performance State                     : P0\n    Utilization\n"
        "        Gpu                               : 100 %\n    GPU Power Readings\n"
        "        Power Draw                        : 118.00 W\n        Current Power Limit               : 700.00 W\n"
        f"    Clocks\n        SM                                : {sm} MHz\n"
        "    Max Clocks\n        SM                                : 1980 MHz\n" + procs
    )


def test_q_full_clocks_is_a_light_kernel_and_idle_clocks_a_finding(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    job = "    Processes\n        Process ID                        : 7781\n            Name                          : x\n"
    code, answer = doctor_capture(capsys, tmp_path, _q(1980, job))
    assert not _on(answer)
    code, answer = doctor_capture(capsys, tmp_path, _q(345, "    Processes                             : None\n"))
    [f] = _on(answer)
    assert f["module"] == "0000:18:00.0" and "345 of 1980 MHz" in f["evidence"]["clocks"]
    assert "another PID namespace" in f["evidence"]["processes"]


def test_rocm_smi_table_names_the_busy_idle_module(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    table = (
        "================================= Concise Info =================================\n"
        "GPU  Temp (DieEdge)  AvgPwr  SCLK     MCLK     Fan  Perf  PwrCap  VRAM%  GPU%  \n"
        "0    36.0c           41.0W   800Mhz   1600Mhz  0%   auto  300.0W    0%   0%  \n"
        "1    38.0c           43.0W   800Mhz   1600Mhz  0%   auto  300.0W   12%   100%\n"
        "================================================================================\n"
    )
    code, answer = doctor_capture(capsys, tmp_path, table)
    assert [f["module"] for f in _on(answer)] == ["GPU[1]"] and code == 1
    assert "the cap the table prints" in _on(answer)[0]["evidence"]["basis"]


NPU = (
    "+---------------------------+---------------+----------------------------------------------------+\n"
    "| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|\n"
    "| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |\n"
    "+===========================+===============+====================================================+\n"
    "| 0     910B3               | OK            | 91.2        36                0    / 0             |\n"
    "| 0                         | 0000:C1:00.0  | 0           0    / 0          3339 / 65536         |\n"
    "+===========================+===============+====================================================+\n"
    "| 1     910B3               | OK            | {power:<11} 37                0    / 0             |\n"
    "| 0                         | 0000:C2:00.0  | 100         0    / 0          3339 / 65536         |\n"
    "+===========================+===============+====================================================+\n"
)


@pytest.mark.parametrize(("power", "found"), [("93.6", True), ("305.1", False)])
def test_npu_smi_aicore_busy_at_idle_power(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, power: str, found: bool
) -> None:
    code, answer = doctor_capture(capsys, tmp_path, NPU.format(power=power))
    got = _on(answer)
    assert [f["module"] for f in got] == (["NPU 1 chip 0 (0000:C2:00.0)"] if found else [])
    assert code == (1 if found else 0)
