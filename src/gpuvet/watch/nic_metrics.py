"""The NIC ports watch samples, as Prometheus metrics under node_exporter's infiniband collector's
names, units and labels (``node_infiniband_*``, labels ``device`` and ``port``; collector/
infiniband_linux.go, rates in bytes per second as procfs parses them: Gb/s × 125,000,000; data
counters in bytes: sysfs' 4-byte words × 4), so its dashboards and alerts read them, plus
gpuvet's own ``gpuvet_nic_port_up``. Served with ``--names gpuvet`` or ``both``."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from gpuvet.backends.nic_readings import ACTIVE, UNKNOWN
from gpuvet.checks.nic_watch import NicPortSample

LABELS = ["device", "port"]
# the ids sysfs writes before the word ("4: ACTIVE", "5: LinkUp"), as node_exporter serves them
STATE_ID = {"DOWN": 1, "INIT": 2, "ARMED": 3, "ACTIVE": 4, "ACTIVE_DEFER": 5}
PHYS_STATE_ID = {"Sleep": 1, "Polling": 2, "Disabled": 3, "PortConfigurationTraining": 4, "LinkUp": 5,
                 "LinkErrorRecovery": 6, "Phy Test": 7}
# node_exporter's counter name for each sysfs error counter gpuvet reads
COUNTER_NAMES = {
    "symbol_error": "symbol_error_total", "link_downed": "link_downed_total",
    "link_error_recovery": "link_error_recovery_total", "port_rcv_errors": "port_errors_received_total",
    "excessive_buffer_overrun_errors": "excessive_buffer_overrun_errors_total",
    "local_link_integrity_errors": "local_link_integrity_errors_total",
    "port_rcv_remote_physical_errors": "port_receive_remote_physical_errors_total",
    "port_xmit_discards": "port_discards_transmitted_total",
}
_HELP = {
    "symbol_error_total": "Number of minor link errors detected on one or more physical lanes.",
    "link_downed_total": "Number of times the link failed to recover from an error state and went down",
    "link_error_recovery_total": "Number of times the link successfully recovered from an error state",
    "port_errors_received_total": "Number of packets containing an error that were received on this port",
}
Value = Callable[[NicPortSample], float | None]


def _family(kind: type[GaugeMetricFamily] | type[CounterMetricFamily], name: str, doc: str, get: Value,
            ports: Sequence[NicPortSample]) -> Metric:
    metric = kind(name, doc, labels=LABELS)
    for p in ports:
        value = get(p)
        if value is not None:
            metric.add_metric([p.device, str(p.port)], float(value))
    return metric


def _gauges() -> dict[str, tuple[str, Value]]:
    return {
        "node_infiniband_state_id": ("State of the InfiniBand port (0: no change, 1: down, 2: init, 3: armed, "
                                     "4: active, 5: act defer)", lambda p: STATE_ID.get(p.state)),
        "node_infiniband_physical_state_id": ("Physical state of the InfiniBand port (0: no change, 1: sleep, "
                                              "2: polling, 3: disable, 4: shift, 5: link up, 6: link error "
                                              "recover, 7: phytest)", lambda p: PHYS_STATE_ID.get(p.phys_state)),
        "node_infiniband_rate_bytes_per_second": ("Maximum signal transfer rate",
                                                  lambda p: p.rate_gbps * 125e6 if p.rate_gbps is not None
                                                  else None),
        "gpuvet_nic_port_up": ("1 while the RDMA port is ACTIVE, else 0; not served for a port whose state is "
                               "unknown or an Ethernet port switched off (physical Disabled: an unused port, as "
                               "gpuvet's nic check excuses it)", _port_up),
    }


def _port_up(p: NicPortSample) -> float | None:
    """The alert's input: None (no series) where a down port is no fault or nothing is known."""
    if p.state == UNKNOWN or (p.state != ACTIVE and p.link_layer == "Ethernet" and p.phys_state == "Disabled"):
        return None
    return float(p.state == ACTIVE)


def _counter(name: str) -> Value:
    return lambda p: p.counters.get(name)


def nic_metrics(ports: Sequence[NicPortSample], events: Mapping[tuple[str, str], int] | None = None
                ) -> Iterator[Metric]:
    """Every family, each with a value per port that has the reading (none without NICs), and
    watch's NIC events by device (gpuvet_events_total has no NIC label: its module is empty)."""
    if not ports:
        return
    counted = CounterMetricFamily("gpuvet_nic_events", "Events raised by gpuvet's NIC watch.",
                                  labels=["device", "kind"])
    for (kind, device), count in (events or {}).items():
        counted.add_metric([device, kind], float(count))
    yield counted
    for name, (doc, get) in _gauges().items():
        yield _family(GaugeMetricFamily, name, doc, get, ports)
    for counter, short in COUNTER_NAMES.items():
        yield _family(CounterMetricFamily, f"node_infiniband_{short}", _HELP.get(short, f"sysfs counters/{counter}"),
                      _counter(counter), ports)
    yield _family(CounterMetricFamily, "node_infiniband_port_data_transmitted_bytes_total",
                  "Number of data octets transmitted on all links", lambda p: p.xmit_bytes, ports)
    yield _family(CounterMetricFamily, "node_infiniband_port_data_received_bytes_total",
                  "Number of data octets received on all links", lambda p: p.rcv_bytes, ports)
