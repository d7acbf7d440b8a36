"""Issue 46: a file no format claimed, read once more before it is refused (read, through
formats.read_unrecognised, from read.py's one hook).

Two classes of first-contact paste hold output an engineer reads at once:

- a tool's known message inside a surrounding no reader knows: a monitoring agent's or a program's log prefix
  (glog's ``E1201 10:00:01.123 4411 nvml.go:88] ``, ``ERROR 12-01 10:00:01 worker.py:88] ``), a JSON log
  envelope (``{"msg":"…"}``), a table cell. The message is found by the readers' own patterns (known() below:
  no second copy of any; the readers that search the whole line need none), what precedes it is stripped,
  and the remainders go to the same readers, so the same findings come out as from a clean log. A prefix
  that is a poster's sentence is prose (read_quoted's, never read here); a line holding only a word such as
  'error' holds no known message;
- a kernel excerpt with no GPU line (dmesg, dmesg -T, journalctl -k or syslog lines of NICs, disks, systemd):
  read as a kernel log with no GPU or driver event (GpulessKernel), which doctor judges clear. One holding a
  GPU or accelerator driver's lines no reader read (nvidia-modeset's display lines, DRM's, habanalabs', an
  out-of-tree xe's banner …) is never 'none from a GPU' (review 56), nor refused (GEN1b, issue 46: a refusal
  loses the file): the driver's lines are counted, not judged (the checks that would judge them can't tell),
  and those at error level are leads (unread_leads.kernel_leads). The lines mtgpu, nouveau, radeon and Ascend's
  devdrv print under their own prefix are kernel.py's (kernel_unknown.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cache
from typing import TYPE_CHECKING, Protocol, TypeVar

from gpuvet.captures import kernel, kernel_unknown, topo, unread_leads
from gpuvet.captures.decorations import PREFIXES
from gpuvet.captures.gpu_software import UnreadGpuText
from gpuvet.captures.kernel import KernelModule, KernelParse
from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.text import Cleaned, Line, ranges
from gpuvet.captures.tool_failures import ToolFailure, ToolFailures

if TYPE_CHECKING:
    from gpuvet.captures.aer import AerParse
    from gpuvet.captures.app_errors import AppErrorsParse
    from gpuvet.captures.ascend_errors import AscendLog
    from gpuvet.captures.nccl_log import NcclLog

HEAD = 1000  # characters of a line searched for a known message: bounded work per line, whatever its length
SHOWN = 60  # characters of a stripped surrounding quoted in the note


def _unanchored(rx: re.Pattern[str]) -> re.Pattern[str]:
    """A reader's pattern that reads a message only at the line's start, searched anywhere (its '^\\s*' off)."""
    return re.compile(r"(?<!\w)" + rx.pattern.removeprefix("^\\s*").removeprefix("^"), rx.flags)


@dataclass(frozen=True)
class Known:
    """A reader's message found inside a line: near ``word`` (a str found at C speed, or a cheap pattern; in
    the lowered line where ``lowered``), the reader's own pattern searched from ``before`` characters ahead of
    it, in a window only (bounded work). ``json``: read this way only inside a JSON string (the reader's own
    rules take a message after an open quote for a poster's quoting, which a JSON log's value is not)."""

    word: str | re.Pattern[str]
    before: int
    rx: re.Pattern[str]
    lowered: bool = False
    json: bool = False

    def start(self, head: str) -> int | None:
        """Where the message starts in ``head``, or None."""
        if isinstance(self.word, str):
            at = head.find(self.word)
        else:
            found = self.word.search(head.lower() if self.lowered else head)
            at = found.start() if found is not None else -1
        if at < 0:
            return None
        m = self.rx.search(head, max(0, at - self.before), at + WINDOW)
        if m is None or not self.json:
            return None if m is None else m.start()
        value = _JSON_OPEN.search(head, max(0, m.start() - HEAD), m.start())  # the whole string is the program's
        return value.start("value") if value is not None else None


WINDOW = 400  # characters after the word a message's pattern is searched in


@cache
def known() -> tuple[Known, ...]:
    """The readers that read their message only at a line's start (the Xid, SXid, NV_DEV_PRINTF, amdgpu, AER
    and NCCL readers search the whole line already: tests/captures/test_capture_fallback.py holds them to it),
    and the program errors inside a JSON log's string; made on a first refusal (their readers imported then)."""
    from gpuvet.captures import app_errors, ascend_errors, hccl, nccl_log

    programs = re.compile("|".join(f"(?:{rx.pattern})" for rx in app_errors.KINDS.values()), re.I)
    return (
        Known("device handle", 40, re.compile(kernel._NO_HANDLE_HEAD)),  # nvidia-smi's own answer for a lost module
        Known(re.compile(r"HCC[LP]\(\d"), 24, _unanchored(nccl_log._PLOG)),  # the plog's 'HCCL(pid,'
        Known("interface return err", 8, _unanchored(hccl._ERROR)),
        Known("(PID:", 48, _unanchored(ascend_errors._TORCH_NPU)),
        Known(re.compile(r"\(\s*E[IJ]\d{4}\s*\)"), 90, _unanchored(ascend_errors._NAMED)),  # 'Name(EI0006)'
        # inside a line only with CANN's colon ('EI0006: …'): a bare code-like token (a serial) is no message
        Known(re.compile(r"(?<!\w)E[A-Z]\d{4}:"), 0, _unanchored(ascend_errors._CODE)),
        Known(app_errors._KEYS, 120, programs, lowered=True, json=True),
    )


# a surrounding that is a poster's sentence (three or more plain words in a row): their prose, read_quoted's
_PROSE = lazy(r"\b[A-Za-z][a-z'\u2019]+(?:,? [a-z][a-z'\u2019]*){2,}\b")
# a JSON string's key and its value opened, not closed before the message
_JSON_OPEN = lazy(r"[{,]\s*\"(?P<key>[\w.@-]{1,40})\"\s*:\s*\"(?P<value>(?:[^\"\\]|\\.){0,200})$")
# review 56 (5): the keys a log envelope holds its program's message under; another key's value (a title, a
# question, a summary) is a document's text, not a program's log
_MESSAGE_KEY = lazy(r"(?i:msg|message|log|text|error|err|exception|stack(?:_?trace)?|traceback|stderr|stdout|"
                    r"output|line|event|detail|details|reason|payload|body)")
# review 56 (5): a message's own line that asks (a question word first, or a question mark last) is a poster's
_ASKED = lazy(r"^\W*(?i:what|why|how|when|where|which|who|is|are|was|were|does|do|did|can|could|should|would|"
              r"has|have|any(?:one|body| idea)|help)\b|\?\W*$")
# review 56 (6): one token of a log's own prefix, as loggers write it: a bracketed field ('[ERROR]', '[4411]',
# '[misc/check.cc:12]'), a source file:line or a log file's name ('monitor.go:88]', 'train.log:'), a host, pod
# or stamp holding a digit ('node-3', 'worker-0', glog's 'E1201'), a date, time or pid, a level or stream, a
# month or weekday, one capital (glog's level, a container log's 'F'), a table's or a logger's separators.
# Matched one token at a time (no nested repetition: linear on any prefix)
_LOG_TOKEN = lazy(r"\s*(?:\[[^\[\]\n]{0,80}\]|\([^()\n]{0,80}\)|<\d{1,3}>|[\w/-][\w./-]*\.\w{1,8}(?::\d{1,6})?\]?|"
                  r"[A-Za-z][\w.-]*\d[\w.-]*(?:\[\d{1,9}\])?|\d[\d:./,T+Z-]*|"
                  r"(?i:error|err|warn(?:ing)?|info|debug|trace|fatal|crit(?:ical)?|notice|severe|stderr|stdout)"
                  r"(?!\w)|[A-Z][a-z]{2}(?!\w)|[A-Z](?!\w)|[A-Za-z_][\w-]*\[\d{1,9}\]|[|>:,;=*#-]+)\s*")
# a token of the prefix that is a host or pod ('worker-0', 'node12.cluster'), not glog's level and date
_HOST = lazy(r"(?!(?:[IWEFD]\d{4})$)[A-Za-z][A-Za-z0-9-]*(?:\.[A-Za-z0-9-]+)*")
_CAP = 1000  # lines of a file read this way at most: a paste's few, never a log's millions
KIND = "kernel log"  # what such an excerpt is read as


@dataclass
class GpulessKernel(KernelParse):
    """A kernel excerpt whose lines no driver reader took: kernel lines read, none from a GPU, NIC-to-GPU
    or driver module (doctor's kernel checks are then clear, never 'can't tell')."""

    lines: int = 0


class _Capture(Protocol):
    """What the fallback fills of a capture (formats.FileCapture; not imported here: formats imports this)."""

    path: str
    kinds: list[str]
    kernel: KernelParse
    nccl_log: NcclLog
    ascend: AscendLog
    app_errors: AppErrorsParse
    aer: AerParse
    tool_failures: ToolFailures


Capture = TypeVar("Capture", bound=_Capture)
_OWN = ("path", "notes", "bug_report")  # a capture's own fields, never taken from the fresh one


def read(fc: Capture, cleaned: Cleaned, walk: Callable[[Capture, list[Line]], set[int]],
         fresh: Callable[[], Capture]) -> set[int]:
    """The known messages inside a surrounding no reader knows, stripped of it and read by the same readers
    (``walk``, into a ``fresh`` capture kept only if they read one of them); else a kernel excerpt with no GPU
    line, read as such. The lines read; ``fc`` filled and the way named in ``cleaned.notes``."""
    found = surrounded(cleaned.lines)
    if found is not None:
        into = fresh()
        claimed = walk(into, found.lines)
        if into.kinds and (said := found.said(claimed)) is not None:
            found.place(into)
            for name, value in vars(into).items():
                if name not in _OWN:
                    setattr(fc, name, value)
            cleaned.notes.append(said)
            return claimed
    if (typed := _hand_typed_aer(fc, cleaned, walk, fresh)) is not None:
        return typed
    if (nics := topo.nic_rows_alone(cleaned.lines)) is not None:  # topo -m's NIC rows alone: said, never refused (XR1)
        from gpuvet.captures.gpu_software import unread

        return unread(fc, cleaned, "nvidia-smi topo -m", f"{nics} (give the whole `nvidia-smi topo -m` output: its "
                      "header line and GPU rows with the NIC rows)")
    excerpt = gpuless(cleaned)
    if excerpt is None:
        return set()
    fc.kernel, fc.kinds = excerpt, [KIND]
    if isinstance(excerpt, UnreadDriverLines):
        fc.tool_failures.found += excerpt.leads
    return excerpt.claimed


# XR1: the kernel's AER words as a poster retyped them: a misspelt 'severity=' ('serverity='), a bus id's function
# after a colon ('0000:00:1c:0'); the error's name stays plain, so the lines are the kernel's, read as such
_AER_TYPO = lazy(r"(?<=PCIe Bus Error: )se[a-z]{3,7}ty=")
_AER_BUS = lazy(r"(?<![\w:])([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})[:;,]([0-7]): ")


def _hand_typed_aer(fc: Capture, cleaned: Cleaned, walk: Callable[[Capture, list[Line]], set[int]],
                    fresh: Callable[[], Capture]) -> set[int] | None:
    """Hand-typed AER lines, their typos undone and read by the AER reader (the note says so); None otherwise."""
    fixed = {ln.no: _AER_BUS.sub(r"\1.\2: ", _AER_TYPO.sub("severity=", ln.text)) for ln in cleaned.lines[:_CAP]
             if "PCIe Bus Error" in ln.text or "status/mask" in ln.text or _AER_BUS.search(ln.text)}
    changed = [ln.no for ln in cleaned.lines[:_CAP] if fixed.get(ln.no, ln.text) != ln.text]
    if not changed:
        return None
    into = fresh()
    claimed = walk(into, [Line(ln.no, fixed[ln.no]) if ln.no in fixed else ln for ln in cleaned.lines])
    if not into.kinds or not into.aer.devices:
        return None
    for name, value in vars(into).items():
        if name not in _OWN:
            setattr(fc, name, value)
    cleaned.notes.append(f"read {len(changed)} hand-typed AER line(s) as the kernel prints them (a misspelt "
                         f"'severity=' or a bus id's function after ':' taken as the kernel's; line {changed[0]})")
    return claimed


@dataclass(frozen=True)
class Surrounded:
    """The file's lines with each known message's surrounding stripped (a JSON string's lines apart), and the
    surroundings stripped, by line: what formats.read_unrecognised gives the readers. ``original``: each such
    line as the file holds it (the evidence cites it); ``hosts``: the host its surrounding named."""

    lines: list[Line]
    stripped: list[tuple[int, str]]
    original: dict[int, str]
    hosts: dict[int, str]

    def place(self, into: _Capture) -> None:
        """Review 56 (7): the library's and the program's errors read this way cite the file's own line, and
        keep the host their surrounding named where the surroundings name two or more (two pods' errors stay
        two findings; one host's output is as the clean line's)."""
        hosts = self.hosts if len(set(self.hosts.values())) > 1 else {}
        for log in (into.nccl_log, into.ascend):
            log.failures = [replace(f, at=replace(f.at, text=self.original[f.at.line][:_TEXT],
                                                  host=f.at.host or hosts.get(f.at.line)))
                            if f.at.line in self.original else f for f in log.failures]
        into.app_errors.errors = [replace(e, text=self.original[e.line][:_TEXT]) if e.line in self.original else e
                                  for e in into.app_errors.errors]

    def said(self, claimed: set[int]) -> str | None:
        """The note naming what was read this way; None where the readers read none of those lines."""
        read = [(no, prefix) for no, prefix in self.stripped if no in claimed]
        if not read:
            return None
        return (f"read {len(read)} line(s) by their known message inside an unrecognised surrounding "
                f"(e.g. line {read[0][0]}: {read[0][1][:SHOWN]!r})")


_TEXT = 400  # characters of a file's line cited as evidence (nccl_log's)
_BLOCK = 8192  # lines whose heads are searched together for the known messages' words


def surrounded(lines: list[Line]) -> Surrounded | None:
    """``lines`` with the surrounding of every known message stripped (at most _CAP of them), or None where no
    line holds a known message after a surrounding shaped like a log's. Review 56 (11): the known messages'
    words are searched once per block of lines; a line is searched only for the messages its block holds."""
    cut: dict[int, list[Line]] = {}
    stripped: list[tuple[int, str]] = []
    for first in range(0, len(lines), _BLOCK):
        block = lines[first:first + _BLOCK]
        present = _present("\n".join(ln.text[:HEAD] for ln in block))
        for i, ln in enumerate(block if present else (), first):
            if len(cut) >= _CAP:
                break
            if (got := _remainder(ln, present)) is not None:
                cut[i] = got[1]
                stripped.append((ln.no, got[0]))
    if not cut:
        return None
    hosts = {no: host for no, prefix in stripped if (host := _host_in(prefix)) is not None}
    return Surrounded([part for i, ln in enumerate(lines) for part in cut.get(i, [ln])], stripped,
                      {lines[i].no: lines[i].text.strip() for i in cut}, hosts)


def _present(heads: str) -> tuple[Known, ...]:
    """The known messages whose word the lines' heads hold (searched once over them all)."""
    lowered = heads.lower() if any(one.lowered for one in known()) else heads
    return tuple(one for one in known() if (one.word in heads if isinstance(one.word, str)
                                            else one.word.search(lowered if one.lowered else heads)))


def _remainder(ln: Line, present: tuple[Known, ...]) -> tuple[str, list[Line]] | None:
    """The surrounding stripped off the line's first known message, and the message as the line(s) a reader
    reads (a JSON string's escapes undone, its '\\n' lines apart); None where the line holds no known message
    after some surrounding, or the surrounding is prose, no log's prefix, another JSON key's value than a
    message's, or a message's line that asks (review 56: 5, 6)."""
    head = ln.text[:HEAD]
    starts = [at for one in present if (at := one.start(head)) is not None]
    at = min(starts, default=0)
    prefix = head[:at]
    if not at or not prefix.strip() or _PROSE.search(prefix):
        return None
    rest = ln.text[at:]
    if (opened := _JSON_OPEN.search(prefix)) is not None:
        rest = _json_string(rest)
        if not _MESSAGE_KEY.fullmatch(opened.group("key")) or _ASKED.search(rest.split("\n", 1)[0]):
            return None
    elif not _log_shaped(prefix):
        return None
    return prefix.strip(), [Line(ln.no, part) for part in rest.split("\n") if part.strip()]


def _log_shaped(prefix: str) -> bool:
    """The surrounding is a log's own prefix: all of it log tokens (_LOG_TOKEN), read one at a time."""
    at = 0
    while at < len(prefix):
        m = _LOG_TOKEN.match(prefix, at)
        if m is None or m.end() == at:
            return False
        at = m.end()
    return True


def _host_in(prefix: str) -> str | None:
    """The host or pod a log's prefix names (its first token shaped as one, holding a digit), or None."""
    for token in re.split(r"[\s|]+", prefix):
        token = token.strip(":,")
        if any(c.isdigit() for c in token) and _HOST.fullmatch(token):
            return token
    return None


def _json_string(rest: str) -> str:
    """The JSON string value that opens ``rest``, unescaped (its closing quote found by json itself); as it
    is where it does not parse (a cut line)."""
    try:
        value, _ = json.JSONDecoder().raw_decode('"' + rest)
    except ValueError:
        return rest
    return value if isinstance(value, str) else rest


# the kernel's own line shapes, at the line's start: dmesg's '[  12.345678] ', dmesg -T's '[Mon Dec  1 10:00:01
# 2026] ', a syslog or ISO-stamped journal line of the kernel ('Dec  1 10:00:01 host kernel: ')
_KERNEL_SHAPE = lazy(r"\s*(?:<\d>)?(?:\[\s*\d{1,10}\.\d{3,9}\]|\[[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d "
                     r"\d\d:\d\d:\d\d \d{4}\]|(?:[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d|\d{4}-\d\d-\d\d[T ]"
                     r"\d\d:\d\d:\d\d[\d.,:+Z-]{0,16}) \S{1,63} kernel: )")
_JOURNAL = next(p.label for p in PREFIXES if p.label.startswith("syslog"))
_PEELED = lazy(r"\d+ line\(s\) carried the " + re.escape(_JOURNAL) + " launcher prefix")
# the command that printed the excerpt, as the poster typed it: the kernel's log is its source
_KERNEL_SOURCE = lazy(r"^\s*(?:[\w@.:~/-]*[$#]\s*)?(?:sudo\s+)?(?:journalctl\b[^|]*\s(?:-k|--dmesg)\b|dmesg\b|"
                      r"(?:cat|grep|tail|less|zgrep)\b.*/var/log/kern\.log\b)")
# a kernel message as a journal line holds it after its prefix: a driver and its device ('mlx5_core 0000:ab:00.0
# mlx5_5: ', 'nvme nvme0: ', 'usb 1-4: '), or a subsystem ('EXT4-fs (md127p3): ', 'workqueue: ')
_KERNEL_BODY = lazy(r"(?:[a-z][\w-]{0,31} (?:[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]|"
                    r"[a-z]{1,8}\d[\w.:-]{0,20}|\d[\w.:-]{0,20})(?: [\w.-]{1,32})?|"
                    r"[a-z][\w-]{1,31}(?: \([\w.:-]{1,40}\))?|"
                    r"[A-Za-z]\w{0,15}-fs \([\w.:-]{1,40}\)): \S")
_NIC_LINK = lazy(r"\b(mlx5_\d+): Port: (\d+) Link (DOWN|INIT|ARM|ACTIVE)\b")
MIN_LINES = 2  # kernel lines an excerpt holds at least: one stamped line may be anything


def gpuless(cleaned: Cleaned) -> GpulessKernel | UnreadDriverLines | None:
    """A kernel excerpt (most of its lines the kernel's, at least MIN_LINES) that no reader took a line of, read
    as such (its kernel lines claimed, the note said); None where the file is not one. A journal's prefix was
    peeled off its lines first, the program lost with it: such lines are the kernel's where the file names the
    kernel's log as its source (`journalctl -k`, `dmesg`, kern.log) or where they read as the kernel's own.
    One holding a GPU or accelerator driver's lines no reader read is never one with no GPU line: those lines
    are counted, not judged (UnreadDriverLines)."""
    body = [ln for ln in cleaned.lines if _content(ln)]
    peeled = any(_PEELED.match(note) for note in cleaned.notes)
    from_kernel = peeled and any(_KERNEL_SOURCE.search(ln.text) for ln in cleaned.lines)
    shaped = {ln.no for ln in body if _KERNEL_SHAPE.match(ln.text) or from_kernel
              or peeled and _KERNEL_BODY.match(ln.text)}
    if len(shaped) < MIN_LINES or 2 * len(shaped) <= len(body):
        return None
    drivers = [(ln, d) for ln in body if (d := _gpu_driver(ln.text.lstrip())) is not None]
    if drivers:
        return _unread_drivers(shaped, drivers, body)
    note = f"{len(shaped)} kernel line(s), none from a GPU, NIC-to-GPU or driver module" + _nic_links(body)
    return GpulessKernel(claimed=shaped, notes=[note], lines=len(shaped))


# a GPU or accelerator driver's kernel line no reader read (NVIDIA's own modules beside NVRM, nouveau, radeon,
# amdgpu/kfd, i915/xe, habanalabs, the accel subsystem and NPUs, Hailo (hailo, hailo1x), Coral (apex, gasket),
# Jetson's nvgpu, Moore Threads' mtgpu (MUSA; it prints 'MTGPU:'),
# GPUDirect, DRM, FreeBSD drm-kmod's device 'drmn0'): its message, after the kernel's
# stamp, opens with the driver's name, or the line names DRM or a GPU driver in brackets ('[drm:…', '[nvidia_drm]');
# FreeBSD's firmware(9) names the GPU driver's image it could not load ('amdgpu/polaris11_mec.bin: could not …')
_GPU_DRIVER = lazy(r"\s*(?:(?P<driver>NVRM|nvidia[\w-]*|nv_peer_mem|gdrdrv|nouveau|radeon|amdgpu|kfd|i915|xe|"
                   r"habanalabs|accel|ivpu|intel_vpu|qaic|amdxdna|hailo1x|hailo|apex|gasket|nvgpu|drm|drmn\d{1,3}|"
                   r"ascend\w*|devdrv\w*|MTGPU|mtgpu)"
                   r"(?=[:\s\[(])|(?P<image>amdgpu|radeon|i915|xe|nvidia)[/_][\w.-]{1,80}: could not load firmware)")
_GPU_BRACKET = lazy(r"\[(?P<driver>drm|nvidia[\w-]*|amdgpu|nouveau|radeon|i915|xe|habanalabs)\b|"
                    r"(?<![\w-])(?P<nvrm>NVRM):")
# the module a driver's dev_printk prefix names: 'habanalabs 0000:29:00.0: ', 'xe 0000:00:02.0: '
_DEVICE = lazy(r"^[\w-]{1,32} ((?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]): ")


def _gpu_driver(text: str) -> str | None:
    """The GPU or accelerator driver a kernel line is from, or None."""
    shape = _KERNEL_SHAPE.match(text)
    m = _GPU_DRIVER.match(text, shape.end() if shape is not None else 0) or _GPU_BRACKET.search(text)
    return None if m is None else next(v for v in m.groupdict().values() if v is not None)


@dataclass
class UnreadDriverLines(UnreadGpuText):
    """A kernel excerpt holding a GPU or accelerator driver's lines no reader read (GEN1b, issue 46): its kernel
    lines claimed, the driver's counted (``unread``, by driver in ``drivers``) and never judged: doctor's checks
    that would judge them can't tell (gpu_software.UnreadGpuText), never 'clear'. ``leads``: its error lines."""

    drivers: dict[str, int] = field(default_factory=dict)
    leads: list[ToolFailure] = field(default_factory=list)


def _unread_drivers(shaped: set[int], drivers: list[tuple[Line, str]], body: list[Line]) -> UnreadDriverLines:
    """The excerpt read with its GPU drivers' lines counted by driver, the modules their prefixes name listed, and
    their error lines as leads (on the bus id a line names, else the one the drivers' lines name, if one)."""
    counts: dict[str, int] = {}
    modules: dict[str, KernelModule] = {}
    for ln, d in drivers:
        name = kernel_unknown.driver_of(ln.text) or d
        counts[name] = counts.get(name, 0) + 1
        if (m := _DEVICE.match(_message(ln.text))) is not None:
            key = kernel.bus(m.group(1))
            modules.setdefault(key, KernelModule(key, kernel_unknown.VENDOR.get(name, name)))
    lines = [ln for ln, _ in drivers]
    first = drivers[0][0]
    said = "; ".join(f"{n} line(s) of {d} gpuvet has no rule for: not judged" for d, n in counts.items())
    claimed = shaped | {ln.no for ln in lines}
    note = (f"{len(claimed)} kernel line(s): {said} (line(s) {ranges([ln.no for ln in lines])}, e.g. line {first.no}: "
            f"{first.text.strip()[:SHOWN]!r}); the checks that would judge them can't tell")
    leads = unread_leads.kernel_leads(lines, next(iter(modules)) if len(modules) == 1 else None, body)
    return UnreadDriverLines(claimed=claimed, notes=[note], modules=list(modules.values()),
                             unread=len(lines), source="/".join(counts) + " driver", drivers=counts, leads=leads)


def _message(text: str) -> str:
    """A kernel line's message: its stamp or journal prefix off."""
    shape = _KERNEL_SHAPE.match(text)
    return text[shape.end() if shape is not None else 0:].lstrip()


def _content(ln: Line) -> bool:
    """A line of the paste's own (not blank, not a poster's cut, '# source:' comment or shell prompt)."""
    s = ln.text.strip()
    return bool(s) and not ln.elision and not s.startswith(("#", "$ ", "```", "~~~"))


def _nic_links(body: list[Line]) -> str:
    """The NIC ports whose link state the excerpt logs, said (a NIC's link, not a GPU's: not judged here)."""
    states: dict[str, list[str]] = {}
    for ln in body:
        if "Link" in ln.text and (m := _NIC_LINK.search(ln.text)) is not None:
            states.setdefault(f"{m.group(1)} port {m.group(2)}", []).append(m.group(3))
    if not states:
        return ""
    said = "; ".join(f"{port}: {' -> '.join(s)}" for port, s in states.items())
    return f" (NIC link states logged: {said}; a NIC's link, judged by ibstat/mlxlink, not by this excerpt)"
