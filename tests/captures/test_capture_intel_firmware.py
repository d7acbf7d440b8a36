"""i915's and xe's firmware lines as a class (issue 46, IGC): a GuC that fails to fetch or load on a part whose
work it submits (discrete DG2, every xe module) is a module that runs nothing (critical); an integrated part that
goes on without it on execlists is a note, unless the firmware loader stalled the boot waiting (warn); HuC/GSC
lose media features (warn); DMC only power saving (info); the firmware that loads stays clear. Lines written in
the drivers' formats (intel_uc_fw.c, intel_guc_fw.c, intel_uc.c, intel_huc.c, intel_dmc.c); figures made up."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuvet.cli.app import main

CAPTURES = Path(__file__).resolve().parents[1] / "data" / "captures"
DG2, IGPU = "0000:03:00.0", "0000:00:02.0"


def _doctor(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str) -> tuple[int, list[tuple[str, str, str]]]:
    path = tmp_path / "dmesg.txt"
    path.write_text(text)
    code = main(["doctor", "--from", str(path), "--json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    assert code != 2, err  # never refused: the lines are read
    return code, [(f["cause"], f["module"], f["severity"]) for f in json.loads(out)["findings"]]


def _dmesg(bus: str, *bodies: str) -> str:
    return "".join(f"[   12.{238330 + k}] i915 {bus}: {b}\n" for k, b in enumerate(bodies))


def test_guc_fetch_failure_on_a_discrete_part_is_critical_and_names_the_module(capsys, tmp_path) -> None:
    text = _dmesg(
        DG2,
        "[drm] Finished loading DMC firmware i915/dg2_dmc_ver2_07.bin (v2.7)",
        "Direct firmware load for i915/dg2_guc_70.2.0.bin failed with error -2",
        "[drm] GuC firmware i915/dg2_guc_70.2.0.bin: fetch failed with error -2",
        "[drm] GuC firmware(s) can be downloaded from https://git.kernel.org/pub/scm/linux/kernel/git/"
        "firmware/linux-firmware.git/tree/i915",
    )
    code, found = _doctor(capsys, tmp_path, text)
    assert found == [("module_init_failed", DG2.upper(), "critical")] and code == 1


def test_guc_load_failure_and_init_error_are_one_critical_event(capsys, tmp_path) -> None:
    text = _dmesg(
        DG2,
        "[drm] GT0: GuC firmware i915/dg2_guc_70.bin version 70.20.0",
        "[drm] GT0: GUC: load failed: status = 0x40000056, time = 0ms, freq = 2400MHz, ret = 0",
        "[drm] GT0: GUC: firmware production part check failure",
        "[drm] *ERROR* GT0: GuC initialization failed -ENOEXEC",
        "[drm] *ERROR* GT0: Enabling uc failed (-5)",
    )
    _, found = _doctor(capsys, tmp_path, text)
    assert found == [("module_init_failed", DG2.upper(), "critical")]


def test_xe_guc_failure_is_critical_on_any_module(capsys, tmp_path) -> None:
    text = f"[    5.1] xe {IGPU}: [drm] *ERROR* GT0: GuC firmware xe/lnl_guc_70.bin: fetch failed -ENOENT\n"
    _, found = _doctor(capsys, tmp_path, text)
    assert found == [("module_init_failed", IGPU.upper(), "critical")]


def test_integrated_guc_missing_with_execlists_is_a_note(capsys, tmp_path) -> None:
    text = _dmesg(
        IGPU, "[drm] GuC firmware i915/kbl_guc_70.1.1.bin: fetch failed with error -2", "[drm] GT0: GuC is uninitialized"
    )
    code, found = _doctor(capsys, tmp_path, text)
    assert found == [("module_firmware_optional_missing", IGPU.upper(), "info")] and code == 0


def test_integrated_guc_waited_for_by_the_sysfs_fallback_is_a_warning(capsys, tmp_path) -> None:
    text = _dmesg(
        IGPU,
        "Direct firmware load for i915/bxt_guc_33.0.0.bin failed with error -2",
        "Falling back to sysfs fallback for: i915/bxt_guc_33.0.0.bin",
        "GuC firmware i915/bxt_guc_33.0.0.bin: fetch failed with error -11",
        "GuC is uninitialized",
    )
    _, found = _doctor(capsys, tmp_path, text)
    assert found == [("module_firmware_feature_lost", IGPU.upper(), "warn")]


@pytest.mark.parametrize(
    ("body", "cause", "severity"),
    [
        ("[drm] *ERROR* GT0: HuC: authentication failed -ETIMEDOUT", "module_firmware_feature_lost", "warn"),
        (
            "[drm] *ERROR* GT1: GSC proxy component didn't bind within the expected timeout",
            "module_firmware_feature_lost",
            "warn",
        ),
        (
            "[drm] Failed to load DMC firmware i915/adlp_dmc.bin (-ENOENT). Disabling runtime power management.",
            "module_firmware_optional_missing",
            "info",
        ),
        ("[drm] Incompatible option enable_guc=3 - GuC submission is N/A", "module_firmware_optional_missing", "info"),
    ],
)
def test_huc_gsc_dmc_and_option_lines_by_what_they_cost(capsys, tmp_path, body, cause, severity) -> None:
    text = f"Dec 07 10:14:03 node7 kernel: i915 {IGPU}: {body}\n"
    _, found = _doctor(capsys, tmp_path, text)
    assert found == [(cause, IGPU.upper(), severity)]


def test_firmware_that_loaded_stays_clear(capsys, tmp_path) -> None:
    text = _dmesg(
        DG2,
        "[drm] Finished loading DMC firmware i915/dg2_dmc_ver2_08.bin (v2.8)",
        "[drm] GT0: GuC firmware i915/dg2_guc_70.bin version 70.13.1",
        "[drm] GT0: HuC firmware i915/dg2_huc_gsc.bin version 7.10.3",
        "[drm] GT0: GUC: ADS capture alloc size changed from 32768 to 36864",
        "[drm] GT0: GUC: submission enabled",
        "[drm] GT0: GUC: SLPC enabled",
        "[drm] GT0: HuC: authenticated for all workloads",
    )
    code, found = _doctor(capsys, tmp_path, text)
    assert found == [] and code == 0


def test_a_retried_guc_load_that_came_up_is_not_a_fault(capsys, tmp_path) -> None:
    text = _dmesg(IGPU, "[drm] *ERROR* GuC load failed: status = 0x00000020", "[drm] GuC submission enabled")
    _, found = _doctor(capsys, tmp_path, text)
    assert [f for f in found if f[2] != "info"] == []


@pytest.mark.parametrize(
    ("row", "bus", "cause", "severity"),
    [
        ("fresh_ac/dmesg_i915backports194_guc_load_failed_a770.txt", "0000:0D:00.0", "module_init_failed", "critical"),
        ("fresh_ad/dmesg_ipexllm12122_i915_guc_load_failed_a770.txt", "0000:0D:00.0", "module_init_failed", "critical"),
        ("fresh_ad/dmesg_i915backports41_dg2_guc_fetch_failed.txt", "0000:03:00.0", "module_init_failed", "critical"),
        ("fresh_ad/dmesg_acrn5752_i915_bxt_guc_fetch_timeout.txt", "0000:00:02.0", "module_firmware_feature_lost", "warn"),
    ],
)
def test_the_batch_rows(capsys, tmp_path, row, bus, cause, severity) -> None:
    _, found = _doctor(capsys, tmp_path, (CAPTURES / row).read_text())
    assert (cause, bus, severity) in found
    assert all(f[2] == "info" or f[0] == cause for f in found)


def test_the_healthy_arc_row_stays_clear(capsys, tmp_path) -> None:
    code, found = _doctor(capsys, tmp_path, (CAPTURES / "fresh_ac/dmesg_solus1331_i915_arc_guc_ok.txt").read_text())
    assert [f for f in found if f[2] != "info"] == [] and code != 2
