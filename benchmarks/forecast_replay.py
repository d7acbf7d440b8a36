"""The overheating forecast on logs it did not write: a fleet's `nvidia-smi --query-gpu … --format=csv
-l 60` logs from this script's own generator (not gpuvet's simulated node: its own thermal model,
loads and faults; nothing from gpuvet.node is imported), replayed through `gpuvet watch --replay`'s
code path (the same reader, replayer and logbook), file by file.

Each node carries one difficulty real telemetry has:
  steady      training jobs of 1-12 h with idle gaps (the easy case)
  gaps        the log stops for 2-14 h now and then; nvidia-smi restarts with a new column order
  counters    ECC counters reset to zero (driver reloads) and [N/A] / [Not Supported] cells
  skew        the node's clock runs 11 minutes ahead of the others, then NTP steps it back on day 10
              (eleven minutes of timestamps repeat)
  inlet       the whole node's inlet rises 7 °C over three days (cooling loop), then recovers
  maintenance one module's thermal resistance steps down (new paste), another's steps up (re-seat)
  inference   loads never steady: utilisation wandering between 40 and 70 %
  mixed       four H100 and four A100 on one node
On top of the node kinds, what production telemetry has (issue 33), each switchable (--hard;
the default runs each alone, then all together; see ``Hard``):
  jobs        each module its own jobs, each at its own steady power (610-690 W), a step at every job
  drift       the node's inlet wanders several °C over days on top of a ±2.5 °C daily cycle
  lag         a first-order thermal lag of 2-5 minutes after every load change (off: none)
  quant       whole °C as nvidia-smi prints it (off: tenths); power always to 0.01 W
  idle        idle gaps of 5-60 minutes between most jobs (off: back to back)
  inference   node06 an inference node whose load never holds still (off: it trains)
The temperature follows T = inlet + offset + R·P through the lag, and thermal throttling (-15 %
clock and power) starts at the model's slowdown point. Creeping modules gain R linearly from a
random day.

Honest evaluation: the issue-33 model's constants (settling, the common-R fit, the step guards,
the hourly tier) were chosen looking at TUNING_SEEDS 1 and 2 with all difficulties on, and at
telemetry_blind.py's seed 1005 for the hourly tier; the figures that count are those of the
evaluation seeds 911-913 (EVALUATION_SEEDS), never generated before the model was frozen. (Seeds
901-906 evaluated the earlier, peer-referenced model on the generator without --hard.) A tuning
seed given to --seed is marked as such and left out of the pooled figures.

It prints, per seed and pooled: the share of creeping modules warned >= 72 h before their first
10-minute mean at the slowdown point (target >= 90 %), false alarms per 1,000 healthy
module-days (target <= 1), and replay speed in samples/s (target >= 10,000), parsing and the
logbook included: by the wall clock, and by this process's CPU time (what a free core gives; on
a shared machine the wall figure falls with the load average, printed beside it).

    python benchmarks/forecast_replay.py [--seed 911 912 913] [--hard each|all|NAME…] [--nodes 8] [--days 20] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
from scipy.signal import lfilter

from gpuvet.logbook.store import Logbook
from gpuvet.watch.readers import read_file
from gpuvet.watch.replay import ReplayConfig, Replayer, ReplayResult

STEP_S = 60.0
TAU_S = 90.0
DIFFICULTIES = ("steady", "gaps", "counters", "skew", "inlet-rise", "maintenance", "inference", "mixed")  # node kinds
# what production telemetry has (issue 33), each switchable; --hard picks them, the default runs each alone and all
SWITCHES = ("jobs", "drift", "lag", "quant", "idle", "inference")
START = 1_767_225_600.0  # 2026-01-01 00:00 UTC
TUNING_SEEDS = (1, 2)  # the seeds looked at while choosing the forecaster's constants
# never looked at while tuning the issue-33 model (901-906 were the earlier model's evaluation seeds)
EVALUATION_SEEDS = (911, 912, 913)
SKEW_S = 660.0  # the skewed node's clock is 11 minutes ahead ...
NTP_STEP_DAY = 10.0  # ... until NTP steps it back


@dataclass(frozen=True)
class Hard:
    """The difficulties switched on. jobs: each module runs its own jobs, each at its own steady
    power (610-690 W on a 700 W module), stepping at every new job (off: the node's modules share
    one load). drift: the node's inlet wanders several °C over days on top of a ±2.5 °C daily
    cycle (off: ±1.5 °C and a small wander). lag: a first-order lag of 2-5 minutes (off: none).
    quant: whole °C as nvidia-smi prints it (off: tenths). idle: idle gaps of 5-60 minutes between
    most jobs (off: jobs back to back). inference: node06 serves inference, its load never still
    (off: node06 trains like the others)."""

    jobs: bool = False
    drift: bool = False
    lag: bool = False
    quant: bool = False
    idle: bool = False
    inference: bool = False

    @classmethod
    def of(cls, names: list[str]) -> Hard:
        return cls(**{n: True for n in names})

    def label(self) -> str:
        on = [n for n in SWITCHES if getattr(self, n)]
        return "all" if len(on) == len(SWITCHES) else (" + ".join(on) or "none")


@dataclass(frozen=True)
class Model:
    name: str
    tdp_w: float
    idle_w: float
    r_c_per_w: float
    offset_c: float
    slowdown_c: float


H200 = Model("NVIDIA H200", 700, 75, 0.056, 4.0, 89.0)
H100 = Model("NVIDIA H100 80GB HBM3", 700, 70, 0.058, 3.5, 89.0)
A100 = Model("NVIDIA A100-SXM4-80GB", 400, 55, 0.095, 3.0, 89.0)


@dataclass
class Truth:
    module: str
    creeping: bool
    crossing: float | None  # first 10-minute mean at or above slowdown, in the log's (recorded) time


@dataclass
class NodeTrace:
    name: str
    difficulty: str
    path: Path
    truths: list[Truth] = field(default_factory=list)
    rows: int = 0


def loads(rng: np.random.Generator, n: int, inference: bool, idle: bool) -> np.ndarray:
    """Utilisation per minute: jobs (with idle gaps of 5-60 minutes after most, with ``idle``), or
    an inference service that never settles."""
    if inference:
        t = np.arange(n) * STEP_S / 86400.0
        base = 0.55 + 0.12 * np.sin(2 * np.pi * (t + rng.random()))
        wander = lfilter([0.05], [1, -0.95], rng.normal(0, 1, n))
        return np.clip(base + wander, 0.4, 0.7)
    util = np.zeros(n)
    i = 0
    while i < n:
        job = int(rng.uniform(60, 720))
        util[i:i + job] = rng.uniform(0.92, 1.0)
        i += job + (int(rng.uniform(5, 60)) if idle and rng.random() < 0.7 else 0)
    return util


def job_levels(rng: np.random.Generator, util: np.ndarray, model: Model) -> np.ndarray:
    """Each job's own steady power as a share of the module's TDP (610-690 W of 700 W): a new
    level wherever a job starts (utilisation rising from idle, or a level change of the load)."""
    starts = np.flatnonzero(np.diff(np.concatenate([[0.0], util])) != 0)
    level = np.empty(len(util))
    for a, b in zip(starts, np.append(starts[1:], len(util)), strict=True):
        level[a:b] = rng.uniform(610, 690) / 700
    return level


def inlet_trace(rng: np.random.Generator, n: int, rising: bool, drift: bool) -> np.ndarray:
    t = np.arange(n) * STEP_S / 86400.0
    if drift:  # facility water and weather: several °C over days, and ±2.5 °C through the day
        slow = sum(rng.uniform(1.0, 2.5) * np.sin(2 * np.pi * (t / rng.uniform(3, 9) + rng.random())) for _ in range(3))
        inlet = 24.0 + 2.5 * np.sin(2 * np.pi * (t + rng.random())) + slow
    else:
        inlet = 24.0 + 1.5 * np.sin(2 * np.pi * t) + lfilter([0.002], [1, -0.998], rng.normal(0, 1, n)) * 3
    if rising:  # a cooling loop degrading over three days from day 6, fixed on day 12
        inlet += 7.0 * np.clip((t - 6.0) / 3.0, 0, 1) * (t < 12.0)
    return inlet


def module_trace(rng: np.random.Generator, model: Model, util: np.ndarray, inlet: np.ndarray, r: np.ndarray,
                 hard: Hard, level: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(temperature °C as reported, power W, SM clock MHz, throttle bits) per minute. ``level``:
    each job's own power as a share of TDP (``hard.jobs``), else one intensity for the module."""
    if level is None:
        power = model.idle_w + (model.tdp_w - model.idle_w) * rng.uniform(0.8, 1.0) * util ** 0.9
    else:
        power = np.where(util > 0.05, model.tdp_w * level * np.clip(util / 0.96, 0, 1.05) ** 0.5, model.idle_w)
    power *= 1 + rng.normal(0, 0.015, len(util))
    target = inlet + model.offset_c + r * power
    tau = rng.uniform(120, 300) if hard.lag else 1.0
    a = 1 - np.exp(-STEP_S / tau)
    temp = lfilter([a], [1, -(1 - a)], target, zi=[(1 - a) * target[0]])[0]
    hot = temp >= model.slowdown_c
    power = np.where(hot, power * 0.85, power)
    temp = np.where(hot, model.slowdown_c + (temp - model.slowdown_c) * 0.3, temp)
    clock = np.where(hot, 1680.0, 1980.0) * np.where(util > 0.05, 1.0, 0.2)
    throttle = np.where(hot, 0x20, 0)
    shown = temp + rng.normal(0, 0.3, len(temp))
    return (np.round(shown) if hard.quant else np.round(shown, 1)), power, clock, throttle


def crossing_of(recorded: np.ndarray, temp: np.ndarray, slowdown: float) -> float | None:
    n = len(temp) // 10
    means = temp[:n * 10].reshape(n, 10).mean(1)
    hot = np.flatnonzero(means >= slowdown)
    return float(recorded[hot[0] * 10 + 9]) if len(hot) else None


def recorded_times(n: int, difficulty: str) -> np.ndarray:
    """What the node's clock wrote: true time, or 11 minutes ahead until NTP steps it back."""
    times = START + np.arange(n) * STEP_S
    if difficulty == "skew":
        times += SKEW_S * (np.arange(n) * STEP_S < NTP_STEP_DAY * 86400.0)
    return times


def make_node(index: int, difficulty: str, days: float, rng: np.random.Generator, out: Path, hard: Hard) -> NodeTrace:
    n = int(days * 86400 / STEP_S)
    if difficulty == "inference" and not hard.inference:
        difficulty = "steady"
    recorded = recorded_times(n, difficulty)
    node = NodeTrace(f"node{index:02d}", difficulty, out / f"node{index:02d}.csv")
    models = [H100] * 4 + [A100] * 4 if difficulty == "mixed" else [H200] * 8
    inlet = inlet_trace(rng, n, difficulty == "inlet-rise", hard.drift)
    shared = loads(rng, n, difficulty == "inference", hard.idle)  # data-parallel jobs: the modules share the load
    creep = set(rng.choice(8, size=int(rng.integers(1, 3)), replace=False).tolist())
    columns: list[dict[str, np.ndarray]] = []
    day = np.arange(n) * STEP_S / 86400.0
    for g, model in enumerate(models):
        own = hard.jobs and difficulty != "inference"
        base = loads(rng, n, False, hard.idle) if own else shared  # its own jobs, or the node's shared load
        util = np.clip(base + rng.normal(0, 0.01, n), 0, 1) if difficulty != "inference" else \
            np.clip(shared + rng.normal(0, 0.05, n), 0.3, 0.8)
        r = np.full(n, model.r_c_per_w * rng.uniform(0.95, 1.05))
        if g in creep:
            start = rng.uniform(1.0, 6.0)
            # reach slowdown at full load somewhere between day 8 and the end
            need = (model.slowdown_c - 30.0 - model.offset_c) / (0.95 * model.tdp_w) - r[0]
            rate = need / (rng.uniform(max(7.0, start + 4.0), days - 1.0) - start)
            r += np.clip(day - start, 0, None) * rate
        if difficulty == "maintenance" and g == 0 and g not in creep:
            r -= 0.008 * (day >= 9.0)  # new thermal paste
        if difficulty == "maintenance" and g == 1 and g not in creep:
            r += 0.006 * (day >= 12.5)  # re-seated, slightly worse, then stable
        temp, power, clock, throttle = module_trace(rng, model, util, inlet, r, hard,
                                                    job_levels(rng, base, model) if own else None)
        node.truths.append(Truth(f"{node.name}/gpu{g}", g in creep, crossing_of(recorded, temp, model.slowdown_c)))
        columns.append({"temp": temp, "power": power, "util": util, "clock": clock, "throttle": throttle})
    write_csv(node, models, recorded, columns, rng)
    return node


HEADER_A = ["timestamp", "index", "name", "uuid", "temperature.gpu", "power.draw [W]", "utilization.gpu [%]",
            "clocks.current.sm [MHz]", "clocks_event_reasons.active", "ecc.errors.corrected.volatile.total"]
HEADER_B = [HEADER_A[i] for i in (0, 1, 3, 2, 5, 4, 6, 8, 7, 9)]  # after a restart: another column order


def _ecc(rng: np.random.Generator, n: int, resets: bool) -> np.ndarray:
    """A cumulative corrected-error counter; a driver reload every second day sets it to zero."""
    total = np.cumsum(rng.random(n) < 0.01)
    if not resets:
        return total
    k = np.arange(n)
    start = np.where(k % 2880 == 1440, k, 0)
    start = np.maximum.accumulate(start)
    before = np.where(start > 0, total[np.maximum(start - 1, 0)], 0)
    return total - before


def _cells(node: NodeTrace, g: int, model: Model, stamps: list[str], c: dict[str, np.ndarray],
           rng: np.random.Generator) -> dict[str, list[str]]:
    """One module's cells, column by column, as nvidia-smi prints them."""
    n = len(stamps)
    na = (rng.random(n) < 0.002) if node.difficulty == "counters" else np.zeros(n, dtype=bool)
    ecc = _ecc(rng, n, node.difficulty == "counters")
    return {
        "timestamp": stamps, "index": [str(g)] * n, "name": [model.name] * n, "uuid": [f"GPU-{node.name}-{g:04d}"] * n,
        "temperature.gpu": ["[N/A]" if x else f"{v:g}" for v, x in zip(c["temp"], na, strict=True)],
        "power.draw [W]": [f"{v:.2f} W" for v in c["power"]],
        "utilization.gpu [%]": [f"{100 * v:.0f} %" for v in c["util"]],
        "clocks.current.sm [MHz]": [f"{v:.0f} MHz" for v in c["clock"]],
        "clocks_event_reasons.active": [f"0x{int(v):016x}" for v in c["throttle"]],
        "ecc.errors.corrected.volatile.total": ["[Not Supported]" if x else str(v) for v, x in zip(ecc, na, strict=True)],
    }


def write_csv(node: NodeTrace, models: list[Model], recorded: np.ndarray, cols: list[dict[str, np.ndarray]],
              rng: np.random.Generator) -> None:
    """nvidia-smi's layout: a header with units, values with units, [N/A] where a read failed."""
    n = len(recorded)
    present = np.ones(n, dtype=bool)
    if node.difficulty == "gaps":
        for start in rng.uniform(0, n - 900, 5):
            present[int(start):int(start + rng.uniform(120, 840))] = False
    stamps = [time.strftime("%Y/%m/%d %H:%M:%S", time.gmtime(t)) + f".{k % 1000:03d}" for k, t in enumerate(recorded)]
    cells = [_cells(node, g, m, stamps, cols[g], rng) for g, m in enumerate(models)]
    layouts = {}
    for name, header in (("a", HEADER_A), ("b", HEADER_B)):
        layouts[name] = [[", ".join(row) for row in zip(*(c[h] for h in header), strict=True)] for c in cells]
        if node.difficulty != "gaps":
            break
    lines = [", ".join(HEADER_A)]
    which = "a"
    for k in range(n):
        if not present[k]:
            if k + 1 < n and present[k + 1]:  # nvidia-smi comes back with another column order
                which = "b" if which == "a" else "a"
                lines.append(", ".join(HEADER_A if which == "a" else HEADER_B))
            continue
        lines += [per_module[k] for per_module in layouts[which]]
        node.rows += len(models)
    node.path.write_text("\n".join(lines) + "\n")


@dataclass
class Score:
    seed: int
    reached: int = 0
    warned: int = 0
    not_reached: int = 0
    healthy_days: float = 0.0
    false_alarms: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)
    leads_h: list[float] = field(default_factory=list)
    samples: int = 0
    wall_s: float = 0.0
    cpu_s: float = 0.0  # this process's CPU time over the same span: what one free core would take
    parse_s: float = 0.0
    load: list[float] = field(default_factory=list)  # the machine's 1-minute load average before and after
    resets: list[str] = field(default_factory=list)
    lacking: list[str] = field(default_factory=list)
    hard: str = "none"

    @property
    def share(self) -> float:
        return self.warned / self.reached if self.reached else 0.0

    @property
    def per_1000(self) -> float:
        return 1000 * len(self.false_alarms) / self.healthy_days if self.healthy_days else 0.0

    @property
    def rate(self) -> float:
        return self.samples / self.wall_s if self.wall_s else 0.0

    @property
    def cpu_rate(self) -> float:
        return self.samples / self.cpu_s if self.cpu_s else 0.0


def evaluate(score: Score, nodes: list[NodeTrace], result: ReplayResult, days: float) -> None:
    warnings: dict[str, float] = {}
    for e in result.events:
        if e.kind == "overheat_forecast" and e.module and e.module not in warnings:
            warnings[e.module] = e.time
    for node in nodes:
        for tr in node.truths:
            w = warnings.get(tr.module)
            if not tr.creeping:
                score.healthy_days += days
                if w is not None:
                    score.false_alarms.append(f"{tr.module} ({node.difficulty}) at day {(w - START) / 86400:.1f}")
            elif tr.crossing is None:
                score.not_reached += 1
            elif w is not None and tr.crossing - w >= 72 * 3600:
                score.warned += 1
                score.leads_h.append((tr.crossing - w) / 3600)
            else:
                score.missed.append(f"{tr.module} ({node.difficulty}, " + (
                    f"warned {(tr.crossing - w) / 3600:.0f} h ahead)" if w is not None else "not warned)"))
    score.reached = score.warned + len(score.missed)
    score.resets = [f"{e.module} day {(e.time - START) / 86400:.1f}" for e in result.events if e.kind == "forecast_reset"]
    score.lacking = [f"{f.module}: {f.reason}" for f in result.forecast if f.state == "insufficient"]


def run_seed(seed: int, nodes_n: int, days: float, keep: Path | None, again: Path | None,
             hard: Hard = Hard()) -> tuple[Score, list[NodeTrace]]:
    """Generate (or reload) one seed's logs and replay them, node file by node file."""
    rng = np.random.default_rng(seed)
    with tempfile.TemporaryDirectory() as tmp:
        tag = f"seed{seed}" if hard == Hard() else f"seed{seed}-{hard.label().replace(' + ', '-')}"
        out = keep / tag if keep else Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        if again:
            saved = json.loads((again / tag / "truth.json").read_text())
            nodes = [NodeTrace(n["name"], n["difficulty"], Path(n["path"]), [Truth(**t) for t in n["truths"]], n["rows"])
                     for n in saved]
        else:
            nodes = [make_node(i, DIFFICULTIES[i % len(DIFFICULTIES)], days, rng, out, hard) for i in range(nodes_n)]
            (out / "truth.json").write_text(json.dumps([{**asdict(n), "path": str(n.path)} for n in nodes]))
        book = Logbook(Path(tmp) / "logbook.db")
        replayer = Replayer(ReplayConfig(), book)
        score = Score(seed, load=[os.getloadavg()[0]], hard=hard.label())
        t0, c0 = time.perf_counter(), time.process_time()
        for node in nodes:
            p0 = time.perf_counter()
            rec = read_file(node.path, 60.0)
            score.parse_s += time.perf_counter() - p0
            replayer.feed(rec)
        result = replayer.finish()
        score.wall_s, score.cpu_s = time.perf_counter() - t0, time.process_time() - c0
        score.load.append(os.getloadavg()[0])
        book.close()
    score.samples = sum(n.rows for n in nodes)
    evaluate(score, nodes, result, days)
    return score, nodes


def pooled(scores: list[Score]) -> Score:
    out = Score(-1, hard=scores[0].hard if scores else "none")
    for s in scores:
        out.reached += s.reached
        out.warned += s.warned
        out.not_reached += s.not_reached
        out.healthy_days += s.healthy_days
        out.false_alarms += s.false_alarms
        out.missed += s.missed
        out.leads_h += s.leads_h
        out.samples += s.samples
        out.wall_s += s.wall_s
        out.cpu_s += s.cpu_s
        out.load += s.load
        out.parse_s += s.parse_s
        out.resets += s.resets
    return out


def row(label: str, s: Score) -> str:
    lead = f"{statistics.median(s.leads_h):.0f}" if s.leads_h else "-"
    return (f"| {label} | {s.reached} (+{s.not_reached}) | {s.warned} | {100 * s.share:.1f} % | {lead} | "
            f"{len(s.false_alarms)} / {s.healthy_days:,.0f} | {s.per_1000:.2f} | {s.samples:,} | {s.rate:,.0f} | "
            f"{s.cpu_rate:,.0f} | {max(s.load, default=0):.1f} |")


def report(scores: list[Score], args: argparse.Namespace) -> None:
    configs = list(dict.fromkeys(s.hard for s in scores))
    if len(configs) > 1:
        print("per difficulty (each alone on top of the node kinds, then all together), pooled over the evaluation "
              "seeds:\n")
        print("| difficulty | creeping reached slowdown (+ still below) | warned >= 72 h ahead | share (target >= 90 %) | "
              "median lead h | false alarms / healthy module-days | per 1,000 (target <= 1) | trend resets | samples | "
              "samples/s wall | samples/s CPU |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for c in configs:
            ev = [s for s in scores if s.hard == c and s.seed not in TUNING_SEEDS] or [s for s in scores if s.hard == c]
            p = pooled(ev)
            lead = f"{statistics.median(p.leads_h):.0f}" if p.leads_h else "-"
            print(f"| {c} | {p.reached} (+{p.not_reached}) | {p.warned} | {100 * p.share:.1f} % | {lead} | "
                  f"{len(p.false_alarms)} / {p.healthy_days:,.0f} | {p.per_1000:.2f} | {len(p.resets)} | {p.samples:,} | "
                  f"{p.rate:,.0f} | {p.cpu_rate:,.0f} |")
        print()
    scores = [s for s in scores if s.hard == configs[-1]]
    print(f"difficulties of the rows below: {configs[-1]}")
    evaluation = [s for s in scores if s.seed not in TUNING_SEEDS]
    print(f"independently generated nvidia-smi CSV logs: {args.nodes} nodes x 8 modules, {args.days:g} days at 1/min; "
          f"difficulties: " + ", ".join(f"node{i:02d}={DIFFICULTIES[i % len(DIFFICULTIES)]}" for i in range(args.nodes)))
    print(f"evaluation seeds: {' '.join(str(s.seed) for s in evaluation) or 'none'}; tuning seeds (the forecaster was "
          f"tuned on these, never on an evaluation seed): {' '.join(map(str, TUNING_SEEDS))}")
    print()
    print("| seed | creeping reached slowdown (+ still below) | warned >= 72 h ahead | share (target >= 90 %) | "
          "median lead h | false alarms / healthy module-days | per 1,000 (target <= 1) | samples | "
          "samples/s wall (target >= 10,000) | samples/s CPU | load avg |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for s in scores:
        print(row(f"{s.seed}" + (" (tuning)" if s.seed in TUNING_SEEDS else ""), s))
    if evaluation:
        print(row("**pooled evaluation**", pooled(evaluation)))
    print()
    for s in scores:
        for m in s.missed:
            print(f"seed {s.seed} missed: {m}")
        for f in s.false_alarms:
            print(f"seed {s.seed} false alarm: {f}")
        print(f"seed {s.seed} trend resets (step changes): {len(s.resets)}: {', '.join(s.resets)}")
        print(f"seed {s.seed} modules without a forecast: {len(s.lacking)}" + "".join(f"\n  {x}" for x in s.lacking[:8]))
        print(f"seed {s.seed} replay: parse {s.parse_s:.1f} s, detectors + forecast + logbook {s.wall_s - s.parse_s:.1f} s "
              f"of {s.wall_s:.1f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, nargs="+", default=list(EVALUATION_SEEDS),
                    help=f"seeds to generate and score (default the evaluation seeds {EVALUATION_SEEDS}; "
                         f"{TUNING_SEEDS} are the tuning seeds)")
    ap.add_argument("--nodes", type=int, default=8)
    ap.add_argument("--days", type=float, default=20.0)
    ap.add_argument("--keep", type=Path, help="write the logs here (DIR/seedN/) and keep them, with truth.json")
    ap.add_argument("--again", type=Path, help="replay the logs kept in this folder (DIR/seedN/) instead of generating")
    ap.add_argument("--hard", nargs="*", choices=[*SWITCHES, "all", "each"], default=["each"],
                    help="difficulties switched on: names, 'all', or 'each' (the default: each alone, then all)")
    args = ap.parse_args()
    if args.days < 12:
        ap.error("--days must be at least 12 (creeping modules reach slowdown from day 8; the inlet recovers on day 12)")
    if "each" in args.hard:
        configs = [Hard.of([name]) for name in SWITCHES] + [Hard.of(list(SWITCHES))]
    else:
        configs = [Hard.of(list(SWITCHES) if "all" in args.hard else args.hard)]
    scores = []
    for hard in configs:
        for seed in args.seed:
            t0 = time.perf_counter()
            score, _ = run_seed(seed, args.nodes, args.days, args.keep, args.again, hard)
            print(f"seed {seed} ({hard.label()}): generated and replayed in {time.perf_counter() - t0:.0f} s: "
                  f"{score.warned}/{score.reached} warned >= 72 h, {len(score.false_alarms)} false alarms, "
                  f"{len(score.resets)} resets", flush=True)
            for line in score.missed + score.false_alarms:
                print(f"  {line}", flush=True)
            scores.append(score)
    report(scores, args)


if __name__ == "__main__":
    main()
