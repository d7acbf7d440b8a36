"""Durations as people write them: 30s, 10m, 12h, 3d, 1.5h, or a number of seconds."""

from __future__ import annotations

import math
import re

_UNITS = {"ms": 1e-3, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}
_PATTERN = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*(ms|s|min|m|h|d|w)?\s*$")


class DurationError(ValueError):
    """A duration that cannot be read: ``problem`` says why without naming the flag or advising,
    for a caller that names both itself."""

    def __init__(self, message: str, problem: str) -> None:
        super().__init__(message)
        self.problem = problem


def parse_duration(value: str | float | int | None, what: str = "duration") -> float:
    """Seconds. Raises DurationError (a ValueError) with a readable message."""
    if value is None:
        return 0.0
    if isinstance(value, (int, float)):
        seconds = float(value)
    else:
        match = _PATTERN.match(value)
        if not match:
            raise DurationError(f"{what} {value!r} is not a duration; write e.g. 30s, 10m, 12h, 3d",
                                f"{value!r} is not a duration")
        seconds = float(match.group(1)) * _UNITS[match.group(2) or "s"]
    if seconds < 0 or not math.isfinite(seconds):
        raise DurationError(f"{what} must be a finite, non-negative duration",
                            f"{value!r} is not a finite, non-negative duration")
    return seconds


def format_duration(seconds: float) -> str:
    if seconds >= 86400:
        return f"{seconds / 86400:.1f}d"
    if seconds >= 3600:
        return f"{seconds / 3600:.1f}h"
    if seconds >= 60:
        return f"{seconds / 60:.1f}m"
    return f"{seconds:.1f}s"
