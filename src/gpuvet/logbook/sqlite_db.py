"""The embedded logbook: one SQLite file, WAL journal, created private (0600 in a 0700 folder).

Nothing is written to a file until it is known to be empty or gpuvet's own: a file that is
not SQLite, or an SQLite file holding someone else's tables, is refused and left as it was.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import stat
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from gpuvet.files import check_folder
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

    def __init__(self, path: Path, typed_by: str | None = None) -> None:
        """``typed_by``: the flag or variable that named ``path`` (its folder must exist), or None
        for gpuvet's default location (missing folders created, 0700)."""
        self.path = path
        self.where = str(path)
        if typed_by is not None:
            check_folder(path.parent if str(path.parent) else Path("."), typed_by, create=False)
        _check_file(path)
        with guard(self.where, "opening"):
            _create_private(path, create_folders=typed_by is None)
            if _in_wal_mode(path):  # SQLite opens -wal/-shm at the first read: claim them first
                claim_side_files(path)
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
            claim_side_files(self.path)  # before SQLite creates them, following what it finds
            self.raw.execute("PRAGMA journal_mode = WAL")
            self.raw.execute("PRAGMA synchronous = NORMAL")
            if int(self.raw.execute("PRAGMA application_id").fetchone()[0]) != APPLICATION_ID:
                self.raw.execute(f"PRAGMA application_id = {APPLICATION_ID}")

    def integrity(self) -> str:
        return str(self.query("PRAGMA integrity_check")[0][0])

    def close(self) -> None:
        self.raw.close()


def _check_file(path: Path) -> None:
    """Refuse a folder, or a file that is not SQLite, before SQLite touches it; and a symbolic
    link at the logbook or at one of the files SQLite writes beside it (SQLite follows them:
    run as root, a link planted there would have it write into a system file)."""
    _check_folder(path.parent)
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


def _in_wal_mode(path: Path) -> bool:
    """The header's read/write versions (bytes 18, 19) are 2 in a WAL database."""
    try:
        with path.open("rb") as f:
            return f.read(20)[18:20] == b"\x02\x02"
    except OSError:
        return False


SIDE_FILES = ("-wal", "-shm")  # what SQLite creates beside a WAL logbook, later than the open


def claim_side_files(path: Path) -> None:
    """Create the -wal and -shm files ourselves (O_CREAT|O_EXCL|O_NOFOLLOW, 0600) before WAL is
    switched on, and refuse ones already there that are not plain single-link files of the
    logbook's owner. SQLite opens them with O_CREAT and would write through whatever was planted
    between our first look and its own (a link, another user's file, a hard link to a system
    file). Creating them ourselves leaves no such window where the folder is private or sticky;
    a folder others may rename in is refused by ``_check_folder`` (they could swap the files
    back), which is why both are needed: pre-creating alone is no guard there."""
    owner = os.lstat(path).st_uid
    for suffix in SIDE_FILES:
        side = path.with_name(path.name + suffix)
        try:
            fd = os.open(side, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        except FileExistsError:
            _check_side_file(side, owner)
            continue
        os.close(fd)


def _check_side_file(side: Path, owner: int) -> None:
    st = os.lstat(side)
    if stat.S_ISLNK(st.st_mode):
        raise LogbookError(f"{side} is a symbolic link (to {os.readlink(side)!r}); the logbook is not written "
                           "through links", where="--logbook",
                           fix="remove the link (gpuvet creates this file itself), or use another logbook path.")
    why = ("not a regular file" if not stat.S_ISREG(st.st_mode) else
           f"owned by uid {st.st_uid}, not by the logbook's owner (uid {owner})" if st.st_uid != owner else
           f"a hard link ({st.st_nlink} names): writing it would change another file" if st.st_nlink != 1 else None)
    if why:
        raise LogbookError(f"{side}, a file SQLite writes beside the logbook, is {why}", where="--logbook",
                           fix="remove it (gpuvet creates it itself), or use another logbook path.")


def _check_folder(folder: Path) -> None:
    """Refuse a folder others may write in without the sticky bit: anyone there can rename the
    logbook's files away and put their own (or a link) in their place at any moment."""
    try:
        st = os.stat(folder)
    except OSError:
        return  # missing: created private below, or refused by the caller
    if st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX:
        raise LogbookError(f"the logbook's folder {folder} can be written by others (mode "
                           f"{stat.S_IMODE(st.st_mode):o}, no sticky bit): they could replace its files",
                           where="--logbook",
                           fix=f"chmod go-w {folder}, or keep the logbook in a folder only you can write.")


def _create_private(path: Path, create_folders: bool) -> None:
    """A new logbook is this user's alone: 0600 (SQLite gives its -wal/-shm files the same mode)."""
    if create_folders:
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
