"""A corpus file's parse kept for the test process, not only for the last 8 files read (issue 46, suite speed).

gpuvet's read() keeps the parses of the last few files a command read (captures/read.py ``_PARSED``, keyed by the
path, the text's length and its hash). The sweeps run several commands on each corpus file in different tests:
the blind batches' doctor/inventory/topo, then the evidence audit's ``doctor --all`` on the same file, far apart in
the run, so each parsed the file again (one run of tests/captures + the audit: 1,424 parses of a corpus text
already parsed, ~3.7 s of CPU). Here a parse read() made of a file under tests/data/captures is also held for the
process, under read's own key (path and text: a changed file is a new key, never an old parse), and read() finds it
there as in its own cache; a test that clears the cache clears these too. Memory only, never on disk; the held
parses are read's, handed out as read hands them (one object per text, as within one command)."""

from __future__ import annotations

import os

from gpuvet.captures import read
from gpuvet.captures.formats import FileCapture
from tests.support.corpus import CAPTURES

Key = tuple[str, int, int]  # read's: (path as given, length of the text, hash of the text)
_ROOT = str(CAPTURES) + os.sep


def _corpus(key: Key) -> bool:
    return os.path.realpath(key[0]).startswith(_ROOT)


class Kept(dict[Key, FileCapture]):
    """read's cache, bounded by read as before, beside the corpus parses held for the process."""

    def __init__(self) -> None:
        super().__init__()
        self.held: dict[Key, FileCapture] = {}

    def get(self, key: Key, default: FileCapture | None = None) -> FileCapture | None:  # type: ignore[override]
        got = super().get(key)
        return got if got is not None else self.held.get(key, default)

    def __setitem__(self, key: Key, parsed: FileCapture) -> None:
        super().__setitem__(key, parsed)
        if _corpus(key):
            self.held[key] = parsed

    def clear(self) -> None:
        super().clear()
        self.held.clear()


def share() -> None:
    """Install the kept cache in gpuvet's read module (once, from tests/conftest.py)."""
    if not isinstance(read._PARSED, Kept):
        read._PARSED = Kept()
