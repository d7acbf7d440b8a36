"""Issue 49, P49e: one process driving several GPUs (nccl-tests -g N) priced as such. ncclGroupEnd launches each
GPU's kernel in turn from the one thread (NVIDIA/nccl src/group.cc, doLaunches), so a call takes at least N
launches; the per-GPU launch time is fitted to Together AI's two forced-ring all_reduce runs (launch_fit) and
checked on the other -g N figures (docs/plan.md, "One process driving several GPUs")."""

import json
from pathlib import Path

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


def test_the_launch_time_is_what_the_fit_gives_on_the_two_all_reduce_runs_only():
    from tests.harness.plan_reference import fit_launch, load

    fitted = [p for p in load(FIGURES) if p.launch_fit]
    assert {p.source.rsplit("/", 2)[-2] for p in fitted} == {"20260305_220043", "20260305_220944"}
    assert {(p.op, p.algorithm, p.launch, p.ranks) for p in fitted} == {("all_reduce", "ring", "one-process", 8)}
    fit = fit_launch(FIGURES)
    assert fit.figures == 48
    assert fit.per_gpu_s == pytest.approx(ONE_PROCESS_LAUNCH_S, rel=0.005)


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


def test_first_contact_on_the_check_figures_the_launch_floor_was_not_fitted_to():
    """The six Together AI reduce_scatter and all_gather rows at 1 - 4 MiB (one process, 8 H100, the same cluster)
    pass, +7.5 .. +10.4 % (they missed by +33 .. +126 %); with NVIDIA/nccl-tests#123's DGX A100 figure instead of
    the fit (33.7 us for 8 GPUs at 8 B, -g 8), +20 .. +24 %: they pass with either. The GB200 tray's 4 MiB (and
    the GB300 tray's 4 and 16 MiB, P49f) and Google's B200 board at 8 - 64 MiB are not launch-bound (the floor is
    below the model's time): unexplained."""
    from tests.harness.plan_reference import verdict

    rows = _rows()
    check = [
        r
        for r in rows
        if r.point.source.endswith(("reduce_scatter_ring.out", "all_gather_ring.out")) and MiB <= r.smallest <= 4 * MiB
    ]
    assert len(check) == 6 and not any(r.point.launch_fit for r in check)
    assert all(verdict(r) == "pass" and r.launch_bound and 0.07 <= r.error <= 0.105 for r in check)
    source = 33.7e-6 / 8
    assert all(0.20 <= _floored(r, source) / r.point.published_busbw - 1 <= 0.24 for r in check)
    fit_rows = [r for r in rows if r.point.launch_fit and r.smallest == MiB]
    assert len(fit_rows) == 2 and all(_floored(r, source) / r.point.published_busbw - 1 > 0.25 for r in fit_rows)
    misses = [r for r in rows if verdict(r) == "miss"]
    assert all(r.point.launch == "one-process" for r in misses)
    unexplained = [r for r in misses if not r.launch_bound]
    assert {(r.point.family, r.smallest) for r in unexplained} == {
        ("nvl72", 4 * MiB),  # Azure's GB200 tray and P49f's GB300 tray
        ("nvl72", 16 * MiB),  # the GB300 tray's, slower than its own 8 MiB row
        ("nvlink5_board", 8 * MiB),
        ("nvlink5_board", 32 * MiB),
        ("nvlink5_board", 64 * MiB),
    }
    # the GB300 tray's 1 MiB (P49f) is on the floor, but its host's floor is higher than the fit's: 25.35 us for
    # 4 GPUs (6.3 us each; its 2 MiB took 25.65) against 4 x 4.72 = 18.9 us
    floored = [r for r in misses if r.launch_bound]
    assert [(r.point.family, r.smallest) for r in floored] == [("nvl72", MiB)]
    assert MiB * 1.5 / floored[0].point.published_busbw / 1e3 == pytest.approx(25.35, abs=0.01)


def test_every_other_one_process_figure_with_a_target_keeps_its_verdict_and_the_floor_spread_is_said():
    """Every -g N figure from 1 MiB up that the floor does not set is priced as before; where it sets one below
    1 MiB (no target), Azure's H100 and H200 hosts run faster than the fit's host: their whole -g 8 call takes
    25.6 and 29.9 us at 1 KiB (NVLink SHARP included), the floor 37.8 us. The launch time is per host."""
    rows = [r for r in _rows() if r.point.launch == "one-process"]
    assert len(rows) == 207  # 195 until P49f's two Google tray runs (11 + 1 figures)
    azure = {r.point.source.rsplit("/", 1)[-1]: r for r in rows if r.smallest == 1024 and "Azure" in r.point.source}
    assert round(azure["ND_H100_v5_results.md"].error, 3) == -0.322
    assert round(azure["ND_H200_v5_results.md"].error, 3) == -0.209
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
    assert code == 0 and "one process driving 8 GPUs: its launches in turn set the time, 8 x 4.72 µs" in text
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
