"""The Prometheus endpoint: metrics named by Prometheus conventions (prefix ``gpuvet_``, base
units, ``_total`` for counters, an ``_info`` metric for identity), labelled by module UUID,
bus id and model; with ``names`` dcgm or both, also (or only) dcgm-exporter's names (watch/dcgm.py);
with amd, only AMD Device Metrics Exporter's names (watch/amd_exporter.py).
A collector reads the watcher's latest state at each scrape."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, InfoMetricFamily, Metric
from prometheus_client.registry import Collector

from gpuvet.backends.readings import ModuleIdentity, Sample, ThrottleReason
from gpuvet.checks.nic_watch import NicPortSample
from gpuvet.watch.amd_exporter import amd_text
from gpuvet.watch.dcgm import DcgmView, dcgm_text
from gpuvet.watch.nic_metrics import nic_metrics

LABELS = ["uuid", "bus_id", "model", "module"]
NAMES = ("gpuvet", "dcgm", "both", "amd")  # which metric names the endpoint serves
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"  # the classic text format, as dcgm-exporter serves
Reader = Callable[[Sample], float | int | None]


@dataclass(frozen=True)
class LadderStep:
    """A module's step on its fault's escalation ladder, as the module ledger says it (docs/ledger.md)."""

    serial: str  # empty where no backend read it
    fault: str
    step: str
    rank: int  # the step's place among the ladders' steps: 0 the least severe (watch)


@dataclass
class ExportState:
    identities: dict[str, ModuleIdentity] = field(default_factory=dict)  # by uuid
    latest: dict[str, Sample] = field(default_factory=dict)  # by uuid
    slow: dict[str, Sample] = field(default_factory=dict)  # last sample with slow fields, by uuid
    events: dict[tuple[str, str], int] = field(default_factory=dict)  # (kind, uuid) -> count
    forecast_s: dict[str, float] = field(default_factory=dict)  # uuid -> seconds until predicted crossing
    host: dict[str, float] = field(default_factory=dict)
    sampler_seconds: float = 0.0
    simulated: bool = False
    last_xid: dict[str, int] = field(default_factory=dict)  # uuid -> last Xid code (DCGM_FI_DEV_XID_ERRORS)
    lost: dict[str, ModuleIdentity] = field(default_factory=dict)  # modules declared lost: their events keep labels
    hostname: str = ""  # the Hostname label of dcgm-exporter's names
    names: str = "gpuvet"  # one of NAMES
    nics: dict[tuple[str, int], NicPortSample] = field(default_factory=dict)  # (device, port): last slow tick
    nic_events: dict[tuple[str, str], int] = field(default_factory=dict)  # (kind, device) -> count
    steps: dict[str, LadderStep] = field(default_factory=dict)  # uuid -> its ladder step (a watch with a logbook)
    lock: threading.Lock = field(default_factory=threading.Lock)


class WatchCollector(Collector):
    def __init__(self, state: ExportState) -> None:
        self.state = state

    def _labels(self, uuid: str) -> list[str]:
        ident = self.state.identities.get(uuid) or self.state.lost.get(uuid)
        return [uuid, (ident.bus_id or "") if ident else "", ident.model if ident else "", ident.id if ident else ""]

    def _per_module(self, family: type[GaugeMetricFamily] | type[CounterMetricFamily], name: str, doc: str,
                    get: Reader, samples: dict[str, Sample]) -> Metric:
        """One metric family with a value per module whose sample has the field."""
        metric = family(f"gpuvet_module_{name}", doc, labels=LABELS)
        for uuid, s in samples.items():
            value = get(s)
            if value is not None:
                metric.add_metric(self._labels(uuid), float(value))
        return metric

    def collect(self) -> Iterator[Metric]:
        st = self.state
        with st.lock:
            gauges: dict[str, tuple[str, Reader]] = {
                "temperature_celsius": ("Module temperature.", lambda s: s.temp_c),
                "power_watts": ("Module power draw.", lambda s: s.power_w),
                "sm_clock_hertz": ("SM clock.", lambda s: s.sm_clock_mhz * 1e6 if s.sm_clock_mhz is not None else None),
                "memory_clock_hertz": ("Memory clock.",
                                       lambda s: s.mem_clock_mhz * 1e6 if s.mem_clock_mhz is not None else None),
                "utilization_ratio": ("Share of time a kernel ran (0-1).", lambda s: s.util),
            }
            for name, (doc, get) in gauges.items():
                yield self._per_module(GaugeMetricFamily, name, doc, get, st.latest)
            throttle = GaugeMetricFamily("gpuvet_module_throttle", "1 while a clock-event (throttle) reason is active.",
                                         labels=[*LABELS, "reason"])
            for uuid, s in st.latest.items():
                for reason in ThrottleReason:
                    throttle.add_metric([*self._labels(uuid), reason.label], float(bool(s.throttle & reason)))
            yield throttle
            slow_gauges: dict[str, tuple[str, Reader]] = {
                "pcie_link_generation": ("PCIe link generation now.", lambda s: s.pcie_gen),
                "pcie_link_width": ("PCIe link width now (lanes).", lambda s: s.pcie_width),
                "nvlink_up_links": ("Fabric links active.", lambda s: s.nvlink_up),
            }
            for name, (doc, get) in slow_gauges.items():
                yield self._per_module(GaugeMetricFamily, name, doc, get, st.slow)
            counters: list[tuple[str, str, Reader]] = [
                ("ecc_corrected_errors", "Correctable ECC errors (volatile).", lambda s: s.ecc_corrected),
                ("ecc_uncorrected_errors", "Uncorrectable ECC errors (volatile).", lambda s: s.ecc_uncorrected),
                ("pcie_replays", "PCIe replays (the link retried a transfer).", lambda s: s.pcie_replays),
                ("fabric_link_errors", "Fabric link error counters summed (NVLink CRC/replay/recovery, "
                 "xGMI RAS).", lambda s: s.nvlink_errors)]
            for name, doc, get in counters:
                yield self._per_module(CounterMetricFamily, name, doc, get, st.slow)
            events = CounterMetricFamily("gpuvet_events", "Events raised by gpuvet's detectors.",
                                         labels=[*LABELS, "kind"])
            for (kind, uuid), count in st.events.items():
                events.add_metric([*self._labels(uuid), kind], float(count))
            yield events
            fc = GaugeMetricFamily("gpuvet_module_overheat_forecast_seconds",
                                   "Predicted time until the module reaches its slowdown temperature.", labels=LABELS)
            for uuid, seconds in st.forecast_s.items():
                fc.add_metric(self._labels(uuid), seconds)
            yield fc
            yield self._ladder_steps()
            info = InfoMetricFamily("gpuvet_module", "Module identity.", labels=LABELS)
            for uuid in st.identities:
                info.add_metric(self._labels(uuid), {"simulated": str(st.simulated).lower()})
            yield info
            yield from nic_metrics(list(st.nics.values()), st.nic_events)
            cost = GaugeMetricFamily("gpuvet_sampler_seconds", "Time to sample one module once.")
            cost.add_metric([], st.sampler_seconds)
            yield cost
            if "cpu_load_ratio" in st.host:
                yield GaugeMetricFamily("gpuvet_host_cpu_load_ratio", "Host CPU load (0-1).",
                                        value=st.host["cpu_load_ratio"])
            if "memory_used_bytes" in st.host:
                yield GaugeMetricFamily("gpuvet_host_memory_used_bytes", "Host memory in use.",
                                        value=st.host["memory_used_bytes"])


    def _ladder_steps(self) -> Metric:
        """Each module's ladder step, labelled with the step and its fault; the value orders steps
        (0 watch … 5 rma with gpuvet's ladders), so ``>= 4`` selects drain and rma."""
        metric = GaugeMetricFamily("gpuvet_module_ladder_step", "The module's step on its fault's escalation "
                                   "ladder (the module ledger's; 0 is the least severe step).",
                                   labels=[*LABELS, "serial", "fault", "step"])
        for uuid, s in self.state.steps.items():
            metric.add_metric([*self._labels(uuid), s.serial, s.fault, s.step], float(s.rank))
        return metric


def parse_address(text: str) -> tuple[str, int]:
    """'127.0.0.1:9400', '[::1]:9400', ':9400' or '9400' (loopback); port 1-65535."""
    from gpuvet.errors import GpuvetError
    from gpuvet.quantities import parse_host_port

    try:
        return parse_host_port(text, "address")
    except GpuvetError as exc:
        raise ValueError(exc.message) from None


def exposition(state: ExportState, registry: CollectorRegistry) -> bytes:
    """One scrape in text format 0.0.4: gpuvet's names, dcgm-exporter's, both, or AMD's exporter's."""
    parts = []
    if state.names in ("gpuvet", "both"):
        parts.append(generate_latest(registry))
    if state.names in ("dcgm", "both", "amd"):
        with state.lock:
            # lost modules keep their place (gpu index) and their last Xid, nothing else
            view = DcgmView({**state.lost, **state.identities}, dict(state.latest), dict(state.slow),
                            dict(state.last_xid), state.hostname)
        parts.append((amd_text(view) if state.names == "amd" else dcgm_text(view)).encode("utf-8"))
    return b"".join(parts)


class _Handler(BaseHTTPRequestHandler):
    server: _MetricsServer

    def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
        if self.path.split("?")[0] not in ("/metrics", "/"):
            self.send_error(404, "metrics are at /metrics")
            return
        body = self.server.render()
        self.send_response(200)
        self.send_header("Content-Type", CONTENT_TYPE)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - scrapes are not news
        return


class _MetricsServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], render: Callable[[], bytes]) -> None:
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self.render = render
        super().__init__(address, _Handler)


def serve(state: ExportState, address: str) -> tuple[_MetricsServer, CollectorRegistry]:
    """Serve ``state`` at ``address`` from a daemon thread; ``server.shutdown()`` stops it.
    Raises OSError when the address cannot be bound, ValueError when it is not host:port."""
    if state.names not in NAMES:
        raise ValueError(f"names {state.names!r} is not one of {', '.join(NAMES)}")
    host, port = parse_address(address)
    registry = CollectorRegistry(auto_describe=False)
    registry.register(WatchCollector(state))
    server = _MetricsServer((host.strip("[]"), port), lambda: exposition(state, registry))
    threading.Thread(target=server.serve_forever, daemon=True, name="gpuvet-prometheus").start()
    return server, registry
