"""The watch's readings under dcgm-exporter's names, types, units and labels, so a dashboard
built on dcgm-exporter works unchanged on a node that runs gpuvet instead.

Names, types and help texts follow dcgm-exporter's ``etc/default-counters.csv`` (and, for the
PCIe and clock-reason fields it leaves out, DCGM's ``dcgm_fields.h``); units are DCGM's (MHz,
°C, W, mJ, %, MiB), not Prometheus base units. Labels are dcgm-exporter's: ``gpu`` (index),
``UUID``, ``pci_bus_id``, ``device`` (nvidiaN), ``modelName``, ``Hostname``. dcgm-exporter
writes counters without a ``_total`` suffix, so this block is written here rather than through
prometheus_client (which would add one)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from gpuvet.backends.readings import ModuleIdentity, Sample

MIB = 2**20


@dataclass(frozen=True)
class DcgmField:
    name: str
    type: str  # gauge or counter, as dcgm-exporter declares it
    help: str
    read: Callable[[Sample], float | int | None]
    slow: bool = False  # read from the last sample with slow fields (ECC, PCIe)


def _mib(value: int | None) -> float | None:
    return None if value is None else value / MIB


FIELDS: tuple[DcgmField, ...] = (
    DcgmField("DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).", lambda s: s.sm_clock_mhz),
    DcgmField("DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz).", lambda s: s.mem_clock_mhz),
    DcgmField("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).", lambda s: s.temp_c),
    DcgmField("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).", lambda s: s.power_w),
    DcgmField("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", "Total energy consumption since boot (in mJ).",
              lambda s: s.energy_mj),
    DcgmField("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).",
              lambda s: None if s.util is None else round(100 * s.util)),
    DcgmField("DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB).", lambda s: _mib(s.fb_free_bytes)),
    DcgmField("DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).", lambda s: _mib(s.fb_used_bytes)),
    DcgmField("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "gauge",
              "Current clock throttle reasons (bitmask of DCGM_CLOCKS_THROTTLE_REASON_*).", lambda s: s.throttle),
    DcgmField("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "counter", "Total number of single-bit volatile ECC errors.",
              lambda s: s.ecc_corrected, slow=True),
    DcgmField("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter", "Total number of double-bit volatile ECC errors.",
              lambda s: s.ecc_uncorrected, slow=True),
    DcgmField("DCGM_FI_DEV_PCIE_LINK_GEN", "gauge", "PCIe Current Link Generation.", lambda s: s.pcie_gen, slow=True),
    DcgmField("DCGM_FI_DEV_PCIE_LINK_WIDTH", "gauge", "PCIe Current Link Width.", lambda s: s.pcie_width, slow=True),
    # dcgm-exporter's default-counters.csv: "DCGM_FI_DEV_PCIE_REPLAY_COUNTER, counter, Total number of PCIe retries."
    DcgmField("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "Total number of PCIe retries.",
              lambda s: s.pcie_replays, slow=True),
)
XID_FIELD = ("DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered.")
LABELS = ("gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname")


def gpu_index(ident: ModuleIdentity, fallback: int) -> int:
    """gpuvet names modules gpu0… in PCI bus order, the order NVML and DCGM index them in."""
    digits = ident.id.removeprefix("gpu")
    return int(digits) if digits.isdigit() else fallback


def nvml_bus_id(bus_id: str | None) -> str:
    """dcgm-exporter prints NVML's form, 00000000:18:00.0 (an eight-digit domain)."""
    if not bus_id:
        return ""
    domain, sep, rest = bus_id.partition(":")
    return f"{domain.zfill(8)}:{rest}" if sep and rest.count(":") == 1 else bus_id


def _escape(value: str) -> str:
    return value.replace("\\", r"\\").replace('"', r"\"").replace("\n", r"\n")


def _number(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    return str(int(value)) if float(value).is_integer() else repr(float(value))


@dataclass(frozen=True)
class DcgmView:
    """What one scrape writes: identities, the latest and the latest slow samples, last Xids."""

    identities: dict[str, ModuleIdentity]  # by uuid
    latest: dict[str, Sample]
    slow: dict[str, Sample]
    last_xid: dict[str, int]
    hostname: str


def dcgm_text(view: DcgmView) -> str:
    """The dcgm-exporter block in Prometheus text format 0.0.4."""
    order = sorted(view.identities.values(), key=lambda i: (gpu_index(i, 10**6), i.uuid))
    labels = {i.uuid: _labels(i, n, view.hostname) for n, i in enumerate(order)}
    out: list[str] = []
    for f in FIELDS:
        source = view.slow if f.slow else view.latest
        rows = [(labels[u], f.read(source[u])) for u in labels if u in source]
        _family(out, f.name, f.type, f.help, [(lab, v) for lab, v in rows if v is not None])
    name, kind, doc = XID_FIELD
    # a module off the bus keeps its last Xid: the code that says why it is gone must
    # still reach the fatal-Xid alert after the module stops reporting everything else
    xid_rows = [u for u in labels if u in view.latest or u in view.last_xid]
    _family(out, name, kind, doc, [(labels[u], view.last_xid.get(u, 0)) for u in xid_rows])
    return "".join(out)


def _labels(ident: ModuleIdentity, n: int, hostname: str) -> str:
    index = gpu_index(ident, n)
    values = (str(index), ident.uuid, nvml_bus_id(ident.bus_id), f"nvidia{index}", ident.model, hostname)
    return ",".join(f'{k}="{_escape(v)}"' for k, v in zip(LABELS, values, strict=True))


def _family(out: list[str], name: str, kind: str, doc: str, rows: list[tuple[str, float | int]]) -> None:
    if not rows:
        return
    out.append(f"# HELP {name} {doc}\n# TYPE {name} {kind}\n")
    out.extend(f"{name}{{{lab}}} {_number(float(v))}\n" for lab, v in rows)
