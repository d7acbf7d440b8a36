"""The GPU exporters' Prometheus text (issue 46): ``# HELP``/``# TYPE`` lines and samples
``name{label="value",…} value [timestamp]``, as any exporter serves them and a user pastes them from ``curl
…/metrics``. dcgm-exporter's ``DCGM_FI_*`` samples and AMD device-metrics-exporter's ``gpu_*`` samples name their
module in the labels (gpu, UUID, pci_bus_id, modelName; gpu_id, card_model, serial_number): each becomes one module
with the readings its fields map to, dcgm-exporter's as the -q fields nvidia-smi prints for the same counters (so -q's
rules judge them), AMD's as the ECC count amd-smi gives. YX1: the first dcgm-exporter's (gpu-monitoring-tools 1.x)
lower-case ``dcgm_*`` names are the same fields, and omnistat's ``rocm_*`` samples (labelled by card) are AMD
modules whose uncorrectable count is the largest of its ``rocm_ras_*_uncorrectable_count``. A counter of 0 says
nothing; a sample cut mid-line is not read (said in a note). The Xid metric is plugin_xids' (it reads its samples
with ``sample``)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from gpuvet.captures.kernel import bus
from gpuvet.captures.links import NvLinkParse
from gpuvet.captures.records import (
    AMD_EXPORTER,
    DCGM_EXPORTER,
    EXPORTER_NVLINK,
    ListedModule,
    ListedParse,
    NvLinkErrors,
    SmiTextModule,
)
from gpuvet.captures.smi_text import SmiText
from gpuvet.captures.text import Line

_SAMPLE = re.compile(r"^\s*([A-Za-z_:][A-Za-z0-9_:]*)(?:\{((?:[^{}\"]|\"(?:[^\"\\]|\\.)*\")*)\})?"
                     r"\s+([-+]?(?:\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|NaN|[-+]?Inf))(?:\s+-?\d+)?\s*$")
_META = re.compile(r"^\s*#\s+(?:HELP|TYPE)\s+([A-Za-z_:][A-Za-z0-9_:]*)(?:\s|$)")
_LABEL = re.compile(r'(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"')
DCGM, AMD = DCGM_EXPORTER, AMD_EXPORTER
NVLINK_KIND = EXPORTER_NVLINK  # the kind its NVLink counters are read as (doctor cites the file by it)
# dcgm-exporter's fields -> the -q field nvidia-smi prints for the same reading (smi_text judges those)
_DCGM_FIELDS = {
    "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL": "ECC Errors/Volatile/Double Bit/Total",
    "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL": "ECC Errors/Aggregate/Double Bit/Total",
    "DCGM_FI_DEV_RETIRED_DBE": "Retired Pages/Double Bit ECC",
    "DCGM_FI_DEV_RETIRED_SBE": "Retired Pages/Single Bit ECC",
    "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS": "Remapped Rows/Uncorrectable Error",
}
# readings said as -q prints them (inventory's power, the temperature), never a count judged
_READINGS = {"DCGM_FI_DEV_POWER_USAGE": ("GPU Power Readings/Power Draw", " W"),
             "DCGM_FI_DEV_GPU_TEMP": ("Temperature/GPU Current Temp", " C")}
# the first exporter's lower-case names (gpu-monitoring-tools 1.x, 'dcgm_power_usage{gpu="3",uuid="GPU-…"} 24.196')
_OLD_NAMES = {"dcgm_ecc_dbe_volatile_total": "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
              "dcgm_ecc_dbe_aggregate_total": "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL",
              "dcgm_retired_pages_dbe": "DCGM_FI_DEV_RETIRED_DBE", "dcgm_retired_pages_sbe": "DCGM_FI_DEV_RETIRED_SBE",
              "dcgm_retired_pages_pending": "DCGM_FI_DEV_RETIRED_PENDING", "dcgm_power_usage": "DCGM_FI_DEV_POWER_USAGE",
              "dcgm_gpu_temp": "DCGM_FI_DEV_GPU_TEMP"}
_YES_NO = {"DCGM_FI_DEV_RETIRED_PENDING": "Retired Pages/Pending Page Retirement",
           "DCGM_FI_DEV_ROW_REMAP_FAILURE": "Remapped Rows/Remapping Failure Occurred"}
# an NVLink error counter: per link (_L<k>) or the module's total; its words name the counter (CRC FLIT, REPLAY, …)
_NVLINK = re.compile(r"^DCGM_FI_DEV_NVLINK_(\w*?ERROR\w*?)(?:_COUNT)?(?:_TOTAL|_L(\d{1,2}))?$")
# per block, and _total: the largest is the count (omnistat's: one per RAS block, 'rocm_ras_umc_uncorrectable_count')
_AMD_UNCORRECTABLE = re.compile(r"^gpu_ecc_uncorrect_|^rocm_ras_\w+_uncorrectable_count$")
OMNISTAT = "omnistat"

_MAX_COUNT = 2.0**64  # a counter no exporter can hold (an unsigned 64-bit counter's range)


@dataclass(frozen=True)
class Sample:
    """One sample line: the metric, its labels as printed (escapes kept), its value."""

    name: str
    labels: dict[str, str]
    value: float
    no: int


def sample(text: str, no: int = 0) -> Sample | None:
    """The sample a whole line holds; None for anything else (a line cut mid-way included)."""
    m = _SAMPLE.match(text)
    if m is None:
        return None
    value = float(m.group(3))
    if not -_MAX_COUNT < value < _MAX_COUNT:  # +Inf, -Inf or beyond any 64-bit counter: no reading, as NaN
        value = math.nan
    return Sample(m.group(1), dict(_LABEL.findall(m.group(2) or "")), value, no)


def module_of(labels: dict[str, str]) -> str:
    """dcgm-exporter's module from its labels: the bus id, else the UUID, else the GPU index."""
    where = labels.get("pci_bus_id") or labels.get("PCI_BUS_ID")
    return bus(where) if where else labels.get("UUID") or labels.get("uuid") or f"GPU{labels.get('gpu', '?')}"


def _read(lines: list[Line], wanted: tuple[str, ...]) -> tuple[list[Sample], set[int], list[int]]:
    """The samples of the metrics named with one of ``wanted``'s prefixes, the lines read (their HELP/TYPE lines
    too) and those that open like one of them but are no whole sample (a cut)."""
    got, claimed, cut = [], set(), []
    for ln in lines:
        text = ln.text
        if not any(w in text for w in wanted):
            continue
        if (meta := _META.match(text)) is not None:
            claimed.update([ln.no] if meta.group(1).startswith(wanted) else [])
        elif (s := sample(text, ln.no)) is not None and s.name.startswith(wanted):
            got.append(s)
            claimed.add(ln.no)
        elif text.lstrip().startswith(wanted):
            cut.append(ln.no)
    return got, claimed, cut


def _cut_note(tool: str, cut: list[int]) -> list[str]:
    return [f"{tool}: {len(cut)} line(s) open like a sample but are no whole one (line {cut[0]}: cut mid-line?); "
            "not read"] if cut else []


def parse_dcgm(lines: list[Line]) -> SmiText:
    """dcgm-exporter's samples as a module list (for choose_smi), each module's readings as -q's fields."""
    got, claimed, cut = _read(lines, ("DCGM_", "dcgm_"))
    out, by = SmiText(claimed=claimed), {}
    got = [Sample(_OLD_NAMES.get(s.name, s.name), s.labels, s.value, s.no) for s in got]
    for s in got:
        if "gpu" not in s.labels and "UUID" not in s.labels:
            continue
        key = module_of(s.labels)
        if key not in by:
            fields = {"Index": s.labels["gpu"]} if s.labels.get("gpu", "").isdigit() else {}
            uuid = s.labels.get("UUID") or s.labels.get("uuid")
            fields.update({"GPU UUID": uuid} if uuid else {})
            name = s.labels.get("modelName") or s.labels.get("model_name") or ""
            by[key] = SmiTextModule(key if "pci_bus_id" in s.labels else f"{key} (bus id not in the labels)", name,
                                    fields)
            out.modules.append(by[key])
        _reading(by[key].fields, s)
    out.modules.sort(key=lambda m: int(m.fields.get("Index", "999")))  # the exporter's order is its own
    if out.modules:
        hosts = sorted({s.labels["Hostname"] for s in got if s.labels.get("Hostname")})
        out.notes.append(f"{DCGM}: {len(out.modules)} module(s) named by its labels, {len(got)} sample(s) of "
                         f"{len({s.name for s in got})} metric(s) read (host {', '.join(hosts) or 'not named'}); "
                         "counters of 0 say nothing")
        said = [f"GPU {m.fields.get('Index', '?')} {m.fields[path]}" for m in out.modules for path, _ in _READINGS.values()
                if path in m.fields]
        out.notes += [f"{DCGM}: readings as printed: {', '.join(said[:16])}"] if said else []
    out.notes += _cut_note(DCGM, cut)
    return out


def _reading(fields: dict[str, str], s: Sample) -> None:
    """A sample's reading put where -q prints the same one (the larger of two samples of one field)."""
    if s.name in _DCGM_FIELDS and s.value == s.value:  # NaN is no reading
        path = _DCGM_FIELDS[s.name]
        fields[path] = str(max(int(s.value), int(fields.get(path, "0"))))
    elif s.name in _READINGS and s.value == s.value:
        path, unit = _READINGS[s.name]
        fields[path] = f"{s.value:g}{unit}"
    elif s.name in _YES_NO:
        fields[_YES_NO[s.name]] = "Yes" if s.value > 0 or fields.get(_YES_NO[s.name]) == "Yes" else "No"


def _amd_key(s: Sample) -> str | None:
    """The module an AMD sample names: device-metrics-exporter's gpu_id ('GPU 0'), omnistat's card ('card0')."""
    if s.name.startswith("gpu_") and s.labels.get("gpu_id", "").isdigit():
        return f"GPU {s.labels['gpu_id']}"
    return f"card{s.labels['card']}" if s.name.startswith("rocm_") and s.labels.get("card", "").isdigit() else None


def parse_amd(lines: list[Line]) -> ListedParse:
    """AMD device-metrics-exporter's ``gpu_*`` samples labelled by gpu_id, omnistat's ``rocm_*`` labelled by card: one
    module each, its uncorrectable ECC count the largest of its uncorrectable samples (gpu_ecc_uncorrect_*,
    rocm_ras_*_uncorrectable_count)."""
    got, claimed, cut = _read(lines, ("gpu_", "rocm_"))
    got = [s for s in got if _amd_key(s) is not None]
    out = ListedParse(claimed={s.no for s in got} | {n for n in claimed if got})
    by: dict[str, tuple[dict[str, str], int | None]] = {}
    for s in got:
        key = _amd_key(s) or ""
        labels, ecc = by.get(key, ({}, None))
        if _AMD_UNCORRECTABLE.match(s.name) and s.value == s.value:
            ecc = max(ecc or 0, int(s.value))
        by[key] = labels | s.labels, ecc
    for key, (labels, ecc) in by.items():
        out.modules.append(ListedModule(key, labels.get("card_model") or None,
                                        bus(labels["pci_bus_id"]) if labels.get("pci_bus_id") else None,
                                        uuid=labels.get("gpu_uuid") or None, ecc_uncorrectable=ecc,
                                        vbios=labels.get("vbios") or None, tool=OMNISTAT if key[0] == "c" else AMD))
        out.driver = out.driver or labels.get("driver_ver") or None
    for tool, named in ((AMD, "gpu_id"), (OMNISTAT, "card")):
        mine = [m for m in out.modules if m.tool == tool]
        if mine:
            out.kinds.append(tool)
            read = sum(1 for s in got if (s.name[0] == "g") == (tool == AMD))
            out.notes.append(f"{tool}: {len(mine)} module(s) named by {named}, {read} sample(s) read (model "
                             f"{'from card_model' if any(m.name for m in mine) else 'not in the labels'}); "
                             "counters of 0 say nothing")
    out.notes += _cut_note(AMD, cut) if out.modules else []
    return out


def parse_dcgm_nvlink(lines: list[Line]) -> NvLinkParse:
    """dcgm-exporter's NVLink error counters as nvlink -e's, on the module the labels name (link -1: a total over
    the module's links); a counter of 0 is kept (read, says nothing)."""
    got, claimed, _ = _read(lines, ("DCGM_FI_DEV_NVLINK_",))
    out = NvLinkParse()
    for s in got:
        m = _NVLINK.match(s.name)
        if m is None or s.value != s.value or ("gpu" not in s.labels and "UUID" not in s.labels):
            continue
        link = int(m.group(2)) if m.group(2) else -1
        out.errors.append(NvLinkErrors(module_of(s.labels), link, m.group(1).replace("_", " "), int(s.value)))
        out.claimed.add(s.no)
    return out
