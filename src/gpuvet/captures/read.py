"""One captured file, whatever it holds: each format of FORMATS (captures/formats.py, the one list)
claims the lines it understood, in the list's order, the kinds found are named, and the lines
nobody claimed are reported (never silently dropped). This module reads and walks; it names no
parser.

A file may be gzip-compressed (nvidia-bug-report.log.gz); the bounds on what is read are in
read_text and docs/limits.md.
"""

from __future__ import annotations

import codecs
import os
import re
import stat
import sys
import time
import zlib
from collections.abc import Iterator
from dataclasses import fields, is_dataclass
from typing import BinaryIO

from gpuvet.captures.formats import (
    ALL,
    FORMATS,
    SHARED,
    Format,
    Marks,
    read_hosted,
    read_leads,
    read_quoted,
    read_unrecognised,
)
from gpuvet.captures.formats import FileCapture as FileCapture  # kept here for its callers
from gpuvet.captures.lines import TextLines
from gpuvet.captures.module_list import choose_smi, hosts_apart
from gpuvet.captures.text import MAX_LINES, Cleaned, Line, clean, ranges
from gpuvet.errors import CaptureError
from gpuvet.files import Input, open_input, unpacked

# what a refused file's fix says: a few of the tools, and where every format is listed (newcomer 56: the whole
# list, ~50 formats in one 1,800-character line, never said which line was refused or why)
GIVE_READABLE = ("give a tool's own output saved to a file (nvidia-smi -q, a kernel log with Xid lines, nccl-tests, "
                 "ibstat, amd-smi, npu-smi, …) or a sentence reporting a message your own system printed; "
                 "`gpuvet doctor --help` (--from) names the tools and docs/doctor.md's table lists every format read.")

_BUNDLE = re.compile(r"Start of NVIDIA bug report log file|nvidia-bug-report\.sh Version:")  # the bundle's header
MAX_FILE_BYTES = 256 * 2**20  # on disk (a bug report of a large node is tens of MB)
MAX_TEXT_BYTES = 128 * 2**20  # the text, after decompression: a large node's bug report is tens of MB
_KEEP_WHILE = 64 * 2**20  # a gzip's text kept as read up to here; a larger one is counted to its end, then read again
_CHUNK = 2**20
_SMALLER = "give the capture itself, or the part of it that matters."
APP_ERRORS = "application error lines"  # formats.FORMATS' name for app_errors' reader
MAX_DIGITS = 1000  # in one run of decimal digits; Python's int() refuses more than 4,300 (a ValueError mid-parse)
_ZEROS = str.maketrans("123456789", "000000000")  # every digit a 0: a long run is then one str.find


def read_text(path: str) -> str:
    """The file's text, unpacked if gzip. Bounded while it is read: a regular file only (a FIFO
    would wait for a writer, /dev/zero never ends), at most MAX_FILE_BYTES on disk, and its text
    at most MAX_TEXT_BYTES and MAX_LINES lines, counted as the bytes come (a small .gz that
    unpacks to gigabytes is refused at the bound, not after). Raises CaptureError."""
    return _read_text(path, b"")


def _read_text(path: str, lead: bytes) -> str:
    """read_text's text after ``lead`` (read's newline: the text as marks.Marks searches it, made with no copy)."""
    with _open_regular(path) as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > MAX_FILE_BYTES:
            raise CaptureError(f"{size / 2**20:,.0f} MiB is larger than any capture ({MAX_FILE_BYTES // 2**20} MiB "
                               "at most)", where=path, fix=_SMALLER)
        try:
            packed = fh.read(2) == b"\x1f\x8b"
            if not packed and size > MAX_TEXT_BYTES:
                raise CaptureError(f"{size / 2**20:,.0f} MiB of text is more than any capture holds "
                                   f"({MAX_TEXT_BYTES // 2**20} MiB at most)", where=path, fix=_SMALLER)
            fh.seek(0)
            data = _bounded(fh, path, packed, _KEEP_WHILE if packed else None, lead)  # a plain file's size is
            # known to be within MAX_TEXT_BYTES: kept as read (issue 43: a 125 MB one was read twice)
            if data is None:  # past _KEEP_WHILE yet within the bounds: read again, keeping it this time
                fh.seek(0)
                data = _bounded(fh, path, packed, None, lead)
            assert data is not None  # with no keep limit the text is always kept
            return data
        except OSError as exc:
            raise CaptureError(f"cannot read the file ({exc.strerror or exc})", where=path,
                               fix="check the path and that it is a file you can read.") from None
        except (EOFError, zlib.error) as exc:
            raise CaptureError(f"a damaged gzip file ({exc})", where=path,
                               fix="copy the .gz again, or give the unpacked .log.") from None


_CAPTURE = Input(error=CaptureError, not_file=", not a regular file: a capture is a file saved from a tool's output",
                 fix="save the output to a file first (e.g. `nvidia-smi -q > smi.txt`) and give that file.")


def _open_regular(path: str) -> BinaryIO:
    """The file opened by the one safe opener (gpuvet/files.py): a regular file, or a CaptureError
    saying what it is."""
    return open_input(path, path, _CAPTURE)


def _bounded(fh: BinaryIO, path: str, packed: bool, limit: int | None, lead: bytes = b"") -> str | None:
    """The text after ``lead``, read (and unpacked) a MiB at a time while its size and lines are counted,
    each MiB decoded as it comes (UTF-8, errors replaced, as the whole decoded at once: an incremental
    decoder carries a character cut between two MiBs to the next); CaptureError at the first bound passed.
    Kept only up to ``limit`` bytes: past it the rest is only counted, and None says that the text fits the
    bounds but must be read again to be kept (a refusal never holds more than ``limit`` bytes). The text is
    never held beside its bytes (issue 43: a 125 MB report's both were 250 MB): each MiB's text is added to
    the text in place (CPython grows a str only one name holds without copying it; under a tracer or a
    profiler it copies the text each time, so the MiBs' texts are joined once at the end instead)."""
    decode = codecs.getincrementaldecoder("utf-8")("replace").decode
    kept: str | None = lead.decode("utf-8")
    traced: list[str] | None = [] if sys.gettrace() or sys.getprofile() else None
    size = lines = 0
    for piece in (_gunzip(fh) if packed else iter(lambda: fh.read(_CHUNK), b"")):
        if not size and _binary(piece[:65536]):
            raise CaptureError("a binary file, not captured text", where=path, fix=GIVE_READABLE)
        size += len(piece)
        lines += piece.count(b"\n")
        if b"\r" in piece:  # clean() splits at a lone CR too
            lines += piece.count(b"\r") - piece.count(b"\r\n")
        if size > MAX_TEXT_BYTES:
            raise CaptureError(f"{'unpacks to' if packed else 'holds'} more than {MAX_TEXT_BYTES // 2**20} MiB of "
                               "text", where=path, fix=_SMALLER)
        if lines >= MAX_LINES:
            raise CaptureError(f"more than {MAX_LINES:,} lines{' unpacked' if packed else ''} (at most "
                               f"{MAX_LINES:,})", where=path, fix=_SMALLER)
        if kept is not None and traced is not None:
            traced.append(decode(piece))
        elif kept is not None:
            kept += decode(piece)
        if kept is not None and limit is not None and size > limit:
            kept, traced = None, None  # let it go: counted to the end, then read again
    if kept is not None:
        kept = kept + "".join(traced) + decode(b"", True) if traced else kept + decode(b"", True)
    return kept


_CONTROL = re.compile(rb"[\x01-\x08\x0e-\x1a\x1c-\x1f\x7f]")  # no text holds them (tab, line ends, ESC do)


def _binary(head: bytes) -> bool:
    """A NUL in the first 64 KiB is binary, unless it is only runs of NULs after whole text lines (a log
    file preallocated before a crash): the text outside the runs has a line first and hardly a control
    byte, and the runs are few (UTF-16's NUL every other byte is binary). text.clean drops the runs, said."""
    at = head.find(b"\x00")
    if at < 0:
        return False
    rest = head.replace(b"\x00", b"")
    scattered = head.count(b"\x00\x00") < head.count(b"\x00") // 2  # NULs mostly single: not a zero fill
    return (b"\n" not in head[:at] or not rest or scattered
            or 100 * len(_CONTROL.findall(rest)) > len(rest) or len(re.findall(rb"\x00+", head)) > 64)


def _gunzip(fh: BinaryIO) -> Iterator[bytes]:
    """A gzip file's text a MiB at a time (files.unpacked: every member, zero padding as gzip
    reads it). zlib.error for damage, EOFError for a file cut short."""
    return unpacked(fh, True, _CHUNK)


_PARSED: dict[tuple[str, int, int], FileCapture] = {}  # (path, length, hash of the text) -> its parse
_KEEP_PARSED = 8  # files a command reads: doctor's checks and its backend ask for the same few
_STATED: dict[str, tuple[tuple[int, ...], tuple[str, int, int]]] = {}  # path -> (its stat when read, _PARSED's key)
_SETTLED_NS = 2 * 10**9  # a file last changed this long before it is stat'ed: a change since shows in its stat


def read(path: str) -> FileCapture:
    """The file's parse, made once per process for the same text: doctor's own reading and the
    capture backend both ask for every --from file (issue 43: a bug report parsed twice doubled
    its time). A file whose stat is as it was when read, and was then settled, is not read again
    (issue 43: a second read of a 125 MB report held its text twice more); any other is read, so a
    file changed in between is parsed again."""
    stated = _stat(path)
    if stated is not None and (known := _STATED.get(path)) is not None and known[0] == stated:
        if (parsed := _PARSED.get(known[1])) is not None:
            return parsed
    held = [_read_text(path, b"\n")]  # given up to the parse, which lets the text go once it is cleaned
    key = (path, len(held[0]), hash(held[0]))
    parsed = _PARSED.get(key)
    if parsed is None:
        parsed = _parse(held, path, 1)
        while len(_PARSED) >= _KEEP_PARSED:
            del _PARSED[next(iter(_PARSED))]
        _PARSED[key] = parsed
    if stated is not None:
        _STATED[path] = (stated, key)  # read after its stat: a change since then changes it
    return parsed


def _stat(path: str) -> tuple[int, ...] | None:
    """What any change to the file changes: its device, inode, size, and modification and change
    times (the change time is the kernel's, never set back). None when it cannot be stat'ed (read_text
    then says why), is no regular file, or changed within _SETTLED_NS of now: a change in the same
    tick of the file system's clock might leave the stat as it was (such a file is read each time)."""
    now = time.time_ns()
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode) or max(st.st_mtime_ns, st.st_ctime_ns) > now - _SETTLED_NS:
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def parse_text(text: str, where: str) -> FileCapture:
    """Every capture in the text. Raises CaptureError when nothing in it can be read, or when
    what is there cannot be trusted (see the parsers)."""
    return _parse([text], where)


def _parse(held: list[str], where: str, lead: int = 0) -> FileCapture:
    """parse_text of the text ``held`` holds, taken out of it: the raw text is let go once its lines are
    made (issue 43: a bug report's text is as large as its lines' text, and the parsers need only the lines).
    ``lead``: 1 where the text opens with read's own newline: clean then hands it, before it makes the lines,
    to _settled, whose Marks the walk takes where the lines stayed that text's (never both held at once)."""
    text = held[0]
    _refuse_long_numbers(text, where, lead)
    bug_report = bool(_BUNDLE.search(text, lead, lead + 20000))
    del text
    early: list[Marks] = []
    cleaned = clean(held, (lambda led: _kept(early, _settled(led))) if lead else None)  # lets the text go
    if len(cleaned.lines) > MAX_LINES:
        raise CaptureError(f"{len(cleaned.lines)} lines (at most {MAX_LINES})", where=where,
                           fix="give the capture itself, or the part of it that matters.")
    fc = FileCapture(where, bug_report=bug_report)
    try:
        claimed = _walk(fc, cleaned.lines, where, early.pop() if early and cleaned.exact else None)
    except CaptureError as exc:  # a parser that knows the line, not the file: name both
        if exc.where and where not in exc.where:
            exc = CaptureError(exc.what, where=f"{where}, {exc.where}", fix=exc.fix)
            raise exc from None
        raise
    if not claimed or not fc.kinds:  # issue 46: nothing read; messages quoted in a poster's words are their report
        claimed = read_quoted(fc, cleaned.lines)
    if not claimed or not fc.kinds:  # issue 46: a known message inside a surrounding no reader knows (fallback.py)
        claimed = read_unrecognised(fc, cleaned, lambda into, lines: _walk(into, lines, where))
    if (not claimed or not fc.kinds) and fc.tool_failures.found:  # SAFE: a GPU tool's failure verdict alone
        claimed, fc.kinds = _verdict_lines(fc, cleaned.lines), ["GPU tools' failures"]
    syslog = (not claimed or not fc.kinds) and _syslog_alone(cleaned)  # R11B: a host's syslog, no reader's line in it
    if syslog:  # its lines left unclaimed: a failure among them is still a lead (read_leads)
        fc.kinds = ["host syslog (no GPU, NIC or driver line in it)"]
    if (not claimed and not syslog) or not fc.kinds:  # lines claimed under no kind (a banner, a header alone)
        if not any(ln.text.strip() for ln in cleaned.lines):  # NBF1: said as watch --replay says it
            raise CaptureError("the file is empty (no line holds anything)", where=where, fix=GIVE_READABLE)
        raise CaptureError("nothing in it is output gpuvet can read", where=where, fix=GIVE_READABLE)
    if cleaned.host_of:
        read_hosted(fc, cleaned)
    hosts_apart(fc, cleaned.lines, cleaned.host_of)  # issue 46: a paste of several machines, each listing its host's
    fc.host = None if cleaned.host_of else cleaned.host or (_uname_host(cleaned.lines) if bug_report else None) or (
        _log_host(fc))
    bundle = [f"nvidia-bug-report: read {', '.join(fc.kinds)} inside it"] if fc.bug_report else []
    fc.notes = bundle + cleaned.notes + _notes(fc) + _skipped(cleaned, claimed, fc.bug_report)
    errors = len(fc.app_errors.errors)
    read_leads(fc, cleaned.lines, claimed)  # GEN1: a failure line no reader claimed is a lead, never clear
    if len(fc.app_errors.errors) > errors and APP_ERRORS not in fc.kinds:  # a container's view (IGC) read there:
        fc.kinds.append(APP_ERRORS)  # its errors are application error lines, and the file is said to hold them
    return fc


_SYSLOG_NOTE = re.compile(r"(\d+) line\(s\) carried the syslog/journalctl launcher prefix")
# systemd's own unit lines (src/core/job.c, unit.c: 'Started X.', 'Finished X.', 'X.service: Deactivated successfully.')
_UNIT_LINE = re.compile(
    r"(?:[\w@.:-]{1,120}\.(?:service|timer|socket|mount|scope|slice|target|path): )?(?:Deactivated successfully\."
    r"|Succeeded\.|Consumed \S.*|(?:[\w.@-]{1,32}: )?(?:[Ll]ost|Gained) carrier"
    r"|(?:Start(?:ed|ing)|Stop(?:ped|ping)|Finished|Reached target|Stopped target"
    r"|Listening on|Mounted|Created slice|Removed slice) \S.*)")  # the unit's name cut as a host tag where it was


def _syslog_alone(cleaned: Cleaned) -> bool:
    """A host's syslog or journal of systemd's unit lines alone (their stamp, host and program[pid] removed): read so,
    nothing of a GPU, a NIC or a driver in it (azhpc's clean '0 flaps' syslog), never refused; a program's own lines
    journaled are no such log (test_capture_fallback)."""
    said = next((int(m.group(1)) for note in cleaned.notes if (m := _SYSLOG_NOTE.match(note))), 0)
    body = [t for ln in cleaned.lines if (t := ln.text.strip()) and not t.startswith("#")]
    return 2 <= said and len(body) <= said and all(_UNIT_LINE.fullmatch(t) for t in body)


def _log_host(fc: FileCapture) -> str | None:
    """The one host every NCCL/RCCL line's 'host:pid:tid' prefix names: the log is that node's (issue 46, batch N);
    a log of several hosts, or one whose poster masked the names, names none."""
    return fc.nccl_log.one_host if fc.nccl_log.seen_hosts else None


def _uname_host(lines: list[Line]) -> str | None:
    """The machine nvidia-bug-report's header names: its 'uname: ' line is uname -a's, the node name second
    (doctor --from's several files: doctor/file_hosts.py)."""
    for ln in lines[:200]:
        if ln.text.startswith("uname: ") and (m := _UNAME.match(ln.text)) is not None:
            return m.group(1)
    return None


_UNAME = re.compile(r"uname: \S+ ([A-Za-z0-9][\w.-]{0,62}) ")


def _settled(text: str) -> Marks:
    """The Marks of the text clean hands over before it makes the lines: every marker _walk asks for answered
    (a poster's quote, each format's groups), then the text let go."""
    marks = Marks([], text)
    marks.has(_PROSE_QUOTE)
    marks.settle(_GROUPS)
    return marks


_GROUPS = tuple(group for fmt in FORMATS for group in fmt.groups())  # one tuple: Marks splits it once, and _walk's
# settle of the Marks _settled settled answers at once


def _kept(early: list[Marks], marks: Marks) -> Marks:
    early.append(marks)  # for the walk
    return marks  # for clean: the poster's cut marks it rules out are not searched


def _refuse_long_numbers(text: str, where: str, lead: int = 0) -> None:
    """No tool writes a number of a thousand digits; one would make int() raise mid-parse. ``lead``: the
    newline of read's own that the text opens with (not a line of the file)."""
    run, step = "0" * (MAX_DIGITS + 1), 1 << 20
    for start in range(0, len(text), step):  # a MiB at a time (overlapping by a run), not a copy of the whole text
        at = text[start:start + step + MAX_DIGITS].translate(_ZEROS).find(run)
        if at < 0:
            continue
        begin = end = start + at
        while end < len(text) and text[end] in "0123456789":
            end += 1
        line = text.count("\n", 0, begin) + text.count("\r", 0, begin) - text.count("\r\n", 0, begin) + 1 - lead
        raise CaptureError(f"line {line}: a number of {end - begin:,} digits (at most {MAX_DIGITS:,}); no tool "
                           "writes one", where=where, fix="give the tool's output as it printed it.")


# NBF1: a line opening with a poster's words ('What does', 'nvidia-smi on node 3 says': two or more words, none a
# tool's capitalised marker like NCCL, WARN or NVRM, no timestamp, prefix or label) then a quote: the tool's line
# is inside the quote, the poster's, judged by the quoted-prose rules (app_errors.reported), never by its reader;
# a quote that closes a string (a wrapped JSON line's '…al Number": ', rocm-smi's 'but got ""') or opens a whole
# pasted log line, its own prefix kept (a timestamp, NCCL's host:pid:tid), is the tool's and read as before; so are
# ibqueryerrors' node heads ('Errors for "n01 mlx5_0"') and ibnetdiscover's ('Switch 36 "S-7cfe…"', AX3); a quote
# opening a parenthesis is a tool's value (nvidia-smi's 'GPU clocks set to "(gpuClkMin 1410, …)"', AX1)
_PROSE_QUOTE = re.compile(r"\n[^\S\n]*(?:[>*-][^\S\n]+)?(?![A-Z]{4,}\b|(?:Errors|Data Counters) for |(?:Switch|Ca|Rt)\s+\d)"
                          r"[A-Za-z][\w'’-]*"
                          r"(?:,?[^\S\n]+(?![A-Z]{4,}\b)[\w'’-]+){1,12}[^\S\n]*[\"“`]"
                          r"(?![\s:,\]}\[\d\"“”`(]|[\w.-]+:\d+:\d+ |[A-Z][a-z]{2} +\d{1,2} \d\d:)")


def _walk(fc: FileCapture, lines: list[Line], where: str, marks: Marks | None = None) -> set[int]:
    """Each format of FORMATS in turn, on the lines its ``lines`` says, filling its field and naming
    the kinds it found; then the module list from the table, the CSV or nccl-tests' device lines
    where no -q gave one (named where -q would be). A format whose markers the text lacks is not
    run (issue 43: it would find nothing; a bug report is mostly other tools' lines). ``marks``: the
    lines' text's, made before the lines were (_settled). The lines claimed."""
    claimed: set[int] = set()
    kept: dict[str, object] = {}
    present = Marks(lines) if marks is None else marks
    present.lines = lines  # a marker not asked before joins them
    if present.has(_PROSE_QUOTE):  # rare: a poster's sentence quoting a tool's line is read_quoted's alone
        lines = [ln for ln in lines if not _PROSE_QUOTE.match("\n" + ln.text)]
        present = Marks(lines)
    unclaimed = _Unclaimed(lines)
    present.settle(_GROUPS)  # then the joined text let go
    mode, seen, smi_at = ALL, None, 0  # seen: the lines of the format leading a SHARED run, cut when one first runs
    for fmt in FORMATS:
        if fmt.lines != SHARED:
            mode, seen = fmt.lines, None
        if not present.any(fmt.markers):
            kept.update({fmt.name: None} if fmt.field is None else {})
            continue
        if seen is None:  # nothing claimed since the run's leader came (skipped formats claim nothing)
            seen = lines if mode == ALL else unclaimed.now(claimed)
        parsed = fmt.run(seen, where, present)
        claimed |= parsed.claimed
        fc.kinds += parsed.kinds or ((fmt.name,) if parsed.found else ())
        _fill(fc, fmt, parsed.value, kept)
        smi_at = len(fc.kinds) if fmt.field == "smi" else smi_at
    if (kind := choose_smi(fc, kept, lines)) is not None:
        fc.kinds.insert(smi_at, kind)
    return claimed


def _verdict_lines(fc: FileCapture, lines: list[Line]) -> set[int]:
    """The indices of the lines holding a GPU tool's failure verdict (a file read for them alone: a few lines)."""
    at = {f.line for f in fc.tool_failures.found}
    return {i for i, ln in enumerate(lines) if ln.no in at}


class _Unclaimed:
    """The lines no format claimed yet, cut again only when a claim was added since the last cut."""

    def __init__(self, lines: list[Line]) -> None:
        self.lines, self.cut, self.at = lines, lines, 0

    def now(self, claimed: set[int]) -> list[Line]:
        if len(claimed) != self.at and isinstance(self.lines, TextLines):  # a long text's: a view of its places
            self.cut, self.at = self.lines.without(claimed), len(claimed)
        elif len(claimed) != self.at:  # claims only grow: the same count is the same set
            self.cut, self.at = [ln for ln in self.lines if ln.no not in claimed], len(claimed)
        return self.cut


def _fill(fc: FileCapture, fmt: Format, value: object | None, kept: dict[str, object]) -> None:
    """The format's field set to what it found (or what it found added beside what is there); a
    format with no field keeps its find by name for choose_smi."""
    if fmt.field is None:
        kept[fmt.name] = value
    elif value is not None and fmt.adds:
        _add(getattr(fc, fmt.field), value)
    elif value is not None:
        setattr(fc, fmt.field, value)


def _add(into: object, more: object) -> None:
    """Two parses of one record type made one: lists extended, sets joined, mappings updated."""
    assert is_dataclass(into) and not isinstance(into, type)
    for f in fields(into):
        have, extra = getattr(into, f.name), getattr(more, f.name)
        if isinstance(have, list):
            have += extra
        elif isinstance(have, set):
            have |= extra
        elif isinstance(have, dict):
            have.update(extra)


def _notes(fc: FileCapture) -> list[str]:
    """The notes of every field that has them, in FileCapture's order."""
    parts = (getattr(fc, f.name) for f in fields(fc) if f.name != "notes")
    return [note for part in parts for note in getattr(part, "notes", ())]


def _skipped(cleaned: Cleaned, claimed: set[int], bug_report: bool) -> list[str]:
    if isinstance(cleaned.lines, TextLines) and (counted := cleaned.lines.unread(claimed)) is not None:
        said, many = counted
    else:
        rest = [ln.no for ln in cleaned.lines if ln.no not in claimed and ln.text.strip() and not ln.elision]
        said, many = ranges(rest), len(rest)
    if not many:
        return []
    what = "not output gpuvet reads" if not bug_report else "other sections of the bug report"
    return [f"line(s) {said}: {what}, skipped ({many} line(s))"]
