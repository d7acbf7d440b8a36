"""`gpuvet watch --prometheus-url` against a real Prometheus server (Debian's `prometheus`
package): 30 days of dcgm-exporter series for 64 modules on 8 nodes, four of them creeping,
written as OpenMetrics, loaded with `promtool tsdb create-blocks-from openmetrics`, served on
loopback. The data is at a one-hour resolution so that the whole test stays well under 30 s."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from gpuvet.cli.app import main
from tests.support.prometheus_server import go_env, require_prometheus, running_prometheus

DAYS, STEP_S, NODES, GPUS = 30, 3600, 8, 8
CREEPING = {"rack1/gpu3", "rack3/gpu0", "rack3/gpu6", "rack6/gpu2"}
# the backtest reads five racks, not eight: every creeping module, the re-pasted rack2/gpu1 and
# rack5's warmer room (a false-alarm trap) stay in; racks 0, 4 and 7 only cost time
BACKTEST_RACKS = "rack[12356]"
METRICS = ("DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_GPU_UTIL")


def _series(rng: np.random.Generator, n: int, creeping: bool, inlet: np.ndarray) -> dict[str, np.ndarray]:
    """Training jobs (busy most of the time), power ~650 W, T = inlet + 2 + R·P in whole degrees;
    a creeping module's R rises from day 10 so that it reaches 89 °C at load around day 31."""
    day = np.arange(n) * STEP_S / 86400.0
    util = np.where(rng.random(n) < 0.9, rng.uniform(95, 100, n), 0.0)
    power = np.where(util > 0, rng.normal(650, 8, n), 80.0)
    r = np.full(n, 0.050 * rng.uniform(0.97, 1.03))
    if creeping:
        r += np.clip(day - 10.0, 0, None) * (0.0955 - 0.050) / 21.0
    temp = np.round(inlet + 2.0 + r * power + rng.normal(0, 0.3, n))
    return {"DCGM_FI_DEV_GPU_TEMP": temp, "DCGM_FI_DEV_POWER_USAGE": power, "DCGM_FI_DEV_GPU_UTIL": util}


def write_openmetrics(path: Path, end: float) -> None:
    rng = np.random.default_rng(20)
    n = int(DAYS * 86400 / STEP_S)
    times = end - DAYS * 86400 + np.arange(n) * STEP_S
    data: dict[str, list[str]] = {m: [] for m in METRICS}
    for node in range(NODES):
        inlet = 24 + 1.5 * np.sin(2 * np.pi * times / 86400.0) + (3.0 if node == 5 else 0.0) * (times > times[n // 2])
        for gpu in range(GPUS):
            labels = (f'gpu="{gpu}",UUID="GPU-{node:02d}{gpu:02d}-0000",device="nvidia{gpu}",'
                      f'modelName="NVIDIA H200",Hostname="rack{node}"')
            series = _series(rng, n, f"rack{node}/gpu{gpu}" in CREEPING, inlet)
            for metric in METRICS:
                values = series[metric]
                data[metric] += [f"{metric}{{{labels}}} {v:.2f} {t:.0f}" for t, v in zip(times, values, strict=True)]
    with path.open("w") as f:
        for metric in METRICS:
            f.write(f"# TYPE {metric} gauge\n")
            f.write("\n".join(data[metric]) + "\n")
        f.write("# EOF\n")


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    require_prometheus()
    root = tmp_path_factory.mktemp("prometheus")
    end = float(int(time.time() // STEP_S) * STEP_S)
    write_openmetrics(root / "dcgm.om", end)
    data = root / "data"
    # one block for the month (the flag is hidden in 2.42's help, but there): 2 h blocks would be 360
    subprocess.run(["promtool", "tsdb", "create-blocks-from", "openmetrics", "-q", "--max-block-duration=744h",
                    str(root / "dcgm.om"), str(data)], check=True, capture_output=True, timeout=60, env=go_env())
    with running_prometheus(root, "global:\n  scrape_interval: 1h\n", data, "--storage.tsdb.retention.time=3650d",
                            "--query.lookback-delta=65m") as url:
        yield url


@pytest.mark.slow
def test_prometheus_history_names_exactly_the_creeping_modules(prometheus, capsys):
    code = main(["watch", "--prometheus-url", prometheus, "--since", "30d", "--step", "1h",
                 "--match", '{Hostname=~"rack.*"}', "--json", "--no-log"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert len(out["modules"]) == NODES * GPUS
    warned = {e["module"] for e in out["events"] if e["kind"] == "overheat_forecast"}
    assert warned == CREEPING
    forecast = {e["module"]: e for e in out["events"] if e["kind"] == "overheat_forecast"}
    assert all("estimated" in e["evidence"]["reference"] for e in forecast.values())
    assert all(e["predicted_crossing_utc"] for e in forecast.values())
    states = {f["module"]: f["state"] for f in out["forecast"]}
    assert {m for m, s in states.items() if s == "warned"} == CREEPING


def test_prometheus_match_narrows_to_one_rack(prometheus, capsys):
    code = main(["watch", "--prometheus-url", prometheus, "--since", "30d", "--step", "1h",
                 "--match", '{Hostname="rack3"}', "--json", "--no-log"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert {m["node"] for m in out["modules"]} == {"rack3"}
    assert {e["module"] for e in out["events"] if e["kind"] == "overheat_forecast"} == {"rack3/gpu0", "rack3/gpu6"}


def test_prometheus_errors_are_one_paragraph(prometheus, capsys):
    code = main(["watch", "--prometheus-url", prometheus, "--since", "30d", "--match", 'Hostname="x"', "--no-log"])
    assert code == 2 and "label selector" in capsys.readouterr().err
    code = main(["watch", "--prometheus-url", prometheus, "--since", "30d", "--match", '{Hostname="nowhere"}',
                 "--no-log"])
    assert code == 2 and "no series" in capsys.readouterr().err
    code = main(["watch", "--prometheus-url", "http://127.0.0.1:9", "--since", "1d", "--no-log"])
    assert code == 2 and "cannot reach Prometheus" in capsys.readouterr().err


@pytest.mark.slow
def test_backtest_on_prometheus_history(prometheus, capsys, tmp_path):
    """--backtest over the server's history: the creeping modules reach 89 °C at load around day 31
    (the fixture's design, one day after the history ends), so an events file saying they throttled
    then must find each warned days ahead; a healthy module re-pasted on day 20 was not warned."""
    end = float(int(time.time() // STEP_S) * STEP_S)
    day31 = end - DAYS * 86400 + 31 * 86400
    rows = [f"{m},{day31:.0f},throttled" for m in sorted(CREEPING)] + [f"rack2/gpu1,{end - 10 * 86400:.0f},repasted"]
    events = tmp_path / "events.csv"
    events.write_text("module,time,kind\n" + "\n".join(rows) + "\n")
    code = main(["watch", "--prometheus-url", prometheus, "--since", "30d", "--step", "1h",
                 "--match", f'{{Hostname=~"{BACKTEST_RACKS}"}}', "--backtest", str(events), "--json", "--no-log"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    verdicts = {v["module"]: v for v in out["backtest"]["verdicts"]}
    assert {m for m, v in verdicts.items() if v["result"] == "warned"} == CREEPING
    assert all(verdicts[m]["lead_h"] >= 72 for m in CREEPING)
    assert verdicts["rack2/gpu1"]["result"] == "maintenance without a warning"
    assert out["backtest"]["current"]["false_alarms"] == 0
    assert out["backtest"]["current"]["module_days"] == pytest.approx(5 * GPUS * DAYS, rel=0.05)
