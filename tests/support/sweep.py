"""A sweep over the capture corpus as one test per batch folder, not one per file. A test costs pytest and
xdist ~2 ms of CPU of its own (setup, three reports sent to the controller and read there), as much as a
corpus file's check: the sweeps' 11,000 tests were a tenth of the suite's CPU beside a busy loop. Each
file is still checked, every file of the batch even after one fails, and the failure names each failing
file with its own assertion message (the first unexpected error is chained); ``-k fresh_z`` runs a batch."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Generic, TypeVar

import pytest

from tests.support.corpus import CAPTURES

T = TypeVar("T")


def batches(files: Iterable[Path], root: Path = CAPTURES) -> dict[str, list[Path]]:
    """The files by batch: the folder under ``root`` holding them ('captures' for a file at the top)."""
    out: dict[str, list[Path]] = defaultdict(list)
    for path in files:
        parts = path.relative_to(root).parts
        out[parts[0] if len(parts) > 1 else root.name].append(path)
    return dict(sorted(out.items()))


def check_each(paths: Iterable[Path], check: Callable[[Path], object], root: Path = CAPTURES) -> int:
    """``check`` on every path; fails naming every path whose check failed. A check that skips its file
    (pytest.skip) leaves it unchecked, as its own test did. Returns how many were checked."""
    failed: list[str] = []
    first: BaseException | None = None
    checked = 0
    for path in paths:
        try:
            check(path)
            checked += 1
        except pytest.skip.Exception:
            continue
        except Exception as exc:  # each file's failure is said; the first one chained
            failed.append(f"{path.relative_to(root)}: {type(exc).__name__}: {exc}")
            first = first or exc
    if failed:
        raise AssertionError(f"{len(failed)} file(s) failed:\n" + "\n".join(failed)) from first
    return checked


class OneBatch(Generic[T]):
    """``make`` of a file's text, made once for the sweeps of one batch: a module whose sweeps each clean every
    file (text.clean, ~0.4 ms a file) parametrizes them with ``scope="module"``, so pytest runs a batch's sweeps
    one after another and the results of one batch only are held (the corpus's lines would be ~100 MB). Keyed by
    the path and the text itself: a pure function's result, never one of another text; a list is handed out as
    a copy, so a reader that changed its list changes no other sweep's."""

    def __init__(self, make: Callable[[str], T]) -> None:
        self.make, self.batch, self.kept = make, "", dict[tuple[Path, str], T]()

    def __call__(self, batch: str, path: Path, text: str) -> T:
        if batch != self.batch:
            self.batch, self.kept = batch, {}
        if (got := self.kept.get((path, text))) is None:
            got = self.kept[(path, text)] = self.make(text)
        return list(got) if type(got) is list else got  # type: ignore[return-value]
