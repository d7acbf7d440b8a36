"""watch sees Xids on a live NVIDIA node (issue 48): NVML's critical-Xid events, else the kernel
log, reach watch's events, gpuvet's event counter and dcgm-exporter's DCGM_FI_DEV_XID_ERRORS. Before,
only the simulator and replays filled the Xid field, so such an alert never fired on hardware."""

from __future__ import annotations

import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from gpuvet.backends.nvidia import telemetry as nvml_telemetry
from gpuvet.backends.nvidia.backend import NvidiaBackend
from gpuvet.backends.nvidia.gateway import Nvml
from gpuvet.watch.loop import WatchConfig, Watcher
from gpuvet.watch.prometheus import ExportState, serve
from tests.fakes.fake_nvml import FakeNvml, hgx_h200
from tests.support.ports import free_port

OLD_XID = "3,5,100,-;NVRM: Xid (PCI:0000:19:00): 31, pid=77, Ch 00000008, intr 00000000. MMU Fault"
NEW_XID = "3,9,900,-;NVRM: Xid (PCI:0000:19:00): 48, pid=0, An uncorrectable double bit error (DBE)"


@pytest.fixture(autouse=True)
def _two_pci_functions(monkeypatch):
    monkeypatch.setattr(nvml_telemetry, "nvidia_pci_functions", lambda root=None: 2)


def _xid_line(template: str, fake: FakeNvml, index: int) -> str:
    """The line as the driver writes it: the bus id as 0000:28:00 (NVML's is 00000000:28:00.0)."""
    return template.replace("0000:19:00", "0000" + fake.gpus[index].bus_id[8:13]) + "\n"


def test_an_nvml_xid_event_reaches_events_gpuvet_metrics_and_dcgm_xid_errors():
    fake = hgx_h200(2)
    fake.gpus[1].xid_events = [79]  # fallen off the bus, delivered by the event set
    backend = NvidiaBackend(Nvml(lib=fake))
    state = ExportState(names="both")
    port = free_port()
    server, _ = serve(state, f"127.0.0.1:{port}")
    try:
        result = Watcher(backend, WatchConfig(interval_s=1, duration_s=2, speedup=None), None, export=state).run()
        body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    finally:
        server.shutdown()
        backend.close()
    xids = [(e.kind, e.module, e.severity.value, e.evidence.get("code")) for e in result.events if e.kind == "xid"]
    assert xids == [("xid", "gpu1", "critical", 79)], result.events
    families = {f.name: f for f in text_string_to_metric_families(body)}
    counted = [(s.labels["module"], s.value) for s in families["gpuvet_events"].samples
               if s.labels.get("kind") == "xid" and s.name.endswith("_total")]
    assert counted == [("gpu1", 1.0)], counted
    dcgm = {s.labels["gpu"]: s.value for s in families["DCGM_FI_DEV_XID_ERRORS"].samples}
    assert dcgm == {"0": 0.0, "1": 79.0}
    assert fake.gpus[1].xid_events == []  # read from the event set, not invented


def test_the_event_set_is_polled_every_tick_and_an_xid_is_reported_once():
    fake = hgx_h200(2)
    source = NvidiaBackend(Nvml(lib=fake)).telemetry()
    assert source.xid_source == "nvml events"
    assert [s.xids for s in source.sample(0.0, slow=False)] == [(), ()]
    fake.gpus[0].xid_events = [13, 31]
    assert [s.xids for s in source.sample(1.0, slow=False)] == [(13, 31), ()]
    assert [s.xids for s in source.sample(2.0, slow=False)] == [(), ()]


def test_a_module_lost_with_its_xid_reports_the_xid_once_with_no_reading():
    fake = hgx_h200(2)
    source = NvidiaBackend(Nvml(lib=fake)).telemetry()
    fake.gpus[1].xid_events = [79]
    fake.gpus[1].lost = True  # NVML answers GPU_IS_LOST for its readings, the event was queued first
    first = source.sample(0.0, slow=False)
    lost = [s for s in first if s.module == "gpu1"]
    assert len(lost) == 1 and lost[0].xids == (79,) and lost[0].temp_c is None and lost[0].power_w is None
    assert [s.module for s in source.sample(1.0, slow=False)] == ["gpu0"]  # then absent: module_lost


def test_without_nvml_events_the_kernel_log_gives_the_xids_after_watch_began(tmp_path: Path):
    fake = hgx_h200(2)
    fake.missing = {"nvmlEventSetCreate"}  # an older binding or driver without the event set
    log = tmp_path / "kmsg.txt"
    log.write_text(_xid_line(OLD_XID, fake, 1))
    source = NvidiaBackend(Nvml(lib=fake), kernel_log=log).telemetry()
    assert source.xid_source == "kernel log"
    assert [s.xids for s in source.sample(0.0, slow=True)] == [(), ()]  # the Xid from before is health's
    with log.open("a") as f:
        f.write(_xid_line(NEW_XID, fake, 1))
    assert [s.xids for s in source.sample(1.0, slow=False)] == [(), ()]  # the log is read on slow ticks
    assert [s.xids for s in source.sample(2.0, slow=True)] == [(), (48,)]
    assert [s.xids for s in source.sample(3.0, slow=True)] == [(), ()]


def test_a_module_that_refuses_to_register_falls_back_to_the_kernel_log(tmp_path: Path):
    fake = hgx_h200(2)
    fake.gpus[0].unsupported = {"nvmlDeviceRegisterEvents"}
    log = tmp_path / "kmsg.txt"
    log.write_text("")
    source = NvidiaBackend(Nvml(lib=fake), kernel_log=log).telemetry()
    assert source.xid_source == "kernel log"


def test_an_unreadable_kernel_log_says_why_no_xid_can_be_read(tmp_path: Path):
    fake = hgx_h200(2)
    fake.missing = {"nvmlEventSetCreate"}
    source = NvidiaBackend(Nvml(lib=fake), kernel_log=tmp_path / "absent" / "kmsg").telemetry()
    assert source.xid_source.startswith("none: ")
    assert [s.xids for s in source.sample(0.0, slow=True)] == [(), ()]
