"""Which recorded-telemetry format a file is, decided by its content (never its name), and the
file read within the bounds of watch/bounds.py.

Every file is first scanned (unpacked if gzip, counted, never kept): size, lines and the longest
line are known before any of it is parsed, so a bomb is refused with a megabyte of memory. The
parse pass checks the same bounds again while it reads, in case the file changed in between."""

from __future__ import annotations

import gzip
import itertools
import os
import re
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

from gpuvet import files
from gpuvet.errors import GpuvetError
from gpuvet.watch import bounds, formats, read_smi
from gpuvet.watch.recording import Recording

CHUNK = 2**20
HEAD = 16384
EXPECTED = ("an nvidia-smi --query-gpu CSV log (header line such as 'timestamp, index, temperature.gpu, "
            "power.draw [W], …'), an nvidia-smi dmon or pmon log ('# gpu pwr gtemp …' / '# gpu pid …'), a "
            "Prometheus text dump with timestamps (DCGM_FI_DEV_… or gpuvet_module_… series), the JSON of "
            "Prometheus' /api/v1/query_range, or the plain nvidia-smi table printed by nvidia-smi -l; any of them "
            "may be gzip-compressed")


def detect(head: str, fields: Sequence[str] = ()) -> str | None:
    """'query-csv', 'dmon', 'pmon', 'exposition', 'range-json', 'table' or None, from the first
    lines. ``fields``: the --query-gpu list of a log written with --format=csv,noheader."""
    kind = formats.recognise(head)
    if kind is not None:
        return kind
    lines = [line for line in head.splitlines() if line.strip()][:formats.HEAD_LINES]
    if fields and lines and lines[0].count(",") == len(fields) - 1:
        return "query-csv-noheader"
    return None


@dataclass(frozen=True)
class Scanned:
    """A file that passed the scan: its format, whether gzip, and its line count."""

    path: Path
    kind: str
    packed: bool
    lines: int


def _open(path: Path) -> BinaryIO:
    """The file for reading by the one safe opener (gpuvet/files.py), refused unless it is a
    regular file within the size bound; a FIFO is refused instead of waited on."""
    rules = files.Input(not_file=", not a file: a replay reads saved telemetry only",
                        fix="save the log to a file first (e.g. nvidia-smi … > node1.csv) and replay that.",
                        cannot="cannot read it", cannot_fix="check the path and its permissions.",
                        max_bytes=bounds.MAX_TEXT_BYTES, too_big=_too_big_on_disk)
    return files.open_input(path, str(path), rules)


def _too_big_on_disk(size: int, where: str | None) -> GpuvetError:
    return bounds.too_big(bounds.MAX_TEXT_BYTES, f"telemetry ({size / 2**20:,.0f} MiB on disk)", where or "")


def _chunks(raw: BinaryIO, packed: bool, where: str) -> Iterator[bytes]:
    """The file's bytes, unpacked if gzip (every member, zero padding as gzip reads it), a
    megabyte at a time."""
    try:
        yield from files.unpacked(raw, packed, CHUNK)
    except (zlib.error, EOFError) as exc:
        raise GpuvetError(f"a damaged gzip file ({exc})", where=where,
                          fix="copy the .gz again, or give the unpacked log.") from None


def _head(path: Path) -> tuple[str, bool]:
    """The first HEAD bytes as text (a byte-order mark dropped) and whether the file is gzip;
    UTF-16 text is refused."""
    with _open(path) as raw:
        packed = files.is_gzip(raw)
        head = b""
        for chunk in _chunks(raw, packed, str(path)):
            head += chunk
            if len(head) >= HEAD:
                break
    bounds.not_utf16(head, str(path))
    return bounds.decode_head(head[:HEAD]), packed


def _long_line(chunk: bytes, run: int) -> tuple[int, int]:
    """(offset in ``chunk`` of a line longer than MAX_LINE_CHARS or -1, the length of the line
    left open at its end). Jumps from newline to the last newline within the bound, so a
    megabyte of short lines costs a few dozen searches, not one per line."""
    limit = bounds.MAX_LINE_CHARS
    first = chunk.find(b"\n")
    if first < 0:
        return (0 if run + len(chunk) > limit else -1), run + len(chunk)
    if run + first > limit:
        return 0, 0
    i, last = first, chunk.rfind(b"\n")
    while i < last:
        k = chunk.rfind(b"\n", i + 1, i + limit + 2)
        if k < 0:
            return i + 1, 0
        i = k
    return -1, len(chunk) - last - 1


def scan(path: Path, fields: Sequence[str] = ()) -> Scanned:
    """Format, size, lines and longest line of ``path``, without keeping it. Raises GpuvetError."""
    where = str(path)
    try:
        head, packed = _head(path)
        kind = detect(head, fields)
        if kind is None:
            raise _unknown(head, where, fields)
        json = kind == "range-json"
        limit = bounds.MAX_JSON_BYTES if json else bounds.MAX_TEXT_BYTES
        total = lines = run = 0
        cr = False  # the last chunk ended in CR: a CR LF may be cut between two chunks
        with _open(path) as raw:
            for chunk in _chunks(raw, packed, where):
                total += len(chunk)
                if total > limit:
                    what = "query_range JSON" if json else "text"
                    raise bounds.too_big(limit, what + (" unpacked" if packed else ""), where)
                if json:
                    continue
                chunk, cr = bounds.line_ends(chunk, cr)  # CR and CR LF end lines as LF does
                bad, run_after = _long_line(chunk, run)
                if bad >= 0:
                    number = lines + chunk[:bad].count(b"\n") + 1
                    raise GpuvetError(f"line longer than {bounds.MAX_LINE_CHARS:,} characters", where=f"{where}:{number}",
                                      fix="check the file is a telemetry log (no telemetry line is this long).")
                run = run_after
                lines += chunk.count(b"\n")
                if lines > bounds.MAX_FILE_LINES:
                    raise bounds.too_many(lines, bounds.MAX_FILE_LINES, "lines" + (" unpacked" if packed else ""),
                                          where)
        return Scanned(path, kind, packed, lines + (1 if run else 0))
    except OSError as exc:
        raise GpuvetError(f"cannot read it ({exc.strerror or exc})", where=where,
                          fix="check the path and its permissions.") from None


_FIELD = re.compile(r"[a-z][a-z0-9_.]{0,63}")


def query_fields(text: str) -> tuple[str, ...]:
    """--fields: the --query-gpu list a header-less CSV log was written with, checked."""
    fields = tuple(f.strip().lower() for f in text.split(","))
    bad = next((f for f in fields if not _FIELD.fullmatch(f)), None)
    if bad is not None or len(fields) > 64:
        shown = "more than 64 fields" if bad is None else f"{bad!r} is not a --query-gpu field name"
        raise GpuvetError(shown, where="--fields", fix="give the comma list the log was written with, e.g. "
                          "timestamp,index,name,temperature.gpu,power.draw.")
    if not read_smi.is_query_header(",".join(fields)):
        raise GpuvetError("these fields hold no time, temperature, power or utilisation column beside another "
                          "field the replay reads", where="--fields",
                          fix="the list must hold at least two of timestamp, index, temperature.gpu, power.draw, "
                              "utilization.gpu, clocks.sm, including a time, temperature, power or utilisation.")
    return fields


# the unit nvidia-smi prints after a value of each kind of field (csv, without nounits)
_UNIT_OF = (("power.", "W"), ("utilization.", "%"), ("memory.", "MiB"), ("clocks.", "MHz"), ("temperature.", ""))


def _check_units(first_row: str, fields: Sequence[str], where: str) -> None:
    """A header-less log's first row against --fields: a value printed with a unit that is not
    its field's (a swapped list read watts as °C) is refused, naming the column."""
    for i, (field, cell) in enumerate(zip(fields, first_row.split(","), strict=False), 1):
        unit = cell.strip().partition(" ")[2].strip()
        want = next((u for prefix, u in _UNIT_OF if field.startswith(prefix)), None)
        if want is not None and unit and unit != want:
            raise GpuvetError(f"column {i} is {field!r} in --fields but its value {cell.strip()!r} is in {unit}",
                              where=f"{where}:1", fix="give --fields in the order the log was written with.")


def _unknown(head: str, where: str, fields: Sequence[str]) -> GpuvetError:
    """Say why the file is not read; for a header-less CSV log, how to name its columns."""
    first = next((line for line in head.splitlines() if line.strip()), "")
    if not first:  # csv_empty: said as empty, not as an unknown format
        return GpuvetError("the file is empty (no readings, no header)", where=where, fix=f"give {EXPECTED}.")
    if first.count(",") >= 2 and first[:1].isdigit():
        if fields:
            return GpuvetError(f"its rows have {first.count(',') + 1} columns but --fields names {len(fields)}",
                               where=where, fix="give --fields the same list the log was written with.")
        return GpuvetError("an nvidia-smi CSV log without its header line (--format=csv,noheader): its columns "
                           "cannot be named from the file", where=where,
                           fix="give the --query-gpu list it was logged with, e.g. --fields timestamp,index,name,"
                               "temperature.gpu,power.draw (one replay reads one such list).")
    return GpuvetError(f"not a telemetry format gpuvet reads; expected {EXPECTED}", where=where,
                       fix="check the file (its first lines are what decide the format).")


def parse(src: Scanned, interval_s: float, fields: Sequence[str] = (), node: str | None = None) -> Recording:
    """The recording in a scanned file; ``node``: the name of the node an nvidia-smi log is (by
    default the file's name up to its first dot). Raises GpuvetError."""
    where = str(src.path)
    try:
        with _open(src.path) as raw:
            binary = files.unpacked_stream(raw, src.packed)
            with bounds.open_text(binary) as text:  # a BOM dropped; CR, LF and CR LF end a line
                node = node or stem(src.path)
                fmt = formats.BY_NAME.get(src.kind)
                if fmt is not None and fmt.read_body is not None:
                    body = text.read(bounds.MAX_JSON_BYTES + 1)
                    if len(body) > bounds.MAX_JSON_BYTES:
                        raise bounds.too_big(bounds.MAX_JSON_BYTES, "query_range JSON", where)
                    return fmt.read_body(body, where)
                lines = bounds.text_lines(text, where)
                if fmt is not None and fmt.read is not None:
                    return fmt.read(lines, node, where, interval_s)
                if src.kind == "query-csv-noheader":  # the header the log was written without
                    first = next(lines, "")
                    _check_units(first, fields, where)
                    lines = itertools.chain([", ".join(fields) + "\n", first], lines)
                return read_smi.read_query_csv(lines, node, where, interval_s)
    except OSError as exc:
        raise GpuvetError(f"cannot read it ({exc.strerror or exc})", where=where,
                          fix="check the path and its permissions.") from None
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise GpuvetError(f"a damaged gzip file ({exc})", where=where,
                          fix="copy the .gz again, or give the unpacked log.") from None


def read_file(path: Path, interval_s: float, fields: Sequence[str] = ()) -> Recording:
    """Raises GpuvetError for a missing, unreadable, special, oversized or unrecognised file."""
    return once_per_time(parse(scan(path, fields), interval_s, fields), path.name)


def once_per_time(rec: Recording, label: str) -> Recording:
    """One sample per module and time: a log appended to itself (or a clock set back an hour) repeats
    rows; the first reading of each module at each time is kept and the repeats are counted in a note,
    saying whether they read the same (never a silent merge)."""
    if rec.relative_time:
        return rec  # times counted from the start are the reader's own: no repeats to find
    if rec.only_columns and all(bool((np.diff(c.t) > 0).all()) or len(np.unique(c.t)) == len(c) for c in rec.columns):
        return rec  # no module read twice at one time: nothing to drop (the columns stay columns)
    first: dict[tuple[str, float], object] = {}
    kept, same, differ = [], 0, 0
    for s in rec.samples:
        key = (s.module, s.t)
        if key not in first:
            first[key] = s
            kept.append(s)
        elif first[key] == s:
            same += 1
        else:
            differ += 1
    if same or differ:
        rec.samples = kept
        rec.notes.append(f"{label}: {same + differ} row(s) repeat a module at a time it already had (a log appended twice, "
                         f"or a clock set back): read once, the first kept ({same} the same, {differ} differing)")
    return rec


def read_files(paths: Sequence[Path], interval_s: float, fields: Sequence[str] = ()) -> Recording:
    """Every file scanned before any is parsed: the replay's total is known up front. ``fields``
    names the columns of header-less CSV logs (files with a header keep their own). Each
    nvidia-smi log is a node of its own name (``node_names``); two files are joined into one node
    only where no module of it is in both at overlapping times or with another UUID (``joined``)."""
    if not paths:
        raise GpuvetError("no file to replay", where="--replay", fix="give one or more telemetry files after it.")
    _given_once(paths)
    scanned = [scan(p, fields) for p in paths]
    total = sum(s.lines for s in scanned)
    if total > bounds.MAX_REPLAY_LINES:
        raise bounds.too_many(total, bounds.MAX_REPLAY_LINES, f"lines in {len(paths)} files", "--replay",
                              "replay fewer files at a time (a day or a rack each).")
    names, notes = node_names([s.path for s in scanned], [s.kind not in _LABELLED for s in scanned])
    recs = [once_per_time(parse(s, interval_s, fields, name), s.path.name)
            for s, name in zip(scanned, names, strict=True)]
    timed = [str(s.path) for s, r in zip(scanned, recs, strict=True) if not r.relative_time]
    untimed = [str(s.path) for s, r in zip(scanned, recs, strict=True) if r.relative_time]
    if timed and untimed:
        raise GpuvetError(f"{untimed[0]} has no timestamps (times counted from its start) but {timed[0]} has "
                          "recorded times: one replay cannot put both on one time line", where="--replay",
                          fix="replay the files without timestamps separately, or log them with timestamps "
                              "(--query-gpu=timestamp,… or dmon -o DT).")
    notes += joined([str(s.path) for s in scanned], recs)
    out = Recording(" + ".join(sorted({r.source for r in recs})))
    for r in recs:
        out.merge(r)
        if len(out.modules) > bounds.MAX_MODULES:
            raise bounds.too_many(len(out.modules), bounds.MAX_MODULES, "modules", "--replay",
                                  "replay fewer nodes at a time.")
    out.notes.extend(notes)
    return out


# formats whose node is named in the data (Hostname / instance labels), not after the file
_LABELLED = ("exposition", "range-json")


def stem(path: Path) -> str:
    """The node an nvidia-smi log is when its name is its own: the file's name up to its first dot."""
    return path.name.split(".")[0] or "node"


def _given_once(paths: Sequence[Path]) -> None:
    """Refuses one file given twice (under two spellings or links): its readings would be read
    as one node's twice, or as two nodes."""
    seen: dict[tuple[int, int], Path] = {}
    for p in paths:
        try:
            st = os.stat(p)
        except OSError:
            continue  # the scan names the missing or unreadable file
        first = seen.setdefault((st.st_dev, st.st_ino), p)
        if first is not p:
            raise GpuvetError(f"{first} and {p} are the same file, given twice", where="--replay",
                              fix="give each file once.")


def node_names(paths: Sequence[Path], named_by_file: Sequence[bool]) -> tuple[list[str], list[str]]:
    """Each file's node name and notes on how the shared ones were made. An nvidia-smi log is the
    node of its file's name; where logs in different folders share a name (node01/gpu.csv,
    node02/gpu.csv: a fleet's logs collected per node) each is named after the nearest folder
    that tells them apart (node01, node02). Logs of one name in one folder stay one node (a
    rotated log: gpu.csv, gpu.csv.1.gz), joined only if they agree (``joined``)."""
    names = [stem(p) for p in paths]
    groups: dict[str, list[int]] = {}
    for i, (name, own) in enumerate(zip(names, named_by_file, strict=True)):
        if own:
            groups.setdefault(name, []).append(i)
    notes = []
    for name, idx in groups.items():
        folders = {i: Path(os.path.abspath(paths[i])).parent.parts for i in idx}
        if len(set(folders.values())) < 2:
            continue
        by_folder = _folder_names(sorted(set(folders.values())))
        for i in idx:
            names[i] = by_folder[folders[i]]
        shown = ", ".join(f"{paths[i]} → {names[i]}" for i in idx[:6]) + (f" and {len(idx) - 6} more"
                                                                        if len(idx) > 6 else "")
        notes.append(f"{len(idx)} files are named {name!r} in different folders: each folder's is a node named "
                     f"after the folder ({shown})")
    return names, notes


def _folder_names(folders: Sequence[tuple[str, ...]]) -> dict[tuple[str, ...], str]:
    """Each folder (its path's parts) -> the nearest part of its path that no other folder has at
    the same depth from the end (node01 of /logs/node01); else the parts after their common start,
    joined by '-'."""
    deepest = max(len(f) for f in folders)
    for depth in range(1, deepest + 1):
        parts = [f[-depth] if len(f) > depth else "" for f in folders]  # the root '/' tells nothing apart
        if all(parts) and len(set(parts)) == len(parts):
            return dict(zip(folders, parts, strict=True))
    common = len(os.path.commonprefix([list(f) for f in folders]))
    return {f: "-".join(f[common:]) or (f[-1] if len(f) > 1 else "root") for f in folders}


@dataclass
class _Held:
    """A module as one file of the replay holds it: the file, its UUID (None: the file has none)
    and the span of its readings."""

    path: str
    uuid: str | None
    first: float
    last: float
    relative: bool  # times counted from the file's start, not recorded


def joined(paths: Sequence[str], recs: Sequence[Recording]) -> list[str]:
    """Modules of one name from two files (a node's rotated logs; a node name two files share) are
    joined when they are one board's readings (the same UUID) or follow each other in time; else
    refused (GpuvetError): the UUIDs differ or, without them, the spans overlap (two machines' logs,
    merged, would keep one reading of each pair: half the data gone). Returns the note on the
    nodes read from more than one file. Costs nothing where no module name is in two files."""
    owners: dict[str, list[int]] = {}
    for i, rec in enumerate(recs):
        for name in rec.modules:
            owners.setdefault(name, []).append(i)
    shared = {name: idx for name, idx in owners.items() if len(idx) > 1}
    spans = {i: _spans(recs[i], shared) for i in sorted({i for idx in shared.values() for i in idx})}
    for name, idx in shared.items():
        held = [_held(paths[i], recs[i], name, spans[i][name]) for i in idx if name in spans[i]]
        for k, a in enumerate(held):
            for b in held[k + 1:]:
                _check_join(name, a, b)
    files: dict[str, list[str]] = {}
    for path, rec in zip(paths, recs, strict=True):
        for node in sorted({m.node for m in rec.modules.values()}):
            files.setdefault(node, []).append(path)
    joins = [(node, fs) for node, fs in files.items() if len(fs) > 1]
    if not joins:
        return []
    shown = "; ".join(f"{node} from {', '.join(fs[:4])}" + (f" and {len(fs) - 4} more" if len(fs) > 4 else "")
                      for node, fs in joins[:4])
    more = f" and {len(joins) - 4} more" if len(joins) > 4 else ""
    return [f"{len(joins)} node(s) read from more than one file, joined on one time line (no module of them in two "
            f"files at overlapping times or under two UUIDs): {shown}{more}"]


def _spans(rec: Recording, names: Mapping[str, object]) -> dict[str, tuple[float, float]]:
    """First and last reading time of each module of ``rec`` named in ``names``."""
    spans: dict[str, tuple[float, float]] = {}
    for smp in rec.samples:
        if smp.module in names:
            lo, hi = spans.get(smp.module, (smp.t, smp.t))
            spans[smp.module] = (min(lo, smp.t), max(hi, smp.t))
    return spans


def _held(path: str, rec: Recording, name: str, span: tuple[float, float]) -> _Held:
    meta = rec.modules[name]
    uuid = None if meta.uuid.startswith(meta.node + "/") else meta.uuid  # node/gpuN: the file has no UUID
    return _Held(path, uuid, span[0], span[1], rec.relative_time)


def _check_join(name: str, a: _Held, b: _Held) -> None:
    """Raises GpuvetError where ``a`` and ``b`` cannot be one module's readings."""
    if a.uuid and b.uuid and a.uuid == b.uuid:
        return  # one board read twice (overlapping logs): each reading is used once
    if a.uuid and b.uuid:
        why = f"as two boards (UUID {a.uuid} and {b.uuid})"
    elif a.first <= b.last and b.first <= a.last:
        why = "at overlapping times" + (" (both without timestamps: times counted from each file's start)"
                                        if a.relative and b.relative else "")
    else:
        return  # one after the other: a rotated log
    raise GpuvetError(f"{a.path} and {b.path} both hold module {name} {why}: joined, the replay would merge "
                      "two machines' readings and drop one of each pair", where="--replay",
                      fix="give each node's logs a name of their own (a log is the node of its file's name, or of "
                          "its folder where logs in different folders share a name), or replay them in two runs.")
