"""A --query-gpu log written from rows, and the same log read both ways (by columns, and row by row
with the column reader switched off): the replay tests compare the two readers on it."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuvet.watch import read_smi, readers
from gpuvet.watch.recording import Recording


def write_log(path: Path, head: str, rows: list[list[str]]) -> Path:
    path.write_text(head + "\n" + "".join(", ".join(r) + "\n" for r in rows))
    return path


def read_both_ways(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Recording, Recording]:
    cols = readers.read_file(path, 60.0)
    with monkeypatch.context() as m:
        m.setattr(read_smi, "_read_columns", lambda *a: None)
        rows = readers.read_file(path, 60.0)
    return cols, rows
