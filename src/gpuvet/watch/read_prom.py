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
from gpuvet.watch import bounds
from gpuvet.watch.recording import Recording, SeriesMerger


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
    """Feeds (metric, labels, time, value) into a recording through a merger, within the bounds
    on series, modules and readings; temperatures and powers outside their range are dropped
    and counted (``finish`` adds the note)."""

    def __init__(self, source: str, where: str | None = None) -> None:
        self.rec = Recording(source)
        self.merger = SeriesMerger()
        self.where = where or source
        self.readings = 0
        self.dropped = bounds.Dropped(self.where)
        self._names: dict[tuple[tuple[str, str], ...], str | None] = {}

    def module_of(self, labels: dict[str, str], place: str = "") -> str | None:
        key = tuple(sorted(labels.items()))
        name = self._names.get(key, "")
        if name == "":
            if len(self._names) >= bounds.MAX_SERIES:
                raise bounds.too_many(len(self._names), bounds.MAX_SERIES, "series (distinct label sets)",
                                      place or self.where, "read fewer nodes at a time (--match, or a dump per "
                                                           "rack), or drop labels that change per scrape.")
            node = labels.get("Hostname") or labels.get("hostname") or labels.get("instance") or "node"
            gpu = labels.get("gpu") or labels.get("module") or labels.get("UUID") or labels.get("uuid")
            if gpu is None:
                name = None
            else:
                meta = self.rec.module(node, gpu, labels.get("UUID") or labels.get("uuid"),
                                       labels.get("modelName") or labels.get("model"),
                                       labels.get("pci_bus_id") or labels.get("bus_id"))
                name = meta.name
                if len(self.rec.modules) > bounds.MAX_MODULES:
                    raise bounds.too_many(len(self.rec.modules) - 1, bounds.MAX_MODULES, "modules",
                                          place or self.where, "read fewer nodes at a time (--match, or a dump "
                                                               "per rack).")
            self._names[key] = name
        return name

    def add(self, metric: str, labels: dict[str, str], t: float, value: float, module: str | None = None,
            place: str = "") -> None:
        """One reading at a checked time; ``module`` when the caller has already resolved ``labels``."""
        spec = METRICS.get(metric)
        if spec is None or not math.isfinite(value):
            if spec is not None:  # NaN, +Inf: no reading, counted and said as the CSV reader does
                self.dropped.not_finite(spec.field, place or metric, repr(value))
            return
        if module is None:
            module = self.module_of(labels, place)
            if module is None:
                return
        self.readings += 1
        if self.readings > bounds.MAX_POINTS:
            raise bounds.too_many(bounds.MAX_POINTS, bounds.MAX_POINTS, "readings", self.where,
                                  "read a shorter span, a larger --step, or fewer modules (--match).")
        if not self._add_event_field(spec.field, labels, module, t, value):
            value *= spec.scale
            if spec.field in _RANGES:
                if self.dropped.check(value, _RANGES[spec.field], spec.field, place or metric) is None:
                    return
            elif spec.field in _COUNTS and not 0 <= value < 2**63:
                return  # a count no counter reaches: no reading
            self.merger.add(module, t, spec.field, value)

    def _add_event_field(self, field: str, labels: dict[str, str], module: str, t: float, value: float) -> bool:
        """Throttle masks and reasons, Xids and the slowdown point (True: ``field`` was one, taken or
        left out for a value no such reading has); False for a plain figure."""
        if field == "throttle":
            if 0 <= value < 2**64:  # NVML's masks are 64-bit
                self.merger.add_throttle(module, t, int(value))
        elif field == "throttle_reason":
            if value >= 1:
                self.merger.add_throttle(module, t, REASON_BITS.get(labels.get("reason", ""), 0))
        elif field == "xid":
            if 0 <= value < 2**31:
                self.merger.add_xid(module, t, int(value))
        elif field == "slowdown_c":
            if bounds.TEMP_C[0] < value <= bounds.TEMP_C[1]:
                self.rec.modules[module].slowdown_c = value
        else:
            return False
        return True

    def finish(self) -> Recording:
        self.merger.into(self.rec)
        note = self.dropped.note()
        if note:
            self.rec.notes.append(note)
        return self.rec


_RANGES = {"temp_c": bounds.TEMP_C, "power_w": bounds.POWER_W}
MS_STAMPS_FROM = 1e11  # Prometheus' text format stamps in ms (1e11 ms is 1973); OpenMetrics' seconds stay below
_COUNTS = {"ecc_corrected", "ecc_uncorrected", "pcie_gen", "pcie_width", "nvlink_up"}


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
    """Raises GpuvetError when no line carries a timestamp (a dump without them has no time
    axis to replay), and for a time, number or label set outside the bounds, naming its line."""
    sink = SeriesSink("Prometheus exposition text", where)
    known = untimed = 0
    series: dict[str, tuple[dict[str, str], str | None]] = {}
    for number, raw in enumerate(lines, 1):
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
        place = f"{where}:{number}"
        try:
            value = float(bounds.number_text(m.group(4), place))
            stamp = float(bounds.number_text(m.group(5), place))
        except ValueError:
            continue
        t = bounds.check_time(stamp / 1000.0 if stamp > MS_STAMPS_FROM else stamp, place)
        text = m.group(3) or ""
        seen = series.get(text)
        if seen is None:
            labels = _labels(text, place)
            seen = series[text] = (labels, sink.module_of(labels, place))
        if seen[1] is not None:
            sink.add(metric, seen[0], t, value, seen[1], place)
    if known == 0:
        raise GpuvetError("no dcgm-exporter (DCGM_FI_DEV_…) or gpuvet (gpuvet_module_…) series in this "
                          "Prometheus text", where=where,
                          fix="dump the exporter's metrics with their names unchanged.")
    if untimed == known:
        raise GpuvetError("the Prometheus text has no timestamps, so its samples cannot be placed in time",
                          where=where, fix="export with timestamps (e.g. from Prometheus' /federate, or "
                                           "promtool tsdb dump), or save /api/v1/query_range JSON.")
    return sink.finish()


def _labels(text: str, place: str) -> dict[str, str]:
    pairs = _LABEL.findall(text)
    check_labels(len(pairs), max((max(len(k), len(v)) for k, v in pairs), default=0), place)
    return {k: v.replace('\\"', '"').replace("\\\\", "\\") for k, v in pairs}


def check_labels(count: int, longest: int, place: str) -> None:
    if count > bounds.MAX_LABELS:
        raise bounds.too_many(count, bounds.MAX_LABELS, "labels on one series", place,
                              "drop the extra labels in the export (relabelling); dcgm-exporter writes about 8.")
    if longest > bounds.MAX_LABEL_CHARS:
        raise GpuvetError(f"a label name or value of {longest:,} characters (at most {bounds.MAX_LABEL_CHARS:,})",
                          where=place, fix="check the export: host names, UUIDs and model names are short.")


# --- range-query JSON ---------------------------------------------------------------------
def is_range_json(head: str) -> bool:
    return head.lstrip().startswith(("{", "["))


def read_range_json(text: str, where: str) -> Recording:
    sink = SeriesSink("Prometheus query_range JSON", where)
    add_range_json(sink, text, where)
    return sink.finish()


_ANSWER_FIX = "save the JSON of /api/v1/query_range?query=DCGM_FI_DEV_GPU_TEMP&start=…&end=…&step=… as it came."


def parse_json(text: str | bytes, where: str) -> Any:
    """The JSON in ``text``; raises GpuvetError for text that is not JSON, nests deeper than the
    reader follows (the interpreter's recursion limit, ~1,000; an answer nests 5) or holds an
    integer of more than 4,300 digits."""
    if isinstance(text, bytes) and text[:3] == b"\xef\xbb\xbf" or isinstance(text, str) and text[:1] == bounds.BOM:
        text = text[3:] if isinstance(text, bytes) else text[1:]  # a byte-order mark is no JSON, but harmless
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise GpuvetError(f"not JSON ({exc.msg} at line {exc.lineno})", where=where, fix=_ANSWER_FIX) from None
    except RecursionError:
        raise GpuvetError("JSON nested deeper than its reader follows (a query_range answer nests 5 levels)",
                          where=where, fix=_ANSWER_FIX) from None
    except (ValueError, UnicodeDecodeError) as exc:  # an integer beyond Python's 4,300 digits; bytes not UTF-8
        raise GpuvetError(f"not JSON a reader can take ({str(exc)[:80]})", where=where, fix=_ANSWER_FIX) from None


def add_range_json(sink: SeriesSink, text: str | Any, where: str) -> int:
    """Adds one response (text or parsed) or a list of them; returns the series count. Raises
    GpuvetError naming the series and point of anything not of the answer's shape."""
    doc = parse_json(text, where) if isinstance(text, str | bytes) else text
    docs = doc if isinstance(doc, list) else [doc]
    count = 0
    for n, d in enumerate(docs):
        data = d.get("data") if isinstance(d, dict) else None
        result = data.get("result") if isinstance(data, dict) else None
        if not isinstance(result, list) or data.get("resultType") != "matrix":  # type: ignore[union-attr]
            raise GpuvetError("not a Prometheus range-query answer (expected data.resultType 'matrix' with "
                              "data.result series)", where=where if len(docs) == 1 else f"{where}: answer {n}",
                              fix=_ANSWER_FIX)
        for i, series in enumerate(result):
            place = f"{where}: data.result[{i}]" if len(docs) == 1 else f"{where}: answer {n}, data.result[{i}]"
            count += _add_series(sink, series, place)
    return count


def _add_series(sink: SeriesSink, series: Any, place: str) -> int:
    metric_obj = series.get("metric") if isinstance(series, dict) else None
    values = series.get("values") if isinstance(series, dict) else None
    if not isinstance(metric_obj, dict) or not isinstance(values, list):
        what = ("a series that is not an object" if not isinstance(series, dict) else
                f"'metric' is {_kind(metric_obj)}, not an object of labels" if not isinstance(metric_obj, dict) else
                f"'values' is {_kind(values)}, not a list of [time, \"value\"] points")
        raise GpuvetError(what, where=place, fix=_ANSWER_FIX)
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in metric_obj.items()):
        raise GpuvetError("a label value that is not a string", where=f"{place}.metric", fix=_ANSWER_FIX)
    check_labels(len(metric_obj), max((max(len(k), len(v)) for k, v in metric_obj.items()), default=0), place)
    labels = dict(metric_obj)
    metric = labels.pop("__name__", "")
    if metric not in METRICS:
        return 0
    module = sink.module_of(labels, place)
    if module is None:
        return 0
    for j, point in enumerate(values):
        if not isinstance(point, list) or len(point) != 2:
            raise GpuvetError(f"point {j} is {_kind(point)}, not [time, \"value\"]", where=f"{place}.values",
                              fix=_ANSWER_FIX)
        stamp, value = point
        at = f"{place}.values[{j}]"
        sink.add(metric, labels, bounds.check_time(_number(stamp, at), at), _number(value, at), module, at)
    return 1


def _number(x: Any, where: str) -> float:
    """A JSON number or a number in a string (Prometheus writes values as "61", "NaN", "+Inf")."""
    if isinstance(x, str):
        try:
            return float(bounds.number_text(x, where))
        except ValueError:
            raise GpuvetError(f"{x[:20]!r} is not a number", where=where, fix=_ANSWER_FIX) from None
    if isinstance(x, int) and not isinstance(x, bool):
        if x.bit_length() > 128:
            raise GpuvetError(f"an integer of {x.bit_length():,} bits: no reading has more than 128",
                              where=where, fix=_ANSWER_FIX)
        return float(x)
    if isinstance(x, float):
        return x
    raise GpuvetError(f"{_kind(x)} where a number belongs", where=where, fix=_ANSWER_FIX)


def _kind(x: Any) -> str:
    return {type(None): "null", bool: "true/false", dict: "an object", list: "a list", str: "a string"}.get(
        type(x), "a number")
