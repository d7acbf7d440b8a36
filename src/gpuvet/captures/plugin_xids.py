"""Xids as the GPU monitors of a cluster report them, not as the kernel logs them (issue 46): NVIDIA's Kubernetes
device plugin marks a device unhealthy with ``XidCriticalError: Xid=79 on Device=GPU-…`` (the health checker's
log line, or the node event it raises), and dcgm-exporter serves the last Xid of each GPU as the metric
``DCGM_FI_DEV_XID_ERRORS{gpu="3",UUID="GPU-…",pci_bus_id="…",…} 79``. Each is one Xid on the module it names
(its bus id where the metric gives one, else its UUID); a metric of 0 is no Xid. The kernel log's own lines
are kernel.py's."""

from __future__ import annotations

import re

from gpuvet.captures.kernel import KernelParse, bus
from gpuvet.captures.records import XidLine
from gpuvet.captures.text import Line

_PLUGIN = re.compile(r"XidCriticalError: Xid=(\d{1,3}) on Device=(GPU-[0-9a-fA-F-]{8,40}|MIG-[0-9a-fA-F-]{8,40})")
_METRIC = re.compile(r"^\s*DCGM_FI_DEV_XID_ERRORS\{([^{}]*)\}\s+(\d{1,3})(?:\.0+)?(?:\s+\d+)?\s*$")
_LABEL = re.compile(r'(\w+)="([^"]*)"')


def parse(lines: list[Line]) -> KernelParse:
    """The Xids the device plugin's lines and dcgm-exporter's XID metric name, one per module and code."""
    out = KernelParse()
    seen: set[tuple[str, int]] = set()
    for ln in lines:
        got = _plugin(ln.text) if "Xid=" in ln.text else _metric(ln.text) if "XID_ERRORS" in ln.text else None
        if got is None:
            continue
        out.claimed.add(ln.no)
        module, code = got
        if code and (module, code) not in seen:
            seen.add((module, code))
            out.xids.append(XidLine(module, code, ln.text.strip()[:240]))
    if out.claimed:
        out.notes.append(f"GPU monitors' Xids (the device plugin's XidCriticalError, dcgm-exporter's "
                         f"DCGM_FI_DEV_XID_ERRORS): {len(out.xids)} read from {len(out.claimed)} line(s); the kernel "
                         "log's own Xid lines say more (the process, the engine)")
    return out


def _plugin(text: str) -> tuple[str, int] | None:
    m = _PLUGIN.search(text)
    return (m.group(2), int(m.group(1))) if m else None


def _metric(text: str) -> tuple[str, int] | None:
    """A sample of the XID metric: its module from the labels (pci_bus_id, else UUID, else the GPU index)."""
    m = _METRIC.match(text)
    if m is None:
        return None
    labels = dict(_LABEL.findall(m.group(1)))
    where = labels.get("pci_bus_id") or labels.get("PCI_BUS_ID")
    module = bus(where) if where else labels.get("UUID") or labels.get("uuid") or f"GPU{labels.get('gpu', '?')}"
    return module, int(m.group(2))
