"""Issue 46, R14C: a Level Zero init refused is judged by the result it printed, in Intel's words: xpumd's
'GPUDeviceStub::init zeInit error: 70020000' (ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE, '[Tools] external required
dependency is unavailable or missing' in level-zero's include/ze_api.h: the metrics layer XPUM_METRICS / -m asks
for) is configuration, not the driver's state; 78000001 (ZE_RESULT_ERROR_UNINITIALIZED) is the driver's; the
'xpumInit LevelZeroInitializationException' after either is its echo. Lines written in intel/xpumanager's xpumd log
format (core/src/infrastructure/logger), the values made up."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpuvet.cli.app import main


def _doctor(tmp_path: Path, text: str, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    path = tmp_path / "capture.txt"
    path.write_text(text, encoding="utf-8")
    main(["doctor", "--from", str(path), "--json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    got: dict[str, Any] = json.loads(out)
    return got


# --- Level Zero init refused: the class the result names, Intel's commands in the fix -----------------------------
def _xpumd(*lines: str) -> str:
    stamp = "[2024-03-05 10:11:12.345] "
    return "".join(stamp + ln + "\n" for ln in ("[I] [4410-4410] XPU Manager:\t1.2.30.20240305",
                                                  "[I] [4410-4410] Level Zero:\t1.15.8", *lines))


METRICS = _xpumd("[I] [4410-4410] The environment variable XPUM_METRICS is detected: 0-38",
                 "[E] [4410-4410] GPUDeviceStub::init zeInit error: 70020000",
                 "[I] [4410-4410] Libraries check pass.", "[E] [4410-4410] xpumInit LevelZeroInitializationException")


@pytest.mark.parametrize(("text", "cause", "severity", "fix_says"), [
    (METRICS, "tool_component_unavailable", "info", "metrics-discovery"),
    ("zetMetricGroupGet failed: ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE\n", "tool_component_unavailable", "info",
     "metrics-discovery"),
    (_xpumd("[E] [4410-4410] GPUDeviceStub::init zeInit error: 78000001",
            "[E] [4410-4410] xpumInit LevelZeroInitializationException"), "api_reports_driver_state", "warn", "i915"),
])
def test_level_zero_init_refusal_is_judged_by_its_result_in_intels_words(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, cause: str, severity: str,
        fix_says: str) -> None:
    doc = _doctor(tmp_path, text, capsys)
    [found] = doc["findings"]  # xpumd's exception after the result is its echo, not a second cause
    assert (found["cause"], found["severity"]) == (cause, severity)
    assert fix_says in found["fix"] and "nvidia-smi" not in found["fix"] and "Xid" not in found["fix"]


def test_xpumd_starting_cleanly_is_read_with_no_finding(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = _xpumd("[I] [4410-4410] xpumd core starts to initialize", "[I] [4410-4410] initialize device manager")
    path = tmp_path / "capture.txt"
    path.write_text(text, encoding="utf-8")
    assert main(["doctor", "--from", str(path), "--json"]) == 0  # read (XPU Manager's own log), never refused
    assert json.loads(capsys.readouterr().out)["findings"] == []
