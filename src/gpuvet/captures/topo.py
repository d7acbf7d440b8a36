"""`nvidia-smi topo -m`: the device matrix, checked before it is believed.

Refused (CaptureError): a header naming a device twice, a row given twice, a cell that is not a
topo -m cell, an NV# count no module has, a matrix whose two halves disagree. Noted, never
invented: devices named in the header without a row (a cut capture) are left out; a row cut short
keeps the cells it has, the rest come from the other rows' columns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuvet.captures import topo_relations
from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.text import Line
from gpuvet.errors import CaptureError

CELL_ALIASES = {"SOC": "SYS", "CPU": "NODE"}  # names used by older drivers
_CELL = lazy(r"X|NV\d+|PIX|PXB|PHB|NODE|SYS")
_DEVICE = lazy(r"GPU\d+|NIC\d+|mlx\d+_\d+|\w+_\d+")
_AFFINITY = lazy(r"affinity|numa", re.I)
MAX_NV_PER_PAIR = 36  # twice the most links any module has (18): more is not a real capture
MAX_DEVICES = 4096


@dataclass
class TopoMatrix:
    devices: list[str]  # as printed, with a row: GPU0, NIC0, mlx5_0 …
    cells: dict[frozenset[str], str]
    numa: dict[str, int | None]
    nic_names: dict[str, str] = field(default_factory=dict)
    claimed: set[int] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)
    header: list[str] = field(default_factory=list)  # the devices the header names, a row cut or not
    header_line: int = 0  # the line of its own header (a `topo -p2p` matrix before it is no part of it)
    affinity: dict[str, dict[str, str]] = field(default_factory=dict)  # row -> {'CPU Affinity': '0-27', …} as printed


_TITLES = lazy(r"GPU NUMA ID|CPU Affinity|NUMA Affinity")  # topo -m's own column titles, kept whole


def _split(text: str) -> list[str]:
    """Cells apart at tabs or runs of spaces; a paste that turned tabs into single spaces (`GPU0 GPU1`,
    `GPU1 NODE  X`, a whole row `GPU0 X NV18 0-55 0 N/A`) is split at each space too where it starts with
    a device name or a cell, topo -m's column titles kept whole."""
    out: list[str] = []
    if (md := _markdown_row(text)) is not None:
        return md
    for t in re.split(r"\t+| {2,}|\t", text.strip()):
        words = t.split()
        if len(words) > 1 and (_DEVICE.fullmatch(words[0]) or _CELL.fullmatch(CELL_ALIASES.get(words[0], words[0]))):
            out += [w.replace("\x00", " ") for w in _TITLES.sub(lambda m: m.group(0).replace(" ", "\x00"), t).split()]
        elif t.strip():
            out += _unfused(t.strip())
    return out


def _markdown_row(text: str) -> list[str] | None:
    """A row of the matrix as a markdown table (`| GPU0 | X | NV4 |`: a poster's rendering): its cells between the
    pipes, the separator row (`|---|---|`) none; None for any other line."""
    t = text.strip()
    if len(t) < 3 or t[0] != "|" or t[-1] != "|":
        return None
    cells = [c.strip() for c in t[1:-1].split("|")]
    return [] if all(set(c) <= set("-: ") for c in cells) else [c for c in cells if c]


_FUSED = lazy(r"(?:GPU\d+|NIC\d+){2,}|(?:NV\d+|PIX|PXB|PHB|NODE|SYS){2,}")
_PART = lazy(r"GPU\d+|NIC\d+|NV\d+|PIX|PXB|PHB|NODE|SYS")


def _unfused(token: str) -> list[str]:
    """Two names or cells a lost tab ran together (`NIC8NIC9`, `NODEPXB`), apart again: topo -m pads
    every column, so only a paste joins them."""
    if len(token) < 6 or _FUSED.fullmatch(token) is None:
        return [token]
    return _PART.findall(token)


def header_index(lines: list[Line]) -> int | None:
    """The header is a line that names GPU0 and only devices and affinity columns (rows start with
    their own name and hold X / NV# cells). It starts blank as topo -m prints it; a paste or a
    report (collect_env's 'GPU Topology:') may have lost that blank, which is noted."""
    for i, ln in enumerate(lines):
        if "GPU0" in ln.text and _is_header(ln.text):
            return i
    return None


def _is_header(text: str) -> bool:
    """Devices, then column titles: the affinity ones, and at most two others beside at least one of them (a
    localised or newer title, 'Afinidad de CPU'), so a line of prose that mentions GPU0 is not a header."""
    devices, titles = _columns(_split(text))
    unknown = [t for t in titles if not _AFFINITY.search(t)]
    return "GPU0" in devices and (not unknown or (len(unknown) <= 2 and len(unknown) < len(titles)))


def _unknown_titles(titles: list[str], line: int) -> list[str]:
    unknown = [t for t in titles if not _AFFINITY.search(t)]
    return [f"topo -m: column title(s) {', '.join(repr(t[:40]) for t in unknown)} in the header (line {line}) are "
            "not ones gpuvet knows: the GPU columns are read, not those"] if unknown else []


def _columns(tokens: list[str]) -> tuple[list[str], list[str]]:
    """The header's device names (its leading run) and the column titles after them, in order."""
    n = next((i for i, t in enumerate(tokens) if not _DEVICE.fullmatch(t)), len(tokens))
    return tokens[:n], tokens[n:]


def _uncut(topo: TopoMatrix, name: str, values: list[str], at_end: bool, devices: int) -> list[str]:
    """A row's cells, its last one left out (with a note) when the capture ends inside it (a matrix cell;
    the affinity columns after them are no cells)."""
    if at_end and values and len(values) <= devices and not _CELL.fullmatch(CELL_ALIASES.get(values[-1], values[-1])):
        topo.notes.append(f"topo -m: the capture ends inside row {name}'s cell {values[-1]!r} (cut): "
                          "that cell is left out")
        return values[:-1]
    return values


_P2P_NOTE = "read as peer-access statuses (their own note says which pairs lack it), not as links"


def _p2p_note(starts: list[int]) -> str:
    """One note for the `topo -p2p` matrices a file holds, however many (their first lines named, at most eight)."""
    named = ", ".join(str(s) for s in starts[:8]) + (f" and {len(starts) - 8} more" if len(starts) > 8 else "")
    what = "starts a `nvidia-smi topo -p2p` status matrix" if len(starts) == 1 else \
        f"start {len(starts)} `nvidia-smi topo -p2p` status matrices"
    return f"topo -m: line{'s' if len(starts) > 1 else ''} {named} {what} (OK, NS, CNS …): {_P2P_NOTE}"


def parse(lines: list[Line], where: str) -> TopoMatrix | None:
    """The matrix in the lines, or None when there is none. Raises CaptureError when it cannot be trusted.
    `topo -p2p` status matrices before it (any number: a loop, not a call per matrix) are claimed and noted."""
    starts: list[int] = []
    claimed: set[int] = set()
    at = header_index(lines)
    while at is not None and (p2p := _p2p_rows(lines[at:])) is not None:
        starts.append(lines[at].no)
        claimed |= {lines[at].no, *p2p}
        lines = lines[at + 1 + len(p2p):]  # the status rows follow their header line by line
        legend = _p2p_legend(lines)
        claimed |= {ln.no for ln in lines[:legend]}
        lines = lines[legend:]
        at = header_index(lines)
    inferred = _headerless(lines) if at is None else None
    if inferred is not None:  # issue 46: the rows without their header line (a paste cut above them)
        at, header = inferred
        lines = [*lines[:at], Line(lines[at].no, header), *lines[at:]]
    got = _matrix(lines, at, where)
    if got is not None and inferred is not None:
        got.notes.append(f"topo -m: no header line above the rows (line {lines[inferred[0]].no} on): the columns "
                         f"({', '.join(got.header)}) are inferred from the rows, a square block with X on its "
                         "diagonal; " + ("the NIC columns after them named by the NIC rows' X, the affinity "
                                         "columns by topo -m's order of titles" if any(got.affinity.values()) else
                                         "the columns after them (NICs, affinity) are not read"))
    if got is not None and starts:
        got.claimed |= claimed
        got.notes.append(_p2p_note(starts))
    return got


def _headerless(lines: list[Line]) -> tuple[int, str] | None:
    """topo -m rows whose header line is not in the paste: GPU0, GPU1 … in order, row k with X in column k and
    topo -m cells before it, the block's two halves alike. Its GPU columns are the rows', and any column further
    right holding an NV# (only GPUs have NVLinks) up to the last such; the header those columns would have."""
    start, first = next(((i, k) for i, ln in enumerate(lines) if (k := _own_row(ln.text)) is not None), (None, 0))
    if start is None:
        return None
    rows: list[list[str]] = []
    for ln in lines[start:]:
        cells = _split(ln.text)
        k = first + len(rows)
        if not cells or cells[0] != f"GPU{k}" or len(cells) < k + 2 or cells[k + 1] != "X" \
                or not all(_CELL.fullmatch(CELL_ALIASES.get(c, c)) for c in cells[1:k + 2]):
            break
        rows.append(cells[1:])
    n = len(rows)
    nvlinked = all(sum(c.startswith("NV") for c in r[:first + i]) == first + i for i, r in enumerate(rows))
    if n < 2 and not (first > 0 and nvlinked) or any(
            rows[i][first + j] != rows[j][first + i] for i in range(n) for j in range(n)
            if first + j < len(rows[i]) and first + i < len(rows[j])):
        return None  # one row is a matrix's only where an NV# to every GPU before it (only topo -m prints) says so
    nv = [j for r in rows for j, c in enumerate(r) if c.startswith("NV") and _CELL.fullmatch(c)]
    width = max(first + n, max(nv, default=-1) + 1)
    return start, "        " + "  ".join([f"GPU{j}" for j in range(width)] + _beyond_gpus(lines[start:], rows[0], width))


_AFTER = ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID")  # topo -m's titles after the devices, in every version's order


def _beyond_gpus(lines: list[Line], row: list[str], gpus: int) -> list[str]:
    """The titles of a header-less row's columns after its GPUs: NIC0, NIC1 … where a NIC0 row below has its X in
    the first of them (the tool names its NICs so), then the affinity titles in topo -m's order for the cells
    after those (the first a CPU list); none where that is not so."""
    rest = row[gpus:]
    nics = next((i for i, c in enumerate(rest) if not _CELL.fullmatch(CELL_ALIASES.get(c, c))), len(rest))
    named = nics == 0 or any((c := _split(ln.text))[:1] == ["NIC0"] and len(c) > gpus + 1 and c[gpus + 1] == "X"
                             for ln in lines)
    after = rest[nics:]
    if not named or not 0 < len(after) <= len(_AFTER) or not (_CPU_LIST.fullmatch(after[0]) or after[0] == "N/A"):
        return []
    return [f"NIC{k}" for k in range(nics)] + list(_AFTER[:len(after)])


def _own_row(text: str) -> int | None:
    """k where the line is a topo -m row 'GPUk' with its X in column k (a paste may start at any GPU's row)."""
    cells = _split(text) if text.lstrip().startswith("GPU") else []
    k = int(cells[0][3:]) if cells and cells[0][3:].isdigit() and len(cells[0]) <= 6 else None
    return k if k is not None and len(cells) > k + 1 and cells[k + 1] == "X" else None


def _matrix(lines: list[Line], at: int | None, where: str) -> TopoMatrix | None:
    if at is None:
        return None
    header, extra = _columns(_split(lines[at].text))
    dupes = sorted({d for d in header if header.count(d) > 1})
    if dupes:
        raise CaptureError(f"the header names {', '.join(dupes)} more than once", where=where,
                           fix="capture it again with `nvidia-smi topo -m`; do not edit the matrix.")
    if len(header) > MAX_DEVICES:
        raise CaptureError(f"{len(header)} devices in the header (at most {MAX_DEVICES})", where=where,
                           fix="give the capture of one node.")
    topo = TopoMatrix([], {}, {}, claimed={lines[at].no}, header=header, header_line=lines[at].no)
    topo.notes += _unknown_titles(extra, lines[at].no)
    if not lines[at].text[:1].isspace():
        topo.notes.append(f"topo -m: the header row (line {lines[at].no}) starts flush left, not with a blank: "
                          "read as the header")
    rows_cut, unsound = list[str](), list[str]()
    last = next((k for k in range(len(lines) - 1, -1, -1) if lines[k].text.strip() and not lines[k].elision), None)
    # once: a cell cut at the capture's end (a cut mark after it says so too); by place (lines.TextLines makes a
    # Line each time it is read: two reads are two objects)
    for k, ln in enumerate(lines[at + 1:], at + 1):
        row = _split(ln.text)
        if not row or row[0] not in header or _prose(row):
            if row and row[0].lower().startswith("legend"):
                break
            if row and not ln.elision:
                break
            continue
        name, values = row[0], _uncut(topo, row[0], row[1:], k == last, len(header))
        if name in topo.devices:
            raise CaptureError(f"row {name} appears twice", where=where, fix="give one `nvidia-smi topo -m` per file.")
        topo.devices.append(name)
        topo.claimed.add(ln.no)
        if len(values) < len(header):
            rows_cut.append(f"{name} ({len(values)} of {len(header)} cells)")
        for other, cell in zip(header, values, strict=False):
            _set(topo, name, other, CELL_ALIASES.get(cell, cell), where)
        topo.numa[name] = _numa(values[len(header):], extra)
        topo.affinity[name] = _affinity(values[len(header):], extra)
        _merged_cpu_numa(topo, name, extra)
        unsound += _unsound_affinity(topo, name)
    topo.notes += [f"topo -m: {', '.join(unsound)}: no CPU list or NUMA node id (0 to {MAX_NUMA_NODE}): "
                   "unreadable"] if unsound else []
    if not any(d.startswith("GPU") for d in topo.devices):
        raise CaptureError("the matrix has no GPU rows", where=where, fix="capture the whole output.")
    _legend(lines, at, topo)
    missing = [d for d in header if d not in topo.devices]
    if missing:
        topo.notes.append(f"topo -m: {', '.join(missing)} named in the header have no row (the capture is cut): "
                          "a GPU without its row is listed as 'row cut', its links not guessed; a NIC is kept only "
                          "through the cells of the rows read")
    _fused_note(lines, topo)
    if rows_cut:
        topo.notes.append(f"topo -m: row(s) cut short: {', '.join(rows_cut)}; their other cells come from the "
                          "other rows' columns where those exist")
    topo.notes += topo_relations.notes(topo)  # NOTE: the pairs by relation, each NUMA node's GPUs
    return topo


def _prose(row: list[str]) -> bool:
    """A line that starts with a device's name but goes on in words ('GPU0 and GPU1 are connected by nvlink'
    after the matrix): the poster's sentence, which ends the matrix, not a second row of that device."""
    return len(row) > 1 and _WORD.fullmatch(row[1]) is not None and not _CELL.fullmatch(row[1])


_WORD = lazy(r"[A-Za-z][a-z']*[,.:;]?")  # a word of a sentence ('and', 'is'), never a cell, a fused pair or
# an affinity column ('NODENODE', '0-11', 'N/A'): a row cut short still reads as that row (and is judged so)


def _fused_note(lines: list[Line], topo: TopoMatrix) -> None:
    fused = [str(ln.no) for ln in lines if ln.no in topo.claimed and any(
        _FUSED.fullmatch(t) for t in ln.text.split() if len(t) >= 6)]
    if fused:
        topo.notes.append(f"topo -m: line(s) {', '.join(fused[:8])} hold two columns run together (a tab lost in "
                          "the paste, `NODENODE`): read as two cells")


MAX_MATRICES = 16  # further topo -m matrices compared with the first in one file; past it, counted


def again(lines: list[Line], first: TopoMatrix, where: str) -> None:
    """Each further `topo -m` in the lines (a log appended twice; the morning's and the evening's): its
    lines are the capture's, and a note says whether it matches the first, which is the one used. A `topo -p2p`
    matrix is noted, not compared."""
    start, seen = first.header_line, 0
    while (at := header_index(rest := [ln for ln in lines if ln.no > start])) is not None:
        start, seen = rest[at].no, seen + 1
        if seen > MAX_MATRICES:
            first.notes.append(f"topo -m: more than {MAX_MATRICES} further matrices in the file: the rest not compared")
            return
        if (p2p := _p2p_rows(rest[at:])) is not None:
            first.claimed |= {start, *p2p}
            first.notes.append(_p2p_note([start]))
            continue
        try:
            other = parse(rest[at:], where)
        except CaptureError as exc:
            first.claimed.add(start)
            first.notes.append(f"topo -m: a second matrix at line {start} cannot be read ({exc.what}): the first "
                               "one is used")
            continue
        if other is None:
            continue
        first.claimed |= other.claimed
        first.notes.append(f"topo -m: a second matrix at line {start}, {_differs(first, other)}: the first one "
                           f"(line {first.header_line}) is used")


_P2P = {"X", "OK", "CNS", "GNS", "TNS", "NS", "DR", "U"}  # topo -p2p's statuses (its own legend)


_P2P_LEGEND = lazy(r"^\s*(?:(?:Legend:?|(?:X|OK|CNS|GNS|TNS|NS|DR|U)\s+=\s+\S.*)\s*)?$")


def _p2p_legend(lines: list[Line]) -> int:
    """How many of the lines after a `topo -p2p` matrix are its legend ('Legend:', 'NS   = Not supported') or
    blank: they are the same capture."""
    return next((i for i, ln in enumerate(lines) if not _P2P_LEGEND.match(ln.text)), len(lines))


def _p2p_rows(lines: list[Line]) -> set[int] | None:
    """The rows of a `topo -p2p r|w|n|a|p` matrix under the header at lines[0]; None when it is not one."""
    header, _ = _columns(_split(lines[0].text))
    rows: set[int] = set()
    for ln in lines[1:]:
        row = _split(ln.text)
        if not row or row[0] not in header:
            break
        if not set(row[1:]) <= _P2P or "X" not in row[1:]:
            return None
        rows.add(ln.no)
    return rows or None


P2P_MEANING = {"OK": "status OK", "CNS": "chipset not supported", "GNS": "GPU not supported",
               "TNS": "topology not supported", "NS": "not supported", "DR": "disabled by regkey", "U": "unknown"}
_P2P_MODE = lazy(r"topo\s+-p2p\s+([rwnap]{1,4})\b")  # r(ead), w(rite), n(vlink), a(tomics), p(rop); rw …
# NVML's P2P capability indices behind the letters: READ, WRITE, NVLINK, ATOMICS and PROP (= PCI, its value 4).
# Peer reads and writes (r, w) are peer access itself, and NVLink (n) is judged against the design's links; the
# atomics (a) and PCIe (p) capabilities say NS by design on many boards (an NVLink or NVSwitch board moves its
# peer traffic off PCIe; PCIe peer atomics are rarely offered), so their matrices are said, never judged.
_P2P_NOTED = frozenset("ap")


@dataclass
class P2pStatus:
    """`nvidia-smi topo -p2p r|w|n|a|p` status matrices: each ordered pair's status as printed (OK, NS, CNS,
    GNS, TNS, DR, U), the diagonal left out; the capability each matrix asked for where the command is named.
    Only the read, write and NVLink matrices (or one whose command is not in the paste) are judged: an atomics
    or PCIe (prop) matrix's NS is the board's design on NVLink boards, kept apart in `noted`."""

    pairs: dict[tuple[str, str], str] = field(default_factory=dict)  # (row GPU, column GPU) -> status
    noted: dict[tuple[str, str], str] = field(default_factory=dict)  # the same, from 'a' or 'p' matrices
    modes: list[str] = field(default_factory=list)  # 'r', 'rw' … as the command line or its title names them
    claimed: set[int] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)

    def denied(self) -> list[tuple[int, int, str]]:
        """The pairs (i < j) whose status is not OK, with the status of either direction that is not."""
        out: dict[tuple[int, int], str] = {}
        for (a, b), status in self.pairs.items():
            if not (a[3:].isdigit() and b[3:].isdigit()):
                continue
            i, j = sorted((int(a[3:]), int(b[3:])))
            if status != "OK":
                out.setdefault((i, j), status)
        return sorted((i, j, st) for (i, j), st in out.items())


def parse_p2p(lines: list[Line]) -> P2pStatus:
    """Every `topo -p2p` status matrix in the lines (a header of GPU names alone, rows of statuses with X on the
    diagonal), with its legend; read alone or beside a topo -m."""
    out = P2pStatus()
    i = 0
    while i < len(lines):
        ln = lines[i]
        rows = _p2p_rows(lines[i:]) if "GPU0" in ln.text and not _columns(_split(ln.text))[1] else None
        if rows is None:
            i += 1
            continue
        mode = next((m.group(1) for back in lines[max(0, i - 3):i] if (m := _P2P_MODE.search(back.text))), None)
        out.modes += [mode] if mode else []
        out.claimed |= {ln.no, *rows}
        header = _columns(_split(ln.text))[0]
        into = out.noted if mode and set(mode) <= _P2P_NOTED else out.pairs
        for row in lines[i + 1:i + 1 + len(rows)]:
            cells = _split(row.text)
            into.update({(cells[0], b): st for b, st in zip(header, cells[1:], strict=False) if st != "X"})
        i += 1 + len(rows)
        legend = _p2p_legend(lines[i:])
        out.claimed |= {x.no for x in lines[i:i + legend]}
        i += legend
    if out.pairs:
        out.notes.append(_p2p_said(out))
    if out.noted:
        shown = sorted({st for st in out.noted.values()})
        out.notes.append(f"topo -p2p: the atomics or PCIe (prop) capability matrix ({', '.join(shown)} among its "
                         "pairs) is said, not judged: on NVLink boards peer traffic leaves PCIe by design, and PCIe "
                         "peer atomics are rarely offered; the read, write and NVLink matrices say peer access")
    return out


def _p2p_said(got: P2pStatus) -> str:
    modes = f" ({', '.join(dict.fromkeys(got.modes))})" if got.modes else ""
    denied = got.denied()
    gpus = len({g for pair in got.pairs for g in pair})
    if not denied:
        return f"topo -p2p{modes}: {gpus} GPU(s), every pair OK (peer access available)"
    shown = ", ".join(f"GPU{i}-GPU{j} {st} ({P2P_MEANING.get(st, st)})" for i, j, st in denied[:8])
    more = f" and {len(denied) - 8} more" if len(denied) > 8 else ""
    return (f"topo -p2p{modes}: {gpus} GPU(s), {len(denied)} pair(s) without peer access: {shown}{more}; judged "
            "against the modules' design (a fault only where the design joins them by NVLink)")


def _differs(first: TopoMatrix, other: TopoMatrix) -> str:
    """'the same as the first', or how it differs (devices, then cells: at most four named)."""
    diff = [f"{d} only in the second" for d in other.devices if d not in first.devices]
    diff += [f"{d} only in the first" for d in first.devices if d not in other.devices]
    pairs = sorted(set(first.cells) | set(other.cells), key=sorted)
    diff += [f"{'-'.join(sorted(p))} {first.cells.get(p, 'not shown')} then {other.cells.get(p, 'not shown')}"
             for p in pairs if first.cells.get(p) != other.cells.get(p) and p <= set(first.devices) & set(other.devices)]
    if not diff:
        return "the same as the first"
    more = f" and {len(diff) - 4} more" if len(diff) > 4 else ""
    return f"which differs from the first ({'; '.join(diff[:4])}{more})"


def _set(topo: TopoMatrix, a: str, b: str, cell: str, where: str) -> None:
    if not _CELL.fullmatch(cell):
        raise CaptureError(f"row {a}, column {b}: {cell!r} is not a topo -m cell (X, NV#, PIX, PXB, PHB, NODE, SYS)",
                           where=where, fix="capture the whole output, unwrapped and unedited.")
    m = re.fullmatch(r"NV(\d+)", cell)
    if m and not 0 < int(m.group(1)) <= MAX_NV_PER_PAIR:
        raise CaptureError(f"row {a}, column {b}: {cell} — no module has that many NVLinks (at most "
                           f"{MAX_NV_PER_PAIR} between two)", where=where, fix="capture it again; do not edit the matrix.")
    if (cell == "X") != (a == b):
        raise CaptureError(f"row {a}, column {b}: {cell!r} — X belongs on the diagonal only", where=where,
                           fix="capture the whole output, unwrapped and unedited.")
    if a == b:
        return
    key = frozenset((a, b))
    seen = topo.cells.get(key)
    if seen is not None and seen != cell:
        raise CaptureError(f"the matrix disagrees with itself: {b}→{a} is {seen} but {a}→{b} is {cell}",
                           where=where, fix="capture it again with `nvidia-smi topo -m`; do not edit the matrix.")
    topo.cells[key] = cell


def _legend(lines: list[Line], at: int, topo: TopoMatrix) -> None:
    """Legend lines and NIC names are part of the capture."""
    in_legend = wrapped = False
    for ln in lines[at + 1:]:
        s = ln.text.strip()
        if s.lower().startswith("legend"):
            in_legend = True
        entry = in_legend and (not s or "=" in s or s.lower().startswith(("legend", "nic legend")))
        if entry or (wrapped and s and not _DEVICE.match(s)):  # an entry, or its words wrapped onto the next line
            topo.claimed.add(ln.no)
        wrapped = bool(in_legend and s and (entry and "=" in s or wrapped))
        if (m := re.match(r"^(NIC\d+):\s*(\S+)$", s)) is not None:
            topo.nic_names[m.group(1)] = m.group(2)
            topo.claimed.add(ln.no)
    if topo.nic_names:
        named = [f"{k} = {v}" for k, v in topo.nic_names.items()]
        more = f" and {len(named) - 8} more" if len(named) > 8 else ""
        topo.notes.append(f"topo -m: NIC Legend read ({len(named)}): {', '.join(named[:8])}{more}; each NIC "
                          "endpoint carries its device name")


# Linux numbers NUMA nodes below MAX_NUMNODES = 1 << CONFIG_NODES_SHIFT, a shift of 10 at most: 0 to 1023
MAX_NUMA_NODE = 1023
_NUMA_ID = lazy(r"[0-9]{1,4}")
_CPU_LIST = lazy(r"[0-9]{1,5}(?:-[0-9]{1,5})?(?:,[0-9]{1,5}(?:-[0-9]{1,5})?)*")  # '0-63,128-191'


def numa_id(value: str) -> int | None:
    """A NUMA node id as topo -m prints it, within the ids Linux gives; None for anything else."""
    return int(value) if _NUMA_ID.fullmatch(value) and int(value) <= MAX_NUMA_NODE else None


def _numa(values: list[str], headers: list[str]) -> int | None:
    for header, value in zip(headers, values, strict=False):
        if header.lower().startswith("numa") and numa_id(value) is not None:
            return numa_id(value)
    return None


_MERGED = lazy(r"([0-9][0-9,-]*) ([0-9]{1,4})")


def _merged_cpu_numa(topo: TopoMatrix, name: str, titles: list[str]) -> None:
    """topo -m pads CPU Affinity to its title's width and one space: a list as wide ('112-127,240-255 7') runs
    into the NUMA Affinity, and the cells after it read one column early; each put back in its column."""
    cells = topo.affinity.get(name, {})
    m = _MERGED.fullmatch(cells.get("CPU Affinity", ""))
    if m is None or "NUMA Affinity" not in titles:
        return
    shifted = {"GPU NUMA ID": cells["NUMA Affinity"]} if "NUMA Affinity" in cells and "GPU NUMA ID" in titles else {}
    topo.affinity[name] = {"CPU Affinity": m[1], "NUMA Affinity": m[2], **shifted}
    topo.numa[name] = numa_id(m[2])


def _unsound_affinity(topo: TopoMatrix, name: str) -> list[str]:
    """A row's affinity cells no topo -m prints (a NUMA id past Linux's, 'banana', a CPU list not of the
    '0-63,128-191' shape): taken out, so inventory says them unreadable; named for the note."""
    cells = topo.affinity.get(name, {})
    bad = [h for h, v in cells.items() if v != "N/A" and (_CPU_LIST.fullmatch(v) is None if "cpu" in h.lower()
                                                          else numa_id(v) is None)]
    return [f"{name}'s {h} '{cells.pop(h)[:40]}'" for h in bad]


def _affinity(values: list[str], headers: list[str]) -> dict[str, str]:
    """A row's affinity columns as printed ('CPU Affinity': '0-27', 'GPU NUMA ID': 'N/A'): what inventory
    says per module, a matrix cell (a row cut into the next columns) never taken for one."""
    return {h: v for h, v in zip(headers, values, strict=False)
            if _AFFINITY.search(h) and not _CELL.fullmatch(CELL_ALIASES.get(v, v))}


def nic_rows_alone(lines: list[Line]) -> str | None:
    """Why a file of topo -m NIC rows alone (a paste that starts below the header and the GPU rows) is not read,
    said with what its rows show: row NICk's X falls in column g + k, so g GPU columns precede the NICs, and each
    NIC's nearest GPU column (PIX, PXB) is named; None where the file holds no such rows."""
    rows: list[tuple[Line, int, list[str]]] = []
    for ln in lines:
        cells = _split(ln.text)
        if cells and re.fullmatch(r"NIC\d{1,4}", cells[0]) and cells[1:].count("X") <= 1 and len(cells) > 2 \
                and all(_CELL.fullmatch(CELL_ALIASES.get(c, c)) for c in cells[1:]):
            rows.append((ln, int(cells[0][3:]), cells[1:]))
    gpus = {values.index("X") - k for _, k, values in rows if "X" in values}  # a row cut before its X: no count
    if not rows or len(gpus) != 1 or min(gpus) < 1:
        return None  # no rows, or rows whose X do not agree on one GPU count: not said as topo -m's
    g = gpus.pop()
    near = [f"NIC{k} {values[j]} to GPU{j}'s column" for _, k, values in rows
            for j in range(min(g, len(values))) if values[j] in ("PIX", "PXB")]
    return (f"nvidia-smi topo -m rows NIC{rows[0][1]} to NIC{rows[-1][1]} (lines {rows[0][0].no}-{rows[-1][0].no}) "
            "without the matrix's header line or any GPU row: the matrix is read from its header and GPU rows, so "
            f"no GPU pair or NIC is judged here; by each row's X the matrix has {g} GPU columns before the NICs"
            + (f" and its rows show {', '.join(near)}" if near else ""))
