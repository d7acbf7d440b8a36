"""``rocm-smi``'s default table (no option), in each of its layouts since 2017.

The columns moved between versions (ROC-smi 2017: ``GPU DID Temp AvgPwr SCLK MCLK Fan Perf OverDrive
ECC``; ROCm 1.x-5.x: ``GPU Temp AvgPwr SCLK MCLK Fan Perf PwrCap VRAM% GPU%``, later ``Temp (DieEdge)``;
ROCm 6: ``Device Node IDs Temp Power Partitions …`` or ``Device [Model : Revision] Temp Power …`` over a
second line of units, the latter with the module's name, cut at 20 characters, on a line under its row), and
cells hold spaces
(``0x740f,   12345``, ``N/A, N/A, 0``), so a row is read by what its cells look like, not by position:
the module's index first, its device id where one is printed (named in a note: ROC-smi listed a board's
non-AMD VGA too), the first temperature cell. A cell the tool printed as N/A stays unknown. Rows are
labelled ``GPU[n]`` as rocm-smi -a labels them, so the two forms of one listing are one module.
"""

from __future__ import annotations

import re
from dataclasses import replace

from gpuvet.captures import cut_rows, rocm_sensors
from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.marks import Needing
from gpuvet.captures.records import ListedModule, ListedParse, StateReading
from gpuvet.captures.text import MAX_MODULES, Line, ranges

_HEAD = lazy(r"^(GPU|Device)\s.*\bTemp\b.*\b(SCLK|AvgPwr|Power)\b")
_UNITS = lazy(r"^(Name \(20 chars\)\s+)?\(.*\)\s*$")  # ROCm 6's second header line: (DID, GUID) (Edge) …
_ROW = lazy(r"^(\d{1,4})\s+(\S.*)$")
_TEMP = lazy(r"^(\d{1,3}(?:\.\d+)?)\s*(?:°C|c|C)$")
_WATTS = lazy(r"^\d{1,5}(?:\.\d+)?W$")
_DID = lazy(r"^(?:0x)?([0-9a-fA-F]{4}),?$")
_MESSAGE = lazy(r"^GPU\[(\d{1,4})\]\s*:\s*(.+)$")  # 'GPU[0] : PowerPlay not enabled - …'
_NAME_WIDTH = 20  # ROCm 6's 'Name (20 chars)' column
_NAME = lazy(r"[A-Za-z0-9][\w .()/+-]{0,19}")  # a name line under a row: 20 characters at most
_HEX = lazy(r"0x[0-9a-fA-F]{1,8}")
_BANNER = lazy(r"^=+.*=*$")
# a rule, or a rule around a title; never two '=+' side by side (quadratic on a long rule that is none, review 55 F10)
_FRAME = lazy(r"^=+(?:\s*(?:ROCm System Management Interface|Concise Info|End of ROCm SMI Log)\s*=+|\s+=+)?$")


KIND = "rocm-smi (default table)"


def read(lines: list[Line], out: ListedParse) -> None:
    """Every default table in the lines: one module a row, the tool's messages about a module noted;
    where none has its header, the rows pasted without it."""
    read_tables(lines, out)
    read_headless(lines, out)


def read_tables(lines: list[Line], out: ListedParse) -> None:
    """The tables under their header, which is looked for only on the lines holding 'Temp' (issue 43: one
    C-speed test a line)."""
    end, before = 0, len(out.modules)
    for i in [i for i, ln in enumerate(lines) if "Temp" in ln.text]:
        if i >= end and _HEAD.match(lines[i].text.strip()) is not None:
            end = _table(lines, i, out)
    _framed(lines, out, before)


def read_headless(lines: list[Line], out: ListedParse) -> None:
    """Rows without their header, where no table with one was read (read_tables named the kind)."""
    if KIND in out.kinds:
        return
    before = len(out.modules)
    _headless(lines, out)
    _framed(lines, out, before)


def _framed(lines: list[Line], out: ListedParse, before: int) -> None:
    if len(out.modules) > before:  # the banners around the rows read; the tool's empty monitor reads above them
        out.claimed |= {ln.no for ln in lines if _FRAME.match(ln.text.strip())}
        rocm_sensors.monitor_empty(lines, out, before)
        out.claimed |= {ln.no for ln in lines if "Expected integer value from monitor" in ln.text}


def _table(lines: list[Line], at: int, out: ListedParse) -> int:
    """The rows under the header at ``at``; the index of the first line after the table."""
    head = lines[at].text.split()
    did_column = len(head) > 1 and head[1] == "DID"  # ROC-smi 2017: the device id as four hex digits
    capped = "PwrCap" in head  # ROCm 1.x on: the power cap, after the average power
    busy = head[-1] == "GPU%"  # ROCm 1.x on: the engine's utilization, the row's last cell
    claimed, messages, dids, cut, rows = [lines[at].no], list[str](), list[str](), list[str](), 0
    i = at + 1
    while i < len(lines):
        text = lines[i].text.strip()
        if (row := _ROW.match(text)) is not None and rows < MAX_MODULES and _shaped(row.group(2).split()):
            module, did = _module(int(row.group(1)), row.group(2).split(), did_column, capped, busy)
            out.modules.append(module)
            dids += [f"{module.label} {did}"] if did else []
            rows += 1
        elif rows and text and lines[i].text[:1].isspace() and lines[i - 1].no in claimed[-1:] \
                and _ROW.match(lines[i - 1].text.strip()) and _NAME.fullmatch(text):
            if not _HEX.fullmatch(text):  # a module without a marketing name shows its device id there
                out.modules[-1] = replace(out.modules[-1], name=text)  # the row's name line (ROCm 6: 20 characters)
                cut += [out.modules[-1].label] if len(text) == _NAME_WIDTH else []
        elif (said := _MESSAGE.match(text)) is not None:
            messages.append(f"GPU[{said.group(1)}]: {said.group(2).strip()[:120]}")
        elif not (_UNITS.match(text) or (_BANNER.match(text) and not rows)):  # the units line, the rule
            break
        claimed.append(lines[i].no)
        i += 1
    if not rows:
        return i
    _unanswered(lines[max(0, at - _ERRORS_ABOVE):i], out, rows)
    _all_unread(lines[at + 1:i], out, rows, lines[at].text)
    if i < len(lines) and _BANNER.match(lines[i].text.strip()):
        claimed.append(lines[i].no)
    out.claimed.update(claimed)
    out.kinds.append(KIND)
    ids = f"; device ids {', '.join(dids[:16])}" if dids else ""
    out.notes.append(f"rocm-smi's default table at line(s) {ranges(claimed)}: {rows} module(s) read{ids}; it prints "
                     "no bus ids or memory sizes (rocm-smi -a or --json give them)")
    out.notes += [f"rocm-smi says {m}" for m in dict.fromkeys(messages)]
    hot = [f"{m.label} {m.temperature_c:g} °C{f' ({m.name})' if m.name else ''}" for m in out.modules[-rows:]
           if m.temperature_c is not None]
    if hot:  # a reading is never its own limit: the module's design limit or the driver's must judge it
        out.notes.append(f"rocm-smi's default table: temperature {', '.join(hot[:8])}; the table prints no slowdown "
                         "or critical temperature to judge it by, and no design limit is published for the model: "
                         "can't tell whether it is too hot (rocm-smi -a, amd-smi metric and the driver's hwmon "
                         "temp*_crit give the board's own limits)")
    if cut:
        out.notes.append(f"rocm-smi's default table: the name of {', '.join(cut[:8])} fills its {_NAME_WIDTH} "
                         "characters and may be cut there (rocm-smi --showproductname prints it whole)")
    return i


# rocm-smi's own error on a module ('ERROR: 15 GPU[0]: power: Data … was not of the type that was expected'), printed
# above the table it fails to fill; a reading it could not take stays N/A, None or unknown in the row
_TOOL_ERROR = lazy(r"\bERROR:?\s*(?:\d{1,4}\s+)?GPU\[(\d{1,4})\]\s*:?\s*(.{0,120})")
_NO_READING = frozenset({"n/a", "none", "unknown"})
_UNREAD_CELLS = 3  # a judgement, not a measurement: more than a reading or two the card may lack (fan, power)
# unread beside rocm-smi's own ERROR line on that GPU is a module that stopped answering
_ERRORS_ABOVE = 40  # lines above the header where the tool's errors for the table stand
UNANSWERED = "rocm-smi: readings unreadable"  # the ras path a module that stopped answering is said under


def _unanswered(lines: list[Line], out: ListedParse, rows: int) -> None:
    """A row with no temperature and three readings or more the tool could not take (N/A, None, unknown), on a
    module the tool's own ERROR line names: the module stopped answering its driver (after a hung or killed job)."""
    errors: dict[str, str] = {}
    for ln in lines:
        if "ERROR" in ln.text and (e := _TOOL_ERROR.search(ln.text)) is not None:
            errors.setdefault(f"GPU[{e.group(1)}]", e.group(0).strip())
    if not errors:
        return
    by_label = {ln_row.group(1): ln_row.group(2).split() for ln in lines
                if (ln_row := _ROW.match(ln.text.strip())) is not None}
    for k in range(len(out.modules) - rows, len(out.modules)):
        m = out.modules[k]
        cells = by_label.get(m.label[4:-1], [])
        unread = [c for c in cells if c.lower() in _NO_READING]
        if m.temperature_c is None and len(unread) >= _UNREAD_CELLS and m.label in errors:
            out.modules[k] = replace(m, ras=(*m.ras, (UNANSWERED, f"{' '.join(cells)} ({errors[m.label]})"[:240])))


ALL_UNREAD = "rocm-smi: every reading N/A"  # issue 46: the row of a module its driver answers nothing for


def _all_unread(lines: list[Line], out: ListedParse, rows: int, header: str | None = None) -> None:
    """A row whose every cell after its index (a device id aside) the tool printed as N/A, None or unknown: no
    temperature, power, clock, fan nor use read, as nvidia-smi's ERR! row (a module the driver cannot read); a row
    with one figure (a fan's 0%) is a device that lacks the others, not judged."""
    found = [(ln.no, r) for ln in lines if (r := _ROW.match(ln.text.strip())) is not None]
    cells_of = {r.group(1): r.group(2).split() for _, r in found}
    cut = cut_rows.short([(ln.no, ln.text) for ln in lines if _ROW.match(ln.text.strip())], header)  # not judged
    if cut:
        out.notes.append(cut_rows.note("rocm-smi's default table", cut))
    cut_labels = {r.group(1) for no, r in found if no in cut}
    for k in range(len(out.modules) - rows, len(out.modules)):
        m = out.modules[k]
        cells = [c.rstrip(",") for c in cells_of.get(m.label[4:-1], [])] if m.label[4:-1] not in cut_labels else []
        while cells and (cells[0].isdigit() or _HEX.fullmatch(cells[0])):  # ROCm 6's node id, device id, GUID
            cells = cells[1:]
        if len(cells) >= 4 and all(c.lower() in _NO_READING or c.lower() == "unsupported" for c in cells) \
                and not any(p == UNANSWERED for p, _ in m.ras):
            out.modules[k] = replace(m, ras=(*m.ras, (ALL_UNREAD, " ".join(cells)[:240])))


def _headless(lines: list[Line], out: ListedParse) -> None:
    """Rows pasted without their header (an excerpt that opens mid-table): a run of two or more rows of
    the header's shape that also hold what only rocm-smi prints in them, a clock spelled ``Mhz`` or a
    device id ``0x74a1,`` in its first cells; read as the table, the missing header said."""
    run: list[tuple[Line, list[str]]] = []
    last = -1
    for i in [*(i for i, ln in enumerate(lines) if _ROCM_ONLY[0] in ln.text or _ROCM_ONLY[1] in ln.text), -1]:
        if i != last + 1:  # a line between them lacks both words: no row of the run
            _rows_read(run, out)
            run = []
        last = i
        row = _ROW.match(lines[i].text.strip()) if i >= 0 else None
        cells = row.group(2).split() if row is not None else []
        if row is not None and _shaped(cells) and _rocm_only(cells) and len(run) < MAX_MODULES:
            run.append((lines[i], [row.group(1), *cells]))
            continue
        _rows_read(run, out)
        run = []


_ROCM_ONLY = ("Mhz", "0x")  # in every row _rocm_only takes: the lines _headless looks at
# issue 43: a header (_HEAD, at a line's start; not any 'Temp': every nvidia-smi -q holds 'GPU Current Temp', and
# the test of each line holding it was 0.02 s of a 20 MB bug report); a row read without it a clock in 'Mhz' or a
# device id cell '0x74a1,'
MARKERS = (Needing(re.compile(r"\n[^\S\n]*(?:GPU|Device)[^\S\n][^\n]*\bTemp\b[^\n]*\b(?:SCLK|AvgPwr|Power)\b"),
                   ("Temp",)),)
_DIGITS = "0123456789abcdefABCDEF"  # a device id's last two, then its comma: in every such cell
HEADLESS_MARKERS = ("Mhz", Needing(re.compile(r"0x[0-9a-fA-F]{4},"), tuple(f"{a}{b}," for a in _DIGITS for b in _DIGITS)))


def _rows_read(run: list[tuple[Line, list[str]]], out: ListedParse) -> None:
    """A run of two or more headless rows, read as the table."""
    if len(run) < 2:
        return
    dids = []
    for _, cells_of in run:
        module, did = _module(int(cells_of[0]), cells_of[1:], False)
        out.modules.append(module)
        dids += [f"{module.label} {did}"] if did else []
    out.claimed.update(r.no for r, _ in run)
    out.kinds.append(KIND)
    ids = f"; device ids {', '.join(dids[:16])}" if dids else ""
    out.notes.append(f"rocm-smi's default table at line(s) {ranges([r.no for r, _ in run])}: {len(run)} "
                     f"row(s) without the table's header, read by what their cells hold{ids}")


def _rocm_only(cells: list[str]) -> bool:
    return any(c.endswith("Mhz") and c[:-3].isdigit() for c in cells) or \
        any(c.startswith("0x") and c.endswith(",") and _DID.match(c) for c in cells[:3])


def _shaped(cells: list[str]) -> bool:
    """A row has the header's cells: a temperature and a power reading (or N/A in their place); a line of
    prose that starts with a number under the table ('2 errors were reported …') has neither."""
    unread = sum(c.upper() == "N/A" for c in cells)
    temp = any(_TEMP.match(c) for c in cells)
    watts = any(_WATTS.match(c) for c in cells)
    return (temp or unread > 0) and (watts or unread > int(not temp))


def _module(index: int, cells: list[str], did_column: bool, capped: bool = False,
            busy: bool = False) -> tuple[ListedModule, str | None]:
    """One row: the module, and its device id where printed; the first temperature; N/A stays unknown. Under a
    header with PwrCap, the power cap is the second of the row's two watt cells (the average power the first);
    a row with one (the other N/A) leaves it unknown: which one it is can't be told."""
    shown = cells[:1] if did_column else [c for c in cells[:3] if c.lower().startswith("0x")][:1]
    did = next((f"0x{d.group(1).lower()}" for c in shown if (d := _DID.match(c)) is not None), None)
    temp = next((float(t.group(1)) for c in cells if (t := _TEMP.match(c)) is not None), None)
    watts = [float(c[:-1]) for c in cells if _WATTS.match(c)]
    cap = watts[1] if capped and len(watts) == 2 and watts[1] > 0 else None
    pct = cells[-1][:-1] if busy and cells[-1].endswith("%") else ""  # GPU%, where the header ends on it
    state = StateReading(busy_pct=float(pct) if pct.replace(".", "", 1).isdigit() else None,
                         power_w=watts[0] if watts and (cap is not None or not capped) else None, power_cap_w=cap)
    return ListedModule(f"GPU[{index}]", name=_named(did), temperature_c=temp, power_limit_w=cap, tool="rocm-smi",
                        state=state), did


def _named(did: str | None) -> str | None:
    """The product pci.ids names for an AMD device id the row prints (rocm-smi 1.x's DID column), else None:
    the id alone then stays in the note."""
    from gpuvet.node.catalog import pci_product

    known = pci_product(f"1002:{did[2:]}") if did else None
    return f"AMD {known.product}" if known is not None else None
