"""A logbook a team shares: the same tables in a PostgreSQL database (``GPUVET_LOGBOOK`` or
``--logbook`` set to a ``postgresql://`` URL). Needs the ``gpuvet[postgres]`` extra (psycopg 3).

The tables live in their own schema (``gpuvet``) so that they sit beside other applications'
tables in a shared database without touching them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from types import ModuleType
from typing import TYPE_CHECKING

from gpuvet.logbook.db import POSTGRES, Args, Dialect, LogbookError, LogbookFull, Row

if TYPE_CHECKING:
    from psycopg import Cursor

SCHEMA = "gpuvet"
CONNECT_TIMEOUT_S = 10
URL_PREFIXES = ("postgresql://", "postgres://")


def is_url(target: str) -> bool:
    return target.startswith(URL_PREFIXES)


def redact(url: str) -> str:
    """The URL without its password, for messages."""
    return re.sub(r"(://[^:/@]*:)[^@/]*@", r"\1***@", url)


@lru_cache(maxsize=256)
def _pg(sql: str) -> str:
    """``?`` placeholders as psycopg's ``%s`` (the store's SQL holds no literal ``?`` or ``%``)."""
    return sql.replace("%", "%%").replace("?", "%s")


def _psycopg() -> ModuleType:
    try:
        import psycopg
    except ImportError:
        raise LogbookError("a PostgreSQL logbook needs psycopg, which is not installed", where="GPUVET_LOGBOOK",
                           fix="pip install 'gpuvet[postgres]', or unset GPUVET_LOGBOOK to use the SQLite file.") from None
    return psycopg


@contextmanager
def guard(where: str, doing: str) -> Iterator[None]:
    """psycopg's connection and storage errors as LogbookError; programming errors pass through."""
    psycopg = _psycopg()
    errors = psycopg.errors
    try:
        yield
    except errors.DiskFull as exc:
        raise LogbookFull(f"the database server has no room while {doing} ({_first_line(exc)})", where=where,
                          fix="free space on the server; what was written before stays in the logbook.") from None
    except errors.InsufficientPrivilege as exc:
        raise LogbookError(f"no permission while {doing} ({_first_line(exc)})", where=where,
                           fix=f"grant this database user CREATE on the database and USAGE/CREATE on schema {SCHEMA}.") \
            from None
    except psycopg.OperationalError as exc:
        raise LogbookError(f"cannot reach the PostgreSQL logbook while {doing} ({_first_line(exc)})", where=where,
                           fix="check the URL, that the server runs and accepts this user, or unset GPUVET_LOGBOOK "
                               "to use the local SQLite file.") from None


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


class _Tx:
    def __init__(self, cur: Cursor[Row]) -> None:
        self.cur = cur

    def run(self, sql: str, args: Args = ()) -> int:
        self.cur.execute(_pg(sql), args)
        return int(self.cur.rowcount)

    def rows(self, sql: str, args: Args = ()) -> list[Row]:
        self.cur.execute(_pg(sql), args)
        return list(self.cur.fetchall())

    def many(self, sql: str, rows: Sequence[Args]) -> None:
        self.cur.executemany(_pg(sql), rows)  # psycopg pipelines these: one round trip per batch


class PostgresDb:
    """One connection in autocommit; every write is an explicit transaction."""

    dialect: Dialect = POSTGRES

    def __init__(self, url: str) -> None:
        self.where = redact(url)
        psycopg = _psycopg()
        with guard(self.where, "connecting"):
            self.raw = psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S,
                                       application_name="gpuvet")
        with guard(self.where, "opening"):
            exists = self.raw.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (SCHEMA,)).fetchone()
            if not exists:
                try:
                    self.raw.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
                except (psycopg.errors.UniqueViolation, psycopg.errors.DuplicateSchema):
                    pass  # another gpuvet made it at the same moment
            self.raw.execute(f"SET search_path TO {SCHEMA}")

    def query(self, sql: str, args: Args = ()) -> list[Row]:
        with guard(self.where, "reading"):
            return list(self.raw.execute(_pg(sql), args).fetchall())

    @contextmanager
    def tx(self) -> Iterator[_Tx]:
        with guard(self.where, "writing"), self.raw.transaction(), self.raw.cursor() as cur:
            yield _Tx(cur)

    def tables(self) -> dict[str, set[str]]:
        rows = self.query("SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = ?",
                          (SCHEMA,))
        out: dict[str, set[str]] = {}
        for table, column in rows:
            out.setdefault(str(table), set()).add(str(column))
        return out

    def prepare(self) -> None:
        """Nothing per connection beyond the search path set when connecting."""

    def integrity(self) -> str:
        self.query("SELECT count(*) FROM runs")
        return "ok"

    def close(self) -> None:
        self.raw.close()
