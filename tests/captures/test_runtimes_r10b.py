"""Issue 46 (R10B), on lines written in the runtimes' own words: Habana Synapse's synDeviceAlreadyAcquired (20) in
the call's and the PyTorch bridge's framings (the device held by another process: the driver's or device's state,
not a collective's set-up), nccl-tests' own 'Test CUDA failure … '<cudaGetErrorString>'' by the CUDA error's class,
a PyTorch program's traceback (read, never refused), the Neuron runtime's infodump header (read: versions, no fault)
and Ascend DSMI failing to count the NPUs (the runtime sees no NPU it can use)."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import capture_findings, doctor_text

_AR = Path(__file__).parent.parent / "data" / "captures" / "fresh_ar"
_AS = Path(__file__).parent.parent / "data" / "captures" / "fresh_as"
_HELD = ("api_reports_driver_state", "host and GPU not in the log")


def test_synapse_device_already_acquired_is_the_device_held_in_either_framing(tmp_path: Path) -> None:
    call = "synDeviceAcquire(&handle, nullptr) failed with synapse error: 20\n"
    bridge = "RuntimeError: synStatus=20 [Device already acquired] Device acquire failed.\n"
    quoted = "4. After a while, the error log shows: `synStatus=20 [Device already acquired] Device acquire failed.`\n"
    assert capture_findings(tmp_path, call) == {_HELD: "warn"}
    assert capture_findings(tmp_path, bridge) == capture_findings(tmp_path, call)  # one fact, one verdict
    assert capture_findings(tmp_path, quoted) == {_HELD: "warn"}
    # another status keeps its reading (a device the call could not find is the call's set-up, as before)
    other = "synDeviceAcquire(&handle, nullptr) failed with synapse error: 8\n"
    assert _HELD not in capture_findings(tmp_path, other)
    code, data = doctor_text(tmp_path, "synStatus=0 [Success] Device acquired.\n")  # read, never refused
    assert code == 0 and not data["findings"]


def test_nccl_tests_cuda_failure_takes_the_cuda_errors_own_class(tmp_path: Path) -> None:
    def line(words: str) -> str:
        return f"ip-10-0-0-7: Test CUDA failure common.cu:730 '{words}'\n .. ip-10-0-0-7 pid 41: Test failure x.cu:393\n"

    assert capture_findings(tmp_path, line("unknown error")) == {("api_reports_driver_state", None): "warn"}
    assert set(capture_findings(tmp_path, line("system not yet initialized"))) == {("fabric_manager_failed", None)}
    # the benchmark's own error (a bad argument) stays the benchmark's failure
    assert set(capture_findings(tmp_path, line("invalid argument"))) == {("collective_test_failed", None)}


def test_a_pytorch_traceback_is_read_not_refused(tmp_path: Path) -> None:
    text = (
        "Traceback (most recent call last):\n"
        '  File "/opt/envs/pytorch_2.1.0/lib/python3.10/site-packages/trainer/run.py", line 179, in main\n'
        "    trainer.run_training()\n"
        '  File "/usr/lib/python3/dist-packages/site-packages/torch/nn/modules/module.py", line 1501, in _call_impl\n'
        "    return forward_call(*args, **kwargs)\n"
    )
    code, data = doctor_text(tmp_path, text)
    assert code == 0 and not data["findings"]


_DUMP = "".join(
    f"2024-May-21 16:08:34.2009{i} 58093:58093 ERROR   NRT:nrt_infodump                            {body}\n"
    for i, body in enumerate(
        (
            "------------->8------------[ cut here ]------------>8-------------",
            "NRT version: 2.20.22.0 (1b3ca64250aae3cc8631db08e8deb1b6b4ea2f88)",
            "CCOM version: 2.20.22.0-c101c322e940b1 (compat 36)",
            "Instance ID: i-0123456789abcdef0",
            "Kernel: Linux 5.15.0-1058-aws #64~20.04.1-Ubuntu SMP Tue Apr 9 11:12:27 UTC 2024",
            "Driver version: 2.16.7.0",
            "Environment:",
            "    NEURON_RT_LOG_LEVEL=INFO",
        )
    )
)


def test_the_neuron_infodump_header_is_read_its_versions_said(tmp_path: Path) -> None:
    code, data = doctor_text(tmp_path, _DUMP)
    assert code == 0 and not data["findings"]
    note = " ".join(data.get("notes", []))
    assert "NRT version 2.20.22.0" in note and "Driver version 2.16.7.0" in note


def test_ascend_dsmi_failing_to_count_the_npus_is_no_npu_the_runtime_can_use(tmp_path: Path) -> None:
    text = "".join(
        f"[ERROR] IDEDD(1,python3.10):2024-10-14-07:24:1{i}.097.930 [adx_dsmi.cpp:54][tid:201]>>> Get physical "
        "device number failed, err: 87\n"
        for i in range(3)
    )
    assert capture_findings(tmp_path, text) == {("framework_sees_no_module", None): "warn"}


def test_the_rows_themselves() -> None:
    from tests.support.helpers import run

    def answer(path: Path) -> tuple[int, str]:
        code, out, _ = run(["doctor", "--from", str(path), "--json"])
        return code, out

    code, out = answer(_AR / "gaudi_tgigaudi54_device_already_acquired.txt")
    assert code == 1 and "api_reports_driver_state" in out
    code, out = answer(_AR / "nccl-tests_nccltests66_v100_unknown_error.txt")
    assert code == 1 and "api_reports_driver_state" in out and "collective_test_failed" not in out
    assert answer(_AR / "pytorch_nnunet1519_nvlink_error_traceback.txt")[0] == 0
    assert answer(_AS / "nrtlog_awsneuron851_infodump_trn1.txt")[0] == 0
    code, out = answer(_AS / "ascendlog_lmdeploy2585_dsmi_err87_atlas800t.txt")
    assert code == 1 and "framework_sees_no_module" in out
