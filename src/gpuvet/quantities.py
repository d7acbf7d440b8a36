"""Counts and sizes as people write them on a command line or in a file: ``7.5B``, ``175e9``,
``1GiB``, ``64MiB``. A bad one is an error naming the parameter and the fix."""

from __future__ import annotations

import re

from gpuvet.errors import GpuvetError

_SCALE = {"": 1, "k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12}
_BYTES = {"": 1, "b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12, "kib": 2**10, "mib": 2**20, "gib": 2**30,
          "tib": 2**40}


def parse_count(text: str, param: str) -> float:
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:e[0-9]+)?)\s*([kmbgt]?)\s*", text.lower())
    if not m:
        raise GpuvetError(f"{text!r} is not a count", where=param, fix="write e.g. 7.5B, 175e9 or 350M.")
    return float(m.group(1)) * _SCALE[m.group(2)]


def parse_bytes(text: str, param: str) -> int:
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([kmgt]?i?b?)\s*", text.lower())
    if not m or m.group(2) not in _BYTES:
        raise GpuvetError(f"{text!r} is not a size", where=param, fix="write e.g. 1GiB, 64MiB or 1048576.")
    return int(float(m.group(1)) * _BYTES[m.group(2)])
