"""`watch --replay` says how many rows it skipped for a timestamp that is no date and time, and
the first one's line, as it says dropped readings (newcomer run, finding 3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuvet.cli.app import main
from gpuvet.watch.read_smi import read_query_csv

HEADER = ("timestamp, index, name, pci.bus_id, temperature.gpu, power.draw [W], clocks.sm [MHz], clocks.mem [MHz], "
          "utilization.gpu [%]\n")
ROW = "{t}, {i}, NVIDIA H200, 00000000:1{i}:00.0, 70, 650 W, 1980 MHz, 3201 MHz, 99 %\n"
LOG = HEADER + "".join(ROW.format(t=t, i=i) for t, i in [
    ("2026/11/01 00:00:00.000", 0), ("2026/11/01 00:00:00.000", 1), ("9999/99/99 99:99:99", 0),
    ("2026/13/45 00:01:00.000", 1), ("2026/11/01 00:01:00.000", 0)])


def test_rows_with_impossible_timestamps_are_counted_in_a_note_with_the_first_line() -> None:
    rec = read_query_csv(LOG.splitlines(keepends=True), "n", "day.csv", 60.0)
    assert "day.csv: 2 row(s) whose timestamp is no date and time skipped (first: line 4 ('9999/99/99 99:99:99'))" \
        in rec.notes


def test_the_replay_json_names_them_and_a_log_of_only_such_rows_is_refused(tmp_path: Path, capsys) -> None:
    log = tmp_path / "day.csv"
    log.write_text(LOG)
    assert main(["watch", "--replay", str(log), "--json", "--no-log"]) == 0
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert any("2 row(s) whose timestamp is no date and time skipped (first: line 4" in n for n in notes), notes
    log.write_text(HEADER + ROW.format(t="2026/13/45 00:01:00.000", i=0))
    assert main(["watch", "--replay", str(log), "--no-log"]) == 2
    assert "no row has a timestamp that is a date and time: 1 row(s) skipped, first line 2" in capsys.readouterr().err


@pytest.mark.parametrize("good", [True, False])
def test_a_log_whose_times_all_read_has_no_such_note(good: bool) -> None:
    lines = HEADER + ROW.format(t="2026/11/01 00:00:00.000", i=0) + ROW.format(t="2026/11/01 00:01:00.000", i=0)
    if not good:
        lines += ROW.format(t="2026/11/01 25:00:00.000", i=0)
    notes = read_query_csv(lines.splitlines(keepends=True), "n", "d.csv", 60.0).notes
    assert any("timestamp is no date and time" in n for n in notes) is not good
