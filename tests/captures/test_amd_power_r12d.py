"""Issue 46 (R12D): amdgpu's SMU power-management messages (smu_cmn.c's pre-check, amdgpu_smu.c's power gating,
amdgpu_dpm.c's 'Dpm ... failed', amdgpu_gfx.c's gfxoff) read as one fact, warn;
a failed ASIC reset the driver then says succeeded weighed by its outcome; a quoted-printable mail's soft breaks
joined. Lines written in the drivers' own formats (torvalds/linux drivers/gpu/drm/amd, v6.12)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.helpers import capture_findings

BUS = "0000:03:00.0"
_SMU = (
    "amdgpu 0000:03:00.0: amdgpu: Msg issuing pre-check failed(0xff) and SMU may be not in the right state!",
    "amdgpu 0000:03:00.0: amdgpu: Msg issuing pre-check failed and SMU may be not in the right state!",
    "amdgpu 0000:03:00.0: amdgpu: Failed to power gate VCN!",
    "amdgpu 0000:03:00.0: amdgpu: Failed to power ungate JPEG!",
    "[drm:amdgpu_dpm_enable_uvd [amdgpu]] *ERROR* Dpm disable uvd failed, ret = -5.",
    "amdgpu 0000:03:00.0: amdgpu: Failed to enable gfxoff!",
    "amdgpu 0000:03:00.0: amdgpu: failed to disable gfxoff",
)
_LOAD = "amdgpu 0000:03:00.0: amdgpu: SMU is initialized successfully!"
_FRAMES = ("[ 8812.{:06d}] {}", "Sep 02 16:39:{:02d} dagon kernel: {}")


@pytest.mark.parametrize("line", _SMU)
@pytest.mark.parametrize("frame", _FRAMES)
def test_each_smu_message_of_the_family_is_a_warn_on_its_module(tmp_path: Path, line: str, frame: str) -> None:
    text = frame.format(1, _LOAD) + "\n" + frame.format(2, line) + "\n"
    assert capture_findings(tmp_path, text) == {("module_firmware_unresponsive", BUS): "warn"}


def test_a_message_a_copy_wrapped_inside_its_words_is_read_whole(tmp_path: Path) -> None:
    text = (
        "Sep 02 16:39:22 dagon kernel: amdgpu 0000:03:00.0: amdgpu: Msg issuing\n"
        "pre-check failed and SMU may be not in the right state!\n"
        "Sep 02 16:39:24 dagon kernel: amdgpu 0000:03:00.0: amdgpu: Failed to enable\n"
        "gfxoff!\n"
    )
    assert capture_findings(tmp_path, text) == {("module_firmware_unresponsive", BUS): "warn"}


def test_healthy_power_management_lines_stay_clear(tmp_path: Path) -> None:
    healthy = (
        _LOAD,
        "amdgpu 0000:03:00.0: amdgpu: SMU is resumed successfully!",
        "[drm] Initialized amdgpu 3.42.0 20150101 for 0000:03:00.0 on minor 0",
        "amdgpu 0000:03:00.0: amdgpu: smu driver if version = 0x00000040, smu fw if version = 0x00000041",
    )
    text = "".join(f"[ 12.{i:06d}] {s}\n" for i, s in enumerate(healthy))
    assert capture_findings(tmp_path, text) == {}


_ASIC = "[  106.508592] amdgpu 0000:b1:00.0: amdgpu: ASIC reset failed with error, -38 for drm dev, 0000:b1:00.0\n"
_RESUMED = "[  106.508972] amdgpu 0000:b1:00.0: amdgpu: GPU reset succeeded, trying to resume\n"


def test_a_failed_asic_reset_the_driver_then_says_succeeded_is_weighed_by_the_success(tmp_path: Path) -> None:
    got = capture_findings(tmp_path, _ASIC + _RESUMED + "[  106.509136] [drm] VRAM is lost due to GPU reset!\n")
    assert got == {("module_hang_recovered", "0000:B1:00.0"): "warn"}
    alone = capture_findings(tmp_path, _ASIC + "[  106.509136] usb 3-2: new high-speed USB device number 4\n")
    assert set(alone.values()) == {"critical"}  # no success after it: the module stayed down


def test_a_quoted_printable_mail_of_a_kernel_log_is_joined_at_its_soft_breaks(tmp_path: Path) -> None:
    mail = (
        "[  106.508592] amdgpu 0000:b1:00.0: amdgpu: ASIC reset failed with error, -=\n"
        "38 for drm dev, 0000:b1:00.0\n"
        "[  106.508972] amdgpu 0000:b1:00.0: amdgpu: GPU reset succeeded, trying to =\n"
        "resume\n"
    )
    assert capture_findings(tmp_path, mail) == {("module_hang_recovered", "0000:B1:00.0"): "warn"}
    # a tool's help text ending a line on '=' and going on indented is no mail
    from gpuvet.captures import qpmail

    help_text = (
        "    --host            Connects to specified IP or fully-qualified domain name. [default =\n"
        "                      localhost]\n"
    ) * 3
    assert qpmail.soft_breaks(help_text) == ([], [])


_AX = Path(__file__).resolve().parents[1] / "data/captures/fresh_ax"


def test_the_ax_rows_read_as_their_class(tmp_path: Path) -> None:
    def read(name: str) -> dict[tuple[str, str | None], str]:
        return capture_findings(tmp_path, (_AX / name).read_text(encoding="utf-8"))

    assert read("journal_bz214289_navi21_smu_precheck_riser.txt") == {("module_firmware_unresponsive", BUS): "warn"}
    assert read("dmesg_amdgfx_asic_reset_failed_enosys.txt") == {("module_hang_recovered", "0000:B1:00.0"): "warn"}
    assert read("journal_bz201957_amdgpu_psp_resume_fail.txt")[("module_hung_reset", "0000:0C:00.0")] == "critical"


def test_a_ras_count_of_all_ones_counters_is_an_untrusted_reading_not_an_uncorrectable_error(tmp_path: Path) -> None:
    def ras(n: int, kind: str = "uncorrectable") -> str:
        return f"[ 88.000001] amdgpu 0000:0b:00.0: {n} {kind} hardware errors detected in umc block\n"

    garbled = {("module_sensors_unreadable", "0000:0B:00.0"): "warn"}
    assert capture_findings(tmp_path, ras(1048560, "correctable") + ras(1048560)) == garbled
    assert capture_findings(tmp_path, ras(2097120)) == garbled  # the same step at the next query
    assert capture_findings(tmp_path, ras(3)) == {("module_hardware_error", "0000:0B:00.0"): "critical"}
    assert capture_findings(tmp_path, ras(1048561)) == {("module_hardware_error", "0000:0B:00.0"): "critical"}


def test_machine_checks_logged_without_their_records_are_a_host_warn(tmp_path: Path) -> None:
    logged = "[ 3311.120001] mce: [Hardware Error]: Machine check events logged\n"
    amd = "[ 3311.120101] amdgpu 0000:0b:00.0: amdgpu: SMU is initialized successfully!\n"
    got = capture_findings(tmp_path, amd + logged + logged)
    assert got == {("host_machine_check_logged", "host CPUs (machine check records not in the log)"): "warn"}
    journal = "Jan 06 06:27:44 hemma kernel: mce: [Hardware Error]: Machine check events logged\n"
    assert set(capture_findings(tmp_path, journal)) == {
        ("host_machine_check_logged", "host CPUs (machine check records not in the log)")
    }
    # where the record itself is in the log, it is judged (host_ras) and the 'logged' line adds nothing
    record = "[ 3311.120000] mce: [Hardware Error]: CPU 9: Machine Check: 0 Bank 5: bea0000000000108\n"
    causes = {c for c, _ in capture_findings(tmp_path, record + logged)}
    assert "host_machine_check_logged" not in causes and causes
    assert capture_findings(tmp_path, "[ 0.500000] mce: CPU0: Thermal monitoring enabled (TM1)\n") == {}
