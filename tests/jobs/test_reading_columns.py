"""Issue 43: the usual nvidia-smi --query-gpu log is read column by column and replayed from its
columns, without a Sample per row. Each log here is read both ways (the column reader, and the
row reader it falls back to) and must give the same samples, modules, notes, replay and logbook."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from gpuvet.logbook.store import Logbook
from gpuvet.watch import read_smi, readers
from gpuvet.watch.recording import Recording
from gpuvet.watch.replay import replay
from tests.support.query_logs import read_both_ways, write_log

HEAD = ("timestamp, index, name, uuid, temperature.gpu, power.draw [W], utilization.gpu [%], clocks.sm [MHz], "
        "clocks.mem [MHz], clocks_event_reasons.active, ecc.errors.corrected.volatile.total, "
        "pcie.link.width.current")


def _rows(ticks: int, gpus: int = 2, seed: int = 43) -> list[list[str]]:
    """``ticks`` one-minute rows of ``gpus`` modules with a load that comes and goes."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(ticks):
        stamp = f"2026/01/{1 + k // 1440:02d} {k // 60 % 24:02d}:{k % 60:02d}:00.{k % 1000:03d}"
        for g in range(gpus):
            busy = (k // 90 + g) % 3 != 0
            power = 80 + busy * 560 + rng.normal(0, 5)
            out.append([stamp, str(g), "NVIDIA H200", f"GPU-col-{g}", f"{30 + power * 0.05:.0f}", f"{power:.2f} W",
                        f"{95 if busy else 0} %", f"{1980 if busy else 345} MHz", "3201 MHz",
                        "0x0000000000000040" if busy and k % 500 < 5 else "0x0000000000000000", str(_ecc(k)), "16"])
    return out


def _ecc(k: int) -> int:
    """Corrected ECC errors: a few a day, then a minute's worth for two hours."""
    return k // 700 + min(max(k - 1200, 0), 120)




def _same(cols: Recording, rows: Recording) -> None:
    assert cols.notes == rows.notes
    assert list(cols.modules.items()) == list(rows.modules.items())
    assert cols.samples == rows.samples


def test_the_usual_log_is_read_as_columns_with_the_row_readers_samples(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    cols, rows = _both(_write(tmp_path / "node01.csv", _rows(300)), monkeypatch)
    assert cols.only_columns and not rows.columns  # the column reader took it
    _same(cols, rows)


def test_dropped_readings_are_noted_alike_across_the_readers_blocks(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the row reader's 20,000-row block, with nan, an out-of-range sensor, [N/A] and a second
    board under one index: the first dropped reading named and every count the same."""
    rows = _rows(10_500)
    rows[20_100][4] = "4294967295"  # a sensor's error code, in the second block
    rows[20_200][5] = "nan W"
    rows[7][6] = "[N/A]"
    rows[20_900][3] = "GPU-col-9"  # index 0 names another board from here on
    cols, by_rows = _both(_write(tmp_path / "node01.csv", rows), monkeypatch)
    assert cols.only_columns
    assert any("reading(s) outside" in n for n in cols.notes) and any("another board" in n for n in cols.notes)
    _same(cols, by_rows)


@pytest.mark.parametrize("change", ["second_header", "blank_row", "bad_index", "bad_time", "no_space", "huge_counter"])
def test_anything_unusual_is_read_row_by_row_as_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        change: str) -> None:
    rows = [", ".join(r) for r in _rows(50)]
    if change == "second_header":
        rows.insert(40, HEAD)
    elif change == "blank_row":
        rows.insert(20, "")
    elif change == "bad_index":
        rows[10] = rows[10].replace(", 0, ", ", -1, ", 1)
    elif change == "bad_time":
        rows[10] = "2026/13/45 99:00:00, " + rows[10].split(", ", 1)[1]
    elif change == "no_space":
        rows[10] = rows[10].replace(", ", ",", 1)
    else:
        rows[10] = rows[10].rsplit(", ", 2)[0] + ", 99999999999999999999, 16"
    path = tmp_path / "node01.csv"
    path.write_text(HEAD + "\n" + "\n".join(rows) + "\n")
    cols, by_rows = _both(path, monkeypatch)
    assert not cols.columns
    _same(cols, by_rows)


def test_two_logs_of_a_node_merge_as_columns_in_file_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = _rows(200)
    a, b = tmp_path / "a" / "node01.csv", tmp_path / "b" / "node01.csv"
    a.parent.mkdir()
    b.parent.mkdir()
    _write(a, rows[:200])
    _write(b, rows[200:])
    cols = readers.read_files([a, b], 60.0)
    with monkeypatch.context() as m:
        m.setattr(read_smi, "_read_columns", lambda *x: None)
        by_rows = readers.read_files([a, b], 60.0)
    assert cols.only_columns
    _same(cols, by_rows)


def _book_rows(path: Path) -> list[tuple[object, ...]]:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT * FROM samples ORDER BY 1, 2").fetchall()


def test_a_replay_from_columns_gives_the_same_events_forecast_and_logbook(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    rows = _rows(3000, gpus=3)
    rows[1000], rows[1001] = rows[1001], rows[1000]  # two rows out of order: the stream sorts them by time
    cols, by_rows = _both(_write(tmp_path / "node01.csv", rows), monkeypatch)
    assert cols.only_columns
    results = []
    for rec, name in ((cols, "cols"), (by_rows, "rows")):
        book = Logbook(tmp_path / f"{name}.db")
        result = replay(rec, book=book)
        book.close()
        out = result.to_json()
        for key in ("wall_s", "samples_per_s", "run_id"):
            out.pop(key)
        results.append((out, _book_rows(tmp_path / f"{name}.db")))
    assert results[0][0]["samples"] == 9000
    assert results[0][0]["events"]  # the throttle bits and ECC steps raise events
    assert results[0] == results[1]


def _write(path: Path, rows: list[list[str]], head: str = HEAD) -> Path:
    return write_log(path, head, rows)


_both = read_both_ways
