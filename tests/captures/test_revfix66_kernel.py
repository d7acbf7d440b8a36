"""Issue 46 (REVFIX66, review of R12D): amd64_edac's set-up failure ('EDAC amd64: Error: F0 not found …', printed by
amd64_err through edac_printk) is no machine check record, for host_mce_logged as for host_errors; amdgpu's failed
ASIC reset is outweighed only by a success after it, in the window after it, on its module (a bus-less success only
where the log names one module). Lines in the kernel's format (drivers/edac/amd64_edac.c, amdgpu_device.c)."""

from __future__ import annotations

from pathlib import Path

from gpuvet.captures import amd_asic_reset
from gpuvet.captures.kernel import KernelEvent
from gpuvet.captures.text import Line
from tests.support.helpers import capture_findings

_HOST = ("host_machine_check_logged", "host CPUs (machine check records not in the log)")
_LOGGED = "[ 3311.120001] mce: [Hardware Error]: Machine check events logged\n"


def test_an_edac_drivers_setup_failure_is_no_record_of_the_logged_machine_checks(tmp_path: Path) -> None:
    for setup in (
        "[    5.201230] EDAC amd64: Error: F0 not found, device 0x1460 (broken BIOS?)\n",
        "[    5.201240] EDAC amd64: Error: Error probing instance: 0\n",
    ):
        assert capture_findings(tmp_path, setup + _LOGGED) == {_HOST: "warn"}, setup
    record = "[ 3311.120000] EDAC MC0: 1 UE memory read error on P0_Node0_Channel5_Dimm0 DIMMF1 (node:0)\n"
    assert _HOST not in capture_findings(tmp_path, record + _LOGGED)


_B1 = "0000:b1:00.0"
_ASIC = f"[  106.508592] amdgpu {_B1}: amdgpu: ASIC reset failed with error, -38 for drm dev, {_B1}\n"
_RESUMED = "[  {}] amdgpu {}: amdgpu: GPU reset succeeded, trying to resume\n"


def test_a_success_before_the_failure_does_not_outweigh_it(tmp_path: Path) -> None:
    got = capture_findings(tmp_path, _RESUMED.format("100.000000", _B1) + _ASIC)
    assert "critical" in got.values() and ("module_hang_recovered", "0000:B1:00.0") not in got


def test_a_busless_success_speaks_for_the_failed_module_only_in_a_one_module_log() -> None:
    failed = KernelEvent("amd_reset_failed", "0000:B1:00.0", _ASIC.strip(), 5)
    resumed = [
        KernelEvent("amd_reset_resumed", m, "GPU reset succeeded", n) for m, n in (("0000:B1:00.0", 1), ("0000:C1:00.0", 2))
    ]
    lines = [Line(n, "[  106.5] [drm] filler") for n in range(1, 6)] + [Line(6, _RESUMED.format("106.6", "[drm]"))]
    two = amd_asic_reset.weighed(lines, [*resumed, failed])
    assert failed in two  # two modules: whose bare success it is is not known, the failure stays
    one = amd_asic_reset.weighed(lines, [resumed[0], failed])
    assert failed not in one and "reset-path error it outlived" in one[0].text
    far = [Line(n, "filler") for n in range(1, 60)] + [Line(60, _RESUMED.format("107.0", _B1))]
    assert failed in amd_asic_reset.weighed(far, [resumed[0], failed])  # past the window: not its recovery
