"""AMD/Xilinx XRT's tools and the amdxdna NPU driver, read as their modules' own verdicts (issue 46), beside
accel_tools' other accelerators. Messages as Xilinx/XRT (src/runtime_src/core/tools, core/pcie/tools) and
amd/xdna-driver (src/driver/amdxdna) print them:
- xbutil/xbmgmt/xrt-smi examine: the XRT banner (Version, XOCL, XCLMGMT, AMDXDNA: inventory), the 'Devices present'
  table (BDF, shell, Device Ready*: a card on its factory GOLDEN image or not ready is a warn), '0 devices found';
- xbutil validate, old form ('INFO: Validating card[0]: SHELL', 'ERROR: == verify kernel test FAILED', 'WARN: == PCIE
  link check PASSED with warning' with its 'Ensure Card is plugged in to Gen3x16, instead of Gen1x16', 'Found total
  1 card(s), 0 are usable', 'Card [0] is not ready') and new form ('Validate Device : [BDF]', 'Test N [BDF] : name',
  'Warning :'/'Error :' rows, 'Test Status : [PASSED WITH WARNINGS]'); xbutil flash scan's shell and SC version;
- amdxdna's kernel lines: the NPU's firmware not starting (firmware is not alive, invalid mbox magic, incompatible
  firmware protocol, firmware below the minimum, request_firmware failed, smu cmd failed, start npu/hardware init/
  probe failed: one critical verdict), a mailbox command timing out (warn), and the debug-BO lookup that xrt-smi
  validate makes fail on purpose ('aie2_hwctx_cfg_debug_bo: Get bo 4 failed': benign, said and claimed);
- FastFlowLM's '[ERROR] NPU firmware version on /dev/accel/accel0 is incompatible' (the same firmware fact)."""

from __future__ import annotations

import re

from gpuvet.captures import accel_marks
from gpuvet.captures.marks import holding
from gpuvet.captures.records import ListedModule, ListedParse
from gpuvet.captures.text import Line

XRT, AMDXDNA = "xbutil", "amdxdna"
# the verdict paths written here (captures/verdicts.py: their severity)
NOT_READY = "xrt: device not ready"
NO_DEVICES = "xrt: no devices found"
TEST_FAILED = "xrt: validate test failed"
TEST_WARNED = "xrt: validate test passed with warnings"
TEST_PASSED = "xrt: validate test passed"
FW_DEAD = "amdxdna: NPU firmware did not start"
MBOX_TIMEOUT = "amdxdna: firmware command timed out"
SEVERITY = {
    NOT_READY: "warn",
    NO_DEVICES: "warn",
    TEST_FAILED: "warn",
    TEST_WARNED: "warn",
    TEST_PASSED: "ok",
    FW_DEAD: "critical",
    MBOX_TIMEOUT: "warn",
}
MARKERS = accel_marks.XRT  # one list: formats.py routes texts to accel_tools by accel_marks.ACCEL
_BDF = r"((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])"
_NO_BUS = "XRT device (bus id not in the log)"


def _holding(lines: list[Line], words: tuple[str, ...]) -> list[int]:
    """marks.holding of the words the text holds at all (each searched once in the text: a log holds few of them)."""
    text = "\n".join(ln.text for ln in lines)
    return holding(lines, tuple(w for w in words if w in text))


def _bus(raw: str) -> str:
    return (raw if raw.count(":") == 2 else "0000:" + raw).upper()


def _module(out: ListedParse, bus: str | None, label: str, **kw: object) -> None:
    """Adds to the module of that bus id (or label) already read, else appends a new one."""
    tool = str(kw.pop("tool", XRT))
    for k, m in enumerate(out.modules):
        if (bus and m.bus_id == bus) or (not bus and m.label == label):
            out.modules[k] = _with(m, **kw)
            return
    made = ListedModule(f"{'NPU' if tool == AMDXDNA else 'XRT'} {bus}" if bus else label, bus_id=bus, tool=tool)
    out.modules.append(_with(made, **kw))


def _with(m: ListedModule, **kw: object) -> ListedModule:
    from dataclasses import replace

    ras = kw.pop("ras", ())
    new = replace(m, **{k: v for k, v in kw.items() if v is not None})  # type: ignore[arg-type]
    return replace(new, ras=new.ras + tuple(ras)) if ras else new  # type: ignore[arg-type]


# --- examine: banner and device table -------------------------------------------------------------------------
_VERSION = re.compile(r"^\s*(Version|XOCL|XCLMGMT|AMDXDNA|Firmware Version|NPU Firmware Version)\s*:\s*([\w.\-]{1,40})")
_ROW = re.compile(r"^\s*\|?\s*\[" + _BDF + r"\]\s*[:|]\s*(\S{1,80})(?:\s.*?)?\s\|?\s*(Yes|No)\s*\|?\s*$")
# xrt-smi's Ryzen table (ReportHost printRyzenDevices: |BDF |Name |Architecture |Topology |)
_NPU_ROW = re.compile(r"^\s*\|\s*\[" + _BDF + r"\]\s*\|\s*(\S[^|]{0,60}?)\s*\|")
_ZERO = re.compile(r"^\s*0 devices found\b")  # under examine's heading or beside XRT's banner only
_HEADINGS = ("Devices present", "Device(s) Present", "Device list")
_EXAMINE_WORDS = ("[", "devices found", "Version", "XOCL", "XCLMGMT", "AMDXDNA")


def examine(lines: list[Line], out: ListedParse) -> None:
    """The examine report: versions as a note, each listed device (shell as its firmware) and its readiness; a
    report that found no device is one warn on a module whose bus id the log does not give."""
    versions: list[str] = []
    for i in _holding(lines, _EXAMINE_WORDS):  # the cheap gate: a row names its bus in brackets, a version its word
        ln = lines[i]
        t = ln.text[:300]
        if (v := _VERSION.match(t)) and v.group(2).lower() != "unknown":
            versions.append(f"{'XRT' if v.group(1) == 'Version' else v.group(1)} {v.group(2)}")
            out.claimed.add(ln.no)
        elif r := _ROW.match(t):
            shell, bus = r.group(2), _bus(r.group(1))
            golden = "_GOLDEN" in shell.upper()
            said = (
                f"{shell}: running the factory golden image (no shell flashed), " if golden else f"{shell}: "
            ) + f"Device Ready = {r.group(3)}"
            ras = ((NOT_READY, said),) if golden or r.group(3) == "No" else ()
            _module(out, bus, "", name=_card(shell), vbios=shell, ras=ras)
            out.claimed.add(ln.no)
        elif n := _NPU_ROW.match(t):
            _module(out, _bus(n.group(1)), "", name=f"AMD {n.group(2)} (Ryzen AI NPU)")
            out.claimed.add(ln.no)
        elif _ZERO.search(t) and any(p.text.strip() in _HEADINGS or "XOCL" in p.text[:40] for p in lines):
            _module(out, None, _NO_BUS, ras=((NO_DEVICES, t.strip()[:120] + _driver_said(lines)),))
            out.claimed.add(ln.no)
    if versions:
        out.notes.append("XRT: " + ", ".join(dict.fromkeys(versions[:6])))
    if versions or any(m.tool == XRT for m in out.modules):
        out.kinds.append("xbutil examine")


def _card(shell: str) -> str:
    m = re.match(r"xilinx_(u\d{2,3}\w?|v\d{2,3}\w?|vck\d+)_", shell, re.I)
    return f"Xilinx Alveo {m.group(1).upper()}" if m else ("AMD Ryzen AI NPU" if "npu" in shell.lower() else shell)


def _driver_said(lines: list[Line]) -> str:
    """A reason beside '0 devices found' the paste shows: amdxdna not loaded, xclmgmt unknown."""
    for ln in lines:
        if re.search(r"amdxdna: module verification failed|amdxdna.*(?:probe|load).*failed", ln.text[:300]):
            return "; amdxdna: " + ln.text.split("amdxdna:", 1)[-1].strip()[:100]
    return ""


# --- validate: old (xbutil 1) and new (xbutil2/xrt-smi) forms -------------------------------------------------
_CARD = re.compile(r"Validating card\[(\d{1,3})\]:\s*(\S{1,80})")
_OLD_STEP = re.compile(r"^(?:ERROR|WARN|WARNING|INFO):\s*==\s*(.{1,60}?)\s+(FAILED|PASSED with warning|PASSED|SKIPPED)\b")
_OLD_SAID = re.compile(r"Ensure Card is plugged in to \S+, instead of \S+|Lower performance|LINK ACTIVE|Aux power")
_USABLE = re.compile(r"Found total (\d{1,3}) card\(s\), (\d{1,3}) are usable|Card \[(\d{1,3})\] is not ready")
_FLASH = re.compile(r"^\s*Card \[" + _BDF + r"\]")
_SHELL = re.compile(r"^\s*(xilinx_\w{1,60}),\[ID=[^\]]*\](?:,\[SC=([\w.]{1,20})\])?")
_NEW_DEV = re.compile(r"Validate [Dd]evice\s*:?\s*\[" + _BDF + r"\]")
_NEW_TEST = re.compile(r"Test\s*#?\s*\d{1,3}\s*\[" + _BDF + r"\]\s*:\s*(\S.{0,60}?)\s*$")
_NEW_ROW = re.compile(r"^\s*(Platform|SC Version|Warning|Error|Details|Test Status)\s*:\s*(\S.{0,200}?)\s*$")


# the words every line validate reads holds one of (a cheap gate before its patterns)
_VALIDATE_WORDS = (
    *("alidat", "==", "Test", "Platform", "SC Version", "Warning", "Error", "Details", "xilinx_", "card(s)"),
    *("is not ready", "Ensure Card", "Lower performance", "LINK ACTIVE", "Aux power"),
)


def validate(lines: list[Line], out: ListedParse) -> None:
    """Each validate test's own status on its card: FAILED and PASSED WITH WARNINGS are warns quoting the tool's
    reason (a failed check to rerun and read, not a verdict on the hardware), PASSED cited as ok."""
    # the flash scan's cards in its order (xbutil 1 numbers card[N] in the same order): card[N] is the Nth's bus,
    # or 'card N' where the scan lists fewer; never another card's bus
    scan = [_bus(m.group(1)) for ln in lines if "Card [" in ln.text and (m := _FLASH.match(ln.text[:80]))]
    flash = scan[0] if scan else None
    bus, label, test, shell = flash, _NO_BUS, "", None
    said: list[str] = []
    read = False
    for i in _holding(lines, _VALIDATE_WORDS):  # the cheap gate: a line without one of these is none of validate's
        ln = lines[i]
        t = ln.text[:300].rstrip()
        if (c := _CARD.search(t)) or (n := _NEW_DEV.search(t)):
            bus, label = _card_bus(scan, int(c.group(1))) if c else (_bus(n.group(1)), _NO_BUS) if n else (bus, label)
            shell = c.group(2) if c else shell
            _module(out, bus, label, name=_card(shell or ""), vbios=shell)
        elif (s := _OLD_STEP.match(t.strip())) or (s := _NEW_TEST.search(t)):
            if s.re is _NEW_TEST:
                bus, test, said = _bus(s.group(1)), s.group(2), []
            else:
                _judge(out, bus, s.group(1), s.group(2), said, label)
                said = []
        elif (r := _NEW_ROW.match(t)) is None:
            said += [t.strip()] if _OLD_SAID.search(t) else []
            if u := _USABLE.search(t):
                if u.group(3) is not None or u.group(2) == "0":
                    _module(out, bus, label, ras=((NOT_READY, t.strip()[:120]),))
            elif (f := _SHELL.match(t)) and flash:
                _module(
                    out, flash, "", name=_card(f.group(1)), vbios=f.group(1) + (f" SC {f.group(2)}" if f.group(2) else "")
                )
            else:
                continue
        elif r.group(1) in ("Warning", "Error"):
            said.append(r.group(2))
        elif r.group(1) == "Test Status" and test:
            _judge(out, bus, test, r.group(2).strip("[] "), said, label)
            test, said = "", []
        elif r.group(1) in ("Platform", "SC Version"):
            _module(out, bus, label, name=_card(r.group(2)) if r.group(1) == "Platform" else None)
        out.claimed.add(ln.no)
        read = True
    if read:
        out.kinds.append("xbutil validate")


def _card_bus(scan: list[str], k: int) -> tuple[str | None, str]:
    """Old validate's card[k]: the flash scan's kth bus, else 'XRT card k' (never another card's bus)."""
    return (scan[k], _NO_BUS) if k < len(scan) else (None, f"XRT card {k} (bus id not in the log)")


def _judge(out: ListedParse, bus: str | None, test: str, status: str, said: list[str], label: str = _NO_BUS) -> None:
    word = status.upper()
    path = TEST_FAILED if "FAIL" in word else TEST_WARNED if "WARN" in word else TEST_PASSED if "PASS" in word else ""
    if path:
        value = f"{test.strip()}: {status}" + (f" ({'; '.join(said[:3])})" if said else "")
        _module(out, bus, label, ras=((path, value[:240]),))


# --- amdxdna's kernel lines and FastFlowLM's firmware check ---------------------------------------------------
_XDNA = re.compile(
    r"amdxdna(?: " + _BDF + r")?:?.{0,40}?\*ERROR\*\s*(\w{1,60}):\s*(.{1,200})"
    r"|(?<!\w)\*ERROR\*\s*(aie[24]_\w{1,50}):\s*(.{1,200})|amdxdna " + _BDF + r": probe with driver amdxdna failed.{0,40}"
)
_FW = re.compile(
    r"firmware is not alive|Invalid mbox magic|Incompatible firmware protocol|below minimum|"
    r"request_firmware|smu cmd \d+ (?:failed|timed out)|start npu failed|Hardware init failed|"
    r"Power off failed|probe with driver amdxdna failed|Failed check protocol|mgmt chann is not alive",
    re.I,
)
_TIMEOUT = re.compile(r"Wait for completion timeout|Firmware timeout state capture|fatal error", re.I)
_BENIGN = re.compile(r"(?:hwctx_cfg_debug_bo|debug_bo).{0,20}Get bo \d+ failed|Debug BO \d+ isn't attached", re.I)
_BOOT = re.compile(r"amdxdna " + _BDF + r": enabling device|Initialized amdxdna_accel_driver")
_FLM = re.compile(
    r"NPU firmware version on (/dev/accel/accel\d{1,2}) is incompatible|amdxdna version [\d.]+ is incompatible"
)


def amdxdna(lines: list[Line], out: ListedParse) -> None:
    """The driver's errors on the NPU: the firmware start family as one critical verdict on its bus id (the
    lines named in order), mailbox timeouts as a warn, the debug-BO lookup as benign."""
    fw: dict[str, list[str]] = {}
    benign = False
    slow: dict[str, list[str]] = {}
    accel = next(
        (m.group(1) for ln in lines if "ncompatible" in ln.text and (m := _FLM.search(ln.text[:300])) and m.group(1)),
        None,
    )
    for i in holding(lines, ("amdxdna", "*ERROR*", "ncompatible")):  # the cheap gate: each pattern holds one
        ln = lines[i]
        t = ln.text[:400]
        if _BOOT.search(t):  # the driver's healthy probe lines: read, nothing judged
            benign = True
            out.claimed.add(ln.no)
            continue
        m, f = _XDNA.search(t), _FLM.search(t)
        if m is None and f is None:
            continue
        said = _said(m, f)
        raw = (m.group(1) or m.group(6)) if m else None
        where = _bus(raw) if raw else accel or "NPU (bus id not in the log)"
        if _BENIGN.search(t):
            benign = True
            out.notes.append(
                f"amdxdna: '{said[:80]}' is the debug-BO lookup xrt-smi validate makes fail on purpose (benign)"
            )
        elif f or _FW.search(t):
            fw.setdefault(where, []).append(said)
        elif _TIMEOUT.search(t):
            slow.setdefault(where, []).append(said)
        else:
            continue
        out.claimed.add(ln.no)
    for where, quoted in fw.items():
        why = (
            "the firmware is incompatible with the amdxdna driver: install the NPU firmware that matches it"
            if any(re.search(r"ncompatible|below minimum|protocol", s) for s in quoted)
            else "the NPU's firmware never came up (wrong or missing firmware for this driver, or the SMU refused): "
            "install the firmware matching the driver and kernel, then reload amdxdna"
        )
        _xdna_module(out, where, FW_DEAD, f"{'; '.join(dict.fromkeys(quoted))[:200]} ({why})")
    for where, quoted in slow.items():
        _xdna_module(out, where, MBOX_TIMEOUT, "; ".join(dict.fromkeys(quoted))[:200])
    if fw or slow or benign:
        out.kinds.append(AMDXDNA)


def _said(m: re.Match[str] | None, f: re.Match[str] | None) -> str:
    """The driver's own words of a line: its function and message, or the whole probe/FastFlowLM sentence."""
    if f is not None or m is None:
        return f.group(0) if f else ""
    if m.group(2) or m.group(4):
        return f"{m.group(2) or m.group(4)}: {m.group(3) or m.group(5)}".strip()
    return m.group(0).strip()


def _xdna_module(out: ListedParse, where: str, path: str, value: str) -> None:
    bus = where if re.fullmatch(_BDF, where) else None
    _module(out, bus, where if not bus else "", name="AMD NPU (amdxdna)", tool=AMDXDNA, ras=((path, value[:300]),))
