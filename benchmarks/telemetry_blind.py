"""An independently written telemetry source for the overheating forecast (issue 33).

SIMULATED DATA. Written from the issue's words and public knowledge of nvidia-smi only, by an
engineer who did not read the forecaster (src/gpuvet/watch/) or its own benchmark
(benchmarks/forecast_replay.py): a second opinion on how well `gpuvet watch --replay` forecasts
overheating on logs it was not tuned on.

What it writes, for a seed and a number of nodes (8 H200 SXM modules each, one sample a minute):

- ``nodeN.csv``: what ``nvidia-smi --query-gpu=timestamp,index,name,pci.bus_id,temperature.gpu,
  power.draw,clocks.sm,clocks.max.sm,clocks_throttle_reasons.active,utilization.gpu --format=csv
  -l 60 -f nodeN.csv`` writes: the header as nvidia-smi spells it (``clocks.sm`` prints as
  ``clocks.current.sm [MHz]``), units in the values (``652.31 W``, ``1980 MHz``, ``100 %``),
  timestamps ``2026/11/02 10:00:01.123`` (UTC), the throttle reasons as nvml.h's bit mask
  (0x1 GPU idle, 0x20 SW thermal slowdown, 0x40 HW thermal slowdown).
- ``nodeN.truth.json``: per module, healthy or creeping, its thermal resistance, when its creep
  started, the time of its first slowdown, and any maintenance (re-paste, replacement).
- with ``--events-out FILE``: ``module,time,kind`` rows (kind: throttled / repasted / replaced),
  the shape ``gpuvet watch --replay FILES --backtest EVENTS.csv`` is to read; ``module`` is named
  as the replay names it (``node0/gpu3`` for GPU index 3 of node0.csv).

Physics (steady state, per module):  T = T_inlet(node, t) + offset(module) + R(module, t) * P,
followed by a first-order lag (time constant 3-5 min) when ``lag`` is on. Healthy modules keep R
(0.050-0.062 degC/W, so 40-43 degC above the inlet at 650-690 W); a creeping module's R rises
from a start time (thermal paste drying and fan wear: linear; cold-plate fouling: accelerating)
so that it first reaches its slowdown temperature days into the log. At the slowdown
temperature the firmware lowers the SM clock (and so the power) until the module is 1.5 degC
below it, with the SW thermal bit set (and the HW bit at 1 degC above). Slowdown temperature
89 degC: the "GPU Slowdown Temp" nvidia-smi -q prints for a 700 W Hopper SXM module (H100 SXM,
GPU shutdown 92 degC, max operating 87 degC), ASSUMED equal for the H200 SXM (same board power).
The first slowdown in the truth file is the first sample whose (unprinted) temperature reaches
89 degC: the sample whose clock is lowered and whose thermal bit is set.

Difficulties (issue 33), each on by default and off with ``--no-<name>``:

- ``jobs``: each module runs its own jobs, each at its own steady power in 610-690 W (off: every
  job at 650 W), so a module's power steps at every new job;
- ``inlet``: the node's one inlet drifts 3-6 degC over days (facility water, weather) on top of
  a +-2.5 degC daily cycle (off: a constant inlet);
- ``lag``: first-order thermal lag of 3-5 minutes after every load change (off: instant);
- ``quantise``: temperature printed as whole degC and power to 0.01 W, as nvidia-smi prints them
  (off: temperature to 0.01 degC and power to 0.0001 W);
- ``idle``: idle gaps of 2-60 minutes between jobs (off: the next job starts at once);
- ``inference``: node1 serves inference, its load never holds still (off: node1 runs jobs);
- ``maintenance``: one or two healthy modules a node re-pasted or replaced (R steps down or
  changes), drained for 30-90 minutes around it; written to the truth and events files.

    python benchmarks/telemetry_blind.py --out DIR --nodes 4 --days 20 --seed 1001 [--no-inlet ...]
    python benchmarks/telemetry_blind.py --out DIR ... --run --score   # replay each node, then score
    python benchmarks/telemetry_blind.py --sweep --seeds 1001-1004      # all on, and each alone

``--run`` replays each node as a user would: ``gpuvet watch --replay DIR/nodeN.csv --json
--no-log`` (one node per file), keeping the output as ``nodeN.gpuvet.json``. ``--score`` reads
those and the truth files: creeping modules warned (an ``overheat_forecast`` event) >= 72 h
before their first slowdown, their lead times, false alarms (``overheat_forecast`` events on
healthy modules) per 1,000 healthy module-days, and ``forecast_reset`` events per node (and how
many of them came within a day after real maintenance).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

DIFFICULTIES = ("jobs", "inlet", "lag", "quantise", "idle", "inference", "maintenance")
MODULES = 8
STEP_S = 60
START = datetime(2026, 11, 2, 0, 0, 0, tzinfo=UTC)
NAME = "NVIDIA H200"
BUS_IDS = ("00000000:18:00.0", "00000000:2A:00.0", "00000000:3A:00.0", "00000000:5D:00.0",
           "00000000:9A:00.0", "00000000:AB:00.0", "00000000:BA:00.0", "00000000:DB:00.0")
SLOWDOWN_C = 89.0  # assumed for the H200 SXM from the H100 SXM's nvidia-smi -q (see docstring)
SM_MAX_MHZ = 1980
SM_IDLE_MHZ = 345
IDLE_W = (70.0, 80.0)
JOB_W = (610.0, 690.0)
FLAT_JOB_W = 650.0
R_HEALTHY = (0.050, 0.062)  # degC/W
INFERENCE_NODE = 1
BIT_IDLE, BIT_SW_THERMAL, BIT_HW_THERMAL = 0x1, 0x20, 0x40
LEAD_H = 72.0


@dataclass(frozen=True)
class Difficulties:
    """Which of issue 33's difficulties the log carries."""

    jobs: bool = True
    inlet: bool = True
    lag: bool = True
    quantise: bool = True
    idle: bool = True
    inference: bool = True
    maintenance: bool = True

    def label(self) -> str:
        on = [d for d in DIFFICULTIES if getattr(self, d)]
        return "all" if len(on) == len(DIFFICULTIES) else ("none" if not on else "+".join(on))


@dataclass(frozen=True)
class Maintenance:
    """A real step of a module's thermal resistance, done by a person."""

    time_utc: str
    kind: str  # repasted / replaced
    r_before: float
    r_after: float


@dataclass
class ModuleTruth:
    """What really happened to one module."""

    module: str
    index: int
    bus_id: str
    state: str  # healthy / creeping
    r0_c_per_w: float
    offset_c: float
    creep_start_utc: str | None = None
    creep_shape: str | None = None
    first_slowdown_utc: str | None = None
    maintenance: list[Maintenance] = field(default_factory=list)


@dataclass
class NodeTruth:
    """What really happened on one node, with the settings that made it."""

    node: str
    seed: int
    days: float
    simulated: bool
    slowdown_c: float
    role: str  # training / inference
    inlet_c: dict[str, float]
    difficulties: dict[str, bool]
    modules: list[ModuleTruth]


def _utc(t_s: float) -> str:
    return (START + timedelta(seconds=float(t_s))).strftime("%Y-%m-%dT%H:%M:%SZ")


def _from_utc(text: str) -> float:
    return (datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC) - START).total_seconds()


# --- load -------------------------------------------------------------------------------------


def training_load(rng: np.random.Generator, steps: int, d: Difficulties) -> tuple[np.ndarray, np.ndarray]:
    """One module's demanded power and busy flag: jobs of 20 min to 2 days back to back."""
    power = np.empty(steps)
    busy = np.zeros(steps, dtype=bool)
    idle_w = rng.uniform(*IDLE_W)
    k = 0
    if d.idle:  # the log starts somewhere in a gap or a job
        k = int(rng.integers(0, 60))
        power[:k] = idle_w
    while k < steps:
        length = int(np.clip(rng.lognormal(np.log(360), 0.8), 20, 2880))
        job_w = rng.uniform(*JOB_W) if d.jobs else FLAT_JOB_W
        end = min(steps, k + length)
        power[k:end] = job_w
        busy[k:end] = True
        k = end
        if d.idle and k < steps:
            gap = int(rng.integers(2, 61))
            power[k:k + gap] = idle_w
            k += gap
    power[busy] += rng.normal(0.0, 2.0, int(busy.sum()))
    power[~busy] += rng.normal(0.0, 0.8, int((~busy).sum()))
    return power, busy


def inference_load(rng: np.random.Generator, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """An inference module: request rate wanders minute to minute and over the day, never still."""
    t_h = np.arange(steps) * STEP_S / 3600.0
    daily = 0.55 + 0.25 * np.sin(2 * np.pi * (t_h - 9.0) / 24.0)
    ar = np.empty(steps)
    x = 0.0
    shocks = rng.normal(0.0, 0.18, steps)
    for i in range(steps):  # AR(1): load correlated over a few minutes
        x = 0.75 * x + shocks[i]
        ar[i] = x
    load = np.clip(daily + ar, 0.0, 1.0)
    idle_w = rng.uniform(*IDLE_W)
    power = idle_w + load * (rng.uniform(*JOB_W) - idle_w) + rng.normal(0.0, 3.0, steps)
    busy = load > 0.05
    return power, busy


# --- surroundings ----------------------------------------------------------------------------


def node_inlet(rng: np.random.Generator, steps: int, d: Difficulties) -> tuple[np.ndarray, dict[str, float]]:
    """The node's one inlet: a base, a drift of several degC over days, a +-2.5 degC daily cycle."""
    base = rng.uniform(22.0, 28.0)
    inlet = np.full(steps, base)
    info = {"base_c": round(base, 2), "drift_range_c": 0.0, "daily_amplitude_c": 0.0}
    if not d.inlet:
        return inlet, info
    hours = steps * STEP_S / 3600.0
    knots = np.cumsum(rng.normal(0.0, 1.0, int(hours / 6) + 2))  # a random walk, a knot every 6 h
    walk = np.interp(np.arange(steps) * STEP_S / 3600.0 / 6.0, np.arange(knots.size), knots)
    span = float(walk.max() - walk.min()) or 1.0
    drift_range = rng.uniform(3.0, 6.0)
    drift = (walk - walk[0]) * drift_range / span
    t_h = np.arange(steps) * STEP_S / 3600.0
    daily = 2.5 * np.sin(2 * np.pi * (t_h - 9.0) / 24.0)  # warmest mid-afternoon
    inlet = inlet + drift + daily + rng.normal(0.0, 0.1, steps)
    info.update(drift_range_c=round(drift_range, 2), daily_amplitude_c=2.5)
    return inlet, info


def creep_resistance(rng: np.random.Generator, steps: int, days: float, r0: float, inlet: np.ndarray,
                     offset: float) -> tuple[np.ndarray, float, str]:
    """R(t) rising from a start so that a module at ~670 W reaches the slowdown days into the log."""
    t_d = np.arange(steps) * STEP_S / 86400.0
    start = rng.uniform(0.5, min(3.0, 0.15 * days))
    hit = rng.uniform(min(9.0, days * 0.45), max(days - 3.0, days * 0.6))
    day = (t_d >= hit - 0.5) & (t_d < hit + 0.5)
    inlet_at_hit = float(inlet[day].mean()) if day.any() else float(inlet.mean())
    r_hit = (SLOWDOWN_C - inlet_at_hit - offset) / 670.0
    shape = str(rng.choice(["linear", "accelerating"]))
    p = 1.0 if shape == "linear" else 1.7
    s = np.clip((t_d - start) / (hit - start), 0.0, 1.5)  # the paste is as dry as it gets
    return r0 + (r_hit - r0) * s**p, start * 86400.0, shape


# --- the node --------------------------------------------------------------------------------


@dataclass
class NodePlan:
    """Inputs of one node's simulation, before the time loop."""

    truth: NodeTruth
    inlet: np.ndarray  # (steps,)
    power: np.ndarray  # (steps, 8) demanded
    busy: np.ndarray  # (steps, 8)
    resistance: np.ndarray  # (steps, 8)
    offset: np.ndarray  # (8,)
    tau_s: np.ndarray  # (8,)


def plan_node(rng: np.random.Generator, node: int, seed: int, days: float, d: Difficulties) -> NodePlan:
    """Draw one node's inlet, loads, resistances, creeping modules and maintenance."""
    steps = int(days * 86400 / STEP_S)
    name = f"node{node}"
    inlet, inlet_info = node_inlet(rng, steps, d)
    inference = d.inference and node == INFERENCE_NODE
    loads = [inference_load(rng, steps) if inference else training_load(rng, steps, d) for _ in range(MODULES)]
    power = np.stack([p for p, _ in loads], axis=1)
    busy = np.stack([b for _, b in loads], axis=1)
    offset = rng.uniform(0.0, 2.0, MODULES)
    r0 = rng.uniform(*R_HEALTHY, MODULES)
    resistance = np.tile(r0, (steps, 1))
    tau_s = rng.uniform(180.0, 300.0, MODULES)
    creeping = set(rng.choice(MODULES, size=int(rng.integers(1, 3)), replace=False).tolist())
    modules = []
    for m in range(MODULES):
        mt = ModuleTruth(f"{name}/gpu{m}", m, BUS_IDS[m], "creeping" if m in creeping else "healthy",
                         round(float(r0[m]), 5), round(float(offset[m]), 2))
        if m in creeping:
            resistance[:, m], start_s, mt.creep_shape = creep_resistance(rng, steps, days, r0[m], inlet, offset[m])
            mt.creep_start_utc = _utc(start_s)
        modules.append(mt)
    if d.maintenance:
        healthy = [m for m in range(MODULES) if m not in creeping]
        for m in rng.choice(healthy, size=int(rng.integers(1, 3)), replace=False).tolist():
            _maintain(rng, modules[m], resistance[:, m], power[:, m], busy[:, m], days)
    truth = NodeTruth(name, seed, days, True, SLOWDOWN_C, "inference" if inference else "training",
                      inlet_info, asdict(d), modules)
    return NodePlan(truth, inlet, power, busy, resistance, offset, tau_s)


def _maintain(rng: np.random.Generator, mt: ModuleTruth, r: np.ndarray, power: np.ndarray, busy: np.ndarray,
              days: float) -> None:
    """Drain a module, re-paste or replace it (R steps), and put it back to work."""
    at = int(rng.uniform(0.15 * days, 0.85 * days) * 86400 / STEP_S)
    drain = int(rng.integers(30, 91))
    power[at - drain // 2:at + drain // 2] = rng.uniform(*IDLE_W) + rng.normal(0.0, 0.8, 2 * (drain // 2))
    busy[at - drain // 2:at + drain // 2] = False
    kind = str(rng.choice(["repasted", "replaced"]))
    before = float(r[at])
    after = before * rng.uniform(0.80, 0.90) if kind == "repasted" else rng.uniform(*R_HEALTHY)
    r[at:] = after
    mt.maintenance.append(Maintenance(_utc(at * STEP_S), kind, round(before, 5), round(float(after), 5)))


@dataclass
class NodeLog:
    """One node's simulated readings, as the module would report them."""

    temp: np.ndarray
    power: np.ndarray
    clock: np.ndarray
    reasons: np.ndarray
    util: np.ndarray


def simulate(plans: list[NodePlan], d: Difficulties) -> list[NodeLog]:
    """Step all nodes' modules together: lag, slowdown and the clock the firmware sets."""
    steps = plans[0].inlet.size
    inlet = np.concatenate([np.repeat(p.inlet[:, None], MODULES, axis=1) for p in plans], axis=1)
    demand = np.concatenate([p.power for p in plans], axis=1)
    busy = np.concatenate([p.busy for p in plans], axis=1)
    r = np.concatenate([p.resistance for p in plans], axis=1)
    offset = np.concatenate([p.offset for p in plans])
    alpha = 1.0 - np.exp(-STEP_S / np.concatenate([p.tau_s for p in plans])) if d.lag else np.ones(offset.size)
    idle_w = demand.min(axis=0)
    temp = np.empty_like(demand)
    power = np.empty_like(demand)
    factor = np.empty_like(demand)
    f = np.ones(offset.size)
    t_now = inlet[0] + offset + r[0] * demand[0]
    for k in range(steps):
        p = np.where(busy[k], idle_w + (demand[k] - idle_w) * f, demand[k])
        t_ss = inlet[k] + offset + r[k] * p
        t_prev, t_now = t_now, t_now + alpha * (t_ss - t_now)
        over = busy[k] & (t_now > SLOWDOWN_C + 0.5)
        if over.any():  # the firmware acts within milliseconds: it holds the module near the slowdown
            t_now = np.where(over, SLOWDOWN_C + 0.5, t_now)
            held = (t_prev + (t_now - t_prev) / alpha - inlet[k] - offset) / r[k]
            p = np.where(over, np.clip(held, idle_w, p), p)
            f = np.where(over, np.clip((p - idle_w) / np.maximum(demand[k] - idle_w, 1.0), 0.05, 1.0), f)
        hot = t_now >= SLOWDOWN_C
        f = np.where(hot, np.maximum(0.05, f - 0.1), np.where(t_now < SLOWDOWN_C - 1.5, np.minimum(1.0, f + 0.03), f))
        temp[k], power[k], factor[k] = t_now, p, f
    throttled = (factor < 1.0) & busy
    clock = np.where(busy, np.round(SM_MAX_MHZ * factor / 15.0) * 15.0, SM_IDLE_MHZ)
    reasons = np.where(busy, 0, BIT_IDLE) | np.where(throttled, BIT_SW_THERMAL, 0)
    reasons = reasons | np.where(throttled & (temp >= SLOWDOWN_C + 1.0), BIT_HW_THERMAL, 0)
    util = np.where(busy, np.clip(np.round((demand - idle_w) / (JOB_W[1] - idle_w) * 100 + 30), 1, 100), 0)
    logs = []
    for i, plan in enumerate(plans):
        cols = slice(i * MODULES, (i + 1) * MODULES)
        logs.append(NodeLog(temp[:, cols], power[:, cols], clock[:, cols], reasons[:, cols], util[:, cols]))
        _first_slowdowns(plan.truth, temp[:, cols], busy[:, cols])
    return logs


def _first_slowdowns(truth: NodeTruth, temp: np.ndarray, busy: np.ndarray) -> None:
    for m, mt in enumerate(truth.modules):
        hot = np.flatnonzero((temp[:, m] >= SLOWDOWN_C) & busy[:, m])
        mt.first_slowdown_utc = _utc(hot[0] * STEP_S) if hot.size else None


# --- writing ---------------------------------------------------------------------------------

HEADER = ("timestamp, index, name, pci.bus_id, temperature.gpu, power.draw [W], clocks.current.sm [MHz], "
          "clocks.max.sm [MHz], clocks_throttle_reasons.active, utilization.gpu [%]")


def write_csv(path: Path, log: NodeLog, rng: np.random.Generator, d: Difficulties) -> None:
    """Write one node's log as nvidia-smi -l 60 writes it: a row per GPU per loop."""
    steps = log.temp.shape[0]
    jitter_ms = rng.integers(0, 400, steps)
    temp = (np.round(log.temp).astype(int).astype(str) if d.quantise else np.char.mod("%.2f", log.temp)).tolist()
    power = np.char.mod("%.2f W" if d.quantise else "%.4f W", log.power).tolist()
    clock = log.clock.astype(int).tolist()
    reasons = log.reasons.astype(int).tolist()
    util = log.util.astype(int).tolist()
    ident = [f", {m}, {NAME}, {BUS_IDS[m]}, " for m in range(MODULES)]
    lines = [HEADER]
    for k in range(steps):
        base = START + timedelta(milliseconds=k * STEP_S * 1000 + int(jitter_ms[k]))
        stamp = base.strftime("%Y/%m/%d %H:%M:%S")
        ms = base.microsecond // 1000
        tk, pk, ck, rk, uk = temp[k], power[k], clock[k], reasons[k], util[k]
        lines.extend(f"{stamp}.{ms + m:03d}{ident[m]}{tk[m]}, {pk[m]}, {ck[m]} MHz, {SM_MAX_MHZ} MHz, "
                     f"0x{rk[m]:016X}, {uk[m]} %" for m in range(MODULES))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def events_rows(truths: list[NodeTruth]) -> list[tuple[str, str, str]]:
    """What really happened, for --backtest: first slowdowns and maintenance, in time order."""
    rows = []
    for t in truths:
        for mt in t.modules:
            if mt.first_slowdown_utc:
                rows.append((mt.module, mt.first_slowdown_utc, "throttled"))
            rows.extend((mt.module, m.time_utc, m.kind) for m in mt.maintenance)
    return sorted(rows, key=lambda r: (r[1], r[0]))


def generate(out: Path, nodes: int, days: float, seed: int, d: Difficulties, events_out: Path | None) -> list[NodeTruth]:
    """Plan, simulate and write every node; the same seed and settings give the same bytes."""
    out.mkdir(parents=True, exist_ok=True)
    node_rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(nodes)]
    plans = [plan_node(node_rngs[n], n, seed, days, d) for n in range(nodes)]
    logs = simulate(plans, d)
    for n, (plan, log) in enumerate(zip(plans, logs, strict=True)):
        write_csv(out / f"node{n}.csv", log, node_rngs[n], d)
        (out / f"node{n}.truth.json").write_text(json.dumps(asdict(plan.truth), indent=1) + "\n", encoding="utf-8")
    truths = [p.truth for p in plans]
    if events_out is not None:
        rows = ["module,time,kind"] + [",".join(r) for r in events_rows(truths)]
        events_out.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return truths


# --- replay and score -------------------------------------------------------------------------


def run_gpuvet(out: Path, nodes: int) -> float:
    """Replay each node's log through gpuvet as a user would; returns the seconds it took."""
    t0 = time.perf_counter()
    for n in range(nodes):
        cmd = [sys.executable, "-m", "gpuvet", "watch", "--replay", str(out / f"node{n}.csv"), "--json", "--no-log"]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode not in (0, 1):
            raise SystemExit(f"gpuvet failed on node{n}.csv (exit {done.returncode}):\n{done.stderr[-2000:]}")
        (out / f"node{n}.gpuvet.json").write_text(done.stdout, encoding="utf-8")
    return time.perf_counter() - t0


@dataclass(frozen=True)
class Event:
    """One event gpuvet reported: its kind, module and recorded time (s from START)."""

    kind: str
    module: str
    t_s: float


def read_events(path: Path) -> list[Event]:
    """The events of one `watch --replay --json` run."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for e in doc.get("events", []):
        stamp = e.get("time_utc")
        t_s = _from_iso(stamp) if stamp else float(e["time"]) - START.timestamp()
        out.append(Event(str(e["kind"]), str(e.get("module") or ""), t_s))
    return out


def _from_iso(text: str) -> float:
    when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return (when - START).total_seconds()


@dataclass
class Score:
    """One fleet's figures."""

    creeping: int = 0
    creeping_slowed: int = 0
    warned_72h: int = 0
    leads_h: list[float] = field(default_factory=list)
    healthy: int = 0
    healthy_days: float = 0.0
    false_alarms: int = 0
    healthy_alarmed: int = 0
    resets: list[int] = field(default_factory=list)
    resets_after_maintenance: int = 0
    inference_slowed: int = 0  # creeping modules of the inference node that reached slowdown
    inference_warned_72h: int = 0

    def add(self, other: Score) -> None:
        for name in ("creeping", "creeping_slowed", "warned_72h", "healthy", "healthy_days", "false_alarms",
                     "healthy_alarmed", "resets_after_maintenance", "inference_slowed", "inference_warned_72h"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.leads_h += other.leads_h
        self.resets += other.resets

    def line(self) -> str:
        rate = 1000.0 * self.false_alarms / self.healthy_days if self.healthy_days else float("nan")
        lead = f"{np.median(self.leads_h):.0f}" if self.leads_h else "-"
        resets = f"{min(self.resets)}-{max(self.resets)}" if self.resets else "-"
        never = self.creeping - self.creeping_slowed
        inference = f"; inference node {self.inference_warned_72h}/{self.inference_slowed}" if self.inference_slowed else ""
        return (f"warned>=72h {self.warned_72h}/{self.creeping_slowed} (median lead {lead} h{inference}"
                f"{f'; {never} creeping never slowed' if never else ''})  "
                f"false alarms {self.false_alarms} on {self.healthy_alarmed}/{self.healthy} healthy = "
                f"{rate:.1f}/1000 module-days  forecast_reset/node {resets} "
                f"({sum(self.resets)} in all, {self.resets_after_maintenance} within 24 h after real maintenance)")


def score_node(truth: NodeTruth, events: list[Event]) -> Score:
    """Score one node: warnings against first slowdowns, alarms on healthy modules, resets."""
    s = Score()
    by_module: dict[str, list[Event]] = {}
    for e in events:
        by_module.setdefault(e.module, []).append(e)
    maint = [(_from_utc(m.time_utc), mt.module) for mt in truth.modules for m in mt.maintenance]
    resets = [e for e in events if e.kind == "forecast_reset"]
    s.resets.append(len(resets))
    s.resets_after_maintenance = sum(any(mod == e.module and 0 <= e.t_s - t <= 86400 for t, mod in maint)
                                     for e in resets)
    for mt in truth.modules:
        warns = [e.t_s for e in by_module.get(mt.module, []) if e.kind == "overheat_forecast"]
        if mt.state == "healthy":
            s.healthy += 1
            s.healthy_days += truth.days
            s.false_alarms += len(warns)
            s.healthy_alarmed += bool(warns)
            continue
        s.creeping += 1
        if mt.first_slowdown_utc is None:
            continue
        s.creeping_slowed += 1
        s.inference_slowed += truth.role == "inference"
        slow = _from_utc(mt.first_slowdown_utc)
        before = [w for w in warns if w <= slow]
        if before:
            lead = (slow - min(before)) / 3600.0
            s.leads_h.append(lead)
            s.warned_72h += lead >= LEAD_H
            s.inference_warned_72h += lead >= LEAD_H and truth.role == "inference"
    return s


def score(out: Path, nodes: int) -> Score:
    """Score every node of a generated fleet from its truth and gpuvet's JSON."""
    total = Score()
    for n in range(nodes):
        raw = json.loads((out / f"node{n}.truth.json").read_text(encoding="utf-8"))
        raw["modules"] = [ModuleTruth(**{**m, "maintenance": [Maintenance(**x) for x in m["maintenance"]]})
                          for m in raw["modules"]]
        total.add(score_node(NodeTruth(**raw), read_events(out / f"node{n}.gpuvet.json")))
    return total


# --- command line ----------------------------------------------------------------------------


def _seeds(text: str) -> list[int]:
    if "-" in text:
        a, b = (int(x) for x in text.split("-", 1))
        return list(range(a, b + 1))
    return [int(x) for x in text.split(",")]


def _tree() -> str:
    """The commit measured, and whether the working tree's watch job differs from it (shared checkout)."""
    here = Path(__file__).parent

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], capture_output=True, text=True, cwd=here, check=False).stdout.strip()

    dirty = git("status", "--porcelain", "--", "../src/gpuvet/watch")
    return git("log", "-1", "--format=%h") + (" + uncommitted watch/ changes" if dirty else "")


def sweep(seeds: list[int], nodes: int, days: float, configs: list[str]) -> None:
    """All difficulties on, and each alone, over seeds; one line per setting."""
    print(f"{nodes} nodes x {MODULES} H200 x {days:g} days, seeds {seeds[0]}-{seeds[-1]}; gpuvet at {_tree()}")
    for label in configs:
        d = Difficulties() if label == "all" else Difficulties(**{x: x == label for x in DIFFICULTIES})
        total = Score()
        spent = 0.0
        for seed in seeds:
            with tempfile.TemporaryDirectory(prefix="blind-") as tmp:
                generate(Path(tmp), nodes, days, seed, d, None)
                spent += run_gpuvet(Path(tmp), nodes)
                total.add(score(Path(tmp), nodes))
        print(f"{d.label():>12}: {total.line()}  [replay {spent:.0f} s; {_tree()}]", flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, help="folder for nodeN.csv and nodeN.truth.json")
    ap.add_argument("--nodes", type=int, default=4)
    ap.add_argument("--days", type=float, default=20.0)
    ap.add_argument("--seed", type=int, default=1001)
    ap.add_argument("--events-out", type=Path, help="write module,time,kind rows (for watch --backtest)")
    ap.add_argument("--run", action="store_true", help="replay each node with gpuvet watch --replay --json")
    ap.add_argument("--score", action="store_true", help="score gpuvet's JSON against the truth files")
    ap.add_argument("--reuse", action="store_true", help="use the logs already in --out (no generation)")
    ap.add_argument("--sweep", action="store_true", help="all difficulties on and each alone, over --seeds")
    ap.add_argument("--seeds", default="1001-1004")
    ap.add_argument("--configs", default=",".join(("all",) + DIFFICULTIES))
    for name in DIFFICULTIES:
        also = ["--no-inlet-drift"] if name == "inlet" else []
        ap.add_argument(f"--no-{name}", *also, dest=f"no_{name}", action="store_true",
                        help=f"switch off the {name} difficulty")
    a = ap.parse_args(argv)
    if a.nodes < 1 or a.nodes > 64 or not 8.0 <= a.days <= 120.0:
        ap.error("--nodes must be 1-64 and --days 8-120")
    if a.sweep:
        sweep(_seeds(a.seeds), a.nodes, a.days, a.configs.split(","))
        return 0
    if a.out is None:
        ap.error("--out is required unless --sweep")
    d = replace(Difficulties(), **{x: not getattr(a, f"no_{x}") for x in DIFFICULTIES})
    if not a.reuse:
        t0 = time.perf_counter()
        generate(a.out, a.nodes, a.days, a.seed, d, a.events_out)
        print(f"wrote {a.nodes} node logs ({d.label()}) to {a.out} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    if a.run:
        print(f"replayed in {run_gpuvet(a.out, a.nodes):.1f} s", file=sys.stderr)
    if a.score:
        print(score(a.out, a.nodes).line())
    return 0


if __name__ == "__main__":
    sys.exit(main())
