"""Intel's xpu-smi (XPU Manager) boxes: ``discovery`` (a ``Device ID | Device Information`` table of ``Key: Value``
cells per device), ``diag`` (``Level``, ``Result``, ``Items`` then one row per test, ``Result: Pass|Fail`` and
its ``Message:``) and ``health`` (one row per component, ``Status: OK|Warning|Critical``). Every box is two
columns between '|' rails; a row whose first cell is empty continues the row above (a device's next field, a
test's message wrapped over lines). The tool's own verdicts are kept as printed (ListedModule.ras) and judged
in captures.verdicts: gpuvet only says what xpu-smi's words mean."""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field, replace

from gpuvet.captures import xpu_smi_json, xpu_smi_stats
from gpuvet.captures.marks import holding
from gpuvet.captures.records import ListedModule, ListedParse
from gpuvet.captures.text import Line, reading

_ROW = re.compile(r"^\s*\|([^|]*)\|([^|]*?)\|?\s*$")  # a cut last row keeps its cells without the closing rail
_RULE = re.compile(r"^\s*\+[-=]+\+[-=]*\+?\s*$")  # a two-column rule (its last '+' may be cut); '+---+---+---+' is not
_VERDICT = re.compile(r"^(Result|Status):\s*(\w+)")
_MIB = re.compile(r"(?<!\S)(\S+)\s*MiB\b")  # tried from a word's start only: linear (review 55 F12)
_BDF = re.compile(r"[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]")
_MAX_MIB = (1.0, float(2**24))  # 16 TiB: no device's memory; a larger size is a corrupt reading
# discovery --dump's CSV: 'Device ID,Device Name,…' (the --dump fields' names, discovery's box keys), a row per device
_CSV_HEAD = re.compile(r"^\s*Device ID\s*,\s*\w")
_CSV_ROW = re.compile(r"^\s*\d{1,4}\s*,")
KINDS = {"discovery": "xpu-smi discovery", "diag": "xpu-smi diag", "health": "xpu-smi health"}


@dataclass
class _Box:
    """One box being read: its kind, the devices its header names, what each row said."""

    kind: str
    devices: list[str]
    fields: dict[str, dict[str, str]] = field(default_factory=dict)  # discovery: device -> key -> value
    results: list[list[str]] = field(default_factory=list)  # diag/health: [item, verdict, message…]


def parse(lines: list[Line]) -> ListedParse:
    out = ListedParse()
    boxes: list[_Box] = []
    box: _Box | None = None
    device = ""
    for ln in lines:
        m = _ROW.match(ln.text) if _two_cells(ln.text) else None
        if m is None:
            if box is not None and _RULE.match(ln.text):
                out.claimed.add(ln.no)  # the box's own +----+----+ rules
            else:
                box = None  # a blank line, a line of another shape, a row not of two cells: the box has ended
            continue
        left, right = m.group(1).strip(), m.group(2).strip()
        if left == "Device ID":
            box = _Box("discovery" if right == "Device Information" else "results",
                       [] if right == "Device Information" else [d.strip() for d in right.split(",") if d.strip()])
            boxes.append(box)
            out.claimed.add(ln.no)
            continue
        if box is None and left.isdigit() and right.startswith("Device Name:"):  # R10D: a discovery box cut above
            box = _Box("discovery", [])  # its header: a device's first row still opens it (each keyed by its id)
            boxes.append(box)
            out.notes.append(f"xpu-smi discovery: line {ln.no}: the box's header is cut; read from device {left}'s row")
        if box is None and not left and right.startswith("PCI BDF Address:"):  # a device whose id row is cut away
            out.notes.append(f"xpu-smi discovery: line {ln.no}: a device's rows above its cut id row ({right[:60]}): "
                             "not listed (its id is not in the capture)")
            out.claimed.add(ln.no)
        if box is None:
            continue
        if box.kind == "discovery":
            out.claimed.add(ln.no)
            device = left if left.isdigit() else device
            key, _, value = right.partition(":")
            if device and value:
                box.fields.setdefault(device, {})[key.strip()] = value.strip()
        elif _result_row(box, left, right) or not (left or right):  # an empty row is the box's frame; another
            out.claimed.add(ln.no)  # box's rows under a Device ID row (stats, config) are not claimed here
    boxes += _dumped(lines, out.claimed)
    out.modules = _modules(boxes, out.notes)
    out.kinds = list(dict.fromkeys(KINDS[b.kind] for b in boxes if b.kind in KINDS))
    _telemetry(out, xpu_smi_stats.read(lines))
    xpu_smi_json.read(lines, out)  # discovery/health/diag -j
    return out if out.modules else versions(lines)


# xpu-smi -v's blocks ('CLI:' / 'Service:', each '    Version: 1.3.0.20250707', '    Build ID: 3db7de07', the
# service's '    Level Zero Version: 1.21.9'), and clinfo's driver rows an environment check prints beside them
_BLOCK = re.compile(r"^\s*(CLI|Service):\s*$")
_VERSION = re.compile(r"^\s+(Version|Build ID|Level Zero Version):\s+([\w.+-]{1,40})\s*$")
_DRIVER = re.compile(r"^\s*Driver Version\s{2,}([\w.+-]{1,40})\s*$")
_DRIVER_UUID = re.compile(r"^\s*Driver UUID\s{2,}[0-9a-fA-F-]{8,40}\s*$")


def versions(lines: list[Line]) -> ListedParse:
    """xpu-smi's version output (with the driver rows an environment check lists): read for the versions it
    holds, no module listed (it names none), never refused; doctor then can't tell. Only where a block holds
    the service's 'Level Zero Version', xpu-smi's alone."""
    out = ListedParse()
    got: dict[str, str] = {}
    for at in holding(lines, ("CLI:", "Service:")):  # a block's head; its Version rows right under it (issue 43:
        if (b := _BLOCK.match(lines[at].text)) is None:  # only the lines holding a head are tested, no walk)
            continue
        out.claimed.add(lines[at].no)
        j = at + 1
        while j < len(lines) and (v := _VERSION.match(lines[j].text)) is not None:
            got[f"{b.group(1)} {v.group(1)}"] = v.group(2)
            out.claimed.add(lines[j].no)
            j += 1
    if "Service Level Zero Version" not in got:
        return ListedParse()
    drivers = [(ln.no, d.group(1)) for ln in (lines[i] for i in holding(lines, ("Driver Version",)))
               if (d := _DRIVER.match(ln.text)) is not None]
    out.claimed |= {no for no, _ in drivers} | {lines[i].no for i in holding(lines, ("Driver UUID",))
                                                 if _DRIVER_UUID.match(lines[i].text)}
    said = ", ".join(f"{k} {v}" for k, v in got.items())
    listed = (f"; {len(drivers)} driver entr(ies) listed (Driver Version {', '.join(dict.fromkeys(d for _, d in drivers))})"
              if drivers else "")
    out.kinds.append("xpu-smi version")
    out.notes.append(f"xpu-smi version: {said}{listed}; no device named (it lists none)")
    return out


def _dumped(lines: list[Line], claimed: set[int]) -> list[_Box]:
    """``xpu-smi discovery --dump 1,2,…``: its header names the fields as discovery's box does (Device Name, PCI
    BDF Address, Memory Physical Size), each row one device's cells (quoted where they hold a comma); N/A is no
    value. One discovery box per header, its rows' lines claimed."""
    out: list[_Box] = []
    header: list[str] | None = None
    for ln in lines:
        if _CSV_HEAD.match(ln.text):
            header = [c.strip() for c in next(csv.reader([ln.text]))]
            out.append(_Box("discovery", []))
            claimed.add(ln.no)
        elif header is not None and _CSV_ROW.match(ln.text):
            cells = [c.strip() for c in next(csv.reader([ln.text], skipinitialspace=True))]
            out[-1].fields[cells[0]] = {k: v for k, v in zip(header[1:], cells[1:], strict=False)
                                        if v and v.upper() != "N/A"}
            claimed.add(ln.no)
        elif ln.text.strip():
            header = None
    return out


def _telemetry(out: ListedParse, got: xpu_smi_stats.Telemetry) -> None:
    """stats' and dump's devices beside the boxes' (one module per device): their counters and temperature added."""
    out.claimed |= got.claimed
    out.kinds += [k for k in got.kinds if k not in out.kinds]
    listed = {m.label: i for i, m in enumerate(out.modules)}
    for module in got.modules():
        if module.label not in listed:
            out.modules.append(module)
            continue
        i = listed[module.label]
        had = out.modules[i]
        hot = module.temperature_c if module.temperature_c is not None else had.temperature_c
        out.modules[i] = replace(had, name=had.name or module.name, ras=(had.ras + module.ras)[:256], temperature_c=hot,
                                 tool=had.tool if had.tool in KINDS.values() else module.tool)


def _two_cells(text: str) -> bool:
    """'| a | b |', or '| a | b' where the paste cut the last row before its closing rail: nothing else is a row."""
    row = text.strip()
    rails = row.count("|")
    return row.startswith("|") and (rails == 3 and row.endswith("|") or rails == 2 and not row.endswith("|"))


def _result_row(box: _Box, left: str, right: str) -> bool:
    """A diag or health row: an overall field, a test or component with its verdict, or its message's next line;
    False for a row that is none of these (it was not read)."""
    said = _VERDICT.match(right)
    if left and said is not None:
        box.kind = "diag" if said.group(1) == "Result" else "health"
        box.results.append([left, said.group(2), right[said.end():].strip()])
    elif left in ("Level", "Result", "Items"):
        box.kind = "diag"
        if left == "Result":
            box.results.append(["Result", right.split()[0] if right else "", ""])
    elif not left and right and box.results:
        box.results[-1].append(right.removeprefix("Message:").strip())
    else:
        return False
    return True


def _modules(boxes: list[_Box], notes: list[str]) -> list[ListedModule]:
    """One module per device a box names: discovery's fields, the verdicts the diag and health boxes gave it."""
    found: dict[str, dict[str, str]] = {}
    said: dict[str, list[tuple[str, str]]] = {}
    tools: dict[str, str] = {}
    for b in boxes:
        for device, fields in b.fields.items():
            found.setdefault(device, {}).update(fields)
            tools.setdefault(device, KINDS["discovery"])
        for device in b.devices:
            found.setdefault(device, {})
            said.setdefault(device, []).extend(
                (f"{KINDS.get(b.kind, 'xpu-smi')}: {item}", " ".join(p for p in (verdict, *more) if p)[:240])
                for item, verdict, *more in b.results)
            tools[device] = KINDS.get(b.kind, "xpu-smi")
    return [_module(d, found[d], tuple(said.get(d, ())), tools.get(d, "xpu-smi"), notes) for d in found]


def _module(device: str, fields: dict[str, str], verdicts: tuple[tuple[str, str], ...], tool: str,
            notes: list[str]) -> ListedModule:
    """The device's module; a size that is no number, or none a device has, and a bus id that is none, left out."""
    bad: list[str] = []
    size = _MIB.search(fields.get("Memory Physical Size", ""))
    memory = reading(size.group(1), _MAX_MIB, "Memory Physical Size (MiB)", bad) if size else None
    if size and memory is None and not bad and any(c in "0123456789.,+-" for c in size.group(1)):
        bad.append(f"Memory Physical Size {size.group(0)!r} is not a number: left out")
    bus = fields.get("PCI BDF Address")
    if bus and not _BDF.fullmatch(bus):
        bad.append(f"PCI BDF Address {bus[:40]!r} is not a PCI bus id (domain:bus:device.function): left out")
        bus = None
    notes.extend(f"xpu-smi: GPU {device}: {b}" for b in bad)
    return ListedModule(f"GPU {device}", name=fields.get("Device Name"), bus_id=bus.upper() if bus else None,
                        memory_mib=memory, uuid=fields.get("UUID") or fields.get("SOC UUID"), ras=verdicts[:256],
                        tool=tool)
