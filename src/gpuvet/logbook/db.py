"""The two things the logbook's SQL differs in between SQLite and PostgreSQL, and the small
connection interface both backends give the store (so that store.py holds the queries once)."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from gpuvet.errors import GpuvetError


class LogbookError(GpuvetError):
    """The logbook cannot be opened, read or written (the message says which and why)."""


class LogbookFull(LogbookError):
    """The disk (or database) holding the logbook has no room for what was being written."""


@dataclass(frozen=True)
class Dialect:
    """SQL that is spelt differently: the implicit row key, integer division of a float, the
    two-argument max/min, the upsert of a sample."""

    name: str
    runs_key: str  # the integer key of a run (SQLite's rowid; an identity column in PostgreSQL)
    events_order: str  # insertion order of events
    greatest: str
    least: str

    def floor_div(self, expr: str, by: str) -> str:
        """``floor(expr / by)`` as an integer (times are never negative)."""
        if self.name == "sqlite":
            return f"CAST({expr} / {by} AS INTEGER)"
        return f"CAST(FLOOR({expr} / {by}) AS BIGINT)"

    def insert_samples(self, run_key: int) -> str:
        """The run key is a literal (an int we made): each row is passed as the caller built it."""
        cols = "run_key, mkey, t, temp, power, sm, mem, util, throttle"
        values = f"VALUES ({int(run_key)}, ?, ?, ?, ?, ?, ?, ?, ?)"
        if self.name == "sqlite":
            return f"INSERT OR REPLACE INTO samples({cols}) {values}"
        return (f"INSERT INTO samples({cols}) {values} ON CONFLICT (run_key, mkey, t) DO UPDATE SET "
                "temp = excluded.temp, power = excluded.power, sm = excluded.sm, mem = excluded.mem, "
                "util = excluded.util, throttle = excluded.throttle")


SQLITE = Dialect("sqlite", runs_key="rowid", events_order="rowid", greatest="max", least="min")
POSTGRES = Dialect("postgresql", runs_key="run_key", events_order="id", greatest="GREATEST", least="LEAST")

SqlValue = None | int | float | str | bytes  # what a statement's ``?`` takes
Row = tuple[Any, ...]  # what the driver hands back (its types are the driver's)
Args = Sequence[SqlValue]


class Tx(Protocol):
    """Statements inside one transaction (``?`` placeholders in both dialects)."""

    def run(self, sql: str, args: Args = ()) -> int:
        """Execute; the number of rows changed."""

    def rows(self, sql: str, args: Args = ()) -> list[Row]:
        """Execute and fetch every row."""

    def many(self, sql: str, rows: Sequence[Args]) -> None:
        """Execute once per row (the driver's batch path)."""


class Db(Protocol):
    """An open logbook database."""

    dialect: Dialect
    where: str  # for messages: the file, or the URL without its password

    @property
    def raw(self) -> object:
        """The DB-API connection, for tests and one-off inspection."""

    def query(self, sql: str, args: Args = ()) -> list[Row]:
        """A read outside any explicit transaction."""

    def tx(self) -> AbstractContextManager[Tx]:
        """A write transaction: all of it or none (waits for other writers)."""

    def tables(self) -> dict[str, set[str]]:
        """Tables present, with their columns (read only: nothing is written)."""

    def prepare(self) -> None:
        """Per-connection settings that may write (after the file was found to be ours)."""

    def integrity(self) -> str:
        """``ok`` or what the engine's own check found."""

    def close(self) -> None:
        """Release the connection."""

