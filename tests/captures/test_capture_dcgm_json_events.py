"""DCGM diagnostic results as JSON in whatever shape a user kept (issue 46, batch F): a job's
structured log of one object per event piped through jq (pretty objects one after another, the
last one cut by the paste), the same as JSON lines, `dcgmi diag -j` filtered by jq down to a
test's name and results, and JSON that is not DCGM's; and DCGM 4's text table, whose per-GPU rows and
'Warning: GPUn' rows follow a test's overall row. Written here in those shapes; UUIDs and figures made up."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuvet.captures import dcgm_events
from gpuvet.captures.text import clean
from tests.support.helpers import doctor_capture, found_causes

EVENTS = """\
$ kubectl logs gpu-check-7h2k -c dcgm-diag | jq
{
  "event": "Running DCGM diagnostic level=3 gpus=[0, 1, 2, 3]",
  "level": "info"
}
{
  "event": "Diagnostic summary",
  "passed": 9,
  "failed": 1,
  "warned": 0,
  "total": 10
}
{
  "event": "Test failed",
  "level": "error",
  "gpu": 2,
  "test": "memory",
  "error_code": 83,
  "detail": "GPU 2 had uncorrectable memory errors"
}
{
  "event": "Test warn",
  "level": "warning",
  "gpu": "GPU-1a2b3c4d-5e6f-7081-92a3-b4c5d6e7f809",
  "test": "software",
  "detail": "Persistence Mode: Persistence mode for GPU 3 is disabled.",
  "timestamp": "2026-03-02T10:00:01Z",
"""

JQ_TESTS = """\
$ dcgmi diag -r 2 -j | jq '.tests[] | {name, results}'
{
  "name": "pcie",
  "results": [
    {"gpu_id": 0, "status": "Pass"},
    {"gpu_id": 1, "status": "Fail", "warnings": [{"warning": "GPU 1 PCIe replay count 40 exceeds limit of 8"}]}
  ]
}
"""


def _parse(text: str) -> dcgm_events.DcgmParse:
    return dcgm_events.parse(clean(text).lines)


def test_a_jq_stream_of_events_reads_each_test_result_and_the_cut_object_up_to_its_last_field() -> None:
    got = _parse(EVENTS)
    by_test = {r.test: r for r in got.results}
    assert (by_test["memory"].gpu, by_test["memory"].status) == ("2", "fail")
    assert "DCGM error code 83" in (by_test["memory"].detail or "")
    warn = by_test["software"]
    assert (warn.gpu, warn.status) == ("3", "warn") and "GPU-1a2b3c4d" in (warn.detail or "")
    assert "diagnostic summary" not in by_test  # the failure the summary counts is shown
    assert min(got.claimed) == 2 and 1 not in got.claimed


def test_json_lines_and_a_summary_counting_failures_not_shown() -> None:
    lines = ('{"event":"Diagnostic summary","passed":4,"failed":2,"warned":0,"total":6,"module":"dcgm-diag"}\n'
             '{"event":"Test passed","test":"pcie","gpu":0}\n')
    got = _parse(lines)
    assert [(r.test, r.status) for r in got.results] == [("pcie", "pass"), ("diagnostic summary", "warn")]
    assert "2 failed test(s) not shown" in (got.results[1].detail or "")


def test_dcgmi_diag_json_cut_down_by_jq_to_names_and_results() -> None:
    got = _parse(JQ_TESTS)
    assert [(r.test, r.gpu, r.status) for r in got.results] == [("pcie", "0", "pass"), ("pcie", "1", "fail")]
    assert "replay count 40" in (got.results[1].detail or "")


def test_json_that_is_not_dcgms_is_left_alone() -> None:
    other = '{\n  "name": "web",\n  "status": "Running",\n  "restarts": 0\n}\n{"kind": "Pod", "status": "Failed"}\n'
    assert _parse(other).results == [] and _parse(other).claimed == set()


def test_doctor_names_the_failed_module_and_the_settings_warning(capsys: pytest.CaptureFixture[str],
                                                                   tmp_path: Path) -> None:
    code, data = doctor_capture(capsys, tmp_path, EVENTS)
    assert code == 1
    assert {("dcgm_diag_failed", "GPU2"), ("dcgm_diag_warning", "GPU3")} <= found_causes(data)


DCGM4_TABLE = """\
+---------------------------+------------------------------------------------+
| Diagnostic                | Result                                         |
+===========================+================================================+
|-----  Deployment  --------+------------------------------------------------|
| software                  | Pass                                           |
|                           | GPU0: Pass                                     |
|                           | GPU1: Pass                                     |
+-----  Hardware  ----------+------------------------------------------------+
| memory                    | Fail                                           |
|                           | GPU0: Pass                                     |
|                           | GPU1: Fail                                     |
| Warning: GPU1             | Error using CUDA API cuMemAlloc Check DCGM and |
|                           |  system logs for errors.                       |
+---------------------------+------------------------------------------------+
"""


def test_dcgm4s_table_keeps_each_gpus_result_and_its_warning_row_as_the_detail() -> None:
    """DCGM 4 prints a test's overall result, then a row per GPU, then 'Warning: GPUn' rows: the overall
    row is the GPUs' rows again (no second, unlocated failure), the warning is GPU1's detail, not a test."""
    from gpuvet.captures import dcgm

    got = dcgm.parse_text(clean(DCGM4_TABLE).lines)
    assert [(r.test, r.gpu, r.status) for r in got.results] == [
        ("software", "0", "pass"), ("software", "1", "pass"), ("memory", "0", "pass"), ("memory", "1", "fail")]
    assert got.results[-1].detail == "Error using CUDA API cuMemAlloc Check DCGM and system logs for errors."


DCGM4_PLUGIN_FAILED = """\
+---------------------------+------------------------------------------------+
| Diagnostic                | Result                                         |
+===========================+================================================+
|-----  Deployment  --------+------------------------------------------------|
| software                  | Pass                                           |
|                           | GPU0: Pass                                     |
|                           | GPU1: Pass                                     |
+-----  Hardware  ----------+------------------------------------------------+
| memory                    | Fail                                           |
|                           | GPU0: Skip                                     |
|                           | GPU1: Skip                                     |
| Warning                   | The plugin failed to initialize                |
+---------------------------+------------------------------------------------+
"""


def test_dcgm4s_overall_fail_over_gpu_rows_that_skipped_is_the_nodes_failure(capsys: pytest.CaptureFixture[str],
                                                                            tmp_path: Path) -> None:
    """Review 53: the overall row was dropped whenever GPUn rows followed, so a test that failed as a whole
    (a plugin that could not start) over GPU rows reading Skip came out 'all pass or skip', exit 0. The overall
    row is kept where the GPU rows do not carry its worst status."""
    code, data = doctor_capture(capsys, tmp_path, DCGM4_PLUGIN_FAILED)
    assert code != 0 and ("dcgm_diag_failed", None) in found_causes(data)


def test_past_the_object_cap_it_says_so_and_the_findings_named_are_capped(capsys: pytest.CaptureFixture[str],
                                                                        tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Review 53: past the cap on JSON objects the rest were 'not output gpuvet reads' with no word of the cap,
    and each failed result was a finding of its own (10,000 of them). The cap is said, its lines claimed, and
    the findings named stop at MAX_NAMED (the rest counted)."""
    from gpuvet.doctor.capture_pairs import MAX_NAMED

    monkeypatch.setattr(dcgm_events, "_MAX_OBJECTS", MAX_NAMED + 20)
    many = "".join(f'{{"test": "memory", "status": "fail", "gpu": {i}}}\n' for i in range(MAX_NAMED + 40))
    code, data = doctor_capture(capsys, tmp_path, many)
    notes = " ".join(data["notes"])
    assert code != 0 and "not output gpuvet reads" not in notes and f"the first {MAX_NAMED + 20:,} read" in notes
    assert len([f for f in data["findings"] if f["cause"] == "dcgm_diag_failed"]) == MAX_NAMED
