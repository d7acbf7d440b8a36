"""Issue 46 (R14C): clinfo's other outputs. AMD's own clinfo (the AMD APP SDK's, shipped with ROCm's OpenCL runtime
as /opt/rocm/opencl/bin/clinfo) prints 'Key:<tabs> value' per device: 'Device Type: CL_DEVICE_TYPE_GPU', 'Board
name: Fiji [Radeon R9 FURY / NANO Series]', 'Device Topology: PCI[ B#2, D#0, F#0 ]', 'Max compute units: 64',
'Global memory size: 4294967296' (bytes), 'Name: gfx803', 'Driver version: 2117.7 (VM)'; posters often paste
only the rows they grep. The common (Oblomov) clinfo's --raw prints 'CL_DEVICE_NAME' keys behind a '[P/N]' device
prefix, its --json the same keys quoted; its human long form is captures/api_devices.py's. A device is kept where
its rows name it (a board name or name) and one more of clinfo's device rows stands with it; CPU devices are not
GPUs. Each form prints what the others do: name, vendor, driver version, compute units, memory, PCI topology."""

from __future__ import annotations

import re

from gpuvet.captures.marks import holding
from gpuvet.captures.runtime_devices import RuntimeDevice, vendor_of
from gpuvet.captures.text import Line

WORDS = ("Board name:", "Device Topology:", "Max compute units:", "CL_DEVICE_NAME")
_AMD_KV = re.compile(r"^\s*(Device Type|Vendor ID|Board name|Device Topology|Max compute units|Global memory size|"
                     r"Name|Vendor|Driver version):\s+(\S.{0,160}?)\s*$")
_AMD_OWN = ("Board name", "Device Topology", "Max compute units")  # rows AMD's clinfo prints, posters' prose never
_AMD_WORDS = tuple(f"{k}:" for k in _AMD_OWN)
_TOPOLOGY = re.compile(r"PCI\[\s*B#(\d{1,3}),\s*D#(\d{1,2}),\s*F#(\d)\s*\]")
# --raw: '[AMD/0]  CL_DEVICE_NAME  gfx1030'; --json: '"CL_DEVICE_NAME" : "gfx1030"' (clinfo.c's raw and JSON keys)
_RAW = re.compile(r"^\s*\[([\w.-]{1,24})/(\d{1,3})\]\s+(CL_\w+)\s+(\S.{0,200}?)\s*$")
_JSON = re.compile(r"\"(CL_DEVICE_\w+|CL_DRIVER_VERSION)\"\s*:\s*(\"(?:[^\"\\]|\\.){0,200}\"|\d{1,20})")
_BUS = re.compile(r"\b((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\b")
_RAW_KEYS = {"CL_DEVICE_NAME": "Name", "CL_DEVICE_BOARD_NAME_AMD": "Board name", "CL_DEVICE_VENDOR": "Vendor",
             "CL_DRIVER_VERSION": "Driver version", "CL_DEVICE_TYPE": "Device Type",
             "CL_DEVICE_MAX_COMPUTE_UNITS": "Max compute units", "CL_DEVICE_GLOBAL_MEM_SIZE": "Global memory size",
             "CL_DEVICE_TOPOLOGY_AMD": "Device Topology", "CL_DEVICE_PCI_BUS_INFO_KHR": "Device Topology"}


def read(lines: list[Line]) -> tuple[list[RuntimeDevice], set[int]]:
    """The GPUs of AMD's clinfo, then of clinfo --raw, then of --json (the first form the file holds), and the
    lines read."""
    for form, words in ((_amd, _AMD_WORDS), (_raw, ("CL_DEVICE_",)), (_json, ('"CL_DEVICE_',))):
        if not holding(lines, words):  # a form's own words, else none of its lines is tested (issue 43)
            continue
        devices, claimed = form(lines)
        if claimed:
            return devices, claimed
    return [], set()


def _amd(lines: list[Line]) -> tuple[list[RuntimeDevice], set[int]]:
    blocks: list[tuple[dict[str, str], set[int]]] = []
    for ln in lines:
        if (m := _AMD_KV.match(ln.text)) is None:
            continue
        key, value = m.group(1), m.group(2)
        if not blocks or key in blocks[-1][0] or (key == "Device Type" and len(blocks[-1][0]) > 1):
            blocks.append(({}, set()))  # a key seen twice, or a Device Type: the next device's rows
        blocks[-1][0][key] = value
        blocks[-1][1].add(ln.no)
    kept = [(kv, nos) for kv, nos in blocks if any(k in kv for k in _AMD_OWN) and len(kv) >= 2
            and ("Board name" in kv or "Name" in kv)]
    out = [d for i, (kv, nos) in enumerate(kept) if (d := _device("clinfo", kv, min(nos), str(i))) is not None]
    return out, {no for _, nos in kept for no in nos}


def _raw(lines: list[Line]) -> tuple[list[RuntimeDevice], set[int]]:
    by_device: dict[str, dict[str, str]] = {}
    first: dict[str, int] = {}
    claimed: set[int] = set()
    for ln in lines:
        if (m := _RAW.match(ln.text)) is not None and m.group(3) in _RAW_KEYS:
            key = f"{m.group(1)}/{m.group(2)}"
            by_device.setdefault(key, {}).setdefault(_RAW_KEYS[m.group(3)], m.group(4))
            first.setdefault(key, ln.no)
            claimed.add(ln.no)
    named = {k: kv for k, kv in by_device.items() if "Name" in kv}
    out = [d for k, kv in named.items() if (d := _device("clinfo --raw", kv, first[k], k)) is not None]
    return out, claimed if named else set()


def _json(lines: list[Line]) -> tuple[list[RuntimeDevice], set[int]]:
    blocks: list[dict[str, str]] = []
    at: list[int] = []
    claimed: set[int] = set()
    for ln in lines:
        for m in _JSON.finditer(ln.text):
            key = _RAW_KEYS.get(m.group(1))
            if key is None:
                continue
            if key == "Name" or not blocks:
                blocks.append({})
                at.append(ln.no)
            blocks[-1].setdefault(key, m.group(2).strip('"'))
            claimed.add(ln.no)
    named = [(kv, no) for kv, no in zip(blocks, at, strict=True) if "Name" in kv]
    out = [d for i, (kv, no) in enumerate(named) if (d := _device("clinfo --json", kv, no, str(i))) is not None]
    return out, claimed if named else set()


def _device(tool: str, kv: dict[str, str], line: int, index: str) -> RuntimeDevice | None:
    """One device as its rows print it; None for a CPU device (pocl, Intel's CPU runtime)."""
    kind = kv.get("Device Type", "").upper()
    name = kv.get("Board name") or kv.get("Name", "")
    if "CPU" in kind or (not kind and re.search(r"\bCPU\b|Processor|pthread", name)):
        return None
    where = kv.get("Device Topology", "")
    pci = _TOPOLOGY.search(where)
    bus = f"{int(pci.group(1)):02x}:{int(pci.group(2)):02x}.{pci.group(3)}" if pci else (
        b.group(1) if (b := _BUS.search(where)) else None)
    size = kv.get("Global memory size", "")
    memory = round(int(size) / 2**20, 1) if size.isdigit() and 0 < int(size) < 2**50 else None
    gfx = kv.get("Name") if re.fullmatch(r"gfx[0-9a-f]{3,5}\S*", kv.get("Name", "")) else None
    units = kv.get("Max compute units")
    driver = kv.get("Driver version")
    vendor = vendor_of(f"{name} {kv.get('Vendor', '')} {gfx or ''}") or (
        "AMD" if kv.get("Vendor ID", "").lower() in ("1002h", "0x1002") else None)
    return RuntimeDevice(tool, index, name[:120], line, vendor, bus, memory, compute=gfx, driver=driver,
                         compute_units=int(units) if units and units.isdigit() else None)


def describe(d: RuntimeDevice) -> str:
    """A clinfo device as the note names it: its name, then what its rows printed (gfx target, compute units,
    memory, bus, driver); another tool's device by its name alone."""
    if not d.tool.startswith("clinfo"):
        return d.name
    said = [d.compute, f"{d.compute_units} compute units" if d.compute_units else None,
            f"{d.memory_mib / 1024:.1f} GiB" if d.memory_mib else None, f"bus {d.bus_id}" if d.bus_id else None,
            f"driver {d.driver}" if d.driver else None]
    more = ", ".join(x for x in said if x)
    return f"{d.name} ({more})" if more else d.name
