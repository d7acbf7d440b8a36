"""Issue 46 (GEN1): a line no reader claimed that reports a failure in a GPU, accelerator, NIC, driver or collective
library's words is a lead, never "clear". Blind batches lost rows where the one failure line was in a form no rule
reads ('[powerplay] Failed to send message', 'peer access is not supported' among unread lines): each such line was
fixed by its own rule, and the next unknown one read clear again. This is the class: the lines a capture leaves
unread (or a whole file read as a text gpuvet has no reader for) are searched for failure words beside a GPU or NIC
context on the same line, and each one found becomes a tool-failure line of the cause CAUSE (knowledge/faults.yaml,
warn: gpuvet has no rule for the line), which doctor/tool_leads.py says only where no warn or critical finding
already covers the module or file. Never critical: gpuvet does not know what the line means.

A failed firmware lookup is a lead only where no later line says that image loaded (GEN1b): FreeBSD's firmware(9)
prints 'could not load firmware image, error 2' for each name linuxkpi tries, then loads it under another ('/' and
'.' made '_'); Linux's 'Direct firmware load for X failed with error -2' goes on to the fallback loader. A lead naming
no module goes on the one GPU bus id the text names, if it names one. A GPU driver's kernel lines no reader read
(captures/fallback.py) are read by kernel_leads: their error lines, less those a healthy boot prints (BENIGN).

Only lines holding a failure word are looked at (TextLines.holding on a long text: no pass over its other lines), at
most _CAP of them; a bug report's other sections are not searched (its kernel log is the kernel reader's, whose
unknown driver lines have their own lead, kernel_unknown.py).

RF1 (review of GEN1): a GPU index is read only as the tools print it ('GPU 3', 'GPU[3]'), never from a host named
gpu018 (srun's 'gpu018: task 9'); a command the poster typed (after a shell's prompt, or piped into grep) is their
search, no report; a success word or a zero clears a line only where no failure stays standing in it ('errors: 0
correctable, 5 uncorrectable', 'link lost, not recovered' are leads); and a kernel line of a driver whose other lines
a reader of the capture claimed (the habanalabs reader's) is that reader's fact, never a second verdict."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Protocol

from gpuvet.captures import gpu_software, kernel_unknown, stack_benign
from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.lines import TextLines
from gpuvet.captures.text import Line
from gpuvet.captures.tool_failures import ToolFailure, ToolFailures

CAUSE = "unread_failure_line"
TOOL = "a line no reader claimed"
_CAP = 2000  # candidate lines tested at most
_KEPT = 40  # leads kept at most (doctor quotes three per module)
_HEAD = 600  # characters of a line searched
# the words a failure is said in (lower-cased line); each literal is found by str.find before the pattern runs
WORDS = ("fail", "error", "fault", "timeout", "timed out", "time out", "lost", "hang", "hung", "unrecoverable",
         "uncorrectable", "corrupt", "not responding", "unable to", "cannot", "can't", "couldn't", "could not",
         "abort", "panic")
# the same words as literals a long text is searched for (str.find is cased): each word's part that every casing
# a tool prints shares ('rror' for error, Error; 'nable to' for unable to, Unable to), the capitals apart
_CASED = ("fail", "Fail", "FAIL", "rror", "ERROR", "ault", "AULT", "imeout", "imed out", "ime out", "TIMEOUT", "lost",
          "Lost", "LOST", "hang", "Hang", "HANG", "hung", "Hung", "HUNG", "ncorrectable", "nrecoverable",
          "NCORRECTABLE", "NRECOVERABLE", "orrupt", "ORRUPT", "ot responding", "nable to", "NABLE TO", "annot",
          "ANNOT", "an't", "ouldn't", "ould not", "bort", "BORT", "anic", "ANIC")
_FAILURE = lazy(r"(?<![\w-])(?:fail(?:ed|s|ure|ures|ing)?|errors?|faults?|faulted|timeout|timed out|time ?out|"
                r"lost|hangs?|hang(?:ed|ing)|hung|unrecoverable|uncorrectable|corrupt(?:ed|ion)?|"
                r"not responding|unable to|cannot|can't|couldn't|could not|abort(?:ed|ing)?|panic)(?![\w-])")
# the line's words say success ('passed', 'recovered'): the whole line's, unless negated ('not recovered') or a
# failure is counted in it ('5 uncorrectable')
_SUCCESS = lazy(r"\bpass(?:ed)?\b|\brecovered\b|\bsucceeded\b|\bnon-fatal\b|\bharmless\b|\bbenign\b|"
                r"\bwork(?:s|ing)? (?:correctly|fine|well|normally)\b|"
                r"\bsuccess(?:ful(?:ly)?)?\b|\bresolved\b|\bfixed\b|\bok\b")
_NEGATED = lazy(r"(?:\bnot|\bnever|n't|\bno longer)\s+(?:\w+\s+)?$")  # before a success word: none
# issue 46 (FX68A): a value meaning unknown or not given ('Single Bit ECC Errors | Not Specified' in dcgmi stats, 'N/A',
# 'Unknown', 'Not Available'): the tool has no reading, never a failure counted
_UNKNOWN = (r"n/?a|unknown|unavailable|not (?:specified|supported|available|applicable|set|given|reported|found|"
            r"collected|enabled|active)|\[?(?:n/a|not supported|unknown)\]?")
# a counter or flag reads none ('no errors', 'error: 0', 'Failure Occurred : No'): its own clause's only; a value
# meaning unknown only as a table's cell ('| Double Bit ECC Errors | Not Specified |') or a counter row's value
# ('Single Bit ECC Errors : Not Specified'), never after a failure clause ('Failed to get device handle for GPU
# 0000:3B:00.0: Not Found', 'health check failed: unavailable': REV68a)
_NONE = lazy(r"(?<![\w-])(?:no|zero|0|without)\s+(?:\w+\s+){0,2}(?:errors?|failures?|faults?|timeouts?)\b|"
             r"\b(?:errors?|failures?|faults?|failed)\s*[:=]\s*(?:0|none|no)\b|"
             r"[:=|]\s*(?:0|0\.0+|no|none|false|n/a|disabled?|pass|ok|-)\s*\|?\s*$|"
             r"\|\s*(?:" + _UNKNOWN + r")\s*\|?\s*$|"
             r"^(?![^:=]{0,200}\b(?:fail\w*|unable|cannot|can't|could not)\b)[^:=|]{0,80}\b(?:errors?|ecc|xids?)\s*"
             r"(?:\([^)]{0,40}\))?\s*[:=]\s*(?:" + _UNKNOWN + r")\s*$")
# a failure counted (a count before a failure word, or a failure word's non-zero value), never a GPU's index
_COUNTED = lazy(r"(?<![\w:.\[-])(?<!gpu )(?<!device )(?<!rank )0*[1-9]\d*\s+(?:[a-z-]+\s+)?"
                r"(?:errors?|failures?|faults?|timeouts?|uncorrectable|unrecoverable|corrupt\w*|lost)\b|"
                r"\b(?:errors?|failures?|faults?|timeouts?|uncorrectable|unrecoverable)\s*[:=]\s*0*[1-9]")
_CLAUSES = lazy(r"[,;]\s")  # a line's clauses ('errors: 0 correctable, 5 uncorrectable')
# a command line the poster typed (after a shell's prompt: '$ ', '# ', 'user@host:~$ ', '[user@host dir]# ',
# PowerShell's 'PS C:\\> '), or a pipe into grep: the words they searched for, never a failure report
_SHELL = (r"^\s*[$#%]\s|^\s*[\w.-]+@[\w.-]+(?::[^\s$#]*)?\s?[$#%]\s|^\s*\[[\w.-]+@[^\]]{1,80}\][$#]\s|"
          r"^\s*PS [^>]{1,80}>\s|\|\s*[ef]?grep\b")
# R11C: an issue's title as its tracker's template prints it ('[Issue]: gfx1201 … (GPU page fault) on … #7992',
# '[Bug]: …'): the poster's words naming their question, never a tool's line
_TITLE = r"^\W{0,4}\[(?:issue|bug|feature(?: request)?|question|rfc|help)\]:?\s|"
# a line whose failure is no fault of the hardware or its software stack: a feature not there or a reading a tool
# can't show (as 'N/A' says), a deprecated option, a package manager, a container pull, pip, a shell's typo or a
# shell utility's missing file, a line the tool graded a warning itself, a step of a retry ('trying …', '… either'),
# a heading announcing a list (its items say what failed), a parenthesised aside, a question or a code's branch
_NOT_FAULT = lazy(r"not supported|unsupported|\bn/a\b|deprecat|\b(?:apt|apt-get|yum|dnf|pip3?|conda|"
                  r"docker pull|npm|brew)\b|^\s*(?:bash|sh|zsh|-bash):|command not found|\?\s*$|"
                  r"unable to (?:display|get|read|show|query|retrieve)\b|^\s*(?:ls|cat|grep|find|cp|mv|rm|cd|"
                  r"head|tail|stat|tee):|no such file or directory|^\W*(?:warn(?:ing)?|W\d{4})\b|"
                  r"\beither\W*$|\bretry(?:ing)?\b|\btrying\b|\bfall(?:ing)? ?back\b|:\s*$|^\s*\(.*\)\s*$|"
                  r"^\s*(?:if|elif|else|except|raise|assert|def|return|catch|throw|#|//)\b|on_error|"
                  r"errors?[_ ]?(?:handling|handler|code[sd]?|rates?|correct(?:ion|ing)|checking|log|counts?|counters?|"
                  r"stat(?:istic)?s|totals?)\b|"
                  r"\bignor(?:e|ed|ing)\b|\bdetects? and corrects? [^.]{0,40}\berrors\b|"  # R12B: ECC's
                  r"^\W{0,4}(?:no|non)[- ]ecc\b|" + _TITLE + _SHELL, re.I)  # R9B: memory said to be
# without ECC ('No ECC -- all memory errors are silent'): a fact of the host (captures/host_ras.py), no failure
# the line is about a GPU, accelerator, NIC, driver or collective library (its own words or a PCI bus id)
_CONTEXT = lazy(r"(?<![\w-])(?:gpus?|gpu\[\d+\]|cuda\w*|cu[A-Z]\w+|nccl\w*|rccl\w*|hccl\w*|nvml\w*|nvrm|"
                r"nvidia[\w-]*|amdgpu|radeon|rocm\w*|hip\w*|hsa\w*|xgmi|nvlink\w*|nvswitch\w*|npu\w*|ascend\w*|"
                r"xpu\w*|gaudi\w*|habanalabs|mlx\d\w*|hca|infiniband|rdma\w*|ibv_\w+|roce\w*|ecc|vram|hbm\d?e?|"
                r"dcgm\w*|nv-hostengine|fabric ?manager|xid|accelerator|drm|i915|nouveau|powerplay|smu|"
                r"psp|gsp|device \d+|cuda:\d+|gfx\d{3,4})(?![\w-])|"
                r"(?<![\w:])[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7](?!\w)")
# a poster's quote of a message (in quotes or backticks: the quoted-report rules', read_quoted) or a program's code
# (a source file's line, an assignment): words about a failure, never a tool's report of one
QUOTED_OR_CODE = lazy(r"[\"“”`]|'[^']{12,}'|\.(?:py|cu|cc|cpp|c|h):\d+|^\s*[\w.]+\s*=\s")
# a poster's narration (issue 46, AX2: 'but if i try to run xpumd directly, … you can find some warnings & errors'):
# the first person doing or seeing ('I tried', 'i get', 'we see', 'my GPU'), or the reader told where to look ('you can
# find', "you'll see"): their account of a tool's output, never the tool's line. 'I' is a word before another
# (never glog's 'I0205', '[I]' or TensorFlow's 'I tensorflow/…'), and never a loop's 'i in'
NARRATED = lazy(r"(?:^|(?<=[\s,;(]))[Ii](?:'m|'ve|'d|'ll)?\s+(?!in\b|=)[a-z]{2,}\b(?![/_.:(=\]-])|"
                r"\b(?i:(?:my|our)\s+(?:\w+\s+)?(?:gpus?|cards?|nodes?|machines?|servers?|systems?|clusters?|setup|box|"
                r"rig|devices?|computer|pc|workstation))\b|"
                r"\b(?i:you)(?:'ll|\s+can|\s+could|\s+will|\s+may|\s+might)?\s+(?:see|find|notice|get)\b|"
                r"\b(?i:we)\s+(?:get|got|see|saw|are seeing|have|had|tried|found|observed|noticed|encounter(?:ed)?|run|"
                r"ran|hit|keep getting)\b")
_BUS = lazy(r"(?<![0-9A-Fa-f:])([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])(?!\w)")
# a GPU's index as the tools print it ('GPU 3', 'GPU[3]', 'GPU 3:'), never a host named gpu018 ('gpu018: task 9')
_INDEX = lazy(r"(?<![\w-])(?:GPU(?:\s|\s?\[)(\d{1,3})\]?(?![:.]?\w)|cuda:(\d{1,3})\b|device\s(\d{1,3})\b)", re.I)


class _Capture(Protocol):
    """What of() reads of a capture (formats.FileCapture; not imported here: formats imports this)."""

    kinds: list[str]
    bug_report: bool
    tool_failures: ToolFailures


def of(fc: _Capture, lines: list[Line], claimed: set[int]) -> list[ToolFailure]:
    """The leads of a read capture: its failure lines no reader claimed (every line of a file read as a text no
    reader reads), less those a GPU tool's verdict quotes. None in a bug report (its other sections are no GPU
    tool's output) or a kernel log (its lines are the kernel reader's: a GPU driver's unknown error lines have their
    own lead, kernel_unknown.py; the other lines are no GPU's), nor a kernel line of a driver a reader read."""
    from gpuvet.captures import gpu_mentions, gpu_text

    if fc.bug_report or any(kind.startswith("kernel") for kind in fc.kinds):
        return []
    unread = {gpu_mentions.KIND, gpu_software.KIND, gpu_text.KIND, "GPU tools' failures"}
    skip = {f.line for f in fc.tool_failures.found}
    if set(fc.kinds) <= unread:
        return leads(lines, skip)
    return [f for f in leads(lines, skip | claimed) if not _driver_read(f.text, lines, claimed)]


# a kernel log's line (a dmesg stamp, a journal's 'kernel:'), the driver that printed it ('habanalabs hl2: …')
_KERNEL_LINE = lazy(r"^\s*(?:<\d>)?\[(?:\s*\d+\.\d+|[A-Z][a-z]{2} [^\]]{8,30})\]\s*(?P<a>[\w-]+)[ :]|"
                    r"\bkernel:\s*(?:\[\s*\d+\.\d+\]\s*)?(?P<b>[\w-]+)[ :]")


def _driver(text: str) -> str | None:
    """The driver a kernel log's line names first, None for another line."""
    m = _KERNEL_LINE.search(text[:_HEAD])
    return None if m is None else m.group(m.lastgroup or "a")


def _driver_read(text: str, lines: list[Line], claimed: set[int]) -> bool:
    """A kernel log's line of a driver whose other lines in this capture a reader claimed (the habanalabs reader's
    'hl2' lines, a cut one naming the bus id): that reader's to judge, one fact one verdict, never a second lead."""
    name = _driver(text)
    return name is not None and any(ln.no in claimed and _driver(ln.text) == name for ln in _holding(lines, (name,)))


def leads(lines: list[Line], skip: set[int]) -> list[ToolFailure]:
    """The failure lines among ``lines`` whose numbers are not in ``skip`` (the lines a reader claimed or already
    quoted), each on the module it names ('GPU N', a bus id), else the one GPU the text names, or the node (None);
    a firmware lookup a later line says loaded is none."""
    out: list[ToolFailure] = []
    for ln in _candidates(lines):
        if ln.no in skip or ln.elision:
            continue
        text = ln.text[:_HEAD].strip()
        if (lead := _lead(ln.no, text)) is not None:
            out.append(lead)
            if len(out) >= _KEPT:
                break
    out = _not_loaded_later(out, lines)
    return _placed(out, _one_gpu(lines)) if any(f.module is None for f in out) else out


def kernel_leads(lines: list[Line], bus: str | None, every: list[Line]) -> list[ToolFailure]:
    """A GPU driver's kernel lines no reader read (captures/fallback.py): those at error level (a failure word, the
    kernel's error marks), less a success, a counter read as none, a line a healthy boot prints (BENIGN) or a
    firmware lookup a later line of ``every`` (the excerpt's) says loaded, each on the bus id it names, else ``bus``
    (the one its driver's lines name, if one)."""
    out: list[ToolFailure] = []
    for ln in lines[:_CAP]:
        text = ln.text[:_HEAD].strip()
        low = text.lower()
        if not (_FAILURE.search(low) or _KERNEL_ERROR.search(text)) or _success(low) or \
                kernel_unknown.benign(text) is not None:
            continue
        b = _BUS.search(text)
        out.append(ToolFailure(TOOL, b.group(1).lower() if b is not None else bus, ln.no, text, CAUSE))
    return _not_loaded_later(out, every)[:_KEPT]


# the kernel's own marks of an error line: DRM's '*ERROR*', a driver's '[ERROR]' or 'ERROR:', printk's level 0-3, BUG:
_KERNEL_ERROR = lazy(r"(?i:\blockup\b)|\*ERROR\*|\[ERROR\]|\bERROR:|^\s*<[0-3]>|\bBUG:|"
                     r"\bFirmware file not found\b")  # R11C: hailo_pci's: the accelerator's firmware never loaded
# a firmware lookup that failed, the image it names: FreeBSD firmware(9)'s and linuxkpi's, Linux request_firmware's
_FW_FAILED = lazy(r"(?P<a>[\w./-]+): could not load firmware image, error \d+|could not load firmware image "
                  r"'(?P<b>[^']+)'|Direct firmware load for (?P<c>\S+) failed with error -?\d+|"
                  r"firmware: failed to load (?P<d>\S+) \(-?\d+\)")
_LOADED = ("loaded", "Loaded", "LOADED", "loading")  # the words of a line saying an image loaded
_SAID_LOADED = lazy(r"(?i)\bloaded\b|\bfinished loading\b")
_SEPARATORS = lazy(r"[/.-]")  # linuxkpi's other names for an image: '/', '.' (and '-') made '_'


def _not_loaded_later(found: list[ToolFailure], lines: list[Line]) -> list[ToolFailure]:
    """``found`` less the failed firmware lookups whose image a later line says loaded (under any of its names)."""
    images = {f.line: m.group(m.lastgroup or "a") for f in found if (m := _FW_FAILED.search(f.text)) is not None}
    if not images:
        return found
    loaded = [(ln.no, _SEPARATORS.sub("_", ln.text[:_HEAD])) for ln in _holding(lines, _LOADED)
              if _SAID_LOADED.search(ln.text[:_HEAD]) and not _FAILURE.search(ln.text[:_HEAD].lower())]
    return [f for f in found if f.line not in images or not any(
        no > f.line and re.search(r"(?<![\w])" + re.escape(_SEPARATORS.sub("_", images[f.line])) + r"(?![\w])", text)
        for no, text in loaded)]


def _holding(lines: list[Line], words: tuple[str, ...]) -> list[Line]:
    """The lines holding one of ``words`` (found by str.find on a long text), at most _CAP."""
    if isinstance(lines, TextLines) and (at := lines.holding(list(words))) is not None:
        return [lines[i] for i in at[:_CAP]]
    return [ln for ln in lines[:_CAP * 8] if any(w in ln.text[:_HEAD] for w in words)][:_CAP]


# a line about a GPU (its driver's, a runtime's or tool's words), not a NIC's, a disk's or another device's
_GPU_LINE = lazy(r"(?i)(?<![\w-])(?:gpus?\d*|cuda\w*|nvidia[\w-]*|nvrm|amdgpu|radeon|rocm\w*|i915|xe|"
                 r"nouveau|habanalabs|gaudi\w*|npu\w*|ascend\w*|xpu\w*|accelerator|drm|vga|3d controller)(?![\w-])")
_NOT_GPU = lazy(r"(?i)mlx\d|mellanox|connectx|infiniband|ethernet|nvme|xhci|usb|snd_|audio")


def _one_gpu(lines: list[Line]) -> str | None:
    """The one bus id the text's GPU lines name (a line naming a GPU thing and no NIC or other device), or None
    where they name none or two or more."""
    buses = {b.lower() for ln in _holding(lines, (":",)) if _GPU_LINE.search(ln.text[:_HEAD])
             and not _NOT_GPU.search(ln.text[:_HEAD]) for b in _BUS.findall(ln.text[:_HEAD])}
    return buses.pop() if len(buses) == 1 else None


def _placed(found: list[ToolFailure], bus: str | None) -> list[ToolFailure]:
    """The leads naming no module placed on ``bus`` (the one GPU the text names), where there is one."""
    if bus is None:
        return found
    return [replace(f, module=bus) if f.module is None else f for f in found]


def _candidates(lines: list[Line]) -> list[Line]:
    """The lines holding a failure word in some casing (found by str.find on a long text), at most _CAP."""
    if isinstance(lines, TextLines) and (at := lines.holding(list(_CASED))) is not None:
        return [lines[i] for i in at[:_CAP]]
    picked: list[Line] = []
    for ln in lines:
        low = ln.text[:_HEAD].lower()
        if any(w in low for w in WORDS):
            picked.append(ln)
            if len(picked) >= _CAP:
                break
    return picked


# a device's own kernel line with its stamp cut ('nvidia-gpu 0000:0a:00.3: …', 'ucsi_ccg 0-0008: …', dev_printk's)
_DEVICE_LINE = lazy(r"^\s*[\w-]+ (?:[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]|\d+-[0-9a-fA-F]{4}): |"
                    # R7B: DRM's own tag ('[drm:drm_atomic_helper_wait_for_flip_done [drm_kms_helper]] *ERROR*',
                    # FreeBSD drm's '[drm:0xffffffff82a5c1e0] _ERROR_'): a graphics driver's line, its display ones benign
                    r"^\s*(?:\[[^\]]{1,40}\]\s*)?\[drm(?::[\w.]+(?: \[\w+\])?)?\]")


# R13D: /dev/kmsg's record prefix ('6,3973,227996630,-;') or dmesg -x's facility and level ('kern  :err   : <time> ')
# before a device's line: the same line
_RECORD = lazy(r"^\s*(?:\d{1,3},\d+,\d+,[-c+][^;]{0,40};|[a-z]{2,8}\s*:\s*[a-z]{3,7}\s*:\s*\S+\s+)")


def _lead(no: int, text: str) -> ToolFailure | None:
    """The line as a lead, or None where it says no failure, a failure of no GPU's or NIC's, or a success; a kernel
    line a healthy boot prints (kernel_unknown.BENIGN) is none wherever it is read (R6B: one verdict)."""
    low = text.lower()
    m = _FAILURE.search(low)
    if m is None or _success(low) or _NOT_FAULT.search(text) or not _CONTEXT.search(low) or \
            gpu_software.SENTENCE.match(text) or QUOTED_OR_CODE.search(text) or NARRATED.search(text) or \
            stack_benign.benign(text) is not None:  # R12C: the NVIDIA stack's benign lines (peermem, dcgmi help)
        return None
    if (_driver(text) is not None or _DEVICE_LINE.match(_RECORD.sub("", text, 1))) and kernel_unknown.benign(text):
        return None
    return ToolFailure(TOOL, _module(text), no, text, CAUSE)


def _success(low: str) -> bool:
    """The (lower-cased) line says its failure is none: a success word no 'not' negates, in a line counting no
    failure; or a counter or flag reading none in every clause that holds a failure word."""
    said = [m for m in _SUCCESS.finditer(low) if not _NEGATED.search(low[max(0, m.start() - 24):m.start()])]
    if said and not _COUNTED.search(low):
        return True
    failing = [c for c in _CLAUSES.split(low) if _FAILURE.search(c)] or [low]  # a kernel mark's line: the whole
    return all(_NONE.search(c) and not _COUNTED.search(c) for c in failing)


def _module(text: str) -> str | None:
    """The module the line names: its bus id (lower case), else 'GPU N' (GPU N, GPU[N], cuda:N, device N)."""
    if (b := _BUS.search(text)) is not None:
        return b.group(1).lower()
    if (g := _INDEX.search(text)) is not None:
        return f"GPU {int(next(x for x in g.groups() if x is not None))}"
    return None
