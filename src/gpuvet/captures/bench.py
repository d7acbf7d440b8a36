"""nccl-tests and nvbandwidth output, as printed by every version people still run.

nccl-tests: the table since 2.x (size count type redop root time algbw busbw #wrong …), the one
with redop but no root, and the older one without either, whose error column is a float
(``0e+00``); `#wrong` may be ``N/A`` when validation is off. A row whose figures are negative, NaN
or unreadable is kept with those figures as None and named in a note; its `#wrong` still counts.
A run that aborts (``Test NCCL failure common.cu:1204 'unhandled cuda error'``, ``NCCL failure
all_reduce.cu:95 …``, ``Test CUDA failure … 'invalid argument'``) or fails its own check
(``Out of bounds values : 50 FAILED``) is a failure with the tool's words as evidence.
nvbandwidth: with or without its version header and ``Running <test>.`` lines (the test is then
named by the ``SUM <test>`` line), flush-left or indented matrices, ``N/A`` cells, cut rows; a test
it ``Waived:`` (device-to-device tests are waived when peer access is unavailable).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from gpuvet.captures import cut_rows, nccl_legacy, nccl_runs, nccl_stall, nccom_test
from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.marks import holding
from gpuvet.captures.nccl_devices import device_models, op_from_rows
from gpuvet.captures.records import CopyCheckFailure, NcclResult, NcclRow, NvbDevice
from gpuvet.captures.text import Line, ranges

_OPS = ("all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast", "reduce", "sendrecv", "gather",
        "scatter", "hypercube")
_FIELD = r"(\S+)"
_NEW_ROW = lazy(r"^\s*(\d+)\s+(\d+)\s+([A-Za-z]\w*)\s+(\w+|-)\s+(-?\d+)\s+" + r"\s+".join([_FIELD] * 4))
_MID_ROW = lazy(r"^\s*(\d+)\s+(\d+)\s+(\w+)\s+(sum|prod|max|min|avg|none|mulsum)\s+" +
                r"\s+".join([_FIELD] * 4) + r"(?:\s|$)")
_OLD_ROW = lazy(r"^\s*(\d+)\s+(\d+)\s+(\w+)\s+" + r"\s+".join([_FIELD] * 4) + r"(?:\s|$)")
# a layout's time cell is never a redop nor a small integer (times print with decimals below 10000 us): a row cut
# short of its layout's cells (a root then read as the time, an algbw as the error) is no row of an older layout
_REDOP = lazy(r"sum|prod|max|min|avg|none|mulsum")
_ROOT = lazy(r"-?\d{1,3}")
_ROW_START = lazy(r"^\s*\d+\s+\d+\s+[A-Za-z]\w*(?:\s|$)")  # size, count, type: a row however it ends
_RANK = lazy(r"^#?\s*Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)")
_FAILURE = lazy(r"(?:^|\s|:)(?:Test )?(NCCL|CUDA|HIP) failure (\S+?:\d+) '([^']*)'")  # HIP: rccl-tests
_FAILURE_TRAIL = lazy(r"^\.\. .*Test failure \S+:\d+\s*$|^\S+ pid \d+: Test failure")
_MAX_BYTES = lazy(r"\bmaxBytes (\d{1,20})\b")  # the header's largest size: '# nThread 1 ... maxBytes 134217728'
# read wherever it stands: a poster quotes it in prose or backticks ('the result show "Out of bounds values : 248
# FAILED"'), and a count of wrong values is the run's failure however it was pasted (issue 46, batch V)
_OOB = lazy(r"(?:^|[\s#`\"'(:])Out of bounds values\s*:\s*([1-9]\d{0,12})\s+FAILED\b")
# its line after the last size ('# Out of bounds values : 0 OK'): the table is whole even where the paste stops
# before the 'Avg bus bandwidth' line under it (issue 46, batch K)
_OOB_OK = lazy(r"(?:^|[\s#`\"'(:])Out of bounds values\s*:\s*\d+\s+OK\b")
_FINISHED_NO_AVG = ("nccl-tests: the table ends with its 'Out of bounds values : … OK' line, printed after the last "
                    "size, but the 'Avg bus bandwidth' line under it is not in the text: every size ran, only the "
                    "average is missing")
# '#' optional: a paste can lose it (a markdown heading)
_NCCL_HEADER = re.compile(r"^#?\s*(nThread|Using devices|\s*size\s+count|Avg bus bandwidth|Out of bounds)|"
                          + nccl_legacy.HEADER.pattern)  # NCCL 1's and the oldest nccl-tests' headers


@dataclass(frozen=True)
class NcclFailure:
    """nccl-tests stopped or failed its own check; the line it printed is the evidence."""

    kind: str  # "nccl" / "cuda" / "hip" (the call that failed, as the tool names it) or "out_of_bounds"
    message: str  # 'unhandled cuda error', 'invalid argument', '50 wrong values'
    where: str | None  # source file:line nccl-tests names (common.cu:1204)
    text: str
    line: int
    tool: str = "nccl-tests"  # "rccl-tests" where the run printed its version line or a HIP failure


@dataclass
class NcclParse:
    results: list[NcclResult] = field(default_factory=list)
    failures: list[NcclFailure] = field(default_factory=list)
    claimed: set[int] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)


def _figure(text: str) -> float | None:
    try:
        v = float(text)
    except ValueError:
        return None
    return v if math.isfinite(v) and v >= 0 else None


def _op(lines: list[Line], where: str, first_row: int | None) -> str:
    """nccl-tests does not print its own name: a command line before the table, or the file name, may."""
    before = [ln.text for ln in lines if ("_perf" in ln.text or "_test" in ln.text) and (first_row is None or
                                                                                  ln.no < first_row)]
    blob = (before[-1] if before else "")
    for name in _OPS:
        if f"{name}_perf" in blob or f"{name}_test" in blob:  # nccl-tests', NCCL 1's test binaries
            return name
    stem = Path(where).name
    for name in _OPS:
        if name in stem or name.replace("_", "") in stem:
            return name
    return op_from_rows(lines, first_row)


_PMON_HEAD = lazy(r"^\s*#\s*gpu\s+pid\s+type\b", re.I)


def _pmon_rows(lines: list[Line]) -> set[int]:
    """The rows under nvidia-smi pmon's '# gpu pid type …' header (issue 46: a process row, 'gpu pid type sm mem …',
    has nccl-tests' headerless row shape): read by captures/monitor_tools, never as results."""
    out: set[int] = set()
    under = False
    for ln in lines:
        s = ln.text.strip()
        under = bool(_PMON_HEAD.match(s)) or (under and bool(s) and (s[0].isdigit() or s.startswith("#")))
        if under:
            out.add(ln.no)
    return out


def parse_nccl(lines: list[Line], where: str) -> NcclParse:
    """nccl-tests' output (rccl-tests', NCCL 1's); R14B: AWS Neuron's nccom-test table, its own columns."""
    if any("count(elems)" in ln.text for ln in lines[:4000]) and nccom_test.parse(lines, where, out := NcclParse()):
        return out
    return _parse_nccl_tests(lines, where)


def _parse_nccl_tests(lines: list[Line], where: str) -> NcclParse:
    parts = nccl_runs.separate(lines)
    if len(parts) == 1 and (starts := nccl_legacy.runs(lines, _row)):  # runs pasted each under its command line
        parts = [lines[a:b] for a, b in zip([0, *starts[1:]], [*starts[1:], len(lines)], strict=True)]
    if len(parts) > 1:  # one header and one summary per run: each read alone
        return _runs(parts, where)
    out = NcclParse()
    header = [ln for ln in lines if _NCCL_HEADER.match(ln.text.strip()) or _RANK.match(ln.text.strip())]
    found: list[tuple[Line, NcclRow | None]] = []  # None: a row's start that no layout reads (cut short?)
    pmon = _pmon_rows(lines) if any("pid" in ln.text for ln in lines[:4000] if ln.text.lstrip().startswith("#")) else set()
    for ln in lines:
        if _failure(ln, out) or ln.no in pmon:
            continue
        row = _row(ln.text)
        if row is not None or _ROW_START.match(ln.text):
            found.append((ln, row))
    cut = _cut(found, header)
    out.claimed.update(ln.no for ln, row in found if row is not None or ln.no in cut)
    first_row = next((ln.no for ln, row in found if row is not None), None)
    rows = [row for ln, row in found if row is not None and ln.no not in cut]
    bad = [ln.no for ln, r in found if r is not None and ln.no not in cut and None in (r.time_us, r.busbw, r.algbw)]
    if cut:
        out.notes.append(cut_rows.note("nccl-tests", cut))
    if any(f.kind == "hip" for f in out.failures) or any(ln.text.lstrip().startswith("rccl-tests") for ln in lines):
        out.failures = [replace(f, tool="rccl-tests") for f in out.failures]  # RCCL names its calls NCCL too
    if not rows and not header:
        return out if not out.failures else _failed_only(out, lines, where)
    out.claimed.update(ln.no for ln in lines if ln.text.lstrip().startswith(("#", "rccl-tests: Version")) and
                       (header or rows))  # rccl-tests prints its version between the '#' lines
    out.claimed.update(ln.no for ln in header)  # a rank list whose '#' the paste lost
    ranks = [m.groups() for ln in lines if (m := _RANK.match(ln.text.strip()))]
    nodes = tuple(dict.fromkeys(host for _, host in ranks))
    asked = None if ranks else nccl_legacy.command_ranks(lines)  # NCCL 1: 'all_reduce_test 10000000 2 0 1'

    avg = [float(m.group(1)) for ln in lines
           if (m := re.search(r"Avg bus bandwidth\s*:\s*(\d+(?:\.\d+)?)(?![\d.])", ln.text))]  # not '1.2.3'
    if bad:
        out.notes.append(f"nccl-tests row(s) at line(s) {ranges(bad)} have negative, NaN or unreadable figures: "
                         "not used for bandwidth (their #wrong still counts)")
    finished = any(_OOB_OK.search(lines[i].text.strip()) for i in holding(lines, ("Out of bounds",)))
    if rows and not avg and not out.failures and not nccl_legacy.summaryless(lines):
        out.notes.append(_cut_table(lines, max(out.claimed)) if not finished else _FINISHED_NO_AVG)
    if not rows and out.failures:
        out.notes.append(f"nccl-tests stopped before its first result row: {out.failures[0].text[:160]}")
    elif not rows:
        _no_rows(out, lines, header)
    if len({r for r, _ in ranks}) < len(ranks):
        out.notes.append("rank numbers repeat: several independent jobs (each node alone?) printed into this file")
    if (solo := nccl_runs.alone(lines)) is not None:
        out.failures.append(_alone(solo))
    out.results.append(NcclResult(_op(lines, where, first_row), len({r for r, _ in ranks}) or asked, rows,
                                  avg[0] if avg else None, where, nodes, device_models(lines), _announced_max(lines),
                                  finished, _gpus_per_thread(lines)))
    return out


def _no_rows(out: NcclParse, lines: list[Line], header: list[Line]) -> None:
    """A header with no result row: a stall where the text shows the run went on (R6B, captures/nccl_stall.py),
    else a cut paste, nothing judged."""
    if (hung := nccl_stall.went_on(lines, header)) is not None:
        out.failures.append(NcclFailure(nccl_stall.KIND, "no result row after the header", None, hung[1], hung[0]))
    else:
        out.notes.append("nccl-tests header without result rows (cut before the table?): nothing to judge")


_THREADS = lazy(r"^#?\s*nThread\s+(\d+)\s+nGpus\s+(\d+)")


def _gpus_per_thread(lines: list[Line]) -> int | None:
    """How many GPUs one thread drove: the header's nGpus (nccl-tests -g), else the most rank lines one process
    (host, pid) lists when the header is lost; None when neither is there."""
    if (m := next((m for ln in lines if "nGpus" in ln.text and (m := _THREADS.match(ln.text.strip()))), None)):
        return int(m.group(2))
    per: dict[tuple[str, str], int] = {}
    for ln in lines:
        if "Rank" in ln.text and (r := nccl_runs.RANK_LINE.match(ln.text.strip())) is not None:
            per[(r.group(3), r.group(2))] = per.get((r.group(3), r.group(2)), 0) + 1
    return max(per.values()) if per else None


def _cut(found: list[tuple[Line, NcclRow | None]], header: list[Line]) -> dict[int, tuple[int, int]]:
    """The rows the paste cut short, measured against the table's widest row (its header where it has one)."""
    named = _header_line(header)
    widest = max((ln.text for ln, row in found if row is not None), key=lambda t: len(t.split()), default="")
    model = named if named and (len(found) == 1 or not widest) else widest
    return cut_rows.short([(ln.no, ln.text) for ln, _ in found], named, _cells_read(model))


def _header_line(header: list[Line]) -> str | None:
    """The '# size count type …' line, from its first column (a table of one row is measured against it)."""
    named = [ln.text for ln in header if re.search(r"\bsize\s+count\b", ln.text)]
    if not named:
        return None
    at = named[0].index("size")  # '#wrong' set apart from 'busbw' as a column, in the same width
    return " " * at + re.sub(r"(?<=\S) #(?=wrong\b)", "  ", named[0][at:])


def _cells_read(text: str) -> int | None:
    """The cells a row of the table's layout gives the reader: up to the out-of-place '#wrong' (the in-place
    half is not read, so a row cut inside it loses nothing read)."""
    cells = text.split()
    if cells and cells[0] == "size":  # the header: up to its first error column
        return next((k + 1 for k, c in enumerate(cells) if c in ("#wrong", "wrong", "error", "#errors")), None)
    return 9 if _NEW_ROW.match(text) else 8 if _MID_ROW.match(text) else 7 if _OLD_ROW.match(text) else None


def _announced_max(lines: list[Line]) -> int | None:
    """The maxBytes the header announces (a run cut before it says nothing of the sizes after)."""
    return next((int(m.group(1)) for ln in lines if (m := _MAX_BYTES.search(ln.text))), None)


def _runs(parts: list[list[Line]], where: str) -> NcclParse:
    """Several runs in one file, each with its header and summary: one result each, noted."""
    out = NcclParse()
    named = [nccl_legacy.command_at(part) for part in parts]
    for part, command in zip(parts, named, strict=True):
        one = parse_nccl(part, where if command is None else f"{where}, the run at line {command[0]}: {command[1]}")
        out.results += one.results
        out.failures += one.failures
        out.claimed |= one.claimed
        out.notes += one.notes
    whole = [ln for part in parts for ln in part]
    if (solo := nccl_runs.alone(whole)) is not None and not any(f.kind == "alone" for f in out.failures):
        out.failures.append(_alone(solo))
    how = "each under its own command line" if all(named) else "each with its own header and summary"
    out.notes.append(f"nccl-tests: {len(parts)} runs in one file, {how} (separate processes or runs pasted "
                     f"together): read as {len(parts)} results")
    return out


def _alone(solo: nccl_runs.AloneRuns) -> NcclFailure:
    return NcclFailure("alone", f"{solo.processes} processes on {', '.join(solo.hosts)} each ran alone (rank 0 of 1): "
                       "nccl-tests built without MPI=1", None, solo.text, solo.line)


def _cut_table(lines: list[Line], last: int) -> str:
    """A table with no closing 'Avg bus bandwidth' line: the job was killed or the copy stopped; a line of
    digits right after the last row read is that row cut short."""
    after = next((ln for ln in lines if ln.no > last and ln.text.strip()), None)
    part = (f"; line {after.no} is a result row cut short, not read" if after is not None and
            re.match(r"\s*\d+\s", after.text) else "")
    return (f"nccl-tests: the table stops after line {last} without its closing 'Avg bus bandwidth' line: the run was "
            f"cut (killed, or the copy stopped) — the rows read are used, the sizes after them were not run or not "
            f"copied{part}")


def _failure(ln: Line, out: NcclParse) -> bool:
    """A failure line (claimed and kept), or the '.. host pid N: Test failure' trail after one."""
    s = ln.text.strip()
    if (m := _FAILURE.search(s)) is not None:
        out.failures.append(NcclFailure(m.group(1).lower(), m.group(3).strip(" /"), m.group(2), s, ln.no))
    elif "Out of bounds" in s and (o := _OOB.search(s)) is not None:
        out.failures.append(NcclFailure("out_of_bounds", f"{o.group(1)} wrong values", None, s, ln.no))
    elif "Test FAILED" in s and (w := nccl_legacy.MPI_FAILED.match(s)) is not None:  # NCCL 1's mpi_test
        out.failures.append(NcclFailure("out_of_bounds", f"{w.group(1)} wrong values", None, s, ln.no))
    elif "Init failed" in s and (i := nccl_legacy.MPI_INIT.match(s)) is not None:
        out.failures.append(NcclFailure("nccl", f"{i.group(2)} (ncclResult {i.group(1)})", None, s, ln.no))
    elif not (_FAILURE_TRAIL.match(s) and out.failures):
        return False
    out.claimed.add(ln.no)
    return True


def _failed_only(out: NcclParse, lines: list[Line], where: str) -> NcclParse:
    """Failure lines without a header or table (a pasted error): still nccl-tests, with nothing measured."""
    out.results.append(NcclResult(_op(lines, where, None), None, [], None, where, ()))
    out.notes.append(f"nccl-tests failure without its header or table: {out.failures[0].text[:160]}")
    return out


def _row(text: str) -> NcclRow | None:
    if text.lstrip().startswith("#"):
        return None
    m = _NEW_ROW.match(text)
    if m and _ROOT.fullmatch(m.group(5)):  # a 5-digit 'root' is a time printed without decimals (>= 10000 us)
        t, alg, bus, wrong = m.group(6), m.group(7), m.group(8), m.group(9)
        return NcclRow(int(m.group(1)), _figure(t), _figure(alg), _figure(bus), int(wrong) if wrong.isdigit() else None)
    m = _MID_ROW.match(text)
    if m and not _ROOT.fullmatch(m.group(5)):  # redop but no root (nccl-tests 2.0): the error column is a float
        err = _figure(m.group(8))
        return NcclRow(int(m.group(1)), _figure(m.group(5)), _figure(m.group(6)), _figure(m.group(7)),
                       None if err is None else int(err > 1e-3))
    if (legacy := nccl_legacy.row(text)) is not None:  # NCCL 1's layouts: a root before the time, no bytes column
        return legacy
    m = _OLD_ROW.match(text)
    if m and re.fullmatch(r"[a-z]+\d*|float|double|half|bfloat16|int8|uint8", m.group(3)) \
            and not _REDOP.fullmatch(m.group(4)):
        err = _figure(m.group(7))
        return NcclRow(int(m.group(1)), _figure(m.group(4)), _figure(m.group(5)), _figure(m.group(6)),
                       None if err is None else int(err > 1e-3))
    return None


# --- nvbandwidth -----------------------------------------------------------------------------
_RUNNING = lazy(r"^Running (\w+)\.?\s*$")
_WAIVING = lazy(r"^Waiving (\w+)\.?\s*$")
_TITLE = lazy(r"^(memcpy|memory latency|latency)\b.*\((GB/s|ns|us)\)\s*$", re.I)
# a copy kernel's matrix of the same shape (memcpyKernel, the IMEX/multi-node NVLink checks): its test is the line
# above ('memcpyKernel Write 128b stride 512 threads/SM:'), its title names the size, a dashed rule under the header
_MEASURED = lazy(r"^Measured bandwidth in GB/s of size (.{1,40}?):?\s*$")
_SUM = lazy(r"^SUM (\w+) ")
_DEVICE = lazy(r"^Device (\d+): (.+?)(?: \(([0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})\))?\s*$")
_NVB_META = lazy(r"^(nvbandwidth Version|Built from Git version|CUDA Runtime Version|CUDA Driver Version|"
                 r"Driver Version|NOTE:|Additional system-specific|Performance can vary|Waived|SUM )")


@dataclass(frozen=True)
class NvbWaived:
    """A test nvbandwidth did not run (``Waived:``), with its reason when printed."""

    test: str | None  # None: the `Running <test>.` line before it is not in the capture
    reason: str
    line: int


@dataclass
class NvbParse:
    matrices: dict[str, list[list[float | None]]] = field(default_factory=dict)
    devices: list[NvbDevice] = field(default_factory=list)
    failures: list[CopyCheckFailure] = field(default_factory=list)
    waived: list[NvbWaived] = field(default_factory=list)
    claimed: set[int] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)


def parse_nvbandwidth(lines: list[Line]) -> NvbParse:
    out = NvbParse()
    if not any(_RUNNING.match(ln.text.strip()) or _TITLE.match(ln.text.strip()) or "nvbandwidth" in ln.text
               or _WAIVING.match(ln.text.strip()) or ln.text.startswith("Measured bandwidth")
               for ln in lines):
        return out
    test: str | None = None
    i = 0
    while i < len(lines):
        s = lines[i].text.strip()
        if (m := _RUNNING.match(s)) is not None:
            test = m.group(1)
            out.claimed.add(lines[i].no)
        elif (d := _DEVICE.match(s)) is not None:
            out.devices.append(NvbDevice(int(d.group(1)), d.group(2).strip(), d.group(3)))
            out.claimed.add(lines[i].no)
        elif _TITLE.match(s) or (k := _MEASURED.match(s)) is not None and (test := _kernel_test(lines, i, k, out)):
            i = _matrix(lines, i, test, out)
            test = None
            continue
        elif (w := _WAIVING.match(s)) is not None:  # v0.2-v0.4: 'Waiving <test>.'
            out.waived.append(NvbWaived(w.group(1), "", lines[i].no))
            out.claimed.add(lines[i].no)
        elif s.startswith("Waived"):
            out.waived.append(NvbWaived(test, s.partition(":")[2].strip(), lines[i].no))
            out.claimed.add(lines[i].no)
            test = None
        elif _NVB_META.match(s) or s.startswith("nvbandwidth"):
            out.claimed.add(lines[i].no)
        elif "checking the pattern" in s or s.startswith("ASSERT") and "memcmp" in s:
            out.failures.append(CopyCheckFailure(test, s))
            out.claimed.add(lines[i].no)
        elif s.startswith("Current offset"):
            out.claimed.add(lines[i].no)
        i += 1
    unnamed = [w.line for w in out.waived if w.test is None]
    if unnamed:
        out.notes.append(f"nvbandwidth: test(s) waived at line(s) {ranges(unnamed)} without their 'Running …' line: "
                         "which tests is not in the capture")
    return out


def _matrix(lines: list[Line], i: int, test: str | None, out: NvbParse) -> int:
    """Read the matrix under a title line; return the index after it."""
    title = lines[i]
    out.claimed.add(title.no)
    i += 1
    columns = None
    if i < len(lines) and re.fullmatch(r"\s*\d+(\s+\d+)*\s*", lines[i].text):
        columns = len(lines[i].text.split())
        out.claimed.add(lines[i].no)
        i += 1
        if i < len(lines) and re.fullmatch(r"\s*-{8,}\s*", lines[i].text):  # the copy kernel's rule
            out.claimed.add(lines[i].no)
            i += 1
    rows: list[list[float | None]] = []
    cut: list[int] = []
    while i < len(lines) and re.match(r"^\s*\d+\s+\S", lines[i].text):
        cells = lines[i].text.split()[1:]
        values = [None if c in ("N/A", "-") or c.endswith(".") else _figure(c) for c in cells]
        if any(v is None and c not in ("N/A", "-") for v, c in zip(values, cells, strict=True)) or \
                (columns is not None and len(cells) < columns):
            cut.append(lines[i].no)
        rows.append(values)
        out.claimed.add(lines[i].no)
        i += 1
    name = test
    for j in range(i, min(i + 3, len(lines))):  # the SUM line names the test when 'Running' was cut
        if (m := _SUM.match(lines[j].text.strip())) is not None:
            name = name or m.group(1)
    if name is None:
        name = f"unnamed test at line {title.no}"
        out.notes.append(f"nvbandwidth matrix at line {title.no} has no test name ('Running …' cut): kept as '{name}'")
    if cut:
        out.notes.append(f"nvbandwidth {name}: cell(s) at line(s) {ranges(cut)} unreadable or cut, left empty")
    if rows and columns is not None and len(rows) < columns and _square(title.text):
        out.notes.append(f"nvbandwidth {name}: the matrix is cut: {len(rows)} of its {columns} rows (line {title.no}); "
                         "the rows missing are left empty, judged from the rows read")
        rows += [[None] * columns for _ in range(columns - len(rows))]
    if rows:
        out.matrices[name] = rows
    return i


def _kernel_test(lines: list[Line], i: int, title: re.Match[str], out: NvbParse) -> str:
    """A copy kernel's matrix name: the test line above its title (blank lines between) and the size; a module-to-
    module table (capture_pairs reads names starting 'memcpyKernel')."""
    above = next((ln for ln in reversed(lines[max(0, i - 3):i]) if ln.text.strip()), None)
    if above is None or not above.text.strip().startswith("memcpyKernel"):
        return f"memcpyKernel ({title.group(1)})"
    out.claimed.add(above.no)
    return f"{above.text.strip().rstrip(':')} ({title.group(1)})"


def _square(title: str) -> bool:
    """A module-by-module matrix (a row per column); a host one has one row for all its columns."""
    return bool(re.search(r"GPU\(row\)", title)) and bool(re.search(r"GPU\(column\)", title))
