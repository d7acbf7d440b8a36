"""The embedded logbook: one SQLite file, WAL journal, created private (0600 in a 0700 folder).

Nothing is written to a file until it is known to be empty or gpuvet's own: a file that is
not SQLite, or an SQLite file holding someone else's tables, is refused and left as it was.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from gpuvet.logbook.db import SQLITE, Args, Dialect, LogbookError, LogbookFull, Row

BUSY_TIMEOUT_MS = 30_000
APPLICATION_ID = 0x67707674  # "gpvt" in the file header: this file is a gpuvet logbook
_HEADER = b"SQLite format 3\x00"
_FIX_OTHER = "point --logbook (or GPUVET_HOME) at another file; this one was left untouched."


def _storage_error(exc: sqlite3.Error, where: str, doing: str) -> LogbookError:
    """One clear message per failure class (full, read-only, cannot open, damaged, locked)."""
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
    if code == sqlite3.SQLITE_FULL or (code == sqlite3.SQLITE_IOERR and _disk_full(where)):
        return LogbookFull(f"the disk holding the logbook is full while {doing} ({exc})", where=where,
                           fix="free space there (or point GPUVET_HOME/--logbook elsewhere); what was written "
                               "before stays in the logbook.")
    if code in (sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_AUTH):
        return LogbookError(f"cannot write the logbook while {doing} ({exc}): the file or its folder is read-only "
                            "or not this user's", where=where,
                            fix="make the folder writable for this user, or point GPUVET_HOME/--logbook at a "
                                "writable place.")
    if code == sqlite3.SQLITE_BUSY:
        return LogbookError(f"the logbook stayed locked by another process for {BUSY_TIMEOUT_MS // 1000} s "
                            f"while {doing}", where=where, fix="wait for the other gpuvet to finish, then retry.")
    if code == sqlite3.SQLITE_IOERR:
        return LogbookError(f"I/O error while {doing} ({exc})", where=where,
                            fix="check the disk holding the logbook (space, health, mount).")
    return LogbookError(f"not a usable gpuvet logbook ({exc}) while {doing}", where=where,
                        fix="point --logbook (or GPUVET_HOME) at another file; the file was left as it is.")


def _disk_full(where: str) -> bool:
    try:
        st = os.statvfs(Path(where).parent)
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < 1 << 20


@contextmanager
def guard(where: str, doing: str) -> Iterator[None]:
    """SQLite's and the OS's storage errors as LogbookError; programming errors pass through."""
    try:
        yield
    except (sqlite3.ProgrammingError, sqlite3.IntegrityError, sqlite3.InterfaceError):
        raise
    except sqlite3.Error as exc:
        raise _storage_error(exc, where, doing) from None
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
            raise LogbookFull(f"the disk is full while {doing}", where=where, fix="free space there.") from None
        raise LogbookError(f"cannot use the logbook while {doing}: {exc.strerror or exc}", where=where,
                           fix="point --logbook (or GPUVET_HOME) at a writable file.") from None


class _Tx:
    def __init__(self, cur: sqlite3.Cursor) -> None:
        self.cur = cur

    def run(self, sql: str, args: Args = ()) -> int:
        return int(self.cur.execute(sql, args).rowcount)

    def rows(self, sql: str, args: Args = ()) -> list[Row]:
        return list(self.cur.execute(sql, args).fetchall())

    def many(self, sql: str, rows: Sequence[Args]) -> None:
        self.cur.executemany(sql, rows)


class SqliteDb:
    """One logbook file. Opening reads only; ``prepare`` switches on WAL once it is ours."""

    dialect: Dialect = SQLITE

    def __init__(self, path: Path) -> None:
        self.path = path
        self.where = str(path)
        _check_file(path)
        with guard(self.where, "opening"):
            _create_private(path)
            self.raw = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
            self.raw.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")

    def query(self, sql: str, args: Args = ()) -> list[Row]:
        with guard(self.where, "reading"):
            return list(self.raw.execute(sql, args).fetchall())

    @contextmanager
    def tx(self) -> Iterator[_Tx]:
        with guard(self.where, "writing"):
            cur = self.raw.cursor()
            cur.execute("BEGIN IMMEDIATE")
            try:
                yield _Tx(cur)
            except BaseException:
                if self.raw.in_transaction:
                    cur.execute("ROLLBACK")
                raise
            cur.execute("COMMIT")

    def tables(self) -> dict[str, set[str]]:
        with guard(self.where, "reading its tables"):
            names = [n for (n,) in self.raw.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")]
            return {n: {r[1] for r in self.raw.execute("SELECT * FROM pragma_table_info(?)", (n,))} for n in names}

    def prepare(self) -> None:
        with guard(self.where, "opening"):
            if int(self.raw.execute("PRAGMA application_id").fetchone()[0]) != APPLICATION_ID:
                self.raw.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            self.raw.execute("PRAGMA journal_mode = WAL")
            self.raw.execute("PRAGMA synchronous = NORMAL")

    def integrity(self) -> str:
        return str(self.query("PRAGMA integrity_check")[0][0])

    def close(self) -> None:
        self.raw.close()


def _check_file(path: Path) -> None:
    """Refuse a folder, or a file that is not SQLite, before SQLite touches it; and a symbolic
    link at the logbook or at one of the files SQLite writes beside it (SQLite follows them:
    run as root, a link planted there would have it write into a system file)."""
    for p in (path, *(path.with_name(path.name + s) for s in ("-wal", "-shm", "-journal"))):
        if p.is_symlink():
            raise LogbookError(f"{p} is a symbolic link (to {os.readlink(p)!r}); the logbook is not written "
                               "through links", where="--logbook",
                               fix="give the logbook's real path (the link's target), or remove the link.")
    if path.exists() and not path.is_file():
        raise LogbookError(f"{path} is not a file", where="--logbook", fix="give a file path for the logbook.")
    if path.is_file() and path.stat().st_size > 0:
        try:
            with path.open("rb") as f:
                head = f.read(16)
        except OSError as exc:
            raise LogbookError(f"cannot read the logbook: {exc.strerror or exc}", where=str(path),
                               fix="make it readable for this user, or use another file.") from None
        if head != _HEADER:
            raise LogbookError(f"{path} is not a gpuvet logbook (not an SQLite file)", where="--logbook",
                               fix=_FIX_OTHER)


def _create_private(path: Path) -> None:
    """A new logbook is this user's alone: 0600 (SQLite gives its -wal/-shm files the same mode)."""
    make_private_dirs(path.parent)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    os.close(fd)


def make_private_dirs(folder: Path) -> None:
    """Create the missing folders of ``folder`` with mode 0700 (existing ones are left alone)."""
    missing = []
    here = folder
    while not here.exists():
        missing.append(here)
        if here.parent == here:
            break
        here = here.parent
    if here.exists() and not here.is_dir():
        raise LogbookError(f"{here} is a file, not a folder", where="GPUVET_HOME / --logbook",
                           fix=f"point GPUVET_HOME (or --logbook) at a folder, or move {here} aside.")
    for d in reversed(missing):
        try:
            d.mkdir(mode=0o700)
        except FileExistsError:
            pass
        except NotADirectoryError:
            raise LogbookError(f"{d.parent} is a file, not a folder", where="GPUVET_HOME / --logbook",
                               fix="point GPUVET_HOME (or --logbook) at a folder.") from None
