"""Issue 46 (WIN): Windows' hardware error records (Microsoft-Windows-WHEA-Logger, whealogr.dll) as Event Viewer,
``wevtutil`` and ``Get-WinEvent`` render them: 'A corrected hardware error has occurred.' (Event 17, 19, 47) or 'A
fatal hardware error has occurred.' (18, 20, 1), then its component, error source and the device. A PCI Express
record (Error Source: Advanced Error Reporting) names its device as Windows 7 did ('Bus:Device:Function: 0x1:0x0:0x0',
'Vendor ID:Device ID: 0x10DE:0x1B80') or as Windows 10 and 11 do ('Primary Bus:Device:Function', 'Primary Device
Name:PCI\\VEN_1022&DEV_1483…' for the reporting port or endpoint; 'Secondary …' for the device below it, where
named).

Read as the kernel's AER lines are (captures/aer.py's records, judged by doctor's AER rules on the device named): a
port's record with a device named below it is that device's error, the port its message's receiver; a port's alone
is the port's (judged only as a burst, as Linux's); an endpoint's is its own. A GPU is known by its vendor id (10DE,
1002). The records of the processor or of host memory (a machine check, corrected or fatal) are the host's: read and
said in a note, never a module's finding, as captures/host_errors.py says Linux's."""

from __future__ import annotations

import re

from gpuvet.captures.aer import ATI, NVIDIA, AerDevice, AerParse
from gpuvet.captures.text import Line

_HEAD = re.compile(r"\bAn? (corrected|fatal|uncorrected|uncorrectable|recoverable) hardware error has occurred", re.I)
_FIELD = re.compile(
    r"\b(?P<key>Reported by component|Component|Error Source|Error Type|Primary Bus:Device:Function|"
    r"Secondary Bus:Device:Function|Bus: ?Device: ?Function|Vendor ID: ?Device ID|Primary Device Name|"
    r"Secondary Device Name|Processor APIC ID)\s*:\s*(?P<value>.*?)\s*$",
    re.I,
)
_BDF = re.compile(r"0x([0-9a-fA-F]{1,2}):0x([0-9a-fA-F]{1,2}):0x([0-7])\b")
_IDS = re.compile(r"0x([0-9a-fA-F]{4}):0x([0-9a-fA-F]{4})\b")
_VEN = re.compile(r"\bVEN_([0-9a-fA-F]{4})&DEV_([0-9a-fA-F]{4})")
NEAR = 14  # lines: a record's fields follow its first line this closely
MARKS = ("hardware error has occurred",)
# the display driver Windows runs a GPU of this vendor with (the record names the device, not its driver)
_DRIVER = {NVIDIA: "nvlddmkm", ATI: "amdkmdag"}


def parse(lines: list[Line]) -> AerParse:
    """Each WHEA-Logger record among ``lines``: a PCIe one as its device's AER error, the host's in a note."""
    out = AerParse()
    host: list[str] = []
    for i, ln in enumerate(lines):
        if "hardware error has occurred" not in ln.text or (head := _HEAD.search(ln.text)) is None:
            continue
        fields, used = _fields(lines, i)
        out.claimed |= used | {ln.no}
        severity = head.group(1).lower()
        component = fields.get("component") or "not given"
        source = fields.get("source", "")
        if "pci express" in source.lower() or "pci express" in component.lower():
            _pcie(out, fields, severity, ln)
        else:
            host.append(
                f"{severity} on {component} ({source or 'source not given'}"
                + (f", {fields['type']}" if fields.get("type") else "")
                + ")"
            )
    if host:
        shown = "; ".join(dict.fromkeys(host))
        out.notes.append(
            f"WHEA-Logger: {len(host)} hardware error record(s) of the host, not of a GPU: {shown}; a "
            "machine check is the processor's or its memory's (overclock, voltage, a DIMM)"
        )
    return out


def _fields(lines: list[Line], i: int) -> tuple[dict[str, str], set[int]]:
    """The record's fields, by _KEYS' names, from the lines after its first, to the next record."""
    fields: dict[str, str] = {}
    used: set[int] = set()
    for ln in lines[i + 1 : i + 1 + NEAR]:
        if _HEAD.search(ln.text):
            break
        if (m := _FIELD.search(ln.text)) is not None:
            fields.setdefault(_KEYS[re.sub(r"\s+", "", m.group("key").lower())], m.group("value"))
            used.add(ln.no)
    return fields, used


_KEYS = {
    "reportedbycomponent": "component",
    "component": "component",
    "errorsource": "source",
    "errortype": "type",
    "primarybus:device:function": "primary",
    "secondarybus:device:function": "secondary",
    "bus:device:function": "primary",
    "vendorid:deviceid": "ids",
    "primarydevicename": "primary name",
    "secondarydevicename": "secondary name",
    "processorapicid": "apic",
}


def _bus(value: str | None) -> str | None:
    if value is None or (m := _BDF.search(value)) is None:
        return None
    bus, device, function = int(m.group(1), 16), int(m.group(2), 16), m.group(3)
    return f"0000:{bus:02X}:{device:02X}.{function}"


def _pcie(out: AerParse, fields: dict[str, str], severity: str, ln: Line) -> None:
    """A PCIe record: the device the error is (the one named below a port, else the reporter) counted, the
    reporting port with it as its message's source."""
    reporter = _bus(fields.get("primary"))
    ids = _IDS.search(fields.get("ids", ""))
    vendor = ids.group(1) if ids else (v.group(1) if (v := _VEN.search(fields.get("primary name", ""))) else None)
    below_bus = _bus(fields.get("secondary"))
    below_ven = v.group(1) if (v := _VEN.search(fields.get("secondary name", ""))) else None
    if reporter is None:
        return
    port = "port" in fields.get("component", "").lower()
    reporting = _device(
        out, reporter, "pcieport" if port else _DRIVER.get((vendor or "").lower(), "WHEA endpoint"), vendor, ln
    )
    target = reporting
    if below_bus is not None and below_bus != "0000:00:00.0" and below_bus != reporter:
        target = _device(out, below_bus, _DRIVER.get((below_ven or "").lower(), "WHEA device"), below_ven, ln)
        reporting.sources += [] if below_bus in reporting.sources else [below_bus]
    if severity == "corrected":
        target.correctable += 1
    else:
        target.uncorrectable += 1
        target.fatal += severity == "fatal"
    said = f"WHEA {severity} ({fields.get('source') or 'PCI Express'})"
    target.kinds += [] if said in target.kinds else [said]


def _device(out: AerParse, bus: str, driver: str, vendor: str | None, ln: Line) -> AerDevice:
    d = out.devices.setdefault(bus, AerDevice(bus, driver, first_line=ln.no))
    d.vendor = d.vendor or (vendor.lower() if vendor else None)
    return d
