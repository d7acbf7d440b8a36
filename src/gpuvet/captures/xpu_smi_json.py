"""Intel xpu-smi's ``-j``/``--json`` forms (issue 46, batch M): ``discovery -j`` (``{"device_list": [{…}, …]}``,
one object per device), ``discovery -d N -j`` (one device's object), ``health -j`` (the device's id and one object
per component, each with its ``status``) and ``diag -j`` (its overall ``result`` and a ``component_list`` of
tests, each with ``result`` and ``message``). The keys are snake_case (``device_name``, ``pci_bdf_address``,
``memory_physical_size_byte``, ``uuid``) and printed in any order; a paste cut mid-document is read up to its last
complete field (json_cut). The tool's own words (Pass/Fail, OK/Warning/Critical) are kept as printed in
ListedModule.ras and judged in captures.verdicts, as the boxes' are."""

from __future__ import annotations

import json
import re

from gpuvet.captures.json_cut import salvage
from gpuvet.captures.records import ListedModule, ListedParse
from gpuvet.captures.text import Line, reading

_BDF = re.compile(r"[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]")
_MAX_BYTES = (1.0, float(2**44))  # 16 TiB: no device's memory
_KEYS = ('"device_name"', '"device_list"', '"component_list"', '"pci_bdf_address"', '"core_temperature"')
DISCOVERY, DIAG, HEALTH = "xpu-smi discovery -j", "xpu-smi diag -j", "xpu-smi health -j"


def read(lines: list[Line], out: ListedParse) -> None:
    """Every xpu-smi JSON document in the lines: its devices as modules, their verdicts, the lines claimed."""
    starts = [i for i, ln in enumerate(lines) if ln.text.lstrip().startswith("{")]
    if not starts or not any(k in ln.text for ln in lines for k in _KEYS):
        return
    done = -1
    for i in starts:
        if i <= done:
            continue
        doc, used = _document(lines[i:])
        if doc is None:
            continue
        done = i + used - 1
        before = len(out.modules)
        _devices(doc, out)
        if len(out.modules) > before:
            out.claimed.update(ln.no for ln in lines[i:i + used])


def _document(lines: list[Line]) -> tuple[object, int]:
    """The JSON object opening at the first line, whole or salvaged from a cut paste, and how many lines it spans."""
    text = "\n".join(ln.text for ln in lines)
    try:
        doc, end = json.JSONDecoder().raw_decode(text.lstrip())
        return doc, text.count("\n", 0, end + len(text) - len(text.lstrip())) + 1
    except ValueError:
        pass
    cut = salvage(text)
    if cut is None:
        return None, 0
    try:
        return json.loads(cut.text), cut.lines_kept
    except ValueError:
        return None, 0


def _devices(doc: object, out: ListedParse) -> None:
    """discovery's list or one device, health's components, diag's tests: a module each device id names."""
    if not isinstance(doc, dict):
        return
    listed = doc.get("device_list")
    for item in listed if isinstance(listed, list) else [doc]:
        if not isinstance(item, dict) or "device_id" not in item:
            continue
        said = _verdicts(item)
        if not said and not any(k in item for k in ("device_name", "pci_bdf_address", "uuid")):
            continue
        tool = DIAG if "component_list" in item else HEALTH if said else DISCOVERY
        out.modules.append(_module(item, said, tool, out.notes))
        if tool not in out.kinds:
            out.kinds.append(tool)


def _verdicts(item: dict[str, object]) -> tuple[tuple[str, str], ...]:
    """diag's overall result and each test's; health's status per component (as the boxes name them)."""
    out: list[tuple[str, str]] = []
    tests = item.get("component_list")
    if isinstance(tests, list):
        for test in tests:
            if isinstance(test, dict) and isinstance(test.get("result"), str):
                name = str(test.get("component_type", "test")).removeprefix("XPUM_DIAG_")
                out.append((f"{DIAG}: {name}", f"{test['result']} {test.get('message', '')}".strip()[:240]))
        if isinstance(result := item.get("result"), str):
            out.append((f"{DIAG}: Result", result))
        return tuple(out[:256])
    for key, value in item.items():
        if isinstance(value, dict) and isinstance(value.get("status"), str):
            out.append((f"{HEALTH}: {key}", f"{value['status']} {value.get('description', '')}".strip()[:240]))
    return tuple(out[:256])


def _module(item: dict[str, object], said: tuple[tuple[str, str], ...], tool: str, notes: list[str]) -> ListedModule:
    """One device: its name, bus id and memory where printed; a size or bus id that is none left out and said."""
    bad: list[str] = []
    size = item.get("memory_physical_size_byte")
    memory = reading(str(size), _MAX_BYTES, "memory_physical_size_byte", bad) if size is not None else None
    bus = item.get("pci_bdf_address")
    if bus is not None and not (isinstance(bus, str) and _BDF.fullmatch(bus)):
        bad.append(f"pci_bdf_address {str(bus)[:40]!r} is not a PCI bus id: left out")
        bus = None
    device = item["device_id"]
    notes.extend(f"xpu-smi -j: GPU {device}: {b}" for b in bad)
    firmware, ecc = item.get("gfx_firmware_version"), item.get("memory_ecc_state")
    if firmware or ecc:  # what the device's own record states, said as printed
        status = item.get("gfx_firmware_status")
        notes.append(f"xpu-smi -j: GPU {device}: " + "; ".join(
            ([f"GFX firmware {str(firmware)[:60]}" + (f" (status {str(status)[:20]})" if status else "")]
             if firmware else []) + ([f"memory ECC {str(ecc)[:20]}"] if ecc else [])))
    name = item.get("device_name")
    return ListedModule(f"GPU {device}", name=str(name)[:256] if name else None,
                        bus_id=bus.upper() if isinstance(bus, str) else None,
                        memory_mib=memory / 2**20 if memory else None, uuid=str(item.get("uuid") or "") or None,
                        ras=said, tool=tool)
