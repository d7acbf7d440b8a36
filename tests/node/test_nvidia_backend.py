"""The NVIDIA backend through a fake of the NVML binding (tests/fakes/fake_nvml.py)."""

import pynvml
import pytest

from gpuvet.backends.host import HostBackend
from gpuvet.backends.nvidia.backend import NvidiaBackend
from gpuvet.backends.nvidia.gateway import ModuleLost, Nvml, NvmlUnavailable
from gpuvet.backends.readings import Unavailable
from gpuvet.backends.select import open_backend
from gpuvet.node.build import build_node
from gpuvet.node.diff import diff_nodes
from gpuvet.node.spec import load_spec
from tests.fakes.fake_nvml import FakeGpu, FakeNvml, hgx_h200


def _backend(fake: FakeNvml) -> NvidiaBackend:
    return NvidiaBackend(Nvml(lib=fake))


def test_inventory_reads_identity_and_settings():
    inv = _backend(hgx_h200()).inventory()
    assert inv.backend == "nvidia" and not inv.simulated
    assert [m.id for m in inv.modules] == [f"gpu{i}" for i in range(8)]
    m = inv.modules[0]
    assert m.model == "NVIDIA H200" and m.in_catalog
    assert m.memory_bytes == 150_754_820_096
    assert m.bus_id == "0000:18:00.0"
    assert (m.pcie_gen_current, m.pcie_gen_max, m.pcie_width_current) == (1, 5, 16)
    assert m.power_limit_w == 700.0 and m.power_limit_max_w == 700.0
    assert m.ecc_enabled is True
    assert m.sm_clock_max_mhz == 1980
    assert inv.software.driver_version == "570.86.15"
    assert inv.software.cuda_driver_version == "12.8"


def test_modules_are_named_in_bus_order_not_enumeration_order():
    fake = hgx_h200(2)
    fake.gpus.reverse()  # NVML enumerates the later bus first
    inv = _backend(fake).inventory()
    assert [m.bus_id for m in inv.modules] == ["0000:18:00.0", "0000:28:00.0"]
    assert inv.modules[0].uuid.startswith("GPU-00000000")


def test_detected_hgx_matches_the_preset():
    node = _backend(hgx_h200()).node()
    spec, where = load_spec("hgx-h200-8")
    assert diff_nodes(build_node(spec, where), node) == []
    switch_links = [lk for lk in node.links if lk.b == "nvswitch0"]
    assert len(switch_links) == 8 and all(lk.width == 18 and lk.bandwidth_gbps == 450 for lk in switch_links)


def test_a_downed_nvlink_is_a_degraded_link():
    fake = hgx_h200()
    state, version, remote = fake.gpus[3].nvlinks[0]
    fake.gpus[3].nvlinks[0] = (pynvml.NVML_FEATURE_DISABLED, version, remote)
    fake.gpus[3].nvlinks[1] = (pynvml.NVML_FEATURE_DISABLED, version, remote)
    spec, where = load_spec("hgx-h200-8")
    diffs = diff_nodes(build_node(spec, where), _backend(fake).node())
    assert [(d.kind, d.between) for d in diffs] == [("link_degraded", ("gpu3", "nvswitch0"))]


def test_narrow_pcie_width_is_found_and_idle_gen_is_not():
    fake = hgx_h200()
    fake.gpus[5].pcie = (1, 5, 8, 16)  # trained at x8; every GPU idles at gen1
    spec, where = load_spec("hgx-h200-8")
    diffs = diff_nodes(build_node(spec, where), _backend(fake).node())
    assert [(d.kind, d.between[0]) for d in diffs] == [("link_degraded", "gpu5")]
    assert "x8 < x16" in diffs[0].detail


def test_not_supported_is_unavailable_not_zero():
    fake = hgx_h200(1)
    fake.gpus[0].unsupported = {"nvmlDeviceGetEccMode", "nvmlDeviceGetPowerManagementLimit"}
    m = _backend(fake).inventory().modules[0]
    assert isinstance(m.ecc_enabled, Unavailable) and "not supported" in m.ecc_enabled.reason
    assert isinstance(m.power_limit_w, Unavailable)


def test_function_missing_from_old_binding_or_driver():
    fake = hgx_h200(1)
    fake.missing = {"nvmlSystemGetCudaDriverVersion_v2", "nvmlDeviceGetNumaNodeId"}
    inv = _backend(fake).inventory()
    assert inv.software.cuda_driver_version == "12.8"  # fell back to v1
    assert isinstance(inv.modules[0].numa_node, Unavailable)


def test_function_not_found_error_code():
    fake = hgx_h200(1)

    def old_driver(h):
        raise pynvml.NVMLError(pynvml.NVML_ERROR_FUNCTION_NOT_FOUND)

    fake.nvmlDeviceGetNumaNodeId = old_driver
    m = _backend(fake).inventory().modules[0]
    assert isinstance(m.numa_node, Unavailable) and "too old" in m.numa_node.reason


def test_library_not_found_falls_back_to_host():
    fake = FakeNvml([], init_error=pynvml.NVML_ERROR_LIBRARY_NOT_FOUND)
    with pytest.raises(NvmlUnavailable, match="libnvidia-ml"):
        Nvml(lib=fake).init()
    backend = open_backend(nvml=Nvml(lib=fake))
    assert isinstance(backend, HostBackend)
    inv = backend.inventory()
    assert inv.modules == () and "No GPU module found" in inv.notes[0]


def test_zero_modules_falls_back_to_host():
    backend = open_backend(nvml=Nvml(lib=FakeNvml([])))
    assert isinstance(backend, HostBackend)
    assert "no modules" in backend.inventory().notes[0]


def test_module_lost_mid_query_is_reported_and_the_rest_listed():
    fake = hgx_h200(4)
    backend = _backend(fake)  # enumerated while all answered
    fake.gpus[2].lost = True  # then gpu2 falls off the bus
    inv = backend.inventory()
    assert [m.id for m in inv.modules] == ["gpu0", "gpu1", "gpu3"]
    assert any("gpu2" in n and "lost" in n for n in inv.notes)


def test_gateway_raises_module_lost():
    fake = hgx_h200(1)
    fake.gpus[0].lost = True
    with pytest.raises(ModuleLost, match="XID 79"):
        Nvml(lib=fake).query("nvmlDeviceGetName", 0, module="gpu0")


def test_no_setter_is_ever_called():
    fake = hgx_h200()
    backend = _backend(fake)
    backend.inventory()
    backend.node()
    assert not [c for c in fake.calls if "Set" in c or "Reset" in c]


def test_pcie_only_gpus_have_no_fabric():
    gpus = [FakeGpu(name="NVIDIA L40S", bus_id=f"00000000:{0x18 + 0x10 * i:02X}:00.0", pcie=(1, 4, 16, 16))
            for i in range(2)]
    node = _backend(FakeNvml(gpus, {(0, 1): pynvml.NVML_TOPOLOGY_SINGLE})).node()
    assert node.fabric_links() == []
    from gpuvet.node.relations import pcie_relations

    assert list(pcie_relations(node).values()) == ["PIX"]


def _fake_cuda(monkeypatch, torch, uuids_in_cuda_order):
    """torch.cuda as a machine whose CUDA order differs from the bus order (no CUDA_DEVICE_ORDER)."""
    from types import SimpleNamespace

    props = [SimpleNamespace(uuid=u.removeprefix("GPU-"), pci_domain_id=0, pci_bus_id=0, pci_device_id=0)
             for u in uuids_in_cuda_order]
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: len(props))
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda i: props[i])
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device: (100 * 10**9, 141 * 10**9))


def test_engine_matches_cuda_devices_to_modules_by_uuid(monkeypatch):
    torch = pytest.importorskip("torch")
    fake = hgx_h200(4)
    uuids = [g.uuid for g in fake.gpus]
    _fake_cuda(monkeypatch, torch, [uuids[2], uuids[0], uuids[3], uuids[1]])
    engine = _backend(fake).engine()
    assert {m: str(d) for m, d in engine._devices.items()} == {
        "gpu0": "cuda:1", "gpu1": "cuda:3", "gpu2": "cuda:0", "gpu3": "cuda:2"}
    modules = engine.modules()
    assert [m.id for m in modules] == ["gpu0", "gpu1", "gpu2", "gpu3"]
    assert modules[0].model.name == "H200-SXM" and modules[0].free_memory_bytes == 100 * 10**9
    assert engine.collective_backend == "nccl" and engine.versions()["driver_version"] == "570.86.15"


def test_engine_without_cuda_in_torch_says_what_to_install(monkeypatch):
    torch = pytest.importorskip("torch")
    from gpuvet.errors import BackendError

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(BackendError, match="CUDA build of PyTorch"):
        _backend(hgx_h200(2)).engine()


def test_each_module_reports_its_board_serial_for_the_ledger_and_an_rma():
    from gpuvet.backends.readings import Unavailable

    fake = hgx_h200(2)
    fake.gpus[1].serial = "1652322054092"
    fake.gpus[0].unsupported = {"nvmlDeviceGetSerial"}  # a GeForce: not supported
    first, second = NvidiaBackend(Nvml(lib=fake)).inventory().modules
    assert second.serial == "1652322054092"
    assert isinstance(first.serial, Unavailable) and "not supported" in first.serial.reason
