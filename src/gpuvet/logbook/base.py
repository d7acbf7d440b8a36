"""What every part of the logbook shares: the open database, the warnings about damaged rows
read so far, and the clock rows are stamped with. The parts (telemetry, events) are mixins of
Logbook, each one job; this is the one state they all see."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from gpuvet.logbook.db import Db

log = logging.getLogger("gpuvet.logbook")


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class LogbookBase:
    """The open database and the warnings said about it (Logbook opens it)."""

    _db: Db
    warnings: list[str]

    def _warn(self, message: str) -> None:
        if message not in self.warnings:  # once per open logbook, however often the row is read
            self.warnings.append(message)
            log.warning("warning: %s", message)
