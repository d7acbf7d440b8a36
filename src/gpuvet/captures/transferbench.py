"""AMD's TransferBench output (github.com/ROCm/TransferBench; tools/TransferBench in older rccl).

Read: the ``p2p`` tables (``Unidirectional``/``Bidirectional copy peak bandwidth GB/s …``, CPU and
GPU rows and columns; uni rows ``->`` with optional ``min``/``max``/``sd`` rows, bidir rows ``->``,
``<-``, ``<->``), the ``a2a`` summary (``SRC\\DST GPU 00 …  STotal  Actual``), a config-file run's
``Test N:`` / ``Transfer NN | x GB/s | y ms | n bytes | G0 -> G000:004 -> G1`` lines, and its
``[ERROR]`` lines. Matrices take nvbandwidth's shape (test name -> rows of GB/s, ``None`` for
N/A) so the doctor judges them alike, each named "TransferBench …" with the source and
destination kinds (GPU->GPU, CPU->GPU, GPU->CPU, CPU->CPU). In a bidirectional table the ``<-``
row is the reverse copy measured at the same time; it is kept transposed (row = source), the
``<->`` sums and the min/max/sd rows are claimed, not kept. A data mismatch TransferBench found
(``Unexpected mismatch``) is a copy check failure as nvbandwidth's; any other ``[ERROR]`` line is
a run that stopped, kept with its words as a test not run (nvbandwidth's ``Waived``), named
"TransferBench". All of it is given as nvbandwidth's records (``records``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from gpuvet.captures.bench import NvbParse, NvbWaived
from gpuvet.captures.records import TRANSFERBENCH, CopyCheckFailure, ListedModule, ListedParse
from gpuvet.captures.text import Line, ranges

MAX_DEVICES = 4096  # columns in one table and a device's index: the AMD listings' bound (docs/limits.md); past it, not read
PREFIX = TRANSFERBENCH
_TITLE = re.compile(r"^(Uni|Bi)directional copy peak bandwidth GB/s \[(\w+) read / (\w+) write\]"
                    r"(?: \(GPU-Executor: (\w+)\))?")
_HEAD = re.compile(r"^(SRC\+EXE\\DST|SRC\\EXE\+DST|SRC\\DST)\s+((?:(?:CPU|GPU)\s*\d+\s*)+)(STotal\s+Actual)?\s*$")
_ROW = re.compile(r"^(CPU|GPU)\s*(\d+)\s*(->|<->|<-|min|max|sd)?\s+(.*)$")
_TRANSFER = re.compile(r"^Transfer\s+(\d+)\s*\|\s*(\S+)\s+GB/s\s*\|\s*(\S+)\s+ms\s*\|\s*(\d+)\s+bytes\s*\|\s*(.+)$")
_TEST = re.compile(r"^Test\s+(\d+):\s*$")
_VERSION = re.compile(r"^TransferBench v(\d[\w.]*)")
_ERROR = re.compile(r"^\[ERROR\]\s*(.*)$")
# a scaling preset's sweep: one source's copy rate to each device at 1, 2, … CUs (or DMA engines)
_SCALING = re.compile(r"^GPU-(\w+) Scaling benchmark:?\s*$")
_SCALING_HEAD = re.compile(r"^Num\w+\s+((?:(?:CPU|GPU)\s*\d+\s*)+)$")
_SCALING_FROM = re.compile(r"^- Copying \d+ bytes from (CPU|GPU) ?(\d+)|^- All numbers reported")
_SCALING_ROW = re.compile(r"^(\d+)\s+((?:\S+\s*)+)$")
_META = re.compile(r"^(Bytes Per Direction|Averages \(During|Average\s+bandwidth|Aggregate bandwidth|Aggregate \(CPU\)|"
                   r"Executor:|Iter \d+\s*\||StandardDev\s*\||Summary:|GPU-GFX All-To-All|- Copying|RTotal|"
                   r"\[WARN\]|\[[A-Za-z0-9 ]+(Related)?\]\s*$|[A-Z][A-Z0-9_]+\s+=\s+\S+ :|=+\s*$|CPU->CPU\s+CPU->GPU|##|"
                   r"([^\s=]+=\S+\s+)*(\S*/)?TransferBench\b)")


@dataclass(frozen=True)
class TbTransfer:
    """One Transfer of a config-file run, as TransferBench printed it."""

    test: int | None  # the 'Test N:' it belongs to (None: cut before it)
    index: int
    gbps: float | None
    ms: float | None
    size_bytes: int
    route: str  # 'G0 -> G000:004 -> G1' (source, executor:subexecutors, destination)
    line: int


@dataclass(frozen=True)
class TbError:
    """An [ERROR] line that stopped the run (a data mismatch goes to ``failures`` instead)."""

    text: str
    line: int


@dataclass
class TbParse:
    matrices: dict[str, list[list[float | None]]] = field(default_factory=dict)
    transfers: list[TbTransfer] = field(default_factory=list)
    errors: list[TbError] = field(default_factory=list)
    failures: list[CopyCheckFailure] = field(default_factory=list)
    version: str | None = None
    gpus: set[int] = field(default_factory=set)  # every GPU a table names (its rows, columns, a sweep's source)
    claimed: set[int] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)


def _figure(text: str) -> float | None:
    try:
        v = float(text)
    except ValueError:
        return None
    return v if math.isfinite(v) and v >= 0 else None


def _is_transferbench(lines: list[Line]) -> bool:
    """Only a capture with one of TransferBench's own markers is read (an [ERROR] alone is anyone's)."""
    return any(_VERSION.match(s) or _TITLE.match(s) or _TRANSFER.match(s) or _SCALING.match(s) or
               (s.startswith("SRC\\DST") and "STotal" in s) for s in (ln.text.strip() for ln in lines))


def records(lines: list[Line]) -> NvbParse:
    """TransferBench output in the lines as nvbandwidth's records (its matrices, copy check failures,
    and each [ERROR] that stopped a run as a test not run), for the file's nvbandwidth field."""
    parsed = parse(lines)
    return NvbParse(matrices=parsed.matrices, failures=parsed.failures,
                    waived=[NvbWaived(PREFIX, e.text, e.line) for e in parsed.errors], claimed=parsed.claimed,
                    notes=parsed.notes)


def listing(lines: list[Line]) -> ListedParse | None:
    """The GPUs TransferBench's tables name, as an AMD module list (index only: it prints no model or bus
    id), for a file whose other lines list none; None where it names no GPU."""
    gpus = parse(lines).gpus
    if not gpus:
        return None
    return ListedParse(modules=[ListedModule(f"GPU {i}", f"unknown GPU ({PREFIX} prints no model)", tool=PREFIX)
                                for i in sorted(gpus)])


def parse(lines: list[Line]) -> TbParse:
    out = TbParse()
    if not _is_transferbench(lines):
        return out
    test: int | None = None
    i = 0
    while i < len(lines):
        s = lines[i].text.strip()
        no = lines[i].no
        if (m := _TITLE.match(s)) is not None:
            i = _p2p(lines, i, m, out)
            continue
        if s.startswith("SRC\\DST") and "STotal" in s:
            i = _a2a(lines, i, out)
            continue
        if (m := _SCALING.match(s)) is not None:
            i = _scaling(lines, i, m.group(1), out)
            continue
        if (v := _VERSION.match(s)) is not None:
            out.version = v.group(1)
        elif (t := _TEST.match(s)) is not None:
            test = int(t.group(1))
        elif (tr := _TRANSFER.match(s)) is not None:
            out.transfers.append(TbTransfer(test, int(tr.group(1)), _figure(tr.group(2)), _figure(tr.group(3)),
                                            int(tr.group(4)), tr.group(5).strip(), no))
        elif (e := _ERROR.match(s)) is not None:
            _error(e.group(1), s, test, no, out)
        elif not _META.match(s):
            i += 1
            continue
        out.claimed.add(no)
        i += 1
    if out.transfers:
        out.notes.append(f"TransferBench: {len(out.transfers)} Transfer result(s) of a config-file run read; each "
                         "Transfer is its own test (no peers of one kind): listed, not judged")
    return out


def _error(message: str, text: str, test: int | None, no: int, out: TbParse) -> None:
    """A mismatch is wrong data (the copy check failed); the value lines after it are its detail."""
    if "mismatch" in message.lower():
        out.failures.append(CopyCheckFailure(f"{PREFIX} Test {test}" if test is not None else PREFIX, text))
    elif not (message.startswith(("SRC ", "DST ")) and out.failures):  # 'SRC 00 value: …' details a mismatch
        out.errors.append(TbError(text, no))


def _cells(text: str, count: int) -> list[str]:
    return text.split()[:count]


def _index(digits: str) -> int | None:
    """A device index below MAX_DEVICES; None past it (judged on the digits: a table is as large as its largest
    index, and ``GPU 300000000`` in a tiny file would build a matrix that exhausts memory)."""
    short = digits.lstrip("0") or "0"
    return int(short) if len(short) <= len(str(MAX_DEVICES)) and int(short) < MAX_DEVICES else None


def _past_bound(what: str, digits: str) -> str:
    shown = digits if len(digits) <= 12 else digits[:12] + "…"
    return f"{what}: device index {shown} is past the bound of {MAX_DEVICES:,} devices (docs/limits.md)"


def _names(header: str, what: str, out: TbParse) -> list[tuple[str, int]] | None:
    """The header's devices; None with a note when one's index is past MAX_DEVICES (None without one: too many)."""
    found = re.findall(r"(CPU|GPU)\s*(\d+)", header)
    if not 0 < len(found) <= MAX_DEVICES:
        return None
    cols = [(kind, _index(idx)) for kind, idx in found]
    bad = next((idx for (_, idx), (_, i) in zip(found, cols, strict=True) if i is None), None)
    if bad is not None:
        out.notes.append(_past_bound(what, bad) + ": table skipped")
        return None
    out.gpus |= {i for kind, i in cols if kind == "GPU" and i is not None}
    return [(kind, i) for kind, i in cols if i is not None]


def _p2p(lines: list[Line], i: int, title: re.Match[str], out: TbParse) -> int:
    """A p2p table: the title, its header, then device rows up to the next non-row line."""
    out.claimed.add(lines[i].no)
    notes = len(out.notes)
    mode = "unidirectional" if title.group(1) == "Uni" else "bidirectional"
    how = f"{title.group(2).lower()} read / {title.group(3).lower()} write" + \
        (f", {title.group(4)}" if title.group(4) else "")
    i += 1
    while i < len(lines) and not lines[i].text.strip():
        i += 1
    head = _HEAD.match(lines[i].text.strip()) if i < len(lines) else None
    cols = _names(head.group(2), f"{PREFIX} p2p header at line {lines[i].no}", out) if head else None
    if head is not None and cols is None and len(out.notes) > notes:  # an index past the bound, noted
        out.claimed.add(lines[i].no)
        return i + 1
    if head is None or cols is None:
        out.notes.append(f"TransferBench p2p title at line {lines[i - 1].no} without its column header: skipped")
        return i
    out.claimed.add(lines[i].no)
    kept: dict[tuple[str, str], dict[tuple[int, int], float | None]] = {}
    cut: list[int] = []
    past: list[int] = []
    i += 1
    while i < len(lines):
        s = lines[i].text.strip()
        row = _ROW.match(s) if s else None
        if not s:
            i += 1
            continue
        if row is None:
            break
        out.claimed.add(lines[i].no)
        if (src_idx := _index(row.group(2))) is None:
            past.append(lines[i].no)
            i += 1
            continue
        arrow = row.group(3) or "->"
        cells = _cells(row.group(4), len(cols))
        values = [None if c == "N/A" else _figure(c) for c in cells]
        if len(cells) < len(cols) or any(v is None and c != "N/A" for v, c in zip(values, cells, strict=True)):
            cut.append(lines[i].no)
        if arrow in ("->", "<-"):
            src = (row.group(1), src_idx)
            for (kind, idx), v in zip(cols, values, strict=False):
                a, b = (src, (kind, idx)) if arrow == "->" else ((kind, idx), src)  # '<-': the reverse copy
                key = (a[0], b[0]) if arrow == "->" else (a[0], b[0] + " reverse")
                kept.setdefault(key, {})[(a[1], b[1])] = v
        i += 1
    base = f"{PREFIX} p2p {mode} ({how})"
    for (src_kind, dst_kind), cells_ in kept.items():
        reverse = dst_kind.endswith(" reverse")
        name = f"{base} {src_kind}->{dst_kind.split()[0]}" + (" reverse copies" if reverse else "")
        out.matrices[name] = _square(cells_, cols, src_kind, dst_kind.split()[0])
    if cut:
        out.notes.append(f"{base}: row(s) at line(s) {ranges(cut)} cut or unreadable, their cells left empty")
    if past:
        out.notes.append(_past_rows(base, past))
    return i


def _past_rows(base: str, past: list[int]) -> str:
    return (f"{base}: row(s) at line(s) {ranges(past)} name a device index past the bound of {MAX_DEVICES:,} devices "
            "(docs/limits.md): skipped")


def _square(cells: dict[tuple[int, int], float | None], cols: list[tuple[str, int]], src: str,
            dst: str) -> list[list[float | None]]:
    """Rows by source index, columns by destination index (nvbandwidth's layout), None where absent."""
    rows = sorted({idx for kind, idx in cols if kind == src} | {a for a, _ in cells})
    width = max([idx for kind, idx in cols if kind == dst] + [b for _, b in cells] + [-1]) + 1
    height = max(rows + [-1]) + 1
    return [[cells.get((r, c)) for c in range(width)] for r in range(height)]


def _a2a(lines: list[Line], i: int, out: TbParse) -> int:
    """The a2a summary: GPU rows of GPU columns, then STotal and Actual (claimed, not kept)."""
    head = _HEAD.match(lines[i].text.strip())
    notes = len(out.notes)
    cols = _names(head.group(2), f"{PREFIX} a2a header at line {lines[i].no}", out) if head else None
    out.claimed.add(lines[i].no)
    i += 1
    if cols is None:
        if len(out.notes) == notes:  # not already noted as past the bound
            out.notes.append(f"TransferBench a2a header at line {lines[i - 1].no} unreadable: skipped")
        return i
    cells: dict[tuple[int, int], float | None] = {}
    cut: list[int] = []
    past: list[int] = []
    while i < len(lines):
        s = lines[i].text.strip()
        row = _ROW.match(s) if s else None
        if not s:
            i += 1
            continue
        if row is None or row.group(1) != "GPU":
            break
        out.claimed.add(lines[i].no)
        if (src_idx := _index(row.group(2))) is None:
            past.append(lines[i].no)
            i += 1
            continue
        raw = _cells(row.group(4), len(cols))
        values = [None if c == "N/A" else _figure(c) for c in raw]
        if len(raw) < len(cols) or any(v is None and c != "N/A" for v, c in zip(values, raw, strict=True)):
            cut.append(lines[i].no)
        for (_, idx), v in zip(cols, values, strict=False):
            cells[(src_idx, idx)] = v
        i += 1
    if cut:
        out.notes.append(f"{PREFIX} a2a: row(s) at line(s) {ranges(cut)} cut or unreadable, their cells left empty")
    if past:
        out.notes.append(_past_rows(f"{PREFIX} a2a", past))
    if cells:
        out.matrices[f"{PREFIX} a2a GPU->GPU"] = _square(cells, cols, "GPU", "GPU")
    return i


def _scaling(lines: list[Line], i: int, engine: str, out: TbParse) -> int:
    """A scaling preset's sweep (GPU-GFX: 1, 2, … CUs copying from one GPU to each device): claimed, its
    devices listed and each destination's peak noted. Not judged: a rate at a chosen CU count has no peer
    measured alike and no design figure to compare with."""
    out.claimed.add(lines[i].no)
    src: str | None = None
    cols: list[tuple[str, int]] | None = None
    peaks: dict[tuple[str, int], float] = {}
    i += 1
    while i < len(lines):
        s, no = lines[i].text.strip(), lines[i].no
        said = _SCALING_FROM.match(s)
        if said is not None and said.group(1) and (idx := _index(said.group(2))) is not None:
            src = f"{said.group(1)} {idx}"
            out.gpus |= {idx} if said.group(1) == "GPU" else set()
        elif not s or set(s) == {"="} or said is not None:
            pass
        elif cols is None and (head := _SCALING_HEAD.match(s)) is not None:
            cols = _names(head.group(1), f"{PREFIX} {engine} scaling header at line {no}", out)
        elif cols is not None and (row := _SCALING_ROW.match(s)) is not None:
            for col, cell in zip(cols, _cells(row.group(2), len(cols)), strict=False):
                if (v := _figure(cell)) is not None:
                    peaks[col] = max(v, peaks.get(col, 0.0))
        else:
            break
        out.claimed.add(no)
        i += 1
    shown = ", ".join(f"{kind} {idx} {v:g}" for (kind, idx), v in sorted(peaks.items()))
    out.notes.append(f"{PREFIX} GPU-{engine} scaling from {src or 'a source not shown'}: peak GB/s over the sweep "
                     f"{shown or 'not read'}; a sweep over CU counts is read, not judged (no peer measured alike)")
    return i
