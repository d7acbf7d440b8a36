"""The corpus of captures people posted publicly (tests/data/captures/real/): every file is read
without a traceback or an exit 2 by `doctor --from` and `topo --from`, and each gives what the
poster (or the maintainer who answered) said it shows. The expectations below quote them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gpuvet.backends.capture import CaptureBackend
from gpuvet.captures.read import FileCapture, read
from gpuvet.captures.records import UNNAMED
from gpuvet.captures.smi_text import health
from gpuvet.cli.app import main

REAL = Path(__file__).parent / "data" / "captures" / "real"
FILES = sorted(p.name for p in REAL.iterdir())


_DOCTOR: dict[str, tuple[int, dict[str, Any]]] = {}  # one doctor run per file serves both tests


def _doctor(capsys: pytest.CaptureFixture[str], name: str) -> tuple[int, dict[str, Any]]:
    if name not in _DOCTOR:
        code = main(["doctor", "--from", str(REAL / name), "--json"])
        out, err = capsys.readouterr()
        assert "Traceback" not in err
        _DOCTOR[name] = (code, json.loads(out))
    return _DOCTOR[name]


def _found(data: dict[str, Any]) -> set[tuple[str, str | None]]:
    return {(f["cause"], f.get("module")) for f in data["findings"]}


def _causes(data: dict[str, Any]) -> set[str]:
    return {f["cause"] for f in data["findings"]}


def _finding(data: dict[str, Any], cause: str) -> dict[str, Any]:
    return next(f for f in data["findings"] if f["cause"] == cause)


@pytest.mark.parametrize("name", FILES)
def test_every_capture_names_its_source_and_stays_small(name: str) -> None:
    first = (REAL / name).read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("# source: https://") and " — " in first
    assert (REAL / name).stat().st_size < 50_000


@pytest.mark.parametrize("name", FILES)
def test_doctor_and_topo_read_every_capture(capsys: pytest.CaptureFixture[str], name: str) -> None:
    code, data = _doctor(capsys, name)
    assert code in (0, 1) and any("read as" in n for n in data["notes"])
    code = main(["topo", "--from", str(REAL / name), "--json"])
    out, err = capsys.readouterr()
    assert code in (0, 1) and "Traceback" not in err
    topo = json.loads(out)
    if not topo["modules"]:  # no topology in the file: a clear note, not an invented node
        assert any("no topology or module list" in n for n in topo["notes"])


def test_every_capture_has_its_own_expectations() -> None:
    assert sorted(EXPECT) == FILES


# --- what each poster said ------------------------------------------------------------------
def _dcgm198(fc: FileCapture, data: dict[str, Any]) -> None:
    # "I have a machine where all nvlinks are down" — 18 links D on gpuId 0 and 1; yet diag passes
    assert {("nvlink_down", "gpuId 0"), ("nvlink_down", "gpuId 1")} <= _found(data)
    assert _finding(data, "nvlink_down")["evidence"]["links_down"] == list(range(18))
    assert fc.dcgm.version == "3.3.7" and {r.status for r in fc.dcgm.results} == {"pass"}


def _dcgm253(fc: FileCapture, data: dict[str, Any]) -> None:
    # DCGM 4.2.3 per-GPU lines: software GPU0-3 Pass, memory Pass (the warnings are past the excerpt)
    per_gpu = {(r.test, r.gpu, r.status) for r in fc.dcgm.results}
    assert {("software", str(g), "pass") for g in range(4)} <= per_gpu and ("memory", None, "pass") in per_gpu
    assert fc.dcgm.version == "4.2.3" and not _causes(data) & {"dcgm_diag_failed", "dcgm_diag_warning"}


def _autopilot68(fc: FileCapture, data: dict[str, Any]) -> None:
    # the PCIe failure the poster reports is below the stored excerpt: only passes can be read
    assert fc.dcgm.version == "3.3.5" and [r.test for r in fc.dcgm.results] == [
        "Denylist", "NVML Library", "CUDA Main Library", "Permissions and OS Blocks"]
    assert "dcgm_diag_failed" not in _causes(data)


def _godcgm52(fc: FileCapture, data: dict[str, Any]) -> None:
    assert fc.dcgm.version == "3.3.1" and len(fc.dcgm.results) == 8
    assert {r.category for r in fc.dcgm.results} == {"Deployment"} and {r.status for r in fc.dcgm.results} == {"pass"}


def _dcgm_json(fc: FileCapture, data: dict[str, Any]) -> None:
    # DCGM's own 'real output' sample: a warning line before the JSON, nulls between tests
    assert "dcgmi diag -j" in fc.kinds and fc.dcgm.version == "3.1.0"
    assert len([r for r in fc.dcgm.results if r.category == "Deployment"]) == 9
    assert sorted(r.gpu for r in fc.dcgm.results if r.test == "software") == [str(g) for g in range(8)]
    assert {r.status for r in fc.dcgm.results} == {"pass"} and data["findings"] == []


def _geerling480(fc: FileCapture, data: dict[str, Any]) -> None:
    # LnkSta: Speed 5GT/s (downgraded), Width x1 (downgraded); CESta AdvNonFatalErr+
    (link,) = fc.lspci.links
    assert (link.speed_gts, link.width, link.width_downgraded) == (5.0, 1, True)
    assert _finding(data, "pcie_link_downgraded")["confidence"] >= 0.9
    assert _finding(data, "pcie_aer_errors")["evidence"]["correctable"] == ["AdvNonFatalErr"]


def _hwloc653(fc: FileCapture, data: dict[str, Any]) -> None:
    # the A100's lspci -vvv, cut before its link lines: read, but not judged
    assert fc.lspci.links == [] and any("DA:00.0 has no LnkCap/LnkSta" in n for n in fc.notes)
    assert "pcie_link_downgraded" not in _causes(data)


def _jan183(fc: FileCapture, data: dict[str, Any]) -> None:
    # "bandwidth is downgraded due to an incompatibility issue": 2.5GT/s of 16GT/s behind a riser
    (link,) = fc.lspci.links
    assert (link.cap_speed_gts, link.cap_width, link.speed_gts, link.width) == (16.0, 16, 2.5, 16)
    ev = _finding(data, "pcie_link_downgraded")["evidence"]
    assert ev["speed_gts"] == 2.5 and ev["max_speed_gts"] == 16.0 and "idle" in ev["note"]


def _nccl_header_only(ranks: int | None, nodes: tuple[str, ...]) -> Callable[[FileCapture, dict[str, Any]], None]:
    def check(fc: FileCapture, data: dict[str, Any]) -> None:
        (r,) = fc.nccl.results
        assert r.rows == [] and r.ranks == ranks and r.nodes == nodes
        assert any("without result rows" in n for n in fc.notes) and data["findings"] == []
    return check


def _nccl1530(fc: FileCapture, data: dict[str, Any]) -> None:
    (r,) = fc.nccl.results
    assert (r.op, r.ranks, r.nodes) == ("all_reduce", 8, ("gpu59",))
    assert [(x.size_bytes, x.wrong) for x in r.rows] == [(8, 0)]


def _nccl340(fc: FileCapture, data: dict[str, Any]) -> None:
    # the old table (no redop/root, error column 0e+00) and its summary; the next command is broadcast_perf
    (r,) = fc.nccl.results
    assert r.op == "unknown" and len(r.rows) == 12 and r.avg_busbw == pytest.approx(6.6972)
    assert r.rows[-1].busbw == pytest.approx(20.34) and {x.wrong for x in r.rows} == {0}
    assert "data_corruption_in_transfer" not in _causes(data)


def _nccl644(fc: FileCapture, data: dict[str, Any]) -> None:
    (r,) = fc.nccl.results
    assert len(r.rows) == 13 and r.rows[-1].busbw == pytest.approx(7.32)
    assert any("line(s) 16" in n and "skipped" in n for n in fc.notes)  # the row cut mid-word


def _tests107(fc: FileCapture, data: dict[str, Any]) -> None:
    _nccl_header_only(1, ("ip-172-31-20-228", "ip-172-31-22-230"))(fc, data)
    assert any("rank numbers repeat" in n for n in fc.notes)  # both nodes print rank 0: two jobs


def _tests128(fc: FileCapture, data: dict[str, Any]) -> None:
    (r,) = fc.nccl.results
    assert r.op == "reduce_scatter" and len(r.rows) == 7 and {x.wrong for x in r.rows} == {0}
    assert "data_corruption_in_transfer" not in _causes(data)


def _tests232(fc: FileCapture, data: dict[str, Any]) -> None:
    # "busbw is 50, theoretical busbw should be 200": far from 200 in every row read (largest 41.31)
    (r,) = fc.nccl.results
    assert r.op == "all_reduce" and len(r.rows) == 5 and max(x.busbw or 0 for x in r.rows) == pytest.approx(41.31)
    assert {x.wrong for x in r.rows} == {0} and "data_corruption_in_transfer" not in _causes(data)


def _tests27(fc: FileCapture, data: dict[str, Any]) -> None:
    (r,) = fc.nccl.results
    assert r.rows == [] and r.avg_busbw == pytest.approx(3.94145)


def _tests306(fc: FileCapture, data: dict[str, Any]) -> None:
    _nccl_header_only(8, ("node3", "node2"))(fc, data)
    assert any("rank numbers repeat" in n for n in fc.notes)


def _nvb15(fc: FileCapture, data: dict[str, Any]) -> None:
    m = fc.nvb.matrices
    assert m["host_to_device_memcpy_ce"][0][0] == 25.50 and len(m["device_to_host_memcpy_ce"][0]) == 8
    assert m["host_to_device_bidirectional_memcpy_ce"][0][:2] == [11.24, 14.42]
    assert any("cut" in n for n in fc.notes) and len(fc.nvb.devices) == 8


def _nvb24(fc: FileCapture, data: dict[str, Any]) -> None:
    # "host_to_device_memcpy_sm low than device_to_host_memcpy_sm" — 35 vs 52.8 GB/s
    h2d, d2h = fc.nvb.matrices["host_to_device_memcpy_sm"][0], fc.nvb.matrices["device_to_host_memcpy_sm"][0]
    assert len(h2d) == len(d2h) == 8 and max(v or 0 for v in h2d) < 36 < 52 < min(v or 99 for v in d2h)


def _nvb34(fc: FileCapture, data: dict[str, Any]) -> None:
    # "Invalid value when checking the pattern" during device_to_device_memcpy_read_ce
    ev = _finding(data, "copy_verification_failed")["evidence"]
    assert ev["test"] == "device_to_device_memcpy_read_ce" and len(fc.nvb.devices) == 8


def _nvb42(fc: FileCapture, data: dict[str, Any]) -> None:
    assert fc.nvb.matrices == {"host_to_device_memcpy_sm": [[25.13]]}
    assert fc.nvb.devices[0].name == "NVIDIA A100-SXM4-40GB" and fc.nvb.devices[0].bus_id == "00000000:99:00"


def _nvb50(fc: FileCapture, data: dict[str, Any]) -> None:
    # maintainer: "Without NVLink these look good to me" — no fault named for PCIe-only A6000s
    m = fc.nvb.matrices["device_to_device_memcpy_read_ce"]
    assert len(m) == 6 and all(m[i][i] is None for i in range(6)) and m[0][1] == 26.34
    assert "p2p_disabled" not in _causes(data)


def _superbench669(fc: FileCapture, data: dict[str, Any]) -> None:
    m = fc.nvb.matrices
    assert m["host_to_device_memcpy_ce"] == [[337.55, 2142.4], [2142.4, 337.55]]
    assert m["host_to_device_bidirectional_memcpy_ce"] == [[160.02]] and len(m["device_to_host_memcpy_ce"][0]) == 3


def _azhpc73(fc: FileCapture, data: dict[str, Any]) -> None:
    # GPU 3: Link 3 and Link 5 <inactive>
    ev = _finding(data, "nvlink_down")
    assert ev["module"] == "GPU 3" and ev["evidence"]["links_down"] == [3, 5] and ev["evidence"]["links_seen"] == 6


def _gb200(fc: FileCapture, data: dict[str, Any]) -> None:
    assert len(fc.nvlink.states) == 20 and all(s.up and s.speed_gbps == 53.125 for s in fc.nvlink.states)
    assert "nvlink_down" not in _causes(data) and any("skipped" in n for n in fc.notes)  # the -info section


def _gpud80(fc: FileCapture, data: dict[str, Any]) -> None:
    # "this GPU requires a reset to actually remap the rows"
    f = _finding(data, "row_remap_pending")
    assert f["module"] == UNNAMED and f["evidence"]["remapped_uncorrectable"] == 4 and "reset" in f["fix"]


def _gpustat135(fc: FileCapture, data: dict[str, Any]) -> None:
    assert fc.smi is not None and fc.smi.modules[0].fields["Max Clocks/SM"] == "2100 MHz" and data["findings"] == []


def _kubeflow68(fc: FileCapture, data: dict[str, Any]) -> None:
    assert fc.smi is not None and health(fc.smi.modules[0]).clock_events == {"idle"}
    assert not _causes(data) & {"thermal_throttling", "hw_slowdown", "hw_power_brake"}


def _smi_identity(product: str, bus: str, driver: str) -> Callable[[FileCapture, dict[str, Any]], None]:
    def check(fc: FileCapture, data: dict[str, Any]) -> None:
        assert fc.smi is not None and fc.smi.driver == driver
        assert [(m.product, m.bus_id) for m in fc.smi.modules] == [(product, bus)]
        (module,) = CaptureBackend([fc.path]).inventory().modules
        assert module.model == product and module.bus_id == bus
    return check


def _nvdocker1090(fc: FileCapture, data: dict[str, Any]) -> None:
    assert fc.smi is not None
    h = health(fc.smi.modules[0])
    assert (h.pcie_width, h.pcie_width_max) == (16, 16) and h.clock_events == frozenset()
    assert "pcie_link_downgraded" not in _causes(data)


def _nvdocker816(fc: FileCapture, data: dict[str, Any]) -> None:
    _smi_identity("Tesla K80", "8E05:00:00.0", "396.37")(fc, data)
    assert CaptureBackend([fc.path]).inventory().modules[0].uuid == "GPU-daade63e-6b82-4c36-32c5-8929377b9e2b"


def _nvdocker925(fc: FileCapture, data: dict[str, Any]) -> None:
    # every line quoted with '> ': read as if unquoted, and the removal is noted
    _smi_identity("Quadro M2200", "0000:01:00.0", "415.27")(fc, data)
    assert any("33 line(s) had markdown quote marks" in n for n in fc.notes)


def _openclip703(fc: FileCapture, data: dict[str, Any]) -> None:
    # maintainer: SW power cap is okay; HW slowdowns would be a hardware problem — and none is active
    assert fc.smi is not None and health(fc.smi.modules[0]).clock_events == {"sw_power_cap"}
    assert not _causes(data) & {"hw_slowdown", "hw_power_brake", "thermal_throttling"}


def _xml_identity(product: str, bus: str, driver: str) -> Callable[[FileCapture, dict[str, Any]], None]:
    def check(fc: FileCapture, data: dict[str, Any]) -> None:
        inv = CaptureBackend([fc.path]).inventory()
        assert [(m.model, m.bus_id) for m in inv.modules] == [(product, bus)] and inv.software.driver_version == driver
        assert any("ends early" in n for n in inv.notes)
    return check


def _netdata2922(fc: FileCapture, data: dict[str, Any]) -> None:
    inv = CaptureBackend([fc.path]).inventory()
    assert inv.modules == () and any("fragment" in n for n in inv.notes)


Check = Callable[[FileCapture, dict[str, Any]], None]


def _topo(modules: int, fabric: tuple[str, int] | None, noted: str | None = None) -> Check:
    def check(fc: FileCapture, data: dict[str, Any]) -> None:
        backend = CaptureBackend([fc.path])
        node = backend.node()
        assert len(node.modules) == modules
        if fabric is None:
            assert node.fabric_links() == []
        else:
            assert {(lk.b if lk.b.startswith("nvswitch") else "mesh", lk.width) for lk in node.fabric_links()} == {fabric}
        if noted:
            assert any(noted in n for n in backend.notes())
    return check


def _xids(*expected: tuple[int, str]) -> Callable[[FileCapture, dict[str, Any]], None]:
    def check(fc: FileCapture, data: dict[str, Any]) -> None:
        assert {(x.code, x.bus_id) for x in fc.kernel.xids} == set(expected)
        for code, bus in expected:
            if code != 79:
                f = next(f for f in data["findings"] if f["evidence"].get("xid") == code and f["module"] == bus)
                assert f["evidence"]["meaning"] and "Xid catalogue" not in f["evidence"]["meaning"]
    return check


def _nvdocker849(fc: FileCapture, data: dict[str, Any]) -> None:
    # reply: "One of your GPU hit a DBE, you should reboot to retire the faulting page"
    _xids((48, "0000:8A:00"), (63, "0000:8A:00"))(fc, data)
    fixes = {f["evidence"]["xid"]: f["fix"] for f in data["findings"] if f["cause"] == "xid"}
    assert "reset" in fixes[48] and "reboot" in fixes[63]


def _akash209(fc: FileCapture, data: dict[str, Any]) -> None:
    # the node's nvidia-smi fails; dmesg: "Xid ... 79 ... GPU has fallen off the bus"; lsmod and prompts skipped
    assert ("module_fell_off_bus", "0000:A1:00") in _found(data)
    assert not fc.bug_report and any("skipped" in n for n in fc.notes)  # it only mentions nvidia-bug-report.sh


def _nvsentinel155(fc: FileCapture, data: dict[str, Any]) -> None:
    # "this should duplicate Xid 79, GPU has fallen off the bus"
    assert ("module_fell_off_bus", "0000:B3:00") in _found(data)


EXPECT: dict[str, Callable[[FileCapture, dict[str, Any]], None]] = {
    "dcgm198_nvlink_down_diag_pass.txt": _dcgm198,
    "dcgm253_diag_423_per_gpu.txt": _dcgm253,
    "dcgm_autopilot68_r3_kubectl.txt": _autopilot68,
    "dcgm_godcgm52_r2_deployment.txt": _godcgm52,
    "dcgm_json_dcgm_test_real_output.json": _dcgm_json,
    "lspci_geerling480_rtx8000_x1.txt": _geerling480,
    "lspci_hwloc653_a100_cut.txt": _hwloc653,
    "lspci_jan183_4090_riser_gen1.txt": _jan183,
    "nccl_hpcaienvs30_srun_singularity.txt": _nccl_header_only(7, ("g100n052",)),
    "nccl_nccl1530_4090_tree.txt": _nccl1530,
    "nccl_nccl340_old_format.txt": _nccl340,
    "nccl_nccl644_mpirun_old_rows.txt": _nccl644,
    "nccl_soperator428_srun_16ranks.txt": _nccl_header_only(12, ("worker-1", "worker-0")),
    "nccl_tests107_2node_header_twice.txt": _tests107,
    "nccl_tests128_reduce_scatter.txt": _tests128,
    "nccl_tests232_tree_2node.txt": _tests232,
    "nccl_tests27_summary_only.txt": _tests27,
    "nccl_tests306_split_two_nodes.txt": _tests306,
    "nvb_15_4090_v02_cut.txt": _nvb15,
    "nvb_24_h100_sm_quoted.txt": _nvb24,
    "nvb_34_a100_pattern_assert.txt": _nvb34,
    "nvb_42_a100_sm_fenced.txt": _nvb42,
    "nvb_50_a6000_d2d_elided.txt": _nvb50,
    "nvb_superbench669_waived.txt": _superbench669,
    "nvlink_azhpc73_v100_inactive.txt": _azhpc73,
    "nvlink_k8stestinfra371_gb200.txt": _gb200,
    "smi_q_gpud80_remapped_pending.txt": _gpud80,
    "smi_q_gpustat135_clocks.txt": _gpustat135,
    "smi_q_kubeflow68_throttle_grep.txt": _kubeflow68,
    "smi_q_netdata2759_8800gt.txt": _smi_identity("GeForce 8800 GT", "0000:01:00.0", "340.102"),
    "smi_q_netdata4892_960m.txt": _smi_identity("GeForce GTX 960M", "0000:01:00.0", "410.72"),
    "smi_q_nvdocker1090_excerpt.txt": _nvdocker1090,
    "smi_q_nvdocker816_k80.txt": _nvdocker816,
    "smi_q_nvdocker925_quoted_m2200.txt": _nvdocker925,
    "smi_q_nvdocker954_1080.txt": _smi_identity("GeForce GTX 1080", "0000:01:00.0", "396.54"),
    "smi_q_openclip703_event_reasons.txt": _openclip703,
    "smi_x_1panel9504_410m.xml": _xml_identity("GeForce 410M", "0000:01:00.0", "390.157"),
    "smi_x_netdata15755_4090.xml": _xml_identity("NVIDIA GeForce RTX 4090", "0000:84:00.0", "535.86.05"),
    "smi_x_netdata2922_fragment.xml": _netdata2922,
    "topo_club3090_1229_2x5090.txt": _topo(2, None),
    "topo_k8s53497_mlx4.txt": _topo(5, None, "GPU5, GPU6, GPU7"),
    "topo_nccl1453_h100_nv18.txt": _topo(8, ("nvswitch0", 18), "NIC6, NIC7, NIC8"),
    "topo_nccl1617_4h100_nv6.txt": _topo(4, ("mesh", 6)),
    "topo_nccl933_nv8_cut.txt": _topo(8, ("nvswitch0", 8), "GPU7 (4 of 17 cells)"),
    "topo_nccltests78_16gpu.txt": _topo(5, ("nvswitch0", 6), "GPU15"),
    "xid_akash209_79_fallen_mixed.txt": _akash209,
    "xid_akash244_43_31_94.txt": _xids((43, "0000:00:05"), (31, "0000:00:07"), (94, "0000:00:08")),
    "xid_bumblebee677_old_format.txt": _xids((32, "0000:01:00"), (31, "0000:01:00")),
    "xid_gpud1174_nvlink_145_149_94.txt": _xids((149, "0019:01:00"), (145, "0018:01:00"), (94, "0000:9B:00")),
    "xid_gpud46_13_109_diffquote.txt": _xids((13, "0000:CB:00"), (109, "0000:CB:00")),
    "xid_gpuoperator1146_syslog_48.txt": _xids((48, "0000:07:00")),
    "xid_nvdocker849_48_63.txt": _nvdocker849,
    "xid_nvsentinel155_fallen_off_no_xid.txt": _nvsentinel155,
    "xid_ogkm1150_45_after_149.txt": _xids(*((45, b) for b in ("0000:DC:00", "0000:ED:00", "0000:BA:00", "0000:97:00"))),
}


@pytest.mark.parametrize("name", FILES)
def test_each_capture_shows_what_its_poster_said(capsys: pytest.CaptureFixture[str], name: str) -> None:
    _, data = _doctor(capsys, name)
    EXPECT[name](read(str(REAL / name)), data)
