"""rocm-bandwidth-test 2.6's device list (``-t``, and above its copy tables): 'Device Index: N', 'Device Type: CPU'
or 'GPU', 'Device Name: …' per agent the runtime enumerated. A GPU agent is a module; a list of CPU agents only is
the tool's own answer that it saw no GPU (said, never refused, never a module: issue 46's phantom 'unknown' GPUs
came from reading these blocks as nvidia-container-cli's 'Device Index:'); env_report leaves these lines to it."""

from __future__ import annotations

import re

from gpuvet.captures import rocm_validation
from gpuvet.captures.records import ListedModule, ListedParse
from gpuvet.captures.text import Line

TOOL = "rocm-bandwidth-test"
MARKERS = ("Device Type:",)
_INDEX = re.compile(r"^\s*Device Index:\s+(\d{1,4})\s*$")
_TYPE = re.compile(r"^\s*Device Type:\s+(CPU|GPU|DSP|AIE)\s*$", re.I)
_NAME = re.compile(r"^\s*Device Name:\s+(\S.{0,80}?)\s*$")
_FIELD = re.compile(r"^\s*(?:Allocatable Memory Size \(KB\)|Device (?:UUID|BDF|PCI ID|Numa Node)):\s+\S")
_NEAR = 3  # lines from 'Device Index' to its 'Device Type'
# the older releases' 'Device: N, NAME, GPU-UUID, BB:DD.F' list and the lines around its matrices (moved from amd_smi)
_RBT_DEVICE = re.compile(r"^\s*Device:\s*(\d{1,4}),\s*([^,]+?),\s*(GPU-[0-9A-Za-z]+),\s*([0-9a-fA-F]{1,2}):"
                         r"([0-9a-fA-F]{1,2})\.(\d)\s*$")
_RBT_OTHER = re.compile(r"^\s*(RocmBandwidthTest Version|Launch Command is|Device:\s*\d+,|D/D\s|Inter-Device|"
                        r"(Uni|Bi)directional copy peak|\d+(\s+(\d+(\.\d+)?|N/A))+\s*$)")


def index_lines(lines: list[Line]) -> set[int]:
    """The numbers of the 'Device Index' lines whose 'Device Type' follows: this tool's, not container-cli's."""
    if not any("Device Type:" in ln.text for ln in lines):
        return set()
    return {ln.no for i, ln in enumerate(lines) if "Device Index" in ln.text and _INDEX.match(ln.text)
            and any(_TYPE.match(other.text) for other in lines[i + 1:i + 1 + _NEAR])}


def read(lines: list[Line], out: ListedParse) -> None:
    """The agents it lists: GPUs as modules; CPUs only, a note that the tool enumerated no GPU."""
    agents: list[tuple[str, str, str]] = []  # (index, type, name)
    at = index_lines(lines)
    if not at:
        return
    for i, ln in enumerate(lines):
        if ln.no not in at or (index := _INDEX.match(ln.text)) is None:
            continue
        near = lines[i + 1:i + 1 + _NEAR + 1]
        kind = next((t.group(1).upper() for other in near if (t := _TYPE.match(other.text))), "?")
        name = next((m.group(1) for other in near if (m := _NAME.match(other.text))), "unnamed")
        agents.append((index.group(1), kind, name))
        out.claimed |= {ln.no} | {o.no for o in near if _TYPE.match(o.text) or _NAME.match(o.text)
                                  or _FIELD.match(o.text)}
    gpus = [(i, name) for i, kind, name in agents if kind == "GPU"]
    out.host_cpus += [name for _, kind, name in agents if kind == "CPU" and name not in out.host_cpus]
    out.modules += [ListedModule(f"Device {i}", name=name, tool=TOOL) for i, name in gpus]
    if TOOL not in out.kinds:
        out.kinds.append(TOOL)
    if not gpus:
        cpus = [name for _, kind, name in agents if kind == "CPU"]
        out.notes.append(f"{TOOL}: {len(agents)} device(s) listed, {len(cpus)} CPU ({', '.join(dict.fromkeys(cpus))}): "
                         "the tool saw no GPU (no GPU agent enumerated by the ROCm runtime it ran on)")


def read_listed(lines: list[Line], out: ListedParse) -> None:
    """Its device list (GPUs with a UUID and a bus id; CPUs are listed without)."""
    if not any("RocmBandwidthTest" in ln.text or _RBT_DEVICE.match(ln.text) for ln in lines):
        return
    for ln in lines:
        if (m := _RBT_DEVICE.match(ln.text)) is not None:
            bus = f"{int(m.group(4), 16):02X}:{int(m.group(5), 16):02X}.{m.group(6)}"
            out.modules.append(ListedModule(f"Device {m.group(1)}", name=m.group(2).strip(), bus_id=bus,
                                            uuid=m.group(3), tool="rocm-bandwidth-test"))
        elif (dev := rocm_validation.devices([ln])) and rocm_validation.is_cpu(dev[0][1], dev[0][2]):
            if dev[0][1] not in out.host_cpus:  # issue 46: the host CPU the runtime enumerated, not a module
                out.host_cpus.append(dev[0][1])
        elif dev:
            at = re.fullmatch(r"([0-9a-fA-F]{1,2}):([0-9a-fA-F]{1,2})\.(\d)", dev[0][3] or "")  # 2.3.x: no UUID
            short = f"{int(at.group(1), 16):02X}:{int(at.group(2), 16):02X}.{at.group(3)}" if at else None
            out.modules.append(ListedModule(f"Device {dev[0][0]}", name=dev[0][1], bus_id=short,
                                            tool="rocm-bandwidth-test"))
        if _RBT_OTHER.match(ln.text):
            out.claimed.add(ln.no)
    out.kinds.append("rocm-bandwidth-test")
