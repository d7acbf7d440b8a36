"""Public telemetry of healthy GPUs (tests/data/telemetry/real/, each with a NAME.source.md naming
where it came from and why it is believed healthy): `watch --replay` reads each one, as its
author logged it, without an overheating forecast. Two were written with --format=csv,noheader:
they are read with the --query-gpu list their source names (--fields); one is the plain
nvidia-smi table left printing in a loop.

None of them is a day of loaded telemetry with temperature and power, so the forecaster cannot
judge them: these tests hold that it says so, each module's state with the reason the log gives
(too short, no power), not that it stays quiet on a healthy fleet (benchmarks/telemetry_blind.py
measures that)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuvet.cli.app import main

REAL = Path(__file__).parent.parent / "data" / "telemetry" / "real"
FILES = sorted(p.name for p in REAL.iterdir() if not p.name.endswith(".source.md"))

# The flags each log needs, from its source note: the --query-gpu list of a header-less log, and
# a slowdown point for models the catalog does not hold (consumer cards), so the forecast is asked.
FLAGS = {
    "gpu20gb_idle_2h40m_noheader.csv": ["--fields", "timestamp,utilization.gpu,utilization.memory,memory.used,"
                                        "memory.total,temperature.gpu,power.draw", "--slowdown-c", "90"],
    "rtx4060_gtx1070_chess_2days_noheader.csv": ["--fields", "timestamp,index,name,temperature.gpu,utilization.gpu,"
                                                 "clocks.gr", "--slowdown-c", "90"],
    "rtx5080_laptop_15h_table.txt": ["--slowdown-c", "87"],
    "rtx4090_vlm_48min.csv": [],
    "a40_audio_training_6h_table.txt": ["--slowdown-c", "95"],
}
HEADERLESS = sorted(n for n, f in FLAGS.items() if "--fields" in f)
# why each log cannot carry a forecast, as the forecaster must say it
WHY_NOT = {
    "gpu20gb_idle_2h40m_noheader.csv": "too short a history: 2.8 h recorded",
    "rtx4060_gtx1070_chess_2days_noheader.csv": "power",
    "rtx5080_laptop_15h_table.txt": "too short a history: 16.2 h recorded",
    "rtx4090_vlm_48min.csv": "no temperature readings",  # no temperature.gpu column: --slowdown-c would not help
    "a40_audio_training_6h_table.txt": "too short a history: ",  # three boards: 3.0, 0.8 and 0.2 h
}


def _replay(capsys: pytest.CaptureFixture[str], name: str, *flags: str) -> tuple[int, str, str]:
    code = main(["watch", "--replay", str(REAL / name), "--json", "--no-log", *flags])
    out, err = capsys.readouterr()
    return code, out, err


def test_every_file_names_its_source_and_its_flags() -> None:
    assert len(FILES) >= 3 and set(FILES) == set(FLAGS)
    for name in FILES:
        side = REAL / f"{name}.source.md"
        assert side.is_file(), f"{name} has no {side.name}"
        text = side.read_text(encoding="utf-8")
        assert "https://github.com/" in text and "healthy" in text, side.name


@pytest.mark.parametrize("name", FILES)
def test_healthy_log_loads_without_a_forecast(capsys: pytest.CaptureFixture[str], name: str) -> None:
    code, out, err = _replay(capsys, name, *FLAGS[name])
    assert code in (0, 1), err
    doc = json.loads(out)
    assert doc["samples"] >= 70
    assert "overheat_forecast" not in [e["kind"] for e in doc["events"]], f"{name}: a healthy module got a forecast"
    assert doc["forecast"] and all(f["state"] == "insufficient" and WHY_NOT[name] in f["reason"]
                                   for f in doc["forecast"]), doc["forecast"]


@pytest.mark.parametrize("name", [n for n in FILES if "--slowdown-c" in FLAGS[n]])
def test_without_a_slowdown_point_the_table_and_the_summary_name_slowdown_c(capsys: pytest.CaptureFixture[str],
                                                                           name: str) -> None:
    """Consumer and A40 cards are not in the catalog: without --slowdown-c each module's reason and
    the summary's 'without enough data' both say to give it (they said neither)."""
    flags = FLAGS[name][:FLAGS[name].index("--slowdown-c")]  # the log's own flags, without the slowdown point
    code, out, err = _replay(capsys, name, *flags)
    assert code in (0, 1), err
    forecast = json.loads(out)["forecast"]
    assert forecast and all("no slowdown temperature" in f["reason"] and "give --slowdown-c C" in f["reason"]
                            and f["fix"].startswith("give --slowdown-c C") for f in forecast), forecast
    code = main(["watch", "--replay", str(REAL / name), "--no-log", *flags])
    text = " ".join(capsys.readouterr().out.split())
    summary = text[text.index("overheating forecast:"):]
    assert f"{len(forecast)} without enough data (" in summary and summary.index("--slowdown-c C") < summary.index(
        "module"), summary


def test_a_log_without_temperature_says_so_not_slowdown(capsys: pytest.CaptureFixture[str]) -> None:
    """The RTX 4090 log has no temperature.gpu column: a slowdown point would not help, and the
    reason says what is missing whether --slowdown-c is given or not."""
    for flags in ([], ["--slowdown-c", "90"]):
        code, out, err = _replay(capsys, "rtx4090_vlm_48min.csv", *flags)
        (status,) = json.loads(out)["forecast"]
        assert status["reason"].startswith("no temperature readings") and "fix" not in status, status


def test_the_plain_table_gives_each_printout_a_sample_at_its_time(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _replay(capsys, "rtx5080_laptop_15h_table.txt")
    doc = json.loads(out)
    assert code == 0 and doc["source"] == "nvidia-smi table"
    assert (doc["samples"], doc["first"], doc["last"]) == (73, "2025-10-09T23:47:45+00:00", "2025-10-10T15:18:59+00:00")


@pytest.mark.parametrize("name", HEADERLESS)
def test_a_headerless_log_without_fields_is_refused_naming_the_flag(capsys: pytest.CaptureFixture[str],
                                                                     name: str) -> None:
    code, out, err = _replay(capsys, name)
    assert code == 2 and out == ""
    assert err.startswith("error:") and name in err and "--fields" in err and "Traceback" not in err


@pytest.mark.parametrize(("fields", "words"), [
    ("timestamp,index", "columns but --fields names 2"),
    ("memory.used,memory.total,utilization.memory,fan.speed,pstate,name,index", "no time, temperature, power"),
    ("timestamp,utilization.gpu,utilization.memory,memory.used,memory.total,power.draw,temperature.gpu",
     "column 7 is 'temperature.gpu' in --fields but its value '11.64 W' is in W"),  # two fields swapped
    ("timestamp,temperature.gpu,$(reboot)", "is not a --query-gpu field name"),
])
def test_bad_fields_are_refused(capsys: pytest.CaptureFixture[str], fields: str, words: str) -> None:
    code, _, err = _replay(capsys, "gpu20gb_idle_2h40m_noheader.csv", "--fields", fields)
    assert code == 2 and words in err, err


def test_a_board_change_under_one_index_is_its_own_module(capsys: pytest.CaptureFixture[str]) -> None:
    """The A40 log's jobs ran on three boards (bus CA, 31, B1), each printed as GPU 0: an index is
    the driver's order, not a board, so each bus id is its own module (a forecast over one history
    would mix boards), and a note says where the index changed boards."""
    code, out, err = _replay(capsys, "a40_audio_training_6h_table.txt", *FLAGS["a40_audio_training_6h_table.txt"])
    doc = json.loads(out)
    assert code == 0 and doc["source"] == "nvidia-smi table"
    assert (doc["samples"], doc["first"], doc["last"]) == (207, "2026-01-25T17:24:38+00:00", "2026-01-25T23:38:08+00:00")
    assert [f["module"] for f in doc["forecast"]] == [
        "a40_audio_training_6h_table/gpu0", "a40_audio_training_6h_table/gpu0@0000:31:00.0",
        "a40_audio_training_6h_table/gpu0@0000:B1:00.0"]
    assert sum("names another board from here on" in n for n in doc["notes"]) == 2


def test_a_csv_index_whose_uuid_changes_is_another_module(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The same for a --query-gpu CSV: index 0 with a new UUID half-way (a replaced card) is read
    as a second module, not one card's history (written text, two hours a minute apart)."""
    rows = ["timestamp, index, uuid, temperature.gpu, power.draw [W], utilization.gpu [%]"]
    for k in range(120):
        uuid = "GPU-aaaaaaaa-0000-0000-0000-000000000001" if k < 60 else "GPU-bbbbbbbb-0000-0000-0000-000000000002"
        rows.append(f"2026/01/25 {10 + k // 60:02d}:{k % 60:02d}:00.000, 0, {uuid}, 60, 300.00 W, 90 %")
    log = tmp_path / "swap.csv"
    log.write_text("\n".join(rows) + "\n")
    assert main(["watch", "--replay", str(log), "--json", "--no-log"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert sorted(f["module"] for f in doc["forecast"]) == [
        "swap/gpu0", "swap/gpu0@GPU-bbbbbbbb-0000-0000-0000-000000000002"]


def test_the_forecast_table_keeps_module_names_whole_and_says_a_shared_reason_once(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The A40 log's three modules showed as three identical 'a40_audio_training…' rows, each with
    the same eight-line reason, at 80 columns."""
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["watch", "--replay", str(REAL / "a40_audio_training_6h_table.txt"), "--no-log"]) in (0, 1)
    out = capsys.readouterr().out
    assert "…" not in out and all(len(line) <= 80 for line in out.splitlines())
    names = {"a40_audio_training_6h_table/gpu0", "a40_audio_training_6h_table/gpu0@0000:31:00.0",
             "a40_audio_training_6h_table/gpu0@0000:B1:00.0"}
    assert names <= {line.split()[0] for line in out.splitlines() if "insufficient" in line}, out
    assert out.count("every module below: no slowdown temperature") == 1, out
