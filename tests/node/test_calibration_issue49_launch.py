"""Issue 49, P49e: one process driving several GPUs (nccl-tests -g N) priced as such. ncclGroupEnd launches each
GPU's kernel in turn from the one thread (NVIDIA/nccl src/group.cc, doLaunches), so a call takes at least N
launches; the per-GPU launch time is fitted to the launch_fit figures (Together AI's two forced-ring all_reduce
runs, P49e; a second host's -g 4 run, 4 H100 of a Lambda instance, P49j) and checked on the other -g N figures
(docs/plan.md, "One process driving several GPUs")."""

import json
from pathlib import Path

import numpy as np
import pytest

from gpuvet.cli.app import main
from gpuvet.node.collective_model import ONE_PROCESS_LAUNCH_S
from gpuvet.node.collectives import bus_factor
from gpuvet.node.memory import PlanError

ROOT = Path(__file__).parents[2]
FIGURES = ROOT / "tests" / "data" / "published_collectives_issue49.json"
MiB = 2**20


def _rows():
    from tests.harness.plan_reference import compare

    return compare(FIGURES)


def _model(preset="hgx-h200-8"):
    from gpuvet.backends.select import open_backend
    from gpuvet.plan.collective import CollectiveModel

    return CollectiveModel(open_backend(sim=preset).node())


def test_the_launch_time_is_what_the_fit_gives_on_the_launch_fit_runs_only():
    """Three runs on two hosts: Together AI's two (8 H100, ring forced, -g 8: 48 figures) and, since P49j, the
    Lambda run (4 H100, NCCL's choice, -g 4: 28 figures, a calibration entry). Only they enter the fit."""
    from tests.harness.plan_reference import fit_launch, load

    fitted = [p for p in load(FIGURES) if p.launch_fit]
    assert {p.source.rsplit("/", 2)[-2] for p in fitted} == {"20260305_220043", "20260305_220944", "posts"}
    assert {(p.op, p.algorithm, p.launch, p.ranks) for p in fitted} == {
        ("all_reduce", "ring", "one-process", 8),
        ("all_reduce", None, "one-process", 4),
    }
    lambda_run = [p for p in fitted if p.ranks == 4]
    assert len(lambda_run) == 28 and {p.role for p in lambda_run} == {"calibration"}
    fit = fit_launch(FIGURES)
    assert fit.figures == 48 + 28
    assert fit.per_gpu_s == pytest.approx(ONE_PROCESS_LAUNCH_S, rel=0.005)
    assert ONE_PROCESS_LAUNCH_S == pytest.approx(5.57e-6)  # 4.72 us on Together AI's runs alone (P49e)


def test_one_process_is_floored_at_its_launches_and_per_gpu_is_unchanged():
    model = _model()
    members = model.members(8)
    per_gpu = model.predict("all_reduce", MiB, members, "ring")
    one = model.predict("all_reduce", MiB, members, "ring", "one-process")
    assert per_gpu.launch == "per-gpu" and per_gpu.launch_floor_s == 0 and not per_gpu.launch_bound
    assert one.launch_floor_s == pytest.approx(8 * ONE_PROCESS_LAUNCH_S) and one.launch_bound
    assert one.time_s == pytest.approx(8 * ONE_PROCESS_LAUNCH_S) and one.time_s > per_gpu.time_s
    assert (one.algorithm, one.protocol) == (per_gpu.algorithm, per_gpu.protocol)
    big = [model.predict("all_reduce", 64 * MiB, members, None, launch) for launch in ("per-gpu", "one-process")]
    assert big[0].time_s == big[1].time_s and not big[1].launch_bound  # the floor only binds at small sizes
    four = model.predict("all_reduce", 1024, model.members(4), None, "one-process")
    assert four.time_s == pytest.approx(4 * ONE_PROCESS_LAUNCH_S)  # N is the GPUs the one process drives
    with pytest.raises(PlanError, match="unknown launch"):
        model.predict("all_reduce", MiB, members, None, "threads")


def _floored(r, per_gpu_s):
    """The busbw a figure gets with the floor at ``per_gpu_s`` instead of the committed constant."""
    model = _model(r.point.node_ref)
    alone = model.predict(r.point.op, r.smallest, model.members(r.point.ranks), r.point.algorithm).time_s
    return r.smallest * bus_factor(r.point.op, r.point.ranks) / max(alone, r.point.ranks * per_gpu_s) / 1e9


def test_the_check_figures_the_launch_floor_was_not_fitted_to():
    """The six Together AI reduce_scatter and all_gather rows at 1 - 4 MiB (one process, 8 H100, the same cluster)
    pass: at P49e's first contact +7.5 .. +10.4 % (they missed by +33 .. +126 %), since P49j's refit -6.4 ..
    -8.9 %; with NVIDIA/nccl-tests#123's DGX A100 figure instead of the fit (33.7 us for 8 GPUs at 8 B, -g 8),
    +20 .. +24 %: they pass with either. P49j's first contact: the GB300 tray's 1 MiB, the one miss on the floor
    (25.35 us for 4 GPUs against 4 x 4.72 = 18.9 us), passes at +13.8 % (4 x 5.57 = 22.3 us). The GB200 and GB300
    trays' 4 MiB, the GB300 tray's 16 MiB and Google's B200 board at 8 - 64 MiB are not launch-bound (the floor
    is below the model's time): unexplained by the launch."""
    from tests.harness.plan_reference import verdict

    rows = _rows()
    check = [
        r
        for r in rows
        if r.point.source.endswith(("reduce_scatter_ring.out", "all_gather_ring.out")) and MiB <= r.smallest <= 4 * MiB
    ]
    assert len(check) == 6 and not any(r.point.launch_fit for r in check)
    assert all(verdict(r) == "pass" and r.launch_bound and -0.09 <= r.error <= -0.06 for r in check)
    source = 33.7e-6 / 8
    assert all(0.20 <= _floored(r, source) / r.point.published_busbw - 1 <= 0.24 for r in check)
    fit_rows = [r for r in rows if r.point.launch_fit and r.point.ranks == 8 and r.smallest == MiB]
    assert len(fit_rows) == 2 and all(_floored(r, source) / r.point.published_busbw - 1 > 0.25 for r in fit_rows)
    gb300 = next(r for r in rows if r.point.source.endswith("a4x-max/04-nccl-test/README.md") and r.smallest == MiB)
    assert MiB * 1.5 / gb300.point.published_busbw / 1e3 == pytest.approx(25.35, abs=0.01)
    assert gb300.point.role == "check" and gb300.launch_bound and verdict(gb300) == "pass"
    assert round(gb300.error, 3) == 0.138 and round(_floored(gb300, 4.72e-6) / gb300.point.published_busbw - 1, 3) == 0.343
    every = [r for r in rows if verdict(r) == "miss" and not r.point.launch_fit]
    # P49k's AWS B200 board ran one process per GPU: the floor is not applied to it, so none of its misses is the floor's
    aws = [r for r in every if "stas00/ml-engineering" in r.point.source]
    assert len(aws) == 9 and all(r.point.launch != "one-process" and not r.launch_bound for r in aws)
    misses = [r for r in every if r not in aws]
    assert all(r.point.launch == "one-process" and not r.launch_bound for r in misses)
    # the fit's own rows: the Lambda run's 1 MiB sits above the floor its small sizes set (28.06 against 22.3 us)
    (own,) = [r for r in rows if verdict(r) == "miss" and r.point.launch_fit]
    assert (own.point.ranks, own.smallest, own.launch_bound, round(own.error, 3)) == (4, MiB, True, 0.259)
    assert {(r.point.family, r.smallest) for r in misses} == {
        ("nvl72", 4 * MiB),  # Azure's GB200 tray (a calibration row since P49g) and P49f's GB300 tray
        ("nvl72", 16 * MiB),  # the GB300 tray's, slower than its own 8 MiB row
        ("nvlink5_board", 8 * MiB),
        ("nvlink5_board", 32 * MiB),
        ("nvlink5_board", 64 * MiB),
    }


def _added_fit():
    """P49j's alternative, not kept: the launches added to the collective (t = T + N x L, as if the host never ran
    ahead of the GPUs), L fitted on the same launch_fit figures with the same robust loss as fit_launch. Returns L
    and, per figure, (the figure, its per-GPU time T, its published time)."""
    from scipy.optimize import least_squares

    from tests.harness.plan_reference import load

    rows = []
    for p in load(FIGURES):
        if p.launch_fit:
            model = _model(p.node_ref)
            alone = model.predict(p.op, p.sizes[0], model.members(p.ranks), p.algorithm).time_s
            rows.append((p, alone, p.sizes[0] * bus_factor(p.op, p.ranks) / (p.published_busbw * 1e9)))

    def errors(x):
        return np.array([np.log(t / (alone + p.ranks * np.exp(x[0]))) for p, alone, t in rows])

    result = least_squares(errors, np.log([4e-6]), loss="soft_l1", f_scale=0.05, diff_step=1e-4)
    return float(np.exp(result.x[0])), rows


def test_an_added_launch_term_fits_the_calibration_mid_sizes_worse_and_misses_the_hopper_g8_checks():
    """Why a floor and not an added term: NCCL's group launch is serial on the host, but nccl-tests times its calls
    back to back, so the host works ahead of the GPUs. Fitted on the same 76 figures, an added term (2.51 us per
    GPU) prices their 1 - 512 MiB rows worse (median 6.0 against 3.3 %, worst 35.5 against 23.0 %) and takes
    Azure's -g 8 H100 and H200 tables (NVLS forced, checks) 31 - 45 % slow at 1 - 4 MiB, where the floor passes
    them: the mid-size misses of the NVLink 5 -g N runs are not their launches (docs/plan.md)."""
    added, rows = _added_fit()
    assert added == pytest.approx(2.51e-6, rel=0.01)
    mid = [(p, alone, t) for p, alone, t in rows if MiB <= p.sizes[0] <= 512 * MiB]
    floor_err = sorted(abs(np.log(t / max(alone, p.ranks * ONE_PROCESS_LAUNCH_S))) for p, alone, t in mid)
    added_err = sorted(abs(np.log(t / (alone + p.ranks * added))) for p, alone, t in mid)
    assert np.median(floor_err) < 0.035 < 0.055 < np.median(added_err) and floor_err[-1] < 0.24 < 0.35 < added_err[-1]
    azure = [r for r in _rows() if "Azure" in r.point.source and r.point.ranks == 8 and MiB <= r.smallest <= 4 * MiB]
    assert len(azure) == 6 and all(abs(r.error) <= 0.25 for r in azure)  # the floor: pass
    slow = []
    for r in azure:
        model = _model(r.point.node_ref)
        alone = model.predict(r.point.op, r.smallest, model.members(8), r.point.algorithm).time_s
        busbw = r.smallest * bus_factor(r.point.op, 8) / (alone + 8 * added) / 1e9
        slow.append(busbw / r.point.published_busbw - 1)
    assert all(-0.45 <= e <= -0.31 for e in slow)


def test_every_other_one_process_figure_with_a_target_keeps_its_verdict_and_the_floor_spread_is_said():
    """Every -g N figure from 1 MiB up that the floor does not set is priced as before; where it sets one below
    1 MiB (no target), Azure's H100 and H200 hosts run faster than the fit's hosts: their whole -g 8 call takes
    25.6 and 29.9 us at 1 KiB (NVLink SHARP included), the floor 44.6 us (37.8 us until P49j). The launch time
    is per host."""
    rows = [r for r in _rows() if r.point.launch == "one-process"]
    assert len(rows) == 235  # 195 until P49f's two Google tray runs (11 + 1 figures), 207 until P49j's Lambda run
    azure = {r.point.source.rsplit("/", 1)[-1]: r for r in rows if r.smallest == 1024 and "Azure" in r.point.source}
    assert round(azure["ND_H100_v5_results.md"].error, 3) == -0.425
    assert round(azure["ND_H200_v5_results.md"].error, 3) == -0.330
    assert all(r.launch_bound for r in azure.values())


def test_plan_collective_takes_the_launch_and_says_the_floor(capsys):
    code = main(
        [
            "plan",
            "collective",
            "--node",
            "hgx-h200-8",
            "--bytes",
            "1MiB",
            "--algorithm",
            "ring",
            "--launch",
            "one-process",
            "--json",
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["launch"] == "one-process"
    assert out["time_s"] == pytest.approx(8 * ONE_PROCESS_LAUNCH_S) and out["launch_floor_s"] == out["time_s"]
    code = main(["plan", "collective", "--node", "hgx-h200-8", "--bytes", "1MiB", "--algorithm", "ring"])
    text = capsys.readouterr().out
    assert code == 0 and "launch" not in text
    code = main(
        ["plan", "collective", "--node", "hgx-h200-8", "--bytes", "1MiB", "--algorithm", "ring", "--launch", "one-process"]
    )
    text = " ".join(capsys.readouterr().out.split())
    assert code == 0 and "one process driving 8 GPUs: its launches in turn set the time, 8 x 5.57 µs" in text
    assert main(["plan", "collective", "--node", "hgx-h200-8", "--launch", "threads"]) == 2


def _nccl_log(gpus_per_thread: int, busbw: float = 465.0) -> str:
    """An 8-H100 all_reduce_perf log at 4 and 8 GiB, in nccl-tests' format: one process driving all 8 GPUs
    (-g 8: 'nThread 1 nGpus 8', one pid on every rank line) or one process each (-g 1)."""
    head = [
        f"# nThread 1 nGpus {gpus_per_thread} minBytes 4294967296 maxBytes 8589934592 step: 2(factor) warmup iters: 5 "
        "iters: 20 agg iters: 1 validation: 1 graph: 0",
        "#",
        "# Using devices",
    ]
    pid = (lambda i: 4000) if gpus_per_thread > 1 else (lambda i: 4000 + i)
    head += [
        f"#  Rank {i:2d} Group  0 Pid {pid(i):6d} on     node01 device {i:2d} [0x{16 + i:02x}] NVIDIA H100 80GB HBM3"
        for i in range(8)
    ]
    head += ["#", "#       size         count      type   redop    root     time   algbw   busbw #wrong"]
    rows = []
    for size in (4 * 2**30, 8 * 2**30):
        alg, cells = busbw * 8 / 14, f"{size:12d}  {size // 4:12d}     float     sum      -1"
        rows.append(f"{cells}  {size / alg / 1e3:7.1f}  {alg:6.2f}  {busbw:6.2f}      0")
    return "\n".join(head + rows + ["# Out of bounds values : 0 OK", f"# Avg bus bandwidth    : {busbw:.2f}", "#"])


@pytest.mark.parametrize(("gpus", "said"), [(8, True), (1, False)])
def test_doctor_prices_a_g8_log_one_process_and_says_so_in_its_basis(capsys, tmp_path, gpus, said):
    from tests.support.helpers import doctor_capture

    code, data = doctor_capture(capsys, tmp_path, _nccl_log(gpus), "--all", name="nccl.txt")
    (step,) = [s for s in data["steps"] if s["check"] == "collective_results"]
    assert code == 0 and step["status"] == "clear" and "8 H100-SXM reach on NVSwitch" in step["summary"], step
    line = "one thread drove 8 GPUs (nGpus 8): priced one-process, at least 8 launches a call"
    assert (line in step["summary"]) is said


def test_the_header_or_one_pid_for_every_device_says_how_many_gpus_a_thread_drove():
    from gpuvet.captures.bench import parse_nccl
    from gpuvet.captures.text import clean

    def parsed(text):
        (result,) = parse_nccl(list(clean(text).lines), "nccl.txt").results
        return result.gpus_per_thread

    assert parsed(_nccl_log(8)) == 8 and parsed(_nccl_log(1)) == 1
    headless = "\n".join(ln for ln in _nccl_log(8).splitlines() if "nThread" not in ln)
    assert parsed(headless) == 8  # the header lost: the one pid listed for every device says it
