"""Issue 46 (dev_m_mon): what doctor and inventory say of the monitors' screens and other accelerators' tools:
a healthy screen is clear (the processes it shows are judged by other_processes as -q's and the table's are: the
machine's workload alone, a lead beside a slow benchmark), a module the
screen could not read is named, and the faults other vendors' tools print (hl-smi's uncorrectable count, the
habanalabs driver's 'NOT usable', a Tenstorrent chip that does not come back from tt-smi's reset) are findings
on that module, named by the vendor's own label and bus id."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.captures.test_capture_monitor_tools import GPUSTAT, HL_SMI
from tests.jobs.test_doctor_issue46 import _all_reduce
from tests.support.helpers import call, doctor_capture

PMON = ("# gpu         pid   type     sm    mem    enc    dec    jpg    ofa    command\n"
        "# Idx           #    C/G      %      %      %      %      %      %    name\n"
        "    0     2231001     C     97     41      -      -      -      -    python3\n"
        "    1          -     -      -      -      -      -      -      -    -\n")
TABLE = ("|   0  NVIDIA H100 80GB HBM3          On  |   00000000:18:00.0 Off |                    0 |\n"
         "| N/A   35C    P0            120W /  700W |   70123MiB /  81559MiB |     95%      Default |\n"
         "| Processes:                                                                              |\n"
         "|  GPU   GI   CI        PID   Type   Process name                              GPU Memory |\n"
         "|    0   N/A  N/A     41235      C   python3                                   70110MiB |\n")


def _severe(answer: dict[str, Any]) -> set[tuple[str, str | None]]:
    return {(f["cause"], f.get("module")) for f in answer["findings"] if f["severity"] in ("warn", "critical")}


def test_a_healthy_gpustat_screen_is_clear_and_listed(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, answer = doctor_capture(capsys, tmp_path, GPUSTAT)
    assert code == 0 and not _severe(answer)
    code, out, _ = call(capsys, "inventory", "--from", str(tmp_path / "capture.txt"), "--json")
    listed = json.loads(out)
    assert code == 0 and [m["model"] for m in listed["modules"]] == ["NVIDIA A100-SXM4-80GB"] * 2
    assert listed["software"]["driver_version"] == "550.54.15"


def test_a_module_gpustat_could_not_read_is_named(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    text = ("gpu-node-3               Wed Jun  5 08:00:00 2024  535.161.08\n"
            "[0] NVIDIA L40S | 35°C,   0 % |     1 / 46068 MB |\n[1] ((Unknown Error))\n")
    code, answer = doctor_capture(capsys, tmp_path, text)
    assert code != 0 and [c for c, _ in _severe(answer)] == ["module_unreadable"]


def test_hl_smi_faults_are_the_gaudi_modules_own(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """AIP 1's two uncorrectable events: a critical finding on it (by hl-smi's label and bus id); AIP 0 clear."""
    code, answer = doctor_capture(capsys, tmp_path, HL_SMI)
    assert code != 0 and _severe(answer) == {("module_reported_critical", "AIP 1 (0000:83:00.0)")}
    healthy = HL_SMI.replace("|                   2  |", "|                   0  |")
    code, answer = doctor_capture(capsys, tmp_path, healthy, name="healthy.txt")
    assert code == 0 and not _severe(answer)
    code, out, _ = call(capsys, "inventory", "--from", str(tmp_path / "healthy.txt"), "--json")
    assert [m["model"] for m in json.loads(out)["modules"]] == ["Intel Gaudi 3 (HL-325L)"] * 2


def test_accelerators_that_did_not_come_up(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The habanalabs driver's 'Device is NOT usable' and tt-smi's device that did not reappear after its reset."""
    habana = ("[   40.200000] habanalabs hl3: Failed to communicate with Device CPU (CPU-CP timeout)\n"
              "[   40.200100] habanalabs 0000:4d:00.0: Failed to initialize hl3. Device is NOT usable !\n")
    code, answer = doctor_capture(capsys, tmp_path, habana)
    assert code != 0 and _severe(answer) == {("module_reported_critical", "hl3 (0000:4D:00.0)")}
    tt = ("2025-05-02 10:00:00.000 | info | UMD | Starting reset on devices at PCI indices: 0 (warm_reset.cpp:154)\n"
          "2025-05-02 10:00:12.000 | warning | UMD | Timeout waiting for device at BDF 0000:3b:00.0 to reappear. "
          "(warm_reset.cpp:134)\n2025-05-02 10:00:12.000 | error | UMD | Reset failed. (warm_reset.cpp:180)\n")
    code, answer = doctor_capture(capsys, tmp_path, tt, name="tt.txt")
    assert code != 0 and _severe(answer) == {("module_reported_critical", "TT 0000:3B:00.0 (0000:3B:00.0)")}


def test_a_rocm_smi_row_with_no_reading_at_all_is_named(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """rocm-smi's default table: a row whose every cell is N/A (as nvidia-smi's ERR! row) warns on that GPU; a row
    with one figure read (a fan's 0%: a device without the other sensors) is not judged."""
    head = ("========================ROCm System Management Interface========================\n"
            "GPU  Temp   AvgPwr  SCLK    MCLK    Fan     Perf  PwrCap  VRAM%  GPU%\n")
    rows = ("0    N/A    N/A     N/A     N/A     N/A     N/A   N/A     N/A    N/A\n"
            "1    41.0c  52.0W   852Mhz  167Mhz  17.65%  auto  250.0W    0%   0%\n")
    code, answer = doctor_capture(capsys, tmp_path, head + rows)
    assert code != 0 and _severe(answer) == {("module_reported_warning", "GPU[0]")}
    lacking = rows.replace("0    N/A    N/A     N/A     N/A     N/A ", "0    N/A    N/A     N/A     N/A     0%  ")
    code, answer = doctor_capture(capsys, tmp_path, head + lacking, name="lacking.txt")
    assert code == 0 and not _severe(answer)


def _processes_step(capsys: pytest.CaptureFixture[str], tmp_path: Path, screen: str, *logs: str
                    ) -> tuple[list[tuple[str, str, Any]], set[tuple[str, str]]]:
    """doctor over a screen (and logs beside it): other_processes' findings (cause, severity, pids) and its
    steps' (status, summary)."""
    for i, log in enumerate(logs):
        (tmp_path / f"log{i}.txt").write_text(log, encoding="utf-8")
    more = [a for i in range(len(logs)) for a in ("--from", str(tmp_path / f"log{i}.txt"))]
    _, answer = doctor_capture(capsys, tmp_path, screen, *more)
    found = [(f["cause"], f["severity"], f["evidence"]["pids"]) for f in answer["findings"]
             if f["cause"] == "other_processes"]
    return found, {(s["status"], s["summary"]) for s in answer["steps"] if s["check"] == "other_processes"}


@pytest.mark.parametrize(("screen", "pid"), [(TABLE, 41235), (GPUSTAT, 41235), (PMON, 2231001)])
def test_a_screens_processes_are_judged_as_the_tables(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                      screen: str, pid: int) -> None:
    """gpustat's and pmon's processes go where the table's do: beside an nccl-tests result below what the modules
    reach, the same warn lead (same words); alone, the machine's workload (cleared, no finding)."""
    found, steps = _processes_step(capsys, tmp_path, screen, _all_reduce(190.0))
    assert found == [("other_processes", "warn", [pid])] and steps == {("confirmed", "other processes hold modules")}
    found, steps = _processes_step(capsys, tmp_path, screen)
    assert not found and {status for status, _ in steps} == {"clear"}
    assert all("the machine's workload" in summary for _, summary in steps)


def test_a_screen_without_pids_is_not_read_as_none(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """gpustat without -p: its processes have no pid to judge; other_processes can't tell, never 'no process'."""
    found, steps = _processes_step(capsys, tmp_path, GPUSTAT.replace("alice:python/41235", "alice"), _all_reduce(190.0))
    assert not found and {status for status, _ in steps} == {"inconclusive"}


def test_hl_smi_processes_are_judged_as_the_tables(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    healthy = HL_SMI.replace("|                   2  |", "|                   0  |")
    busy = healthy.replace("|   0        N/A   N/A    N/A                                      N/A        |",
                           "|   0      52311     C    python3                                  all        |")
    found, steps = _processes_step(capsys, tmp_path, busy)
    assert not found and all("the machine's workload" in summary for _, summary in steps)
    found, steps = _processes_step(capsys, tmp_path, healthy)
    assert not found and {summary for _, summary in steps} == {"no other process on the modules"}
