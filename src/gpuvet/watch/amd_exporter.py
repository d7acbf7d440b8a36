"""The watch's readings under AMD Device Metrics Exporter's names, so a dashboard built on it
(ROCm/device-metrics-exporter) works on a node that runs gpuvet instead: ``--names amd``.

Names and units follow the exporter's metric list (docs/configuration/metricslist.md of
github.com/ROCm/device-metrics-exporter): lower-case field names without a prefix (the exporter's
default; ``MetricsFieldPrefix`` adds one such as ``amd_``), °C, W, %, MHz, MB. The exporter
declares each field a gauge. Labels: ``gpu_id`` (index), ``gpu_uuid``, ``card_model``,
``hostname``; the serial number and driver labels it can add are not read by gpuvet's watch.
``gpu_junction_temperature`` carries the temperature the watch samples (the junction/hotspot on
AMD modules, the GPU temperature on others)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gpuvet.backends.readings import Sample
from gpuvet.watch.dcgm import DcgmView, gpu_index

MB = 2**20  # the exporter's MB of VRAM are MiB, as amd-smi's


@dataclass(frozen=True)
class AmdField:
    name: str
    help: str
    read: Callable[[Sample], float | int | None]
    slow: bool = False  # read from the last sample with slow fields (ECC)
    labels: str = ""  # extra labels, as the exporter writes them


def _mb(value: int | None) -> float | None:
    return None if value is None else value / MB


def _total(s: Sample) -> float | None:
    return None if s.fb_used_bytes is None or s.fb_free_bytes is None else (s.fb_used_bytes + s.fb_free_bytes) / MB


FIELDS: tuple[AmdField, ...] = (
    AmdField("gpu_junction_temperature", "Hotspot (aka junction) temperature value in Celsius", lambda s: s.temp_c),
    AmdField("gpu_power_usage", "GPU power usage in Watts", lambda s: s.power_w),
    AmdField("gpu_gfx_activity", "Graphics engine usage percentage (0 - 100)",
             lambda s: None if s.util is None else round(100 * s.util)),
    AmdField("gpu_clock", "Clock measure of the GPU in Mhz", lambda s: s.sm_clock_mhz,
             labels='clock_type="GPU_CLOCK_TYPE_SYSTEM"'),
    AmdField("gpu_clock", "Clock measure of the GPU in Mhz", lambda s: s.mem_clock_mhz,
             labels='clock_type="GPU_CLOCK_TYPE_MEMORY"'),
    AmdField("gpu_energy_consumed", "Accumulated energy consumed by the GPU in Micro Jules (uJ)",
             lambda s: None if s.energy_mj is None else s.energy_mj * 1000),
    AmdField("gpu_total_vram", "Total VRAM available in MB", _total),
    AmdField("gpu_used_vram", "Total VRAM memory used in MB", lambda s: _mb(s.fb_used_bytes)),
    AmdField("gpu_free_vram", "Total VRAM memory free in MB", lambda s: _mb(s.fb_free_bytes)),
    AmdField("gpu_ecc_correct_total", "Total Correctable ECC error count", lambda s: s.ecc_corrected, slow=True),
    AmdField("gpu_ecc_uncorrect_total", "Total Uncorrectable ECC error count", lambda s: s.ecc_uncorrected, slow=True),
)
LABELS = ("gpu_id", "gpu_uuid", "card_model", "hostname")


def _escape(value: str) -> str:
    return value.replace("\\", r"\\").replace('"', r"\"").replace("\n", r"\n")


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def amd_text(view: DcgmView) -> str:
    """The exporter's block in Prometheus text format 0.0.4 (one HELP/TYPE per name)."""
    order = sorted(view.identities.values(), key=lambda i: (gpu_index(i, 10**6), i.uuid))
    labels = {i.uuid: ",".join(f'{k}="{_escape(v)}"' for k, v in zip(
        LABELS, (str(gpu_index(i, n)), i.uuid, i.model, view.hostname), strict=True)) for n, i in enumerate(order)}
    out: list[str] = []
    declared: set[str] = set()
    for f in FIELDS:
        source = view.slow if f.slow else view.latest
        rows = [(lab, v) for u, lab in labels.items() if u in source and (v := f.read(source[u])) is not None]
        if not rows:
            continue
        if f.name not in declared:
            declared.add(f.name)
            out.append(f"# HELP {f.name} {f.help}\n# TYPE {f.name} gauge\n")
        extra = f",{f.labels}" if f.labels else ""
        out.extend(f"{f.name}{{{lab}{extra}}} {_number(float(v))}\n" for lab, v in rows)
    return "".join(out)
