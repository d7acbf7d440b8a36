"""The 72-hour forecast's thresholds from pooled evidence (issue 44): the backtest's sweep (27
settings: interval confidence x margin x rise already seen) over both telemetry generators and
the real logs, pooled, then the chosen setting checked on seeds generated after the choice.

Each seed's logs are generated, given an events file of what happened to each module (the
generator's own truth: `throttled` at a creeping module's first slowdown, `repasted`/`replaced`
at maintenance), and replayed as a user would: `gpuvet watch --replay NODE.csv… --backtest
EVENTS --json --no-log`. The sweep's counts of every seed are summed per setting (warned >= 72 h,
late, missed, false alarms, module-days) and ranked as the backtest ranks one log's: warned minus
false alarms, then fewer false alarms, then the longer median lead (here the median of the seeds'
medians, to the hour: the backtest prints a median, not the leads), then the fewest of today's
thresholds changed (a tie is no evidence for a change). The real logs (tests/data/telemetry/real)
are replayed with today's settings and listed: none has an event the backtest could score.

    python benchmarks/forecast_pooled.py --blind 1005-1012 --own 1-2 --real      # the choice
    python benchmarks/forecast_pooled.py --blind 1101-1104 --own 921-923         # checked after it

Generators: benchmarks/telemetry_blind.py (4 nodes x 8 H200, 20 days, every difficulty on) and
benchmarks/forecast_replay.py (8 nodes, 20 days, --hard all). The pooled figures are simulated
(both generators model the telemetry); the real logs are real.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT)]

import forecast_replay as own  # noqa: E402  (the repository's benchmarks folder, put on the path above)
import telemetry_blind as blind  # noqa: E402
from tests.node.test_telemetry_real import FLAGS  # noqa: E402  (each real log's flags, from its source note)

from gpuvet.watch.forecast_settings import ForecastSettings  # noqa: E402

REAL = ROOT / "tests" / "data" / "telemetry" / "real"
COUNTS = ("warned", "late", "missed", "warned_before_maintenance", "false_alarms", "open_warnings")


@dataclass
class Pool:
    """One setting's counts summed over logs."""

    settings: dict[str, float]
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTS, 0))
    module_days: float = 0.0
    medians: list[float] = field(default_factory=list)

    def add(self, row: dict[str, object]) -> None:
        for k in COUNTS:
            self.counts[k] += int(row.get(k) or 0)  # type: ignore[call-overload]
        self.module_days += float(row.get("module_days") or 0.0)  # type: ignore[arg-type]
        if isinstance(row.get("median_lead_h"), (int, float)):
            self.medians.append(float(row["median_lead_h"]))  # type: ignore[arg-type]

    @property
    def scored(self) -> int:
        return self.counts["warned"] + self.counts["late"] + self.counts["missed"]

    @property
    def per_1000(self) -> float:
        return 1000 * self.counts["false_alarms"] / self.module_days if self.module_days else 0.0

    @property
    def lead(self) -> float | None:
        return float(np.median(self.medians)) if self.medians else None

    def rank(self) -> tuple[float, float, float, int]:
        """The backtest's order; among settings equal on it, the one that changes fewest of today's
        thresholds (a tie is no evidence for a change)."""
        today = ForecastSettings()
        changed = sum((self.settings["alpha"] != today.alpha, self.settings["margin_h"] * 3600 != today.margin_s,
                       self.settings["min_rise_c"] != today.min_rise_c))
        return (-(self.counts["warned"] - self.counts["false_alarms"]), self.counts["false_alarms"],
                -round(self.lead or 0.0), changed)

    def line(self) -> str:
        s = self.settings
        share = 100 * self.counts["warned"] / self.scored if self.scored else 0.0
        lead = f"{self.lead:.0f} h" if self.lead is not None else "-"
        return (f"alpha {s['alpha']:.2f} margin {s['margin_h']:>3.0f} h rise {s['min_rise_c']:.1f} C: warned>=72h "
                f"{self.counts['warned']}/{self.scored} ({share:.1f} %), late {self.counts['late']}, missed "
                f"{self.counts['missed']}, false alarms {self.counts['false_alarms']} / {self.module_days:,.0f} "
                f"module-days = {self.per_1000:.2f}/1000, median lead {lead}")


def _utc(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def blind_seed(seed: int, folder: Path) -> tuple[list[Path], Path]:
    """telemetry_blind.py's logs of one seed, every difficulty on, with its own events file."""
    events = folder / "events.csv"
    blind.generate(folder, 4, 20.0, seed, blind.Difficulties(), events)
    return [folder / f"node{n}.csv" for n in range(4)], events


def own_seed(seed: int, folder: Path) -> tuple[list[Path], Path]:
    """forecast_replay.py's logs of one seed (--hard all), its truth written as an events file:
    throttled at each creeping module's crossing; repasted where a maintenance node's module was."""
    rng = np.random.default_rng(seed)
    hard = own.Hard(*(True,) * len(own.Hard.__dataclass_fields__))
    nodes = [own.make_node(i, own.DIFFICULTIES[i % len(own.DIFFICULTIES)], 20.0, rng, folder, hard) for i in range(8)]
    rows = ["module,time,kind"]
    for node in nodes:
        for tr in node.truths:
            if tr.creeping and tr.crossing is not None:
                rows.append(f"{tr.module},{_utc(tr.crossing)},throttled")
        if node.difficulty == "maintenance":  # make_node's new paste on gpu0 (day 9) and re-seat of gpu1 (day 12.5)
            creeping = {tr.module for tr in node.truths if tr.creeping}
            for g, day in ((0, 9.0), (1, 12.5)):
                if f"{node.name}/gpu{g}" not in creeping:
                    rows.append(f"{node.name}/gpu{g},{_utc(own.START + day * 86400)},repasted")
    events = folder / "events.csv"
    events.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return [n.path for n in nodes], events


def sweep_of(files: Sequence[Path], events: Path) -> list[dict[str, object]]:
    """The backtest's sweep of one replay (every setting's counts)."""
    cmd = [sys.executable, "-m", "gpuvet", "watch", "--replay", *map(str, files), "--backtest", str(events), "--json",
           "--no-log"]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=ROOT)
    if done.returncode not in (0, 1):
        raise SystemExit(f"gpuvet failed on {files[0].parent} (exit {done.returncode}):\n{done.stderr[-2000:]}")
    return list(json.loads(done.stdout)["backtest"]["sweep"])


def real_logs() -> list[str]:
    """The real logs replayed with today's settings: each one's module-days and forecast warnings
    (nothing happened to these modules, so a warning would be a false alarm). They cannot join the
    sweep: the backtest needs an event to score, and none of them has one."""
    out: list[str] = []
    for path in sorted(p for p in REAL.iterdir() if p.suffix in (".csv", ".txt")):
        done = subprocess.run([sys.executable, "-m", "gpuvet", "watch", "--replay", str(path), *FLAGS.get(path.name, []),
                               "--json", "--no-log"],
                              capture_output=True, text=True, check=False, cwd=ROOT)
        if done.returncode not in (0, 1):
            out.append(f"{path.name}: not replayed as it is ({(done.stderr.strip().splitlines() or ['?'])[-1][:90]})")
            continue
        data = json.loads(done.stdout)
        span = (datetime.fromisoformat(data["last"]) - datetime.fromisoformat(data["first"])).total_seconds()
        days = len(data["modules"]) * span / 86400
        warned = sum(1 for e in data["events"] if e["kind"] == "overheat_forecast")
        states = sorted({str(f.get("state")) for f in data["forecast"]})
        out.append(f"{path.name}: {len(data['modules'])} module(s), {days:.2f} module-days, {warned} forecast "
                   f"warning(s), forecast states {', '.join(states) or 'none'}")
    return out


def run(kind: str, seed: int, cache: Path | None) -> tuple[str, int, list[dict[str, object]], float]:
    """One seed's sweep; with ``cache``, kept there as it is done and read back on a second run."""
    t0 = time.perf_counter()
    kept = cache / f"{kind}{seed}.json" if cache else None
    if kept is not None and kept.exists():
        return kind, seed, json.loads(kept.read_text()), 0.0
    with tempfile.TemporaryDirectory() as tmp:
        files, events = (blind_seed if kind == "blind" else own_seed)(seed, Path(tmp))
        rows = sweep_of(files, events)
    if kept is not None:
        kept.write_text(json.dumps(rows))
    return kind, seed, rows, time.perf_counter() - t0


def _seeds(text: str | None) -> list[int]:
    return blind._seeds(text) if text else []


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--blind", help="telemetry_blind.py seeds, e.g. 1005-1012")
    ap.add_argument("--own", help="forecast_replay.py seeds, e.g. 1-2")
    ap.add_argument("--real", action="store_true", help="add the real logs in tests/data/telemetry/real")
    ap.add_argument("--jobs", type=int, default=2, help="seeds replayed at once")
    ap.add_argument("--json", type=Path, help="write every seed's sweep and the pooled table here")
    ap.add_argument("--cache", type=Path, help="keep each seed's sweep in this folder as it is done (and reuse it)")
    args = ap.parse_args(argv)
    work = [("own", s) for s in _seeds(args.own)] + [("blind", s) for s in _seeds(args.blind)]
    pools: dict[tuple[float, float, float], Pool] = {}
    kept: list[dict[str, object]] = []

    def take(rows: list[dict[str, object]]) -> None:
        for row in rows:
            s = row["settings"]
            assert isinstance(s, dict)
            key = (float(s["alpha"]), float(s["margin_h"]), float(s["min_rise_c"]))
            pools.setdefault(key, Pool(dict(s))).add(row)

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
        for kind, seed, rows, wall in ex.map(lambda w: run(*w, args.cache), work):
            print(f"{kind} seed {seed}: {len(rows)} settings, {wall:.0f} s", file=sys.stderr)
            kept.append({"generator": kind, "seed": seed, "sweep": rows})
            take(rows)
    real = real_logs() if args.real else []
    ranked = sorted(pools.values(), key=Pool.rank)
    print(f"pooled sweep: blind {args.blind or '-'}, own {args.own or '-'}, real logs {'yes' if args.real else 'no'}"
          f" ({len(ranked)} settings, best first)")
    for p in ranked:
        print("  " + p.line())
    for line in real:
        print("  real log " + line)
    if args.json:
        args.json.write_text(json.dumps({"seeds": kept, "pooled": [
            {"settings": p.settings, **p.counts, "module_days": p.module_days, "median_lead_h": p.lead}
            for p in ranked]}, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
