"""The modules a benchmark log names on its device lines (nccl-tests, rccl-tests:
``#  Rank  0 Group  0 Pid 4021 on dgx01 device  0 [0x18] NVIDIA H100 80GB HBM3``), so its
results can be judged against what those modules reach."""

from __future__ import annotations

import re

from gpuvet.captures import nccl_legacy
from gpuvet.captures.records import UNNAMED, ListedModule, ListedParse, SmiTextModule
from gpuvet.captures.smi_text import SmiText
from gpuvet.captures.text import Line
from gpuvet.node.bus import bus_key

# the oldest nccl-tests print no 'Pid N' ('#   Rank  0 on  ncrh device  0 [0x05] GeForce RTX 2080 Ti', 2.4 era)
DEVICE_LINE = re.compile(r"^#?\s*Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?(?:Pid\s+\d+\s+)?on\s+(\S*)\s*device\s+(\d+)\s+"
                         r"\[(?:0x)?[0-9a-fA-F:.]+\]\s+(.+?)\s*$")
_NO_HOST = "host not named"  # a device line whose host the poster blanked ('on        device  0')


def device_models(lines: list[Line]) -> tuple[str, ...]:
    """The module name of each device line, in order (one per rank; a rank printed twice counts once)."""
    seen: dict[tuple[str, str], str] = {}
    for ln in lines:
        if (f := _fields(ln.text)) is not None:
            seen.setdefault((f[1], f[0]), f[3][:120])
    return tuple(seen.values())


def _fields(text: str) -> tuple[str, str, str, str] | None:
    """A device line's (rank, host, device, model): nccl-tests' and rccl-tests', or NCCL 1's test binaries' (no
    host: '#   Rank  0 uses device  0 [0x04] Tesla P100-SXM2-16GB', captures/nccl_legacy.py)."""
    if "evice" not in text:
        return None
    if (m := DEVICE_LINE.match(text.strip())) is not None:
        return m.group(1), m.group(2), m.group(3), m.group(4)
    return nccl_legacy.device(text)


_OTHER_VENDOR = re.compile(r"\bAMD\b|Instinct|Radeon|\bgfx\d|Ascend", re.I)
_BRACKET = re.compile(r"\bdevice\s+\d+\s+\[(?:0x[0-9a-fA-F]+|([0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})"
                      r"(?:\.[0-7])?)\]")  # rccl-tests prints the function too: [0002:00:00.0]


def listing(lines: list[Line]) -> SmiText:
    """The modules the device lines name, one per rank (host and device), with the bus id where the line
    prints it whole ([0000:04:00]; an old build's [0x18] is the bus number alone, its domain not said): a
    node's module list when the run was all the capture holds. Ranks on several hosts are said in a note,
    since their bus ids repeat from host to host."""
    out = SmiText()
    seen: dict[tuple[str, str], SmiTextModule] = {}
    numbers: dict[tuple[str, str], str] = {}  # an old build's bus number alone ('[0x1a]'), said, never a bus id
    for ln in lines:
        if (m := _fields(ln.text)) is None:
            continue
        if _OTHER_VENDOR.search(m[3]) or "rccl" in ln.text.lower():
            return SmiText()  # rccl-tests: AMD's modules, never read as NVIDIA's
        b = _BRACKET.search(ln.text)
        bus = bus_key(b.group(1)) if b is not None and b.group(1) else f"{UNNAMED} #{len(seen) + 1}"
        if b is not None and not b.group(1) and (n := _BUS_NUMBER.search(b.group(0))) is not None:
            numbers.setdefault((m[1], m[0]), n.group(0).lower())
        name = m[3][:120]
        seen.setdefault((m[1], m[0]), SmiTextModule(bus, name, {"Product Name": name}))
    out.modules = list(seen.values())
    hosts: dict[str, int] = {}
    for host, _ in seen:
        hosts[host] = hosts.get(host, 0) + 1
    if out.modules:
        counts = ", ".join(f"{h or _NO_HOST}: {n}" for h, n in hosts.items())
        out.notes.append(f"nccl-tests: {len(out.modules)} module(s) named by its device lines on {len(hosts)} "
                         f"host(s) ({counts}); only their model and bus "
                         "id are known" + ("; bus ids repeat from host to host" if len(hosts) > 1 else "") +
                         _numbers_said(numbers))
    return out


_BUS_NUMBER = re.compile(r"0x[0-9a-fA-F]+")


def _numbers_said(numbers: dict[tuple[str, str], str]) -> str:
    """The bus numbers an old build prints ('[0x1a]'), by host and rank: the PCI bus alone (no domain, device or
    function), so said, never made a bus id."""
    if not numbers:
        return ""
    said = ", ".join(f"rank {rank} on {host} {n}" for (host, rank), n in list(numbers.items())[:16])
    return f"; PCI bus numbers printed (the bus alone, no domain, device or function: no bus id made of them): {said}"


def amd_listing(lines: list[Line]) -> ListedParse | None:
    """The AMD modules rccl-tests' device lines name ('#  Rank  0 Group  0 Pid 37300 on g100n126 device  0
    [0000:05:00] AMD Instinct MI300X'), one per rank, with the bus id where the line prints it whole: the
    file's AMD module list when the run is all it holds. None where no device line names an AMD module."""
    seen: dict[tuple[str, str], ListedModule] = {}
    for ln in lines:
        if "device" not in ln.text or (m := DEVICE_LINE.match(ln.text.strip())) is None:
            continue
        if not (_OTHER_VENDOR.search(m.group(4)) or "rccl" in ln.text.lower()) or "Ascend" in m.group(4):
            continue
        b = _BRACKET.search(ln.text)
        bus = bus_key(b.group(1)) if b is not None and b.group(1) else None
        label = f"GPU {m.group(3)} on {m.group(2) or _NO_HOST}"
        seen.setdefault((m.group(2), m.group(1)), ListedModule(label, m.group(4)[:120], bus, tool="rccl-tests"))
    if not seen:
        return None
    hosts = list(dict.fromkeys(h for h, _ in seen))
    note = (f"rccl-tests: {len(seen)} module(s) named by its device lines on {len(hosts)} host(s) "
            f"({', '.join(hosts[:4])}); only their model and bus id are known")
    return ListedParse(modules=list(seen.values()), notes=[note + ("; bus ids repeat from host to host"
                                                                   if len(hosts) > 1 else "")])


_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\w+)\s+(sum|prod|max|min|avg|none|mulsum)\s+(-?\d+)\s")
_TYPE_BYTES = {"int8": 1, "uint8": 1, "char": 1, "half": 2, "float16": 2, "bfloat16": 2, "bf16": 2, "int32": 4,
               "uint32": 4, "int": 4, "float": 4, "float32": 4, "int64": 8, "uint64": 8, "double": 8, "float64": 8}


def op_from_rows(lines: list[Line], first_row: int | None) -> str:
    """The collective a table's first row shows when nothing names it: all_reduce is the one whose
    count is the whole size with a reduction and no root (reduce_scatter and all_gather count a
    rank's share; broadcast and reduce have a root); "unknown" where the row does not tell."""
    for ln in lines:
        if first_row is not None and ln.no < first_row:
            continue
        m = _ROW.match(ln.text)
        if m is None:
            continue
        size, count, dtype, redop, root = int(m.group(1)), int(m.group(2)), m.group(3), m.group(4), int(m.group(5))
        width = _TYPE_BYTES.get(dtype.lower())
        if width and redop != "none" and root == -1 and count * width == size:
            return "all_reduce"
        return "unknown"
    return "unknown"
