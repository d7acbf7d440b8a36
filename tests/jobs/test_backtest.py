"""`gpuvet watch --replay FILES… --backtest EVENTS.csv`: the forecast scored against what really
happened, end to end on a generated fleet (simulated nvidia-smi logs written here, with a known
events file taken from the generator's own temperatures), the scoring rules one by one, and bad
events files refused in one paragraph with exit 2."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from gpuvet.cli.app import main
from gpuvet.errors import GpuvetError
from gpuvet.watch.backtest import CONFIRM_S, SWEEP, Outcome, read_outcomes, score
from gpuvet.watch.forecast import ForecastSettings
from tests.support.fleet_logs import START, node_csv

DAY = 86400.0




@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, float]:
    root = tmp_path_factory.mktemp("fleet")
    crossing = node_csv(root / "rack1.csv", 10, 2, seed=1)
    node_csv(root / "rack2.csv", 10, None, seed=2)
    assert crossing is not None
    return root, crossing


def _events(path: Path, rows: list[str]) -> Path:
    path.write_text("module,time,kind\n" + "\n".join(rows) + "\n")
    return path


def test_backtest_on_a_generated_fleet_scores_the_warning_and_sweeps(fleet, tmp_path, capsys):
    root, crossing = fleet
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(crossing))
    events = _events(tmp_path / "events.csv", [f"rack1/gpu2,{stamp},throttled",
                                               f"GPU-rack2-0,{START + 5 * DAY:.0f},repasted"])
    code = main(["watch", "--replay", str(root / "rack1.csv"), str(root / "rack2.csv"), "--backtest", str(events),
                 "--json", "--no-log"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    bt = out["backtest"]
    assert bt["outcomes"] == 2 and bt["unknown_modules"] == []
    verdicts = {v["module"]: v for v in bt["verdicts"]}
    assert verdicts["rack1/gpu2"]["result"] == "warned" and verdicts["rack1/gpu2"]["lead_h"] >= 72
    assert verdicts["rack2/gpu0"]["result"] == "maintenance without a warning"  # named by UUID in the file
    assert bt["current"]["false_alarms"] == 0 and bt["current"]["missed"] == 0
    assert bt["current"]["module_days"] == pytest.approx(8 * 10, rel=0.05)
    assert len(bt["sweep"]) == len(SWEEP) and bt["best"] == bt["sweep"][0]
    assert bt["best"]["warned"] == 1
    # the sweep judges with the forecaster's own rule: its default setting scores as the replay did
    today = ForecastSettings()  # the default setting, wherever the pooled sweeps put it
    as_run = next(s for s in bt["sweep"] if s["settings"] == {"alpha": today.alpha, "margin_h": today.margin_s / 3600,
                                                               "min_rise_c": today.min_rise_c,
                                                               "step_min_c": today.step_min_c})
    assert {k: as_run[k] for k in ("warned", "late", "missed", "false_alarms")} == \
        {k: bt["current"][k] for k in ("warned", "late", "missed", "false_alarms")}
    # every module's forecast state is in the JSON with what it rests on
    states = {f["module"]: f for f in out["forecast"]}
    assert states["rack1/gpu2"]["state"] == "warned"
    assert states["rack2/gpu1"]["state"] == "watching" and states["rack2/gpu1"]["r_now_c_per_w"] > 0
    assert "estimated" in states["rack2/gpu1"]["reference"]


def test_backtest_text_names_verdicts_and_the_best_settings(fleet, tmp_path, capsys):
    root, crossing = fleet
    events = _events(tmp_path / "events.csv", [f"rack1/gpu2,{crossing:.0f},throttled"])
    code = main(["watch", "--replay", str(root / "rack1.csv"), "--backtest", str(events), "--no-log"])
    out = capsys.readouterr().out
    assert code == 0
    assert "warned >= 72 h before the first slowdown: 1 of 1" in out
    assert "threshold sweep (27 settings, best first)" in out and "best: alpha" in out


def test_backtest_text_at_80_columns_keeps_words_and_times_whole(fleet, tmp_path, capsys, monkeypatch):
    """With a node's long name 'throt/tled' and 'warne/d' were split across lines at 80 columns:
    the event and the times stay whole, the times losing their year."""
    monkeypatch.setenv("COLUMNS", "80")
    root, crossing = fleet
    long = tmp_path / "rack01-row07-supernode-a.csv"
    long.write_bytes((root / "rack1.csv").read_bytes())
    events = _events(tmp_path / "events.csv", [f"rack01-row07-supernode-a/gpu2,{crossing:.0f},throttled"])
    assert main(["watch", "--replay", str(long), "--backtest", str(events), "--no-log"]) == 0
    out = capsys.readouterr().out
    assert all(len(line) <= 80 for line in out.splitlines()), max(out.splitlines(), key=len)
    (row,) = [ln for ln in out.splitlines() if ln.startswith("rack01-row07") and "throt" in ln]  # a long name folds
    assert "throttled" in row and "warned" in row and "20" + "26-" not in row, row
    assert len(re.findall(r"\b\d\d-\d\d \d\d:\d\d\b", row)) == 2, row


def test_a_warning_nothing_followed_is_a_false_alarm_and_one_near_the_end_is_open():
    s = ForecastSettings()
    end = {"a": 30 * DAY, "b": 30 * DAY}
    sc = score({"a": [5 * DAY], "b": [25 * DAY]}, [], 60.0, s, 72 * 3600.0, end)
    assert sc.false_alarms == [("a", 5 * DAY)] and sc.open == [("b", 25 * DAY)]
    assert sc.per_1000 == pytest.approx(1000 / 60)
    assert 30 * DAY - 25 * DAY < CONFIRM_S


def test_warned_late_missed_and_maintenance_verdicts():
    outcomes = [Outcome("a", 10 * DAY, "throttled", 2), Outcome("a", 11 * DAY, "throttled", 3),
                Outcome("b", 10 * DAY, "throttled", 4), Outcome("c", 10 * DAY, "throttled", 5),
                Outcome("d", 8 * DAY, "repasted", 6), Outcome("d", 12 * DAY, "throttled", 7)]
    warnings = {"a": [5 * DAY], "b": [9.5 * DAY], "d": [6 * DAY]}
    sc = score(warnings, outcomes, 100.0, ForecastSettings(), 72 * 3600.0, {m: 20 * DAY for m in "abcd"})
    results = [(v.module, v.kind, v.result) for v in sc.verdicts]
    assert results == [("a", "throttled", "warned"), ("b", "throttled", "late"), ("c", "throttled", "missed"),
                       ("d", "repasted", "warned before maintenance"), ("d", "throttled", "missed")]
    assert sc.verdicts[0].lead_h == pytest.approx(120) and sc.false_alarms == []


def test_event_times_iso_with_and_without_zone_and_unix(tmp_path):
    path = _events(tmp_path / "e.csv", ["n/gpu0,2026-01-13T02:29:00Z,throttled", "n/gpu1,2026-01-13 02:29,Repasted",
                                        "n/gpu2,1768271340,replaced", ""])
    got = read_outcomes(path)
    assert [(o.module, o.kind) for o in got] == [("n/gpu0", "throttled"), ("n/gpu1", "repasted"),
                                                 ("n/gpu2", "replaced")]
    assert got[0].time == got[1].time == 1768271340.0 == got[2].time


@pytest.mark.parametrize(("text", "words"), [
    ("", "empty"),
    ("module,when,kind\nn/gpu0,1768271340,throttled\n", "no time column"),
    ("module,time,kind\n", "no events"),
    ("module,time,kind\nn/gpu0,1768271340,melted\n", "'melted' is not one of throttled, repasted, replaced"),
    ("module,time,kind\nn/gpu0,yesterday\x1b[31m,throttled\n", "neither ISO 8601 nor Unix seconds"),
    ("module,time,kind\nn/gpu0,1768271340\n", "line 2 has 2 cells"),
    ("module,time,kind\n,1768271340,throttled\n", "names no module"),
])
def test_bad_events_files_are_one_paragraph_and_exit_2(fleet, tmp_path, capsys, text, words):
    root, _ = fleet
    path = tmp_path / "events.csv"
    path.write_text(text)
    with pytest.raises(GpuvetError, match="--backtest"):
        read_outcomes(path)
    assert main(["watch", "--replay", str(root / "rack1.csv"), "--backtest", str(path), "--no-log"]) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err and "\x1b" not in err


def test_backtest_needs_history_and_known_modules(fleet, tmp_path, capsys):
    root, _ = fleet
    events = _events(tmp_path / "e.csv", ["elsewhere/gpu9,1768271340,throttled"])
    assert main(["watch", "--backtest", str(events), "--no-log"]) == 2
    assert "add --replay" in capsys.readouterr().err
    assert main(["watch", "--replay", str(root / "rack1.csv"), "--backtest", str(events), "--no-log"]) == 2
    assert "none of the 1 modules in the events file is in the telemetry" in capsys.readouterr().err
    assert main(["watch", "--replay", str(root / "rack1.csv"), "--backtest", str(tmp_path), "--no-log"]) == 2
    assert "not a regular file" in capsys.readouterr().err
    assert main(["watch", "--replay", str(root / "rack1.csv"), "--backtest", str(tmp_path / "nope.csv"),
                 "--no-log"]) == 2
    assert "cannot read it" in capsys.readouterr().err


REAL_4090 = Path(__file__).parent.parent / "data" / "telemetry" / "real" / "rtx4090_vlm_48min.csv"


def test_a_module_in_the_telemetry_without_temperature_is_named_as_such_not_missing(tmp_path, capsys):
    """The RTX 4090 log (real, no temperature.gpu column) lists rtx4090_vlm_48min/gpu0 as a module;
    an event for it was refused as 'not in the telemetry (… the telemetry has e.g. 'nothing')'. The
    refusal now says the module is there without temperature readings, and what the forecast needs."""
    events = _events(tmp_path / "e.csv", ["rtx4090_vlm_48min/gpu0,2026-01-03T15:50:00,throttled"])
    assert main(["watch", "--replay", str(REAL_4090), "--backtest", str(events), "--no-log"]) == 2
    err = capsys.readouterr().err
    assert "'rtx4090_vlm_48min/gpu0' is in the telemetry but has no temperature readings" in err, err
    assert "temperature and power together" in err and "temperature.gpu" in err
    assert "'nothing'" not in err and "is in the telemetry (e.g." not in err
    other = _events(tmp_path / "o.csv", ["elsewhere/gpu9,2026-01-03T15:50:00,throttled"])
    assert main(["watch", "--replay", str(REAL_4090), "--backtest", str(other), "--no-log"]) == 2
    err = capsys.readouterr().err
    assert "is in the telemetry (e.g. 'elsewhere/gpu9'; the telemetry has e.g. 'rtx4090_vlm_48min/gpu0')" in err


def test_an_unscorable_module_beside_scored_ones_is_listed_apart(fleet, tmp_path, capsys):
    root, crossing = fleet
    when = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(crossing))
    events = _events(tmp_path / "e.csv", [f"rack1/gpu2,{when},throttled",
                                          "rtx4090_vlm_48min/gpu0,2026-01-03T15:50:00,throttled"])
    assert main(["watch", "--replay", str(root / "rack1.csv"), str(REAL_4090), "--backtest", str(events),
                 "--no-log", "--json"]) in (0, 1)
    bt = json.loads(capsys.readouterr().out)["backtest"]
    assert bt["unscored_modules"] == ["rtx4090_vlm_48min/gpu0"] and bt["unknown_modules"] == []
