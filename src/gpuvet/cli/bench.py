"""`gpuvet bench NAME`: one command per benchmark, the same options where they mean the same."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from gpuvet.cli import exits, term
from gpuvet.cli.checks import comma_list, floats, ints, output_file, renamed
from gpuvet.cli.common import NodeOpt, SimOpt, chosen_node
from gpuvet.cli.jsonout import write_json

if TYPE_CHECKING:
    from gpuvet.bench.efficiency import Curve, EfficiencyOptions

MAX_SIDE = 131_072  # a GEMM side: 2^17 squared bf16 is 32 GiB per matrix, above any module's share
MAX_BYTES = 2**40  # one TiB per buffer

bench_app = typer.Typer(
    short_help="Benchmarks that measure: gemm, membw, copy, collective, model, efficiency.",
    help="Benchmarks that measure: compute (gemm), device memory (membw), every copy channel (copy), "
    "collectives (collective), training throughput (model). Each figure comes with its unit, % of peak, "
    "median and spread, and the telemetry sampled while it ran. On a machine without GPUs they run on the "
    "CPU; with --node on a simulated node (labelled simulated).",
    no_args_is_help=True,
)

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON for scripts instead of tables.")]
ModulesOpt = Annotated[str | None, typer.Option(
    "--modules", help="Comma-separated module ids (default: all), e.g. gpu0,gpu3.", callback=comma_list)]
QuickOpt = Annotated[bool, typer.Option(
    "--quick", help="Fewer, shorter samples: a smoke test, not a figure to quote.")]


def _split(text: str | None) -> tuple[str, ...] | None:
    return tuple(x.strip() for x in text.split(",") if x.strip()) if text else None


def _run(name: str, sim: str | None, as_json: bool, quick: bool, **options: object) -> None:
    from gpuvet.backends.select import open_backend
    from gpuvet.bench.runner import options_for, run_benchmark
    from gpuvet.bench.timing import QUICK, TimingPlan
    from gpuvet.cli import render_bench

    opts = options_for(name, **options)
    backend = open_backend(sim=sim)
    try:
        with term.progress(f"bench {name}") as progress:
            report = run_benchmark(name, backend, opts, plan=QUICK if quick else TimingPlan(), progress=progress)
    finally:
        backend.close()
    if os.environ.get("RANK", "0") != "0" and options.get("torchrun"):
        return  # under torchrun every rank measures; rank 0 reports
    with exits.verdict(0 if report.ok else 1):
        if as_json:
            sys.stdout.write(render_bench.to_json(report) + "\n")
        else:
            render_bench.report(term.console(), report)


@bench_app.command(short_help="Matrix products per dtype: TFLOPS and % of peak; cross-module bit check.")
def gemm(node_ref: NodeOpt = None, sim: SimOpt = None, modules: ModulesOpt = None,
         dtypes: Annotated[str | None, typer.Option(
             "--dtypes", help="Comma-separated: fp64,fp32,tf32,fp16,bf16,fp8 (default: all; unsupported ones are "
             "skipped with the reason).", callback=comma_list)] = None,
         size: Annotated[int | None, typer.Option("--size", help="Side n of the n×n product (default fills the "
                                                  "device: 8192/16384 on GPUs, ~50 ms per product on a CPU).",
                                                  callback=ints(1, MAX_SIDE))] = None,
         check: Annotated[bool, typer.Option("--check/--no-check", help="Compare a seeded product across modules "
                                             "and with a float64 reference (silent data corruption).")] = True,
         quick: QuickOpt = False, as_json: JsonOpt = False) -> None:
    """Matrix products per dtype on every module: TFLOPS and % of the module's dense peak.

    Exit 1 when a module computes different bits from its peers or misses the float64 reference.
    """
    sim = chosen_node(node_ref, sim)
    _run("gemm", sim, as_json, quick, modules=_split(modules), dtypes=_split(dtypes), size=size, check=check)


@bench_app.command(short_help="Device memory bandwidth (STREAM copy and triad), % of peak.")
def membw(node_ref: NodeOpt = None, sim: SimOpt = None, modules: ModulesOpt = None,
          kinds: Annotated[str | None, typer.Option("--kinds", help="copy,triad (default both).",
                                                    callback=comma_list)] = None,
          size_bytes: Annotated[int | None, typer.Option("--size-bytes", help="Bytes per array (default 2 GiB on "
                                                         "GPUs, 256 MiB on a CPU).", callback=ints(1, MAX_BYTES))] = None,
          quick: QuickOpt = False, as_json: JsonOpt = False) -> None:
    """Device memory bandwidth, STREAM copy and triad (bytes read + written), % of peak."""
    sim = chosen_node(node_ref, sim)
    _run("membw", sim, as_json, quick, modules=_split(modules), kinds=_split(kinds), size_bytes=size_bytes)


@bench_app.command(short_help="Every copy channel, per-pair matrices, contention ratios.")
def copy(node_ref: NodeOpt = None, sim: SimOpt = None, modules: ModulesOpt = None,
         size_bytes: Annotated[int | None, typer.Option("--size-bytes", help="Bytes per transfer (default 256 MiB; "
                                                        "64 MiB on a CPU).", callback=ints(1, MAX_BYTES))] = None,
         tests: Annotated[str | None, typer.Option(
             "--tests", help="Comma-separated: h2d,d2h,pageable,p2p,concurrent (default all).",
             callback=comma_list)] = None,
         quick: QuickOpt = False, as_json: JsonOpt = False) -> None:
    """Every copy channel: host↔module (pinned, pageable), module→module one way and both ways
    per pair, and concurrent sets (all to host, host to all, every module to the one n/2 away)
    with their contention ratio: aggregate ÷ sum of the same transfers alone. GB = 1e9 bytes.
    """
    sim = chosen_node(node_ref, sim)
    _run("copy", sim, as_json, quick, modules=_split(modules), size_bytes=size_bytes, tests=_split(tests))


@bench_app.command(short_help="Collectives over a size sweep: algbw/busbw, checked, alpha-beta fit.")
def collective(node_ref: NodeOpt = None, sim: SimOpt = None, modules: ModulesOpt = None,
               ops: Annotated[str | None, typer.Option(
                   "--ops", help="Any of all_reduce, all_gather, reduce_scatter, all_to_all, broadcast and "
                   "reduce, comma-separated (default: all but reduce).", callback=comma_list)] = None,
               min_bytes: Annotated[int | None, typer.Option("--min-bytes", help="Smallest size (nccl-tests -b; "
                                                             "default 8).", callback=ints(1, MAX_BYTES))] = None,
               max_bytes: Annotated[int | None, typer.Option("--max-bytes", help="Largest size (nccl-tests -e; "
                                                             "default 256 MiB on GPUs, 1 MiB on a CPU).",
                                                             callback=ints(1, MAX_BYTES))] = None,
               factor: Annotated[int | None, typer.Option("--factor", help="Size multiplier (nccl-tests -f; "
                                                          "default 2).", callback=ints(2, 1024))] = None,
               dtype: Annotated[str | None, typer.Option("--dtype", help="Element type: fp32 (default), fp16 or "
                                                                      "bf16.")] = None,
               ranks: Annotated[int | None, typer.Option("--ranks", metavar="COUNT", help="How many ranks: "
                                                         "processes on a CPU-only machine (default 2), else one "
                                                         "per module on the first COUNT modules (default all).",
                                                         callback=ints(1, 1024))]
               = None,
               nprocs: Annotated[int | None, typer.Option("--nprocs", hidden=True, help="Old name of --ranks.",
                                                          callback=ints(1, 1024))] = None,
               torchrun: Annotated[bool, typer.Option(
                   "--torchrun", help="Be one rank of a job torchrun started (several nodes): "
                   "torchrun --nnodes=N --nproc-per-node=8 --rdzv-backend=c10d --rdzv-endpoint=HOST:29500 "
                   "-m gpuvet bench collective --torchrun --json")] = False,
               quick: QuickOpt = False, as_json: JsonOpt = False) -> None:
    """Collectives over a size sweep: time, algbw and busbw (nccl-tests' conventions), every result
    checked, and a fit of t = α + S/β per collective (latency and bandwidth apart).

    One process per module, started by gpuvet (NCCL on GPUs, gloo on CPU). Exit 1 on a wrong result.
    """
    sim = chosen_node(node_ref, sim)
    _run("collective", sim, as_json, quick, modules=_split(modules), ops=_split(ops), min_bytes=min_bytes,
         max_bytes=max_bytes, factor=factor, dtype=dtype,
         nprocs=renamed(ranks, nprocs, "--nprocs", "--ranks"), torchrun=torchrun or None)


@bench_app.command(short_help="Training throughput: ResNet-50 images/s, GPT tokens/s and MFU.")
def model(node_ref: NodeOpt = None, sim: SimOpt = None, modules: ModulesOpt = None,
          models: Annotated[str | None, typer.Option("--models", help="resnet50,gpt (default both).",
                                                     callback=comma_list)] = None,
          batch: Annotated[int | None, typer.Option("--batch", help="Per module (default 256 images / 8 sequences "
                                                    "on GPUs; 4 / 2 on a CPU).", callback=ints(1, 1_000_000))] = None,
          image_size: Annotated[int | None, typer.Option("--image-size", help="ResNet-50 input side "
                                                         "(default 224).", callback=ints(32, 8192))] = None,
          seq_len: Annotated[int | None, typer.Option("--seq-len", help="GPT sequence length.",
                                                     callback=ints(1, 1_000_000))] = None,
          d_model: Annotated[int | None, typer.Option("--d-model", help="GPT width.", callback=ints(1, 1_000_000))] = None,
          layers: Annotated[int | None, typer.Option("--layers", help="GPT blocks.", callback=ints(1, 10_000))] = None,
          amp: Annotated[bool | None, typer.Option("--amp/--no-amp", help="bf16 autocast (default: on for GPUs, "
                                                   "off on a CPU).")] = None,
          quick: QuickOpt = False, as_json: JsonOpt = False) -> None:
    """Training throughput on synthetic data: ResNet-50 images/s and GPT-style tokens/s with MFU."""
    sim = chosen_node(node_ref, sim)
    _run("model", sim, as_json, quick, modules=_split(modules), models=_split(models), batch=batch,
         image_size=image_size, seq_len=seq_len, d_model=d_model, layers=layers, amp=amp)


def _restore_interrupted_sweep(consent: bool) -> tuple[list[str], bool]:
    """An --apply sweep that was killed left its journal: put the originals back only with consent
    (--apply or --restore); otherwise say what is pending. The messages (written to stderr) and
    True when no journal is left."""
    from gpuvet.backends.settings_journal import recover_stale

    messages, done = recover_stale(apply=consent)
    from gpuvet.cli.literal import literal

    for message in messages:
        sys.stderr.write(f"gpuvet: {literal(message)}\n")
    return messages, done


def _restore_report(messages: list[str], done: bool, as_json: bool) -> None:
    """What --restore did: with nothing journalled it says so (it printed nothing, and --json an
    empty stdout); with --json one object, whatever happened."""
    from gpuvet.backends.settings_journal import journal_path
    from gpuvet.cli.literal import literal

    nothing = done and not messages
    if nothing:
        messages = [f"nothing to restore: no interrupted --apply sweep left power limits changed (no journal at "
                    f"{journal_path()})"]
    if as_json:
        write_json({"nothing_to_restore": nothing, "journal_left": not done, "journal": str(journal_path()),
                    "messages": messages}, indent=1)
    elif nothing:
        sys.stderr.write(f"gpuvet: {literal(messages[0])}\n")  # where the restore's own messages go


@bench_app.command(short_help="TFLOPS per watt across power caps, and the knee.")
def efficiency(node_ref: NodeOpt = None, sim: SimOpt = None, modules: ModulesOpt = None,
               caps: Annotated[str | None, typer.Option("--caps", help="Power caps in watts: from:to:step "
                                                        "(300:700:50) or a list (default: the allowed range, 50 W "
                                                        "steps).")] = None,
               apply: Annotated[bool, typer.Option("--apply", help="Really change power limits on this machine "
                                                   "(root). The originals are journalled first and restored after, "
                                                   "on error, on Ctrl-C; if gpuvet was killed, by the next run "
                                                   "with --apply or --restore.")]
               = False,
               restore: Annotated[bool, typer.Option("--restore", help="Only put back the power limits an interrupted "
                                                     "--apply sweep left changed (from its journal), then stop.")]
               = False,
               force: Annotated[bool, typer.Option("--force", help="Sweep even modules other processes use.")] = False,
               fraction: Annotated[float, typer.Option("--fraction", help="Knee: where an extra watt buys less than "
                                                       "this share of the average TFLOPS per watt (0 to 1).",
                                                       callback=floats(0, 1, lo_open=True, hi_open=True))] = 0.5,
               size: Annotated[int | None, typer.Option("--size", help="GEMM side (default 8192).",
                                                            callback=ints(1, MAX_SIDE))] = None,
               report: Annotated[Path | None, typer.Option("--report", help="Write the curves as a self-contained "
                                                           "HTML page with plots.", callback=output_file)] = None,
               quick: QuickOpt = False, as_json: JsonOpt = False) -> None:
    """GEMM throughput, power (from the energy counter over each run) and temperature at each power
    cap; the TFLOPS-per-watt curve and its knee. A simulated node sweeps its model; a real one only
    with --apply, and is always put back."""
    from gpuvet.bench.efficiency import EfficiencyOptions, parse_caps

    opts = EfficiencyOptions(_split(modules), parse_caps(caps) if caps is not None else None, apply, force, fraction,
                             size=size)
    messages, done = _restore_interrupted_sweep(apply or restore)
    if restore:
        _restore_report(messages, done, as_json)
        if not done:
            raise typer.Exit(1)
        return
    curves, simulated = _sweep(chosen_node(node_ref, sim), opts, quick)
    data = _efficiency_data(curves, simulated)
    if report:
        from gpuvet.files import write_atomic
        from gpuvet.report.html import efficiency_page

        write_atomic(report, efficiency_page(data), where="--report")
    if as_json:
        write_json(data, indent=1)
        return
    _efficiency_text(curves, simulated, apply)


def _sweep(sim: str | None, opts: EfficiencyOptions, quick: bool) -> tuple[list[Curve], bool]:
    """The power-cap sweep on the chosen node; (curves, simulated)."""
    from gpuvet.backends.select import open_backend
    from gpuvet.bench.context import BenchContext
    from gpuvet.bench.efficiency import run
    from gpuvet.bench.timing import QUICK, TimingPlan

    backend = open_backend(sim=sim)
    try:
        engine = backend.engine()
        try:
            control = backend.power_control(engine)
            with term.progress("bench efficiency") as progress:
                curves = run(BenchContext(engine, QUICK if quick else TimingPlan(budget_s=1.0), progress), control,
                             opts)
        finally:
            engine.close()
    finally:
        backend.close()
    return curves, backend.simulated


def _efficiency_data(curves: list[Curve], simulated: bool) -> dict[str, object]:
    knees = {c.module: c.knee_w for c in curves}
    found = sorted(k for k in knees.values() if k is not None)
    return {"simulated": simulated, "knee_w": found[len(found) // 2] if found else None, "knees": knees,
            "points": [vars(p) for c in curves for p in c.points],
            "modules": [{"module": c.module, "original_cap_w": c.original_cap_w, "knee_w": c.knee_w, "notes": c.notes}
                        for c in curves]}


def _efficiency_text(curves: list[Curve], simulated: bool, applied: bool) -> None:
    from rich.text import Text

    console = term.console()
    for c in curves:
        t = term.table(f"{c.module}: performance per watt" + (" SIMULATED" if simulated else ""))
        for col in ("cap", "TFLOPS", "power", "TFLOPS/W", "temperature"):
            term.column(t, col, right=True, key=col == "cap")
        for p in c.points:
            t.add_row(term.sig(p.cap_w, "W"), term.sig(p.tflops), term.sig(p.power_w, "W"), term.sig(p.tflops_per_w),
                      term.sig(p.temp_c, "°C") if p.temp_c is not None else "")
        console.print(t)
        console.print(Text(f"knee: {term.sig(c.knee_w, 'W')}" if c.knee_w else "knee: not within the swept caps"))
        for note in c.notes:
            console.print(Text(note, style="dim"))
    if simulated or applied:
        console.print(Text("power limits put back to " + ", ".join(f"{c.module} {term.sig(c.original_cap_w, 'W')}"
                                                                   for c in curves), style="dim"))
