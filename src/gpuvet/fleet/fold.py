"""Envelope files folded into one peer table, in worker processes when there are many: 10,000
real-shaped envelopes of 800 figures are about 3 GB of JSON, and reading it is most of a merge's
time (the figures are decoded straight from the bytes: ``figures``). The workers read contiguous
runs of the files in order (a few per worker, so progress can be told as they land); the runs
are joined in file order, so the table (every id, order and outlier in it) is the one a single
process builds, and a bad file is reported as the first bad file in the list, as one process
would."""

from __future__ import annotations

import json
import multiprocessing
import os
import stat
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuvet.errors import GpuvetError
from gpuvet.fleet import figures
from gpuvet.fleet.peers import PeerTable, no_gc

MAX_JOBS = 8  # past this, reading the files from one disk or share is the bound, not parsing
# below this a worker costs more than it saves. Forked, a worker is cheap: here 200 files took
# 0.13 s in one process and 0.11 s in two, 1,000 files 0.63 s and 0.40 s (fold and analysis)
MIN_FILES_PER_JOB = 100
# a quick run of a 576-module node is ~7 MB of JSON, a standard run of 120 modules ~40 MB
MAX_ENVELOPE_BYTES = 1 << 30
RUNS_PER_JOB = 6  # each worker's files come back in about this many runs: progress as they land
PROGRESS_EVERY = 100  # files between two progress calls in one process

Progress = Callable[[int, int], None]  # (files read, files in all)


def read_envelope(path: Path) -> Any:
    """One envelope file, every key of it (what --report and --baseline-out need). orjson when
    installed (the ``fleet`` extra), where the standard library's parser takes 2-3x as long.
    What orjson refuses and Python's json reads (NaN, Infinity) goes to json, so both read the
    same files the same way. Raises OSError or ValueError, and GpuvetError past MAX_ENVELOPE_BYTES."""
    return parse_json(read_bounded(path))


def read_bounded(path: Path) -> bytes:
    """A file's bytes, refused past MAX_ENVELOPE_BYTES: ``/dev/zero``, or a pipe that never ends,
    would otherwise be read until memory runs out. A regular file is refused by its size, before
    a byte is read; a pipe (``<(ssh node gpuvet validate --json)``) is read a MiB at a time."""
    with path.open("rb") as f:
        info = os.fstat(f.fileno())
        if stat.S_ISREG(info.st_mode):
            if info.st_size > MAX_ENVELOPE_BYTES:
                raise _too_large(str(path), info.st_size)
            return f.read()
        chunks, size = [], 0
        while chunk := f.read(1 << 20):
            size += len(chunk)
            if size > MAX_ENVELOPE_BYTES:
                raise _too_large(str(path), None)
            chunks.append(chunk)
        return b"".join(chunks)


def _too_large(path: str, size: int | None) -> GpuvetError:
    """``size``: a regular file's; None for a stream cut off at the limit."""
    read = f"{size:,} bytes" if size is not None else f"more than {MAX_ENVELOPE_BYTES:,} bytes and not at its end"
    return GpuvetError(f"{read}: larger than any validate --json envelope (at most {MAX_ENVELOPE_BYTES:,} bytes "
                       "are read)", where=path,
                       fix="give the output of `gpuvet validate --json` (a device or an endless pipe is not one).")


def parse_json(data: bytes) -> Any:
    """``read_envelope`` of bytes already read."""
    try:
        import orjson

        return orjson.loads(data)
    except (ImportError, ValueError):  # orjson.JSONDecodeError is a ValueError
        return json.loads(data)


def default_jobs() -> int:
    """One per CPU this process may run on (a Slurm or cgroup allotment, not the whole machine)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, MAX_JOBS))


@dataclass(frozen=True)
class _Failed:
    """A worker's first bad file, sent back as text (an exception with keyword state does not
    always survive pickling)."""

    what: str
    where: str | None
    fix: str | None


def fold_file(table: PeerTable, path: str) -> Any:
    """Read one file and fold it into ``table``; returns the envelope. Bad input: GpuvetError
    naming the file (JSON that is no envelope: checks that are not a list of objects, numbers
    too big for a float, nesting too deep for the parser)."""
    try:
        env = read_envelope(Path(path))
    except (OSError, ValueError, RecursionError) as exc:
        raise _not_json(path, exc) from None
    with _named_errors(path):
        table.add(path, env)
    return env


def fold_figures(table: PeerTable, path: str) -> None:
    """``fold_file`` without keeping the envelope, by ``fold_bytes``."""
    try:
        data = read_bounded(Path(path))
    except OSError as exc:
        raise _not_json(path, exc) from None
    fold_bytes(table, path, data)


def fold_bytes(table: PeerTable, where: str, data: bytes) -> None:
    """Fold one envelope's JSON bytes into ``table``. The figures are decoded straight from the
    bytes (``figures.decode``), which skips what the peers never read (evidence, telemetry) and
    makes no dict per check; bytes that decoder does not take are read as ``fold_file`` reads
    them, so both fold the same table and refuse the same files with the same words."""
    with no_gc():
        decoded = figures.decode(data)
    if decoded is not None:
        with _named_errors(where):
            table.add_checks(where, decoded.node, decoded.simulated, decoded.checks)
        return
    try:
        env = parse_json(data)
    except (ValueError, RecursionError) as exc:
        raise _not_json(where, exc) from None
    with _named_errors(where):
        table.add(where, env)


def _not_json(path: str, exc: Exception) -> GpuvetError:
    if isinstance(exc, FileNotFoundError):
        return GpuvetError("no such file or folder", where=path, fix="check the path.")
    return GpuvetError(f"cannot read it as JSON ({exc})", where=path, fix="give the output of `gpuvet validate --json`.")


@contextmanager
def _named_errors(path: str) -> Iterator[None]:
    """What a malformed envelope raises while folding, as one clear error naming the file."""
    try:
        yield
    except (TypeError, AttributeError, ValueError, OverflowError, RecursionError) as exc:
        raise GpuvetError(f"not a validate --json envelope ({type(exc).__name__}: {exc})", where=path,
                          fix="give the output of `gpuvet validate --json`.") from None


def _fold_share(paths: Sequence[str]) -> tuple[PeerTable, _Failed | None]:
    """A run of files folded; at a bad file, the table of the files before it and the failure
    (joined first, that table may still hold an earlier error: a node given twice across runs)."""
    table = PeerTable()
    for path in paths:
        try:
            fold_figures(table, path)  # folded in and let go: a run never sits in memory at once
        except GpuvetError as exc:
            return table, _Failed(exc.what, exc.where, exc.fix)
    return table, None


def _workers(count: int, jobs: int) -> int:
    """Processes for ``count`` files: up to ``jobs``, each with at least MIN_FILES_PER_JOB."""
    return max(1, min(jobs, count // MIN_FILES_PER_JOB))


def _runs(count: int, workers: int) -> list[tuple[int, int]]:
    """The files cut in contiguous runs, about RUNS_PER_JOB a worker, handed out in file order."""
    pieces = max(1, min(count, workers * RUNS_PER_JOB))
    bounds = [count * k // pieces for k in range(pieces + 1)]
    return list(zip(bounds[:-1], bounds[1:], strict=True))


def _context() -> Any:
    """fork where it is safe (Linux, one Python thread: no copy of a held lock; the workers call
    no threaded library, numpy's BLAS included); else spawn."""
    if "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def fold_files(paths: Sequence[str], jobs: int = 1, progress: Progress | None = None) -> PeerTable:
    """Every file folded into one table, by up to ``jobs`` processes; ``progress`` is told
    (files read, files in all) as they are read."""
    told = progress or (lambda done, total: None)
    workers = _workers(len(paths), jobs)
    table = PeerTable()
    if workers == 1:
        for done, path in enumerate(paths, 1):
            fold_figures(table, path)
            if done % PROGRESS_EVERY == 0 or done == len(paths):
                told(done, len(paths))
        return table
    runs = _runs(len(paths), workers)
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=_context())
    try:
        for (_, stop), (part, failed) in zip(runs, pool.map(_fold_share, [paths[a:b] for a, b in runs]),
                                             strict=True):
            table.join(part)  # in file order: the first failure met is the first bad file in the list
            if failed is not None:
                raise GpuvetError(failed.what, failed.where, failed.fix)
            told(stop, len(paths))
    except BrokenProcessPool:  # a worker killed (out of memory, a signal): say so, not a traceback
        raise GpuvetError(f"a worker process reading the files died ({workers} workers)", where="fleet merge",
                          fix="merge with --jobs 1 (one process), or fewer jobs if memory is short.") from None
    finally:
        pool.shutdown(wait=True, cancel_futures=True)  # after a bad file, the runs not started yet are dropped
    return table
