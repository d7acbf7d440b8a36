"""nvidia-smi's own lines about a module, besides its tables (issue 46, AX1). nvidia-smi is closed source; its words
are read as it prints them (benchmarks/data/smi_phrasebook.json names a public capture of each):

    WARNING: infoROM is corrupted at gpu 0000:00:05.0           the module's infoROM failed its check (a warning)
    Unable to determine the PCI bus id for the target device: GPU is lost
                                                                -i's target NVML could not open, by NVML's words
    The following GPUs could not be reset:                      `nvidia-smi -r`'s list: a module it could not reset
      GPU 00000000:3B:00.0: GPU is lost                         for a fault of its own (NVML's words: lost …)
    GPU 00000000:3B:00.0: GPU is lost                           any command's word that the module is lost
    GPU Reset couldn't run because GPU … is the primary GPU.    a reset refused or not supported: no fault
    Warning: persistence mode is disabled on device …           notices and a setting's answer: no fault
    Enabled MIG Mode for GPU …  /  Set compute mode to … for GPU …  /  All done.

'Unable to determine the device handle for GPU <bus>: …' is the kernel reader's (captures/kernel.py, its kind by
NVML's words: captures/smi_words.py); the reset's outcome per module ('… was successfully reset.', '…: In use by
another client') is said by captures/gpu_software.py where nothing else is read. A line is read at its start, behind a
journal's or a prompt's prefix or a markdown quote; the module is the bus id the line names, or for -i's target the
index or bus id the command above it gave (``GPU 0``), else none (kernel.NO_BUS). A refused or unsupported reset, a
notice or a setting's answer is claimed and said in a note, never a fault: the module is as it was."""

from __future__ import annotations

import re

from gpuvet.captures.kernel import NO_BUS, KernelEvent, KernelMessage, KernelParse, bus
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.smi_words import handle_words_kind
from gpuvet.captures.text import Line

INFOROM = "smi_inforom_corrupted"
KINDS = (INFOROM,)  # the kinds read here that no other reader gives (kernel_messages.yaml says what each is)
_BUS = r"((?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])"
# what may stand before nvidia-smi's line: a markdown quote, a dmesg-style stamp, a journal's or syslog's date, host
# and program, an ISO time, a shell prompt
_LEAD = (
    r"^\s*(?:[>*`\"']+\s*)?(?:\[[^\]]{1,40}\]\s*)?"
    r"(?:(?:[A-Z][a-z]{2}\s+\d{1,2}\s+\d\d:\d\d:\d\d|\d{4}-\d\d-\d\d[T ][\d:.,]+(?:Z|[+-]\d\d:?\d\d)?)"
    r"\s+(?:[\w.-]+\s+)?(?:[\w./-]+(?:\[\d+\])?:\s+)?)?(?:[\w.@:~/-]*[$#]\s+)?"
)
_INFOROM = re.compile(_LEAD + r"WARNING: infoROM is corrupted at gpu " + _BUS + r"\b")
_TARGET = re.compile(_LEAD + r"Unable to determine the PCI bus id for the target device(:\s*\S.{0,80})")
# the command above a target line: nvidia-smi with -i N / --id=N (an index, a bus id or a UUID)
_TARGETED = re.compile(r"nvidia-smi\b.*?\s(?:--id[= ]|-i\s*)(\S+)")
_UNABLE = re.compile(_LEAD + r"\s*GPU " + _BUS + r": (\S.{0,80}?)\s*$")  # a module the reset could not reset
_LOST = re.compile(r"\bGPU " + _BUS + r": GPU is lost\b")  # NVML's word after the module, in any command's line
_NOT_A_FAULT = re.compile(r"In use by another client|Not Supported|Insufficient Permissions|is the primary GPU", re.I)
# nvidia-smi's answers to a setting or a reset, and its notices: no fault (each its note)
_REFUSED = (
    r"Unable to reset this GPU because it's being used",
    r"GPU Reset couldn't run because GPU \S+ is the primary GPU",
    r"Resetting GPU \S+ is not supported",
    r"GPU \S+ is currently in use by another process",
)
_SET = (
    r"(?:Enabled|Disabled)(?: Legacy)? persistence mode for GPU",
    r"Persistence mode is already (?:Enabled|Disabled)",
    r"(?:Enabled|Disabled) MIG Mode for GPU",
    r"Warning: MIG mode is in pending (?:enable|disable) state",
    r"Set compute mode to \w+ for GPU",
    r"(?:GPU|Applications) clocks set to ",
    r"All done\.\s*$",
    r"Power limit for GPU \S+ was set to",
    r"(?:Enabled|Disabled) ECC support for GPU",
    r"ECC support is already",
    r"(?:Setting|Changing) [\w ]{3,40} is not supported for GPU",
    r"Specified clock combination .{3,40} is not supported for GPU",
    r"Unable to set [\w ]{3,40} for GPU \S+: (?:Not Supported|Insufficient Permissions)",
    r"Treating as warning and moving on",
    r"Terminating early due to previous errors",
    r"Reboot required\.",
    r"Reboot the system or try nvidia-smi --gpu-reset",
)
_ANSWERS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(_LEAD + "(?:" + "|".join(_REFUSED) + ")"), "a reset refused (in use, the primary GPU, or not supported)"),
    (re.compile(_LEAD + r"Warning: persistence mode is disabled on device\b"), "a notice: persistence mode is disabled"),
    (re.compile(_LEAD + "(?:" + "|".join(_SET) + ")"), "a setting's answer or a notice"),
)
# the wrapped rest of those messages as pasted ('graphics application like X server, …', '(e.g., Fabric Manager, …')
_REST = re.compile(
    r"^\s*(?:graphics application|monitoring application|Please first kill|\(even when they|"
    r"server, or a monitoring|\(e\.g\.,? (?:Fabric Manager|CUDA application)|compute applications running|"
    r"nvidia-smi\)\.|information on how to enable|See the Known Issues|Known Issues section|"
    r"man page for more|Run with \[--help|to make MIG mode effective|retry the command|the GPU again|"
    r"\d+ devices? (?:is|are) currently being used|[0-9A-Fa-f:.]{12,16} is currently being used|"
    r"switch to get more)",
    re.I,
)
# a poster's words quoting them (captures/quoted.py reads these as it reads the driver's messages)
SAID = (
    KernelMessage(
        INFOROM,
        re.compile(r"infoROM is corrupted at gpu [0-9a-fA-F]{0,8}:?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}", re.I),
        "nvidia-smi",
    ),
    KernelMessage(
        "smi_no_handle",
        re.compile(r"Unable to determine the PCI bus id for the target device: \w", re.I),  # its kind: NVML's words
        "nvidia-smi",
    ),
)


# a word each line read here holds (formats.py runs this reader on every text: the text's marks rule the absent out
# without a search); the modules a reset could not reset are the lines after its 'could not be reset:'
WORDS = (
    "infoROM",
    "target device",
    "eset",
    "ersistence mode",
    "for GPU",
    "All done.",
    "Treating as warning",
    "Terminating early",
    "is lost",
)


def parse(lines: list[Line], marks: Marks | None = None) -> KernelParse:
    """nvidia-smi's lines here: the modules they put in a state (events, once per kind and module) and its answers.
    ``marks``: the whole text's (the words it lacks are not searched)."""
    out = KernelParse()
    said: dict[str, int] = {}
    found: dict[tuple[str, str], KernelEvent] = {}
    at = holding(lines, WORDS, marks)
    listed = {j for i in at if "could not be reset" in lines[i].text for j in range(i + 1, min(i + 9, len(lines)))}
    for i in sorted({*at, *listed}):
        ln = lines[i]
        event = _event(lines, i)
        if event is not None:
            found.setdefault((event.kind, event.module), event)
            out.claimed.add(ln.no)
            continue
        note = next((note for pattern, note in _ANSWERS if pattern.search(ln.text)), None)
        if note is None or ("All done." in ln.text and not _after(out, lines, i)):
            continue
        out.claimed.add(ln.no)
        said[note] = said.get(note, 0) + 1
        out.claimed |= _rest(lines, i)
    out.events = list(found.values())
    out.notes += [f"nvidia-smi: {note} ({n} line(s))" for note, n in said.items()]
    return out


def _event(lines: list[Line], i: int) -> KernelEvent | None:
    """The module state nvidia-smi's line at ``i`` says: a corrupted infoROM, -i's target NVML could not open, a
    module a reset could not reset for a fault of its own (its words: lost, a reset needed …)."""
    ln = lines[i]
    if "infoROM" in ln.text and (m := _INFOROM.search(ln.text)) is not None:
        return KernelEvent(INFOROM, bus(m.group(1)), ln.text.strip()[:240], ln.no)
    if "target device" in ln.text and (m := _TARGET.search(ln.text)) is not None:
        return KernelEvent(handle_words_kind(m.group(1)), _target(lines, i), ln.text.strip()[:240], ln.no)
    if "is lost" in ln.text and (m := _LOST.search(ln.text)) is not None:  # any command's answer for the module
        return KernelEvent(handle_words_kind(": GPU is lost"), bus(m.group(1)), ln.text.strip()[:240], ln.no)
    if (
        "GPU" in ln.text
        and _under_reset(lines, i)
        and (m := _UNABLE.search(ln.text)) is not None
        and not _NOT_A_FAULT.search(m.group(2))
    ):
        return KernelEvent(handle_words_kind(": " + m.group(2)), bus(m.group(1)), ln.text.strip()[:240], ln.no)
    return None


def _target(lines: list[Line], i: int) -> str:
    """The module -i named on the nvidia-smi command typed just above the line (an index: 'GPU N'), else NO_BUS."""
    for ln in reversed(lines[max(0, i - 3) : i]):
        if (m := _TARGETED.search(ln.text)) is not None:
            target = m.group(1).strip(",;'\"")
            if target.isdigit():
                return f"GPU {int(target)}"
            return bus(target) if re.fullmatch(_BUS, target) else target if target.startswith("GPU-") else NO_BUS
    return NO_BUS


def _under_reset(lines: list[Line], i: int) -> bool:
    """The line follows 'The following GPUs could not be reset:' (the modules it lists, one a line)."""
    for ln in reversed(lines[max(0, i - 8) : i]):
        if "could not be reset" in ln.text:
            return True
        if not ln.text.strip().startswith("GPU"):
            return False
    return False


def _after(out: KernelParse, lines: list[Line], i: int) -> bool:
    """'All done.' closes an answer claimed within the three lines before it (alone it is no tool's)."""
    return any(ln.no in out.claimed for ln in lines[max(0, i - 3) : i])


def _rest(lines: list[Line], i: int) -> set[int]:
    """The lines after ``i`` that are the wrapped rest of its message (blank lines between them kept)."""
    rest: set[int] = set()
    for ln in lines[i + 1 : i + 8]:
        if not ln.text.strip():
            continue
        if not _REST.search(ln.text):
            break
        rest.add(ln.no)
    return rest
