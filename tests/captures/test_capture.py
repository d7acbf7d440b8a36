"""`--from` captures: realistic `nvidia-smi topo -m` and `nvidia-smi -q -x` outputs."""

from pathlib import Path

import pytest

from gpuvet.backends.capture.backend import CaptureBackend, parse_smi_xml, parse_topo_matrix, topo_to_node
from gpuvet.errors import CaptureError
from gpuvet.node.diff import diff_nodes
from gpuvet.node.relations import pcie_relations
from tests.conftest import declared

DATA = Path(__file__).parent.parent / "data" / "captures"


def _node(name: str):
    return CaptureBackend([str(DATA / name)]).node()


def _relations_reproduced(name: str) -> None:
    topo = parse_topo_matrix((DATA / name).read_text())
    node = topo_to_node(topo, "t")
    ids = {d: (d.lower() if d.startswith(("GPU", "NIC")) else d) for d in topo.devices}
    rel = pcie_relations(node, list(ids.values()))
    for pair, cell in topo.cells.items():
        a, b = sorted(pair)
        if cell in ("PIX", "PXB", "PHB", "NODE", "SYS"):
            assert rel[frozenset((ids[a], ids[b]))] == cell, (a, b)


@pytest.mark.parametrize("name", ["topo_nvswitch_8gpu.txt", "topo_v100_hybrid_cube_mesh.txt",
                                  "topo_pcie_8gpu.txt", "topo_2gpu_consumer.txt"])
def test_inferred_tree_reproduces_every_pcie_relation(name):
    _relations_reproduced(name)


def test_nvswitch_board_is_recognised_as_switched():
    node = _node("topo_nvswitch_8gpu.txt")
    assert len(node.modules) == 8
    assert {lk.b for lk in node.fabric_links()} == {"nvswitch0"}
    assert all(lk.width == 18 for lk in node.fabric_links())
    assert sum(1 for e in node.endpoints if e.kind == "nic") == 4
    assert {e.label for e in node.endpoints if e.kind == "nic"} == {"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"}
    assert diff_nodes(declared("hgx-h200-8"), node) == []


def test_hybrid_cube_mesh_keeps_nv1_and_nv2():
    node = _node("topo_v100_hybrid_cube_mesh.txt")
    widths = {tuple(sorted(lk.ends)): lk.width for lk in node.fabric_links()}
    assert widths[("gpu0", "gpu3")] == 2 and widths[("gpu0", "gpu1")] == 1
    assert len(widths) == 16  # 6 links per V100: 4 peers each, 8*4/2
    assert all(sum(w for e, w in widths.items() if g in e) == 6 for g in node.module_ids)
    assert len(node.sockets()) == 2


def test_pcie_server_matches_the_pcie_8_preset():
    node = _node("topo_pcie_8gpu.txt")
    assert node.fabric_links() == []
    assert diff_nodes(declared("pcie-8"), node) == []


def test_pcie_server_with_two_gpus_swapped_shows_a_wiring_mismatch():
    text = (DATA / "topo_pcie_8gpu.txt").read_text()
    node = topo_to_node(parse_topo_matrix(text), "t")
    from dataclasses import replace

    mapping = {"gpu2": "gpu5", "gpu5": "gpu2"}
    swapped = replace(node, links=tuple(lk.relabel(mapping) for lk in node.links))
    diffs = diff_nodes(declared("pcie-8"), swapped)
    assert [(d.kind, d.modules) for d in diffs] == [("wiring_mismatch", ("gpu2", "gpu5"))]


def test_consumer_box_direct_nvlink():
    node = _node("topo_2gpu_consumer.txt")
    (link,) = node.fabric_links()
    assert link.ends == {"gpu0", "gpu1"} and link.width == 4


def test_xml_modules_and_software():
    modules, software = parse_smi_xml((DATA / "smi_q_x_h100_8gpu.xml").read_text())
    assert len(modules) == 8
    m = modules[0]
    assert m.model == "NVIDIA H100 80GB HBM3" and m.in_catalog
    assert m.memory_bytes == 81559 * 2**20
    assert (m.pcie_gen_max, m.pcie_width_current) == (5, 16)
    assert m.power_limit_w == 700.0 and m.power_limit_default_w == 700.0
    assert modules[2].power_limit_w == 500.0
    assert software.driver_version == "570.86.15" and software.cuda_driver_version == "12.8"


def test_xml_and_topo_together_find_the_narrow_link():
    backend = CaptureBackend([str(DATA / "topo_nvswitch_8gpu.txt"), str(DATA / "smi_q_x_h100_8gpu.xml")])
    node = backend.node()
    assert node.module("gpu0").model.name == "H100-SXM"
    hgx_h100 = declared("hgx-h200-8")
    diffs = diff_nodes(hgx_h100, node)
    assert [(d.kind, d.between[0]) for d in diffs] == [("link_degraded", "gpu5")]


def test_unreadable_capture_names_the_file(tmp_path):
    with pytest.raises(CaptureError, match="missing.txt"):
        CaptureBackend([str(tmp_path / "missing.txt")])


def test_not_a_topo_matrix(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("hello\nthis is not nvidia-smi\n")
    with pytest.raises(CaptureError, match="docs/doctor.md's table lists every format"):  # newcomer 56: not all 50
        CaptureBackend([str(path)])


def test_broken_xml(tmp_path):
    path = tmp_path / "smi.xml"
    path.write_text("<nvidia_smi_log><gpu>")
    with pytest.raises(CaptureError, match="before any field could be read"):
        CaptureBackend([str(path)])


def test_truncated_row(tmp_path):
    text = (DATA / "topo_2gpu_consumer.txt").read_text().replace("GPU1\tNV4\t X \t", "GPU1\t", 1)
    path = tmp_path / "cut.txt"
    path.write_text(text)
    with pytest.raises(CaptureError, match="row GPU1"):
        CaptureBackend([str(path)])


def test_ansi_colour_codes_are_ignored():
    text = (DATA / "topo_2gpu_consumer.txt").read_text().replace("GPU0", "\x1b[4mGPU0\x1b[0m")
    topo = parse_topo_matrix(text)
    assert topo.devices == ["GPU0", "GPU1"]


# --- issue 34: tolerant reading and failures read for what they say ----------------------------------
# The texts below are SIMULATED: written here in the formats the real corpus shows
# (tests/data/captures/real/) for the cases no public thread in the corpus holds whole.
import json  # noqa: E402

from gpuvet.captures import kernel_echoes, kernel_failed, kernel_host, kernel_nvgpu, kernel_unknown, windows  # noqa: E402
from gpuvet.captures.kernel import MESSAGES  # noqa: E402
from gpuvet.captures.read import parse_text  # noqa: E402
from gpuvet.cli.app import main  # noqa: E402
from gpuvet.doctor.model import causes  # noqa: E402
from gpuvet.doctor.xids import kernel_message_catalog  # noqa: E402
from gpuvet.node.bus import bus_key  # noqa: E402


def _doctor_json(tmp_path, text: str, capsys) -> dict:
    path = tmp_path / "capture.txt"
    path.write_text(text)
    code = main(["doctor", "--from", str(path), "--json"])
    out, err = capsys.readouterr()
    assert code in (0, 1) and "Traceback" not in err
    return json.loads(out)


def _causes_of(data: dict) -> dict[str, list[dict]]:
    by: dict[str, list[dict]] = {}
    for f in data["findings"]:
        by.setdefault(f["cause"], []).append(f)
    return by


def test_every_kernel_message_kind_names_a_cause_with_a_fix():
    from gpuvet.captures import (
        app_gpu_lines,
        host_errors,
        host_mce_logged,
        host_ras,
        kernel_amd_client,
        kernel_driver_oops,
        kernel_driver_resources,
        kernel_edge_accel,
        kernel_flips,
        kernel_intel_fault,
        kernel_intel_fw,
        kernel_intel_reset,
        kernel_nouveau,
        kernel_vendor_reset,
        ps_states,
        smi_messages,
    )

    table = kernel_message_catalog()
    assert {m.kind for m in MESSAGES} | set(kernel_echoes.DERIVED) | set(windows.KINDS) \
        | {kernel_unknown.UNNAMED, kernel_unknown.LOAD_OOPS, *kernel_failed.KINDS} \
        | set(kernel_host.KINDS) | set(kernel_nvgpu.KINDS) | set(kernel_nouveau.KINDS) | {kernel_intel_fault.KIND} \
        | {kernel_vendor_reset.KIND} | set(smi_messages.KINDS) | set(app_gpu_lines.KINDS) \
        | set(kernel_intel_fw.KINDS) | set(kernel_driver_resources.KINDS) | {kernel_intel_reset.KIND} \
        | {kernel_amd_client.KIND} | set(host_errors.KINDS) | {kernel_flips.KIND} | set(host_ras.KINDS) \
        | {host_mce_logged.KIND} | set(kernel_edge_accel.KINDS) | {ps_states.KIND, ps_states.ONCE} \
        | {kernel_driver_oops.KIND} == set(table)
    for kind, info in table.items():
        assert info.cause in causes() and info.action and info.meaning, kind


OLD_SMI = """GPU 00000000:3B:00.0
    Product Name                    : Tesla V100-PCIE-32GB
    Clocks
        Graphics                    : 345 MHz
        SM                          : 345 MHz
    Max Clocks
        Graphics                    : 1380 MHz
        SM                          : 1380 MHz
Clocks Throttle Reasons
        Idle                        : Not Active
        SW Power Cap                : Not Active
        HW Slowdown                 : Active
            HW Thermal Slowdown     : Not Active
            HW Power Brake Slowdown : Active
"""


def test_old_flush_left_throttle_section_with_a_power_brake_and_a_quarter_clock(tmp_path, capsys):
    data = _doctor_json(tmp_path, OLD_SMI, capsys)
    found = _causes_of(data)
    assert found["hw_power_brake"][0]["module"] == "0000:3B:00.0"
    low = found["clocks_held_low"][0]["evidence"]
    assert (low["sm_clock_mhz"], low["sm_clock_max_mhz"]) == (345, 1380)
    assert any("flush left" in n for n in data["notes"])


def test_a_clock_above_a_quarter_or_an_idle_module_is_not_held_low(tmp_path, capsys):
    idle = OLD_SMI.replace("HW Power Brake Slowdown : Active", "HW Power Brake Slowdown : Not Active").replace(
        "HW Slowdown                 : Active", "HW Slowdown                 : Not Active").replace(
        "Idle                        : Not Active", "Idle                        : Active")
    assert "clocks_held_low" not in _causes_of(_doctor_json(tmp_path, idle, capsys))
    faster = OLD_SMI.replace("SM                          : 345 MHz", "SM                          : 346 MHz")
    assert "clocks_held_low" not in _causes_of(_doctor_json(tmp_path, faster, capsys))
    no_reasons = OLD_SMI.split("Clocks Throttle Reasons")[0]  # an excerpt without them: idle or not is unknown
    assert "clocks_held_low" not in _causes_of(_doctor_json(tmp_path, no_reasons, capsys))


def test_an_operators_marker_does_not_hide_a_pending_remap(tmp_path, capsys):
    text = """GPU 00000000:18:00.0
    Remapped Rows
        Correctable Error                 : 0
        Uncorrectable Error               : 2
        Pending                           : Yes    <===
        Remapping Failure Occurred        : No
"""
    data = _doctor_json(tmp_path, text, capsys)
    assert _causes_of(data)["row_remap_pending"][0]["module"] == "0000:18:00.0"
    assert any("marker after the value" in n and "line(s) 5" in n for n in data["notes"])


def test_ecc_mode_unknown_error_after_an_uncorrectable_error_needs_a_reset_not_ecc_off(tmp_path, capsys):
    text = """GPU 00000000:07:00.0
    Product Name                          : Tesla V100S-PCIE-32GB
    Ecc Mode
        Current                           : Unknown Error
        Pending                           : Unknown Error
    ECC Errors
        Volatile
            Double Bit
                Device Memory             : 1
                Total                     : 1
"""
    found = _causes_of(_doctor_json(tmp_path, text, capsys))
    reset = found["module_needs_reset"][0]
    assert reset["module"] == "0000:07:00.0" and reset["evidence"]["ecc_mode"] == "Unknown Error"
    assert "ecc_disabled" not in found


def _nvlink_s(product: str, up: int, total: int = 18) -> str:
    lines = [f"GPU 0: {product} (UUID: GPU-00000000-0000-0000-0000-000000000000)"]
    lines += [f"         Link {k}: 26.562 GB/s" if k < up else f"         Link {k}: <inactive>" for k in range(total)]
    return "\n".join(lines) + "\n"


def _step(data: dict, check: str) -> dict:
    return next(s for s in data["steps"] if s["check"] == check)


def _doctor_json_expect(tmp_path, text: str, spec: str, capsys) -> dict:
    (tmp_path / "node.yaml").write_text(spec)
    (tmp_path / "capture.txt").write_text(text)
    code = main(["doctor", "--from", str(tmp_path / "capture.txt"), "--expect", str(tmp_path / "node.yaml"), "--json"])
    out, err = capsys.readouterr()
    assert code in (0, 1) and "Traceback" not in err
    return json.loads(out)


def _bridged_pair_spec(width: int) -> str:
    return ("name: h100-pcie-pair\nmodules:\n"
            "  - {id: gpu0, custom: {name: NVIDIA H100 PCIe, fabric: nvlink}}\n"
            "  - {id: gpu1, custom: {name: NVIDIA H100 PCIe, fabric: nvlink}}\n"
            f"links:\n  - {{between: [gpu0, gpu1], kind: nvlink, width: {width}, lane_gbps: 25}}\n")


def test_a_bridged_h100_pcie_has_inactive_links_by_design(tmp_path, capsys):
    # H100 PCIe: 12 of its 18 links are wired to the three bridge connectors (4 each); the other 6
    # are inactive by design (Azure/azurehpc-health-checks#162, NCv5)
    full = _doctor_json(tmp_path, _nvlink_s("NVIDIA H100 PCIe", 12), capsys)
    assert "nvlink_down" not in _causes_of(full) and _step(full, "captured_links")["status"] == "clear"
    partial = _causes_of(_doctor_json(tmp_path, _nvlink_s("NVIDIA H100 PCIe", 10), capsys))
    assert partial["nvlink_down"][0]["evidence"]["links_down"] == list(range(10, 18))  # a bridge half-seated
    sxm = _causes_of(_doctor_json(tmp_path, _nvlink_s("NVIDIA H100 80GB HBM3", 12), capsys))
    assert sxm["nvlink_down"][0]["severity"] == "critical"  # an SXM module has no such design


@pytest.mark.parametrize("up", [0, 4, 8])
def test_a_bridged_h100_pcie_with_fewer_links_than_a_full_bridge_set_cannot_be_judged_undeclared(tmp_path, capsys, up):
    # one bridge fitted by design, or two of three lost: the links up cannot tell which
    data = _doctor_json(tmp_path, _nvlink_s("NVIDIA H100 PCIe", up), capsys)
    step = _step(data, "captured_links")
    assert "nvlink_down" not in _causes_of(data)
    assert step["status"] == "inconclusive" and "--expect" in step["summary"] and "bridges" in step["summary"]


def test_a_bridged_h100_pcie_is_judged_against_the_declared_bridge_count(tmp_path, capsys):
    one_bridge = _doctor_json_expect(tmp_path, _nvlink_s("NVIDIA H100 PCIe", 4), _bridged_pair_spec(4), capsys)
    assert "nvlink_down" not in _causes_of(one_bridge) and _step(one_bridge, "captured_links")["status"] == "clear"
    lost = _causes_of(_doctor_json_expect(tmp_path, _nvlink_s("NVIDIA H100 PCIe", 4), _bridged_pair_spec(12), capsys))
    down = lost["nvlink_down"][0]
    assert down["severity"] == "critical" and down["evidence"]["links_expected"] == 12
    assert down["evidence"]["links_down"] == list(range(4, 18))


def _evidence(step: dict, field: str) -> list[str]:
    return [e["value"] for e in step["evidence"] if e["field"] == field]


def test_the_clear_of_captured_links_counts_the_links_up_and_the_counters_set(tmp_path, capsys):
    # 12 of 18 listed links up on a bridged H100 PCIe (the other 6 unwired): "links up" is 12, not 18
    bridged = _step(_doctor_json(tmp_path, _nvlink_s("NVIDIA H100 PCIe", 12), capsys), "captured_links")
    assert bridged["status"] == "clear" and _evidence(bridged, "links up") == ["12"]
    # a counter gpuvet does not judge (not CRC, replay or recovery) that is set is counted, not reported as 0
    errors = ("GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-1c2a3b4d-0000-1111-2222-333344445555)\n"
              "         Link 0: Replay Errors: 0\n         Link 0: CRC Errors: 0\n"
              "         Link 0: Rx Malformed Packet Errors: 2\n         Link 1: Replay Errors: 0\n")
    step = _step(_doctor_json(tmp_path, errors, capsys), "captured_links")
    assert step["status"] == "clear" and _evidence(step, "error counters read / non-zero") == ["4 / 1"]


def test_open_mpi_tag_output_is_stripped_even_on_a_minority_of_lines():
    text = "\n".join(["NCCL INFO line without a tag"] * 5 + [
        "[1,0]<stdout>:#       size         count      type   redop    root     time   algbw   busbw #wrong",
        "[1,0]<stdout>:           8             2     float     sum      -1    26.40    0.00    0.00      0"
        "    26.33    0.00    0.00      0"])
    fc = parse_text(text, "tagged.txt")
    assert [r.size_bytes for r in fc.nccl.results[0].rows] == [8]
    assert any("Open MPI --tag-output" in n for n in fc.notes)


def test_nccl_tests_with_redop_but_no_root_and_a_float_error_column():
    fc = parse_text("#       size         count    type   redop     time   algbw   busbw  error\n"
                    "     1048576        262144   float     sum    162.1    6.47    5.66  0e+00    162.0    6.47"
                    "    5.66  0e+00\n", "mid.txt")
    (row,) = fc.nccl.results[0].rows
    assert (row.time_us, row.busbw, row.wrong) == (162.1, 5.66, 0)


def test_out_of_bounds_failed_is_corrupt_data(tmp_path, capsys):
    head = "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
    tail = "# Out of bounds values : 50 FAILED\n# Avg bus bandwidth    : 0.00\n"
    found = _causes_of(_doctor_json(tmp_path, head + tail, capsys))  # the table cut, its summary kept
    assert found["data_corruption_in_transfer"][0]["evidence"]["error"] == "50 wrong values"
    assert "collective_test_failed" not in found
    row = "           8             2     float     sum      -1    42.56    0.00    0.00      2\n"
    data = _doctor_json(tmp_path, head + row + tail, capsys)  # the #wrong column names the size instead
    assert _causes_of(data)["data_corruption_in_transfer"][0]["evidence"]["sizes"] == [8]
    step = next(s for s in data["steps"] if s["check"] == "benchmark_failures")
    assert step["status"] == "inconclusive"  # a FAILED line is never "clear"


def test_an_nccl_tests_run_without_its_summary_did_not_run_to_the_end(tmp_path, capsys):
    whole = (DATA / "nccl_all_reduce_small_sizes.txt").read_text()
    assert "# Avg bus bandwidth" in whole and "# Out of bounds values" in whole
    step = _step(_doctor_json(tmp_path, whole, capsys), "benchmark_failures")
    assert step["status"] == "clear" and "ran to the end" in step["summary"]
    # every row up to maxBytes, then nothing: the summary nccl-tests prints last is missing (cut, killed, hung)
    cut = "\n".join(ln for ln in whole.splitlines()
                    if not ln.startswith(("# Out of bounds", "# Avg bus")) and ln.strip() != "#") + "\n"
    step = _step(_doctor_json(tmp_path, cut, capsys), "benchmark_failures")
    assert step["status"] == "inconclusive" and "ends before nccl-tests' summary" in step["summary"]
    assert "ran to the end" not in step["summary"]


def test_a_kernel_log_without_an_xid_clears_xid_log_citing_the_driver_lines_read(tmp_path, capsys):
    log = ("[    4.1] nvidia: loading out-of-tree module taints kernel.\n"
           "[    4.2] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023\n"
           "[    4.3] NVRM: GPU 0000:2a:00.0: persistence mode enabled\n")
    step = _step(_doctor_json(tmp_path, log, capsys), "xid_log")
    assert step["status"] == "clear" and "no Xid" in step["summary"]
    assert step["evidence"] == [{"source": "capture.txt (kernel log)", "field": "driver lines read / Xid lines",
                                 "value": "2 / 0", "where": None}]
    # captures without a kernel log say nothing about Xids: still can't tell
    step = _step(_doctor_json(tmp_path, _nvlink_s("NVIDIA H100 80GB HBM3", 18), capsys), "xid_log")
    assert step["status"] == "inconclusive"


def test_a_kernel_log_and_nvidia_smi_q_name_one_module_one_way(tmp_path, capsys):
    # the driver names the module 0000:2a:00 (Xid) and 0000:2a:00.0 (NVRM GPU line); -q says 00000000:2A:00.0
    (tmp_path / "dmesg.txt").write_text(
        "[Tue Nov 25 03:12:44 2026] NVRM: Xid (PCI:0000:2a:00): 48, pid=59117, name=python, An uncorrectable double "
        "bit error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0.\n"
        "[Tue Nov 25 03:12:45 2026] NVRM: GPU 0000:2a:00.0: GPU may need to be reset\n")
    code = main(["doctor", "--all", "--json", "--from", str(tmp_path / "dmesg.txt"),
                 "--from", str(DATA / "smi_q_h100_2gpu.txt")])
    data = json.loads(capsys.readouterr().out)
    named = {f["module"] for f in data["findings"] if f["module"] and "2A" in f["module"].upper()}
    causes = {f["cause"] for f in data["findings"] if f["module"] == "0000:2A:00.0"}
    assert code == 1 and named == {"0000:2A:00.0"}
    assert {"module_needs_reset", "xid", "ecc_disabled"} <= causes  # kernel log and -q findings, one name


def test_bus_key_is_one_spelling_of_a_pci_address():
    for text in ("00000000:2A:00.0", "0000:2a:00", "0000:2A:00.0", " 0000:2a:00.0 ", "2a:00.0"):
        assert bus_key(text) == "0000:2A:00.0", text
    assert bus_key("0019:01:00") == "0019:01:00.0" and bus_key("0000:2a:00.1") == "0000:2A:00.1"
    assert bus_key("00010000:05:00.0") == "10000:05:00.0"  # a domain past 0xFFFF keeps its digits
    assert bus_key("GPU6") == "GPU6" and bus_key("0x16") == "0x16"  # not a bus id: as given


def test_power_cables_message_names_its_module(tmp_path, capsys):
    text = ("[    5.1] NVRM: GPU 0000:41:00.0: GPU does not have the necessary power cables connected.\n"
            "[    5.2] NVRM: GPU 0000:41:00.0: RmInitAdapter failed! (0x24:0x1c:1436)\n")
    found = _causes_of(_doctor_json(tmp_path, text, capsys))
    assert found["module_power_cables"][0]["module"] == "0000:41:00.0"
    assert found["module_power_cables"][0]["evidence"]["line"] == 1


def test_a_kernel_log_without_messages_says_what_it_read(tmp_path, capsys):
    data = _doctor_json(tmp_path, "[    1.0] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15\n"
                                  "[    1.1] NVRM: Xid (PCI:0000:01:00): 13, pid=1, Graphics Exception\n", capsys)
    step = next(s for s in data["steps"] if s["check"] == "kernel_messages")
    assert step["status"] == "clear" and "NVRM" in json.dumps(step)


def test_dmon_rows_are_not_read_as_collective_results():
    fc = parse_text("# gpu   pwr gtemp mtemp    sm   mem   enc   dec  mclk  pclk\n"
                    "# Idx     W     C     C     %     %     %     %   MHz   MHz\n"
                    "    0    62    41     -     0     0     0     0  1593  1755\n", "dmon.txt")
    assert fc.kinds == ["nvidia-smi dmon"] and fc.nccl.results == [] and fc.dmon.samples[0].values["pclk"] == 1755


def test_collect_env_topology_whose_header_lost_its_blank():
    fc = parse_text("GPU Topology:\nGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\nGPU0\t X \tNV4\t0-31\t0\n"
                    "GPU1\tNV4\t X \t0-31\t0\n", "env.txt")
    assert fc.topo is not None and fc.topo.devices == ["GPU0", "GPU1"]
    assert any("flush left" in n for n in fc.notes)


def test_nvbandwidth_waived_after_its_running_line_names_the_test(tmp_path, capsys):
    text = ("nvbandwidth Version: v0.8\n\nDevice 0: NVIDIA GeForce RTX 4090 (00000000:01:00)\n"
            "Device 1: NVIDIA GeForce RTX 4090 (00000000:02:00)\n\n"
            "Running device_to_device_memcpy_read_ce.\nWaived: \n\n"
            "Running host_to_device_memcpy_ce.\nmemcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\n"
            "           0         1\n 0     25.50     24.26\n\nSUM host_to_device_memcpy_ce 49.76\n")
    found = _causes_of(_doctor_json(tmp_path, text, capsys))
    assert found["p2p_unavailable"][0]["evidence"]["tests"] == ["device_to_device_memcpy_read_ce"]


def test_an_excerpt_that_opens_with_a_flush_left_section_is_read():
    """No GPU line above it: an older driver's flush-left heading is the excerpt's first line."""
    fc = parse_text("Clocks Throttle Reasons\n    Idle                        : Not Active\n"
                    "    HW Slowdown                 : Active\n        HW Power Brake Slowdown : Active\n", "brake.txt")
    assert fc.smi is not None
    (module,) = fc.smi.modules
    assert module.fields["Clocks Throttle Reasons/HW Power Brake Slowdown"] == "Active", module.fields


@pytest.mark.parametrize("cut", ["    [...]", "[...]", "  (...)", "    [snip]", "<snip>", "    ..."])
def test_a_posters_cut_in_any_common_spelling_keeps_the_gpu_block_whole(cut):
    fc = parse_text(f"GPU 00000000:10:1C.0\n    Product Name          : NVIDIA A100-SXM4-80GB\n{cut}\n"
                    "    Remapped Rows\n        Pending           : Yes\n", "cut.txt")
    assert fc.smi is not None
    (module,) = fc.smi.modules
    assert module.bus_id == "0000:10:1C.0" and module.fields.get("Remapped Rows/Pending") == "Yes", module
    assert any("the poster cut lines" in n for n in fc.notes), fc.notes


@pytest.mark.parametrize("prefix", ["(head, rank=0, pid=2342) ", "(worker1, rank=1, ip=10.0.0.2, pid=77) ",
                                    "(pid=4242) ", "(TrainWorker pid=311, ip=10.1.2.3) "])
def test_ray_and_skypilot_prefixes_are_removed_even_over_an_open_mpi_tag(prefix):
    """A SkyPilot job's nccl-tests log: Ray's worker prefix, then Open MPI's tag, on every line
    (the format of skypilot-org/skypilot examples/gcp_gpu_direct_tcpx; refused as unreadable before)."""
    rows = ["#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw"
            "   busbw #wrong",
            "           8             2     float     sum      -1    41.20    0.00    0.00      0    40.92    0.00"
            "    0.00      0",
            "          16             4     float     sum      -1    40.85    0.00    0.00      0    40.61    0.00"
            "    0.00      0"]
    fc = parse_text("\n".join(f"{prefix}[1,0]<stdout>:{r}" for r in rows), "sky.txt")
    assert [r.size_bytes for r in fc.nccl.results[0].rows] == [8, 16]
    assert any("Ray/SkyPilot worker" in n for n in fc.notes) and any("Open MPI" in n for n in fc.notes), fc.notes


@pytest.mark.parametrize("prefix", ["0: ", "1: ", "gpu-node07: "])
def test_a_launcher_prefixed_kernel_log_keeps_its_driver_tags(prefix):
    """After srun's or pdsh's prefix is removed, the driver's own tags (NVRM:, nvidia-modeset:,
    nvidia-nvlink:) are not a second host prefix: stripping them lost every Xid (exit 2)."""
    log = "\n".join(prefix + line for line in (
        "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.",
        "nvidia-modeset: ERROR: GPU:0: Idling display engine timed out",
        "NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.",
        "nvidia-nvlink: Nvlink Core is being initialized, major device number 234",
        "NVRM: Xid (PCI:0000:5e:00): 79, pid=2345, name=python, GPU has fallen off the bus."))
    fc = parse_text(log, "dmesg.txt")
    assert sorted({x.bus_id for x in fc.kernel.xids if x.code == 79}) == ["0000:3B:00.0", "0000:5E:00.0"], fc.kernel.xids


def test_dmesg_without_a_prefix_whose_driver_tags_differ_is_not_read_as_pdsh():
    fc = parse_text("NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python, GPU has fallen off the bus.\n"
                    "nvidia-modeset: ERROR: GPU:0: Idling display engine timed out\n"
                    "nvidia-nvlink: Nvlink Core is being initialized\n", "dmesg.txt")
    assert [x.code for x in fc.kernel.xids] == [79] and not any("pdsh" in n for n in fc.notes), fc.notes


def test_a_key_repeated_after_a_cut_is_another_gpus_not_the_named_ones():
    """GPU 07 reads Pending: No; after the poster's '[...]' a second Remapped Rows says Yes: that
    is the next GPU's, whose line was cut away, not a reading that overwrites GPU 07's."""
    fc = parse_text("GPU 00000000:07:00.0\n    Remapped Rows\n        Pending                 : No\n"
                    "        Uncorrectable Error     : 0\n    [...]\n    Remapped Rows\n"
                    "        Pending                 : Yes\n        Uncorrectable Error     : 1\n", "cut.txt")
    assert fc.smi is not None
    first, second = fc.smi.modules
    assert first.bus_id == "0000:07:00.0" and first.fields["Remapped Rows/Pending"] == "No", first
    assert second.bus_id.startswith("GPU (bus id not in") and second.fields["Remapped Rows/Pending"] == "Yes"


def test_a_cut_inside_a_markdown_quote_is_a_cut_and_the_note_quotes_what_the_file_had():
    fc = parse_text("GPU 00000000:07:00.0\n>    Product Name          : NVIDIA A100\n>    [...]\n"
                    ">    Remapped Rows\n>        Pending           : Yes\n", "quoted.txt")
    assert fc.smi is not None
    (module,) = fc.smi.modules
    assert module.bus_id == "0000:07:00.0" and module.fields.get("Remapped Rows/Pending") == "Yes"
    (note,) = [n for n in fc.notes if "the poster cut lines" in n]
    assert "('[...]')" in note, note
