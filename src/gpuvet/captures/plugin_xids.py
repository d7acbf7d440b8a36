"""Xids as the GPU monitors of a cluster report them, not as the kernel logs them (issue 46): NVIDIA's Kubernetes
device plugin marks a device unhealthy with ``XidCriticalError: Xid=79 on Device=GPU-…`` (the health checker's
log line, or the node event it raises), and dcgm-exporter serves the last Xid of each GPU as the metric
``DCGM_FI_DEV_XID_ERRORS{gpu="3",UUID="GPU-…",pci_bus_id="…",…} 79``. Each is one Xid on the module it names
(its bus id where the metric gives one, else its UUID); a metric of 0 is no Xid. gpud (leptonai's node agent)
says an Xid in its own words: its event text ``XID 79(GPU has fallen off the bus) detected on PCI:0000:ae:00`` and
its JSON events (``"message": "xid 119 detected by dmesg"``, the Xid and device_uuid again in extra_info's escaped
JSON, read unescaped): one Xid on the module named, "bus id not in the log" where none is. The kernel log's own
lines are kernel.py's."""

from __future__ import annotations

import re

from gpuvet.captures.kernel import NO_BUS, KernelModule, KernelParse, bus
from gpuvet.captures.prom_metrics import module_of, sample
from gpuvet.captures.records import XidLine
from gpuvet.captures.text import Line

# Xid 999 is the plugin's own code (an NVML event wait that failed): accel_runtime reads it, no driver Xid (R8B)
# ('…, All devices will go unhealthy.' where the event names no device: the Xid on the node, bus id not in the log)
_PLUGIN = re.compile(r"XidCriticalError: Xid=(?!999\b)(\d{1,3})(?: on\s+Device=(GPU-[0-9a-fA-F-]{8,40}|"
                     r"MIG-[0-9a-fA-F-]{8,40})|, All devices will go unhealthy)")
# gpud: its event text (a PCI id, else 'by dmesg') and its JSON event's Xid and device, escapes removed
_GPUD = re.compile(r"\bxid (\d{1,3})\s*(?:\([^()]{0,80}\)\s*)?detected (?:on PCI:([0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:"
                   r"[0-9a-fA-F]{2}(?:\.\d)?)|by )", re.IGNORECASE)
# dcgm-exporter's XID metric with its labels but no value (newer exporters label the Xid as err_code)
_BARE = re.compile(r'\bDCGM_FI_DEV_XID_ERRORS\{((?:[^{}"]|"(?:[^"\\]|\\.)*")*)\}')
_LABEL = re.compile(r'(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"')
_GPUD_JSON = re.compile(r'"xid"\s*:\s*(\d{1,3})\b')
_GPUD_UUID = re.compile(r'"device_uuid"\s*:\s*"(GPU-[0-9a-fA-F-]{8,40})"')
# NVML answering GPU_IS_LOST for a GPU named by UUID (gpud's component reason 'failed to get remapped rows for
# GPU-…: … ERROR_GPU_IS_LOST', a monitor's 'NVML_ERROR_GPU_IS_LOST' on a device)
_LOST_UUID = re.compile(r"\b(GPU-[0-9a-fA-F]{8}-[0-9a-fA-F-]{27,31})\b.{0,200}?\b(?:NVML_)?ERROR_GPU_IS_LOST\b")


def parse(lines: list[Line]) -> KernelParse:
    """The Xids the device plugin's lines and dcgm-exporter's XID metric name, one per module and code."""
    out = KernelParse()
    seen: set[tuple[str, int]] = set()
    for ln in lines:
        got = (_plugin(ln.text) if "Xid=" in ln.text else _metric(ln.text) if "XID_ERRORS" in ln.text
               else _gpud(ln.text) if "detected" in ln.text or "xid" in ln.text else None)
        if got is None:
            continue
        out.claimed.add(ln.no)
        module, code = got
        if code and (module, code) not in seen:
            seen.add((module, code))
            out.xids.append(XidLine(module, code, ln.text.strip()[:240], line=ln.no))
    named = {x.code for x in out.xids if x.bus_id != NO_BUS}  # gpud's message beside its event's data naming the GPU
    out.xids = [x for x in out.xids if x.bus_id != NO_BUS or x.code not in named]
    out.modules = [KernelModule(m, "NVIDIA", uuid=m if m.startswith("GPU-") else None)  # a MIG UUID is no module
                   for m in dict.fromkeys(x.bus_id for x in out.xids) if m != NO_BUS and not m.startswith("MIG-")]
    _lost_uuid(lines, out)
    if out.claimed:
        out.notes.append(f"GPU monitors' Xids (the device plugin's XidCriticalError, dcgm-exporter's "
                         f"DCGM_FI_DEV_XID_ERRORS, gpud's events): {len(out.xids)} read from {len(out.claimed)} "
                         "line(s); the kernel log's own Xid lines say more (the process, the engine)")
    return out


def _plugin(text: str) -> tuple[str, int] | None:
    m = _PLUGIN.search(text)
    return (m.group(2) or NO_BUS, int(m.group(1))) if m else None


def _metric(text: str) -> tuple[str, int] | None:
    """A whole sample of the XID metric (prom_metrics reads it): its module from the labels."""
    s = sample(text)
    if s is None:  # the metric's name and labels without a value (a paste's cut, a label listing): its err_code
        bare = _BARE.search(text)
        labels = dict(_LABEL.findall(bare.group(1))) if bare else {}
        code = labels.get("err_code", "")
        return (_module(labels), int(code)) if code.isdigit() and int(code) < 1000 else None
    if s.name != "DCGM_FI_DEV_XID_ERRORS" or not 0 <= s.value < 1000:
        return None
    return _module(s.labels), int(s.value)


def _module(labels: dict[str, str]) -> str:
    """The module the labels name; "bus id not in the log" where none names one (no gpu, UUID or bus label)."""
    named = any(k in labels for k in ("gpu", "UUID", "uuid", "pci_bus_id", "PCI_BUS_ID"))
    return module_of(labels) if named else NO_BUS


def _gpud(text: str) -> tuple[str, int] | None:
    """gpud's event text, or its JSON event's Xid (a cut string read up to the cut): the module it names."""
    if (m := _GPUD.search(text)) is not None:
        return (bus(m.group(2)) if m.group(2) else NO_BUS), int(m.group(1))
    plain = text.replace("\\", "") if '\\"xid\\"' in text else ""  # extra_info's JSON string, escaped
    if (j := _GPUD_JSON.search(plain)) is None:
        return None
    uuid = _GPUD_UUID.search(plain)
    return (uuid.group(1) if uuid else NO_BUS), int(j.group(1))


def _lost_uuid(lines: list[Line], out: KernelParse) -> None:
    """NVML's GPU_IS_LOST on one GPU named by UUID beside one module lost by Xid 79 on a bus id: the same module
    (both say the GPU left the bus), so the module carries the UUID; with more of either, none is paired."""
    lost = {m.group(1) for ln in lines if "GPU_IS_LOST" in ln.text for m in [_LOST_UUID.search(ln.text)] if m}
    fell = [m for m in out.modules if m.uuid is None and any(x.bus_id == m.module and x.code == 79 for x in out.xids)]
    if len(lost) != 1 or len(fell) != 1:
        return
    uuid = lost.pop()
    out.modules = [KernelModule(m.module, m.vendor, m.serial, uuid) if m is fell[0] else m for m in out.modules]
    out.claimed.update(ln.no for ln in lines if uuid in ln.text and "GPU_IS_LOST" in ln.text)
    out.notes.append(f"{fell[0].module}: NVML's GPU_IS_LOST names {uuid}, the one module lost here (Xid 79): "
                     "its UUID")
