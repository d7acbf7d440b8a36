"""The corpus of captures people posted publicly (tests/data/captures/real/): every file is read
without a traceback or an exit 2 by `doctor --from` and `topo --from`, and each gives what the
poster (or the maintainer who answered) said it shows. The expectations below quote them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from gpuvet.backends.capture.backend import CaptureBackend
from gpuvet.captures.read import FileCapture, read
from gpuvet.captures.records import UNNAMED
from gpuvet.captures.smi_text import health
from gpuvet.cli.app import main

REAL = Path(__file__).parent.parent / "data" / "captures" / "real"
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
    assert _finding(data, "pcie_aer_corrected_bits")["evidence"]["correctable"] == ["AdvNonFatalErr"]


def _hwloc653(fc: FileCapture, data: dict[str, Any]) -> None:
    # the A100's lspci -vvv, cut before its link lines: read, but not judged
    assert fc.lspci.links == [] and any("DA:00.0 has no LnkCap/LnkSta" in n for n in fc.notes)
    assert "pcie_link_downgraded" not in _causes(data)


def _jan183(fc: FileCapture, data: dict[str, Any]) -> None:
    # "bandwidth is downgraded due to an incompatibility issue": 2.5GT/s of 16GT/s behind a riser
    (link,) = fc.lspci.links
    assert (link.cap_speed_gts, link.cap_width, link.speed_gts, link.width) == (16.0, 16, 2.5, 16)
    # lspci alone says nothing of load: a speed-only drop at full width is a note (issue 46), whose fix asks
    # for LnkSta under load, the reading that tells the poster's riser from an idle downshift
    found = _finding(data, "pcie_link_idle_speed")
    assert found["severity"] == "info" and "pcie_link_downgraded" not in _causes(data)
    assert found["evidence"]["speed_gts"] == 2.5 and found["evidence"]["max_speed_gts"] == 16.0


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
    assert any("last row is cut (line 16" in n for n in fc.notes)  # the row cut mid-word: said, not read (CUT)


def _tests107(fc: FileCapture, data: dict[str, Any]) -> None:
    (r,) = fc.nccl.results
    assert r.rows == [] and r.ranks == 1 and r.nodes == ("ip-172-31-20-228", "ip-172-31-22-230")
    assert any("rank numbers repeat" in n for n in fc.notes)  # both nodes print rank 0: two jobs
    # mpirun -np 2, each process rank 0 of 1 with its own header: nccl-tests built without MPI=1 (issue 46)
    assert [f["cause"] for f in data["findings"]] == ["nccl_tests_without_mpi"]


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
    """A fragment from inside one <gpu> (no <gpu> element) is that module: its memory read, the rest unknown."""
    inv = CaptureBackend([fc.path]).inventory()
    assert [(m.model, m.memory_bytes) for m in inv.modules] == [("unknown", 6064 * 2**20)]
    assert any("fragment" in n for n in inv.notes)


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
    _xids((48, "0000:8A:00.0"), (63, "0000:8A:00.0"))(fc, data)
    fixes = {f["evidence"]["xid"]: f["fix"] for f in data["findings"] if f["cause"] == "xid"}
    # the knowledge base (NVIDIA's catalog): 48 resets (or reboots) to retire the page; 63 records it, no action alone
    assert "reset" in fixes[48] and "reboot" in fixes[48] and "next reset" in fixes[63]


def _akash209(fc: FileCapture, data: dict[str, Any]) -> None:
    # the node's nvidia-smi fails; dmesg: "Xid ... 79 ... GPU has fallen off the bus"; lsmod and prompts skipped
    assert ("module_fell_off_bus", "0000:A1:00.0") in _found(data)
    assert not fc.bug_report and any("skipped" in n for n in fc.notes)  # it only mentions nvidia-bug-report.sh


def _nvsentinel155(fc: FileCapture, data: dict[str, Any]) -> None:
    # "this should duplicate Xid 79, GPU has fallen off the bus"
    assert ("module_fell_off_bus", "0000:B3:00.0") in _found(data)


# --- issue 34: failures read for what they say (each file's header holds the thread's conclusion) -----
class Diagnosis(NamedTuple):
    """What the thread concluded, as gpuvet should name it: causes (with the module) it must find,
    causes it must not, or nothing at all where the capture holds no evidence ("can't tell").
    ``miss`` names what the thread concluded and gpuvet cannot see yet; the test pins that it still
    does not, so the hit rate below stays honest."""

    must: frozenset[tuple[str, str | None]] = frozenset()
    never: frozenset[str] = frozenset()
    nothing: bool = False
    miss: str | None = None


def _dx(*must: tuple[str, str | None], never: tuple[str, ...] = (), nothing: bool = False,
        miss: str | None = None) -> Diagnosis:
    return Diagnosis(frozenset(must), frozenset(never), nothing, miss)


NOT_A_FAULT = ("module_needs_reset", "ecc_disabled", "at_max_operating_temp", "clocks_held_low",
               "data_corruption_in_transfer", "collective_test_failed")
DIAGNOSES: dict[str, Diagnosis] = {
    "kern_ogkm789_3090_gsp_gfw.txt": _dx(("module_firmware_boot_failed", "0000:98:00.0"),
                                         ("module_init_failed", "0000:98:00.0")),
    "kern_ogkm1230_gsp_wpr2_reset.txt": _dx(("module_needs_reset", "0000:A1:00.0"), ("module_init_failed", "0000:A1:00.0")),
    "kern_gpuoperator649_vm_rminit.txt": _dx(("module_init_failed", "0000:04:01.0"), ("module_init_failed", "0000:04:02.0")),
    "kern_gpuoperator1146_rminit_0a.txt": _dx(("module_init_failed", "0000:0A:00.0")),
    "kern_cmpunlocker4_cannot_attach.txt": _dx(("module_cannot_attach", "0000:01:00.0"),
                                               ("module_init_failed", "0000:01:00.0")),
    "kern_ogkm1151_5080_cannot_attach.txt": _dx(("module_cannot_attach", "0000:09:00.0"),
                                                ("module_init_failed", "0000:09:00.0")),
    "kern_cudasamples104_vmware_rminit.txt": _dx(("module_init_failed", "0000:13:00.0")),
    "kern_bumblebee722_old_no_bus.txt": _dx(("module_init_failed", "bus id not in the log")),
    "kern_nvtrust77_h100_fsp.txt": _dx(("module_firmware_boot_failed", "0000:01:00.0"),
                                       ("module_init_failed", "0000:01:00.0")),
    "kern_ogkm1125_gsp_resume_reset.txt": _dx(("module_needs_reset", "0000:01:00.0"), ("xid", "0000:01:00.0")),
    "kern_ogkm688_dgx_gpu_lost.txt": _dx(("module_fell_off_bus", "bus id not in the log")),
    # issue 46 (batch K): 'RmInitAdapter: Cannot initialize GSP firmware RM' is the init failure's reason, one cause
    "kern_ogkm943_3080_fwsec.txt": _dx(("module_init_failed", "0000:01:00.0")),
    "kern_bazzite4449_gsp_heartbeat.txt": _dx(("module_needs_reset", "0000:05:00.0")),
    "nccl_tests5_nccl1_unhandled.txt": _dx(("collective_test_failed", None)),
    "nccl_tests322_hca_unhandled.txt": _dx(("collective_test_failed", None), never=("data_corruption_in_transfer",)),
    "nccl_tests289_5090_invalid_argument.txt": _dx(("collective_test_failed", None)),
    "nccl_tests280_4090_unhandled.txt": _dx(("collective_test_failed", None)),
    "nccl_tests276_h200_header_only.txt": _dx(nothing=True),
    "nccl_tests131_p2p_disabled_cut.txt": _dx(nothing=True),
    "nvb_13_2080ti_waiving.txt": _dx(("p2p_unavailable", None)),
    "dcgm_godcgm52_headerless_fail.txt": _dx(("dcgm_diag_failed", "GPU0")),
    "smi_q_thermald300_mx330_maxop.txt": _dx(("at_max_operating_temp", "0000:2D:00.0")),
    "smi_q_monitorix28_old_gpu_temp.txt": _dx(nothing=True),
    "smi_q_sysmon12_gtx780.txt": _dx(nothing=True),
    "smi_q_nvdocker1753_excerpt.txt": _dx(nothing=True),
    "smi_q_gvisor10676_ecc_blocked.txt": _dx(nothing=True),
    "smi_x_netdata10362_temps.xml": _dx(nothing=True),
    "smi_x_netdata2922_clocks_p5.xml": _dx(nothing=True),
    "topo_vllm19607_collect_env.txt": _dx(nothing=True),
    "topo_dcgm149_dgxa100_cut.txt": _dx(nothing=True),
    "dmon_deepspeech178_quoted.txt": _dx(nothing=True),
    "topo_nccl557_3090_nv3_flush.txt": _dx(nothing=True, miss="one of the RTX 3090 bridge's 4 links missing (NV3): "
                                                             "the RTX 3090 is not in the catalog, so no design says 4"),
    "smi_q_l4rzidrac_v100_power_brake.txt": _dx(("hw_power_brake", UNNAMED)),
    "smi_q_mlengineering_a100_xid63_pending.txt": _dx(("row_remap_pending", "0000:10:1C.0")),
    "nvlink_hpejapan_h100pcie_bridged.txt": _dx(nothing=True),
    "nccl_eksblueprints_efa_tagoutput_t4.txt": _dx(nothing=True),
    "nccl_skypilot_tcpx_h200_ray_prefix.txt": _dx(nothing=True),
}


def hit_rate() -> tuple[int, int, list[str]]:
    """(diagnosed as the thread concluded, of how many, the misses named) over DIAGNOSES."""
    misses = [f"{name}: {d.miss}" for name, d in DIAGNOSES.items() if d.miss]
    return len(DIAGNOSES) - len(misses), len(DIAGNOSES), misses


@pytest.mark.parametrize("name", sorted(DIAGNOSES))
def test_each_new_capture_gets_the_threads_diagnosis(capsys: pytest.CaptureFixture[str], name: str) -> None:
    d = DIAGNOSES[name]
    _, data = _doctor(capsys, name)
    found = _found(data)
    assert d.must <= found, f"missing {sorted(d.must - found)}; found {sorted(found)}"
    assert not d.never & _causes(data)
    if d.nothing:
        assert data["findings"] == [], sorted(found)
    for f in data["findings"]:  # the tool's own words are the evidence: a log line, an error, a field
        if f["cause"] in ("module_init_failed", "module_needs_reset", "module_cannot_attach",
                          "module_firmware_boot_failed") or f["cause"] == "module_fell_off_bus" and "log" in f["evidence"]:
            assert f["evidence"]["log"] and f["evidence"]["line"] > 1 and f["evidence"]["meaning"]
        if f["cause"] == "collective_test_failed":
            assert f["evidence"]["error"] and "failure" in f["evidence"]["output"]


def test_the_hit_rate_is_the_one_docs_state() -> None:
    hits, total, misses = hit_rate()
    assert total >= 30 and len(misses) == total - hits
    doc = (Path(__file__).parents[2] / "docs" / "doctor.md").read_text(encoding="utf-8")
    assert f"{hits} of {total}" in doc and all(m.split(":")[0] in doc for m in misses)


def _skypilot_rows(fc: FileCapture, data: dict[str, Any]) -> None:
    """Both launcher prefixes removed: all 24 sizes read, none wrong, the run read to its end."""
    (run,) = fc.nccl.results
    assert len(run.rows) == 24 and not any(r.wrong for r in run.rows) and run.avg_busbw == 122.073
    assert any("Ray/SkyPilot worker" in n for n in fc.notes) and any("Open MPI" in n for n in fc.notes)


def _issue34(fc: FileCapture, data: dict[str, Any]) -> None:
    """Checked by test_each_new_capture_gets_the_threads_diagnosis; the reading details here."""


def _godcgm52_headerless(fc: FileCapture, data: dict[str, Any]) -> None:
    assert {(r.test, r.gpu, r.status) for r in fc.dcgm.results} == {("GPU Memory", "1", "pass"),
                                                                    ("GPU Memory", "0", "fail")}
    assert any("without its header rows" in n for n in fc.notes)
    assert "busy or unavailable" in (_finding(data, "dcgm_diag_failed")["evidence"]["detail"] or "")


def _kern_1230(fc: FileCapture, data: dict[str, Any]) -> None:
    reset = _finding(data, "module_needs_reset")["evidence"]
    # GPU6's 'WPR2 already up' and 'may need to be reset' lines, twice each, resolved to 0000:a1:00
    assert "WPR2 already up" in reset["log"] and reset["times"] == 4


def _kern_1146(fc: FileCapture, data: dict[str, Any]) -> None:
    assert _finding(data, "module_init_failed")["evidence"]["times"] == 6  # three failures, two lines each


def _nccl5(fc: FileCapture, data: dict[str, Any]) -> None:
    (fail,) = fc.nccl.failures
    assert (fail.kind, fail.message, fail.where) == ("nccl", "unhandled cuda error", "all_reduce.cu:95")
    assert any("stopped before its first result row" in n for n in fc.notes)


def _nccl289(fc: FileCapture, data: dict[str, Any]) -> None:
    assert [(f.kind, f.message) for f in fc.nccl.failures] == [("cuda", "invalid argument"),
                                                              ("cuda", "invalid device ordinal")]


def _nccl280(fc: FileCapture, data: dict[str, Any]) -> None:
    (r,) = fc.nccl.results
    assert [x.size_bytes for x in r.rows] == [8, 16, 32] and fc.nccl.failures[0].message == "unhandled CUDA error"


def _nccl322(fc: FileCapture, data: dict[str, Any]) -> None:
    assert len(fc.nccl.results[0].rows) == 5 and len(fc.nccl.failures) == 2
    assert not any("skipped" in n for n in fc.notes)  # the '.. host pid: Test failure' trail is claimed too


def _nvb13(fc: FileCapture, data: dict[str, Any]) -> None:
    assert [w.test for w in fc.nvb.waived] == ["device_to_device_memcpy_write_ce"] and fc.nvb.matrices == {}
    assert _finding(data, "p2p_unavailable")["evidence"]["tests"] == ["device_to_device_memcpy_write_ce"]


def _maxop(fc: FileCapture, data: dict[str, Any]) -> None:
    ev = _finding(data, "at_max_operating_temp")["evidence"]
    assert (ev["temperature_c"], ev["max_operating_c"], ev["slowdown_c"]) == (56, 57, 97)


def _monitorix28(fc: FileCapture, data: dict[str, Any]) -> None:
    assert fc.smi is not None and health(fc.smi.modules[0]).temperature_c == 49


def _gvisor(fc: FileCapture, data: dict[str, Any]) -> None:
    assert fc.smi is not None and health(fc.smi.modules[0]).ecc_mode == "GPU access blocked by the operating system"
    assert CaptureBackend([fc.path]).inventory().modules[0].ecc_enabled is not False  # unreadable is not off


def _xml_temps(fc: FileCapture, data: dict[str, Any]) -> None:
    assert fc.xml is not None and "nvidia-smi -q -x" in fc.kinds


def _vllm19607(fc: FileCapture, data: dict[str, Any]) -> None:
    _topo(2, ("mesh", 12))(fc, data)
    assert any("skipped" in n for n in fc.notes)  # collect_env's own lines


def _nccl557(fc: FileCapture, data: dict[str, Any]) -> None:
    _topo(2, ("mesh", 3))(fc, data)
    assert any("starts flush left" in n for n in fc.notes)


def _dmon(fc: FileCapture, data: dict[str, Any]) -> None:
    assert fc.kinds == ["nvidia-smi dmon"] and len(fc.dmon.samples) == 4
    assert fc.dmon.samples[1].values["temp"] == 84 and fc.dmon.samples[3].values["pclk"] == 1784
    assert any("escaped" in n for n in fc.notes) and any("quote marks" in n for n in fc.notes)


EXPECT: dict[str, Callable[[FileCapture, dict[str, Any]], None]] = {
    "kern_ogkm789_3090_gsp_gfw.txt": _issue34, "kern_ogkm1230_gsp_wpr2_reset.txt": _kern_1230,
    "kern_gpuoperator649_vm_rminit.txt": _issue34, "kern_gpuoperator1146_rminit_0a.txt": _kern_1146,
    "kern_cmpunlocker4_cannot_attach.txt": _issue34, "kern_ogkm1151_5080_cannot_attach.txt": _issue34,
    "kern_cudasamples104_vmware_rminit.txt": _issue34, "kern_bumblebee722_old_no_bus.txt": _issue34,
    "kern_nvtrust77_h100_fsp.txt": _issue34, "kern_ogkm1125_gsp_resume_reset.txt": _issue34,
    "kern_ogkm688_dgx_gpu_lost.txt": _issue34, "kern_ogkm943_3080_fwsec.txt": _issue34,
    "kern_bazzite4449_gsp_heartbeat.txt": _issue34,
    "nccl_tests5_nccl1_unhandled.txt": _nccl5, "nccl_tests322_hca_unhandled.txt": _nccl322,
    "nccl_tests289_5090_invalid_argument.txt": _nccl289, "nccl_tests280_4090_unhandled.txt": _nccl280,
    "nccl_tests276_h200_header_only.txt": _nccl_header_only(6, ("gpu47", "gpu48")),
    "nccl_tests131_p2p_disabled_cut.txt": _nccl_header_only(2, ("Meowth",)),
    "nvb_13_2080ti_waiving.txt": _nvb13, "dcgm_godcgm52_headerless_fail.txt": _godcgm52_headerless,
    "smi_q_thermald300_mx330_maxop.txt": _maxop, "smi_q_monitorix28_old_gpu_temp.txt": _monitorix28,
    "smi_q_sysmon12_gtx780.txt": _smi_identity("GeForce GTX 780", "0000:01:00.0", "450.66"),
    "smi_q_nvdocker1753_excerpt.txt": _issue34, "smi_q_gvisor10676_ecc_blocked.txt": _gvisor,
    "smi_x_netdata10362_temps.xml": _xml_temps, "smi_x_netdata2922_clocks_p5.xml": _xml_temps,
    "topo_vllm19607_collect_env.txt": _vllm19607, "topo_dcgm149_dgxa100_cut.txt": _topo(7, ("nvswitch0", 12), "GPU7"),
    "dmon_deepspeech178_quoted.txt": _dmon, "topo_nccl557_3090_nv3_flush.txt": _nccl557,
    "smi_q_l4rzidrac_v100_power_brake.txt": _issue34, "smi_q_mlengineering_a100_xid63_pending.txt": _issue34,
    "nvlink_hpejapan_h100pcie_bridged.txt": _issue34, "nccl_eksblueprints_efa_tagoutput_t4.txt": _issue34,
    "nccl_skypilot_tcpx_h200_ray_prefix.txt": _skypilot_rows,
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
    "xid_akash244_43_31_94.txt": _xids((43, "0000:00:05.0"), (31, "0000:00:07.0"), (94, "0000:00:08.0")),
    "xid_bumblebee677_old_format.txt": _xids((32, "0000:01:00.0"), (31, "0000:01:00.0")),
    "xid_gpud1174_nvlink_145_149_94.txt": _xids((149, "0019:01:00.0"), (145, "0018:01:00.0"), (94, "0000:9B:00.0")),
    "xid_gpud46_13_109_diffquote.txt": _xids((13, "0000:CB:00.0"), (109, "0000:CB:00.0")),
    "xid_gpuoperator1146_syslog_48.txt": _xids((48, "0000:07:00.0")),
    "xid_nvdocker849_48_63.txt": _nvdocker849,
    "xid_nvsentinel155_fallen_off_no_xid.txt": _nvsentinel155,
    "xid_ogkm1150_45_after_149.txt": _xids(*((45, b) for b in (
        "0000:DC:00.0", "0000:ED:00.0", "0000:BA:00.0", "0000:97:00.0"))),
}


@pytest.mark.parametrize("name", FILES)
def test_each_capture_shows_what_its_poster_said(capsys: pytest.CaptureFixture[str], name: str) -> None:
    _, data = _doctor(capsys, name)
    EXPECT[name](read(str(REAL / name)), data)


# --- AMD and Ascend (issue 35): their threads' conclusions, kept with their readers' tests -----
from tests.captures.test_captures_amd import AMD_EXPECT  # noqa: E402

EXPECT.update(AMD_EXPECT)
from tests.captures.test_capture_ascend import ASCEND_EXPECT  # noqa: E402

EXPECT.update(ASCEND_EXPECT)


# --- what the kernel-log verdicts claim: no more than the log says (a newcomer's review) -----------------


def test_a_bus_loss_without_an_xid_is_not_called_xid_79(capsys):
    """NV_ERR_GPU_IS_LOST with no Xid line: the cause says the module fell off the bus, never that
    an Xid 79 was logged; the note says the message names no module (not 'the bus id of bus id …')."""
    _, data = _doctor(capsys, "kern_ogkm688_dgx_gpu_lost.txt")
    (lost,) = [f for f in data["findings"] if f["cause"] == "module_fell_off_bus"]
    assert "Xid" not in lost["title"], lost["title"]
    (note,) = [n for n in data["notes"] if "names no module" in n]
    assert "bus id of bus id" not in " ".join(data["notes"]) and "'bus id not in the log'" in note


def test_a_message_placed_by_its_bus_id_is_not_noted_as_unplaced(capsys):
    """The driver printed 0000:09:00.0 on the line: no note may say no line names it."""
    _, data = _doctor(capsys, "kern_ogkm1151_5080_cannot_attach.txt")
    assert {f["module"] for f in data["findings"] if f["check"] == "kernel_messages"} == {"0000:09:00.0"}
    assert not [n for n in data["notes"] if "no line names the bus id" in n], data["notes"]


def test_a_ras_error_of_a_present_module_is_a_compute_error_not_a_missing_module(capsys):
    """module-missing reads only the messages that say a module is not there to use; the
    uncorrectable RAS error of a module that answers goes to compute-errors."""
    _, data = _doctor(capsys, "amd_kern_rocm4021_mi300x_athub_ue.txt")
    steps = {(s["playbook"], s["check"]): s for s in data["steps"]}
    missing, errors = steps[("module-missing", "kernel_messages")], steps[("compute-errors", "kernel_messages")]
    assert missing["status"] == "clear" and "see compute-errors" in missing["summary"], missing
    assert errors["status"] == "confirmed" and "uncorrectable hardware error" in errors["summary"], errors
    assert {f["playbook"] for f in data["findings"] if f["cause"] == "module_hardware_error"} == {"compute-errors"}


def test_a_failed_hccl_test_is_fixed_with_ascend_tools_not_nccl_ones(capsys):
    _, data = _doctor(capsys, "written_ascend_hccl_retcode7.txt")
    (failed,) = [f for f in data["findings"] if f["cause"] == "collective_test_failed"]
    assert "nccl" not in failed["title"].lower() and "NCCL_DEBUG" not in failed["fix"], failed
    assert "hccl_test" in failed["fix"] and failed["evidence"]["tool"] == "hccl_test", failed


def test_a_hip_failure_of_rccl_tests_is_read_and_fixed_with_rocm_advice(capsys, tmp_path):
    log = tmp_path / "rccl.txt"
    log.write_text("# nThread 1 nGpus 8 minBytes 8 maxBytes 1073741824 step: 2(factor) warmup iters: 5 iters: 20\n"
                   "rccl-tests: Version develop:ae3e635\n"
                   "node1: Test HIP failure common.cu:1071 'invalid device ordinal'\n")
    assert main(["doctor", "--from", str(log), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    (failed,) = [f for f in data["findings"] if f["cause"] == "collective_test_failed"]
    assert failed["evidence"]["tool"] == "rccl-tests" and failed["evidence"]["kind"] == "hip", failed
    assert "amdgpu" in failed["fix"] and "CUDA" not in failed["fix"], failed


def test_wrong_values_counted_by_rccl_tests_get_rocm_advice(capsys, tmp_path):
    log = tmp_path / "rccl_oob.txt"
    log.write_text("rccl-tests: Version develop:ae3e635\n"
                   "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw"
                   "   busbw #wrong\n"
                   "           8             2     float     sum      -1    41.20    0.00    0.00      0    40.92    0.00"
                   "    0.00      0\n"
                   "# Out of bounds values : 3 FAILED\n# Avg bus bandwidth    : 0.00\n")
    main(["doctor", "--from", str(log), "--json"])
    (bad,) = [f for f in json.loads(capsys.readouterr().out)["findings"] if f["cause"] == "data_corruption_in_transfer"]
    assert "amd-smi metric --ecc" in bad["fix"] and "Xid" not in bad["fix"], bad
