"""Review 67b (issue 46) F2-F4: NHC's and intel_gpu_top -J's readers are linear in their input, and -J's keys
without an object are refused, not a traceback. The bounds are ratios against a small input timed in the same
test (best of three each), never an absolute time: a linear reader grows 16x for 16x the input, a quadratic one
256x; the bound (64x) sits between."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from gpuvet.captures import intel_gpu_top, nhc_checks
from gpuvet.captures.app_errors import AppErrorsParse
from gpuvet.captures.text import Line
from tests.support.helpers import doctor_text

_GROWTH, _BOUND = 16, 64


def _best(work: Callable[[], object]) -> float:
    times = []
    for _ in range(3):
        t = time.process_time()  # this process's CPU time: other work on the host does not count
        work()
        times.append(time.process_time() - t)
    return min(times)


def _ratio(make: Callable[[int], list[Line]], read: Callable[[list[Line]], object], small: int) -> float:
    little, big = make(small), make(small * _GROWTH)
    return _best(lambda: read(big)) / max(_best(lambda: read(little)), 1e-4)


def _nhc(n: int) -> list[Line]:
    diff = ["diff /etc/nhc/nhc.conf.orig /etc/nhc/nhc.conf", "< * || check_nv_gpu_count 8", "---",
            "> * || check_nv_gpu_count 9"]
    rows = [f"ERROR:  nhc:  Health check failed:  Check check_nv_gpu_count {8 + i % 2} returned 1" for i in range(n)]
    return [Line(i + 1, t) for i, t in enumerate(rows + diff)]  # the diff last: a scan per row reads every row


def _nhc_read(lines: list[Line]) -> AppErrorsParse:
    out = AppErrorsParse()
    nhc_checks.read(lines, out)
    return out


def test_nhc_count_checks_are_read_in_linear_time() -> None:
    assert _nhc_read(_nhc(10)).notes  # the edit is still found: a configuration note
    assert _ratio(_nhc, _nhc_read, 400) < _BOUND


_SAMPLE = ['{', ' "period": {"duration": 1000.1, "unit": "ms"},', ' "frequency": {"requested": 1300.0, "actual": 1300.0},',
           ' "rc6": {"value": 99.1, "unit": "%"},', ' "engines": {"Render/3D/0": {"busy": 1.0, "unit": "%"}}', '},']


def _igt(n: int) -> list[Line]:
    text = ["["] + _SAMPLE * n + ["]"]
    return [Line(i + 1, t) for i, t in enumerate(text)]


def test_intel_gpu_top_json_is_read_in_linear_time() -> None:
    assert len(intel_gpu_top.parse(_igt(5)).results) == 5
    assert _ratio(_igt, intel_gpu_top.parse, 500) < _BOUND


def test_intel_gpu_top_keys_without_an_object_are_refused_not_a_traceback(tmp_path: Path) -> None:
    code, _ = doctor_text(tmp_path, '  "engines": {"Render/3D/0": {"busy": 0.0}},\n  "period": {"duration": 1000.0}\n')
    assert code == 2  # refused: nothing gpuvet reads (no traceback: doctor_text asserts that)
    lines = [Line(1, '"engines": {"Render/3D/0": {"busy": 0.0}},')]
    assert intel_gpu_top.parse(lines).results == []


def test_intel_gpu_top_json_nested_past_the_stack_is_no_traceback() -> None:
    lines = [Line(1, '"engines": {}'), Line(2, '{"engines": ' + "[" * 200_000)]
    assert intel_gpu_top.parse(lines).results == []
