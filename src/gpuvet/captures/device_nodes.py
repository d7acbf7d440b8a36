"""GPU functions on the bus against the device nodes their drivers made (issue 46): a capture that lists the GPUs
lspci sees and what ``ls /dev/dri`` (or ``ls -l``, ``/sys/class/drm``, ``/dev/dri/by-path``) or ``ls /dev/nvidia*``
shows. Each GPU an Intel or AMD DRM driver (i915, xe, amdgpu) drives gets a card node and a render node; the NVIDIA
driver makes /dev/nvidiaN for each GPU it brought up. Fewer nodes than GPU functions of those vendors: a module
the driver does not drive (the expectation is the functions lspci lists in the same capture, never the nodes).
A BMC's display function (ASPEED, Matrox) is no compute module: its modesetting driver (ast, mgag200) makes a card
node but no render node, so render nodes are counted where the listing shows them (or is the whole directory);
a partitioned GPU (more nodes than functions) is never short, and a container's or a job's view (docker --gpus,
--device, *_VISIBLE_DEVICES) is not judged: the nodes passed in may be some of the host's GPUs by design."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuvet.captures import absent_stack
from gpuvet.captures.app_errors import AppErrorsParse
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.records import AppError
from gpuvet.captures.text import Line

_BUS = r"(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]"
_CLASS_WORDS = ("VGA compatible controller", "3D controller", "Display controller", "Processing accelerators")
# an lspci device line of a GPU class (-k, -nn, -vv, plain): bus id, class (code), then the vendor's words
_DEVICE = re.compile(r"^\s*(" + _BUS + r")\s+(?:" + "|".join(_CLASS_WORDS) + r")(?:\s*\[[0-9a-f]{4}\])?:\s*(.*)$", re.I)
_VENDORS = (("NVIDIA", re.compile(r"\bNVIDIA\b|\[10de:", re.I)),
            ("AMD", re.compile(r"\[AMD/ATI\]|\bAdvanced Micro Devices\b|\bATI Technologies\b|\[1002:")),
            ("Intel", re.compile(r"^Intel Corporation\b|\[8086:")))
# a node name as ls prints it (bare, under /dev/dri/ or /dev/, or a by-path link's name)
_NODE = re.compile(r"^(?:/dev/dri/|/sys/class/drm/|/dev/)?(card\d+|renderD\d+|controlD\d+|by-path|by-id|version|"
                   r"card\d+-[\w-]+|nvidia\d+|nvidiactl|nvidia-uvm(?:-tools)?|nvidia-modeset|nvidia-caps|kfd)/?:?$")
_LONG = re.compile(r"^[cdl-][rwxsStT+.@-]{9}[+.@]?\s+\d+\s+\S+\s+\S+\s+(?:\d+,\s*)?\d+\s+\S+\s+\S+\s+\S+\s+(\S+)")
_BY_PATH = re.compile(r"\bpci-(" + _BUS + r")-(?:card|render)\s*->")  # ls -l /dev/dri/by-path's link names
_WORDS = ("card", "renderD", "nvidia", "by-path")
# a container's or a job's view: the nodes passed in may be some of the host's GPUs, by design, while its lspci
# lists them all
_SUBSET = ("docker ", "podman ", "--gpus", "--device", "VISIBLE_DEVICES", "kubectl", "ROCR_VISIBLE", "ZE_AFFINITY")


@dataclass
class _Nodes:
    """The device nodes a capture's ls lines show, and the lines that show them."""

    names: set[str] = field(default_factory=set)
    by_path: set[str] = field(default_factory=set)  # the bus ids /dev/dri/by-path links name (a DRM driver's)
    lines: set[int] = field(default_factory=set)

    def count(self, prefix: str) -> int:
        return sum(1 for n in self.names if re.fullmatch(prefix + r"\d+", n))


def parse(lines: list[Line], marks: Marks | None = None) -> AppErrorsParse:
    """A GPU function of Intel, AMD or NVIDIA that no device node answers (see the module's docstring), and the
    device files or RDMA providers absent_stack reads as missing."""
    out = absent_stack.parse(lines, marks)
    nodes = _nodes(lines, marks)
    if (not nodes.names and not nodes.by_path) or holding(lines, _SUBSET, marks):
        return out
    gpus = _gpus(lines, marks)
    dri = [(bus, v, ln) for bus, v, ln in gpus if v in ("Intel", "AMD")]
    nvidia = [(bus, v, ln) for bus, v, ln in gpus if v == "NVIDIA"]
    whole = "by-path" in nodes.names or nodes.count("renderD") > 0  # the directory's listing, not a glob of cards
    if dri and (whole or nodes.count("card")):
        have, kind = (nodes.count("renderD"), "render node(s)") if whole else (nodes.count("card"), "card node(s)")
        _judge(out, dri, have, kind, "/dev/dri", nodes)
    elif dri and nodes.by_path:  # by-path's links alone: each names the function its DRM driver drives
        _judge(out, dri, len({b for b, _, _ in dri} & nodes.by_path), "by-path link(s) to them", "/dev/dri/by-path",
               nodes)
    if nvidia and ("nvidiactl" in nodes.names or nodes.count("nvidia")):
        _judge(out, nvidia, nodes.count("nvidia"), "/dev/nvidiaN node(s)", "/dev", nodes)
    return out


def _judge(out: AppErrorsParse, gpus: list[tuple[str, str, Line]], have: int, kind: str, where: str,
           nodes: _Nodes) -> None:
    """One record per GPU function the nodes cannot answer for: by bus id where the by-path links or a count of
    none name them, else one for the listing."""
    short = len(gpus) - have
    if short <= 0:
        return
    out.claimed |= nodes.lines | {ln.no for _, _, ln in gpus}
    vendors = "/".join(sorted({v for _, v, _ in gpus}))
    said = (f"lspci lists {len(gpus)} {vendors} GPU function(s) ({', '.join(b for b, _, _ in gpus)}), {where} "
            f"holds {have} {kind}")
    undriven = [g for g in gpus if g[0] not in nodes.by_path] if nodes.by_path and where.startswith("/dev/dri") else \
        gpus if have == 0 else []
    for bus, _, ln in undriven:
        out.errors.append(AppError("gpu_no_device_node", ln.no, f"{said}: no driver made a node for {bus}"[:300],
                                   bus, "ls"))
    if not undriven:
        out.errors.append(AppError("gpu_no_device_node", gpus[0][2].no, f"{said}: {short} function(s) the driver "
                                   "does not drive"[:300], None, "ls"))


def _gpus(lines: list[Line], marks: Marks | None) -> list[tuple[str, str, Line]]:
    """Each GPU function of NVIDIA, AMD or Intel an lspci line lists, once by bus id (a BMC's is no vendor's)."""
    out: dict[str, tuple[str, str, Line]] = {}
    for i in holding(lines, _CLASS_WORDS, marks):
        m = _DEVICE.match(lines[i].text)
        vendor = next((v for v, p in _VENDORS if p.search(m.group(2))), None) if m else None
        if m is not None and vendor is not None:
            out.setdefault(m.group(1).upper().removeprefix("0000:"), (m.group(1).upper().removeprefix("0000:"),
                                                                      vendor, lines[i]))
    return list(out.values())


def _nodes(lines: list[Line], marks: Marks | None) -> _Nodes:
    """The node names of ls' lines: a line of names only (ls, ls /dev/nvidia*), ls -l's rows, by-path links."""
    out = _Nodes()
    for i in holding(lines, _WORDS, marks):
        t = lines[i].text.strip()
        if (b := _BY_PATH.search(t)) is not None:
            out.by_path.add(b.group(1).upper().removeprefix("0000:"))
            out.lines.add(lines[i].no)
            continue
        long = _LONG.match(t)
        names = [long.group(1)] if long else t.split()
        found = [m.group(1) for n in names if (m := _NODE.match(n)) is not None]
        if found and len(found) == len(names):
            out.names.update(found)
            out.lines.add(lines[i].no)
    return out
