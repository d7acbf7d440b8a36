"""Prometheus-shaped telemetry: exposition text dumps (with timestamps) and range-query JSON
(``/api/v1/query_range``, result type ``matrix``), with dcgm-exporter names
(``DCGM_FI_DEV_GPU_TEMP{gpu, UUID, Hostname, modelName}``) or gpuvet's own
(``gpuvet_module_temperature_celsius{uuid, module, model}``, see watch/prometheus.py).

A module is (node, GPU): the node from ``Hostname`` (dcgm-exporter) or ``instance``, the GPU
from ``gpu`` / ``module``, else its UUID."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from gpuvet.backends.readings import ThrottleReason
from gpuvet.errors import GpuvetError
from gpuvet.watch.recording import MAX_SAMPLES, Recording, SeriesMerger


@dataclass(frozen=True)
class Metric:
    field: str  # Sample field, or "throttle", "throttle_reason", "xid", "slowdown_c"
    scale: float = 1.0


DCGM = {
    "DCGM_FI_DEV_GPU_TEMP": Metric("temp_c"), "DCGM_FI_DEV_POWER_USAGE": Metric("power_w"),
    "DCGM_FI_DEV_GPU_UTIL": Metric("util", 0.01), "DCGM_FI_DEV_SM_CLOCK": Metric("sm_clock_mhz"),
    "DCGM_FI_DEV_MEM_CLOCK": Metric("mem_clock_mhz"), "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS": Metric("throttle"),
    "DCGM_FI_DEV_CLOCKS_EVENT_REASONS": Metric("throttle"), "DCGM_FI_DEV_XID_ERRORS": Metric("xid"),
    "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL": Metric("ecc_corrected"), "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL": Metric("ecc_uncorrected"),
    "DCGM_FI_DEV_PCIE_LINK_GEN": Metric("pcie_gen"), "DCGM_FI_DEV_PCIE_LINK_WIDTH": Metric("pcie_width"),
    "DCGM_FI_DEV_SLOWDOWN_TEMP": Metric("slowdown_c"),
}
GPUVET = {
    "gpuvet_module_temperature_celsius": Metric("temp_c"), "gpuvet_module_power_watts": Metric("power_w"),
    "gpuvet_module_utilization_ratio": Metric("util"), "gpuvet_module_sm_clock_hertz": Metric("sm_clock_mhz", 1e-6),
    "gpuvet_module_memory_clock_hertz": Metric("mem_clock_mhz", 1e-6),
    "gpuvet_module_throttle": Metric("throttle_reason"),
    "gpuvet_module_ecc_corrected_errors_total": Metric("ecc_corrected"),
    "gpuvet_module_ecc_uncorrected_errors_total": Metric("ecc_uncorrected"),
    "gpuvet_module_pcie_link_generation": Metric("pcie_gen"), "gpuvet_module_pcie_link_width": Metric("pcie_width"),
    "gpuvet_module_nvlink_up_links": Metric("nvlink_up"),
}
METRICS = {**DCGM, **GPUVET}
REASON_BITS = {r.label: int(r) for r in ThrottleReason}
# the series the history reader asks for, per naming; temperature first (it decides the naming)
QUERY_SETS = {"dcgm-exporter": ["DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_GPU_UTIL",
                                "DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_MEM_CLOCK", "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS",
                                "DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL",
                                "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "DCGM_FI_DEV_SLOWDOWN_TEMP"],
              "gpuvet": ["gpuvet_module_temperature_celsius", "gpuvet_module_power_watts",
                         "gpuvet_module_utilization_ratio", "gpuvet_module_sm_clock_hertz",
                         "gpuvet_module_memory_clock_hertz", "gpuvet_module_throttle",
                         "gpuvet_module_ecc_corrected_errors_total", "gpuvet_module_ecc_uncorrected_errors_total"]}


class SeriesSink:
    """Feeds (metric, labels, time, value) into a recording through a merger."""

    def __init__(self, source: str) -> None:
        self.rec = Recording(source)
        self.merger = SeriesMerger()
        self._names: dict[tuple[tuple[str, str], ...], str | None] = {}

    def module_of(self, labels: dict[str, str]) -> str | None:
        key = tuple(sorted(labels.items()))
        name = self._names.get(key, "")
        if name == "":
            node = labels.get("Hostname") or labels.get("hostname") or labels.get("instance") or "node"
            gpu = labels.get("gpu") or labels.get("module") or labels.get("UUID") or labels.get("uuid")
            if gpu is None:
                name = None
            else:
                meta = self.rec.module(node, gpu, labels.get("UUID") or labels.get("uuid"),
                                       labels.get("modelName") or labels.get("model"),
                                       labels.get("pci_bus_id") or labels.get("bus_id"))
                name = meta.name
            self._names[key] = name
        return name

    def add(self, metric: str, labels: dict[str, str], t: float, value: float, module: str | None = None) -> None:
        """One reading; ``module`` when the caller has already resolved ``labels``."""
        spec = METRICS.get(metric)
        if spec is None or not math.isfinite(value):
            return
        if module is None:
            module = self.module_of(labels)
            if module is None:
                return
        if spec.field == "throttle":
            self.merger.add_throttle(module, t, int(value))
        elif spec.field == "throttle_reason":
            if value >= 1:
                self.merger.add_throttle(module, t, REASON_BITS.get(labels.get("reason", ""), 0))
        elif spec.field == "xid":
            self.merger.add_xid(module, t, int(value))
        elif spec.field == "slowdown_c":
            if value > 0:
                self.rec.modules[module].slowdown_c = value
        else:
            self.merger.add(module, t, spec.field, value * spec.scale)
        if self.merger.count > MAX_SAMPLES:
            raise GpuvetError(f"more than {MAX_SAMPLES:,} samples", where=self.rec.source,
                              fix="read a shorter span, or fewer modules (--match).")

    def finish(self) -> Recording:
        self.merger.into(self.rec)
        return self.rec


# --- exposition text ----------------------------------------------------------------------
_LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)(?:\s+(\S+))?\s*$')
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"')


def is_exposition(head: str) -> bool:
    for line in head.splitlines():
        if line.startswith(("# HELP", "# TYPE")):
            return True
        m = _LINE.match(line)
        if m and (m.group(1) in METRICS or m.group(1).startswith(("DCGM_FI_", "gpuvet_"))):
            return True
    return False


def read_exposition(lines: Iterable[str], where: str) -> Recording:
    """Raises GpuvetError when no line carries a timestamp: a dump without them has no time
    axis to replay."""
    sink = SeriesSink("Prometheus exposition text")
    known = untimed = 0
    series: dict[str, tuple[dict[str, str], str | None]] = {}
    for raw in lines:
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = _LINE.match(line)
        if not m:
            continue
        metric = m.group(1)
        if metric not in METRICS:
            continue
        known += 1
        if m.group(5) is None:
            untimed += 1
            continue
        try:
            value, stamp = float(m.group(4)), float(m.group(5))
        except ValueError:
            continue
        t = stamp / 1000.0 if stamp > 1e11 else stamp  # text format: ms; OpenMetrics: s
        text = m.group(3) or ""
        seen = series.get(text)
        if seen is None:
            labels = {k: v.replace('\\"', '"').replace("\\\\", "\\") for k, v in _LABEL.findall(text)}
            seen = series[text] = (labels, sink.module_of(labels))
        if seen[1] is not None:
            sink.add(metric, seen[0], t, value, seen[1])
    if known == 0:
        raise GpuvetError("no dcgm-exporter (DCGM_FI_DEV_…) or gpuvet (gpuvet_module_…) series in this "
                          "Prometheus text", where=where,
                          fix="dump the exporter's metrics with their names unchanged.")
    if untimed == known:
        raise GpuvetError("the Prometheus text has no timestamps, so its samples cannot be placed in time",
                          where=where, fix="export with timestamps (e.g. from Prometheus' /federate, or "
                                           "promtool tsdb dump), or save /api/v1/query_range JSON.")
    return sink.finish()


# --- range-query JSON ---------------------------------------------------------------------
def is_range_json(head: str) -> bool:
    return head.lstrip().startswith(("{", "["))


def read_range_json(text: str, where: str) -> Recording:
    sink = SeriesSink("Prometheus query_range JSON")
    add_range_json(sink, text, where)
    return sink.finish()


def add_range_json(sink: SeriesSink, text: str | Any, where: str) -> int:
    """Adds one response (text or parsed) or a list of them; returns the series count."""
    try:
        doc = json.loads(text) if isinstance(text, str) else text
    except json.JSONDecodeError as exc:
        raise GpuvetError(f"not JSON ({exc.msg} at line {exc.lineno})", where=where,
                          fix="save the body of /api/v1/query_range as it came.") from None
    docs = doc if isinstance(doc, list) else [doc]
    count = 0
    for d in docs:
        result = d.get("data", {}).get("result") if isinstance(d, dict) else None
        if not isinstance(result, list) or d.get("data", {}).get("resultType") != "matrix":
            raise GpuvetError("not a Prometheus range-query answer (expected data.resultType 'matrix' with "
                              "data.result series)", where=where,
                              fix="save the JSON of /api/v1/query_range?query=DCGM_FI_DEV_GPU_TEMP&start=…&end=…&step=…")
        for series in result:
            labels = {str(k): str(v) for k, v in series.get("metric", {}).items()}
            metric = labels.pop("__name__", "")
            module = sink.module_of(labels)
            if module is None or metric not in METRICS:
                continue
            for stamp, value in series.get("values", []):
                try:
                    sink.add(metric, labels, float(stamp), float(value), module)
                except (TypeError, ValueError):
                    continue
            count += 1
    return count
