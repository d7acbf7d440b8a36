"""Replaying recorded telemetry: each format read by content, bad files refused in one paragraph,
the forecast's robustness to what real fleets do, and `gpuvet watch --replay` end to end."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest

from gpuvet.cli.app import main
from gpuvet.errors import GpuvetError
from gpuvet.logbook.store import Logbook
from gpuvet.watch.forecast import ThermalForecaster, WindowStat
from gpuvet.watch.readers import detect, read_file

QUERY = """timestamp, index, name, uuid, pci.bus_id, temperature.gpu, power.draw [W], utilization.gpu [%], \
clocks.current.sm [MHz], clocks_event_reasons.active, ecc.errors.corrected.volatile.total
2024/01/16 14:44:16.981, 0, NVIDIA H200, GPU-aaaa, 00000000:18:00.0, 45, 310.12 W, 55 %, 1980 MHz, \
0x0000000000000000, 0
2024/01/16 14:44:16.985, 1, NVIDIA H200, GPU-bbbb, 00000000:2A:00.0, [N/A], [Not Supported], 55 %, 1980 MHz, \
0x0000000000000024, [N/A]
2024/01/16 14:45:16.981, 0, NVIDIA H200, GPU-aaaa, 00000000:18:00.0, 46, 312.12 W, 56 %, 1980 MHz, \
0x0000000000000000, 3
uuid, timestamp, power.draw, temperature.gpu, index
GPU-bbbb, 2024/01/16 14:52:00.001, 300.5, 47, 1
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_query_csv_any_order_units_na_and_a_restart_with_other_columns(tmp_path):
    rec = read_file(write(tmp_path, "node7.csv", QUERY), 1.0)
    assert rec.source == "nvidia-smi --query-gpu csv" and not rec.relative_time
    assert sorted(rec.modules) == ["node7/gpu0", "node7/gpu1"]
    assert rec.modules["node7/gpu1"].uuid == "GPU-bbbb" and rec.modules["node7/gpu0"].model == "NVIDIA H200"
    a0, b0, a1, b1 = rec.samples
    assert (a0.temp_c, a0.power_w, a0.util, a0.sm_clock_mhz) == (45.0, 310.12, 0.55, 1980.0)
    assert b0.temp_c is None and b0.power_w is None and b0.throttle == 0x24 and b0.ecc_corrected is None
    assert a1.ecc_corrected == 3 and a1.t - a0.t == 60.0
    assert (b1.power_w, b1.temp_c, b1.module) == (300.5, 47.0, "node7/gpu1")  # after the restart's new header
    assert a0.t == pytest.approx(1705416256.981)


def test_query_csv_dashed_dates_midnight_and_cells_that_are_no_reading(tmp_path):
    text = ("timestamp, index, temperature.gpu, power.draw [W]\n"
            "2024-01-16 23:59:30.500, 0, 61, 300.5 W\n"
            "2024-01-17 00:00:30.500, 0, nan, inf W\n"
            "2024-01-17 00:01:30, 0, [Unknown Error], -\n")
    a, b, c = read_file(write(tmp_path, "n.csv", text), 60.0).samples
    assert (a.temp_c, a.power_w) == (61.0, 300.5) and a.t == pytest.approx(1705449570.5)
    assert b.t - a.t == pytest.approx(60.0) and c.t - b.t == pytest.approx(59.5)
    assert (b.temp_c, b.power_w, c.temp_c, c.power_w) == (None, None, None, None)


def test_query_csv_nounits_without_timestamps_uses_the_interval(tmp_path):
    text = "index, temperature.gpu, power.draw\n0, 40, 100.5\n1, 41, 101\n0, 42, 102\n1, 43, 103\n"
    rec = read_file(write(tmp_path, "n.csv", text), 60.0)
    assert rec.relative_time and any("no timestamp column" in n for n in rec.notes)
    assert [(s.module, s.t) for s in rec.samples] == [("n/gpu0", 0.0), ("n/gpu1", 0.0), ("n/gpu0", 60.0),
                                                      ("n/gpu1", 60.0)]


def test_dmon_with_date_and_time_and_without(tmp_path):
    dt = ("#Date       Time        gpu    pwr  gtemp  mtemp     sm    mem    enc    dec   mclk   pclk  pviol  tviol\n"
          "#YYYYMMDD   HH:MM:SS    Idx      W      C      C      %      %      %      %    MHz    MHz      %   bool\n"
          " 20240104   13:54:35      0    612     71      -     98     40      0      0   2619   1980      0      0\n"
          " 20240104   13:54:35      1    380     60      -     97     40      0      0   2619   1755      0      1\n"
          " 20240104   13:54:36      0    615     71      -     98     40      0      0   2619   1980      0      0\n")
    rec = read_file(write(tmp_path, "h1.dmon", dt), 1.0)
    assert rec.source == "nvidia-smi dmon" and not rec.relative_time
    s = rec.samples[1]
    assert (s.module, s.power_w, s.temp_c, s.util, s.sm_clock_mhz, s.throttle) == ("h1/gpu1", 380, 60, 0.97, 1755, 0x20)
    plain = ("# gpu   pwr gtemp mtemp    sm   mem   enc   dec  mclk  pclk\n"
             "# Idx     W     C     C     %     %     %     %   MHz   MHz\n"
             "    0    43    28     -     0     0     0     0   877   135\n"
             "    0    44    29     -     0     0     0     0   877   135\n")
    rec = read_file(write(tmp_path, "h2.log", plain), 5.0)
    assert rec.relative_time and [s.t for s in rec.samples] == [0.0, 5.0]


def test_pmon_sums_process_shares_and_says_it_cannot_forecast(tmp_path):
    text = ("# gpu        pid  type    sm   mem   enc   dec   command\n"
            "# Idx          #   C/G     %     %     %     %   name\n"
            "    0      12345     C    45    10     -     -   python train.py\n"
            "    0      12346     C    30     5     -     -   python\n    1          -     -     -     -     -     -   -\n")
    rec = read_file(write(tmp_path, "p.txt", text), 1.0)
    assert {s.module: s.util for s in rec.samples} == {"p/gpu0": 0.75, "p/gpu1": 0.0}
    assert any("pmon has utilisation only" in n for n in rec.notes)


def test_exposition_dcgm_and_gpuvet_names(tmp_path):
    text = ("# HELP DCGM_FI_DEV_GPU_TEMP GPU temperature (in C).\n# TYPE DCGM_FI_DEV_GPU_TEMP gauge\n"
            'DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-1",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",'
            'Hostname="n1"} 61 1700000000000\n'
            'DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-1",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",'
            'Hostname="n1"} 612.5 1700000000000\n'
            'DCGM_FI_DEV_XID_ERRORS{gpu="0",UUID="GPU-1",Hostname="n1"} 79 1700000060000\n'
            'DCGM_FI_DEV_SLOWDOWN_TEMP{gpu="0",UUID="GPU-1",Hostname="n1"} 87 1700000060000\n'
            'gpuvet_module_temperature_celsius{uuid="GPU-2",bus_id="",model="H200-SXM",module="gpu3",'
            'instance="n2:9400"} 55.5 1700000000.5\n'
            'gpuvet_module_throttle{uuid="GPU-2",module="gpu3",instance="n2:9400",reason="sw_thermal_slowdown"} '
            '1 1700000000.5\n')
    rec = read_file(write(tmp_path, "dump.prom", text), 1.0)
    by = {(s.module, s.t): s for s in rec.samples}
    first = by[("n1/gpu0", 1700000000.0)]
    assert (first.temp_c, first.power_w, first.uuid) == (61.0, 612.5, "GPU-1")
    assert by[("n1/gpu0", 1700000060.0)].xids == (79,)
    assert rec.modules["n1/gpu0"].slowdown_c == 87.0
    other = by[("n2:9400/gpu3", 1700000000.5)]
    assert (other.temp_c, other.throttle) == (55.5, 0x20)


def test_range_json(tmp_path):
    doc = {"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": {"__name__": "DCGM_FI_DEV_GPU_TEMP", "gpu": "2", "Hostname": "r3", "UUID": "GPU-9"},
         "values": [[1700000000, "70"], [1700000060, "71"]]},
        {"metric": {"__name__": "DCGM_FI_DEV_GPU_UTIL", "gpu": "2", "Hostname": "r3", "UUID": "GPU-9"},
         "values": [[1700000000, "88"]]}]}}
    rec = read_file(write(tmp_path, "q.json", json.dumps(doc)), 1.0)
    assert [(s.module, s.t, s.temp_c, s.util) for s in rec.samples] == [
        ("r3/gpu2", 1700000000.0, 70.0, 0.88), ("r3/gpu2", 1700000060.0, 71.0, None)]


@pytest.mark.parametrize(("text", "words"), [
    ("hello world\n", "not a telemetry format"),
    ("index, temperature.gpu, power.draw\n", "no sample rows"),
    ('DCGM_FI_DEV_GPU_TEMP{gpu="0"} 61\n', "no timestamps"),
    ('{"status": "error"}', "not a Prometheus range-query answer"),
    ("{broken", "not JSON"),
])
def test_bad_files_are_one_paragraph_and_exit_2(tmp_path, capsys, text, words):
    path = write(tmp_path, "bad.txt", text)
    with pytest.raises(GpuvetError, match=words):
        read_file(path, 1.0)
    code = main(["watch", "--replay", str(path), "--no-log"])
    err = capsys.readouterr().err
    assert code == 2 and words in err and "Traceback" not in err


def test_detect_never_looks_at_the_name():
    assert detect("timestamp, index, temperature.gpu, power.draw [W]\n") == "query-csv"
    assert detect("#Date Time gpu pwr gtemp\n") == "dmon"
    assert detect("# gpu pid type sm mem\n") == "pmon"
    assert detect("# TYPE DCGM_FI_DEV_GPU_TEMP gauge\n") == "exposition"
    assert detect('  {"data": {}}') == "range-json"
    assert detect("just text\n") is None


# --- the forecast on what real fleets do ----------------------------------------------------
def _feed(fc: ThermalForecaster, hours: int, stat) -> list:
    events = []
    for hour in range(hours):
        for k in range(3):  # 20-minute windows
            events += fc.observe_windows({m: stat(m, hour + k / 3) for m in fc.slowdown_c})
    return events


def test_a_whole_node_warming_together_is_not_a_module_fault():
    fc = ThermalForecaster({f"g{i}": 89.0 for i in range(4)}, evaluate_every_s=3600)
    rng = np.random.default_rng(1)

    def stat(m: str, h: float) -> WindowStat:  # inlet +8 °C over days 3-6: every module alike
        inlet = 24 + 8 * min(max((h / 24 - 3) / 3, 0), 1)
        return WindowStat(h * 3600 + 600, inlet + 0.06 * 650 + rng.normal(0, 0.2), 650.0, None, True, "H200")
    events = _feed(fc, 24 * 9, stat)
    assert [e for e in events if e.kind == "overheat_forecast"] == []
    assert all("estimated" in fc.status(m, 9 * 86400).reference for m in fc.slowdown_c)


def test_a_step_after_maintenance_resets_the_trend_instead_of_forecasting():
    fc = ThermalForecaster({f"g{i}": 89.0 for i in range(4)}, evaluate_every_s=3600)
    rng = np.random.default_rng(2)

    def stat(m: str, h: float) -> WindowStat:  # g1 re-seated on day 5: 4 °C warmer at load from then on
        step = 4.0 if m == "g1" and h >= 120 else 0.0
        return WindowStat(h * 3600 + 600, 63 + step + rng.normal(0, 0.2), 650.0, None, True, "H200")
    events = _feed(fc, 24 * 10, stat)
    assert [e.module for e in events if e.kind == "forecast_reset"] == ["g1"]
    assert [e for e in events if e.kind == "overheat_forecast"] == []


def test_loads_never_steady_still_forecast_a_creep_against_peers_at_comparable_load():
    fc = ThermalForecaster({f"g{i}": 89.0 for i in range(6)}, evaluate_every_s=3600)
    rng = np.random.default_rng(3)

    def stat(m: str, h: float) -> WindowStat:  # inference: 40-70 % busy, power wandering 300-480 W
        power = 390 + 90 * np.sin(h / 5 + int(m[1]) * 0.1) + rng.normal(0, 10)
        r = 0.06 + (0.010 * max(h / 24 - 2, 0) if m == "g4" else 0.0)  # 89 °C at 480 W on day 9
        return WindowStat(h * 3600 + 600, 25 + r * power + rng.normal(0, 0.3), float(power), None, True, "H200")
    events = _feed(fc, 24 * 12, stat)
    assert {e.module for e in events if e.kind == "overheat_forecast"} == {"g4"}
    warning = next(e for e in events if e.kind == "overheat_forecast")
    assert "estimated" in warning.evidence["reference"] and warning.evidence["hours"] >= 24


def test_a_peer_dropping_out_moves_no_one_elses_reference():
    """Peers enter the reference less their usual offset: when the warmest stops being steady
    (throttled, idle) on day 4, the others' excess must not jump (no step, no forecast)."""
    fc = ThermalForecaster({f"g{i}": 89.0 for i in range(4)}, evaluate_every_s=3600)
    rng = np.random.default_rng(4)
    base = {"g0": 60.0, "g1": 63.0, "g2": 66.0, "g3": 69.0}

    def stat(m: str, h: float) -> WindowStat:
        steady = not (m == "g3" and h >= 96)
        return WindowStat(h * 3600 + 600, base[m] + rng.normal(0, 0.2), 650.0, None, steady, "H200")
    events = _feed(fc, 24 * 8, stat)
    others = [e for e in events if e.module != "g3" and e.kind in ("forecast_reset", "overheat_forecast")]
    assert others == []
    assert fc.status("g1", 8 * 86400).state == "watching"


def test_mixed_models_compare_only_with_their_own_and_say_so():
    models = {"a0": "H100", "a1": "H100", "a2": "H100", "b0": "A100"}
    fc = ThermalForecaster({m: 89.0 for m in models}, evaluate_every_s=3600)

    def stat(m: str, h: float) -> WindowStat:
        return WindowStat(h * 3600 + 600, 60.0 if models[m] == "H100" else 50.0, 650.0, None, True, models[m])
    _feed(fc, 48, stat)
    assert fc.status("a0", 48 * 3600).state == "watching"
    assert "fewer than two other modules of the same model" in fc.status("b0", 48 * 3600).reason


def test_the_forecast_says_what_it_lacked():
    fc = ThermalForecaster({"g0": 89.0, "g1": 89.0, "g2": 89.0}, evaluate_every_s=3600)
    _feed(fc, 48, lambda m, h: WindowStat(h * 3600 + 600, 50.0, 200.0, None, False, "H200"))
    assert "no steady-load windows" in fc.status("g0", 48 * 3600).reason
    short = ThermalForecaster({"g0": 89.0}, evaluate_every_s=3600)
    _feed(short, 5, lambda m, h: WindowStat(h * 3600 + 600, 60.0, 650.0, 25.0, True, "H200"))
    assert "too short a history" in short.status("g0", 5 * 3600).reason
    short.observe_windows({"unknown": WindowStat(6 * 3600, 60.0, 650.0, 25.0, True, "RTX 4090")})
    assert "no slowdown temperature" in short.status("unknown", 6 * 3600).reason  # read, but no slowdown point
    assert "no temperature readings" in short.status("never", 6 * 3600).reason  # no sample with a temperature


def test_theil_sen_is_scipys_with_its_interval_ties_included():
    from scipy.stats import theilslopes

    from gpuvet.watch.forecast import theil_sen
    rng = np.random.default_rng(0)
    for n in (3, 4, 25, 48, 96):
        x = np.sort(rng.choice(np.arange(200), n, replace=False)) / 24.0
        y = np.round(rng.normal(0, 1, n), 1)  # rounded: ties in y, as whole degrees give
        expected = theilslopes(y, x, 0.9)
        assert theil_sen(x, y, 0.9) == pytest.approx((expected[0], expected[1], expected[2], expected[3]))


# --- end to end -----------------------------------------------------------------------------
def _fleet_csv(path: Path, days: float, creeping: int) -> float:
    """One node, 4 H200, a 5-minute nvidia-smi log; module ``creeping`` warms by R from day 1."""
    rng = np.random.default_rng(7)
    start = 1_750_000_000.0
    rows = ["timestamp, index, name, uuid, temperature.gpu, power.draw [W], utilization.gpu [%]"]
    for k in range(int(days * 288)):
        t = start + k * 300
        day = k / 288
        for g in range(4):
            r = 0.05 + (0.006 * max(day - 1, 0) if g == creeping else 0.0)
            power = 640 + rng.normal(0, 5)
            temp = 24 + 1.5 * np.sin(2 * np.pi * day) + r * power + rng.normal(0, 0.3)
            stamp = time.strftime("%Y/%m/%d %H:%M:%S", time.gmtime(t))
            rows.append(f"{stamp}.000, {g}, NVIDIA H200, GPU-{g}, {temp:.0f}, {power:.2f} W, 97 %")
    path.write_text("\n".join(rows) + "\n")
    return start


def test_replay_cli_warns_the_creeping_module_and_logs_recorded_times(tmp_path, capsys):
    start = _fleet_csv(tmp_path / "rack9.csv", 6, creeping=2)
    book = tmp_path / "book.db"
    code = main(["watch", "--replay", str(tmp_path / "rack9.csv"), "--json", "--logbook", str(book)])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["replay"] and out["samples"] == 6 * 288 * 4
    warned = [e for e in out["events"] if e["kind"] == "overheat_forecast"]
    assert [e["module"] for e in warned] == ["rack9/gpu2"]
    assert start + 86400 < warned[0]["time"] < start + 6 * 86400 and warned[0]["time_utc"].startswith("2025-06")
    assert "estimated" in warned[0]["evidence"]["reference"]
    rows = Logbook(book).module_events(kinds=("overheat_forecast",))
    assert rows and rows[0]["time"] == warned[0]["time"]
    data = rows[0]["data"] if isinstance(rows[0]["data"], dict) else json.loads(rows[0]["data"])
    assert data["recorded_utc"] == warned[0]["time_utc"]


def test_replay_flags_are_checked(tmp_path, capsys):
    assert main(["watch", "--replay", "--no-log"]) == 2
    assert "needs one or more telemetry files" in capsys.readouterr().err
    assert main(["watch", "--replay", str(tmp_path / "missing.csv"), "--no-log"]) == 2
    assert "cannot read it" in capsys.readouterr().err
