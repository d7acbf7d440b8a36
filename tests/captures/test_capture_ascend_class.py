"""Issue 46 (ASC): Ascend's and Habana's own failure records, read as a class. Each capture below is written here in
the tool's real format (the formats are the tools' own: torch_npu's NPU_CHECK_ERROR and formatErrorCode, the ACL
samples' ERROR_LOG, CANN's TraceBack lines, the error manager's 'Title(EXnnnn): …', npu-smi's `-t health` block,
hccn_tool's answers as MindCluster's guide shows them, habanalabs' device.c lines); none is copied from a thread."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuvet.captures import ascend_codes, hccn_tool
from gpuvet.captures.text import clean
from gpuvet.cli.app import main

DEVICE_3 = "[ERROR] 2025-06-26-10:14:03 (PID:4242, Device:3, RankID:3) ERR00100 PTA call acl api failed"
TORCH_ECC = f"""Traceback (most recent call last):
  File "train.py", line 41, in <module>
    loss.backward()
RuntimeError: npuSynchronizeDevice:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:479 NPU function error: \
AclrtSynchronizeDeviceWithTimeout, error code is 507054
{DEVICE_3}
[Error]: HBM multi-bit ECC error.
        Rectify the fault based on the error information in the ascend log.
"""


def _doctor(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[tuple[str, str, str]]]:
    path = tmp_path / "capture.txt"
    path.write_text(text)
    code = main(["doctor", "--from", str(path), "--json"])
    out = capsys.readouterr().out
    found = json.loads(out)["findings"] if out.strip() else []
    return code, [(f["cause"], str(f.get("module")), f["severity"]) for f in found]


def test_torch_npu_code_is_its_class_on_the_device_its_line_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, found = _doctor(TORCH_ECC, tmp_path, capsys)
    assert found == [("ecc_uncorrectable_since_boot", "NPU 3", "critical")] and code == 1


@pytest.mark.parametrize(
    ("text", "cause", "module", "severity"),
    [
        (
            "[INFO]  acl init success\n[ERROR]  acl set device 0 failed, errorCode = 507033\n",
            "api_reports_driver_state",
            "NPU 0",
            "warn",
        ),
        (
            "        TraceBack (most recent call last):\n        open device 2 failed, runtime result = 507033."
            "[FUNC:ReportCallError][FILE:log_inner.cpp][LINE:148]\n",
            "api_reports_driver_state",
            "NPU 2",
            "warn",
        ),
        (
            "[ERROR] aclrtSetDevice(deviceId) failed: 207004 (/home/user/app/main.cpp:72)\n",
            "no_modules_visible",
            "None",
            "critical",
        ),
        (
            "RuntimeError: ACL stream synchronize failed, error code:507015\n",
            "npu_runtime_error",
            "an Ascend NPU, bus id not in the log",
            "warn",
        ),
    ],
)
def test_each_printed_form_of_a_code(
    text: str, cause: str, module: str, severity: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _doctor(text, tmp_path, capsys)[1] == [(cause, module, severity)]


def test_torch_npu_labels_and_the_plog_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = f"RuntimeError: HBM MULTI BIT ECC ERROR, the current working operator name is MatMul\n{DEVICE_3}\n"
    assert _doctor(text, tmp_path, capsys)[1] == [("ecc_uncorrectable_since_boot", "NPU 3", "critical")]
    plog = "[ERROR] PYTORCH(4242,python3):2025-06-26-10:14:03.123.456 [NPUQueue.cpp:431]4242 HCCS LINK ERROR happened.\n"
    assert _doctor(plog, tmp_path, capsys)[1] == [("fabric_link_errors", "an Ascend NPU, bus id not in the log", "warn")]


def test_error_manager_codes_by_their_documented_title(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before ASC every code but EI/EJ was 'an NPU runtime error': an invalid argument is the caller's, a memory
    allocation failure a resource, 'Not_Supported' nothing wrong."""
    named = (
        "[ERROR] RecentErrMsg: [PID: 1613] 2026-03-24-12:14:45.885.234 Memory_Allocation_Failure(EL0004): Failed "
        "to allocate memory.\n        Possible Cause: Available memory is insufficient.\n"
    )
    assert _doctor(named, tmp_path, capsys)[1] == [("application_out_of_memory", "None", "info")]
    bare = "EE1001: [PID: 77] 2026-03-24-12:14:45.885.234 The argument is invalid.Reason: rtGetDevMsg execution failed\n"
    assert _doctor(bare, tmp_path, capsys)[1] == [("application_api_error", "None", "warn")]
    code, found = _doctor("EE1005: [PID: 77] 2026-03-24-12:14:45.885.234 The feature is not supported.\n", tmp_path, capsys)
    assert found == [] and code == 0


def test_a_status_code_is_read_and_judged_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, found = _doctor("[ERROR]  aclmdlExecute failed, errorCode = 507005\n", tmp_path, capsys)
    assert found == [] and code == 0


def test_hccl_call_result_and_the_timeout_it_causes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dist = "[ERROR] 2025-06-26-10:14:03 (PID:4242, Device:5, RankID:13) ERR02200 DIST call hccl api failed."
    text = (
        f"RuntimeError: HCCL function error: HcclAllReduce(inputPtr, outputPtr, numel, dataType, op, comm, stream), "
        f"error code is 9\n{dist}\n"
    )
    assert [c for c, _, _ in _doctor(text, tmp_path, capsys)[1]] == ["collective_stalled"]
    stalled = (
        "EI0002: [PID: 4242] 2025-06-26-10:14:03.123.456 The wait execution of the Notify register times out. "
        "Reason: The Notify register has not received the Notify record from remote rank [2].\n"
        "RuntimeError: npuSynchronizeDevice:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:479 NPU function "
        "error: AclrtSynchronizeDeviceWithTimeout, error code is 507048\n"
    )
    assert [c for c, _, _ in _doctor(stalled, tmp_path, capsys)[1]] == ["collective_stalled"]


def test_a_posters_sentence_is_a_lead(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = "Since the CANN upgrade our training on NPU 3 dies with 'error code is 507054' every night.\n"
    assert _doctor(text, tmp_path, capsys)[1] == [("ecc_uncorrectable_since_boot", "NPU 3", "warn")]


def test_parse_claims_the_runtime_lines_under_a_code() -> None:
    got = ascend_codes.parse(clean(TORCH_ECC).lines)
    assert got.claimed == {4, 6, 7} and [(e.kind, e.module, e.meaning) for e in got.errors] == [
        ("acl_ecc", "NPU 3", "507054 ACL_ERROR_RT_HBM_MULTI_BIT_ECC_ERROR (ecc)")
    ]


# --- npu-smi info -t health: the chip's fault code at its handling level ---
def _health(code: str, status: str = "Warning", command: str = "npu-smi info -t health -i 2 -c 0") -> str:
    return (
        f"[root@node1 ~]# {command}\n        Health Status                  : {status}\n"
        f"        Error Code                     : {code}\n        Error Information              : NA\n"
    )


def test_npu_fault_code_takes_its_level(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    found = _doctor(_health("80E18402"), tmp_path, capsys)[1]  # SeparateNPU: HBM multi-bit isolation lines at 64
    assert ("module_reported_critical", "NPU 2 chip 0", "critical") in found
    found = _doctor(_health("80E21007", "OK", "npu-smi info -i 2 -c 0 -t health"), tmp_path, capsys)[1]
    assert found == []  # NotHandleFault: said, not judged; the options in the guide's order read too


# --- hccn_tool: the NPUs' RoCE ports ---
def _loop(option: str, said: dict[int, str], default: str) -> str:
    return "".join(
        f"/usr/local/Ascend/driver/tools/hccn_tool -i {n} -{option} -g\n{said.get(n, default)}\n\n" for n in range(8)
    )


def test_a_port_down_among_ports_up_is_the_ports_fault(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, found = _doctor(_loop("link", {5: "link status: DOWN"}, "link status: UP"), tmp_path, capsys)
    assert found == [("nic_port_down", "NPU 5 RoCE port", "critical")] and code == 1
    loop = (
        "for i in {0..7}; do hccn_tool -i $i -link -g ; done\n"
        + "link status: UP\n" * 3
        + "link status: DOWN\n"
        + "link status: UP\n" * 4
    )
    assert _doctor(loop, tmp_path, capsys)[1] == [("nic_port_down", "NPU 3 RoCE port", "critical")]


def test_every_port_down_is_a_lead_and_all_up_is_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    found = _doctor(_loop("link", {}, "link status: DOWN"), tmp_path, capsys)[1]
    assert [(c, s) for c, _, s in found] == [("nic_port_down_undeclared", "warn")]
    code, found = _doctor(_loop("link", {}, "link status: UP"), tmp_path, capsys)
    assert found == [] and code == 0


def test_net_health(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    found = _doctor(
        _loop("net_health", {2: "net health status: Socket failed"}, "net health status: Success"), tmp_path, capsys
    )[1]
    assert found == [("npu_network_unhealthy", "NPU 2 RoCE port", "warn")]
    assert _doctor(_loop("net_health", {}, "net health status: Init"), tmp_path, capsys)[1] == []


OPTICAL = """/usr/local/Ascend/driver/tools/hccn_tool -i 4 -optical -g
optical info:
present              : present
temperature          : 47 C
Tx Power0            : 1.4035 mW
Rx Power0            : {rx} mW
TxPower High Thres   : 3.5481 mW
TxPower Low Thres    : 0.2818 mW
RxPower High Thres   : 3.5481 mW
RxPower Low Thres    : 0.1445 mW
Tx Los Flag          : 0x0
Rx Los Flag          : {los}
Tx LoL Flag          : 0x0
Rx LoL Flag          : 0x0
"""


def test_optical_module_alarms(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _doctor(OPTICAL.format(rx="1.0189", los="0xff"), tmp_path, capsys)[1] == [
        ("nic_hardware_alarm", "NPU 4 RoCE port", "warn")
    ]
    [error] = hccn_tool.parse(clean(OPTICAL.format(rx="0.0054", los="0x0")).lines).errors
    assert error.kind == "hccn_optical_alarm" and "Rx Power0 0.0054 mW" in str(error.meaning)
    assert _doctor(OPTICAL.format(rx="1.0189", los="0x0"), tmp_path, capsys)[1] == []


def test_link_stat_long_disconnection(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = """/usr/local/Ascend/driver/tools/hccn_tool -i 6 -link_stat -g
[devid 6]current time        : Wed Jun  7 10:08:28 2023
[devid 6]link up count       : 2
[devid 6]link change records :
[devid 6]    Tue Jun  6 16:35:12 2023    LINK UP
[devid 6]    Tue Jun  6 16:32:10 2023    LINK DOWN
[devid 6]    Tue Jun  6 16:31:55 2023    LINK UP
"""
    assert _doctor(text, tmp_path, capsys)[1] == [("nic_errors", "NPU 6 RoCE port", "warn")]
    assert _doctor(text.replace("16:35:12", "16:32:12"), tmp_path, capsys)[1] == []  # back in 2 s: a blip


# --- habanalabs: device.c's heartbeat and reset lines ---
HL = "[    5.100000] habanalabs 0000:19:00.0: Driver version: 1.17.0-495b8f9\n"


def test_habana_heartbeat_and_reset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    beat = HL + "[ 8123.456789] habanalabs 0000:19:00.0: Device heartbeat failed!\n"
    assert _doctor(beat, tmp_path, capsys)[1] == [
        ("module_reported_critical", "habanalabs 0000:19:00.0 (0000:19:00.0)", "critical")
    ]
    back = (
        beat + "[ 8125.000000] habanalabs 0000:19:00.0: Going to reset device\n"
        "[ 8131.000000] habanalabs 0000:19:00.0: Successfully finished resetting the 0000:19:00.0 device\n"
    )
    assert [(c, s) for c, _, s in _doctor(back, tmp_path, capsys)[1]] == [("module_reported_warning", "warn")]
    failed = (
        beat + "[ 8131.000000] habanalabs 0000:19:00.0: 0000:19:00.0 Consecutive FW fatal errors received, "
        "stopping hard reset\n"
    )
    assert [(c, s) for c, _, s in _doctor(failed, tmp_path, capsys)[1]] == [("module_reported_critical", "critical")]


def test_the_markers_cover_the_tables() -> None:
    """The format runs only on a text holding one of its markers: each documented code and label must hold one."""
    from gpuvet.captures.ascend_marks import CODES, EM_OPENINGS
    from gpuvet.knowledge import _read

    table = _read("ascend_codes.yaml")
    assert {str(c)[:3] for c in table["error_manager"]} <= set(EM_OPENINGS)  # type: ignore[attr-defined]
    assert all(any(w in label for w in CODES) for label in table["labels"])  # type: ignore[attr-defined]
