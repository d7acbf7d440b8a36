"""`watch --prometheus … --names dcgm|both`: dcgm-exporter's names, types, help texts, units
and labels, scraped over loopback and checked against tests/data/dcgm_exporter_counters.csv."""

import csv
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from gpuvet.backends.nvidia.backend import NvidiaBackend
from gpuvet.backends.nvidia.gateway import Nvml
from gpuvet.cli.app import main
from gpuvet.watch.dcgm import nvml_bus_id
from gpuvet.watch.loop import WatchConfig, Watcher
from gpuvet.watch.prometheus import ExportState, serve
from tests.fakes.fake_nvml import hgx_h200
from tests.support.ports import free_port

DATA = Path(__file__).parent.parent / "data" / "dcgm_exporter_counters.csv"
LABELS = {"gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname"}


def reference() -> dict[str, tuple[str, str]]:
    rows = csv.reader(line for line in DATA.read_text().splitlines() if line and not line.startswith("#"))
    return {name.strip(): (kind.strip(), ",".join(rest).strip()) for name, kind, *rest in rows}


def scrape(backend, names, seconds=120, interval=1):
    state = ExportState(names=names, hostname=backend.node().name)
    port = free_port()
    server, _ = serve(state, f"127.0.0.1:{port}")
    try:
        Watcher(backend, WatchConfig(interval_s=interval, slow_every_s=30, duration_s=seconds, speedup=None), None,
                export=state).run()
        response = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10)
        body = response.read().decode()
        assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    finally:
        server.shutdown()
        server.server_close()
    return body, {f.name: f for f in text_string_to_metric_families(body)}


def test_dcgm_names_types_help_and_labels_over_loopback(faulty):
    sim = faulty("hgx-h200-8", [{"kind": "xid", "module": "gpu5", "code": 79, "at": "30s"}])
    body, families = scrape(sim, "dcgm")
    ref = reference()
    assert set(ref) <= set(families), set(ref) - set(families)
    assert not [n for n in families if n.startswith("gpuvet_")]  # dcgm alone: only dcgm-exporter's names
    for name, (kind, doc) in ref.items():
        assert families[name].type == kind, name
        assert families[name].documentation == doc, name
        assert f"# TYPE {name} {kind}\n" in body  # counters keep their name: no _total, as dcgm-exporter writes
        samples = families[name].samples
        # Xid 79 takes gpu5 off the bus: it stops reporting, but keeps its last Xid (the reason)
        want = 8 if name == "DCGM_FI_DEV_XID_ERRORS" else 7
        assert len(samples) == want and all(set(s.labels) == LABELS for s in samples), name
    temps = {s.labels["gpu"]: s for s in families["DCGM_FI_DEV_GPU_TEMP"].samples}
    assert sorted(temps) == [str(i) for i in range(8) if i != 5]
    assert temps["3"].labels["device"] == "nvidia3" and temps["3"].labels["UUID"] == "GPU-sim-hgx-h200-8-gpu3"
    assert temps["3"].labels["modelName"] == "H200-SXM" and temps["3"].labels["Hostname"] == "hgx-h200-8"
    assert all(20 < s.value < 100 for s in temps.values())  # °C
    assert all(300 <= s.value <= 2500 for s in families["DCGM_FI_DEV_SM_CLOCK"].samples)  # MHz, not Hz
    assert all(0 <= s.value <= 100 for s in families["DCGM_FI_DEV_GPU_UTIL"].samples)  # %, not a ratio
    fb = {s.labels["gpu"]: s.value for s in families["DCGM_FI_DEV_FB_USED"].samples}
    free = {s.labels["gpu"]: s.value for s in families["DCGM_FI_DEV_FB_FREE"].samples}
    assert all(abs(fb[g] + free[g] - 143_771) < 1 for g in fb)  # the H200's 143,771 MiB, as nvidia-smi shows
    energy = families["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"].samples
    assert all(s.value > 120 * 50 * 1000 for s in energy)  # mJ over two simulated minutes at >= 50 W
    xid = {s.labels["gpu"]: s.value for s in families["DCGM_FI_DEV_XID_ERRORS"].samples}
    assert xid["5"] == 79 and all(v == 0 for g, v in xid.items() if g != "5")


def test_both_serves_gpuvet_names_beside_dcgm(faulty):
    _, families = scrape(faulty("mesh-4", []), "both", seconds=5)
    assert "gpuvet_module_temperature_celsius" in families and "gpuvet_module_overheat_forecast_seconds" in families
    assert "DCGM_FI_DEV_GPU_TEMP" in families
    _, families = scrape(faulty("mesh-4", []), "gpuvet", seconds=5)
    assert not [n for n in families if n.startswith("DCGM_")]  # the default stays gpuvet's own


def test_real_readings_through_the_fake_nvml_carry_nvml_bus_ids():
    fake = hgx_h200(2)
    fake.gpus[1].util_pct = 87
    _, families = scrape(NvidiaBackend(Nvml(lib=fake)), "dcgm", seconds=2, interval=1)
    temps = {s.labels["gpu"]: s for s in families["DCGM_FI_DEV_GPU_TEMP"].samples}
    assert temps["0"].labels["pci_bus_id"] == "00000000:18:00.0" and temps["0"].labels["modelName"] == "NVIDIA H200"
    assert temps["0"].value == 61
    util = {s.labels["gpu"]: s.value for s in families["DCGM_FI_DEV_GPU_UTIL"].samples}
    assert util == {"0": 0, "1": 87}
    energy = {s.labels["gpu"]: s.value for s in families["DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"].samples}
    assert energy["0"] == 123_456_789  # NVML's counter, in mJ, as read


def test_bus_id_in_nvml_form():
    assert nvml_bus_id("0000:18:00.0") == "00000000:18:00.0"
    assert nvml_bus_id("00000000:18:00.0") == "00000000:18:00.0"
    assert nvml_bus_id(None) == ""


def test_unknown_names_is_bad_input_and_leaves_no_logbook_behind(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("GPUVET_HOME", str(tmp_path))  # where watch would keep its run
    code = main(["watch", "--sim", "mesh-4", "--duration", "1s", "--prometheus", "127.0.0.1:9400", "--names", "prom"])
    assert code == 2 and "--names 'prom' is not gpuvet, dcgm or both" in capsys.readouterr().err
    assert not (tmp_path / "logbook.db").exists()


@pytest.mark.parametrize("names", ["gpuvet", "dcgm"])
def test_watch_command_accepts_names(capsys, tmp_path, names):
    code = main(["watch", "--sim", "mesh-4", "--duration", "5s", "--speedup", "max", "--prometheus",
                 f"127.0.0.1:{free_port()}", "--names", names, "--json", "--no-log"])
    assert code == 0
