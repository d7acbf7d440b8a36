"""The AMD backend through a fake of the amdsmi package (tests/fakes/fake_amdsmi.py): the
readings, then every command as a user runs it on a machine whose only GPUs are AMD ones."""

from __future__ import annotations

import json

import pytest

from gpuvet.backends import kernel_log, nic_sysfs
from gpuvet.backends.amd import gateway as amdsmi_gateway
from gpuvet.backends.amd.backend import AmdBackend
from gpuvet.backends.amd.gateway import Amdsmi, AmdsmiUnavailable, ModuleLost
from gpuvet.backends.host import HostBackend
from gpuvet.backends.nvidia.gateway import NvmlUnavailable
from gpuvet.backends.readings import ThrottleReason, Unavailable
from gpuvet.backends.select import open_backend
from gpuvet.cli.app import main
from gpuvet.node.build import build_node
from gpuvet.node.diff import diff_nodes
from gpuvet.node.model import LinkKind
from gpuvet.node.spec import load_spec
from tests.fakes.fake_amdsmi import (
    HEALTHY_AMDGPU_LOG,
    MI300X_BUSES,
    STATUS_DRIVER_NOT_LOADED,
    STATUS_NOT_SUPPORTED,
    FakeAmdsmi,
    mi300x_8,
    real_amdgpu_log,
    write_kmsg,
)
from tests.fakes.fake_sysfs import rail_node


def _backend(fake: FakeAmdsmi) -> AmdBackend:
    return AmdBackend(Amdsmi(lib=fake))


def _declared():
    spec, where = load_spec("mi300x-8")
    return build_node(spec, where)


# --- readings ------------------------------------------------------------------------------
def test_inventory_reads_identity_memory_pcie_power_and_ecc():
    inv = _backend(mi300x_8()).inventory()
    assert inv.backend == "amd" and not inv.simulated
    assert [m.id for m in inv.modules] == [f"gpu{i}" for i in range(8)]
    m = inv.modules[0]
    assert m.model == "AMD Instinct MI300X" and m.in_catalog
    assert m.memory_bytes == 196_592 * 2**20  # vram_size is MiB
    assert m.bus_id == "0000:05:00.0" and m.uuid.startswith("00ff74a1")
    assert (m.pcie_gen_current, m.pcie_gen_max, m.pcie_width_current, m.pcie_width_max) == (5, 5, 16, 16)
    assert (m.power_limit_w, m.power_limit_default_w, m.power_limit_max_w) == (750.0, 750.0, 750.0)  # from uW
    assert m.ecc_enabled is True and m.numa_node == 0 and inv.modules[4].numa_node == 1
    assert (m.sm_clock_max_mhz, m.mem_clock_max_mhz) == (2100, 1300)
    assert inv.software.driver_version == "6.10.5"
    assert isinstance(inv.software.cuda_driver_version, Unavailable)


def test_modules_are_named_in_bus_order_not_handle_order():
    fake = mi300x_8(3)
    fake.gpus.reverse()  # amdsmi hands out the later bus first
    inv = _backend(fake).inventory()
    assert [m.bus_id for m in inv.modules] == ["0000:05:00.0", "0000:26:00.0", "0000:46:00.0"]
    assert inv.modules[0].uuid.startswith("00ff74a1")


def test_an_unknown_market_name_is_an_unknown_model_with_its_memory():
    fake = mi300x_8(2)
    fake.gpus[1].market_name = "AMD Instinct MI400 Engineering Sample"
    backend = _backend(fake)
    assert [m.in_catalog for m in backend.inventory().modules] == [True, False]
    model = backend.node().module("gpu1").model
    assert model.vendor == "unknown" and model.memory_bytes == 196_592 * 2**20


def test_detected_board_matches_the_mi300x_8_preset():
    node = _backend(mi300x_8()).node()
    assert diff_nodes(_declared(), node) == []
    xgmi = [lk for lk in node.links if lk.kind is LinkKind.XGMI]
    assert len(xgmi) == 28 and all(lk.width == 1 and lk.bandwidth_gbps == 64 for lk in xgmi)
    assert node.host.sockets == 2


def test_a_pair_reached_only_through_others_is_not_a_direct_link():
    """amdsmi calls such a pair XGMI with 1 hop; its weight (2 xGMI hops = 30) and the missing
    bandwidth say it is not joined directly."""
    fake = mi300x_8()
    fake.amdsmi_topo_get_link_weight = lambda a, b: 30 if {a, b} == {0, 7} else 15
    diffs = diff_nodes(_declared(), _backend(fake).node())
    assert [(d.kind, d.between) for d in diffs] == [("link_down", ("gpu0", "gpu7"))]


def test_a_link_at_lower_bandwidth_is_degraded():
    fake = mi300x_8()
    slow = fake.amdsmi_get_minmax_bandwidth_between_processors
    fake.amdsmi_get_minmax_bandwidth_between_processors = (
        lambda a, b: {"min_bandwidth": 0, "max_bandwidth": 32_000} if {a, b} == {1, 6} else slow(a, b))
    diffs = diff_nodes(_declared(), _backend(fake).node())
    assert [(d.kind, d.between) for d in diffs] == [("link_degraded", ("gpu1", "gpu6"))]


def test_pcie_trained_at_x8_is_found():
    fake = mi300x_8()
    fake.gpus[5].pcie_width = 8
    diffs = diff_nodes(_declared(), _backend(fake).node())
    assert [(d.kind, d.between[0]) for d in diffs] == [("link_degraded", "gpu5")]
    assert "x8 < x16" in diffs[0].detail


def test_not_supported_and_na_are_unavailable_not_zero():
    fake = mi300x_8(1)
    fake.gpus[0].unsupported = {"amdsmi_get_gpu_ecc_enabled", "amdsmi_get_power_cap_info"}
    original = fake.amdsmi_get_pcie_info
    fake.amdsmi_get_pcie_info = lambda h: {**original(h), "pcie_metric": {"pcie_width": "N/A", "pcie_speed": "N/A"}}
    m = _backend(fake).inventory().modules[0]
    assert isinstance(m.ecc_enabled, Unavailable) and "not supported" in m.ecc_enabled.reason
    assert isinstance(m.power_limit_w, Unavailable) and isinstance(m.power_limit_max_w, Unavailable)
    assert isinstance(m.pcie_width_current, Unavailable) and "N/A" in m.pcie_width_current.reason
    assert m.pcie_width_max == 16


def test_a_function_missing_from_an_older_package():
    fake = mi300x_8(1)
    fake.missing = {"amdsmi_get_violation_status", "amdsmi_topo_get_numa_node_number"}
    backend = _backend(fake)
    assert isinstance(backend.inventory().modules[0].numa_node, Unavailable)
    mask = backend.health().modules[0].clock_event_mask
    assert isinstance(mask, Unavailable) and "not in this amdsmi" in mask.reason


def test_a_module_lost_mid_read_is_reported_and_the_rest_listed():
    fake = mi300x_8(4)
    backend = _backend(fake)
    fake.gpus[2].lost = True
    inv = backend.inventory()
    assert [m.id for m in inv.modules] == ["gpu0", "gpu1", "gpu3"]
    assert any("gpu2" in n and "lost" in n for n in inv.notes)
    with pytest.raises(ModuleLost, match="gone"):
        Amdsmi(lib=fake).query("amdsmi_get_gpu_asic_info", 2, module="gpu2")


def test_health_readings_map_ras_bad_pages_and_violations():
    fake = mi300x_8()
    fake.gpus[1].ecc_uncorrectable = 3
    fake.gpus[2].bad_pages = [0, 1]  # one retired, one pending
    fake.gpus[3].bad_pages = [2]  # could not be retired
    fake.gpus[4].violations = {"active_prochot_thrm": True, "active_ppt_pwr": True}
    got = {h.id: h for h in _backend(fake).health().modules}
    assert got["gpu1"].ecc_uncorrected_volatile == 3 and got["gpu0"].ecc_uncorrected_volatile == 0
    assert (got["gpu2"].remap_pending, got["gpu2"].remap_failed) == (True, False)
    assert (got["gpu3"].remap_pending, got["gpu3"].remap_failed) == (False, True)
    assert got["gpu4"].clock_event_mask == ThrottleReason.HW_THERMAL_SLOWDOWN | ThrottleReason.SW_POWER_CAP
    assert got["gpu0"].clock_event_mask == 0


def test_nothing_is_ever_set():
    fake = mi300x_8()
    backend = _backend(fake)
    backend.inventory()
    backend.node()
    backend.health()
    assert fake.calls and not [c for c in fake.calls if c.startswith(("amdsmi_set", "amdsmi_reset"))]


def test_telemetry_reads_fast_and_slow_tiers():
    fake = mi300x_8(3)
    fake.gpus[1].violations = {"active_socket_thrm": True}
    fake.gpus[2].temps_c = {"EDGE": 0, "HOTSPOT": 88, "VRAM": 70}
    source = _backend(fake).telemetry()
    assert [i.id for i in source.present(0)] == ["gpu0", "gpu1", "gpu2"]
    assert source.slowdown_c() == {"gpu0": 100.0, "gpu1": 100.0, "gpu2": 100.0}  # hotspot CRITICAL, not current
    fast = source.sample(0.0, slow=False)
    assert (fast[2].temp_c, fast[0].power_w, fast[0].sm_clock_mhz) == (88.0, 139.0, 132.0)
    assert fast[1].throttle == ThrottleReason.SW_THERMAL_SLOWDOWN and fast[0].ecc_corrected is None
    assert [s.nvlink_up for s in source.sample(1.0, slow=True)] == [2, 2, 2]
    fake.links_down = {frozenset((0, 2))}
    fake.gpus[0].ecc_correctable = 4
    slow = source.sample(2.0, slow=True)
    assert (slow[0].nvlink_up, slow[0].nvlink_expected, slow[1].nvlink_up) == (1, 2, 2)
    assert slow[0].ecc_corrected == 4 and slow[0].pcie_gen_max == 5 and slow[0].pcie_width == 16
    fake.gpus[0].lost = True
    assert [s.module for s in source.sample(3.0, slow=False)] == ["gpu1", "gpu2"]  # absence, not a fake reading


@pytest.mark.parametrize("routed", [False, True])
def test_telemetry_expects_the_designed_xgmi_peers_not_those_up_at_start(routed):
    """Down before watch starts, and (routed) still typed XGMI because the pair is reached through
    another module: only a direct link counts up, as in the node."""
    fake = mi300x_8()
    fake.links_down, fake.down_routed = {frozenset((0, 2))}, routed
    slow = _backend(fake).telemetry().sample(0.0, slow=True)
    assert [(s.nvlink_up, s.nvlink_expected) for s in slow[:3]] == [(6, 7), (7, 7), (6, 7)]


def test_watch_starts_on_an_amd_node_with_a_module_lost():
    fake = mi300x_8()
    backend = _backend(fake)
    fake.gpus[3].lost = True  # between the backend opening and watch starting
    assert [s.module for s in backend.telemetry().sample(0.0, slow=True)] == \
        ["gpu0", "gpu1", "gpu2", "gpu4", "gpu5", "gpu6", "gpu7"]


def test_rising_xgmi_ras_counts_are_fabric_errors_in_watch():
    from gpuvet.checks.detectors import default_detectors, run_all

    fake = mi300x_8(2)
    source = _backend(fake).telemetry()
    first = source.sample(0.0, slow=True)
    assert [s.nvlink_errors for s in first] == [0, 0] and source.sample(1.0, slow=False)[0].nvlink_errors is None
    fake.gpus[1].xgmi_correctable = 500  # in ten minutes: 3,000 an hour
    events = run_all(default_detectors(), first + source.sample(600.0, slow=True))
    assert [(e.kind, e.module) for e in events] == [("nvlink_errors", "gpu1")], events
    fake.gpus[0].pcie_replays = 7
    assert source.sample(700.0, slow=True)[0].pcie_replays == 7  # pcie_metric.pcie_replay_count
    fake.missing = {"amdsmi_get_gpu_ecc_count"}
    assert _backend(fake).telemetry().sample(0.0, slow=True)[0].nvlink_errors is None


def test_telemetry_reads_vram_in_use_and_the_energy_counter():
    fake = mi300x_8(2)
    fake.gpus[0].vram_used_mib, fake.gpus[0].energy_count = 150_000, 1_000_000
    fake.gpus[1].unsupported = {"amdsmi_get_energy_count"}  # a VM guest: "not supported" (amdsmi.h)
    first, second = _backend(fake).telemetry().sample(0.0, slow=False)
    assert first.fb_used_bytes == 150_000 * 2**20 and first.fb_free_bytes == (196_592 - 150_000) * 2**20
    assert first.energy_mj == 15_259  # 1,000,000 ticks of 15.259 µJ
    assert second.energy_mj is None and second.fb_used_bytes == 283 * 2**20
    fake.missing = {"amdsmi_get_gpu_vram_usage"}  # an older package
    assert _backend(fake).telemetry().sample(1.0, slow=False)[0].fb_used_bytes is None


# --- why amdsmi is unusable ----------------------------------------------------------------
def test_driver_not_loaded_names_the_driver():
    with pytest.raises(AmdsmiUnavailable, match="amdgpu driver is not loaded"):
        Amdsmi(lib=FakeAmdsmi([], init_error=STATUS_DRIVER_NOT_LOADED)).init()


def test_package_not_installed_names_the_extra(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_amdsmi(name, *args, **kwargs):
        if name == "amdsmi":
            raise ImportError("No module named 'amdsmi'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_amdsmi)
    with pytest.raises(AmdsmiUnavailable) as err:
        Amdsmi()
    assert "not installed" in err.value.what and "gpuvet[amd]" in (err.value.fix or "")


def test_other_errors_of_a_call_are_unavailable_with_the_reason():
    fake = mi300x_8(1)
    smi = Amdsmi(lib=fake)
    fake.gpus[0].unsupported = {"amdsmi_get_gpu_vram_info"}
    got = smi.query("amdsmi_get_gpu_vram_info", 0)
    assert isinstance(got, Unavailable) and got.reason == "not supported on this module"
    refused = smi.query("amdsmi_get_clock_info", 0, 4)  # a plain int where the package wants its enum
    assert isinstance(refused, Unavailable) and "refused its arguments" in refused.reason
    assert STATUS_NOT_SUPPORTED == amdsmi_gateway.STATUS_NOT_SUPPORTED


# --- choosing the backend ------------------------------------------------------------------
def _no_nvidia(monkeypatch):
    """This machine's NVML, whatever it is, finds nothing: only the AMD path is open."""
    def unavailable(self, nvml=None, kernel_log=None):
        raise NvmlUnavailable("the NVML library (libnvidia-ml.so) is not installed")

    monkeypatch.setattr("gpuvet.backends.nvidia.backend.NvidiaBackend.__init__", unavailable)


def test_amd_modules_and_no_nvidia_ones_open_the_amd_backend(monkeypatch):
    _no_nvidia(monkeypatch)
    backend = open_backend(amdsmi=Amdsmi(lib=mi300x_8()))
    assert isinstance(backend, AmdBackend) and backend.count() == 8


def test_neither_vendor_falls_back_to_the_host_naming_both(monkeypatch):
    _no_nvidia(monkeypatch)
    backend = open_backend(amdsmi=Amdsmi(lib=FakeAmdsmi([], init_error=STATUS_DRIVER_NOT_LOADED)))
    assert isinstance(backend, HostBackend)
    why = backend.why_no_modules or ""
    assert "NVIDIA: the NVML library" in why and "AMD: the amdgpu driver is not loaded" in why
    empty = open_backend(amdsmi=Amdsmi(lib=FakeAmdsmi([])))
    assert "AMD SMI loaded but reports no modules" in (empty.why_no_modules or "")


# --- every command, as run on an AMD-only machine ------------------------------------------
@pytest.fixture
def amd_machine(monkeypatch, tmp_path):
    """The CLI's own backend choice sees no NVIDIA modules and this fake amdsmi package; the
    kernel log is a saved one (healthy: amdgpu's start-up lines), never this machine's."""
    fake = mi300x_8()
    _no_nvidia(monkeypatch)
    monkeypatch.setattr(amdsmi_gateway, "_binding", lambda: fake)
    monkeypatch.setattr(kernel_log, "KMSG", write_kmsg(tmp_path / "kmsg.txt", HEALTHY_AMDGPU_LOG))
    monkeypatch.setattr(nic_sysfs, "ROOT", rail_node(tmp_path / "root", peer_memory=False))  # mi300x-8's 8 NICs
    return fake


def _run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_inventory_command(capsys, amd_machine):
    code, out, _ = _run(capsys, "inventory", "--json")
    data = json.loads(out)
    assert code == 0 and data["backend"] == "amd" and len(data["modules"]) == 8
    assert data["modules"][3]["model"] == "AMD Instinct MI300X" and data["modules"][3]["bus_id"] == "0000:65:00.0"


def test_topo_command_names_a_planted_xgmi_link_down(capsys, amd_machine):
    code, _, _ = _run(capsys, "topo", "--expect", "mi300x-8", "--json")
    assert code == 0
    amd_machine.links_down = {frozenset((2, 6))}
    code, out, _ = _run(capsys, "topo", "--expect", "mi300x-8", "--json")
    diffs = [(d["kind"], tuple(d["between"])) for d in json.loads(out)["differences"]]
    assert code == 1 and diffs == [("link_down", ("gpu2", "gpu6"))]


def test_health_command_healthy_exits_0(capsys, amd_machine):
    code, out, _ = _run(capsys, "health", "--format", "json")
    data = json.loads(out)
    assert code == 0, data
    assert data["status"] == "ok" and data["modules"] == 8


@pytest.mark.parametrize(("fault", "check", "status"), [
    ({"ecc_uncorrectable": 2}, "ecc", "fail"),
    ({"bad_pages": [1]}, "row_remap", "fail"),
    ({"violations": {"active_prochot_thrm": True}}, "throttle", "fail"),
    # a power cap below default and a PCIe link narrower than its maximum warn (the knowledge base, issue 42):
    # the node still computes right; draining it would undo a site's cap policy or idle it before a repair window
    ({"power_cap_uw": (500_000_000, 750_000_000, 0, 750_000_000)}, "power_limit", "warn"),
    ({"pcie_width": 8}, "pcie", "warn"),
    ({"pids": (4242,)}, "processes", "fail"),
])
def test_health_command_names_each_planted_fault(capsys, amd_machine, fault, check, status):
    for key, value in fault.items():
        setattr(amd_machine.gpus[6], key, value)
    code, out, _ = _run(capsys, "health", "--format", "json")
    found = {(f["check"], f.get("module")) for f in json.loads(out)["findings"] if f["status"] in ("fail", "warn")}
    statuses = {f["status"] for f in json.loads(out)["findings"] if (f["check"], f.get("module")) == (check, "gpu6")}
    assert code == (1 if status == "fail" else 0) and found == {(check, "gpu6")} and statuses == {status}, found


def test_health_command_names_a_down_xgmi_link(capsys, amd_machine):
    amd_machine.links_down = {frozenset((0, 3))}
    code, out, _ = _run(capsys, "health", "--format", "json")
    failed = [f for f in json.loads(out)["findings"] if f["status"] == "fail"]
    assert code == 1 and [f["check"] for f in failed] == ["fabric"] and "gpu0" in failed[0]["reason"]


def test_health_command_names_a_missing_module(capsys, amd_machine):
    del amd_machine.gpus[5]
    code, out, _ = _run(capsys, "health", "--format", "json")
    failed = {f["check"] for f in json.loads(out)["findings"] if f["status"] == "fail"}
    assert code == 1 and "presence" in failed


def test_validate_quick_skips_benchmarks_naming_rocm_not_a_failure(capsys, amd_machine, tmp_path):
    code, out, err = _run(capsys, "validate", "--level", "quick", "--json", "--logbook", str(tmp_path / "lb.db"))
    data = json.loads(out)
    skipped = [c for c in data["checks"] if c["name"] == "benchmarks"]
    assert skipped and all(c["verdict"] == "skip" and "ROCm" in c["reason"] for c in skipped), skipped
    assert not [c for c in data["checks"] if c["verdict"] == "fail"]
    assert code == 2 and "nothing could be measured" in err and "ROCm" in err  # could not tell, not a fault


# --- the amdgpu kernel log ---------------------------------------------------------------
@pytest.mark.parametrize(("capture", "bus", "kind"), [
    ("amd_kern_rocm4021_mi300x_athub_ue.txt", "0000:1c:00.0", "amd_ras_uncorrectable"),
    ("amd_kern_cosmic3764_ring_gfx_reset.txt", "0000:28:00.0", "amd_ring_timeout"),
])
def test_health_fails_an_amdgpu_reset_or_ras_error_in_the_kernel_log_naming_the_module(
        capsys, amd_machine, capture, bus, kind):
    """Real amdgpu lines (public threads, tests/data/captures/real/), the module at that bus id
    in the fake: kernel_messages fails it, citing the line; Xid is not applicable (a skip)."""
    from gpuvet.captures.kernel_messages import kernel_message_catalog

    amd_machine.gpus[1].bdf = bus  # between gpu0 (05) and gpu2 (46): still gpu1 in bus order
    write_kmsg(kernel_log.KMSG, [*HEALTHY_AMDGPU_LOG, *real_amdgpu_log(capture)])
    code, out, _ = _run(capsys, "health", "--format", "json")
    data = json.loads(out)
    failed = [f for f in data["findings"] if f["status"] == "fail"]
    assert code == 1 and {(f["check"], f["module"]) for f in failed} == {("kernel_messages", "gpu1")}, failed
    meaning = kernel_message_catalog()[kind].meaning
    hit = next(f for f in failed if meaning in f["reason"])
    assert hit["evidence"][0]["field"] == "amdgpu message" and bus in hit["evidence"][0]["value"]
    (xid,) = [f for f in data["findings"] if f["check"] == "xid"]
    assert xid["status"] == "skip" and "no Xids" in xid["reason"]


def test_health_on_a_healthy_amdgpu_log_reads_it_and_exits_0(capsys, amd_machine):
    code, out, _ = _run(capsys, "health", "--format", "json")
    data = json.loads(out)
    (ok,) = [f for f in data["findings"] if f["check"] == "kernel_messages"]
    assert code == 0 and ok["status"] == "ok", ok
    assert ok["evidence"][0]["value"] == f"{len(HEALTHY_AMDGPU_LOG)} / 0"  # every amdgpu line read, none failing


def test_an_unreadable_kernel_log_is_could_not_tell_on_amd(tmp_path):
    backend = AmdBackend(Amdsmi(lib=mi300x_8(2)), kernel_log=tmp_path / "missing-dir" / "kmsg")
    lines = backend.health().kernel_lines
    assert isinstance(lines, Unavailable) and "not supported" not in lines.reason


def test_an_unreadable_pcie_width_is_left_unknown_not_taken_for_x16(capsys, amd_machine):
    """amdsmi's N/A width: no width or bandwidth is made up for the module's own PCIe link (the
    backend passes none; the tree's placeholder carries no lane speed); health cites no width for it."""
    amd_machine.gpus[5].pcie_width = "N/A"
    node = _backend(amd_machine).node()
    assert node.pcie_link("gpu5").bandwidth_gbps is None and node.pcie_link("gpu4").bandwidth_gbps == 16 * 3.938
    code, out, _ = _run(capsys, "health", "--format", "json")
    pcie = [f for f in json.loads(out)["findings"] if f["check"] == "pcie"]
    gpu5 = [f for f in pcie if f.get("module") == "gpu5"]
    assert [f["status"] for f in gpu5] == ["skip"] and "pcie_width" in gpu5[0]["reason"], pcie
    assert all(e["where"] != "gpu5" for f in pcie for e in f.get("evidence") or []), pcie  # no x16 cited for it


# --- benchmarks through a ROCm build of PyTorch (HIP answers torch.cuda) --------------------
def _rocm_torch(monkeypatch, hip: str | None, order: list[int], hide: int | None = None):
    """This machine's CPU torch made to answer as a ROCm build whose devices enumerate in
    ``order`` (HIP_VISIBLE_DEVICES or the runtime's own order need not follow the bus),
    without the module at bus index ``hide``."""
    import types

    import torch

    buses = [MI300X_BUSES[i] for i in order if i != hide]
    monkeypatch.setattr(torch.version, "hip", hip, raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: len(buses))
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda i: types.SimpleNamespace(
        name="AMD Instinct MI300X", pci_domain_id=0, pci_bus_id=buses[i], pci_device_id=0))
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda d: (180 * 2**30, 192 * 2**30))


def test_benchmarks_map_modules_to_rocm_devices_by_bus_not_by_order(monkeypatch):
    _rocm_torch(monkeypatch, "6.4.43482", order=[3, 1, 0, 2, 7, 6, 5, 4])
    engine = _backend(mi300x_8()).engine()
    devices = {m.id: str(engine._devices[m.id]) for m in engine.modules()}
    # gpuN is the N-th module by bus; torch's device k is whichever bus the runtime listed k-th
    assert devices == {"gpu3": "cuda:0", "gpu1": "cuda:1", "gpu0": "cuda:2", "gpu2": "cuda:3",
                       "gpu7": "cuda:4", "gpu6": "cuda:5", "gpu5": "cuda:6", "gpu4": "cuda:7"}
    assert engine.collective_backend == "nccl"  # torch.distributed's name for RCCL on a ROCm build


def test_a_module_rocm_does_not_see_is_left_out_of_the_benchmarks(monkeypatch):
    _rocm_torch(monkeypatch, "6.4.43482", order=list(range(8)), hide=5)
    engine = _backend(mi300x_8()).engine()
    assert [m.id for m in engine.modules()] == ["gpu0", "gpu1", "gpu2", "gpu3", "gpu4", "gpu6", "gpu7"]


def test_a_cuda_build_of_torch_on_an_amd_node_is_refused_naming_the_rocm_build(monkeypatch):
    from gpuvet.errors import GpuvetError

    _rocm_torch(monkeypatch, None, order=list(range(8)))
    with pytest.raises(GpuvetError) as err:
        _backend(mi300x_8()).engine()
    assert "ROCm build of PyTorch" in err.value.message and "not a ROCm build" in str(err.value.where)


def test_doctor_command_on_a_healthy_node_names_no_fault_and_a_down_xgmi_link_when_there_is_one(capsys, amd_machine):
    code, out, _ = _run(capsys, "doctor", "--expect", "mi300x-8", "--window", "1s", "--json")  # a live window: 1 s
    healthy = json.loads(out)  # this host's own CPU load and NUMA placement may be findings; no module or link is
    host = {"cpu_saturated", "numa_misplaced"}  # read from the machine running the tests
    assert not [f for f in healthy["findings"] if f["cause"] not in host], healthy["findings"]
    assert any(s["check"] == "module_presence" and s["status"] == "clear" for s in healthy["steps"]), healthy
    amd_machine.links_down = {frozenset((2, 6))}
    code, out, _ = _run(capsys, "doctor", "interconnect-slow", "--expect", "mi300x-8", "--window", "1s", "--json")
    found = {(f["cause"], tuple(f.get("between") or ())) for f in json.loads(out)["findings"]}
    assert code == 1 and any(cause == "link_down" for cause, _ in found), found


def test_watch_command_samples_the_amd_node_and_keeps_its_samples(capsys, amd_machine, tmp_path):
    code, out, err = _run(capsys, "watch", "--interval", "1s", "--duration", "2s", "--json",
                          "--logbook", str(tmp_path / "lb.db"))
    data = json.loads(out)
    assert code == 0, err
    assert data["simulated"] is False and len(data["modules"]) == 8 and data["samples"] >= 8, data
    assert {f["module"] for f in data["forecast"]} == {f"gpu{i}" for i in range(8)}, data["forecast"]


def test_bench_on_amd_without_a_rocm_torch_says_so(capsys, amd_machine):
    code, _, err = _run(capsys, "bench", "gemm", "--json")
    assert code == 2 and "ROCm" in err, err


def test_doctor_visibility_on_amd_reads_rocms_variables_and_dev_kfd(capsys, amd_machine, monkeypatch):
    """ROCR_/HIP_VISIBLE_DEVICES hide modules from ROCm as CUDA_VISIBLE_DEVICES does from CUDA; the
    device a process opens is /dev/kfd, not /dev/nvidiactl."""
    for name in ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"):
        monkeypatch.delenv(name, raising=False)
    _, out, _ = _run(capsys, "doctor", "compute-errors", "--window", "1s", "--all", "--json")
    (step,) = [s for s in json.loads(out)["steps"] if s["check"] == "visibility"]
    fields = {e["field"] for e in step["evidence"]}
    assert step["status"] == "clear" and {"ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "/dev/kfd"} <= fields, step
    assert "/dev/nvidiactl" not in fields
    monkeypatch.setenv("HIP_VISIBLE_DEVICES", "0,1")
    _, out, _ = _run(capsys, "doctor", "compute-errors", "--window", "1s", "--all", "--json")
    (hidden,) = [f for f in json.loads(out)["findings"] if f["cause"] == "modules_hidden"]
    assert hidden["evidence"]["variable"] == "HIP_VISIBLE_DEVICES=0,1" and "unset HIP_VISIBLE_DEVICES" in hidden["fix"]
