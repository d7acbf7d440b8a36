"""Issue 46 (R9C), on lines written in the tools' own words: oneAPI's Unified Runtime names (ur_api.h's ur_result_t,
as SYCL/IPEX print them: 'Native API returns: 20 (UR_RESULT_ERROR_DEVICE_LOST)'), HCCL's link-establishment failures
(hccl_socket_manager.cc and transport_manager.cc, as CANN's HCCL docs quote them), mlx5_core's firmware command
statuses (cmd.c's mlx5_cmd_out_err: the caller's refused request is read, no finding), a poster's narration of a
completion status (no finding invented), and NVSentinel's health monitors' JSON lines (read, never refused)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.helpers import capture_findings, doctor_text

_ROOT = Path(__file__).parent.parent / "data" / "captures"


def test_unified_runtime_names_read_as_their_level_zero_twins(tmp_path: Path) -> None:
    lost = "RuntimeError: Native API failed. Native API returns: 20 (UR_RESULT_ERROR_DEVICE_LOST)\n"
    ze = "RuntimeError: Native API failed. Native API returns: 20 (ZE_RESULT_ERROR_DEVICE_LOST)\n"
    assert capture_findings(tmp_path, lost) == capture_findings(tmp_path, ze)  # one fact, one verdict
    assert capture_findings(tmp_path, lost) == {("module_fell_off_bus", "bus id not in the log"): "critical"}
    oom = "Native API failed. Native API returns: 39 (UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)\n"
    assert set(capture_findings(tmp_path, oom)) == {("application_out_of_memory", None)}
    assert not doctor_text(tmp_path, "urDeviceGet returned UR_RESULT_SUCCESS\n")[1].get("findings")
    # SYCL's plugin interface before UR (pi_error.def): -5 is out of device memory, as IPEX's docs say; a device not
    # found keeps the SYCL runtime's own sentence's verdict, the name adds none
    pi = "RuntimeError: Native API failed. Native API returns: -5 (PI_ERROR_OUT_OF_RESOURCES)\n"
    assert capture_findings(tmp_path, pi) == {("application_out_of_memory", None): "info"}
    none = "  what():  No device of requested type available. -1 (PI_ERROR_DEVICE_NOT_FOUND)\n"
    assert capture_findings(tmp_path, none) == {("framework_sees_no_module", None): "warn"}


def _plog(msg: str, src: str = "hccl_socket_manager.cc:861") -> str:
    return f"[ERROR] HCCL(17528,python3):2026-03-18-10:33:52.113.454 [{src}] [18744]{msg}\n"


_LINK = (
    _plog("[Wait][LinkEstablish]wait socket establish timeout, role[1] rank[1] timeout[120 s]", "hccl_socket_manager.cc:797")
    + _plog("[Wait][LinksEstablishCompleted] is failed. ret[9].")
    + _plog("   _________________________LINK_ERROR_INFO___________________________", "hccl_socket_manager.cc:623")
    + _plog(
        "   |  192.0.2.199(0)   |  16666  |   192.0.3.198(1)   |  3234403008  |  client  | time out |   DISABLE  |",
        "hccl_socket_manager.cc:583",
    )
)


def test_hccl_link_establishment_failures_name_the_link_and_its_peer(tmp_path: Path) -> None:
    code, data = doctor_text(tmp_path, _LINK)
    assert code == 1
    (found,) = data["findings"]
    assert (found["cause"], found["severity"]) == ("collective_link_failed", "warn")
    assert found["evidence"]["peer"] == "device ip 192.0.2.199 (rank 0)"
    assert "hccn_tool" in found["fix"]
    # the socket manager's numbered reasons without a table: the link, no peer invented
    reasons = _plog(
        "the connection failure between this device and target device may be due to the following reasons:",
        "hccl_socket_manager.cc:601",
    )
    code, data = doctor_text(tmp_path, reasons)
    assert [(f["cause"], f["evidence"].get("peer")) for f in data["findings"]] == [("collective_link_failed", None)]
    # another HCCL failure stays the generic collective error
    other = _plog("[AllReduce][Result]errNo[0x0000000005010009] hcclComm AllReduce error", "hcom.cc:515")
    assert set(capture_findings(tmp_path, other)) == {("collective_runtime_error", "host and GPU not in the log")}


_CMD = (
    "[145291.904971] mlx5_core 0000:04:00.0: mlx5_cmd_out_err:838:(pid 9993): {}(0x504) op_mod(0x0) failed, status "
    "{}, syndrome (0x4bb88f), err(-22)\n"
)


def test_mlx5_commands_refused_for_the_callers_request_are_read_not_judged(tmp_path: Path) -> None:
    for status in ("bad parameter(0x3)", "bad resource state(0x9)", "limits exceeded(0x8)", "bad QP state(0x10)"):
        code, data = doctor_text(tmp_path, _CMD.format("RTR2RTS_QP", status))
        assert code == 0 and not data["findings"], status
        assert any("refused 1 command(s) for the caller's request" in n for n in data["notes"])
    assert not capture_findings(tmp_path, _CMD.format("2RST_QP", "bad resource state(0x9)"))  # an opcode led by a digit
    old = _CMD.format("CREATE_MKEY", "bad parameter(0x3)").replace("mlx5_cmd_out_err:838", "mlx5_cmd_check:795")
    assert not capture_findings(tmp_path, old)
    # the card's own status is not called benign: left to the other readers
    code, data = doctor_text(tmp_path, _CMD.format("QUERY_HCA_CAP", "internal error(0x1)"))
    assert data["findings"] and not any("caller's request" in n for n in data["notes"])


def test_a_posters_narration_of_a_completion_status_is_no_finding(tmp_path: Path) -> None:
    told = (
        "In addition to the .status 9 (IBV_WC_REM_INV_REQ_ERR), there is a .vendor_err field with value 138, which"
        " I cannot find any information on.\n"
    )
    assert not capture_findings(tmp_path, _CMD.format("RTR2RTS_QP", "bad parameter(0x3)") + told)
    program = "ERROR: wc status IBV_WC_RETRY_EXC_ERR (12) on mlx5_0 port 1\n"
    assert set(capture_findings(tmp_path, program))  # a program's own line still read


_EVENT = {
    "version": 1,
    "agent": "syslog-health-monitor",
    "componentClass": "GPU",
    "checkName": "SysLogsXIDError",
    "isFatal": False,
    "isHealthy": True,
    "message": "No Health Failures",
    "entitiesImpacted": [{"entityType": "PCI", "entityValue": "0001:00:00"}],
}


def _slog(msg: str, **extra: object) -> str:
    line = {
        "time": "2026-07-10T07:38:05.415073664Z",
        "level": "INFO",
        "msg": msg,
        "module": "syslog-health-monitor",
        "version": "v0.9.0",
        **extra,
    }
    return json.dumps(line, separators=(",", ":")) + "\n"


def test_nvsentinel_healthy_lines_are_read_not_refused(tmp_path: Path) -> None:
    text = _slog(
        "GPU reset syslog event received, creating HealthEvent",
        GPU_UUID="GPU-52f37cd4-d92a-7b6d-2b9f-9ab862e27708",
        success=True,
    ) + _slog("Attempting to send health event", events={"version": 1, "events": [_EVENT]})
    code, data = doctor_text(tmp_path, text)
    assert code == 0 and not data["findings"]
    (said,) = [n for n in data["notes"] if "NVSentinel" in n]
    assert "1 GPU reset(s) acknowledged" in said and "PCI 0001:00:00" in said and "GPU-52f37cd4" in said
    # an unhealthy event is not claimed as clear
    bad = _slog("Attempting to send health event", events={"version": 1, "events": [{**_EVENT, "isHealthy": False}]})
    code, data = doctor_text(tmp_path, bad)
    assert not any("NVSentinel" in n for n in data.get("notes", []))


def test_fresh_rows(tmp_path: Path) -> None:
    at, au = _ROOT / "fresh_at", _ROOT / "fresh_au"
    lost = capture_findings(tmp_path, (at / "log_ipex780_lunarlake_ur_device_lost.txt").read_text())
    assert lost == {("module_fell_off_bus", "bus id not in the log"): "critical"}
    assert not capture_findings(tmp_path, (at / "dmesg_charm2532_mlx5_rtr2rts_qp_bad_param.txt").read_text())
    for name in ("hccl_vllmascend1815_port_down.txt", "hccl_vllmascend9872_link_establish.txt"):
        found = capture_findings(tmp_path, (au / name).read_text())
        assert found == {("collective_link_failed", "host and GPU not in the log"): "warn"}, name
    code, data = doctor_text(tmp_path, (au / "k8slog_nvsentinel1475_gpu_reset_ack.txt").read_text())
    assert code == 0 and not data["findings"]
