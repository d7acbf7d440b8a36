"""Issue 43, round 3: the column reader reads nvidia-smi's timestamps, a tick's module order and
each reading column at once (arrays, no list per column). Every shortcut must give what the row
reader gives, and step aside (to the per-cell reading) where the log is not so regular."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from gpuvet.watch.recording import Recording
from gpuvet.watch.smi_cells import Clock, stamps
from gpuvet.watch.smi_rows import ColumnReader, RowReader
from tests.support.query_logs import read_both_ways, write_log

HEAD = ("timestamp, index, uuid, temperature.gpu, power.draw [W], power.draw.instant [W], utilization.gpu [%], "
        "clocks.sm [MHz], clocks.gr [MHz], clocks.mem [MHz], clocks_event_reasons.active")


def _row(stamp: str, g: int, k: int) -> list[str]:
    return [stamp, str(g), f"GPU-at-once-{g}", f"{40 + (k + g) % 30}", f"{300 + (k * 7 + g) % 400}.{k % 100:02d} W",
            f"{310 + k % 50}.5 W", f"{(k * 3) % 101} %", f"{1980 if k % 5 else 1755} MHz", "1980 MHz", "3201 MHz",
            "0x0000000000000000" if k % 9 else "0x0000000000000004"]




def _same(cols: Recording, rows: Recording) -> None:
    assert cols.only_columns
    assert cols.notes == rows.notes
    assert list(cols.modules.items()) == list(rows.modules.items())
    assert cols.samples == rows.samples


def test_timestamps_at_once_are_the_clocks_seconds() -> None:
    rng = random.Random(43)
    for places in (0, 1, 3, 6, 15):
        for sep in "/-":
            cells = [f"{rng.randint(1970, 2099):04d}{sep}{rng.randint(1, 12):02d}{sep}{rng.randint(1, 28):02d} "
                     f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 61):02d}"
                     + ("." + "".join(rng.choice("0123456789") for _ in range(places)) if places else "")
                     for _ in range(200)]
            got = stamps(cells)
            assert got is not None and got.tolist() == [Clock()(c) for c in cells]


@pytest.mark.parametrize("cells", [["2026/02/30 10:00:00.000"], ["2026/01/01 24:00:00.000"], ["2026/01/01T10:00:00"],
                                   ["2026/01/01 10:00:00.000", "2026/01/01 10:00:00.00"], ["20260101 10:00:00.000"],
                                   ["2026.01.01 10:00:00.000"], ["2026/01/01 10:00:00.0x0"], []])
def test_other_timestamps_are_left_to_the_clock(cells: list[str]) -> None:
    assert stamps(cells) is None


def test_modules_in_a_changing_order_and_gaps_in_readings_read_as_the_rows_do(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A tick that names its modules in another order, one that leaves a module out, [N/A] SM
    clocks (the graphics clock stands in), [N/A] power beside an instant power column, a dashed
    date without a fraction: each read as the row reader reads it."""
    rows = []
    for k in range(600):
        stamp = f"2026-03-{1 + k // 1440:02d} {k // 60 % 24:02d}:{k % 60:02d}:00"
        order = [2, 0, 1] if 200 <= k < 210 else [0, 1] if k == 300 else [0, 1, 2]
        rows += [_row(stamp, g, k) for g in order]
    rows[50][7] = "[N/A]"
    rows[90][4] = "[N/A]"
    rows[91][3] = "[Not Supported]"
    cols, by_rows = _both(_write(tmp_path / "node01.csv", rows), monkeypatch)
    _same(cols, by_rows)


@pytest.mark.parametrize("units", [True, False])
def test_a_regular_log_reads_as_the_rows_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, units: bool) -> None:
    """Watts of many values (parsed cell by cell), clocks and counters of few (by value), with
    their units or without (--format=csv,nounits), a module's clock held through a block."""
    rows = [_row(f"2026/01/01 {k // 60:02d}:{k % 60:02d}:00.{k % 1000:03d}", g, k) for k in range(700) for g in range(4)]
    if not units:
        rows = [[c.partition(" ")[0] if 2 < i < 10 else c for i, c in enumerate(r)] for r in rows]
    cols, by_rows = _both(_write(tmp_path / "node01.csv", rows), monkeypatch)
    _same(cols, by_rows)


def _write(path: Path, rows: list[list[str]]) -> Path:
    return write_log(path, HEAD, rows)


_both = read_both_ways


def test_a_mask_cell_reads_in_each_block_as_the_rows_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A mask column's cell without '0x' ('20') reads as hex (32) in a block of masks and as a
    number (20) in a block beside a cell that is no hex ('[N/A]'), as the row reader's blocks read
    it: the column reader's cells kept from one block never stand in for another's reading."""
    monkeypatch.setattr(RowReader, "BLOCK", 100)
    monkeypatch.setattr(ColumnReader, "SUB", 100)
    rows = [_row(f"2026/01/01 {k // 60:02d}:{k % 60:02d}:00.000", g, k) for k in range(150) for g in range(2)]
    for at in (10, 110, 210):  # one cell '20' in each of three blocks; '[N/A]' in the second
        rows[at][10] = "20"
    rows[150][10] = "[N/A]"
    cols, by_rows = _both(_write(tmp_path / "node01.csv", rows), monkeypatch)
    _same(cols, by_rows)
    assert [cols.samples[at].throttle for at in (10, 110, 210)] == [32, 20, 32]


def test_lines_of_another_width_in_one_block_read_row_by_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A line with a cell too many and a later one with a cell too few (the block's count of cells
    is right): no column is read shifted; the log is read row by row, as before."""
    rows = [_row(f"2026/01/01 {k // 60:02d}:{k % 60:02d}:00.000", g, k) for k in range(100) for g in range(2)]
    rows[40].append("7")
    rows[45].pop()
    cols, by_rows = _both(_write(tmp_path / "node01.csv", rows), monkeypatch)
    assert not cols.columns
    assert cols.notes == by_rows.notes and cols.samples == by_rows.samples
