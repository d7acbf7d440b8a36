"""A GPU tool's output is read, never refused (issue 46, batch W): the ROCm Validation Suite's results, its own
internal errors and a peer test that found no peers; a rocminfo agent cut above its Name; xpu-smi's version
output with the driver rows an environment check prints. Lines written here in each tool's form."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import capture_json, refused


def _severe(data: dict[str, object]) -> list[dict[str, object]]:
    found = data["findings"]
    assert isinstance(found, list)
    return [f for f in found if f["severity"] in ("warn", "critical")]


def _models(tmp_path: Path, text: str) -> list[dict[str, object]]:
    modules = capture_json(tmp_path, text, "inventory")["modules"]
    assert isinstance(modules, list)
    return modules


RVS_NO_PEERS = (
    "[RESULT] [  501.100200] [p2p_all] p2p 4410 4410 peers:false distance:-1\n"
    "[RESULT] [  501.100230] [p2p_all] p2p 4410 9120 peers:false distance:-1\n"
    "[RESULT] [  501.100260] [p2p_all] p2p 9120 4410 peers:false distance:-1\n"
    "[ERROR ] [  501.100290] [p2p_all] p2p-bandwidth No peers found\n")
RVS_INTERNAL = (
    "RVS-PEBB: internal error, src: 0   dst: 5   current size: 4096 status -1\n"
    "[INFO  ] [  77.001000] [h2d_all] pcie-bandwidth  [1/2] 0 3301  h2d: true  d2h: true  (pending)\n"
    "RVS-PEBB: internal error, src: 1   dst: 5   current size: 4096 status -1\n"
    "[INFO  ] [  77.002000] [h2d_all] pcie-bandwidth  [2/2] 1 3301  h2d: true  d2h: true  (pending)\n")


def test_rvs_no_peers_is_the_pair_without_p2p_and_its_gpus_listed(tmp_path: Path) -> None:
    data = capture_json(tmp_path, RVS_NO_PEERS)
    severe = _severe(data)  # one finding for the pair (both directions), the [ERROR ] line covered by it
    assert [(f["cause"], f["module"], f["severity"]) for f in severe] == [("p2p_unavailable", "4410 <-> 9120", "warn")]
    assert "peers:false" in str(severe[0]["evidence"])
    labels = {str(m.get("id")) for m in _models(tmp_path, RVS_NO_PEERS)}
    assert len(labels) == 2  # 4410 and 9120: a GPU's peer query with itself is no second module


def test_rvs_internal_error_is_the_copy_test_failing_and_the_host_node_is_no_gpu(tmp_path: Path) -> None:
    data = capture_json(tmp_path, RVS_INTERNAL)
    leads = _severe(data)
    assert [(f["cause"], f.get("module")) for f in leads] == [("copy_test_failed", None)]
    ev = leads[0]["evidence"]
    assert isinstance(ev, dict) and "RVS-PEBB: internal error" in str(ev["log"]) and ev["count"] == 2
    assert len(_models(tmp_path, RVS_INTERNAL)) == 1  # pebb's pair is host node 0/1 and GPU 3301



def test_rvs_no_peers_alone_is_no_p2p_on_the_node(tmp_path: Path) -> None:
    text = "[ERROR ] [  610.000100] [p2p_all] p2p-bandwidth No peers found\n"
    assert [(f["cause"], f.get("module")) for f in _severe(capture_json(tmp_path, text))] == [("p2p_unavailable", None)]


def test_rvs_healthy_results_give_no_lead(tmp_path: Path) -> None:
    text = ("[RESULT] [  12.500100] [peqt_1] peqt TRUE\n"
            "[RESULT] [  12.600100] [pq] p2p-bandwidth  [1/2] 4410 9120  bidirectional: true  21.300 GBps\n")
    assert _severe(capture_json(tmp_path, text)) == []


ROCMINFO_CUT = (
    "  Queue Type:              MULTI\n  Node:                    1\n  Device Type:             GPU\n"
    "  Chip ID:                 29772(0x744c)\n  Cacheline Size:          64(0x40)\n"
    "  Max Clock Freq. (MHz):   2304\n  BDFID:                   3840\n  Internal Node ID:        1\n"
    "  Compute Unit:            96\n  SIMDs per CU:            2\n  Wavefront Size:          32(0x20)\n")


def test_a_rocminfo_agent_cut_above_its_name_is_read_never_refused(tmp_path: Path) -> None:
    data = capture_json(tmp_path, ROCMINFO_CUT)
    assert _severe(data) == []
    modules = _models(tmp_path, ROCMINFO_CUT)
    assert len(modules) == 1 and "0x744c" in str(modules[0]["model"])
    assert modules[0]["bus_id"] == "0000:0F:00.0"  # BDFID 3840 = bus 0x0f, device 0, function 0


XPU_VERSION = (
    "CLI:\n    Version: 1.2.40.20240901\n    Build ID: 9a1b2c3d\n\n"
    "Service:\n    Version: 1.2.40.20240901\n    Build ID: 9a1b2c3d\n    Level Zero Version: 1.17.6\n"
    "  Driver UUID                                     31342e31-312e-3330-3331-000000000000\n"
    "  Driver Version                                  24.35.30872\n"
    "  Driver UUID                                     31342e31-312e-3330-3331-000000000000\n"
    "  Driver Version                                  24.35.30872\n")


def test_xpu_smi_versions_are_read_for_what_they_hold(tmp_path: Path) -> None:
    data = capture_json(tmp_path, XPU_VERSION)
    assert _severe(data) == []
    said = str(data)  # the note that names the versions read
    assert "Level Zero Version 1.17.6" in said and "24.35.30872" in said


def test_prose_about_these_tools_is_still_refused(tmp_path: Path) -> None:
    path = tmp_path / "capture.txt"
    path.write_text("We ran rvs and rocminfo on the node; the Device Type was GPU and the Level Zero version\n"
                    "looked current, but the model still would not load.\n")
    refused(["doctor", "--from", str(path)], "nothing in it is output gpuvet can read")
