"""gpu-burn output pasted as operators paste it (wilicc/gpu-burn's format: progress lines, then
``Tested N GPUs:`` and one verdict per GPU), issue 46 review: several runs pasted together are each
kept (a later OK never hides an earlier FAULTY), and a run cut before its verdict is judged from
its error counts. Lines written in the tool's wording; the figures made up."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuvet.captures import gpu_burn
from gpuvet.captures.text import clean
from tests.support.helpers import doctor_capture

LIST = ("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee)\n"
        "GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeef)\n")
PROGRESS = "100.0%  proc'd: 500 (50000 Gflop/s) - 500 (50000 Gflop/s)   errors: 0 - {}   temps: 60 C - 61 C\n"
RUN = PROGRESS + "Tested 2 GPUs:\n\tGPU 0: OK\n\tGPU 1: {}\n"
FAULTY = RUN.format("1234  (WARNING!)", "FAULTY")
OK = RUN.format("0", "OK")


def _sdc(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str) -> list[dict[str, object]]:
    _, data = doctor_capture(capsys, tmp_path, text)
    return [f for f in data["findings"] if f["cause"] == "silent_data_corruption"]


@pytest.mark.parametrize("order", ["faulty_then_ok", "ok_then_faulty"])
def test_faulty_in_any_run_is_a_finding_and_the_disagreement_is_said(capsys, tmp_path, order):
    text = LIST + (FAULTY + OK if order == "faulty_then_ok" else OK + FAULTY)
    got = gpu_burn.parse(clean(text).lines)
    assert len(got.runs) == 2 and got.verdicts == {0: "OK", 1: "FAULTY"}
    assert sorted(got.disagree(1)) == ["FAULTY", "OK"] and got.disagree(0) == []
    assert any("disagree on GPU 1" in n for n in got.notes), got.notes
    (f,) = _sdc(capsys, tmp_path, text)
    assert f["module"] == "GPU 1" and f["severity"] == "critical"
    assert f["evidence"]["errors"] == 1234 and "disagree" in str(f["evidence"]["detail"])
    rows = text.splitlines()
    faulty_block = rows.index("\tGPU 1: FAULTY") - 2  # the FAULTY run's own 'Tested 2 GPUs:' line, not the last one
    assert rows[faulty_block] == "Tested 2 GPUs:" and f["evidence"]["line"] == faulty_block + 1


def test_two_ok_runs_are_clear(capsys, tmp_path):
    assert _sdc(capsys, tmp_path, LIST + OK + OK) == []


def test_a_cut_run_with_counted_errors_is_judged_at_medium_confidence(capsys, tmp_path):
    text = LIST + PROGRESS.format("1234  (WARNING!)")
    got = gpu_burn.parse(clean(text).lines)
    assert got.verdicts == {} and got.cut_errors == [0, 1234]
    (f,) = _sdc(capsys, tmp_path, text)
    assert f["module"] == "GPU 1" and f["confidence"] == pytest.approx(0.7)
    assert "cut before its verdict" in str(f["evidence"]["detail"])


def test_a_cut_run_whose_erring_worker_died_or_counted_nothing_is_not_corruption(capsys, tmp_path):
    died = LIST + PROGRESS.format("5 (DIED!)")
    assert gpu_burn.parse(clean(died).lines).died == {1}
    assert _sdc(capsys, tmp_path, died) == []
    assert _sdc(capsys, tmp_path, LIST + PROGRESS.format("0")) == []


def test_a_second_run_cut_after_a_complete_one_is_judged_too(capsys, tmp_path):
    text = LIST + OK + PROGRESS.format("77  (WARNING!)")
    got = gpu_burn.parse(clean(text).lines)
    assert got.verdicts == {0: "OK", 1: "OK"} and got.cut_errors == [0, 77]
    (f,) = _sdc(capsys, tmp_path, text)
    assert f["module"] == "GPU 1" and f["evidence"]["errors"] == 77
