"""Issue 46 (FX68A): DCGM's and the NVIDIA driver's outputs read as their class: a value meaning unknown is no
failure, dcgmi diag's Metadata block gives the driver version, NVRM's status codes judged by their family,
dcgmi modules -l, dcgmproftester and kubectl describe node's withheld devices."""

from __future__ import annotations

from pathlib import Path

from gpuvet.captures import dcgm
from gpuvet.captures.text import Line
from tests.support.helpers import capture_findings, capture_json


def _lines(text: str) -> list[Line]:
    return [Line(i + 1, t) for i, t in enumerate(text.splitlines())]


_STATS = """\
Successfully retrieved statistics for job: 17.
+------------------------------------------------------------------------------+
| Summary                                                                      |
+====================================+=========================================+
|-----  Event Stats  ----------------+-----------------------------------------|
| Single Bit ECC Errors              | {sbe:<40}|
| Double Bit ECC Errors              | {dbe:<40}|
| Critical XID Errors                | 0                                       |
+-----  Overall Health  -------------+-----------------------------------------+
| Overall Health                     | Healthy                                 |
+------------------------------------+-----------------------------------------+
"""


def test_ecc_rows_reading_unknown_are_no_failure(tmp_path: Path) -> None:
    for value in ("Not Specified", "N/A", "Unknown", "Not Available"):
        found = capture_findings(tmp_path, _STATS.format(sbe=value, dbe=value))
        assert not any(cause == "unread_failure_line" for cause, _ in found), value


def test_a_gpu_line_reporting_a_failure_is_still_a_lead(tmp_path: Path) -> None:
    found = capture_findings(tmp_path, "GPU 0: ECC page retirement failed: uncorrectable error\n")
    assert found, "a real failure line must still be read"


_DIAG = """\
dcgmi diag -r 1
Successfully ran diagnostic for group.
+---------------------------+------------------------------------------------+
| Diagnostic                | Result                                         |
+===========================+================================================+
|-----  Metadata  ----------+------------------------------------------------|
| DCGM Version              | 3.3.5                                          |
| Driver Version Detected   | 535.161.08                                     |
| GPU Device IDs Detected   | 20b5,20b5                                      |
|-----  Deployment  --------+------------------------------------------------|
| software                  | Pass                                           |
|                           | GPU0: Pass                                     |
|                           | GPU1: Pass                                     |
+---------------------------+------------------------------------------------+
"""


def test_diag_metadata_gives_driver_and_device_ids() -> None:
    parsed = dcgm.parse_text(_lines(_DIAG))
    assert (parsed.version, parsed.driver, parsed.device_ids) == ("3.3.5", "535.161.08", ["20b5", "20b5"])
    assert parsed.claimed == set(range(1, 15))


def test_diag_driver_reaches_the_inventory(tmp_path: Path) -> None:
    inv = capture_json(tmp_path, _DIAG, cmd="inventory")
    software = inv["software"]
    assert isinstance(software, dict) and software["driver_version"] == "535.161.08"
    modules = inv["modules"]
    assert isinstance(modules, list) and [m["model"] for m in modules] == ["A100 PCIe 80GB"] * 2  # 10de:20b5


def _nvrm(code: str, value: str, call: str = "NVB0CC_CTRL_CMD_INTERNAL_ALLOC_PMA_STREAM") -> str:
    return (f"[  120.5] NVRM: GPU0 nvCheckOkFailedNoLog: Check failed: Some words [{code}] ({value}) returned from "
            f"pRmApi->Control(pRmApi, hClient, hObject, {call}, &p, sizeof(p)) @ kern_profiler_v2_ctrl.c:315\n")


def test_nvrm_status_of_a_software_refusal_is_info(tmp_path: Path) -> None:
    for code, value in (("NV_ERR_STATE_IN_USE", "0x00000063"), ("NV_ERR_IN_USE", "0x00000017"),
                        ("NV_ERR_BUSY_RETRY", "0x00000003"), ("NV_ERR_INSUFFICIENT_PERMISSIONS", "0x0000001b"),
                        ("NV_ERR_NOT_SUPPORTED", "0x00000056")):
        found = capture_findings(tmp_path, _nvrm(code, value))
        assert found == {("driver_call_refused", "GPU0"): "info"}, code


def test_nvrm_status_of_a_broken_gpu_stays_a_warning_or_worse(tmp_path: Path) -> None:
    for code, value in (("NV_ERR_TIMEOUT", "0x00000065"), ("NV_ERR_ECC_ERROR", "0x0000000b")):
        found = capture_findings(tmp_path, _nvrm(code, value, "NV2080_CTRL_CMD_GPU_GET_INFO"))
        assert found and all(sev in ("warn", "critical") for sev in found.values()), (code, found)
        assert "driver_call_refused" not in {cause for cause, _ in found}
    mixed = _nvrm("NV_ERR_STATE_IN_USE", "0x63").replace("returned from", "then NV_ERR_GPU_IS_LOST returned from")
    assert "driver_call_refused" not in {cause for cause, _ in capture_findings(tmp_path, mixed)}


_NODE = """\
Name:               gpu-node-7
Roles:              <none>
Capacity:
  cpu:                        96
  memory:                     1056000000Ki
  {res}:{pad}{cap}
  pods:                       110
Allocatable:
  cpu:                        96
  memory:                     1050000000Ki
  {res}:{pad}{alloc}{tail}
  pods:                       110
"""


def test_describe_node_capacity_above_allocatable_is_a_withheld_device(tmp_path: Path) -> None:
    for res in ("nvidia.com/gpu", "amd.com/gpu", "habana.ai/gaudi", "huawei.com/Ascend910"):
        for tail in ("", "       <=========== here", "   # one is missing"):
            text = _NODE.format(res=res, pad=" " * 8, cap=8, alloc=7, tail=tail)
            doc = capture_json(tmp_path, text)
            findings = doc["findings"]
            assert isinstance(findings, list)
            said = [(f["cause"], f["severity"]) for f in findings]
            assert said == [("scheduler_gpus_short", "warn")], (res, tail, said)
            assert "1 device(s) withheld" in str(findings[0]["evidence"])
            if tail:
                assert "tolerated" in str(doc), (res, tail)


def test_describe_node_capacity_equal_to_allocatable_is_clear(tmp_path: Path) -> None:
    text = _NODE.format(res="nvidia.com/gpu", pad=" " * 8, cap=8, alloc=8, tail="   <== here")
    assert capture_findings(tmp_path, text) == {}


def _modules_box(states: dict[str, str]) -> str:
    rows = "".join(f"| {i:<9} | {name:<18} | {state:<48} |\n" for i, (name, state) in enumerate(states.items()))
    rule = "+-----------+--------------------+--------------------------------------------------+\n"
    return (rule + "| List Modules" + " " * 70 + "|\n| Status: Success" + " " * 67 + "|\n"
            + rule.replace("-", "=") + "| Module ID | Name               | State" + " " * 44 + "|\n" + rule + rows + rule)


def test_dcgmi_modules_list_every_state_read_none_judged_but_a_failed_load(tmp_path: Path) -> None:
    healthy = {"Core": "Loaded", "NvSwitch": "Loaded", "VGPU": "Not loaded", "Health": "Unloaded",
               "Policy": "Denylisted", "Config": "Blacklisted", "Diag": "Paused", "Profiling": "Not loaded"}
    doc = capture_json(tmp_path, _modules_box(healthy))
    assert doc["findings"] == []
    assert "Denylisted: Policy" in str(doc["notes"]) and "Paused: Diag" in str(doc["notes"])
    failed = capture_findings(tmp_path, _modules_box({**healthy, "Profiling": "Failed to load"}))
    assert failed == {("dcgm_module_unavailable", None): "info"}


_PROF = """\
$ dcgmproftester12 -t 1004 --no-dcgm-validation
Worker 0:0[1004]: TensorEngineActive: target 0.50, dcgm 0.49
Bus ID 00000000:3B:00.0 mapped to cuda device ID 0
CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: 108
CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: 8
GPU 0, TestField 1004 test {first}.
GPU 1, TestField 1004 {second}.
"""


def test_dcgmproftester_failed_is_a_warning_passed_clears(tmp_path: Path) -> None:
    passed = capture_json(tmp_path, _PROF.format(first="PASSED", second="test PASSED") + "All Tests Passed.\n")
    assert passed["findings"] == []
    assert "GPU 0 TestField 1004 test PASSED" in str(passed["notes"]) and "SMs 108" in str(passed["notes"])
    assert "skipped" not in str(passed["notes"])
    found = capture_findings(tmp_path, _PROF.format(first="PASSED", second="testing FAILED"))
    assert found == {("dcgm_proftester_failed", "GPU 1"): "warn"}


def test_dcgmi_stats_job_summary_is_read_and_said(tmp_path: Path) -> None:
    text = "$ dcgmi stats -g 2 -j 17\n" + _STATS.format(sbe="Not Specified", dbe="0")
    doc = capture_json(tmp_path, text)
    assert doc["findings"] == []
    notes = str(doc["notes"])
    assert "job 17: Critical XID Errors 0" in notes and "Overall Health Healthy" in notes
    assert "skipped" not in notes


def test_new_readers_take_linear_time_on_hostile_lines() -> None:
    """A 100 KB line of each reader's characters and 16x the lines: CPU time grows no faster than the input."""
    import time

    from gpuvet.captures import dcgm_tools, side_tables, unread_leads
    from gpuvet.captures.app_errors import AppErrorsParse

    def cost(n: int) -> float:
        lines = _lines(("| " * 50_000 + "\n") + ("$ " + "a" * 100_000 + " dcgmproftester12\n")
                       + ("+" + "-" * 100_000 + "  Stats  " + "-" * 100_000 + "\n")
                       + ("| 1 | Core | Loaded |\nGPU 0, TestField 1004 test PASSED.\nTestField x\n"
                          "| Single Bit ECC Errors | Not Specified |\nList Modules\n") * n)
        start = time.process_time()
        for reader in (dcgm_tools.modules, dcgm_tools.proftester):
            reader(lines, AppErrorsParse())
        side_tables.parse(lines)
        unread_leads.leads(lines, set())
        return time.process_time() - start

    small, big = cost(2_000), cost(32_000)
    assert big < 40 * max(small, 1e-3), (small, big)


def test_dcgmi_modules_list_json_form(tmp_path: Path) -> None:
    import json

    def doc(profiling: str) -> str:
        body = {name: {"children": {"Module ID": {"value": str(i)}, "Name": {"value": name},
                                    "State": {"value": state}}}
                for i, (name, state) in enumerate((("Core", "Loaded"), ("Health", "Not loaded"),
                                                   ("Profiling", profiling)))}
        return json.dumps({"body": body, "header": ["List Modules", "Status: Success"]}, indent=3) + "\n"

    clean = capture_json(tmp_path, doc("Loaded"))
    assert clean["findings"] == [] and "Loaded: Core, Profiling" in str(clean["notes"])
    assert capture_findings(tmp_path, doc("Failed to load")) == {("dcgm_module_unavailable", None): "info"}
