"""Where the logbook is: ``--logbook`` (a file or a ``postgresql://`` URL), else
``GPUVET_LOGBOOK`` (the same), else ``$GPUVET_HOME/logbook.db``, else the user's data folder."""

from __future__ import annotations

import os
from pathlib import Path

from gpuvet.logbook.db import Db
from gpuvet.logbook.postgres import PostgresDb, is_url
from gpuvet.logbook.sqlite_db import SqliteDb


def default_path() -> Path:
    """``$GPUVET_HOME/logbook.db``, else the user's data directory."""
    home = os.environ.get("GPUVET_HOME")
    if home:
        return Path(home) / "logbook.db"
    import platformdirs

    return Path(platformdirs.user_data_dir("gpuvet", appauthor=False)) / "logbook.db"


def locate(target: str | Path | None) -> str | Path:
    """A URL (str) or a file (Path)."""
    if target is None or str(target) == "":
        target = os.environ.get("GPUVET_LOGBOOK") or default_path()
    if isinstance(target, str):
        return target if is_url(target) else Path(target).expanduser()
    return target


def new_file_note(target: str | None) -> str | None:
    """A writer's note where the --logbook it was given is no file yet: it creates it (an empty
    history, nothing to count repeats from), and a mistyped path must not pass unnoticed."""
    if not target:
        return None
    where = locate(target)
    if not isinstance(where, Path) or where.exists():
        return None
    return (f"logbook {where}: no file there, so a new, empty one is made (no history to count repeats from); "
            "check the path if you meant an existing logbook")


def typed_by(target: str | Path | None) -> str | None:
    """Who named the logbook's path: ``--logbook``, ``GPUVET_LOGBOOK``, or None for gpuvet's own
    default location (the only one whose missing folders gpuvet creates: a typo in a typed path
    must not silently make folders)."""
    if target is not None and str(target) != "":
        return "--logbook"
    return "GPUVET_LOGBOOK" if os.environ.get("GPUVET_LOGBOOK") else None


def connect(target: str | Path | None) -> Db:
    """Open (not yet verify) the database the target names."""
    where = locate(target)
    if isinstance(where, str):
        return PostgresDb(where)
    return SqliteDb(where, typed_by=typed_by(target))
