"""Issue 46: what Windows and WSL users paste about their GPUs, read as the kernel log of another OS.

Windows' event log in any of its renderings (Event Viewer's General and Details text, the event's XML,
``Get-WinEvent``'s list or table, ``wevtutil qe /f:text``) of the display drivers' sources (nvlddmkm for
NVIDIA; amdkmdag, amdkmdap, amdwddmg, atikmdag, atikmpag for AMD; igfx, igdkmd64 for Intel):

- Event 4101 of the source Display, 'Display driver X stopped responding and has successfully recovered', the
  driver's own 'Reset TDR occurred' / 'Restarting TDR occurred', and Reliability Monitor's LiveKernelEvent 141
  or 117 (a live dump: VIDEO_ENGINE_TIMEOUT_DETECTED, VIDEO_TDR_TIMEOUT_DETECTED) are a TDR: Windows' watchdog
  found the driver's work hung, reset the GPU and recovered (kind ``win_tdr``); a program sees the same as NVIDIA's
  OpenGL driver's 'lost connection with the display driver due to exceeding the Windows Time-Out limit' or DXGI's
  DXGI_ERROR_DEVICE_HUNG / _RESET (0x887A0006 / 7);
- bug check 0x116 VIDEO_TDR_FAILURE: that recovery failed and Windows stopped (``win_tdr_failed``);
- nvlddmkm's Event 13, whose text is the driver's 'Graphics Exception' (the same words the Linux driver logs
  with Xid 13), is read as Xid 13; its other event IDs (153, 14, 0: 'Error occurred on GPUID: 100') are
  the driver's error events, not Xids (Event 153 is not Xid 153), read as ``win_driver_error``.
- Device Manager's problem code of a display adapter ('(Code 43)', dxdiag's 'Device Problem Code', WMI's
  'ConfigManagerErrorCode'): 43 the adapter failed, 12 no resources for its BARs, 28 no driver (``win_code_N``).

A module is named by the device object the event names (``\\Device\\Video3``), else by its driver. WSL2's
lines: ``misc dxg: dxgk: … Ioctl failed: -22`` (or -2) is dxgkrnl probing what the host adapter offers,
printed on healthy machines too: read and counted, never a fault alone; nvidia-smi's 'Failed to initialize
NVML: GPU access blocked by the operating system' is WSL given no GPU (``wsl_gpu_blocked``). dxdiag's Display
Devices and Win32_VideoController's fields list the adapters (``listing``, ``amd_listing``) for inventory:
model, driver version (NVIDIA's Windows form 31.0.15.2756 is release 527.56), driver model (WDDM, TCC)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuvet.captures.kernel import NO_BUS, KernelEvent, KernelModule, KernelParse
from gpuvet.captures.records import ListedModule, ListedParse, SmiTextModule
from gpuvet.captures.smi_text import SmiText
from gpuvet.captures.text import Line

_DRIVERS = {"nvlddmkm": "NVIDIA", "amdkmdag": "AMD", "amdkmdap": "AMD", "amdwddmg": "AMD", "atikmdag": "AMD",
            "atikmpag": "AMD", "igfx": "Intel", "igfxn": "Intel", "igdkmd64": "Intel", "igdkmdn64": "Intel"}
_DRIVER = re.compile(r"(?<![A-Za-z])(" + "|".join(_DRIVERS) + r")(?:\.sys)?(?![A-Za-z])", re.I)  # IMAGE_nvlddmkm.sys
_DEVICE = re.compile(r"(\\Device\\[A-Za-z]*[0-9A-Fa-f]+)\b")
_TDR = re.compile(r"Display driver (\w{3,20}) stopped responding and has (?:successfully )?recovered|"
                  r"\b(?:Reset|Restarting) TDR occurred on GPUID:\s*\w+", re.I)
# a TDR as a program sees it: NVIDIA's OpenGL driver's message, DXGI's device hung or reset (0x887A0006, 0x887A0007)
_APP_TDR = re.compile(r"lost connection with the display driver due to exceeding the Windows Time-Out limit|"
                      r"\bDXGI_ERROR_DEVICE_(?:HUNG|RESET)\b|(?<![0-9A-Fa-f])887A000[67]\b", re.I)
_LIVE = re.compile(r"\bLiveKernelEvent\b|\bLKD_0x", re.I)
_LIVE_CODE = re.compile(r"(?:LiveKernelEvent\W{0,12}(?:code\W{0,4})?|\bLKD_0x|\b(?:BC)?Code\W{0,4}(?:0x)?0*)"
                        r"(141|117)\b", re.I)
_TDR_FAILED = re.compile(r"\bVIDEO_TDR_FAILURE\b|bug ?check (?:was|code)\W{0,4}0x0*116\b|\bBugCheck\w*\W{1,4}(?:0x)?0*116\b|"
                         r"\bTHREAD_STUCK_IN_DEVICE_DRIVER\b", re.I)  # 0xEA: a thread stuck in the display driver
# a debugger's analysis of a live dump (!analyze -v) names the TDR's bug check: 0x141, 0x117
_DUMP_TDR = re.compile(r"\bVIDEO_(?:ENGINE|TDR)_TIMEOUT_DETECTED\b")
DUMP = 200  # lines: a crash dump's analysis names its bug check several times; one dump, one event
_EVENT_ID = re.compile(r"The description for Event ID '?(\d{1,5})'? (?:from|in) [Ss]ource '?([\w.-]+)'? cannot be found|"
                       r"^\s*(?:-\s*)?(?:Event ID|EventID|Id)\s*[:=]\s*(\d{1,5})\s*$|<EventID[^>]*>(\d{1,5})</EventID>")
_SOURCE = re.compile(r"^\s*(?:Source|ProviderName|Provider Name)\s*[:=]\s*([\w.-]+)\s*$|<Provider Name=\"([\w.-]+)\"")
_DATA = re.compile(r"<Data>([\w.-]+)</Data>")
_GRAPHICS_EXCEPTION = re.compile(r"Graphics (?:SM \w+ )?Exception\b.*")
_GPUID = re.compile(r"Error occurred on GPUID:\s*\w+", re.I)
_DXG = re.compile(r"\bdxgk: (dxgk\w+):\s+Ioctl failed: (-\d{1,3})")
_DXG_ANY = ("misc dxg:", "dxgkrnl", "dxgk:")
_BLOCKED = re.compile(r"(?:Failed to initialize NVML|nvml error): GPU access blocked by the operating system", re.I)
_BLOCKED_AGAIN = "Failed to properly shut down NVML: GPU access blocked"
_WSL_LIB = re.compile(r"/usr/lib/wsl/lib/\S+ is not a symbolic link")
# Device Manager's problem code for a display adapter: its sentence '… (Code 43)', dxdiag's 'Device Problem Code: Code 43',
# Win32_VideoController's/PnP's 'ConfigManagerErrorCode : 43'; 43 (the driver reported the device failed), 12 (no free
# resources: its BARs could not be placed), 28 (no driver installed); 'No Problem' and 0 are a working device
_CODE = re.compile(r"\((?:Code|code) (43|12|28)\)|Device Problem Code:\s*Code (43|12|28)\b|"
                   r"ConfigManagerErrorCode\s*:\s*(43|12|28)\b")
_CODE_KINDS = {"43": "win_code_43", "12": "win_code_12", "28": "win_code_28"}
_CUDA_ERR = "CUDA Version: ERR!"  # nvidia-smi's banner where NVML could not ask the driver's CUDA library
_NEXT_RECORD = re.compile(r"^\s*(?:Log Name:|Event\[\d+\]|<Event\b|-\s*<Event\b|TimeCreated\b)")
# the kinds read here (kernel_messages.yaml gives their causes)
KINDS = ("win_tdr", "win_tdr_failed", "win_driver_error", "wsl_gpu_blocked", "smi_cuda_unreadable", *_CODE_KINDS.values())
NEAR = 8  # lines: an event's source, device and text stand this close to its ID
# the words a line the readers read holds (a record's ID line is read only where a display driver is named)
_WORDS = ("dxg", "NVML", "/usr/lib/wsl/lib/", _CUDA_ERR, "Display driver", "TDR occurred", "LiveKernelEvent", "LKD_0x",
          "VIDEO_TDR_FAILURE", "_TIMEOUT_DETECTED", "THREAD_STUCK_IN_DEVICE_DRIVER", "ugcheck", "ugCheck", "UGCHECK",
          "Time-Out limit", "DXGI_ERROR_DEVICE_", "887A000", "887a000", "ode 43", "ode 12", "ode 28", "ErrorCode")
_RECORD_WORDS = ("Event ID", "EventID", "Id ", "Id:", "Id=")


@dataclass
class _Scan:
    """What the walk found: the kernel parse it fills, and the counts it reports."""

    out: KernelParse = field(default_factory=KernelParse)
    dxg: dict[str, int] = field(default_factory=dict)  # 'dxgkio_query_adapter_info -22' -> lines
    said: dict[tuple[str, str], int] = field(default_factory=dict)  # (kind, module) -> index in out.events
    record: tuple[int, str, int, bool] = (-1, "", -NEAR, False)  # the last record read: its ID, source, line
    # index and whether its ID was in Event Viewer's sentence ('The description for Event ID …')
    live: int = -NEAR  # the line index of the last live kernel event read (its Bucket ID line is the same event)
    dump: int = -DUMP  # the line index of the last bug check or dump analysis read (its other lines: the same one)


def parse(lines: list[Line]) -> KernelParse:
    """The Windows events and WSL lines among ``lines``, as kernel events, Xids and modules. Only the lines
    holding one of the readers' words are read (a bug report's log is mostly other lines)."""
    from gpuvet.captures.marks import holding

    scan = _Scan()
    words = _WORDS + (_RECORD_WORDS if holding(lines, tuple(_DRIVERS) + ("Display",)) else ())
    for i in holding(lines, words):
        ln = lines[i]
        s = ln.text
        if any(w in s for w in _DXG_ANY):
            _dxg(scan, ln)
        elif _BLOCKED.search(s):
            _event(scan, "wsl_gpu_blocked", "the GPU WSL is given, " + NO_BUS, ln, "Windows")
        elif _CUDA_ERR in s and "NVIDIA-SMI" in s:  # the table's banner (read after the table, which read it too)
            _event(scan, "smi_cuda_unreadable", "the driver's CUDA library, " + NO_BUS, ln, "Windows")
        elif _BLOCKED_AGAIN in s or _WSL_LIB.search(s):
            scan.out.claimed.add(ln.no)
            if _WSL_LIB.search(s):
                _note(scan.out, "WSL's ldconfig says a library under /usr/lib/wsl/lib is not a symbolic link: WSL "
                      "mounts the host driver's libraries there as files; the warning is harmless")
        else:
            _windows_line(scan, lines, i)
    _dxg_note(scan)
    return scan.out


def _windows_line(scan: _Scan, lines: list[Line], i: int) -> None:
    """One line of the event log: a TDR, a failed TDR, a live kernel event or an event ID read with its record."""
    ln = lines[i]
    s = ln.text
    if (m := _TDR.search(s)) is not None:
        driver = m.group(1) or _driver_near(lines, i) or "nvlddmkm"
        _event(scan, "win_tdr", _module(lines, i, driver), ln, _vendor(driver))
    elif (m := _APP_TDR.search(s)) is not None:
        driver = "nvlddmkm" if "NVIDIA" in s else _driver_near(lines, i)
        _event(scan, "win_tdr", _module(lines, i, driver), ln, _vendor(driver), f"as a program saw it: {s.strip()}")
    elif (_TDR_FAILED.search(s) or _DUMP_TDR.search(s)) and i - scan.dump < DUMP:  # the same dump, said again
        scan.out.claimed.add(ln.no)
    elif _TDR_FAILED.search(s) or _DUMP_TDR.search(s):
        driver, scan.dump = _driver_near(lines, i) or _driver_named(lines), i
        kind = "win_tdr_failed" if _TDR_FAILED.search(s) else "win_tdr"
        _event(scan, kind, _module(lines, i, driver), ln, _vendor(driver))
    elif _LIVE.search(s) and i - scan.live < NEAR:  # the same live dump's Bucket ID line
        scan.out.claimed.add(ln.no)
    elif _LIVE.search(s) and (code := _live_code(lines, i)) is not None:
        driver, scan.live = _driver_near(lines, i), i
        _event(scan, "win_tdr", _module(lines, i, driver), ln, _vendor(driver), f"LiveKernelEvent {code}")
    elif (m := _CODE.search(s)) is not None:
        code = next(g for g in m.groups() if g)
        _event(scan, _CODE_KINDS[code], _adapter_near(lines, i), ln, "Windows", f"Device Manager Code {code}: {s.strip()}")
    elif (m := _EVENT_ID.search(s)) is not None:
        _record(scan, lines, i, int(next(g for g in m.groups() if g and g.isdigit())), m.group(2))


def _record(scan: _Scan, lines: list[Line], i: int, event_id: int, source: str | None) -> None:
    """An event record whose ID is on line ``i``: its source (on that line, or a Source/Provider line near it),
    the device it names and its text decide what it is; a record of no display driver is passed over."""
    source = source or _source_near(lines, i)
    if source is None:
        return
    low, (last_id, last_source, at, worded) = source.lower(), scan.record
    sentence = "The description for" in lines[i].text
    if (last_id, last_source) == (event_id, low) and i - at <= 2 * NEAR and worded != sentence:
        scan.out.claimed.add(lines[i].no)  # the record's ID said again: its field, then its sentence
        return
    scan.record = (event_id, low, i, sentence)
    if low == "display" and event_id == 4101:  # a TDR: its XML names the driver in its first <Data>; the other
        data = next((d.group(1) for ln in _record_lines(lines, i) if (d := _DATA.search(ln.text))), None)
        if data is None:  # renderings say it in the sentence read on its own line ('Display driver X stopped …')
            scan.out.claimed.add(lines[i].no)
            return
        _event(scan, "win_tdr", _module(lines, i, data), lines[i], _vendor(data), f"Display event 4101 ({data})")
        return
    if low not in _DRIVERS:
        return
    near = _record_lines(lines, i)
    exception = next((g.group(0) for ln in near if (g := _GRAPHICS_EXCEPTION.search(ln.text))), None)
    module = _module(lines, i, low)
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
    _event(scan, "win_driver_error", module, lines[i], _DRIVERS[low], f"{source} Event {event_id}: "
           f"{said or lines[i].text.strip()}")


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


def _module(lines: list[Line], i: int, driver: str | None) -> str:
    """The device object the record names (its driver beside it), else the driver alone, bus id not in the log."""
    device = next((d.group(1) for ln in _record_lines(lines, i) if (d := _DEVICE.search(ln.text))), None)
    name = driver.lower() if driver else "display driver not named"
    if device is not None:
        return f"{device} ({name})"
    vendor = _vendor(driver)
    owner = {"NVIDIA": "an NVIDIA module", "AMD": "an AMD module", "Intel": "an Intel module"}.get(vendor, "a GPU")
    return f"{owner} ({name}), {NO_BUS}"


def _record_lines(lines: list[Line], i: int) -> list[Line]:
    """The lines of the record around line ``i``: two before it, then up to 2 * NEAR after, to the next record."""
    out = list(lines[max(0, i - 2):i + 1])  # a copy to add to (lines.TextLines' slices are read-only views)
    for ln in lines[i + 1:i + 2 * NEAR + 1]:
        if _NEXT_RECORD.match(ln.text):
            break
        out.append(ln)
    return out


def _vendor(driver: str | None) -> str:
    return _DRIVERS.get((driver or "").lower(), "Windows")


def _adapter_near(lines: list[Line], i: int) -> str:
    """The adapter a problem code belongs to: the listing's name nearest above it (dxdiag's Card name, Name : …),
    else a GPU whose bus id the text does not give."""
    for ln in reversed(lines[max(0, i - _SPAN):i + 1]):
        if (m := _FIELD.match(ln.text)) is not None and m.group(1).lower().replace(" ", "") in _NAME_KEYS and \
                _GPU_NAME.search(m.group(2)):
            return f"{m.group(2)}, {NO_BUS}"
    return f"a GPU, {NO_BUS}"


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
