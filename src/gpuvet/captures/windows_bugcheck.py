"""Issue 46 (WIN): a bug check (Windows' stop, its blue screen) as the tools people paste print it: WinDbg's
``!analyze -v`` ('VIDEO_SCHEDULER_INTERNAL_ERROR (119)', BUGCHECK_CODE, IMAGE_NAME, IMAGE_VERSION), WhoCrashed
('Bugcheck code: 0x119 (…)', 'probably caused by the following module: …'), BlueScreenView ('Bug Check String',
'Caused By Driver', 'File Version'), the WER event 1001 ('The bugcheck was: 0x00000116 (…)'), Kernel-Power event 41
('BugcheckCode 278': decimal), the blue screen itself ('Stop code: …', 'What failed: …') and a poster's sentence.

The code says what stopped Windows (Microsoft's bug check reference): 0x116 and 0xEA, a hung GPU that could not be
reset; 0x117 and 0x141, a live dump of a recovered TDR; 0x119, 0x113, 0x10E, 0x114, the graphics kernel caught the
display driver breaking its rules; 0x124 whose first parameter is 4, an uncorrectable PCIe error (0, a machine
check: the processor's, no GPU's); any other stop (a page fault, an IRQL or exception bug check, a DPC watchdog) is
the GPU's only where the faulting image the record names is a display driver or the graphics kernel. One dump is one
event however often its analysis names the code; the image's version is kept with it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuvet.captures.text import Line

# the display drivers Windows loads for each vendor's GPUs (their .sys images and event sources)
DISPLAY_DRIVERS = {
    "nvlddmkm": "NVIDIA",
    "amdkmdag": "AMD",
    "amdkmdap": "AMD",
    "amdwddmg": "AMD",
    "atikmdag": "AMD",
    "atikmpag": "AMD",
    "igfx": "Intel",
    "igfxn": "Intel",
    "igdkmd64": "Intel",
    "igdkmdn64": "Intel",
    "igdkmdnd64": "Intel",
}
GRAPHICS_KERNEL = ("dxgkrnl", "dxgmms1", "dxgmms2", "watchdog", "basicdisplay", "basicrender")  # Microsoft's
CODES = {
    0x116: "VIDEO_TDR_FAILURE",
    0xEA: "THREAD_STUCK_IN_DEVICE_DRIVER",
    0x117: "VIDEO_TDR_TIMEOUT_DETECTED",
    0x141: "VIDEO_ENGINE_TIMEOUT_DETECTED",
    0x119: "VIDEO_SCHEDULER_INTERNAL_ERROR",
    0x113: "VIDEO_DXGKRNL_FATAL_ERROR",
    0x10E: "VIDEO_MEMORY_MANAGEMENT_INTERNAL",
    0x114: "VIDEO_SHADOW_DRIVER_FATAL_ERROR",
    0x124: "WHEA_UNCORRECTABLE_ERROR",
    0x0A: "IRQL_NOT_LESS_OR_EQUAL",
    0x1E: "KMODE_EXCEPTION_NOT_HANDLED",
    0x3B: "SYSTEM_SERVICE_EXCEPTION",
    0x50: "PAGE_FAULT_IN_NONPAGED_AREA",
    0x7E: "SYSTEM_THREAD_EXCEPTION_NOT_HANDLED",
    0x7F: "UNEXPECTED_KERNEL_MODE_TRAP",
    0x8E: "KERNEL_MODE_EXCEPTION_NOT_HANDLED",
    0x9F: "DRIVER_POWER_STATE_FAILURE",
    0xC4: "DRIVER_VERIFIER_DETECTED_VIOLATION",
    0xD1: "DRIVER_IRQL_NOT_LESS_OR_EQUAL",
    0x133: "DPC_WATCHDOG_VIOLATION",
    0x139: "KERNEL_SECURITY_CHECK_FAILURE",
    0x1A: "MEMORY_MANAGEMENT",
    0xFC: "ATTEMPTED_EXECUTE_OF_NOEXEC_MEMORY",
    0xC2: "BAD_POOL_CALLER",
    0x19: "BAD_POOL_HEADER",
}
_KINDS = {
    0x116: "win_tdr_failed",
    0xEA: "win_tdr_failed",
    0x117: "win_tdr",
    0x141: "win_tdr",
    0x119: "win_video_crash",
    0x113: "win_video_crash",
    0x10E: "win_video_crash",
    0x114: "win_video_crash",
}
WHEA = 0x124
_BY_NAME = {name: code for code, name in CODES.items()}
_NAME = re.compile(r"(?<![A-Z_])(" + "|".join(sorted(_BY_NAME, key=len, reverse=True)) + r")(?![A-Z_])")
_HEX = r"(?:0x)?(1000)?0*([0-9a-fA-F]{1,4})\b"  # 0x1000007E is 0x7E's form with a parameter block (WhoCrashed)
_CODE = re.compile(
    r"\bbug ?check (?:was|code)\W{0,6}0x(1000)?0*([0-9a-fA-F]{1,4})\b|\bBUGCHECK_(?:CODE|STR):\s+"
    + _HEX
    + r"|\bStop code:\s*0x(1000)?0*([0-9a-fA-F]{1,4})\b|\bBugcheckCode\W{1,3}(\d{1,10})\b",
    re.I,
)
# a new dump begins: WhoCrashed's block, BlueScreenView's row, a debugger loading a dump, a WER or Kernel-Power event
_OPENER = re.compile(
    r"your computer crashed|^\s*Dump File\s*:|Loading Dump File|!analyze|rebooted from a bugcheck|"
    r"rebooted without cleanly|^\s*Event ID:|^\s*Event\[\d+\]|Stop code:",
    re.I,
)
_IMAGE = re.compile(
    r"\b(?:IMAGE_NAME|MODULE_NAME|Probably caused by|probably caused by the following module|"
    r"Caused By Driver|What failed|Faulting module name)\s*:\s*([A-Za-z][\w-]{1,40})(?:\.(?:sys|exe|dll))?",
    re.I,
)
_SYS = re.compile(r"\b([A-Za-z][\w-]{1,40})\.sys\b", re.I)
_VERSION = re.compile(r"\b(?:IMAGE_VERSION|File Version)\s*:\s*(\d+\.\d+\.\d+\.\d+)|\bVersion (\d{3}\.\d{2})\b")
_ARG1 = re.compile(
    r"\bArg1:\s*([0-9a-fA-F`]{1,17})\b|\bBUGCHECK_P1:\s*([0-9a-fA-F`]{1,17})\b|"
    r"\bParameter 1\s*:\s*(?:0x)?([0-9a-fA-F`]{1,17})\b|\bBugcheckParameter1\W{1,3}0x([0-9a-fA-F]{1,16})"
)
_INLINE_ARG1 = re.compile(r"0x0*[0-9a-fA-F]{1,8}\s*\(\s*0x([0-9a-fA-F`]{1,16})")  # 'code (0xarg1, …)'
SPAN = 80  # lines: a dump's analysis names its image and version this far from its bug check
WORDS = (
    "ugcheck",
    "ugCheck",
    "UGCHECK",
    "ug Check",
    "Stop code",
    "_TIMEOUT_DETECTED",
    *CODES.values(),
    "crashed",
    "Dump File",
    "!analyze",
    "rebooted",
    "Event ID",
    "Event[",
)  # and the openers (_OPENER)


@dataclass(frozen=True)
class Stop:
    """One dump's bug check: the kind it is read as (None: a stop of no GPU's), the display driver it names, what
    to say of it, and its first line."""

    kind: str | None
    driver: str | None
    text: str
    line: Line
    code: int


@dataclass
class Stops:
    stops: list[Stop] = field(default_factory=list)
    claimed: set[int] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)


def code_of(text: str) -> int | None:
    """The bug check a line names by name or by number (Kernel-Power's BugcheckCode is decimal), else None."""
    if (m := _NAME.search(text)) is not None:
        return _BY_NAME[m.group(1)]
    if (c := _CODE.search(text)) is None:
        return None
    if c.group(7) is not None:
        return int(c.group(7)) or None
    digits = next(g for g in (c.group(2), c.group(4), c.group(6)) if g is not None)
    return int(digits, 16)


def read(lines: list[Line], at: list[int]) -> Stops:
    """The bug checks among ``lines`` (``at``: the indices of the lines holding one of WORDS), one per dump."""
    out = Stops()
    last: dict[int, int] = {}  # code -> the index of its last mention
    opened = -1  # the index of the last dump opener seen
    for i in at:
        code = code_of(lines[i].text)
        if _OPENER.search(lines[i].text):
            opened = i
        if code is None:
            continue
        out.claimed.add(lines[i].no)
        seen = last.get(code)
        last[code] = i
        if seen is not None and opened <= seen and i - seen < SPAN * 2:  # the same dump, said again
            continue
        out.stops.append(_stop(lines, i, code, out))
    return out


def _stop(lines: list[Line], i: int, code: int, out: Stops) -> Stop:
    window = _window(lines, i)
    image = _image(lines, i, window)
    version = next((v.group(1) or v.group(2) for ln in window if (v := _VERSION.search(ln.text))), None)
    named = f"{image}.sys" + (f" {version}" if version else "") + _release(image, version) if image else None
    said = f"bug check 0x{code:X} {CODES.get(code, '')}" + (f", faulting image {named}" if named else "")
    driver = image if image in DISPLAY_DRIVERS else _display_driver(window)
    if code == WHEA:
        source = _arg1(lines, i, window)
        if source == 4:
            return Stop(
                "win_whea_pcie", None, f"{said}: an uncorrectable PCI Express error (parameter 1 = 4)", lines[i], code
            )
        what = (
            "a machine check (parameter 1 = 0): the processor or its memory"
            if source == 0
            else f"error source {source} (parameter 1)"
            if source is not None
            else "an error source the record does not give"
        )
        _note(out, f"bug check 0x124 WHEA_UNCORRECTABLE_ERROR from {what}; no GPU is named")
        return Stop(None, None, said, lines[i], code)
    kind = _KINDS.get(code)
    if kind is None and ((image or "") in DISPLAY_DRIVERS or (image or "") in GRAPHICS_KERNEL):  # the faulting image
        kind = "win_driver_crash"
    if kind is None:
        _note(
            out,
            f"{said}: "
            + ("its faulting image is no display driver" if image else "the record names no faulting image")
            + ", so it says nothing of a GPU",
        )
    return Stop(kind, driver, said, lines[i], code)


def _window(lines: list[Line], i: int) -> list[Line]:
    """The dump's lines around its bug check: from its opener (or a few lines before) to the next opener."""
    start = i
    while start > max(0, i - 12) and not _OPENER.search(lines[start].text):
        start -= 1
    out = list(lines[start : i + 1])
    for ln in lines[i + 1 : i + SPAN]:
        if _OPENER.search(ln.text) and code_of(ln.text) is None:
            break
        out.append(ln)
    return out


def _image(lines: list[Line], i: int, window: list[Line]) -> str | None:
    """The faulting image the dump names (lower case, no extension): a field of the tool's, a .sys on the bug
    check's own line, else a display driver named in the window."""
    for ln in window:
        if (m := _IMAGE.search(ln.text)) is not None:
            return m.group(1).lower()
    if (m := _SYS.search(lines[i].text)) is not None:
        return m.group(1).lower()
    for ln in window:
        if (m := _SYS.search(ln.text)) is not None and m.group(1).lower() in DISPLAY_DRIVERS:
            return m.group(1).lower()
    return None


def _display_driver(window: list[Line]) -> str | None:
    """A display driver the dump's lines name in any form (a bucket's 'nvlddmkm!unknown_function', a stack frame)."""
    for ln in window:
        if (m := _NAMED.search(ln.text)) is not None:
            return m.group(1).lower()
    return None


_NAMED = re.compile(r"(?<![A-Za-z])(" + "|".join(DISPLAY_DRIVERS) + r")(?:\.sys|!|\+0x)", re.I)


def _arg1(lines: list[Line], i: int, window: list[Line]) -> int | None:
    if (m := _INLINE_ARG1.search(lines[i].text)) is not None:
        return int(m.group(1).replace("`", ""), 16)
    for ln in window:
        if (m := _ARG1.search(ln.text)) is not None:
            return int(next(g for g in m.groups() if g).replace("`", ""), 16)
    return None


def _release(image: str | None, version: str | None) -> str:
    """NVIDIA's release where its driver's Windows version is given: 31.0.15.5222 is 552.22."""
    if image != "nvlddmkm" or version is None or (m := re.match(r"^\d{2}\.\d{1,2}\.(\d{2,5})\.(\d{1,5})$", version)) is None:
        return ""
    digits = (m.group(1) + m.group(2).zfill(4))[-5:]
    return f" (NVIDIA release {int(digits[:3])}.{digits[3:]})"


def _note(out: Stops, text: str) -> None:
    if text not in out.notes:
        out.notes.append(text)
