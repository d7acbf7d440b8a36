"""The overheating forecast on logs it did not write: a fleet's `nvidia-smi --query-gpu … --format=csv
-l 60` logs from this script's own generator (not gpuvet's simulated node: its own thermal model,
loads and faults), replayed through `gpuvet watch --replay`'s code path, file by file.

Each node carries one difficulty real telemetry has:
  steady      training jobs of 1-12 h with idle gaps (the easy case)
  gaps        the log stops for 2-14 h now and then; nvidia-smi restarts with a new column order
  counters    ECC counters reset to zero (driver reloads) and [N/A] cells
  skew        the node's clock is 11 minutes ahead of the others
  inlet       the whole node's inlet rises 7 °C over three days (cooling loop), then recovers
  maintenance one module's thermal resistance steps down (new paste), another's steps up (re-seat)
  inference   loads never steady: utilisation wandering between 40 and 70 %
  mixed       four H100 and four A100 on one node
The temperature follows T = inlet + offset + R·P through a first-order lag (tau 90 s), is
reported in whole degrees, and thermal throttling (-15 % clock and power) starts at the
model's slowdown point. Creeping modules gain R linearly from a random day.

It prints the share of creeping modules warned >= 72 h before their first 10-minute mean at
the slowdown point (target >= 90 %), false alarms per 1,000 healthy module-days (target <= 1),
and replay speed in samples/s (target >= 10,000), parsing included.

    python benchmarks/forecast_replay.py [--nodes 8] [--days 20] [--seed 1] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
from scipy.signal import lfilter

from gpuvet.logbook.store import Logbook
from gpuvet.watch.readers import read_file
from gpuvet.watch.replay import ReplayConfig, Replayer

STEP_S = 60.0
TAU_S = 90.0
DIFFICULTIES = ("steady", "gaps", "counters", "skew", "inlet", "maintenance", "inference", "mixed")
START = 1_767_225_600.0  # 2026-01-01 00:00 UTC


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
    crossing: float | None  # first 10-minute mean at or above slowdown (recorded time)


@dataclass
class NodeTrace:
    name: str
    difficulty: str
    path: Path
    truths: list[Truth] = field(default_factory=list)
    rows: int = 0


def loads(rng: np.random.Generator, n: int, inference: bool) -> np.ndarray:
    """Utilisation per minute: jobs with idle gaps, or an inference service that never settles."""
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
        i += job + int(rng.choice([0, 0, rng.uniform(5, 180)]))
    return util


def inlet_trace(rng: np.random.Generator, n: int, rising: bool) -> np.ndarray:
    t = np.arange(n) * STEP_S / 86400.0
    inlet = 24.0 + 1.5 * np.sin(2 * np.pi * t) + lfilter([0.002], [1, -0.998], rng.normal(0, 1, n)) * 3
    if rising:  # a cooling loop degrading over three days from day 6, fixed on day 12
        inlet += 7.0 * np.clip((t - 6.0) / 3.0, 0, 1) * (t < 12.0)
    return inlet


def module_trace(rng: np.random.Generator, model: Model, util: np.ndarray, inlet: np.ndarray, r: np.ndarray,
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(temperature °C as reported, power W, SM clock MHz, throttle bits) per minute."""
    intensity = rng.uniform(0.8, 1.0)
    power = model.idle_w + (model.tdp_w - model.idle_w) * intensity * util ** 0.9
    power *= 1 + rng.normal(0, 0.015, len(util))
    target = inlet + model.offset_c + r * power
    a = 1 - np.exp(-STEP_S / TAU_S)
    temp = lfilter([a], [1, -(1 - a)], target, zi=[(1 - a) * target[0]])[0]
    hot = temp >= model.slowdown_c
    power = np.where(hot, power * 0.85, power)
    temp = np.where(hot, model.slowdown_c + (temp - model.slowdown_c) * 0.3, temp)
    clock = np.where(hot, 1680.0, 1980.0) * np.where(util > 0.05, 1.0, 0.2)
    throttle = np.where(hot, 0x20, 0)
    return np.round(temp + rng.normal(0, 0.3, len(temp))), power, clock, throttle


def crossing_of(times: np.ndarray, temp: np.ndarray, slowdown: float) -> float | None:
    n = len(temp) // 10
    means = temp[:n * 10].reshape(n, 10).mean(1)
    hot = np.flatnonzero(means >= slowdown)
    return float(times[hot[0] * 10 + 9]) if len(hot) else None


def make_node(index: int, difficulty: str, days: float, rng: np.random.Generator, out: Path) -> NodeTrace:
    n = int(days * 86400 / STEP_S)
    times = START + np.arange(n) * STEP_S
    node = NodeTrace(f"node{index:02d}", difficulty, out / f"node{index:02d}.csv")
    models = [H100] * 4 + [A100] * 4 if difficulty == "mixed" else [H200] * 8
    inlet = inlet_trace(rng, n, difficulty == "inlet")
    shared = loads(rng, n, difficulty == "inference")  # data-parallel jobs: the modules share the load
    creep = set(rng.choice(8, size=int(rng.integers(1, 3)), replace=False).tolist())
    columns: list[dict[str, np.ndarray]] = []
    for g, model in enumerate(models):
        util = np.clip(shared + rng.normal(0, 0.01, n), 0, 1) if difficulty != "inference" else \
            np.clip(shared + rng.normal(0, 0.05, n), 0.3, 0.8)
        r = np.full(n, model.r_c_per_w * rng.uniform(0.95, 1.05))
        day = np.arange(n) * STEP_S / 86400.0
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
        temp, power, clock, throttle = module_trace(rng, model, util, inlet, r)
        truth = Truth(f"{node.name}/gpu{g}", g in creep, crossing_of(times, temp, model.slowdown_c))
        node.truths.append(truth)
        columns.append({"temp": temp, "power": power, "util": util, "clock": clock, "throttle": throttle})
    write_csv(node, models, times, columns, rng)
    return node


def write_csv(node: NodeTrace, models: list[Model], times: np.ndarray, cols: list[dict[str, np.ndarray]],
              rng: np.random.Generator) -> None:
    """nvidia-smi's layout: a header with units, values with units, [N/A] where a read failed."""
    skew = 660.0 if node.difficulty == "skew" else 0.0
    header_a = ["timestamp", "index", "name", "uuid", "temperature.gpu", "power.draw [W]", "utilization.gpu [%]",
                "clocks.current.sm [MHz]", "clocks_event_reasons.active", "ecc.errors.corrected.volatile.total"]
    header_b = [header_a[i] for i in (0, 1, 3, 2, 5, 4, 6, 8, 7, 9)]
    gaps = set()
    if node.difficulty == "gaps":
        for start in rng.uniform(0, len(times) - 900, 5):
            gaps.update(range(int(start), int(start + rng.uniform(120, 840))))
    ecc = np.zeros(len(models), dtype=int)
    header = header_a
    lines = [", ".join(header)]
    stamp = time.gmtime
    for k, t in enumerate(times):
        if k in gaps:
            if k + 1 not in gaps:  # nvidia-smi comes back with another column order
                header = header_b if header is header_a else header_a
                lines.append(", ".join(header))
            continue
        if node.difficulty == "counters" and k % 2880 == 1440:
            ecc[:] = 0  # driver reload
        ts = time.strftime("%Y/%m/%d %H:%M:%S", stamp(t + skew)) + f".{k % 1000:03d}"
        for g, model in enumerate(models):
            c = cols[g]
            ecc[g] += int(rng.random() < 0.01)
            na = node.difficulty == "counters" and rng.random() < 0.002
            cells = {"timestamp": ts, "index": str(g), "name": model.name, "uuid": f"GPU-{node.name}-{g:04d}",
                     "temperature.gpu": "[N/A]" if na else f"{c['temp'][k]:.0f}",
                     "power.draw [W]": f"{c['power'][k]:.2f} W", "utilization.gpu [%]": f"{100 * c['util'][k]:.0f} %",
                     "clocks.current.sm [MHz]": f"{c['clock'][k]:.0f} MHz",
                     "clocks_event_reasons.active": f"0x{int(c['throttle'][k]):016x}",
                     "ecc.errors.corrected.volatile.total": "[Not Supported]" if na else str(ecc[g])}
            lines.append(", ".join(cells[h] for h in header))
            node.rows += 1
    node.path.write_text("\n".join(lines) + "\n")


def evaluate(nodes: list[NodeTrace], warnings: dict[str, float], days: float) -> dict[str, float]:
    warned_ahead, missed, not_reached, false_alarms, healthy = 0, [], 0, 0, 0
    leads = []
    for node in nodes:
        for tr in node.truths:
            w = warnings.get(tr.module)
            if not tr.creeping:
                healthy += 1
                false_alarms += w is not None
                continue
            if tr.crossing is None:
                not_reached += 1
                continue
            skew = 660.0 if node.difficulty == "skew" else 0.0
            if w is not None and (tr.crossing + skew) - w >= 72 * 3600:
                warned_ahead += 1
                leads.append(((tr.crossing + skew) - w) / 3600)
            else:
                missed.append(f"{tr.module} ({node.difficulty}, "
                              + (f"warned {((tr.crossing + skew) - w) / 3600:.0f} h ahead)" if w else "not warned)"))
    reached = warned_ahead + len(missed)
    return {"reached": reached, "warned": warned_ahead, "share": warned_ahead / reached if reached else 0.0,
            "missed": missed, "not_reached": not_reached, "false_alarms": false_alarms,
            "healthy_days": healthy * days, "per_1000": 1000 * false_alarms / (healthy * days) if healthy else 0.0,
            "median_lead_h": statistics.median(leads) if leads else 0.0}  # type: ignore[dict-item]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=8)
    ap.add_argument("--days", type=float, default=20.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", type=Path, help="write the logs here and keep them (with truth.json)")
    ap.add_argument("--again", type=Path, help="replay the logs kept in this folder instead of generating")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        out = args.keep or Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        if args.again:
            nodes = [NodeTrace(n["name"], n["difficulty"], Path(n["path"]), [Truth(**t) for t in n["truths"]], n["rows"])
                     for n in json.loads((args.again / "truth.json").read_text())]
        else:
            nodes = [make_node(i, DIFFICULTIES[i % len(DIFFICULTIES)], args.days, rng, out) for i in range(args.nodes)]
            (out / "truth.json").write_text(json.dumps([{**asdict(n), "path": str(n.path)} for n in nodes]))
        gen_s = time.perf_counter() - t0
        warnings: dict[str, float] = {}
        book = Logbook(Path(tmp) / "logbook.db")
        replayer = Replayer(ReplayConfig(), book)
        t0 = time.perf_counter()
        parse_s = 0.0
        for node in nodes:
            p0 = time.perf_counter()
            rec = read_file(node.path, 60.0)
            parse_s += time.perf_counter() - p0
            replayer.feed(rec)
        result = replayer.finish()
        total_s = time.perf_counter() - t0
        book.close()
    for e in result.events:
        if e.kind == "overheat_forecast" and e.module and e.module not in warnings:
            warnings[e.module] = e.time
    score = evaluate(nodes, warnings, args.days)
    rows = sum(n.rows for n in nodes)
    print(f"independently generated nvidia-smi CSV logs: {args.nodes} nodes x 8 modules, {args.days:g} days at "
          f"1/min, seed {args.seed} ({rows:,} samples, generated in {gen_s:.0f} s)")
    print("difficulties: " + ", ".join(f"{n.name}={n.difficulty}" for n in nodes))
    print(f"creeping modules that reached slowdown: {score['reached']} (+{score['not_reached']} still below it)")
    print(f"warned >= 72 h ahead: {100 * score['share']:.1f} %   (target >= 90 %)   "
          f"median lead {score['median_lead_h']:.0f} h")
    for m in score["missed"]:  # type: ignore[attr-defined]
        print(f"  missed: {m}")
    print(f"false alarms: {score['false_alarms']} = {score['per_1000']:.2f} per 1000 healthy module-days "
          f"(target <= 1) over {score['healthy_days']:.0f} module-days")
    fa = [e for e in result.events if e.kind == "overheat_forecast" and e.module in
          {t.module for n in nodes for t in n.truths if not t.creeping}]
    for e in fa:
        print(f"  false alarm: {e.module} at day {(e.time - START) / 86400:.1f}")
    resets = [e for e in result.events if e.kind == "forecast_reset"]
    print(f"trend resets (step changes): {len(resets)}: " + ", ".join(f"{e.module} day {(e.time - START) / 86400:.1f}"
                                                                       for e in resets))
    lacking = [f for f in result.forecast if f.state == "insufficient"]
    print(f"modules without a forecast: {len(lacking)}" + "".join(f"\n  {f.module}: {f.reason}" for f in lacking[:8]))
    print(f"replay speed: {rows / total_s:,.0f} samples/s end to end (parse {parse_s:.1f} s, detectors + forecast + "
          f"logbook {total_s - parse_s:.1f} s of {total_s:.1f} s)   (target >= 10,000)")


if __name__ == "__main__":
    main()
