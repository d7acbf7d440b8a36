"""Evidence captured on a machine without gpuvet: `nvidia-smi -q` (text), nccl-tests output,
nvbandwidth output and kernel log lines with Xid errors. (`nvidia-smi -q -x` and
`nvidia-smi topo -m` are read by ``gpuvet.backends.capture``.) Each parser raises CaptureError
naming the file and what was expected."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from gpuvet.errors import CaptureError

XID_MEANINGS = {
    13: "graphics engine exception (often an application bug, sometimes hardware)",
    31: "GPU memory page fault (application or driver)",
    43: "GPU stopped processing",
    45: "preemptive cleanup after a previous error",
    48: "double-bit ECC error (uncorrectable memory error)",
    61: "internal micro-controller breakpoint/warning",
    62: "internal micro-controller halt",
    63: "ECC page retirement or row remapping recorded",
    64: "ECC page retirement or row remapping failure",
    74: "NVLink error",
    79: "GPU has fallen off the bus",
    92: "high single-bit ECC error rate",
    94: "contained ECC error",
    95: "uncontained ECC error",
    119: "GSP RPC timeout",
    120: "GSP error",
}


@dataclass(frozen=True)
class XidLine:
    bus_id: str
    code: int
    text: str


@dataclass(frozen=True)
class NcclRow:
    size_bytes: int
    time_us: float
    algbw: float
    busbw: float
    wrong: int | None


@dataclass
class NcclResult:
    op: str
    ranks: int | None
    rows: list[NcclRow]
    avg_busbw: float | None
    where: str


@dataclass
class SmiTextModule:
    bus_id: str
    product: str
    fields: dict[str, str]


@dataclass
class Captures:
    xids: list[XidLine] = field(default_factory=list)
    nccl: list[NcclResult] = field(default_factory=list)
    nvbandwidth: dict[str, list[list[float | None]]] = field(default_factory=dict)  # test -> matrix (GB/s)
    smi_text: list[SmiTextModule] = field(default_factory=list)
    topo_and_xml: list[str] = field(default_factory=list)  # paths for CaptureBackend
    files: list[str] = field(default_factory=list)


_XID = re.compile(r"NVRM: Xid \(PCI:([0-9a-fA-F:.]+)\): (\d+),")


def parse_xid_log(text: str, where: str) -> list[XidLine]:
    lines = [XidLine(m.group(1).upper()[-12:] if len(m.group(1)) > 7 else m.group(1).upper(), int(m.group(2)),
                     line.strip()) for line in text.splitlines() if (m := _XID.search(line))]
    if not lines:
        raise CaptureError("no `NVRM: Xid (PCI:…): N,` lines", where=where,
                           fix="capture the kernel log with `dmesg -T | grep -i xid` or `journalctl -k | grep Xid`.")
    return lines


_NCCL_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\w+)\s+(\w+|-)\s+(-?\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\S+)")


def parse_nccl_tests(text: str, where: str) -> NcclResult:
    """The table nccl-tests prints (out-of-place columns are used)."""
    op = "unknown"  # nccl-tests does not print its own name: the command line or the file name may
    for name in ("all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast", "reduce", "sendrecv"):
        if f"{name}_perf" in text or name in Path(where).name or name.replace("_", "") in Path(where).name:
            op = name
            break
    ranks = len(re.findall(r"#\s+Rank\s+\d+ Group", text)) or None
    rows = []
    for line in text.splitlines():
        if line.lstrip().startswith("#"):
            continue
        r = _NCCL_ROW.match(line)
        if r:
            wrong = r.group(9)
            rows.append(NcclRow(int(r.group(1)), float(r.group(6)), float(r.group(7)), float(r.group(8)),
                                int(wrong) if wrong.isdigit() else None))
    avg = re.search(r"Avg bus bandwidth\s*:\s*([\d.]+)", text)
    if not rows:
        raise CaptureError("no result rows (size count type redop root time algbw busbw #wrong …)", where=where,
                           fix="give the complete stdout of an nccl-tests binary (all_reduce_perf -b 8 -e 1G -g 8).")
    return NcclResult(op, ranks, rows, float(avg.group(1)) if avg else None, where)


_NVB_TITLE = re.compile(r"^Running (\w+)\.")


def parse_nvbandwidth(text: str, where: str) -> dict[str, list[list[float | None]]]:
    """Each test's matrix: rows and columns as nvbandwidth prints them; N/A is None."""
    out: dict[str, list[list[float | None]]] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        title = _NVB_TITLE.match(lines[i].strip())
        if not title:
            i += 1
            continue
        name = title.group(1)
        i += 1
        while i < len(lines) and not re.match(r"^\s+\d+(\s+\d+)*\s*$", lines[i]):
            i += 1
        i += 1  # the column header
        matrix: list[list[float | None]] = []
        while i < len(lines) and re.match(r"^\s*\d+\s", lines[i]):
            cells = lines[i].split()[1:]
            matrix.append([None if c in ("N/A", "-") else float(c) for c in cells])
            i += 1
        if matrix:
            out[name] = matrix
    if not out:
        raise CaptureError("no `Running <test>.` section with a bandwidth matrix", where=where,
                           fix="give the stdout of nvbandwidth (e.g. nvbandwidth -t device_to_device_memcpy_read_ce).")
    return out


def parse_smi_text(text: str, where: str) -> list[SmiTextModule]:
    """`nvidia-smi -q`: one block per `GPU 00000000:18:00.0`; nested `key : value` lines
    flattened as `Section/Key`."""
    modules: list[SmiTextModule] = []
    current: SmiTextModule | None = None
    stack: list[tuple[int, str]] = []
    for raw in text.splitlines():
        if not raw.strip():
            continue
        gpu = re.match(r"^GPU ([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d)\s*$", raw)
        if gpu:
            current = SmiTextModule(gpu.group(1).upper()[-12:], "", {})
            modules.append(current)
            stack = []
            continue
        if current is None:
            continue
        indent = len(raw) - len(raw.lstrip())
        key, sep, value = raw.strip().partition(":")
        key, value = key.strip(), value.strip()
        while stack and stack[-1][0] >= indent:
            stack.pop()
        if sep and value:
            path = "/".join([s for _, s in stack] + [key])
            current.fields[path] = value
            if key == "Product Name":
                current.product = value
        else:
            stack.append((indent, key))
    if not modules:
        raise CaptureError("no `GPU 00000000:xx:00.0` sections", where=where,
                           fix="capture it with `nvidia-smi -q > smi.txt`.")
    return modules


def sniff(path: str) -> str:
    """What kind of capture a file is: topo, smi_xml, smi_text, nccl, nvbandwidth, xid."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise CaptureError(f"cannot read it ({exc.strerror})", where=path, fix="check the path.") from None
    head = text[:4000]
    if head.lstrip().startswith("<?xml") or "<nvidia_smi_log" in head:
        return "smi_xml"
    if "NVSMI LOG" in head or re.search(r"^GPU [0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:", head, re.M):
        return "smi_text"
    if "nvbandwidth" in head.lower() or re.search(r"^Running \w+_(ce|sm)\.", text, re.M):
        return "nvbandwidth"
    if "NVRM: Xid" in text:
        return "xid"
    if "busbw" in head and ("nccl" in head.lower() or "algbw" in head):
        return "nccl"
    if "Legend:" in text and re.search(r"^\s*GPU0", text, re.M):
        return "topo"
    raise CaptureError("not a capture doctor can read", where=path,
                       fix="give nvidia-smi -q (text or -x XML), nvidia-smi topo -m, nccl-tests output, nvbandwidth "
                           "output, or kernel log lines with Xid errors.")


def read_captures(paths: list[str]) -> Captures:
    caps = Captures(files=list(paths))
    for p in paths:
        kind = sniff(p)
        text = Path(p).read_text(encoding="utf-8", errors="replace")
        if kind in ("topo", "smi_xml"):
            caps.topo_and_xml.append(p)
        elif kind == "smi_text":
            caps.smi_text += parse_smi_text(text, p)
        elif kind == "nccl":
            caps.nccl.append(parse_nccl_tests(text, p))
        elif kind == "nvbandwidth":
            caps.nvbandwidth.update(parse_nvbandwidth(text, p))
        elif kind == "xid":
            caps.xids += parse_xid_log(text, p)
    return caps
