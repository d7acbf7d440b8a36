"""The GPU device nodes a container toolkit or a shell lists (issue 46, batch BJ), read as what they say of the GPUs:

- ``ls -l /dev/nvidia*`` (and ``ls -al``, a glob of some nodes): each ``crw-rw-rw- 1 root root 195, 6 … /dev/nvidia6``
  line a node with its major and minor; /dev/nvidiaN is the GPU of minor N (the driver makes one per GPU it brought
  up), nvidiactl, nvidia-modeset, nvidia-uvm(-tools) and nvidia-caps the driver's other nodes (major 195 the driver's,
  nvidia-uvm's its own dynamic major).
- ``nvidia-ctk cdi generate``'s log (logrus: ``INFO[0000] Using driver version 550.67``, ``Selecting /dev/nvidia0 as
  /dev/nvidia0``, ``Generated CDI spec with version 0.8.0``, ``WARN[0000] Could not locate …``; or
  ``level=info msg="…"``): the driver version, the device nodes it put in the spec, its warnings said.
- ``amd-ctk gpu list`` (ROCm container toolkit): ``Found 1 AMD GPU device(s)``, ``amd.com/gpu=0`` and the /dev/dri
  nodes under it: one AMD module per device index.

Each /dev/nvidiaN is a module listed by its minor (no model, no bus id printed); nothing is judged (a container is
given some of the host's GPUs by design: device_nodes.py judges nodes against lspci's functions)."""

from __future__ import annotations

import re

from gpuvet.captures.records import UNNAMED, ListedModule, ListedParse, SmiTextModule
from gpuvet.captures.smi_text import SmiText
from gpuvet.captures.text import MAX_MODULES, Line

MARKS = ("/dev/nvidia", "amd-ctk", "AMD GPU device", "amd.com/gpu=")
_LONG = re.compile(r"^\s*c[rwxsStT-]{9}[+.@]?\s+\d{1,4}\s+\S{1,32}\s+\S{1,32}\s+(\d{1,4}),\s*(\d{1,7})\s+"
                   r"\S{1,12}\s+\S{1,4}\s+\S{1,8}\s+/dev/(nvidia[\w-]{0,24}(?:/\S{1,40})?)\s*$")
_LS = re.compile(r"(?:^|[\s$#>])ls(?:\s+-[a-zA-Z]{1,8}){0,4}(?:\s+/dev/nvidia\S{0,40}){1,12}\s*$")
_CTK = re.compile(r"^\s*(?:(INFO|WARN|ERRO|DEBU)\[\d{1,8}\]\s+(\S.{0,400})|.{0,80}\blevel=(\w{1,8}) msg=\"(.{1,400})\")$")
_SELECT = re.compile(r"^Selecting (/dev/\S{1,60}) as /dev/")
_DRIVER = re.compile(r"^Using driver version (\d{2,4}\.\d{1,3}(?:\.\d{1,3})?)")
_GPU_NODE = re.compile(r"nvidia(\d{1,3})")
_FOUND = re.compile(r"^\s*Found (\d{1,4}) AMD GPU devices?(?:\(s\))?\s*$")
_AMD_ID = re.compile(r"^\s*amd\.com/gpu=(all|\d{1,4})\s*$")
_DRI = re.compile(r"^\s+(/dev/dri/(?:card|renderD)\d{1,4})\s*$")


def listing(lines: list[Line]) -> SmiText:
    """The NVIDIA GPUs the nodes name (by minor), the driver nvidia-ctk found, and what the listing says."""
    out = SmiText()
    nodes: dict[str, str] = {}  # node -> 'major, minor' (ls -l) or '' (nvidia-ctk's selection)
    warnings: list[str] = []
    if not any("/dev/nvidia" in ln.text for ln in lines):  # another logrus tool's log names no node: not nvidia-ctk's
        return out
    for ln in lines:
        if "nvidia" not in ln.text and "level=" not in ln.text and "[0" not in ln.text:
            continue
        if "ls " in ln.text and _LS.search(ln.text) is not None:  # the command above the listing
            out.claimed.add(ln.no)
        elif (m := _LONG.match(ln.text)) is not None:
            nodes[m.group(3)] = f"{m.group(1)}, {m.group(2)}"
            out.claimed.add(ln.no)
        elif (c := _CTK.match(ln.text)) is not None and _ctk(c, ln, nodes, warnings, out):
            out.claimed.add(ln.no)
    gpus = sorted({int(g.group(1)) for n in nodes if (g := _GPU_NODE.fullmatch(n)) is not None})[:MAX_MODULES]
    out.modules = [SmiTextModule(UNNAMED if not k else f"{UNNAMED} #{k + 1}", "", {"Minor Number": str(n)})
                   for k, n in enumerate(gpus)]  # no bus id printed: the minor is -q's Minor Number
    if nodes:
        out.notes.append(_said(nodes, gpus, warnings))
    return out


def _ctk(c: re.Match[str], ln: Line, nodes: dict[str, str], warnings: list[str], out: SmiText) -> bool:
    """One nvidia-ctk log line: read where it is one of its own (a selection, the driver, a spec, a warning)."""
    level, msg = (c.group(1) or c.group(3) or "").upper()[:4], c.group(2) or c.group(4) or ""
    if (s := _SELECT.match(msg)) is not None:
        if s.group(1).startswith("/dev/nvidia"):
            nodes.setdefault(s.group(1).removeprefix("/dev/"), "")
        return True
    if (d := _DRIVER.match(msg)) is not None:
        out.driver = d.group(1)
        return True
    if level == "WARN" or msg.startswith(("Generated CDI spec", "Auto-detected mode", "Using /", "Selecting /")):
        warnings += [msg[:160]] if level == "WARN" else []
        return True
    return False


def _said(nodes: dict[str, str], gpus: list[int], warnings: list[str]) -> str:
    listed = ", ".join(f"/dev/{n}" + (f" ({v})" if v else "") for n, v in sorted(nodes.items()))
    count = f"{len(gpus)} GPU node(s) (/dev/nvidia{', '.join(map(str, gpus))})" if gpus else "no /dev/nvidiaN node"
    warned = f"; nvidia-ctk warned: {' | '.join(warnings)}" if warnings else ""
    return f"NVIDIA device nodes: {count}; {listed}; listed, not judged{warned}"


def amd(lines: list[Line]) -> ListedParse:
    """amd-ctk gpu list's devices as AMD modules (their /dev/dri nodes said); empty where the lines hold none."""
    out = ListedParse()
    if not any("amd.com/gpu=" in ln.text or "AMD GPU device" in ln.text for ln in lines):
        return out
    found: int | None = None
    current: ListedModule | None = None
    said: dict[str, list[str]] = {}
    for ln in lines:
        if (f := _FOUND.match(ln.text)) is not None:
            found = int(f.group(1))
        elif (a := _AMD_ID.match(ln.text)) is not None:
            current = None if a.group(1) == "all" else ListedModule(f"GPU {a.group(1)}")
            out.modules += [current] if current is not None and len(out.modules) < MAX_MODULES else []
        elif current is not None and (d := _DRI.match(ln.text)) is not None:
            said.setdefault(current.label, []).append(d.group(1))
        elif "amd-ctk" not in ln.text:
            current = None
            continue
        out.claimed.add(ln.no)
    if not out.claimed:
        return ListedParse()
    out.kinds.append("amd-ctk gpu list")
    nodes = "; ".join(f"{k}: {', '.join(v)}" for k, v in said.items())
    out.notes.append(f"amd-ctk gpu list: {len(out.modules)} AMD GPU(s) listed" + (f" (it says it found {found})"
                     if found is not None and found != len(out.modules) else "") + (f"; {nodes}" if nodes else ""))
    return out
