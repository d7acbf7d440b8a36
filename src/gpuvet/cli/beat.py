"""A line on stderr while work runs (``step``, ``heartbeat``), without rich: a piped run, a
``--json`` one, loads no terminal library for it (issue 43; ``gpuvet.cli.term`` re-exports both)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

from gpuvet.cli.literal import literal


def step(text: str) -> None:
    """One plain progress line on stderr (never markup); a closed stderr is ignored."""
    try:
        sys.stderr.write(f"gpuvet: {literal(text)}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


@contextlib.contextmanager
def heartbeat(what: str, every_s: float = 5.0) -> Iterator[None]:
    """For work that reports no steps: a spinner on a terminal; otherwise a plain line on stderr
    when it starts and every ``every_s`` seconds after, so a piped run is never silent."""
    if sys.stderr.isatty():
        from rich.text import Text

        from gpuvet.cli.term import console  # rich only for a spinner on a terminal

        with console(stderr=True).status(Text(what)):
            yield
        return
    import threading
    import time

    step(f"{what} …")
    done = threading.Event()
    start = time.monotonic()

    def beat() -> None:
        while not done.wait(every_s):
            step(f"{what}: still working, {time.monotonic() - start:.0f} s")

    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
