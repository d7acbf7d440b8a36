"""An nvidia-bug-report.log read a section at a time (issue 43): the bundle is many commands' and files'
outputs, each after a banner (a rule of underscores, a blank, the section's title), and no tool's output spans
two of them. Each section is cleaned and walked alone, its lines numbered as in the file and let go
before the next is made, so a read holds the text and one section's lines, not every line of the file.

The merge gives what the whole-file read gives, or nothing: read.py then reads the whole text. Only the
formats of ALONE are read this way, each found in one section (that section's find), the kernel log also
in several (rotated logs: their Xids and module lines merged, where no line is weighed with another
section's: no driver event, no note, no 'fallen off the bus' without its Xid, a 'GPU at' UUID only beside
its module's Xid). Any other format's find, one format found in two sections, a section that cleaning
changed, or nothing found at all hands the text back to the whole read, at the first section that shows it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import compress, count, islice, repeat
from operator import ne, sub

from gpuvet.captures import kernel
from gpuvet.captures.formats import FORMATS, FileCapture, Marks, Parsed, choose_smi
from gpuvet.captures.text import MAX_LINES, Line, clean

_RULE = "\n" + "_" * 40  # nvidia-bug-report.sh's rule before each section (44 of them), a line of its own
_KERNEL = "kernel log"
# the formats read a section at a time: their parsers stop at a section's end (checked on bug reports built from
# every corpus capture); a report where any other format finds something is read whole (a table, a JSON or a
# truncated listing may read on past the banner, and the whole read keeps what that reading gives)
ALONE = frozenset({_KERNEL, "lspci -vvv", "nvidia-smi -q", "kernel AER", "nvlink state", "nvidia-smi: no devices",
                   "fabric manager log"})  # not -q -x: its span runs from the first '<' of the file to the last


@dataclass
class _Finds:
    """What the sections gave so far: each format's finds (in section order), the lines left unread as
    runs, whether anything was claimed."""

    found: dict[str, dict[int, Parsed]] = field(default_factory=dict)  # by the section's place in the file
    rest: dict[int, list[list[int]]] = field(default_factory=dict)  # each section's [first, last] line numbers
    left: int = 0  # lines in ``rest``
    claimed: bool = False
    ran: set[str] = field(default_factory=set)  # the formats whose markers some section holds
    paired: bool = False  # a section whose kernel log holds a line kernel.parse pairs with another (_paired)


def read_sections(text: str, where: str) -> FileCapture | None:
    """The bug report's parse, a section at a time; None where that might differ from the whole-file read."""
    starts = _starts(text)
    if len(starts) < 3 or "\r" in text or text.count("\n") >= MAX_LINES:
        return None  # fewer than two banners; a lone CR is a line end clean() finds, not counted here
    if _driver_events(text):
        return None
    spans, first = [], 1
    for at, end in zip(starts, [*starts[1:], len(text)], strict=True):
        stop = end if end == len(text) else end - 1  # the line end before the next banner
        spans.append((at, stop, first))
        first += text.count("\n", at, stop) + 1
    finds = _Finds()
    for k in sorted(range(len(spans)), key=lambda k: spans[k][1] - spans[k][0]):  # the small first: what sends the
        at, stop, first = spans[k]  # text back (a topo -m, a table) is then mostly found before the large logs' walk
        if not _section(finds, k, text[at:stop], first, where):
            return None
    return _merged(finds, where)


def _starts(text: str) -> list[int]:
    """Where each section starts: the text's start, and each line of underscores alone (str.find, not a
    multi-line pattern tried at every line's start: a sixth of the walk's time on a 125 MB report)."""
    starts, at = [0], text.find(_RULE)
    while at >= 0:
        end = text.find("\n", at + 1)
        end = len(text) if end < 0 else end
        if not text[at + 1:end].strip("_"):
            starts.append(at + 1)
        at = text.find(_RULE, end)
    return starts


def _driver_events(text: str) -> bool:
    """Whether the kernel log holds a driver message kernel.parse reads as an event (which the whole read
    places by the lines around it): an NVRM line of a known kind, or nvidia-smi's lost handle. Asked of the
    text first, so such a report goes to the whole read before any section is walked for nothing (the other
    drivers' messages, rare in an NVIDIA report, are found by the walk)."""
    if "device handle" in text:  # nvidia-smi's answer for a module it cannot open
        return True
    at = text.find("NVRM")
    while at >= 0:
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        if kernel._nvrm_kind(text[text.rfind("\n", 0, at) + 1:end]) is not None:
            return True
        at = text.find("NVRM", end)
    return False


def _section(finds: _Finds, k: int, part: str, first: int, where: str) -> bool:
    """One section cleaned and walked, its finds kept; False where it cannot be read alone the same."""
    from gpuvet.captures.read import _walk  # read.py imports this module when it reads a bug report
    from gpuvet.errors import CaptureError
    cleaned = clean(part, first)
    if cleaned.notes or cleaned.hosts:  # cleaning decides over the whole text (prefixes, wrapping): read it whole
        return False
    record: dict[str, Parsed] = {}
    try:
        claimed = _walk(FileCapture(""), cleaned.lines, where, record)
    except CaptureError:
        return False  # the whole read says where
    finds.ran.update(record)
    for name, parsed in record.items():
        if _active(name, parsed, where):
            if name not in ALONE or (name != _KERNEL and name in finds.found) or name == _KERNEL and \
                    _near(parsed.value, cleaned.lines):
                return False  # read whole: known now, before the rest is walked for nothing
            finds.paired |= name == _KERNEL and _paired(part, parsed.value)
            finds.found.setdefault(name, {})[k] = parsed
    finds.claimed |= bool(claimed)
    _unread(finds, k, cleaned.lines, claimed)
    return True


def _near(value: object, lines: list[Line]) -> bool:
    """Whether the section's kernel log reads lines near its own that may lie in another section: a driver
    message (an event) takes its module from the lines around it, and a 'GPU at' line its board serial from
    the lines after it."""
    assert isinstance(value, kernel.KernelParse)
    return bool(value.events) or any(kernel._GPU_AT.search(ln.text) for ln in lines[-kernel.NEARBY:])


def _paired(part: str, value: object) -> bool:
    """Whether the section's kernel log holds a line kernel.parse weighs with lines of the whole log: a module
    fallen off the bus without an Xid (checked against every Xid 79 read before it), or a 'GPU at' UUID line
    (the first one in the log names its module wherever that module's Xid is) whose module no Xid of this
    section names."""
    if "The NVIDIA GPU" in part or kernel._FALLEN_ONE_LINE.search(part):
        return True
    named = {kernel.bus(m.group(1)) for m in kernel._GPU_AT.finditer(part)}
    assert isinstance(value, kernel.KernelParse)
    return not named <= {m.module for m in value.modules}


_EMPTY: dict[str, object] = {}


def _active(name: str, parsed: Parsed, where: str) -> bool:
    """Whether the format found anything: a claim, a kind, or a value other than its parse of no lines."""
    if parsed.claimed or parsed.found or parsed.kinds:
        return True
    if parsed.value is None:
        return False
    if name not in _EMPTY:
        fmt = next(f for f in FORMATS if f.name == name)
        _EMPTY[name] = fmt.run([], where, Marks([])).value
    return bool(parsed.value != _EMPTY[name])


def _unread(finds: _Finds, k: int, lines: list[Line], claimed: set[int]) -> None:
    """The section's lines nobody read (read.py's _skipped), kept as runs of line numbers: where one run ends and
    the next starts found at C speed (a section's unread lines are a kernel log's hundred thousand)."""
    rest = [ln.no for ln in lines if ln.no not in claimed and ln.text.strip() and not ln.elision]
    finds.left += len(rest)
    ends = list(compress(count(1), map(ne, map(sub, islice(rest, 1, None), rest), repeat(1))))
    finds.rest[k] = [[rest[a], rest[b - 1]] for a, b in zip([0, *ends], [*ends, len(rest)], strict=True)] if rest else []


def _merged(finds: _Finds, where: str) -> FileCapture | None:
    """The sections' finds filled in as the whole-file walk fills them, format by format in FORMATS' order."""
    from gpuvet.captures.read import _fill, _notes
    fc = FileCapture(where, bug_report=True)
    kept: dict[str, object] = {}
    smi_at = 0
    for fmt in FORMATS:
        got = [parsed for _, parsed in sorted(finds.found.get(fmt.name, {}).items())]  # in the file's order
        smi_at = len(fc.kinds) if fmt.field == "smi" and fmt.name in finds.ran else smi_at  # -q's place, as _walk
        if not got:
            kept.update({fmt.name: None} if fmt.field is None else {})
            continue
        parsed = got[0] if len(got) == 1 else _kernel(got) if fmt.name == _KERNEL and not finds.paired else None
        if parsed is None:
            return None  # found in two sections: the whole read weighs them together
        fc.kinds += parsed.kinds or ((fmt.name,) if parsed.found else ())
        _fill(fc, fmt, parsed.value, kept)
        smi_at = len(fc.kinds) if fmt.field == "smi" else smi_at
    if fc.nccl.results or not finds.claimed or not fc.kinds:
        return None  # nccl-tests' device lines, or a poster's quoted words: read from every line at once
    if (kind := choose_smi(fc, kept, [])) is not None:
        fc.kinds.insert(smi_at, kind)
    fc.notes = [f"nvidia-bug-report: read {', '.join(fc.kinds)} inside it", *_notes(fc), *_skipped(finds)]
    return fc


def _kernel(got: list[Parsed]) -> Parsed | None:
    """Rotated kernel logs' Xids and module lines as one parse of them all; None where a section's parse
    holds what the whole log would weigh together (events counted across lines, notes, modules told apart)."""
    parts = [p.value for p in got]
    if not all(isinstance(v, kernel.KernelParse) and not v.events and not v.notes for v in parts):
        return None
    out = kernel.KernelParse()
    modules: dict[str, kernel.KernelModule] = {}
    for v in parts:
        assert isinstance(v, kernel.KernelParse)
        out.xids += v.xids
        out.nvrm_lines += v.nvrm_lines
        out.claimed |= v.claimed
        for m in v.modules:
            if modules.setdefault(m.module, m) != m:
                return None  # one bus named two ways (another vendor's line first): the whole log's order decides
    out.modules = sorted(modules.values(), key=lambda k: (not kernel._BUS_KEY.fullmatch(k.module), k.module))
    return Parsed(out, out.claimed, found=bool(out.claimed))


def _skipped(finds: _Finds) -> list[str]:
    """read.py's note of the lines nobody read, from the runs (text._ranges' words: six ranges, then a count)."""
    if not finds.left:
        return []
    runs: list[list[int]] = []
    for _, rest in sorted(finds.rest.items()):
        if runs and rest and runs[-1][1] == rest[0][0] - 1:  # a run that goes on into the next section
            runs[-1][1] = rest[0][1]
            rest = rest[1:]
        runs += rest
    most = 6
    spans = ", ".join(f"{a}–{b}" if b > a else f"{a}" for a, b in runs[:most])
    more = f" and {len(runs) - most} more range(s)" if len(runs) > most else ""
    return [f"line(s) {spans}{more}: other sections of the bug report, skipped ({finds.left} line(s))"]
