"""Envelope files folded into one peer table, in worker processes when there are many: 10,000
real-shaped envelopes of 800 figures are about 3 GB of JSON, and reading it is most of a merge's
time (the figures are decoded straight from the bytes: ``figures``). The workers read contiguous
runs of the files in order (a few per worker, so progress can be told as they land); the runs
are joined in file order, so the table (every id, order and outlier in it) is the one a single
process builds, and a bad file is reported as the first bad file in the list, as one process
would."""

from __future__ import annotations

import json
import math
import multiprocessing
import os
import stat
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import compress, repeat
from multiprocessing.context import BaseContext
from operator import is_
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from gpuvet.errors import GpuvetError
from gpuvet.files import Input, read_input
from gpuvet.fleet import figures
from gpuvet.fleet.peers import NodeChecks, PeerTable, checks_as_columns, no_gc, node_identity
from gpuvet.fleet.roots import read_roots

if TYPE_CHECKING:
    from pydantic import JsonValue  # for its type only: loading pydantic costs a fleet merge's start ~18 ms

MAX_JOBS = 8  # past this, reading the files from one disk or share is the bound, not parsing
# below this a worker costs more than it saves. Forked, a worker is cheap: here 200 files took
# 0.13 s in one process and 0.11 s in two, 1,000 files 0.63 s and 0.40 s (fold and analysis)
MIN_FILES_PER_JOB = 100
# a quick run of a 576-module node is ~7 MB of JSON, a standard run of 120 modules ~40 MB
MAX_ENVELOPE_BYTES = 1 << 30
MAX_STREAM_BYTES = 128 << 20  # from a pipe, held while it is read: a refusal stays far under 200 MiB
RUNS_PER_JOB = 6  # each worker's files come back in about this many runs: progress as they land
PROGRESS_EVERY = 100  # files between two progress calls in one process

Progress = Callable[[int, int], None]  # (files read, files in all)


def read_envelope(path: Path) -> JsonValue:
    """One envelope file, every key of it (what --report and --baseline-out need). orjson when
    installed (the ``fleet`` extra), where the standard library's parser takes 2-3x as long.
    What orjson refuses and Python's json reads (NaN, Infinity) goes to json, so both read the
    same files the same way. Raises OSError or ValueError, and GpuvetError past MAX_ENVELOPE_BYTES."""
    return parse_json(read_bounded(path))


def read_bounded(path: Path) -> bytes:
    """A file's bytes by the one safe opener (gpuvet/files.py), refused past MAX_ENVELOPE_BYTES:
    a regular file by its size, before a byte is read; a pipe made by the shell
    (``<(ssh node gpuvet validate --json)``) is read a MiB at a time up to MAX_STREAM_BYTES. A
    named pipe (FIFO), a device (``/dev/zero``) or a socket is refused at once: a FIFO with no
    writer waited forever, a device was read until memory ran out. An OSError goes through."""
    rules = Input(not_file=", not a file", kind=_special, cannot=None, pipes=True, pipe_bytes=MAX_STREAM_BYTES,
                  fix="give the file `gpuvet validate --json > NODE.json` wrote (or the shell's <(command) for a "
                      "command's output).", max_bytes=MAX_ENVELOPE_BYTES, too_big=_too_large)
    return read_input(path, str(path), rules)


def _special(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    return "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket or other special file"


def _too_large(size: int, path: str | None) -> GpuvetError:
    """``size``: a regular file's; -1 for a stream cut off at the limit."""
    if size < 0:
        return GpuvetError(f"more than {MAX_STREAM_BYTES:,} bytes from a pipe and not at its end (at most "
                           f"{MAX_STREAM_BYTES:,} bytes are read from a pipe)", where=path,
                           fix="save a large envelope to a file and give the file (an endless pipe is no envelope).")
    return GpuvetError(f"{size:,} bytes: larger than any validate --json envelope (at most {MAX_ENVELOPE_BYTES:,} "
                       "bytes are read)", where=path, fix="give the output of `gpuvet validate --json`.")


def parse_json(data: bytes) -> JsonValue:
    """``read_envelope`` of bytes already read. A key given twice in one object raises DuplicateKey (orjson
    and json alone keep the last silently: `environment.node` twice was pooled as the second node)."""
    parsed: JsonValue = json.loads(data, object_pairs_hook=_no_twice)
    return parsed


class DuplicateKey(ValueError):
    """A key given twice in one JSON object: which value is meant is not known."""


def _no_twice(pairs: list[tuple[str, JsonValue]]) -> dict[str, JsonValue]:
    kept = dict(pairs)
    if len(kept) == len(pairs):
        return kept
    seen: dict[str, JsonValue] = {}
    for key, value in pairs:
        if key in seen:
            raise DuplicateKey(f"the key {key[:60]!r} is given twice in one JSON object ({_short(seen[key])}, then "
                               f"{_short(value)}): which one is meant is not known")
        seen[key] = value
    return kept  # not reached: a shorter dict has a key twice


def _short(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False) if isinstance(value, str | int | float | bool | None) else \
        type(value).__name__
    return text if len(text) <= 40 else text[:37] + "..."


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


def fold_file(table: PeerTable, path: str, notes: list[str] | None = None) -> dict[str, JsonValue]:
    """Read one file and fold it into ``table``; returns the envelope (a figure that is not
    finite set to null, as said in ``notes``). Bad input: GpuvetError naming the file and the
    field (``fold_envelope``), or why it is not JSON (numbers too big for a float, nesting too
    deep for the parser)."""
    try:
        env = read_envelope(Path(path))
    except (OSError, ValueError, RecursionError) as exc:
        raise _not_json(path, exc) from None
    return fold_envelope(table, path, env, notes)


def fold_figures(table: PeerTable, path: str, notes: list[str] | None = None) -> None:
    """``fold_file`` without keeping the envelope, by ``fold_bytes``."""
    try:
        data = read_bounded(Path(path))
    except OSError as exc:
        raise _not_json(path, exc) from None
    fold_bytes(table, path, data, notes)


def fold_bytes(table: PeerTable, where: str, data: bytes, notes: list[str] | None = None) -> None:
    """Fold one envelope's JSON bytes into ``table``. The figures are decoded straight from the
    bytes (``figures.decode``), which skips what the peers never read (evidence, telemetry) and
    makes no dict per check; bytes that decoder does not take are read as ``fold_file`` reads
    them, so both fold the same table and refuse the same files with the same words."""
    with no_gc():
        decoded = figures.decode(data)
    if decoded is not None:  # typed as fold_envelope would check it (figures' docstring)
        _refuse_twice(where, data)
        with _named_errors(where):
            table.add_checks(where, decoded.node, decoded.simulated, decoded.checks, decoded.modules, decoded.verdict,
                             decoded.roots)
        return
    try:
        env = parse_json(data)
    except (ValueError, RecursionError) as exc:
        raise _not_json(where, exc) from None
    fold_envelope(table, where, env, notes)


def fold_envelope(table: PeerTable, where: str, env: JsonValue, notes: list[str] | None = None) -> dict[str, JsonValue]:
    """Fold one envelope read as Python objects, checked against the run document's types first
    (docs/schema/run-document.schema.json) for every field the peers read, so nothing of the
    wrong type is pooled: GpuvetError naming the file and the field. A figure that is NaN or
    infinite is set to null and said in ``notes`` (validate --json writes null where it has no
    figure): one NaN among a series made its median NaN, and a real outlier went unnamed.
    Returns the envelope (an object: anything else is refused)."""
    if not isinstance(env, dict):
        raise _wrong(where, "the document", f"is {_kind(env)}, not an object")
    node, simulated = _head(env, where)
    with _named_errors(where), no_gc():
        columns = checks_as_columns(env.get("checks", []))
    columns = _checked_checks(columns, where, notes, env.get("checks"))
    environment = env["environment"]  # _head made sure it is an object whose modules are objects with text
    listed = environment.get("modules", []) if isinstance(environment, dict) else []
    modules = [(_text(m.get("id")), _text(m.get("model"))) for m in listed if isinstance(m, dict)] \
        if isinstance(listed, list) else []
    verdict = env.get("verdict")
    with _named_errors(where):
        pooled = table.add_checks(where, node, simulated, columns, modules, verdict if isinstance(verdict, str) else None,
                                  read_roots(env.get("roots")))
    if pooled is not columns:  # figures left out as corrupt: out of a kept envelope too (--report, --baseline-out)
        _null_left_out(env.get("checks"), columns, pooled)
    return env


def _text(value: JsonValue) -> str | None:
    return value if isinstance(value, str) else None


def _null_left_out(checks: object, columns: NodeChecks, pooled: NodeChecks) -> None:
    """Set to null, in the check objects ``columns`` came from, each figure ``pooled`` left out."""
    if not isinstance(checks, list):
        return
    for i, (was, now) in enumerate(zip(columns.value, pooled.value, strict=True)):
        if now is None and was is not None and isinstance(checks[i], dict):
            checks[i]["value"] = None


_VERDICTS = frozenset({"pass", "warn", "fail", "skip", None})
_SCALARS = frozenset({type(None), bool, int, float, str})
_TEXT = frozenset({type(None), str})
_INT64 = (-(2 ** 63), 2 ** 63 - 1)  # what the figures decoder takes as a schema version
_FLOAT_MAX = 2 ** 1024  # an integer from here on is no double: an OverflowError in the table


def _wrong(where: str, field: str, problem: str) -> GpuvetError:
    return GpuvetError(f"not a validate --json envelope: {field} {problem}", where=where,
                       fix="give the output of `gpuvet validate --json` (docs/schema/run-document.schema.json "
                           "describes it).")


def _kind(value: object) -> str:
    """A JSON value's kind in a message (the value itself may be huge or hostile)."""
    return {type(None): "null", bool: "true/false", int: "a number", float: "a number", str: "text",
            list: "a list", dict: "an object"}.get(type(value), type(value).__name__)


def _head(env: dict[str, JsonValue], where: str) -> tuple[tuple[str, str, int], bool]:
    """(node, node type, schema version) and whether it was simulated, each of its type in the
    run document: GpuvetError naming the first field that is not."""
    schema = env.get("schema_version")
    if schema.__class__ is not int or not _INT64[0] <= schema <= _INT64[1]:
        from gpuvet.logbook.document import DOCUMENT_VERSION  # here only: it loads pydantic (~18 ms of a start)

        raise _wrong(where, "schema_version", "is missing" if "schema_version" not in env else
                     f"is {_kind(schema)}, not a whole number of 64 bits (validate writes {DOCUMENT_VERSION})")
    environment = env.get("environment")
    if not isinstance(environment, dict):
        raise _wrong(where, "environment", "is missing" if environment is None and "environment" not in env else
                     f"is {_kind(environment)}, not an object")
    node, node_type = environment.get("node"), environment.get("node_type")
    if node.__class__ is not str:
        raise _wrong(where, "environment.node", "is missing" if "node" not in environment else
                     f"is {_kind(node)}, not text")
    if node_type.__class__ not in _TEXT:
        raise _wrong(where, "environment.node_type", f"is {_kind(node_type)}, not text")
    modules = environment.get("modules", [])
    if not isinstance(modules, list):
        raise _wrong(where, "environment.modules", f"is {_kind(modules)}, not a list of modules")
    for i, module in enumerate(modules):
        if not isinstance(module, dict) or module.get("id").__class__ not in _TEXT:
            what = f"is {_kind(module)}, not an object" if not isinstance(module, dict) else "has an id that is not text"
            raise _wrong(where, f"environment.modules[{i}]", what)
        if module.get("model").__class__ not in _TEXT:
            raise _wrong(where, f"environment.modules[{i}]", "has a model that is not text")
    simulated = env.get("simulated", False)
    if simulated.__class__ is not bool:
        raise _wrong(where, "simulated", f"is {_kind(simulated)}, not true or false")
    verdict = env.get("verdict")
    if verdict.__class__ not in _TEXT or verdict not in _VERDICTS:
        raise _wrong(where, "verdict", "is not one of pass, warn, fail, skip")
    return node_identity(node, node_type, schema), simulated


def _checked_checks(columns: NodeChecks, where: str, notes: list[str] | None, checks: object) -> NodeChecks:
    """The checks' columns as the run document types them (GpuvetError naming the first check
    and field that is not); a figure that is not finite becomes null, said in ``notes`` (and in
    ``checks``, the dicts they came from, when given). Whole columns are tested at C speed
    first: a check-by-check loop runs only where something is wrong."""
    for label in ("layer", "name", "unit", "module"):
        column = getattr(columns, label)
        if not _TEXT.issuperset(map(type, column)):
            i = next(i for i, v in enumerate(column) if v.__class__ not in _TEXT)
            raise _wrong(where, f"checks[{i}].{label}", f"is {_kind(column[i])}, not text")
    if not _TEXT.issuperset(map(type, columns.verdict)) or not _VERDICTS.issuperset(columns.verdict):
        i = next(i for i, v in enumerate(columns.verdict) if v.__class__ not in _TEXT or v not in _VERDICTS)
        raise _wrong(where, f"checks[{i}].verdict", "is not one of pass, warn, fail, skip")
    for i, pair in enumerate(columns.between):
        if pair is not None and (not isinstance(pair, (list, tuple)) or len(pair) != 2
                                 or not all(p.__class__ is str for p in pair)):
            raise _wrong(where, f"checks[{i}].between", "is not two modules named in text")
    values = columns.value
    kinds = set(map(type, values))
    if not _SCALARS.issuperset(kinds):
        i = next(i for i, v in enumerate(values) if v.__class__ not in _SCALARS)
        raise _wrong(where, f"checks[{i}].value", f"is {_kind(values[i])}, not a number, text, true/false or null")
    if int in kinds and not all(-_FLOAT_MAX < v < _FLOAT_MAX for v in values if v.__class__ is int):
        i = next(i for i, v in enumerate(values) if v.__class__ is int and not -_FLOAT_MAX < v < _FLOAT_MAX)
        raise _wrong(where, f"checks[{i}].value", "is an integer beyond any figure (more than a double holds)")
    if float in kinds and not np.isfinite(np.fromiter(compress(values, map(is_, map(type, values), repeat(float))),
                                                      dtype=np.float64)).all():
        return _without_non_finite(columns, where, notes, checks)
    return columns


def _without_non_finite(columns: NodeChecks, where: str, notes: list[str] | None, checks: object) -> NodeChecks:
    bad = [i for i, v in enumerate(columns.value) if v.__class__ is float and not math.isfinite(v)]
    value = list(columns.value)
    for i in bad:
        value[i] = None
        if isinstance(checks, list) and isinstance(checks[i], dict):
            checks[i]["value"] = None
    if notes is not None:
        named = ", ".join(f"checks[{i}] ({columns.layer[i]}/{columns.name[i]}"
                          f"{' on ' + str(columns.module[i]) if columns.module[i] else ''})" for i in bad[:3])
        notes.append(f"{where}: {len(bad)} figure(s) NaN or infinite, left out of the peer comparison: {named}"
                     f"{' …' if len(bad) > 3 else ''} (validate --json writes null where it has no figure)")
    return columns._replace(value=value)


def _refuse_twice(where: str, data: bytes) -> None:
    """The typed decoder keeps a key's last value silently: the bytes are read once more for keys given twice
    (the cost of reading every envelope the same way, whichever reader folds it)."""
    try:
        json.loads(data, object_pairs_hook=_no_twice)
    except DuplicateKey as exc:
        raise _not_json(where, exc) from None
    except (ValueError, RecursionError):
        return  # the typed decoder read it; what json alone refuses (a huge number) is not this check's


def _not_json(path: str, exc: Exception) -> GpuvetError:
    if isinstance(exc, FileNotFoundError):
        return GpuvetError("no such file or folder", where=path, fix="check the path.")
    if isinstance(exc, DuplicateKey):
        return GpuvetError(str(exc), where=path, fix="give the unedited output of `gpuvet validate --json` (an "
                                                     "envelope edited by hand, or two joined?).")
    return GpuvetError(f"cannot read it as JSON ({exc})", where=path, fix="give the output of `gpuvet validate --json`.")


@contextmanager
def _named_errors(path: str) -> Iterator[None]:
    """What a malformed envelope raises while folding, as one clear error naming the file."""
    try:
        yield
    except (TypeError, AttributeError, ValueError, OverflowError, RecursionError) as exc:
        raise GpuvetError(f"not a validate --json envelope ({type(exc).__name__}: {exc})", where=path,
                          fix="give the output of `gpuvet validate --json`.") from None


def _fold_share(paths: Sequence[str]) -> tuple[PeerTable, _Failed | None, list[str]]:
    """A run of files folded; at a bad file, the table of the files before it and the failure
    (joined first, that table may still hold an earlier error: a node given twice across runs);
    and the notes of the files folded."""
    table, notes = PeerTable(), list[str]()
    for path in paths:
        try:
            fold_figures(table, path, notes)  # folded in and let go: a run never sits in memory at once
        except GpuvetError as exc:
            return table, _Failed(exc.what, exc.where, exc.fix), notes
    return table, None, notes


def _workers(count: int, jobs: int) -> int:
    """Processes for ``count`` files: up to ``jobs``, each with at least MIN_FILES_PER_JOB."""
    return max(1, min(jobs, count // MIN_FILES_PER_JOB))


def _runs(count: int, workers: int) -> list[tuple[int, int]]:
    """The files cut in contiguous runs, about RUNS_PER_JOB a worker, handed out in file order."""
    pieces = max(1, min(count, workers * RUNS_PER_JOB))
    bounds = [count * k // pieces for k in range(pieces + 1)]
    return list(zip(bounds[:-1], bounds[1:], strict=True))


def _context() -> BaseContext:
    """fork where it is safe (Linux, one Python thread: no copy of a held lock; the workers call
    no threaded library, numpy's BLAS included); else spawn."""
    if "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def fold_files(paths: Sequence[str], jobs: int = 1, progress: Progress | None = None,
               notes: list[str] | None = None) -> PeerTable:
    """Every file folded into one table, by up to ``jobs`` processes; ``progress`` is told
    (files read, files in all) as they are read; ``notes`` gets what was left out, in file order."""
    told = progress or (lambda done, total: None)
    workers = _workers(len(paths), jobs)
    table = PeerTable()
    if workers == 1:
        for done, path in enumerate(paths, 1):
            fold_figures(table, path, notes)
            if done % PROGRESS_EVERY == 0 or done == len(paths):
                told(done, len(paths))
        return table
    runs = _runs(len(paths), workers)
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=_context())
    try:
        for (_, stop), (part, failed, said) in zip(runs, pool.map(_fold_share, [paths[a:b] for a, b in runs]),
                                                   strict=True):
            table.join(part)  # in file order: the first failure met is the first bad file in the list
            if notes is not None:
                notes += said
            if failed is not None:
                raise GpuvetError(failed.what, failed.where, failed.fix)
            told(stop, len(paths))
    except BrokenProcessPool:  # a worker killed (out of memory, a signal): say so, not a traceback
        raise GpuvetError(f"a worker process reading the files died ({workers} workers)", where="fleet merge",
                          fix="merge with --jobs 1 (one process), or fewer jobs if memory is short.") from None
    finally:
        pool.shutdown(wait=True, cancel_futures=True)  # after a bad file, the runs not started yet are dropped
    return table
