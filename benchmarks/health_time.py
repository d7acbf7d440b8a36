"""How long `gpuvet health` takes, against the issue's limits: <= 1 s on a simulated node,
<= 10 s on a real 8-module node. Per preset: the check itself (median of --repeats runs in this
process, the first run's imports included separately) and the whole command as a scheduler runs
it (`python -m gpuvet health --sim P --format nhc`, a fresh process: interpreter start-up and
imports included). On a machine where NVML finds modules, the real node is timed too.

    python benchmarks/health_time.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

SIM_LIMIT_S = 1.0
REAL_LIMIT_S = 10.0
PRESETS = ("hgx-h200-8", "mesh-4", "pcie-8", "grouped-16", "nvl72")


def time_check(make_backend: object, repeats: int) -> tuple[float, float, str]:
    """(first run s, median of the rest s, status)."""
    from gpuvet.health.run import HealthOptions, run_health

    times, status = [], ""
    for _ in range(repeats + 1):
        backend = make_backend()  # type: ignore[operator]
        started = time.perf_counter()
        result = run_health(backend, HealthOptions())
        times.append(time.perf_counter() - started)
        backend.close()
        status = result.report.status.value
    return times[0], statistics.median(times[1:]), status


def time_command(args: list[str], repeats: int) -> float:
    walls = []
    for _ in range(repeats):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "gpuvet", *args], capture_output=True, check=False)
        walls.append(time.perf_counter() - started)
    return statistics.median(walls)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    from gpuvet.backends.select import open_backend
    from gpuvet.backends.sim.backend import SimBackend

    startup = time_command(["--version"], max(1, args.repeats // 2))
    print(f"reference in this run: `gpuvet --version` (interpreter start-up and the CLI's imports) {startup:.2f} s")
    print(f"{'node':<22} {'first s':>8} {'median s':>9} {'command s':>10} {'limit s':>8}  status  verdict")
    worst = 0.0
    for preset in PRESETS:
        first, median, status = time_check(lambda p=preset: SimBackend.from_ref(p), args.repeats)
        command = time_command(["health", "--sim", preset, "--format", "nhc"], max(1, args.repeats // 2))
        worst = max(worst, first / SIM_LIMIT_S, median / SIM_LIMIT_S)
        verdict = "within" if max(first, median) <= SIM_LIMIT_S else "OVER"
        print(f"{preset + ' (simulated)':<22} {first:8.3f} {median:9.3f} {command:10.2f} {SIM_LIMIT_S:8.1f}  "
              f"{status:<7} {verdict}")
    probe = open_backend()
    real = probe.name == "nvidia"
    probe.close()
    if real:
        first, median, status = time_check(open_backend, args.repeats)
        worst = max(worst, first / REAL_LIMIT_S, median / REAL_LIMIT_S)
        verdict = "within" if max(first, median) <= REAL_LIMIT_S else "OVER"
        print(f"{'this node (real)':<22} {first:8.3f} {median:9.3f} {'':>10} {REAL_LIMIT_S:8.1f}  {status:<7} {verdict}")
    else:
        print("this node: no NVIDIA module found, the real-node limit was not measured")
    print(f"worst share of its limit: {worst:.2f} (the check; 'command s' adds start-up and imports, compare "
          f"with the reference {startup:.2f} s)")
    return 0 if worst <= 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
