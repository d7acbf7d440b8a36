"""How well does the overheating forecast work? A seeded simulated fleet — 8 nodes of 8 H200,
30 simulated days of jobs and coolant drift, a quarter of the modules with thermal creep of
various rates starting at various times — fed through the same forecaster `gpuvet watch`
uses (10-minute steady-load windows of 1-minute samples). Prints the share of creeping
modules warned >= 72 h before they first reach their slowdown temperature (a 10-minute mean at
the first throttle point) (target >= 90 %),
the median lead time, and false alarms per 1000 module-days on healthy modules (target <= 1).

    python benchmarks/forecast_eval.py [--nodes 8] [--days 30] [--seed 1]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from gpuvet.backends.sim.telemetry import SimTelemetry
from gpuvet.node.build import build_node
from gpuvet.node.spec import ThermalCreepFault, load_spec
from gpuvet.watch.forecast import ThermalForecaster, WindowStat

SAMPLE_S, WINDOW_S = 60.0, 600.0
HORIZON_H = 72.0


def run(nodes: int, days: float, seed: int, creep_share: float = 0.25) -> dict[str, float]:
    spec, where = load_spec("hgx-h200-8")
    declared = build_node(spec, where)
    rng = np.random.default_rng(seed)
    times = np.arange(0.0, days * 86400.0, SAMPLE_S)
    per_window = int(WINDOW_S // SAMPLE_S)
    n_windows = len(times) // per_window
    leads, missed, false_alarms, healthy_days, not_reached = [], 0, 0, 0.0, 0
    for node in range(nodes):
        faults = []
        for m in declared.modules:
            if rng.random() < creep_share:
                faults.append(ThermalCreepFault(kind="thermal_creep", module=m.id,
                                                c_per_watt_per_day=float(rng.uniform(0.001, 0.003)),
                                                start=float(rng.uniform(0, 8 * 86400))))
        tel = SimTelemetry(declared, faults, seed=seed * 1000 + node, node_name=f"node{node}")
        creeping = {f.module for f in faults}
        thermal = {m.id: tel.thermal_model(m.id).first_point_c for m in declared.modules}
        forecaster = ThermalForecaster(thermal, horizon_s=HORIZON_H * 3600)
        traces = {m.id: tel.series(m.id, times) for m in declared.modules}
        windows = {}
        for m, tr in traces.items():
            cut = n_windows * per_window
            shape = (n_windows, per_window)
            power = tr["power_w"][:cut].reshape(shape)
            windows[m] = {
                "temp": tr["temp_c"][:cut].reshape(shape).mean(1), "power": power.mean(1),
                "cv": power.std(1) / power.mean(1), "util": tr["util"][:cut].reshape(shape).min(1),
                "ref": tr["reference_c"][:cut].reshape(shape).mean(1),
            }
        first_warning: dict[str, float] = {}
        for w in range(n_windows):
            t = (w + 1) * WINDOW_S
            stats = {m: WindowStat(t, float(x["temp"][w]), float(x["power"][w]), float(x["ref"][w]),
                                   bool(x["util"][w] >= 0.8 and x["cv"][w] <= 0.05)) for m, x in windows.items()}
            for event in forecaster.observe_windows(stats):
                if event.kind == "overheat_forecast":
                    if event.module in creeping:
                        first_warning.setdefault(event.module, event.time)
                    else:
                        false_alarms += 1
        for m in traces:
            if m not in creeping:
                healthy_days += days
                continue
            hot = np.flatnonzero(windows[m]["temp"] >= thermal[m])  # a 10-minute mean at the throttle point
            if not len(hot):
                not_reached += 1
                continue
            crossing = float((hot[0] + 1) * WINDOW_S)
            warned = first_warning.get(m)
            if warned is None or warned > crossing:
                missed += 1
                leads.append(0.0)
            else:
                leads.append((crossing - warned) / 3600)
    reached = len(leads)
    early = sum(1 for lead in leads if lead >= HORIZON_H)
    return {"creeping_reached": reached, "creeping_not_reached_in_run": not_reached,
            "warned_72h_ahead_share": early / reached if reached else float("nan"),
            "median_lead_h": statistics.median(leads) if leads else float("nan"), "missed": missed,
            "false_alarms_per_1000_module_days": 1000 * false_alarms / healthy_days if healthy_days else 0.0,
            "healthy_module_days": healthy_days}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, default=8)
    parser.add_argument("--days", type=float, default=30)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    started = time.perf_counter()
    r = run(args.nodes, args.days, args.seed)
    print(f"simulated fleet: {args.nodes} nodes x 8 H200, {args.days:g} days, seed {args.seed} (SIMULATED)")
    print(f"creeping modules that reached slowdown: {r['creeping_reached']} "
          f"(+{r['creeping_not_reached_in_run']} still below it at the end)")
    print(f"warned >= 72 h ahead: {100 * r['warned_72h_ahead_share']:.1f} %   (target >= 90 %)   missed: {r['missed']}")
    print(f"median lead time: {r['median_lead_h']:.0f} h")
    print(f"false alarms: {r['false_alarms_per_1000_module_days']:.2f} per 1000 healthy module-days   (target <= 1) "
          f"over {r['healthy_module_days']:.0f} module-days")
    print(f"took {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
