"""A command's exit code when its result is known before it is printed (0 ok, 1 a finding),
kept whatever happens to the reader. No rich here: ``topo --json`` imports this and not rich."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


@contextlib.contextmanager
def verdict(code: int) -> Iterator[None]:
    """Around the printing of a result whose exit code is already known: the command ends with
    ``code`` (0 ok, 1 a finding) even when the reader goes away mid-table. A closed pipe alone
    ends a command with 0, which after a finding would tell a ``set -o pipefail`` script that
    nothing stood out."""
    try:
        yield
    except BrokenPipeError:
        raise SystemExit(code) from None
    if code:
        raise SystemExit(code)
