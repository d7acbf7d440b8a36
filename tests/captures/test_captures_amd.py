"""AMD and Ascend captures (issue 35): the public ones under tests/data/captures/real/ (amd_*,
ascend_*) read by inventory, topo and doctor --from as their threads concluded, and the readers'
rules on small constructed inputs (named as such). AMD_EXPECT is also the corpus test's table
for these files (test_captures_real.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gpuvet.backends.capture.backend import CaptureBackend
from gpuvet.captures import amd_smi, kernel, npu_smi
from gpuvet.captures.read import FileCapture, parse_text, read
from gpuvet.captures.text import clean
from gpuvet.cli.app import main
from gpuvet.errors import GpuvetError
from gpuvet.node.model import LinkKind

REAL = Path(__file__).parent.parent / "data" / "captures" / "real"
FILES = sorted(p.name for p in REAL.iterdir() if p.name.startswith(("amd_", "ascend_")))


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    code = main([*args, "--json"])
    out, err = capsys.readouterr()
    assert code in (0, 1) and "Traceback" not in err
    return json.loads(out)


def _found(data: dict[str, Any]) -> set[tuple[str, str | None]]:
    return {(f["cause"], f.get("module")) for f in data["findings"]}


# --- what each thread concluded, per file (fc: the file read; data: doctor --json) ------------
def _kernel(cause: str, module: str, message: str) -> Callable[[FileCapture, dict[str, Any]], None]:
    def check(fc: FileCapture, data: dict[str, Any]) -> None:
        assert fc.kinds == ["kernel log"]
        assert (cause, module) in _found(data)
        assert message in {e.kind for e in fc.kernel.events}
    return check


def _no_fault(kind: str) -> Callable[[FileCapture, dict[str, Any]], None]:
    """A thread that concluded no hardware fault: doctor names none (it may not clear either)."""
    def check(fc: FileCapture, data: dict[str, Any]) -> None:
        assert kind in fc.kinds
        assert not {f["cause"] for f in data["findings"] if f["severity"] == "critical"}
    return check


def _rccl929(fc: FileCapture, data: dict[str, Any]) -> None:
    # 16 MI250X GCDs, 8 B - 1 KiB: the PR speeds these small sizes up; doctor says latency sets the time
    assert fc.kinds == ["nccl-tests"] and len(fc.nccl.results[0].rows) == 8
    assert "latency_bound_messages" in {f["cause"] for f in data["findings"]}


def _rccl30(fc: FileCapture, data: dict[str, Any]) -> None:
    r = fc.nccl.results[0]
    assert r.ranks == 8 and r.nodes == ("g100n126",) and r.rows[0].busbw == pytest.approx(161.14)
    assert not any("line(s) 6" in n for n in fc.notes)  # the 'rccl-tests: Version' line is claimed
    assert not data["findings"]


AMD_EXPECT: dict[str, Callable[[FileCapture, dict[str, Any]], None]] = {
    "amd_kern_bazzite4464_rx6800_ring.txt": _kernel("module_hung_reset", "0000:08:00.0", "amd_ring_timeout"),
    "amd_kern_cosmic3764_ring_gfx_reset.txt": _kernel("module_hung_reset", "0000:28:00.0", "amd_ring_timeout"),
    "amd_kern_picom1390_ring_mode2.txt": _kernel("module_hang_recovered", "0000:0C:00.0", "amd_hang_recovered"),
    "amd_kern_rocm2533_rdna3_sdma.txt": _kernel("module_hung_reset", "0000:0A:00.0", "amd_ring_timeout"),
    "amd_kern_rocm6273_mes_mode2.txt": _kernel("module_hung_reset", "0000:C5:00.0", "amd_gpu_reset"),
    "amd_kern_rocm1386_mi50_athub.txt": _kernel("module_hardware_error", "0000:83:00.0", "amd_ras_uncorrectable"),
    "amd_kern_rocm4021_mi300x_athub_ue.txt": _kernel("module_hardware_error", "0000:1C:00.0", "amd_ras_uncorrectable"),
    "amd_rccl929_mi250x_error_column.txt": _rccl929,
    "amd_rccl_hpcaienvs30_mi300x.txt": _rccl30,
    "amd_rccl2075_strixhalo_broadcast.txt": _no_fault("nccl-tests"),
    "amd_rbt129_mi210_devices.txt": _no_fault("rocm-bandwidth-test"),
    "amd_rocmsmi1715_showall_cut.txt": _no_fault("rocm-smi -a"),
    "amd_rocmsmi_easybuild3978_mi100_product.txt": _no_fault("rocm-smi --csv"),
    "amd_rocmsmi_marimo9237_json.txt": _no_fault("rocm-smi --json"),
    "amd_rocmsmilib108_showtopo_pcie.txt": _no_fault("rocm-smi --showtopo"),
    "amd_rocmsystems2987_mi350x_static.txt": _no_fault("amd-smi (static/metric/list)"),
    "amd_rocmsystems5763_mi250x_hops.txt": _no_fault("amd-smi topology"),
    "amd_sglang5775_mi100_linktype.txt": _no_fault("rocm-smi --showtopo"),
    "ascend_arthurchiao_910b_topo.txt": _no_fault("npu-smi info -t topo"),  # tests/captures/test_capture_ascend.py: more
    "ascend_hamiwebui47_910b4_masked_bus.txt": _no_fault("npu-smi info"),
    "ascend_msswift_910b3_topo.txt": _no_fault("npu-smi info -t topo"),
    "ascend_llamabox31_910b3.txt": _no_fault("npu-smi info"),
    "ascend_vllmascend12980_npusmi26.txt": _no_fault("npu-smi info"),
    "ascend_vllmascend2082_glm45.txt": _no_fault("npu-smi info"),
    "ascend_vllmascend2534_910_8chips.txt": _no_fault("npu-smi info"),
}

from tests.captures.test_capture_transferbench import TB_EXPECT  # noqa: E402  (TransferBench's real captures)

AMD_EXPECT.update(TB_EXPECT)


def test_every_amd_and_ascend_capture_has_its_expectation() -> None:
    assert sorted(AMD_EXPECT) == FILES
    assert sum(n.startswith("amd_") for n in FILES) >= 15 and sum(n.startswith("ascend_") for n in FILES) >= 5


@pytest.mark.parametrize("name", FILES)
def test_doctor_says_what_the_thread_concluded(capsys: pytest.CaptureFixture[str], name: str) -> None:
    data = _json(capsys, "doctor", "--from", str(REAL / name))
    AMD_EXPECT[name](read(str(REAL / name)), data)


# --- inventory: model, memory, bus id where the capture has them ------------------------------
INVENTORY: dict[str, list[tuple[str, str | None, int | None, bool]]] = {  # model, bus id, MiB, in catalog
    "amd_rocmsystems2987_mi350x_static.txt": [("AMD Instinct MI350X", "0000:05:00.0", None, False)],
    "amd_rocmsmi1715_showall_cut.txt": [("unknown", "0000:2F:00.0", None, False)],
    "amd_rocmsmi_marimo9237_json.txt": [("Radeon RX 7900 XT", None, 20464, False)],
    "amd_rocmsmi_easybuild3978_mi100_product.txt": [("AMD Instinct MI100", None, None, True)] * 2,
    "amd_rbt129_mi210_devices.txt": [("AMD Instinct MI210", b, None, True) for b in
                                     ("05:00.0", "08:00.0", "45:00.0", "48:00.0", "87:00.0", "8A:00.0", "C8:00.0",
                                      "CB:00.0")],
    "ascend_vllmascend2534_910_8chips.txt": [("Ascend910", b, 65536, False) for b in
                                             ("0000:9D:00.0", "0000:9F:00.0", "0000:99:00.0")],
    "ascend_vllmascend12980_npusmi26.txt": [("Ascend910", b, 65536, False) for b in ("0000:9D:00.0", "0000:9F:00.0")],
    "ascend_vllmascend2082_glm45.txt": [("Ascend910", b, 65536, False) for b in
                                        ("0000:9D:00.0", "0000:9F:00.0", "0000:99:00.0", "0000:9B:00.0")],
    # the catalog knows the 910B (issue 46); the second NPU's row is cut after its bus id: listed, memory unknown
    "ascend_llamabox31_910b3.txt": [("910B3", "0000:C1:00.0", 65536, True), ("910B3", "0000:C2:00.0", None, True)],
    "ascend_hamiwebui47_910b4_masked_bus.txt": [("910B4-1", None, 65536, True)] * 2,
}


@pytest.mark.parametrize("name", sorted(INVENTORY))
def test_inventory_lists_the_modules_the_capture_names(capsys: pytest.CaptureFixture[str], name: str) -> None:
    data = _json(capsys, "inventory", "--from", str(REAL / name))
    got = [(m["model"], m["bus_id"], m["memory_bytes"] // 2**20 if m["memory_bytes"] else None, m["in_catalog"])
           for m in data["modules"]]
    assert got == INVENTORY[name]
    assert [m["id"] for m in data["modules"]] == [f"gpu{i}" for i in range(len(got))]


def test_an_ascend_910b_takes_the_catalogs_sourced_figures_and_no_invented_ones() -> None:
    """The 910B3 of the capture is the catalog's Ascend 910B (64 GiB HBM, 7 HCCS links, 400 W, each
    sourced); its memory bandwidth and TFLOPS have no source per variant, so they stay unknown."""
    inv = CaptureBackend([str(REAL / "ascend_llamabox31_910b3.txt")])
    model = inv.node().modules[0].model
    assert model.name == "Ascend910B" and model.vendor == "huawei" and model.memory_bytes == 65536 * 2**20
    assert model.fabric_links == 7 and model.memory_bw_gbps is None and model.tflops == {}
    assert any("second row is cut" in n for n in inv.notes())


def test_masked_bus_ids_are_left_out_and_said() -> None:
    notes = CaptureBackend([str(REAL / "ascend_hamiwebui47_910b4_masked_bus.txt")]).notes()
    assert any("2 bus id(s) masked" in n for n in notes)


# --- topo: the link matrix --------------------------------------------------------------------
def _fabric(name: str) -> set[frozenset[str]]:
    return {link.ends for link in CaptureBackend([str(REAL / name)]).node().links if link.kind is LinkKind.XGMI}


def test_rocm_smi_link_types_build_two_xgmi_hives_of_four() -> None:
    hive_a, hive_b = ("gpu0", "gpu2", "gpu3", "gpu7"), ("gpu1", "gpu4", "gpu5", "gpu6")
    want = {frozenset((a, b)) for hive in (hive_a, hive_b) for a in hive for b in hive if a < b}
    assert _fabric("amd_sglang5775_mi100_linktype.txt") == want
    assert CaptureBackend([str(REAL / "amd_sglang5775_mi100_linktype.txt")]).node().fabric_known


def test_pcie_only_weights_and_types_give_no_fabric_link() -> None:
    node = CaptureBackend([str(REAL / "amd_rocmsmilib108_showtopo_pcie.txt")]).node()
    assert len(node.modules) == 4 and not _fabric("amd_rocmsmilib108_showtopo_pcie.txt") and node.fabric_known


def test_hops_alone_say_links_unknown_not_a_full_mesh(capsys: pytest.CaptureFixture[str]) -> None:
    backend = CaptureBackend([str(REAL / "amd_rocmsystems5763_mi250x_hops.txt")])
    node = backend.node()
    assert [m.bus_id for m in node.modules][:2] == ["0000:C1:00.0", "0000:C6:00.0"] and len(node.modules) == 8
    assert not node.fabric_known and not _fabric("amd_rocmsystems5763_mi250x_hops.txt")
    assert any("only the hops table" in n for n in backend.notes())
    topo = _json(capsys, "topo", "--from", str(REAL / "amd_rocmsystems5763_mi250x_hops.txt"))
    assert len(topo["modules"]) == 8


# --- the readers' rules, on constructed inputs (not captures) ---------------------------------
TOPOLOGY = """LINK TYPE TABLE:
             0000:05:00.0 0000:29:00.0 0000:49:00.0
0000:05:00.0 SELF         XGMI         XGMI
0000:29:00.0 XGMI         SELF         XGMI
0000:49:00.0 XGMI         XGMI         SELF

WEIGHT TABLE:
             0000:05:00.0 0000:29:00.0 0000:49:00.0
0000:05:00.0 0            15           30
0000:29:00.0 15           0            15
0000:49:00.0 30           15           0
"""


def test_constructed_weights_keep_only_one_hop_pairs_as_direct(tmp_path: Path) -> None:
    path = tmp_path / "topology.txt"
    path.write_text(TOPOLOGY)
    backend = CaptureBackend([str(path)])
    ends = {link.ends for link in backend.node().links if link.kind is LinkKind.XGMI}
    assert ends == {frozenset(("gpu0", "gpu1")), frozenset(("gpu1", "gpu2"))}
    assert any("1 pair(s) reach each other" in n for n in backend.notes())


def test_constructed_amd_smi_json_static_reads_like_the_text() -> None:
    text = json.dumps([{"gpu": 0, "asic": {"market_name": "AMD Instinct MI300X"},
                        "bus": {"bdf": "0000:05:00.0", "max_pcie_width": 16, "pcie_interface_version": "Gen 5"},
                        "vram": {"size": {"value": 196592, "unit": "MB"}}}])
    parsed = amd_smi.parse(clean(text).lines)
    m = parsed.modules[0]
    assert parsed.kinds == ["amd-smi --json"]
    assert (m.name, m.bus_id, m.memory_mib, m.pcie_gen_max, m.pcie_width_max) == \
        ("AMD Instinct MI300X", "0000:05:00.0", 196592, 5, 16)


def test_constructed_amd_smi_metric_ecc_and_a_second_block() -> None:
    text = "GPU: 0\n    ECC:\n        TOTAL_CORRECTABLE_COUNT: 0\n        TOTAL_UNCORRECTABLE_COUNT: 3\n" \
           "    TEMPERATURE:\n        HOTSPOT: 51 \u00b0C\n    BDF: 0000:05:00.0\n"
    m = amd_smi.parse(clean(text).lines).modules[0]
    assert (m.ecc_uncorrectable, m.temperature_c, m.bus_id) == (3, 51, "0000:05:00.0")


def test_a_matrix_that_disagrees_with_itself_keeps_the_first_and_says_so() -> None:
    text = TOPOLOGY.replace("0000:49:00.0 30           15", "0000:49:00.0 45           15")
    parsed = amd_smi.parse(clean(text).lines)
    assert parsed.fabric is not None and any("disagrees with itself" in n for n in parsed.notes)


def test_amdgpu_reset_failure_and_xgmi_error_lines_name_their_kind() -> None:
    lines = clean("amdgpu 0000:c1:00.0: amdgpu: GPU reset(2) failed\n"
                  "amdgpu 0000:c1:00.0: amdgpu: xgmi link error detected on link 3\n"
                  "[drm] NAME: amdgpu\n").lines
    parsed = kernel.parse(lines)
    assert {(e.kind, e.module) for e in parsed.events} == {("amd_reset_failed", "0000:C1:00.0"),
                                                          ("amd_xgmi_error", "0000:C1:00.0")}
    assert parsed.nvrm_lines == 2  # 'NAME: amdgpu' is not a driver line


def test_npu_smi_row_cut_short_and_garbage_is_refused_or_read(tmp_path: Path) -> None:
    assert not npu_smi.parse(clean("| 0 Ascend910 | OK | 1 2 |\n| x | y | z |\n").lines).modules
    for text in ("GPU: 0\n    ASIC:\n        MARKET_NAME: " + "A" * 100_000, "[" * 50_000 + "]" * 50_000,
                 "HOPS TABLE:\n" + "GPU0 " * 5000 + "\nGPU0 " + "0 " * 5000,
                 "GPU[0] : Card series: " + " " * 200_000 + "x"):
        try:
            parse_text(text, "constructed")
        except GpuvetError:
            pass


# --- watch --prometheus --names amd: AMD Device Metrics Exporter's names ----------------------
def test_names_amd_serves_the_exporters_names_labels_and_units_only() -> None:
    import urllib.request

    from prometheus_client.parser import text_string_to_metric_families

    from gpuvet.backends.select import open_backend
    from gpuvet.watch.loop import WatchConfig, Watcher
    from gpuvet.watch.prometheus import ExportState, serve
    from tests.support.ports import free_port

    backend = open_backend(sim="mi300x-8")
    state = ExportState(names="amd", hostname=backend.node().name)
    port = free_port()
    server, _ = serve(state, f"127.0.0.1:{port}")
    try:
        Watcher(backend, WatchConfig(interval_s=1, slow_every_s=30, duration_s=40, speedup=None), None,
                export=state).run()
        body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    finally:
        server.shutdown()
        server.server_close()
    families = {f.name: f for f in text_string_to_metric_families(body)}
    assert not [n for n in families if n.startswith(("gpuvet_", "DCGM_"))]
    assert {"gpu_junction_temperature", "gpu_power_usage", "gpu_gfx_activity", "gpu_clock"} <= set(families)
    temps = families["gpu_junction_temperature"].samples
    assert len(temps) == 8 and {s.labels["gpu_id"] for s in temps} == {str(i) for i in range(8)}
    assert set(temps[0].labels) == {"gpu_id", "gpu_uuid", "card_model", "hostname"}
    assert all(0 <= s.value <= 100 for s in families["gpu_gfx_activity"].samples)  # %, not a 0-1 ratio
    kinds = {s.labels["clock_type"] for s in families["gpu_clock"].samples}
    assert kinds == {"GPU_CLOCK_TYPE_SYSTEM", "GPU_CLOCK_TYPE_MEMORY"}
    assert all(f.type == "gauge" for f in families.values())


def test_names_amd_is_accepted_and_a_wrong_name_still_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["watch", "--sim", "mesh-4", "--duration", "1s", "--prometheus", "127.0.0.1:9400", "--names", "amdx",
                 "--no-log"])
    assert code == 2 and "nor amd" in capsys.readouterr().err


def test_inventory_of_a_listing_without_pcie_prints_n_a_once(capsys):
    """rocm-bandwidth-test's device list gives no PCIe link: the column says n/a, not 'genn/a xn/a'."""
    assert main(["inventory", "--from", str(REAL / "amd_rbt129_mi210_devices.txt")]) == 0
    out = capsys.readouterr().out
    assert "AMD Instinct MI210" in out and "genn/a" not in out and "xn/a" not in out, out


ROCM_JSON = {"card0": {"Card series": "Instinct MI250X", "Card SKU": "D65209"},
             "card1": {"Card series": "Instinct MI250X", "Card SKU": "D65209"}}
KERNEL_LINES = ("[  12.345] amdgpu 0000:03:00.0: amdgpu: SMU is initialized successfully!\n"
                "[12.400] [drm] Initialized amdgpu 3.54.0 20150101 for 0000:03:00.0 on minor 1\n"
                "[-1] not json either\n")


@pytest.mark.parametrize("indent", [None, 4])
def test_a_kernel_line_before_rocm_smi_json_is_not_its_start(indent: int | None) -> None:
    """'[  12.345] amdgpu …' opens like a JSON array; the JSON starts where a decoder reads past the line."""
    text = KERNEL_LINES + "$ rocm-smi --showproductname --json\n" + json.dumps(ROCM_JSON, indent=indent) + "\n"
    parsed = amd_smi.parse(clean(text).lines)
    assert parsed.kinds == ["rocm-smi --json"]
    assert [m.name for m in parsed.modules] == ["Instinct MI250X", "Instinct MI250X"]


def test_a_cut_rocm_smi_json_after_kernel_lines_is_still_salvaged() -> None:
    whole = json.dumps(ROCM_JSON, indent=4)
    text = KERNEL_LINES + whole[:whole.index('"card1"') + 30] + "\n"
    parsed = amd_smi.parse(clean(text).lines)
    assert [m.name for m in parsed.modules][:1] == ["Instinct MI250X"]
    assert any("before its closing braces" in n for n in parsed.notes)
