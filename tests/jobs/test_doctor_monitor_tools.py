"""Issue 46 (dev_m_mon): what doctor and inventory say of the monitors' screens and other accelerators' tools:
a healthy screen is clear (the processes it shows are the machine's workload, said, not judged), a module the
screen could not read is named, and the faults other vendors' tools print (hl-smi's uncorrectable count, the
habanalabs driver's 'NOT usable', a Tenstorrent chip that does not come back from tt-smi's reset) are findings
on that module, named by the vendor's own label and bus id."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.captures.test_capture_monitor_tools import GPUSTAT, HL_SMI
from tests.support.helpers import call, doctor_capture


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
