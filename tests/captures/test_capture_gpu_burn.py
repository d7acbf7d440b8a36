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


def _burn_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str) -> list[dict[str, object]]:
    _, data = doctor_capture(capsys, tmp_path, text)
    return [f for f in data["findings"] if f["cause"] == "application_cuda_error"]


def test_workers_that_died_before_any_verdict_are_a_finding_quoted_or_bare(capsys, tmp_path):
    """Issue 46 batch G: gpu-burn aborts once no worker is alive and prints no 'Tested N GPUs' verdict; its
    last progress line, bare or quoted inside a post, marks each died worker."""
    died = ("20.0%  proc'd: -1 (0 Gflop/s) - -1 (0 Gflop/s)   errors: -12345  (DIED!)- -12345  (DIED!)  "
            "temps: 41 C - 40 C \n")
    for text in (died + "No clients are alive!  Aborting\n",
                 'The terminal printed:\n "' + died + '\nNo clients are alive!  Aborting"\n'):
        got = gpu_burn.parse(clean(text).lines)
        assert got.died == {0, 1} and got.aborted is not None and got.verdicts == {}
        (f,) = _burn_errors(capsys, tmp_path, text)
        assert f["severity"] == "warn" and f["evidence"]["died"] == ["GPU 0", "GPU 1"]
        assert "aborted" in str(f["evidence"]["detail"])
    one = ("Initialized device 0 with 5120 MB of memory\n50.0%  proc'd: -1 (0 Gflop/s)   errors: 99  (DIED!)  "
           "temps: 38 C\nNo clients are alive!  Aborting\n")
    (f,) = _burn_errors(capsys, tmp_path, one)
    assert f["module"] == "GPU 0"
    assert _burn_errors(capsys, tmp_path, LIST + PROGRESS.format("0")) == []  # a cut run, nothing died


# issue 46, batch I: gpu-burn set a GPU up and was stopped before its first progress line (a hang)
SET_UP = ("Run length not specified in the command line.  Burning for 10 secs\n"
          "Initialized device 0 with 7982 MB of memory (7500 MB available, using 6750 MB of it), using FLOATS\n"
          "Initialized device 1 with 7982 MB of memory (7500 MB available, using 6750 MB of it), using FLOATS\n")


@pytest.mark.parametrize("stop", ["\nKilling processes.. \n^C\n$ \n", "^C\n"])
def test_a_run_stopped_before_any_progress_line_is_no_pass(capsys, tmp_path, stop):
    got = gpu_burn.parse(clean(SET_UP + stop).lines)
    assert got.silent and sorted(got.initialized) == [0, 1]
    code, data = doctor_capture(capsys, tmp_path, SET_UP + stop)
    (f,) = [f for f in data["findings"] if f["cause"] == "application_cuda_error"]
    assert code == 1 and f["severity"] == "warn" and "no result" in str(f["evidence"]["detail"])
    assert f["evidence"]["initialized"] == ["GPU 0 (7982 MB)", "GPU 1 (7982 MB)"]


@pytest.mark.parametrize("after", [
    "[... output trimmed ...]\nKilling processes.. \n",  # the poster cut what it printed between
    "",  # the paste ends after the set-up: what came next is not known
    PROGRESS.format("0") + "Killing processes.. \n",  # it ran and counted no error (a run stopped early)
])
def test_a_set_up_not_proven_silent_is_no_finding(capsys, tmp_path, after):
    got = gpu_burn.parse(clean(SET_UP + after).lines)
    assert not got.silent and got.ran
    _, data = doctor_capture(capsys, tmp_path, SET_UP + after)
    assert not [f for f in data["findings"] if f["severity"] in ("warn", "critical")]


def test_the_devices_it_set_up_are_the_inventorys_modules_where_nothing_else_names_them(capsys, tmp_path):
    from gpuvet.captures.read import parse_text

    fc = parse_text(SET_UP + "^C\n", "burn.txt")
    assert fc.smi is not None and [m.fields["FB Memory Usage/Total"] for m in fc.smi.modules] == ["7982 MiB"] * 2
