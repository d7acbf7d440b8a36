"""``--from a.txt b.txt`` (or a shell glob, ``--from dmesg*.txt``) gives --from one file and leaves
the others as stray words: doctor read the second as its SYMPTOM ("unknown symptom 'b.txt'"), the
other commands stopped in click's "unexpected extra argument" box. Seen before parsing, a word after
--from's file that is itself a file on disk gets one line saying how: --from once per file."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from gpuvet.errors import GpuvetError


def check_from_files(argv: Sequence[str], keep: Callable[[], frozenset[str]] = frozenset) -> None:
    """Raise (exit 2) where files follow a --from's own file on the command line. ``keep``: words a
    command takes in that place by right (doctor's symptoms), never read as a stray file; asked only
    where such a word is a file on disk."""
    for i, word in enumerate(argv):
        if word == "--":
            return
        if word == "--from" and i + 1 < len(argv):
            first, rest = argv[i + 1], argv[i + 2:]
        elif word.startswith("--from="):
            first, rest = word[len("--from="):], argv[i + 1:]
        else:
            continue
        stray = _files(rest, keep)
        if stray:
            import shlex

            given = " ".join(f"--from {shlex.quote(f)}" for f in (first, *stray))
            raise GpuvetError(f"{stray[0]}: a second file after --from {first}; --from takes one file",
                              where="--from", fix=f"give --from once per file: {given}")


def _files(words: Sequence[str], keep: Callable[[], frozenset[str]]) -> list[str]:
    """The leading words that are files on disk (an option or a kept word ends them)."""
    out: list[str] = []
    for word in words:
        if word.startswith("-") or not os.path.isfile(word) or word in keep():
            break
        out.append(word)
    return out


def check_argv(argv: Sequence[str]) -> None:
    """``check_from_files`` on a whole command line, doctor's symptoms kept (read only when needed)."""
    if any(w == "--from" or w.startswith("--from=") for w in argv):
        check_from_files(argv, _symptoms)


def _symptoms() -> frozenset[str]:
    from gpuvet.doctor.model import playbooks

    return frozenset(playbooks())
