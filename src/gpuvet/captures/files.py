"""Which captured files to read: each once."""

from __future__ import annotations

import os
from pathlib import Path


def once_each(paths: list[str], notes: list[str]) -> list[str]:
    """Each file once: one given twice (the same path, or a link to it) is read once and said so; two
    files of the same content are two files (their modules meet as duplicates, and are said so there)."""
    if len(paths) < 2:  # nothing to find twice: no path resolved (a realpath is a stat of each of its parts)
        return list(paths)
    seen: dict[str, str] = {}
    out = []
    for path in paths:
        real = os.path.realpath(path)
        if real in seen:
            notes.append(f"{Path(path).name}: the same file given twice with --from (as {seen[real]}): read once")
            continue
        seen[real] = path
        out.append(path)
    return out
