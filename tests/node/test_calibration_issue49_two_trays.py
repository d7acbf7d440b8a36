"""Issue 49's NVLink 5 check figures found by P49i (docs/plan.md: "More NVLink 5 figures (P49i)"): AWS
ParallelCluster's GB200 run over two trays of one NVL72 (8 ranks, one process per GPU, NCCL 2.27.7), added as
a check and scored at first contact before any model change. Its one size row, 128 MiB, is where Google's
8-B200 board run with one process driving 8 GPUs agrees with it: no verdict on the board's 8-64 MiB misses."""

import contextlib
import io
import json
from pathlib import Path

ROOT = Path(__file__).parents[2]
FIGURES = ROOT / "tests" / "data" / "published_collectives_issue49.json"
MiB = 2**20
AWS = "https://github.com/aws/aws-parallelcluster/pull/6956"
BOARD = "https://github.com/yangwhale/gpu-tpu-pedia/blob/main/gpu/deepep/README.md"


def _rows():
    from tests.harness.plan_reference import compare

    return compare(ROOT / "benchmarks" / "data" / "published_collectives.yaml") + compare(FIGURES)


def test_the_two_tray_run_is_scored_as_a_check_never_fitted_by_its_error_against_the_model():
    from tests.harness.plan_reference import load, median_abs_error

    # the harness reads it as a check: the fit's figures (calibration, fitted) never include it
    (point,) = [p for p in load(FIGURES) if p.source == AWS]
    assert point.role == "check" and point.launch == "per-gpu" and not point.launch_fit
    assert AWS not in {p.source for p in load(FIGURES) if p.role == "calibration" and p.fitted}
    # it is scored by its error against the model's prediction, among the checks, never the calibration rows
    aws = next(r for r in _rows() if r.point.source == AWS)
    assert aws.error == aws.predicted_busbw / aws.point.published_busbw - 1.0
    assert median_abs_error([aws], role="check") == abs(aws.error)
    assert median_abs_error([aws], role="calibration") is None
    entry = next(e for e in json.loads(FIGURES.read_text())["nvl72"] if e["source"] == AWS)
    # one row, the library's own choice (no algorithm forced), the out-of-place time as printed
    assert [(p["size"], p["time_us"], "algorithm" in p) for p in entry["points"]] == [(128 * MiB, 386.7, False)]


def test_first_contact_the_128_mib_row_passes_and_agrees_with_the_one_process_board_run():
    from tests.harness.plan_reference import verdict

    rows = _rows()
    aws = next(r for r in rows if r.point.source == AWS)
    # the time as printed gives the busbw as printed (607.37 GB/s: 8 ranks, all_reduce's 2(n - 1)/n)
    assert round(aws.point.published_busbw, 1) == 607.4 and aws.point.launch == "per-gpu"
    assert verdict(aws) == "pass" and round(aws.error, 3) == 0.013 and aws.predicted_algorithm == "ring/simple"
    # Google's 8-B200 board (one process driving 8 GPUs) at the same size: 591.79, 2.6 % apart, both passes
    board = next(r for r in rows if r.point.source == BOARD and r.smallest == 128 * MiB)
    assert round(aws.point.published_busbw / board.point.published_busbw - 1, 3) == 0.026
    assert verdict(board) == "pass"


def test_the_summary_counts_it_and_no_miss_is_its():
    import benchmarks.collective_vs_published as bench

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        bench._issue49_summary(_rows())
    text = out.getvalue()
    # 178 pass, 6 miss before P49j's launch time; 179 pass, 5 miss before P49k's AWS B200 board
    assert "185 pass, 14 miss, 80 below 1 MiB (no target)" in text
    assert "aws/aws-parallelcluster" not in "\n".join(line for line in text.splitlines() if "miss:" in line)
