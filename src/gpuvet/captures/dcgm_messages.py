"""DCGM's failure messages read by their words (issue 46): each DCGM_FR_* format of knowledge/dcgm_errors.yaml
as a pattern, matched with every blank out of both (dcgmi wraps its table's cells at 45 characters, mid-word:
'… ECC error' / '(s) in GPU 3. Drain …'), so a message reads the same in the table, the -j JSON, a health
report, a log line or a poster's sentence. A message is its code, the GPU (or NVSwitch) it names and the cause
the code is; a code a JSON's ``error_id`` or a relay's ``DCGM_FR_`` name gives is read from its number or name."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from gpuvet.knowledge.dcgm_errors import GENERIC, DcgmCode, by_id, dcgm_codes

# a printf conversion of DCGM's formats (%u, %ld, %lld, %.1f, %.2e, %#lx, %s, %zu, %hu, %%)
_ARG = re.compile(r"%([-+ #0]*\d*(?:\.\d+)?(?:hh|h|ll|l|z)?)([diouxXfeEsc%])")
# A field's digits are bounded (a 64-bit value prints in at most 20, 16 in hex): with blanks squeezed out,
# '%d %d' is two unbounded digit runs side by side, and a long run of digits in a line (a hex dump, a
# hostile token) cost every pattern a cubic search (30 s on one 9-line log with a 400-digit token).
_NUMBER = r"(?:-?\d{1,20})"
_FLOAT = r"(?:[-+]?(?:\d{1,20}\.?\d{0,20}|\.\d{1,20})(?:[eE][-+]?\d{1,4})?|nan|inf)"
_HEX = r"(?:0[xX][0-9a-fA-F]{1,16}|[0-9a-fA-F]{1,16})"
_BLANKS = re.compile(r"\s+")
_GPU = re.compile(r"GPU:?(\d{1,4})(?!\d)", re.I)
_SWITCH = re.compile(r"NvSwitch(?:physicalID)?(\d{1,4})(?!\d)", re.I)
_XID = re.compile(r"XID(\d{1,3})(?!\d)", re.I)
BARE_LITERAL = 17  # characters of a format's own words (blanks out) it needs to be read alone, outside DCGM's output
_MAX_TEXT = 4096  # characters of a message read (DCGM caps a message at 1024; a joined detail holds a few)


@dataclass(frozen=True)
class DcgmMessage:
    """One DCGM failure message: its code, what it is about and the cause it is (GENERIC, XID or None as the
    catalogue says; ``cause`` has the fields' choice applied)."""

    code: str
    id: int
    severity: str  # DCGM's
    cause: str | None
    gpu: int | None  # the GPU the message names first (DCGM's GPU id)
    switch: int | None = None  # the NVSwitch it names, where no GPU
    xid: int | None = None
    words: str = ""  # the message as matched (blanks out)
    judged: bool = False  # a finding wherever it is read (its own cause, or a hardware fault DCGM names generically)

    @property
    def entity(self) -> str | None:
        """DCGM's entity: 'GPU n', 'NvSwitch n', or None where the message names neither."""
        return f"GPU {self.gpu}" if self.gpu is not None else f"NvSwitch {self.switch}" if self.switch is not None \
            else None


@dataclass(frozen=True)
class _Pattern:
    code: DcgmCode
    format: str  # as dcgm_errors.h writes it
    pattern: re.Pattern[str]
    literal: int  # characters of the format's own words (blanks out)
    strings: int  # its %s conversions


def _conversion(m: re.Match[str]) -> str:
    kind = m.group(2)
    if kind == "%":
        return "%"
    if kind == "s" or kind == "c":
        return "(?:.+?)"
    if kind in "xX":
        return _HEX
    return _FLOAT if kind in "feE" else _NUMBER


def _regex(fmt: str) -> tuple[str, int]:
    """The format as a pattern over text with its blanks out, and the count of its own characters."""
    out, literal, at = [], 0, 0
    for m in _ARG.finditer(fmt):
        words = _BLANKS.sub("", fmt[at:m.start()])
        out += [re.escape(words), _conversion(m)]
        literal += len(words)
        at = m.end()
    words = _BLANKS.sub("", fmt[at:]).rstrip(".")
    return "".join([*out, re.escape(words)]), literal + len(words)


@cache
def _patterns() -> tuple[_Pattern, ...]:
    """Every format's pattern, the most specific first (more of its own words): a format that opens another's
    ('Detected %ld %s for GPU %u' opens '… which is above the threshold %ld') is tried after it."""
    found: list[_Pattern] = []
    for code in dcgm_codes().values():
        if code.shares:
            continue  # a code printing another's format (SBE/DBE/PCIe replay violations): that one's fields decide
        for fmt in code.formats:
            regex, literal = _regex(fmt)
            if literal:
                found.append(_Pattern(code, fmt, re.compile(regex, re.I), literal, fmt.count("%s")))
    return tuple(sorted(found, key=lambda p: -p.literal))


def squeezed(text: str) -> str:
    """The text with every blank out, as the patterns read it."""
    return _BLANKS.sub("", text[:_MAX_TEXT])


_FIELD_REACH = 600  # characters from a message's start its fields are looked for in (a trailing %s's detail)


def _message(code: DcgmCode, words: str, reach: str = "") -> DcgmMessage:
    """The message of ``code`` matched as ``words``; ``reach``: the text from its start on, where the field a
    shared format names is looked for (a trailing %s, such as a clocks event's reason, is matched short)."""
    gpu = _GPU.search(words)
    switch = None if gpu else _SWITCH.search(words)
    xid = code.xid if code.xid is not None else (int(x.group(1)) if (x := _XID.search(words)) else None)
    lowered = (reach or words)[:_FIELD_REACH].lower()
    cause = next((c for w, c in code.fields if w in lowered), code.cause)
    judged = cause not in (None, GENERIC) or (cause == GENERIC and code.category.startswith("HARDWARE"))
    return DcgmMessage(code.name, code.id, code.severity, cause, int(gpu.group(1)) if gpu else None,
                       int(switch.group(1)) if switch else None, xid, words, judged)


def read_all(text: str, bare: bool = False) -> list[DcgmMessage]:
    """Every DCGM message in the text, in order, none overlapping. ``bare``: the text is no DCGM output (a log
    line of another program, a poster's sentence): only formats with BARE_LITERAL of their own words and at most
    one %s, whose code is judged wherever it is read (DcgmCode.judged), are read there."""
    flat = squeezed(text)
    out: list[tuple[int, DcgmMessage]] = []
    taken: list[tuple[int, int]] = []
    if len(flat) < 8:
        return []
    for p in _patterns():
        if bare and (p.literal < BARE_LITERAL or p.strings > 1 or not p.code.judged):
            continue
        for m in p.pattern.finditer(flat):
            if not any(m.start() < end and start < m.end() for start, end in taken):
                taken.append((m.start(), m.end()))
                out.append((m.start(), _message(p.code, m.group(0), flat[m.start():])))
    return [msg for _, msg in sorted(out, key=lambda x: x[0])]


def read(text: str, bare: bool = False) -> DcgmMessage | None:
    """The first DCGM message in the text (read_all's first)."""
    found = read_all(text, bare)
    return found[0] if found else None


def of_code(code: str | int, text: str = "") -> DcgmMessage | None:
    """The message of a code given by its name ('DCGM_FR_NVLINK_DOWN') or number (-j's ``error_id``), its text
    read for the GPU, the Xid and the field that decide; None for a code the catalogue does not hold."""
    known = dcgm_codes().get(code) if isinstance(code, str) else by_id().get(code)
    if known is None:
        return None
    flat = squeezed(text)
    said = read(text)
    return _message(known, said.words if said is not None and said.code == known.name else flat, flat)
