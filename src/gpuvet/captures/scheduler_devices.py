"""Issue 46 (R14D): the GPUs a scheduler's own view of a node lists, read into the inventory (nothing judged: none
of them prints a fault here).

- HAMi's device plugin (Project-HAMi/HAMi, its NVIDIA plugin's register.go): ``nvml registered device id=1,
  memory=4096, type=NVIDIA GeForce GTX 1050, numa=0`` per device at each registration, and ``"start working on
  the devices" devices=[{"id":"GPU-…","index":1,"count":10,"devmem":4096,"devcore":100,"type":"NVIDIA-NVIDIA
  GeForce GTX 1050","numa":0,"mode":"hami-core","health":true}]`` (the list registered; index 0 is omitted, Go's
  omitempty). One device per index; the list where printed, else the register lines.
- ``ray status``: the autoscaler's older ``1 node(s) with resources: {'GPU': 4.0, 'accelerator_type:T4': 1.0, …}``
  and its newer Resources block (``Usage:`` then `` 0.0/4.0 GPU``, `` 0.0/1.0 accelerator_type:A100``): the GPUs
  Ray counts, of the accelerator type it names; no bus id, no index of the driver's."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from gpuvet.captures.app_errors import AppErrorsParse
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.records import UNNAMED, SmiTextModule
from gpuvet.captures.smi_text import SmiText
from gpuvet.captures.text import MAX_MODULES, Line

WORDS = ("nvml registered device", "start working on the devices", "node(s) with resources", "MemoryScaling=",
         "Autoscaler status", "Cluster status")
_REGISTERED = re.compile(r"\bnvml registered device id=(?P<id>\d{1,3}), memory=(?P<mem>\d{1,8}), type=(?P<type>[^,]{1,80}),"
                         r" numa=(?P<numa>-?\d{1,3})")
_WORKING = re.compile(r"\"start working on the devices\" devices=(?P<list>\[.*\])\s*$")
_SCALING = re.compile(r"\bMemoryScaling=\s*[\d.]+ registeredmem=\s*\d+")
_RAY_NODES = re.compile(r"^\s*(?P<n>\d{1,5}) node\(s\) with resources: (?P<res>\{.*\})\s*$")
_RAY_GPU = re.compile(r"'GPU':\s*(?P<gpus>\d+(?:\.\d+)?)")
_RAY_TYPE = re.compile(r"'accelerator_type:(?P<type>[\w.-]{1,40})'")
_RAY_USAGE = re.compile(r"^\s*[\d.]+/(?P<total>\d+(?:\.\d+)?) (?P<what>GPU|accelerator_type:(?P<type>[\w.-]{1,40}))\s*$")
_NOTED = ("HAMi device plugin:", "ray status:")  # read's notes, by which seen() knows it found a view
_FIND = ("registered device", "start working on the devices", "node(s) with resources", "MemoryScaling=", "status: ")
_BLOCK = 60  # lines: a ray status block's Resources follow its head within these
_RAY_HEAD = re.compile(r"={3,} (?:Autoscaler|Cluster) status: ")
_RAY_ACTIVE = re.compile(r"^(\d{1,5}) node_[0-9a-f]{6,}$")  # an Active node of the newer status


@dataclass(frozen=True)
class Device:
    """One device as the scheduler registered it: its index, model, memory (MiB) and NUMA node where said."""

    index: str
    model: str
    mib: str | None = None
    numa: str | None = None


def read(lines: list[Line], out: AppErrorsParse, marks: Marks | None = None) -> None:
    """The lines these views hold, claimed into ``out`` (read, no fault), and a note of what they list."""
    if marks is not None and not any(marks.may(w) for w in WORDS):
        return
    lines = _relevant(lines)
    hami, ray, cluster = _hami(lines), _ray(lines), _ray_cluster(lines)
    out.claimed |= {ln.no for ln in lines if _REGISTERED.search(ln.text) or _WORKING.search(ln.text)
                    or _SCALING.search(ln.text) or ((ray or cluster) and (_RAY_NODES.match(ln.text)
                                                    or _RAY_HEAD.search(ln.text) or _RAY_USAGE.match(ln.text)))}
    if hami:
        out.notes.append(f"{_NOTED[0]} {len(hami)} device(s) registered ({_said(hami)})")
    if ray:
        out.notes.append(f"{_NOTED[1]} {len(ray)} GPU(s) in the one node's resources ({_said(ray)}); no bus id, "
                         "Ray's count only")
    if cluster:
        out.notes.append(cluster)


def seen(parsed: AppErrorsParse) -> bool:
    """Whether ``read`` found a view listing GPUs in the text (its note): only then is ``listing`` asked."""
    return any(n.startswith(_NOTED) for n in parsed.notes)


def _relevant(lines: list[Line]) -> list[Line]:
    """The lines either view may hold: its own words', and a ray status block's (its head to its next blank gap)."""
    joined = "\n".join(ln.text for ln in lines)  # one search per word of the whole text first: most hold none
    present = tuple(w for w in _FIND if w in joined)
    del joined
    keep: set[int] = set()
    for i in holding(lines, present) if present else ():
        keep.add(i)
        if "status: " in lines[i].text:
            keep.update(range(i + 1, min(i + 1 + _BLOCK, len(lines))))
    return [lines[i] for i in sorted(keep)]


def listing(lines: list[Line]) -> SmiText:
    """The devices HAMi's plugin registered, else the GPUs ray status counts, as modules (no bus id)."""
    lines = _relevant(lines)
    devices = _hami(lines) or _ray(lines)
    modules = [SmiTextModule(f"{UNNAMED} #{n + 1}", d.model, {"Product Name": d.model, "Index": d.index} | (
        {"FB Memory Usage/Total": f"{d.mib} MiB"} if d.mib else {})) for n, d in enumerate(devices[:MAX_MODULES])]
    out = SmiText(modules=modules)
    if modules:
        out.notes.append(f"the scheduler's view lists {len(modules)} GPU(s) ({_said(devices)}); their bus ids are not "
                         "in it")
    return out


def _said(devices: list[Device]) -> str:
    numa = {d.numa for d in devices if d.numa is not None}
    mem = {d.mib for d in devices if d.mib}
    return ", ".join([f"{len(devices)}x {' / '.join(sorted({d.model for d in devices}))}"]
                     + ([f"{'/'.join(sorted(mem))} MiB each"] if mem else [])
                     + ([f"NUMA {'/'.join(sorted(numa))}"] if numa else []))


def _hami(lines: list[Line]) -> list[Device]:
    """HAMi's devices: its working list where printed (the last), else its register lines, one per id."""
    listed: list[Device] = []
    registered: dict[str, Device] = {}
    for ln in lines:
        if "start working" in ln.text and (w := _WORKING.search(ln.text)) is not None:
            listed = _working(w.group("list")) or listed
        elif "registered device" in ln.text and (r := _REGISTERED.search(ln.text)) is not None:
            registered[r.group("id")] = Device(r.group("id"), r.group("type").strip(), r.group("mem"), r.group("numa"))
    if listed:
        return [Device(d.index, d.model, d.mib, d.numa or (registered[d.index].numa if d.index in registered else None))
                for d in listed]
    return [registered[k] for k in sorted(registered, key=int)]


def _working(text: str) -> list[Device]:
    """The devices of the plugin's JSON list ('type' is the vendor, '-', the model)."""
    try:
        items = json.loads(text)
    except ValueError:
        return []
    out = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict) or not isinstance(item.get("type"), str):
            continue
        model = item["type"].split("-", 1)[1] if item["type"].startswith("NVIDIA-") else item["type"]
        numa = item.get("numa")
        out.append(Device(str(item.get("index", 0)), model, str(item["devmem"]) if "devmem" in item else None,
                          str(numa) if isinstance(numa, int) else None))
    return out


def _ray(lines: list[Line]) -> list[Device]:
    """The GPUs ray status counts, as one node's modules only where the cluster is one node (review 67b F9: a
    cluster's totals are not one host's modules): its node line's GPUs, else the Resources block's totals."""
    groups = _ray_groups(lines)
    if groups:
        if sum(n for n, _, _ in groups) != 1:
            return []
        _, gpus, kind = groups[0]
        return [Device(str(i), kind) for i in range(gpus)]
    if not any(_RAY_HEAD.search(ln.text) for ln in lines) or _ray_active(lines) != 1:
        return []
    total, model = _ray_total(lines)
    return [Device(str(i), model) for i in range(total)]


def _ray_groups(lines: list[Line]) -> list[tuple[int, int, str]]:
    """The older status' node lines with GPUs: (nodes, GPUs on each, accelerator type)."""
    groups = []
    for ln in lines:
        if "node(s) with resources" in ln.text and (m := _RAY_NODES.match(ln.text)) is not None:
            gpus, kind = _RAY_GPU.search(m.group("res")), _RAY_TYPE.search(m.group("res"))
            if gpus and int(float(gpus.group("gpus"))):
                groups.append((int(m.group("n")), int(float(gpus.group("gpus"))), kind.group("type") if kind else "GPU"))
    return groups


def _ray_active(lines: list[Line]) -> int:
    """The nodes the newer status lists as Active (' 1 node_3f1c2e' lines under 'Active:'), 0 where none."""
    active, inside = 0, False
    for ln in lines:
        text = ln.text.strip()
        if text.endswith(":") and text[:-1].isalpha():
            inside = text == "Active:"
        elif inside and (m := _RAY_ACTIVE.match(text)) is not None:
            active += int(m.group(1))
    return active


def _ray_total(lines: list[Line]) -> tuple[int, str]:
    """The Resources block's GPU total and its one accelerator type ('GPU' where none or several)."""
    usage = [m for ln in lines if "/" in ln.text and (m := _RAY_USAGE.match(ln.text)) is not None]
    total = next((int(float(m.group("total"))) for m in usage if m.group("what") == "GPU"), 0)
    kinds = [m.group("type") for m in usage if m.group("type")]
    return total, kinds[0] if len(kinds) == 1 else "GPU"


def _ray_cluster(lines: list[Line]) -> str:
    """A cluster's GPUs said per node where its status gives them, else its totals and node count: not modules."""
    if groups := _ray_groups(lines):
        if sum(n for n, _, _ in groups) == 1:
            return ""
        per = ", ".join(f"{n} node(s) x {g} {kind}" for n, g, kind in groups)
        return f"{_NOTED[1]} a cluster of {sum(n for n, _, _ in groups)} node(s) with GPUs: {per}; not one node's modules"
    if not any(_RAY_HEAD.search(ln.text) for ln in lines) or (active := _ray_active(lines)) == 1:
        return ""
    total, model = _ray_total(lines)
    nodes = f"{active} node(s)" if active else "nodes it does not count here"
    return (f"{_NOTED[1]} the cluster's totals, {total} {model} GPU(s) over {nodes}; its status gives no count per "
            "node: not one node's modules") if total else ""
