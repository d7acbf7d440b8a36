"""watch samples the NICs on slow ticks (issue 47): a port down (critical) and back (cleared), a
port below its design rate (warn), an error counter rising (warn, its rate per hour against a
bound); the ports served under node_exporter's infiniband names. Simulated node and the fake
sysfs tree only."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from gpuvet.backends import nic_sysfs
from gpuvet.backends.nic_readings import Nic, NicPort, NicReadings
from gpuvet.backends.sim.backend import SimBackend
from gpuvet.checks.nic_watch import ERROR_BOUNDS_PER_HOUR, NicWatch, nic_samples
from gpuvet.cli.app import main
from gpuvet.watch.loop import WatchConfig, Watcher
from gpuvet.watch.prometheus import ExportState, serve
from tests.fakes.fake_sysfs import rail_node
from tests.support.ports import free_port


def _readings(state: str = "ACTIVE", rate: float = 400.0, symbol: int = 0, link_downed: int = 0) -> NicReadings:
    nics = [Nic(f"mlx5_{i}", "MT4129", None, (NicPort(1, "ACTIVE", "LinkUp", 400.0, "4X", "InfiniBand",
                                                      {"symbol_error": 0, "link_downed": 0}),)) for i in range(3)]
    nics.append(Nic("mlx5_3", "MT4129", None, (NicPort(1, state, "LinkUp" if state == "ACTIVE" else "Polling",
                                                       rate if state == "ACTIVE" else None, "4X", "InfiniBand",
                                                       {"symbol_error": symbol, "link_downed": link_downed},
                                                       {"port_xmit_data": 1000, "port_rcv_data": 10}),)))
    return NicReadings(tuple(nics), "nvidia_peermem", "test")


def test_a_port_down_is_one_event_and_its_return_clears_it():
    judge = NicWatch()  # no design, but watch reads the node itself: an HCA it carries is declared by its presence
    events = [e for t, r in enumerate([_readings(), _readings("DOWN"), _readings("DOWN"), _readings()])
              for e in judge.observe(r, t * 30.0)]
    assert [(e.kind, e.severity.value, e.time) for e in events] == [
        ("nic_port_down", "critical", 30.0), ("cleared", "info", 90.0)]
    assert events[0].module is None and events[0].evidence["nic"] == "mlx5_3"
    assert events[1].evidence["of"] == "nic_port_down" and events[1].evidence["seen"] == 2


def test_a_port_below_its_peers_rate_warns_once():
    judge = NicWatch()
    events = [e for t in range(4) for e in judge.observe(_readings(rate=200.0), t * 30.0)]
    assert [(e.kind, e.severity.value) for e in events] == [("nic_rate_low", "warn")]
    assert "200 Gb/s" in events[0].message and "400" in events[0].message


def test_an_error_counter_rising_past_its_bound_warns_with_its_rate_and_closes_when_quiet():
    judge = NicWatch()
    events = []
    for i in range(260):  # 30 s ticks: 40 symbol errors an hour for the first hour, then none
        symbol = min(i, 120) // 3
        events += judge.observe(_readings(symbol=symbol), i * 30.0)
    kinds = [(e.kind, e.evidence.get("counter"), e.evidence.get("of")) for e in events]
    assert kinds[0] == ("nic_errors", "symbol_error", None)
    rate = events[0].evidence["per_hour"]
    assert rate > ERROR_BOUNDS_PER_HOUR["symbol_error"] and rate == pytest.approx(40, rel=0.3)
    assert kinds[1:] == [("cleared", "symbol_error", "nic_errors")] and events[1].time >= 3600 + 3600


def test_below_the_bound_is_quiet_and_a_reset_counter_is_no_negative_rate():
    judge = NicWatch()
    events = []
    for i, symbol in enumerate([0, 1, 1, 1, 5000, 0, 0, 1]):  # 1/h-ish, then reset to 0
        events += judge.observe(_readings(symbol=symbol), i * 3600.0)
    rises = [e.evidence["rise"] for e in events if e.kind == "nic_errors"]
    assert rises == [4999]  # the one real rise; neither 1/h nor the reset raises anything


def test_link_downed_counts_any_rise():
    judge = NicWatch()
    events = [e for i, n in enumerate([0, 0, 1]) for e in judge.observe(_readings(link_downed=n), i * 600.0)]
    assert [(e.kind, e.evidence["counter"]) for e in events] == [("nic_errors", "link_downed")]


def test_traffic_counters_become_bytes():
    (s,) = [p for p in nic_samples(_readings(), 0.0) if p.device == "mlx5_3"]
    assert (s.xmit_bytes, s.rcv_bytes) == (4000, 40)


def _spec(tmp_path: Path, faults: list[dict[str, object]]) -> str:
    path = tmp_path / "node.yaml"
    path.write_text(yaml.safe_dump({"base": "hgx-h200-8", "faults": faults}), encoding="utf-8")
    return str(path)


def test_simulated_nic_faults_show_in_watch_at_their_time(capsys, tmp_path):
    spec = _spec(tmp_path, [{"kind": "nic_port_down", "nic": "nic3", "at": "2h"},
                            {"kind": "nic_errors", "nic": "nic5", "per_hour": 120, "at": "1h"},
                            {"kind": "nic_rate_low", "nic": "nic6", "gbps": 200}])
    code = main(["watch", "--sim", spec, "--duration", "4h", "--interval", "60s", "--speedup", "max", "--json",
                 "--no-log"])
    events = json.loads(capsys.readouterr().out)["events"]
    nic = [(e["kind"], e["severity"], e["evidence"].get("nic")) for e in events if e["kind"].startswith("nic_")]
    assert code == 1 and nic == [("nic_rate_low", "warn", "mlx5_6"), ("nic_errors", "warn", "mlx5_5"),
                                 ("nic_port_down", "critical", "mlx5_3")]
    down = next(e for e in events if e["kind"] == "nic_port_down")
    assert down["time"] == 7200.0 and down["module"] is None


def test_a_healthy_simulated_node_raises_no_nic_event(capsys, tmp_path):
    code = main(["watch", "--sim", "hgx-h200-8", "--duration", "2h", "--interval", "60s", "--speedup", "max",
                 "--json", "--no-log"])
    events = json.loads(capsys.readouterr().out)["events"]
    assert code == 0 and not [e for e in events if e["kind"].startswith("nic_")]


def test_nic_errors_naming_a_nic_the_node_lacks_is_refused(capsys, tmp_path):
    spec = _spec(tmp_path, [{"kind": "nic_errors", "nic": "nic9"}])
    assert main(["watch", "--sim", spec, "--duration", "1h", "--speedup", "max", "--json", "--no-log"]) == 2
    assert "nic9" in capsys.readouterr().err


def _scrape(backend, names: str) -> dict[str, object]:
    state = ExportState(names=names, hostname="n")
    port = free_port()
    server, _ = serve(state, f"127.0.0.1:{port}")
    try:
        Watcher(backend, WatchConfig(interval_s=60, slow_every_s=60, duration_s=600, speedup=None), None,
                export=state).run()
        body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    finally:
        server.shutdown()
        server.server_close()
    return {f.name: f for f in text_string_to_metric_families(body)}


@pytest.mark.parametrize("names", ["gpuvet", "both"])
def test_the_ports_are_served_under_node_exporters_infiniband_names(tmp_path, monkeypatch, names):
    rail_node(tmp_path, nics=2, port_of={"mlx5_1": {"state": "1: DOWN", "phys": "2: Polling"}})
    monkeypatch.setattr(nic_sysfs, "ROOT", tmp_path)
    backend = SimBackend.from_ref("hgx-h200-8")
    monkeypatch.setattr(backend, "nics_at", lambda t: nic_sysfs.read_nics())  # the fake tree's NICs
    families = _scrape(backend, names)
    state = {s.labels["device"]: s.value for s in families["node_infiniband_state_id"].samples}
    phys = {s.labels["device"]: s.value for s in families["node_infiniband_physical_state_id"].samples}
    assert state == {"mlx5_0": 4.0, "mlx5_1": 1.0} and phys == {"mlx5_0": 5.0, "mlx5_1": 2.0}
    rate = families["node_infiniband_rate_bytes_per_second"].samples[0]
    assert rate.value == 400 * 125e6 and set(rate.labels) == {"device", "port"} and rate.labels["port"] == "1"
    sent = families["node_infiniband_port_data_transmitted_bytes"]  # the parser drops a counter's _total
    assert sent.type == "counter" and sent.samples[0].name.endswith("_total")
    assert sent.samples[0].value == 123456789 * 4
    assert {s.labels["device"]: s.value for s in families["node_infiniband_link_downed"].samples} == \
        {"mlx5_0": 1.0, "mlx5_1": 1.0}
    assert "node_infiniband_symbol_error" in families and "gpuvet_nic_port_up" in families


def test_a_node_without_nics_serves_no_infiniband_family():
    families = _scrape(SimBackend.from_ref("pcie-8"), "gpuvet")
    assert not [n for n in families if n.startswith(("node_infiniband", "gpuvet_nic"))]
