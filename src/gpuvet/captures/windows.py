"""Issue 46: what Windows and WSL users paste about their GPUs, read as the kernel log of another OS.

Windows' event log in any of its renderings (Event Viewer's General and Details text, the event's XML,
``Get-WinEvent``'s list or table, ``wevtutil qe /f:text``, a poster's 'Event ID 153 from nvlddmkm') of the display
drivers' sources (nvlddmkm for NVIDIA; amdkmdag, amdkmdap, amdwddmg, atikmdag, atikmpag for AMD; igfx, igdkmd64 for
Intel):

- Event 4101 of the source Display, 'Display driver X stopped responding and has successfully recovered' (and the
  notice's 'Display driver NVIDIA Windows Kernel Mode Driver, Version 552.22 stopped responding …'), nvlddmkm's
  'Resetting TDR occurred on GPUID:100' (Event 153 of current drivers), and Reliability Monitor's LiveKernelEvent 141
  or 117 are a TDR: Windows' watchdog found the driver's work hung, reset the GPU and recovered (kind ``win_tdr``);
  a program sees the same as NVIDIA's OpenGL driver's 'lost connection with the display driver due to exceeding the
  Windows Time-Out limit', DXGI's DXGI_ERROR_DEVICE_HUNG / _RESET (0x887A0006 / 7) or AMD Software's 'detected a
  driver timeout' (and its 'Default Radeon WattMan settings have been restored due to unexpected system failure');
- the bug checks (windows_bugcheck.py): 0x116 and 0xEA a failed TDR, 0x119/0x113/0x10E the graphics kernel caught
  the driver, any stop whose faulting image is a display driver, 0x124 of a PCIe error source;
- nvlddmkm's Event 13, whose text is the driver's 'Graphics Exception' (the same words the Linux driver logs
  with Xid 13), is read as Xid 13; its other event IDs (153, 14, 0: 'Error occurred on GPUID: 100') are
  the driver's error events, not Xids (Event 153 is not Xid 153), read as ``win_driver_error``; DXGI's
  DRIVER_INTERNAL_ERROR is one as a program sees it; atikmdag's Event 52236 'CPLIB :: General - Invalid Parameter'
  is logged on healthy machines: read, no fault;
- Device Manager's problem codes of a display adapter (windows_devices.py).

A module is named by the bus id its GPUID gives (NVIDIA's RM gpu id: domain << 16 | bus << 8 | device; a device
object another record ties to a GPUID takes its bus id), else by the device object the event names
(``\\Device\\Video3``), else by its driver. Records of other sources (Kernel-Power 41, the Desktop Window Manager)
are read and named in a note. WSL2's lines: ``misc dxg: dxgk: … Ioctl failed: -22`` (or -2) is dxgkrnl probing
what the host adapter offers, printed on healthy machines too: read and counted, never a fault alone; nvidia-smi's
'Failed to initialize NVML: GPU access blocked by the operating system' is WSL given no GPU (``wsl_gpu_blocked``);
'Failed to initialize NVML: N/A' (a status nvidia-smi has no name for, WSL2's) a GPU stack that cannot start
(``wsl_nvml_na``).
dxdiag's Display Devices and Win32_VideoController's fields list the adapters (``listing``, ``amd_listing``) for
inventory: model, driver version (NVIDIA's Windows form 31.0.15.2756 is release 527.56), driver model (WDDM, TCC)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuvet.captures import windows_bugcheck, windows_devices
from gpuvet.captures.kernel import NO_BUS, KernelEvent, KernelModule, KernelParse
from gpuvet.captures.records import ListedModule, ListedParse, SmiTextModule
from gpuvet.captures.smi_text import SmiText
from gpuvet.captures.text import Line

_DRIVERS = windows_bugcheck.DISPLAY_DRIVERS
_NAMES = "|".join(_DRIVERS)
_DRIVER = re.compile(r"(?<![A-Za-z])(" + _NAMES + r")(?:\.sys)?(?![A-Za-z])", re.I)  # IMAGE_nvlddmkm.sys
_DEVICE = re.compile(r"(\\Device\\[A-Za-z]*[0-9A-Fa-f]+)\b")
_TDR = re.compile(r"Display driver (?:(?P<driver>\w{3,20}) |(?P<product>[\w ()-]{3,60}?), Version [\d.]{3,20} )?"
                  r"stopped responding and has (?:successfully )?recovered|"
                  r"\b(?:Reset|Resetting|Restarting) TDR occurred on GPUID:\s*\w+", re.I)
# a TDR as a program sees it: NVIDIA's OpenGL driver's message, DXGI's device hung or reset (0x887A0006, 0x887A0007),
# AMD Software's notice of a driver timeout (and of the settings it restored after one)
_APP_TDR = re.compile(r"lost connection with the display driver due to exceeding the Windows Time-Out limit|"
                      r"\bDXGI_ERROR_DEVICE_(?:HUNG|RESET)\b|(?<![0-9A-Fa-f])887A000[67]\b|\bdetected a driver timeout\b|"
                      r"\bWattMan settings have been restored due to unexpected system failure", re.I)
_APP_ERROR = re.compile(r"\bDXGI_ERROR_DRIVER_INTERNAL_ERROR\b|(?<![0-9A-Fa-f])887A0020\b|"
                        r"Unable to recover from a kernel exception", re.I)
_LIVE = re.compile(r"\bLiveKernelEvent\b|\bLKD_0x", re.I)
_LIVE_CODE = re.compile(r"(?:LiveKernelEvent\W{0,12}(?:code\W{0,4})?|\bLKD_0x|\b(?:BC)?Code\W{0,4}(?:0x)?0*)"
                        r"(141|117)\b", re.I)
_EVENT_ID = re.compile(r"The description for Event ID '?(\d{1,5})'? (?:from|in) [Ss]ource '?([\w.-]+)'? cannot be found|"
                       r"^\s*(?:-\s*)?(?:Event ID|EventID|Id)\s*[:=]\s*(\d{1,5})\s*$|<EventID[^>]*>(\d{1,5})</EventID>")
# a poster's words naming a record: 'Event ID 153 from nvlddmkm', 'nvlddmkm Event 14', 'Event 13 (nvlddmkm)'
_SAID_EVENT = re.compile(r"\bEvent(?: ?ID)?\s*:?\s*(\d{1,5})\b[^.\n]{0,30}?\b(" + _NAMES + r"|Display)\b|"
                         r"\b(" + _NAMES + r")\W{1,3}Event(?: ?ID)?\s*:?\s*(\d{1,5})\b", re.I)
# Get-WinEvent's table: a row under its 'ProviderName: X' head (its message cut to the console's width)
_ROW = re.compile(r"^\s*\S+ \S+(?: [AP]M)?\s+(\d{1,5})\s+(?:Error|Warning|Information|Critical|Verbose)\b")
_PROVIDER = re.compile(r"^\s*ProviderName:\s*([\w.-]+)\s*$")
_SOURCE = re.compile(r"^\s*(?:Source|ProviderName|Provider Name)\s*[:=]\s*([\w. -]+?)\s*$|<Provider Name=\"([\w. -]+)\"")
_DATA = re.compile(r"<Data>([\w.-]+)</Data>")
_GRAPHICS_EXCEPTION = re.compile(r"Graphics (?:SM \w+ )?Exception\b.*")
_GPUID = re.compile(r"\b(?:Error|TDR) occurred on GPUID:\s*([0-9a-fA-F]{1,8})\b", re.I)
_DXG = re.compile(r"\bdxgk: (dxgk\w+):\s+Ioctl failed: (-\d{1,3})")
_DXG_ANY = ("misc dxg:", "dxgkrnl", "dxgk:")
_BLOCKED = re.compile(r"(?:Failed to initialize NVML|nvml error): GPU access blocked by the operating system", re.I)
_BLOCKED_AGAIN = "Failed to properly shut down NVML: GPU access blocked"
# FX68F: NVML's init failing with a status nvidia-smi has no name for ('N/A'): WSL2's form of a GPU stack that
# cannot start (the Windows driver or WSL's kernel); its shutdown line says it again
_NVML_NA = re.compile(r"(?:^\W{0,4}|: )Failed to initiali[sz]e NVML: N/A\s*$")
_NVML_NA_AGAIN = "Failed to properly shut down NVML: N/A"
_WSL_LIB = re.compile(r"/usr/lib/wsl/lib/\S+ is not a symbolic link")
_CUDA_ERR = "CUDA Version: ERR!"  # nvidia-smi's banner where NVML could not ask the driver's CUDA library
_NOT_FOUND = re.compile(r"\bnvidia-smi(?:\.exe)?'? is not recognized as an internal or external command", re.I)
_SET_MODEL = re.compile(r"\bSet driver model to (WDDM|TCC|MCDM) for GPU ([0-9A-Fa-f:.]+)")
_NEXT_RECORD = re.compile(r"^\s*(?:Log Name:|Event\[\d+\]|<Event\b|-\s*<Event\b|TimeCreated\b)")
# the kinds read here (kernel_messages.yaml gives their causes)
KINDS = ("win_tdr", "win_tdr_failed", "win_driver_error", "win_video_crash", "win_driver_crash", "win_whea_pcie",
         "wsl_gpu_blocked", "wsl_nvml_na", "smi_cuda_unreadable", *windows_devices.KINDS)
NEAR = 8  # lines: an event's source, device and text stand this close to its ID
# the words a line the readers read holds (a record's ID line is read only where a display driver is named)
_WORDS = ("dxg", "NVML", "/usr/lib/wsl/lib/", _CUDA_ERR, "Display driver", "TDR occurred", "LiveKernelEvent", "LKD_0x",
          "Time-Out limit", "DXGI_ERROR_", "887A00", "887a00", "driver timeout", "WattMan", "kernel exception",
          "is not recognized as an internal", "Set driver model", "Event ID", "EventID", "Event ")
_RECORD_WORDS = ("Id ", "Id:", "Id=", "Error ", "Warning ", "Critical ", "Information ", "Verbose ")
_OTHER = ("WHEA-Logger", "WER-SystemErrorReporting", "BugCheck")  # sources whose records other readers say


@dataclass
class _Scan:
    """What the walk found: the kernel parse it fills, and the counts it reports."""

    out: KernelParse = field(default_factory=KernelParse)
    dxg: dict[str, int] = field(default_factory=dict)  # 'dxgkio_query_adapter_info -22' -> lines
    said: dict[tuple[str, str], int] = field(default_factory=dict)  # (kind, module) -> index in out.events
    record: tuple[int, str, int, bool] = (-1, "", -NEAR, False)  # the last record read: its ID, source, line
    # index and whether its ID was in Event Viewer's sentence ('The description for Event ID …')
    live: int = -NEAR  # the line index of the last live kernel event read (its Bucket ID line is the same event)
    video: dict[str, str] = field(default_factory=dict)  # a device object ('\\Device\\Video3') -> its GPUID's bus
    others: dict[str, int] = field(default_factory=dict)  # 'Kernel-Power 41' -> records of other sources read


def parse(lines: list[Line]) -> KernelParse:
    """The Windows events and WSL lines among ``lines``, as kernel events, Xids and modules. Only the lines
    holding one of the readers' words are read (a bug report's log is mostly other lines)."""
    from gpuvet.captures.marks import holding

    scan = _Scan()
    scan.video = _videos(lines, holding(lines, ("GPUID",)))
    tabled = bool(holding(lines, ("ProviderName",)))
    words = _WORDS + (_RECORD_WORDS if tabled or holding(lines, tuple(_DRIVERS) + ("Display",)) else ())
    for i in holding(lines, words):
        ln = lines[i]
        s = ln.text
        if any(w in s for w in _DXG_ANY):
            _dxg(scan, ln)
        elif _BLOCKED.search(s):
            _event(scan, "wsl_gpu_blocked", "the GPU WSL is given, " + NO_BUS, ln, "Windows")
        elif _NVML_NA.search(s):
            _event(scan, "wsl_nvml_na", "the GPUs NVML is given, " + NO_BUS, ln, "Windows")
        elif _CUDA_ERR in s and "NVIDIA-SMI" in s:  # the table's banner (read after the table, which read it too)
            _event(scan, "smi_cuda_unreadable", "the driver's CUDA library, " + NO_BUS, ln, "Windows")
        elif _BLOCKED_AGAIN in s or _NVML_NA_AGAIN in s or _WSL_LIB.search(s):
            scan.out.claimed.add(ln.no)
            if _WSL_LIB.search(s):
                _note(scan.out, "WSL's ldconfig says a library under /usr/lib/wsl/lib is not a symbolic link: WSL "
                      "mounts the host driver's libraries there as files; the warning is harmless")
        else:
            _windows_line(scan, lines, i, tabled)
    _stops(scan, lines)
    _problems(scan, lines)
    _dxg_note(scan)
    _others_note(scan)
    return scan.out


def _windows_line(scan: _Scan, lines: list[Line], i: int, tabled: bool) -> None:
    """One line of the event log: a TDR, a program's view of one, a live kernel event, or an event ID read with its
    record (a field, Event Viewer's sentence, the XML's, a table's row or a poster's words)."""
    ln = lines[i]
    s = ln.text
    if (m := _TDR.search(s)) is not None:
        _tdr(scan, lines, i, m)
    elif (m := _APP_TDR.search(s)) is not None or _APP_ERROR.search(s):
        driver = "nvlddmkm" if "NVIDIA" in s else "amdkmdag" if re.search(r"\bAMD\b|Radeon", s) else \
            _driver_near(lines, i)
        kind = "win_tdr" if m is not None else "win_driver_error"
        _event(scan, kind, _module(scan, lines, i, driver), ln, _vendor(driver), f"as a program saw it: {s.strip()}")
    elif _LIVE.search(s) and i - scan.live < NEAR:  # the same live dump's Bucket ID line
        scan.out.claimed.add(ln.no)
    elif _LIVE.search(s) and (code := _live_code(lines, i)) is not None:
        driver, scan.live = _driver_near(lines, i), i
        _event(scan, "win_tdr", _module(scan, lines, i, driver), ln, _vendor(driver), f"LiveKernelEvent {code}")
    elif (m := _NOT_FOUND.search(s)) is not None or (m := _SET_MODEL.search(s)) is not None:
        scan.out.claimed.add(ln.no)
        _note(scan.out, f"nvidia-smi on Windows: driver model set to {m.group(1)} for GPU {m.group(2)} (it takes "
              "effect after a reboot)" if m.re is _SET_MODEL else "cmd does not find nvidia-smi: it is not on PATH "
              "(the driver installs it in C:\\Windows\\System32); it says nothing of the GPU")
    elif (m := _EVENT_ID.search(s)) is not None:
        _record(scan, lines, i, int(next(g for g in m.groups() if g and g.isdigit())), m.group(2))
    elif tabled and (m := _ROW.match(s)) is not None:
        _record(scan, lines, i, int(m.group(1)), _provider_above(lines, i))
    elif (m := _SAID_EVENT.search(s)) is not None:
        _record(scan, lines, i, int(m.group(1) or m.group(4)), m.group(2) or m.group(3))


def _tdr(scan: _Scan, lines: list[Line], i: int, m: re.Match[str]) -> None:
    """A TDR's line: the driver it names (or its product's vendor, or a driver near), on the GPU its GPUID gives.
    The notice's title ('Display driver stopped responding and has recovered') is its body's line, said again."""
    product = m.group("product") or ""
    driver = m.group("driver") or ("nvlddmkm" if "NVIDIA" in product else "amdkmdag" if "AMD" in product or
                                   "Radeon" in product else "igfx" if "Intel" in product else None)
    if driver is None and any(_TDR.search(ln.text) for ln in lines[i + 1:i + 3]):
        scan.out.claimed.add(lines[i].no)
        return
    driver = driver or _driver_near(lines, i) or "nvlddmkm"
    _event(scan, "win_tdr", _module(scan, lines, i, driver), lines[i], _vendor(driver))


def _record(scan: _Scan, lines: list[Line], i: int, event_id: int, source: str | None) -> None:
    """An event record whose ID is on line ``i``: its source (on that line, or a Source/Provider line near it),
    the device it names and its text decide what it is; a record of another source is named in a note."""
    source = source or _source_near(lines, i)
    if source is None:
        return
    low, (last_id, last_source, at, worded) = source.lower(), scan.record
    sentence = "The description for" in lines[i].text
    if (last_id, last_source) == (event_id, low) and i - at <= 2 * NEAR and worded != sentence:
        scan.out.claimed.add(lines[i].no)  # the record's ID said again: its field, then its sentence
        return
    scan.record = (event_id, low, i, sentence)
    near = _record_lines(lines, i)
    if any(_TDR.search(ln.text) or _APP_TDR.search(ln.text) for ln in near):
        scan.out.claimed.add(lines[i].no)  # its text is a TDR, read on its own line
        return
    if low == "display" and event_id == 4101:
        _display(scan, lines, i, near)
    elif low not in _DRIVERS:
        _other(scan, lines[i], source, event_id)
    elif _DRIVERS[low] == "AMD" and (event_id == 52236 or any("CPLIB ::" in ln.text for ln in near)):
        scan.out.claimed.add(lines[i].no)
        _note(scan.out, f"{source} Event {event_id} ('CPLIB :: General - Invalid Parameter') is logged by AMD's "
              "driver on healthy machines: no fault")
    else:
        _driver_record(scan, lines, i, event_id, source, near)


def _display(scan: _Scan, lines: list[Line], i: int, near: list[Line]) -> None:
    """Display's Event 4101, a TDR: its XML names the driver in its first <Data>, a table's row on its own (cut)
    message; the other renderings say it in the sentence read on its own line."""
    data = next((d.group(1) for ln in near if (d := _DATA.search(ln.text))), None)
    said = re.search(r"Display driver (\w{3,20})", lines[i].text)
    if data is None and said is None:
        scan.out.claimed.add(lines[i].no)
        return
    driver = data or (said.group(1) if said else None)
    _event(scan, "win_tdr", _module(scan, lines, i, driver), lines[i], _vendor(driver), f"Display event 4101 ({driver})")


def _driver_record(scan: _Scan, lines: list[Line], i: int, event_id: int, source: str, near: list[Line]) -> None:
    """A display driver's own record: nvlddmkm's Event 13 (its Graphics Exception) as Xid 13, any other its error."""
    low = source.lower()
    exception = next((g.group(0) for ln in near if (g := _GRAPHICS_EXCEPTION.search(ln.text))), None)
    module = _module(scan, lines, i, low)
    if _DRIVERS[low] == "NVIDIA" and (event_id == 13 or exception):
        from gpuvet.captures.records import XidLine

        scan.out.xids.append(XidLine(module, 13, f"nvlddmkm Event {event_id}: {exception or lines[i].text.strip()}",
                                     line=lines[i].no))
        scan.out.claimed.add(lines[i].no)
        _module_named(scan.out, module, "NVIDIA")
        _note(scan.out, "nvlddmkm's Event 13 (Graphics Exception) is read as Xid 13: the Windows driver logs the "
              "words the Linux driver logs with Xid 13; its other event IDs are not Xid numbers")
        return
    said = next((g.group(0) for ln in near if (g := _GPUID.search(ln.text))), None)
    device = next((d.group(1) for ln in near if (d := _DEVICE.search(ln.text))), None)
    _event(scan, "win_driver_error", module, lines[i], _DRIVERS[low], f"{source} Event {event_id}"
           f"{' on ' + device if device else ''}: {said or lines[i].text.strip()}")


def _other(scan: _Scan, ln: Line, source: str, event_id: int) -> None:
    """A record of a source no display driver's: read (claimed) and counted for the note."""
    scan.out.claimed.add(ln.no)
    if not any(o.lower() in source.lower() for o in _OTHER):
        key = f"{source} {event_id}"
        scan.others[key] = scan.others.get(key, 0) + 1


def _others_note(scan: _Scan) -> None:
    if not scan.others:
        return
    named = ", ".join(f"{k}" + (f" x{n}" if n > 1 else "") for k, n in scan.others.items())
    power = any("Kernel-Power 41" in k for k in scan.others)
    _note(scan.out, f"Windows event log: record(s) of other sources read, none a display driver's ({named})" + (
        "; Kernel-Power 41 is Windows restarting without a clean shutdown: its BugcheckCode names the stop where "
        "there was one (0: none, a power loss or a hard hang)" if power else ""))


def _stops(scan: _Scan, lines: list[Line]) -> None:
    """The bug checks (windows_bugcheck.py), each dump one event on the display driver it names."""
    from gpuvet.captures.marks import holding

    got = windows_bugcheck.read(lines, holding(lines, windows_bugcheck.WORDS))
    scan.out.claimed |= got.claimed
    for note in got.notes:
        _note(scan.out, note)
    for stop in got.stops:
        if stop.kind == "win_whea_pcie":
            _event(scan, stop.kind, f"a PCIe device, {NO_BUS}", stop.line, "Windows", f"{stop.text}: "
                   f"{stop.line.text.strip()}")
        elif stop.kind is not None:
            driver = stop.driver or _driver_named(lines)
            _event(scan, stop.kind, _driver_module(driver), stop.line, _vendor(driver),
                   f"{stop.text}: {stop.line.text.strip()}")


def _problems(scan: _Scan, lines: list[Line]) -> None:
    """Device Manager's problem codes (windows_devices.py), each on the adapter its block names."""
    from gpuvet.captures.marks import holding

    got = windows_devices.read(lines, holding(lines, windows_devices.WORDS))
    scan.out.claimed |= got.claimed
    for note in got.notes:
        _note(scan.out, note)
    for kind, adapter, ln, text in got.found:
        _event(scan, kind, adapter, ln, "Windows", text)


def _event(scan: _Scan, kind: str, module: str, ln: Line, vendor: str, text: str | None = None) -> None:
    """One more line saying ``kind`` of ``module``: a new event, or the count of the one already said."""
    out = scan.out
    out.claimed.add(ln.no)
    out.nvrm_lines += 1
    key = (kind, module)
    if key in scan.said:
        k = scan.said[key]
        e = out.events[k]
        out.events[k] = KernelEvent(e.kind, e.module, e.text, e.line, e.count + 1)
        return
    scan.said[key] = len(out.events)
    out.events.append(KernelEvent(kind, module, (text or ln.text.strip())[:240], ln.no))
    if vendor != "Windows":
        _module_named(out, module, vendor)


def _module_named(out: KernelParse, module: str, vendor: str) -> None:
    if module not in {m.module for m in out.modules}:
        out.modules.append(KernelModule(module, vendor))


def gpuid_bus(gpuid: str) -> str:
    """The bus id NVIDIA's GPUID says: its RM gpu id is domain << 16 | bus << 8 | device (gpuGenerate32BitId)."""
    n = int(gpuid, 16)
    return f"{n >> 16:04X}:{(n >> 8) & 0xFF:02X}:{n & 0xFF:02X}.0"


def _videos(lines: list[Line], at: list[int]) -> dict[str, str]:
    """Each device object a record ties to a GPUID ('\\Device\\Video3' and 'GPUID: 100' in one record): its bus id."""
    out: dict[str, str] = {}
    for i in at:
        if (g := _GPUID.search(lines[i].text)) is None:
            continue
        device = next((d.group(1) for ln in _record_lines(lines, i, before=6) if (d := _DEVICE.search(ln.text))), None)
        if device is not None:
            out.setdefault(device, gpuid_bus(g.group(1)))
    return out


def _module(scan: _Scan, lines: list[Line], i: int, driver: str | None) -> str:
    """The bus id the record's GPUID gives (or its device object's, tied to one by another record), else the device
    object it names (its driver beside it), else the driver alone, bus id not in the log."""
    near = _record_lines(lines, i)
    gpuid = next((g.group(1) for ln in near if (g := _GPUID.search(ln.text))), None)
    if gpuid is not None:
        return gpuid_bus(gpuid)
    device = next((d.group(1) for ln in near if (d := _DEVICE.search(ln.text))), None)
    if device is not None:
        return scan.video.get(device) or f"{device} ({driver.lower() if driver else 'display driver not named'})"
    return _driver_module(driver)


def _driver_module(driver: str | None) -> str:
    """A GPU named by its driver alone (its vendor's module), bus id not in the log."""
    name = driver.lower() if driver else "display driver not named"
    owner = {"NVIDIA": "an NVIDIA module", "AMD": "an AMD module", "Intel": "an Intel module"}.get(_vendor(driver), "a GPU")
    return f"{owner} ({name}), {NO_BUS}"


def _record_lines(lines: list[Line], i: int, before: int = 2) -> list[Line]:
    """The lines of the record around line ``i``: ``before`` before it, then up to 2 * NEAR after, to the next record."""
    out = list(lines[max(0, i - before):i + 1])  # a copy to add to (lines.TextLines' slices are read-only views)
    for ln in lines[i + 1:i + 2 * NEAR + 1]:
        if _NEXT_RECORD.match(ln.text):
            break
        out.append(ln)
    return out


def _vendor(driver: str | None) -> str:
    return _DRIVERS.get((driver or "").lower(), "Windows")


def _provider_above(lines: list[Line], i: int) -> str | None:
    """The source of a Get-WinEvent table's row: the 'ProviderName: X' head above it."""
    for ln in reversed(lines[max(0, i - 60):i]):
        if (m := _PROVIDER.match(ln.text)) is not None:
            return m.group(1)
    return None


def _driver_named(lines: list[Line]) -> str | None:
    """The one display driver the whole text names (a dump analysis' IMAGE_NAME far below its bug check), else None."""
    named = {d.group(1).lower() for ln in lines if "sys" in ln.text.lower() and (d := _DRIVER.search(ln.text))}
    return named.pop() if len(named) == 1 else None


def _driver_near(lines: list[Line], i: int) -> str | None:
    """The display driver a line near ``i`` names (a live dump's IMAGE_nvlddmkm.sys, 'What failed: …')."""
    for ln in lines[max(0, i - NEAR):i + NEAR + 1]:
        if (d := _DRIVER.search(ln.text)) is not None:
            return d.group(1).lower()
    return None


def _source_near(lines: list[Line], i: int) -> str | None:
    """The record's source: the nearest Source/ProviderName line or XML provider within NEAR lines."""
    order = sorted(range(max(0, i - NEAR), min(len(lines), i + NEAR + 1)), key=lambda k: abs(k - i))
    for k in order:
        if (m := _SOURCE.search(lines[k].text)) is not None:
            return m.group(1) or m.group(2)
    return None


def _live_code(lines: list[Line], i: int) -> str | None:
    """The code of a LiveKernelEvent: on its line ('LiveKernelEvent 141', 'LKD_0x141_Tdr') or a Code line after."""
    for ln in lines[i:i + NEAR]:
        if (m := _LIVE_CODE.search(ln.text)) is not None:
            return m.group(1)
    return None


def _dxg(scan: _Scan, ln: Line) -> None:
    """A line of WSL's dxgkrnl: read (claimed, counted as a driver line); its ioctl failures counted by call."""
    scan.out.claimed.add(ln.no)
    scan.out.nvrm_lines += 1
    if (m := _DXG.search(ln.text)) is not None:
        key = f"{m.group(1)} {m.group(2)}"
        scan.dxg[key] = scan.dxg.get(key, 0) + 1


def _dxg_note(scan: _Scan) -> None:
    if scan.dxg:
        calls = ", ".join(f"{k} x{n}" for k, n in sorted(scan.dxg.items()))
        _note(scan.out, f"WSL's dxg lines: Ioctl failed ({calls}): dxgkrnl asking the host's adapter for what it "
              "may not offer (-22 EINVAL, -2 ENOENT); WSL prints them on healthy machines, so they alone say "
              "nothing is wrong: nvidia-smi inside WSL says whether the GPU is there")


def _note(out: KernelParse, text: str) -> None:
    if text not in out.notes:
        out.notes.append(text)


# the adapters' listings: dxdiag's Display Devices ('Card name: …'), Win32_VideoController's fields (Get-CimInstance,
# wmic /format:list: 'Name : …', 'DriverVersion : …'), a report's '-Name:' lines; a block is an adapter's only where
# it holds a Windows driver version (four numbers), a WDDM/TCC driver model or dxdiag's own 'Card name'
_FIELD = re.compile(r"^\s*-?\s*([A-Za-z][A-Za-z ]{1,30}?)\s*[:=]\s*(\S.*?)\s*$")
_NAME_KEYS = ("cardname", "name", "videoprocessor")
_GPU_NAME = re.compile(r"\b(?:NVIDIA|GeForce|Quadro|Tesla|TITAN|RTX|GTX|AMD|Radeon|Arc)\b")
_WIN_VERSION = re.compile(r"^\d{2}\.\d{1,2}\.(\d{2,5})\.(\d{1,5})$")
_MIB = re.compile(r"^(\d{2,7})\s*(MB|MiB)\b", re.I)
_SPAN = 30  # lines: an adapter's fields follow its name this closely


@dataclass
class Adapter:
    """One display adapter a Windows listing names: its model and what the listing says of it."""

    name: str
    fields: dict[str, str]  # the listing's keys, lowered without blanks ('driverversion') -> value
    claimed: set[int]

    @property
    def vendor(self) -> str:
        return "AMD" if re.search(r"\b(?:AMD|Radeon)\b", self.name) else "Intel" if "Intel" in self.name or \
            re.search(r"\bArc\b", self.name) else "NVIDIA"

    def windows(self) -> bool:
        """A Windows adapter listing's block, not another tool's 'Name:' line."""
        version = self.fields.get("driverversion", "")
        return "cardname" in self.fields or bool(_WIN_VERSION.match(version)) or \
            self.fields.get("drivermodel", "").startswith(("WDDM", "TCC"))


def adapters(lines: list[Line]) -> list[Adapter]:
    """Every adapter block of a Windows listing in the lines, in order."""
    found: list[Adapter] = []
    current: Adapter | None = None
    last = -_SPAN
    for i, ln in enumerate(lines):
        m = _FIELD.match(ln.text)
        if m is None:
            continue
        key, value = m.group(1).lower().replace(" ", ""), m.group(2)
        if key in _NAME_KEYS and _GPU_NAME.search(value) and (current is None or key in current.fields or
                                                               key == "cardname" or i - last > _SPAN):
            current, last = Adapter(value, {key: value}, {ln.no}), i
            found.append(current)
        elif current is not None and i - last <= _SPAN and key not in current.fields:
            current.fields[key] = value
            current.claimed.add(ln.no)
    return [a for a in found if a.windows()]


def release(version: str) -> str | None:
    """NVIDIA's release from its Windows driver version: 31.0.15.2756 is 527.56 (the last five digits)."""
    m = _WIN_VERSION.match(version)
    if m is None:
        return None
    digits = (m.group(1) + m.group(2).zfill(4))[-5:]
    return f"{int(digits[:3])}.{digits[3:]}"


def listing(lines: list[Line]) -> SmiText:
    """The NVIDIA adapters a Windows listing names, as a module list (model, driver model, memory; no bus id)."""
    from gpuvet.captures.records import UNNAMED

    out = SmiText()
    for a in (a for a in adapters(lines) if a.vendor == "NVIDIA"):
        fields = {"Product Name": a.name}
        if (dm := a.fields.get("drivermodel")) is not None:
            fields["Driver Model/Current"] = dm.split()[0]
        if (mib := _MIB.match(a.fields.get("dedicatedmemory", ""))) is not None:
            fields["FB Memory Usage/Total"] = f"{mib.group(1)} MiB"
        out.modules.append(SmiTextModule(f"{UNNAMED} #{len(out.modules) + 1}", a.name, fields))
        out.claimed |= a.claimed
        windows = a.fields.get("driverversion", "")
        out.driver = out.driver or release(windows)
        if out.driver and windows:
            _note_smi(out, f"Windows adapter listing: driver version {windows} is NVIDIA's release {out.driver}")
    if out.modules:
        _note_smi(out, f"Windows adapter listing (dxdiag, Win32_VideoController): {len(out.modules)} NVIDIA "
                  "adapter(s), model and driver read; the listing gives no bus id")
    return out


def amd_listing(lines: list[Line]) -> ListedParse:
    """The AMD adapters a Windows listing names (dxdiag's Display Devices, Win32_VideoController)."""
    out = ListedParse()
    for a in (a for a in adapters(lines) if a.vendor == "AMD"):
        mib = _MIB.match(a.fields.get("dedicatedmemory", ""))
        out.modules.append(ListedModule(f"GPU {len(out.modules)}", a.name,
                                        memory_mib=float(mib.group(1)) if mib else None))
        out.claimed |= a.claimed
        out.driver = out.driver or a.fields.get("driverversion")
        if (dm := a.fields.get("drivermodel")) is not None:
            out.notes.append(f"Windows adapter listing: {a.name}: driver model {dm}")
    if out.modules:
        out.kinds.append("Windows adapter listing (dxdiag, Win32_VideoController)")
    return out


def _note_smi(out: SmiText, text: str) -> None:
    if text not in out.notes:
        out.notes.append(text)
