"""`gpuvet watch`: hot-plug with admission, the JSON contract, Prometheus over loopback, the
logbook under SIGKILL, downsampled queries, NVML telemetry through the fake."""

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from gpuvet.backends.nvidia.backend import NvidiaBackend
from gpuvet.backends.nvidia.gateway import Nvml
from gpuvet.logbook.store import Logbook
from gpuvet.watch.loop import WatchConfig, Watcher
from gpuvet.watch.prometheus import ExportState, serve
from tests.fakes.fake_nvml import hgx_h200
from tests.support.helpers import call
from tests.support.ports import free_port


def test_hot_plug_removal_and_insertion_with_admission(faulty, tmp_path):
    sim = faulty("hgx-h200-8", [{"kind": "module_lost", "module": "gpu3", "at": "1h"},
                                {"kind": "module_added", "module": "gpu3", "at": "2h"},
                                {"kind": "module_added", "module": "gpu6", "at": "90m"},
                                {"kind": "power_cap_low", "module": "gpu6", "watts": 250}])
    book = Logbook(tmp_path / "lb.db")
    result = Watcher(sim, WatchConfig(interval_s=10, duration_s=3 * 3600, speedup=None), book).run()
    plug = [(e.kind, e.module, e.time) for e in result.events if e.kind.startswith("module_")]
    assert plug == [("module_lost", "gpu3", 3600.0), ("module_added", "gpu6", 5400.0),
                    ("module_quarantined", "gpu6", 5400.0), ("module_added", "gpu3", 7200.0),
                    ("module_ready", "gpu3", 7200.0)]
    quarantined = next(e for e in result.events if e.kind == "module_quarantined")
    assert "gemm_bf16" in quarantined.message and quarantined.evidence["gemm_bf16"]["pct_of_expected"] < 85
    states = {m["uuid"]: m["state"] for m in result.modules.values()}
    assert states["GPU-sim-hgx-h200-8-gpu3"] == "lost" and states["GPU-sim-hgx-h200-8-gpu3-r1"] == "ready"
    # identities survive: the old module's history stays under its UUID, the replacement has its own
    rows = book.db.execute("SELECT uuid, module FROM modules WHERE module = 'gpu3' ORDER BY mkey").fetchall()
    assert rows == [("GPU-sim-hgx-h200-8-gpu3", "gpu3"), ("GPU-sim-hgx-h200-8-gpu3-r1", "gpu3")]
    others = {m["uuid"] for m in result.modules.values() if m["id"] not in ("gpu3", "gpu6")}
    assert len(others) == 6 and all(states[u] == "present" for u in others)


def test_watch_json_contract_with_forecast(capsys, tmp_path):
    spec = tmp_path / "creep.yaml"
    spec.write_text("base: hgx-h200-8\nfaults:\n"
                    "  - {kind: thermal_creep, module: gpu2, c_per_watt_per_day: 0.006, start: 0h}\n"
                    "  - {kind: xid, module: gpu5, code: 79, at: 3h}\n")
    code, out, _ = call(capsys, "watch", "--sim", str(spec), "--duration", "60h", "--interval", "60s",
                        "--speedup", "max", "--json", "--logbook", str(tmp_path / "lb.db"))
    data = json.loads(out)
    assert code == 1  # a fatal Xid is critical
    assert data["simulated"] is True and data["samples"] > 0
    for e in data["events"]:
        assert {"kind", "module", "time"} <= set(e)
    forecast = [e for e in data["events"] if e["kind"] == "overheat_forecast"]
    assert [e["module"] for e in forecast] == ["gpu2"]
    assert forecast[0]["predicted_crossing"] > forecast[0]["time"]
    states = {f["module"]: f for f in data["forecast"]}  # every module's forecast state, and what it rests on
    assert states["gpu2"]["state"] == "warned" and states["gpu2"]["reference"] == "inlet/coolant reading"
    assert {f["state"] for m, f in states.items() if m != "gpu2"} <= {"watching", "insufficient"}
    assert [(e["module"], e["time"]) for e in data["events"] if e["kind"] == "xid"] == [("gpu5", 3 * 3600.0)]
    code, out, _ = call(capsys, "events", "--json", "--module", "gpu2", "--logbook", str(tmp_path / "lb.db"))
    assert code == 0 and {e["kind"] for e in json.loads(out)} >= {"overheat_forecast"}


def test_prometheus_endpoint_over_loopback_names_and_units(faulty):
    sim = faulty("hgx-h200-8", [{"kind": "ecc_rising", "module": "gpu1", "at": "0s"}])
    state = ExportState()
    port = free_port()
    server, _ = serve(state, f"127.0.0.1:{port}")
    try:
        Watcher(sim, WatchConfig(interval_s=1, duration_s=120, speedup=None), None, export=state).run()
        body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    finally:
        server.shutdown()
    families = {f.name: f for f in text_string_to_metric_families(body)}
    for name in ("gpuvet_module_temperature_celsius", "gpuvet_module_power_watts", "gpuvet_module_sm_clock_hertz",
                 "gpuvet_module_utilization_ratio", "gpuvet_module_ecc_corrected_errors", "gpuvet_module_info",
                 "gpuvet_module_throttle", "gpuvet_sampler_seconds"):
        assert name in families, name
    assert families["gpuvet_module_ecc_corrected_errors"].type == "counter"
    info = families["gpuvet_module_info"].samples  # the identity, value 1 (text format shows info as a gauge)
    assert len(info) == 8 and all(s.value == 1 and s.labels["uuid"].startswith("GPU-") for s in info)
    temps = families["gpuvet_module_temperature_celsius"].samples
    assert len(temps) == 8 and all(set(s.labels) == {"uuid", "bus_id", "model", "module"} for s in temps)
    assert all(s.labels["model"] == "H200-SXM" and 40 < s.value < 100 for s in temps)
    clocks = families["gpuvet_module_sm_clock_hertz"].samples
    assert all(3e8 < s.value < 3e9 for s in clocks)  # base unit: hertz, not MHz
    util = families["gpuvet_module_utilization_ratio"].samples
    assert all(0 <= s.value <= 1 for s in util)  # a ratio, not a percentage
    assert all(name.startswith(("gpuvet_", "node_infiniband_")) for name in families)  # NICs: node_exporter's
    assert "gpuvet_module_ecc_corrected_errors_total" in body


def test_prometheus_binds_to_loopback_by_default():
    from gpuvet.watch.prometheus import parse_address

    assert parse_address(":9400") == ("127.0.0.1", 9400)
    assert parse_address("9400") == ("127.0.0.1", 9400)
    with pytest.raises(ValueError):
        parse_address("localhost:http")


def test_sigkill_loses_at_most_the_last_second(tmp_path):
    db = tmp_path / "lb.db"
    Logbook(db).close()
    child = subprocess.Popen([sys.executable, "-m", "gpuvet", "watch", "--sim", "hgx-h200-8", "--interval", "100ms",
                              "--speedup", "1", "--logbook", str(db), "--json", "--no-admission"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        run_id = None
        while time.monotonic() < deadline and run_id is None:
            time.sleep(0.1)
            book = Logbook(db)
            rows = book.runs()
            run_id = rows[0].run_id if rows else None
            book.close()
        assert run_id, "watch never started"
        time.sleep(3.0)
        killed_wall = time.time()
        os.kill(child.pid, signal.SIGKILL)
        child.wait(10)
    finally:
        if child.poll() is None:
            child.kill()
    book = Logbook(db)
    assert book.integrity() == "ok"
    run = book.run(run_id)
    assert run.status == "aborted"
    last = book.last_sample_time(run_id)
    elapsed = killed_wall - run.envelope.started_wall
    assert last is not None and last >= elapsed - 1.0 - 0.3  # at speedup 1, t tracks the wall clock
    assert book.sample_count(run_id) >= 8 * 10 * 2


def test_downsampled_queries_agree_with_the_raw_samples(tmp_path):
    book = Logbook(tmp_path / "lb.db")
    run_id = book.begin("watch", {}, simulated=True, node="n")
    key = book.run_key(run_id)
    m = book.module_key("GPU-x", "gpu0", None, "H200-SXM")
    rows = [(m, float(t), 50.0 + (t // 600) % 3, 500.0, 1980.0, 3201.0, 1.0, 0) for t in range(0, 7200)]
    for i in range(0, len(rows), 1000):  # flushed in pieces, as watch does
        book.add_samples(key, rows[i:i + 1000])
    hourly = book.series(key, m, 0, 7200, 3600)
    assert [r[0] for r in hourly] == [0, 3600]
    raw_mean = sum(r[2] for r in rows if r[1] < 3600) / 3600
    assert hourly[0][1] == pytest.approx(raw_mean)
    assert hourly[0][2] == 52.0
    fine = book.series(key, m, 0, 599, 10)
    assert len(fine) == 60 and fine[0][1] == 50.0
    assert book.prune(key, keep_raw_s=3600, now=7200) == 3600
    assert book.series(key, m, 0, 7200, 3600)[0][1] == pytest.approx(raw_mean)  # roll-ups outlive raw samples


def test_nvml_telemetry_reads_fast_and_slow_tiers_through_the_fake(monkeypatch):
    from gpuvet.backends.nvidia import telemetry as nvml_telemetry

    fake = hgx_h200(2)
    fake.gpus[1].clock_event_mask = 0x4
    backend = NvidiaBackend(Nvml(lib=fake))
    source = backend.telemetry()
    monkeypatch.setattr(nvml_telemetry, "nvidia_pci_functions", lambda root=None: 2)
    assert [i.id for i in source.present(0)] == ["gpu0", "gpu1"]
    fast = source.sample(0.0, slow=False)
    assert fast[0].temp_c == 61 and fast[0].power_w == 650 and fast[0].ecc_corrected is None
    assert fast[1].throttle == 0x4
    slow = source.sample(1.0, slow=True)
    assert slow[0].pcie_gen_max == 5 and slow[0].nvlink_up == 18 and slow[0].nvlink_expected == 18
    fake.gpus[0].lost = True
    assert [s.module for s in source.sample(2.0, slow=False)] == ["gpu1"]  # absence, not a fake reading


def test_nvml_telemetry_sums_the_nvlink_error_counters_and_watch_flags_a_rising_one(monkeypatch):
    from gpuvet.backends.nvidia import telemetry as nvml_telemetry
    from gpuvet.checks.detectors import default_detectors, run_all

    fake = hgx_h200(2)
    monkeypatch.setattr(nvml_telemetry, "nvidia_pci_functions", lambda root=None: 2)
    source = NvidiaBackend(Nvml(lib=fake)).telemetry()
    first = source.sample(0.0, slow=True)
    assert [s.nvlink_errors for s in first] == [0, 0] and source.sample(1.0, slow=False)[0].nvlink_errors is None
    fake.gpus[0].nvlink_error_counts = {(3, 2): 400, (7, 0): 200}  # CRC flit on link 3, replays on link 7
    later = source.sample(600.0, slow=True)
    assert later[0].nvlink_errors == 600
    events = run_all(default_detectors(), first + later)
    assert [(e.kind, e.module) for e in events] == [("nvlink_errors", "gpu0")], events


def test_a_rising_pcie_replay_counter_is_an_event_and_a_metric(monkeypatch):
    from prometheus_client import CollectorRegistry, generate_latest

    from gpuvet.backends.nvidia import telemetry as nvml_telemetry
    from gpuvet.checks.detectors import default_detectors, run_all
    from gpuvet.watch.prometheus import ExportState, WatchCollector

    fake = hgx_h200(2)
    monkeypatch.setattr(nvml_telemetry, "nvidia_pci_functions", lambda root=None: 2)
    source = NvidiaBackend(Nvml(lib=fake)).telemetry()
    first = source.sample(0.0, slow=True)
    fake.gpus[1].pcie_replays = 30  # in an hour: within the bound
    fake.gpus[0].pcie_replays = 5_000
    later = source.sample(3600.0, slow=True)
    assert [s.pcie_replays for s in first + later] == [0, 0, 5_000, 30]
    events = run_all(default_detectors(), first + later)
    assert [(e.kind, e.module) for e in events] == [("pcie_replays", "gpu0")], events
    state = ExportState(latest={s.uuid: s for s in later}, slow={s.uuid: s for s in later})
    registry = CollectorRegistry(auto_describe=False)
    registry.register(WatchCollector(state))
    lines = [ln for ln in generate_latest(registry).decode().splitlines() if ln.startswith("gpuvet_module_pcie_replays")]
    assert sorted(float(ln.rsplit(" ", 1)[1]) for ln in lines) == [30.0, 5000.0], lines


def test_watch_starts_on_an_nvidia_node_with_a_module_lost(monkeypatch):
    """A module fallen off the bus (Xid 79) makes the node unreadable; watch must still start and
    sample the others, each module's link count at its first reading standing in for the design."""
    from gpuvet.backends.nvidia import telemetry as nvml_telemetry

    fake = hgx_h200(2)
    backend = NvidiaBackend(Nvml(lib=fake))
    fake.gpus[0].lost = True  # between the backend opening and watch starting
    monkeypatch.setattr(nvml_telemetry, "nvidia_pci_functions", lambda root=None: 2)
    slow = backend.telemetry().sample(0.0, slow=True)
    assert [(s.module, s.nvlink_up, s.nvlink_expected) for s in slow] == [("gpu1", 18, 18)]


def test_designed_links_take_a_peer_bond_at_its_found_width_and_never_exceed_the_catalog():
    """A DGX-1V mixes NV1 and NV2 pairs (6 links a module): each bond counts as found, not at the
    commonest width; a link whose far end was not named (taken for a switch) cannot push a
    mesh module above the catalog's count."""
    from dataclasses import replace

    from gpuvet.backends.capture.backend import CaptureBackend
    from gpuvet.backends.telemetry import designed_fabric_links
    from gpuvet.node.build import build_node
    from gpuvet.node.model import Endpoint, EndpointKind, Link, LinkKind
    from gpuvet.node.spec import load_spec

    dgx1 = CaptureBackend([str(Path(__file__).parents[1] / "data" / "captures" / "topo_v100_hybrid_cube_mesh.txt")]).node()
    assert designed_fabric_links(dgx1) == {f"gpu{i}": 6 for i in range(8)}  # two NV2 and two NV1 pairs each
    assert designed_fabric_links(build_node(*load_spec("hgx-h200-8"))) == {f"gpu{i}": 18 for i in range(8)}
    mesh = build_node(*load_spec("mesh-4"))
    catalog = mesh.module("gpu0").model.fabric_links
    unnamed = replace(mesh, endpoints=(*mesh.endpoints, Endpoint("sw?", EndpointKind.FABRIC_SWITCH)),
                      links=(*mesh.links, Link("gpu0", "sw?", LinkKind.NVLINK, 2, 25.0)))
    assert designed_fabric_links(unnamed)["gpu0"] == catalog == designed_fabric_links(mesh)["gpu0"]


def test_nvml_telemetry_expects_the_designed_links_not_those_up_at_start(monkeypatch):
    """A link already down when watch starts is counted down: the expected count is the
    catalog's 18 NVLinks of an H200 on NVSwitch, not the 17 of the first reading."""
    from gpuvet.backends.nvidia import telemetry as nvml_telemetry
    from gpuvet.checks.detectors import default_detectors, run_all

    fake = hgx_h200(2)
    state, version, remote = fake.gpus[1].nvlinks[5]
    fake.gpus[1].nvlinks[5] = (0, version, remote)
    monkeypatch.setattr(nvml_telemetry, "nvidia_pci_functions", lambda root=None: 2)
    slow = NvidiaBackend(Nvml(lib=fake)).telemetry().sample(0.0, slow=True)
    assert [(s.nvlink_up, s.nvlink_expected) for s in slow] == [(18, 18), (17, 18)]
    events = run_all(default_detectors(), slow)
    assert [(e.kind, e.module) for e in events if e.kind == "link_degraded"] == [("link_degraded", "gpu1")], events


def test_nvml_rescan_when_the_pci_count_changes(monkeypatch):
    from gpuvet.backends.nvidia import telemetry as nvml_telemetry

    fake = hgx_h200(2)
    backend = NvidiaBackend(Nvml(lib=fake))
    source = backend.telemetry()
    extra = hgx_h200(3).gpus[2]
    fake.gpus.append(extra)
    monkeypatch.setattr(nvml_telemetry, "nvidia_pci_functions", lambda root=None: 3)
    assert [i.uuid for i in source.present(5.0)][-1] == extra.uuid


def test_grafana_dashboard_reads_metrics_gpuvet_exports(faulty, tmp_path):
    """Every metric a panel or the model variable queries is one a real scrape declares (not a list
    kept beside it): a watch, with a logbook, of a node whose gpu5 logs Xid 79, so the ledger's
    ladder step is served and its panel reads it by its exported name."""
    import re

    from prometheus_client import CollectorRegistry

    from gpuvet.watch.prometheus import WatchCollector, exposition

    dash = json.loads((Path(__file__).parents[2] / "docs" / "grafana" / "gpuvet-modules.json").read_text())
    exprs = [t["expr"] for p in dash["panels"] for t in p["targets"]]
    exprs += [v["query"] for v in dash["templating"]["list"] if v.get("type") == "query"]
    names = {n for e in exprs for n in re.findall(r"gpuvet_[a-z_]+", e)}
    book, state = Logbook(tmp_path / "lb.db"), ExportState()
    Watcher(faulty("hgx-h200-8", [{"kind": "xid", "module": "gpu5", "code": 79, "at": "1h"}]),
            WatchConfig(interval_s=60, duration_s=1.5 * 3600, speedup=None), book, export=state).run()
    book.close()
    registry = CollectorRegistry(auto_describe=False)
    registry.register(WatchCollector(state))
    text = exposition(state, registry).decode()
    exported = set(re.findall(r"^# TYPE (\S+) ", text, re.MULTILINE))
    assert "gpuvet_module_ladder_step" in names and names <= exported, names - exported
    assert len(dash["panels"]) >= 11
    (ladder,) = [p for p in dash["panels"] if any("gpuvet_module_ladder_step" in t["expr"] for t in p["targets"])]
    assert ladder["type"] in ("table", "stat") and ladder["targets"][0]["format"] == "table"
    assert re.search(r'^gpuvet_module_ladder_step\{.*module="gpu5".*step="reboot_node".*\} 3\.0$', text, re.MULTILINE)


def test_watch_on_a_machine_without_modules_says_so(capsys, tmp_path, monkeypatch):
    from gpuvet.backends import select
    from gpuvet.backends.host import HostBackend

    monkeypatch.setattr(select, "open_backend", lambda sim=None, **_: HostBackend("the NVIDIA driver is not loaded"))
    code, out, err = call(capsys, "watch", "--duration", "1s", "--interval", "0.5s", "--json", "--no-log")
    assert code == 2 and out == ""  # nothing measured: said first, as validate and health say it
    assert "no GPU module to watch (the NVIDIA driver is not loaded)" in err and "--node" in err


def test_slow_fields_map_one_to_one_onto_sample_keywords():
    """A field added to SlowFields but not to its TypedDict (or to Sample) would be lost or fail at
    run time on live hardware only; the typed keywords must name the same fields as both."""
    from dataclasses import fields as dc_fields
    from typing import get_type_hints

    from gpuvet.backends.readings import Sample
    from gpuvet.backends.telemetry import SlowFields, SlowSampleFields

    slow = [f.name for f in dc_fields(SlowFields)]
    assert list(get_type_hints(SlowSampleFields)) == slow
    assert set(slow) <= {f.name for f in dc_fields(Sample)}
    values = SlowFields(*range(1, len(slow) + 1)).sample_fields()
    assert values == dict(zip(slow, range(1, len(slow) + 1), strict=True))
