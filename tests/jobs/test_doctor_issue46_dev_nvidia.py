"""doctor on the classes the NVIDIA dev set (issue 46, dev_g_nvidia) found missed: an nccl-tests abort
whose cause the NCCL log beside it already names. The logs are written in NCCL's and nccl-tests'
formats; hosts, pids and addresses are made up."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.helpers import doctor_capture, found_causes

FAILURE = ("nodeb: Test NCCL failure common.cu:1005 'unhandled cuda error'\n"
           " .. nodeb pid 4410: Test failure common.cu:891\n")
WARN = ("nodea:4401:4460 [1] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer 10.2.0.7<52210> "
        "with status=12 opcode=0 len=0 vendor err 129 (Recv)\n"
        "nodea:4401:4460 [1] NCCL INFO transport/net.cc:1311 -> 6\n")


def _benchmark(data: dict[str, object]) -> dict[str, object]:
    found = [f for f in data["findings"] if f["cause"] == "collective_test_failed"]  # type: ignore[attr-defined,index]
    assert len(found) == 1
    return found[0]  # type: ignore[no-any-return]


def test_an_abort_after_the_librarys_warn_cites_that_warn_and_its_advice(capsys: pytest.CaptureFixture[str],
                                                                         tmp_path: Path) -> None:
    code, data = doctor_capture(capsys, tmp_path, WARN + FAILURE)
    assert code == 1
    f = _benchmark(data)
    assert str(f["evidence"]["first_error"]).startswith("nodea [1], line 1: ")  # type: ignore[index]
    assert "status=12" in str(f["evidence"]["first_error"]) and "NET/IB" in str(f["fix"])  # type: ignore[index]


def test_an_abort_alone_keeps_the_benchmarks_own_advice(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, data = doctor_capture(capsys, tmp_path, FAILURE)
    f = _benchmark(data)
    assert "first_error" not in f["evidence"] and "NCCL_DEBUG=INFO" in str(f["fix"])  # type: ignore[operator]


def test_a_warn_without_a_failure_word_fails_when_its_error_trace_follows(capsys: pytest.CaptureFixture[str],
                                                                         tmp_path: Path) -> None:
    """NCCL prints 'file.cc:N -> code' only for a call that returned an error: the WARN before it failed."""
    dup = ("gpu-a:8810:8870 [0] init.cc:566 NCCL WARN Duplicate GPU detected : rank 1 and rank 0 both on CUDA "
           "device 1b000\ngpu-a:8810:8870 [0] NCCL INFO init.cc:1301 -> 5\n")
    code, data = doctor_capture(capsys, tmp_path, dup)
    assert code == 1 and ("collective_init_failed", "gpu-a GPU 0") in found_causes(data)
    benign = ("gpu-a:8810:8870 [0] NCCL WARN NCCL_SOCKET_IFNAME set to ib0 but not found, using eth0\n"
              "gpu-a:8810:8870 [0] NCCL INFO Channel 00/02 : 0 1\n")
    code, data = doctor_capture(capsys, tmp_path, benign, name="benign.txt")
    assert not {c for c, _ in found_causes(data)} & {"collective_init_failed", "collective_runtime_error"}


def test_a_warn_whose_trace_is_far_off_or_after_init_complete_is_no_init_failure(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Review 53: a WARN without a failure word stayed pending for the whole process, so a healthy log's
    teardown trace (socket.cc -> 2 in another thread, after Init COMPLETE) made an early informative WARN a
    critical init failure. The trace must follow the WARN in its own thread within a few lines, and a failure
    after the process's Init COMPLETE is a runtime one."""
    healthy = ("gpu-a:8810:8810 [0] NCCL INFO NCCL version 2.18.3+cuda12.2\n"
               "gpu-a:8810:8871 [0] NCCL WARN NET/IB : Got async event : port active\n"
               "gpu-a:8810:8810 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC\n"
               "gpu-a:8810:8810 [0] NCCL INFO comm 0x55 rank 0 nranks 8 cudaDev 0 busId 18000 - Init COMPLETE\n"
               "gpu-a:8810:8899 [0] NCCL INFO misc/socket.cc:538 -> 2\n"
               "gpu-a:8810:8810 [0] NCCL INFO comm 0x55 rank 0 nranks 8 cudaDev 0 busId 18000 - Destroy COMPLETE\n")
    _, data = doctor_capture(capsys, tmp_path, healthy)
    assert not {c for c, _ in found_causes(data)} & {"collective_init_failed", "collective_runtime_error"}
    late = ("gpu-a:8810:8810 [0] NCCL INFO comm 0x55 rank 0 nranks 8 cudaDev 0 busId 18000 - Init COMPLETE\n"
            "gpu-a:8810:8810 [0] init.cc:566 NCCL WARN Duplicate GPU detected : rank 1 and rank 0 both on CUDA "
            "device 1b000\ngpu-a:8810:8810 [0] NCCL INFO init.cc:1301 -> 5\n")
    _, data = doctor_capture(capsys, tmp_path, late, name="late.txt")
    causes = {c for c, _ in found_causes(data)}
    assert "collective_init_failed" not in causes and "collective_runtime_error" in causes


def _temperature_q(current: int) -> str:
    return ("==============NVSMI LOG==============\n\nDriver Version                      : 384.81\n\n"
            "Attached GPUs                       : 1\nGPU 00000000:02:00.0\n    Temperature\n"
            f"        GPU Current Temp            : {current} C\n        GPU Shutdown Temp           : 96 C\n"
            "        GPU Slowdown Temp           : 93 C\n        GPU Max Operating Temp      : N/A\n")


def test_a_module_at_its_own_slowdown_temperature_throttles(capsys: pytest.CaptureFixture[str],
                                                          tmp_path: Path) -> None:
    """-q's Temperature section alone: at or above the module's Slowdown Temp its hardware lowers the clocks."""
    code, data = doctor_capture(capsys, tmp_path, _temperature_q(94))
    assert code == 1 and ("thermal_throttling", "0000:02:00.0") in found_causes(data)
    code, data = doctor_capture(capsys, tmp_path, _temperature_q(78), name="cool.txt")
    assert "thermal_throttling" not in {c for c, _ in found_causes(data)}


def test_at_slowdown_temperature_with_thermal_slowdown_read_not_active_is_no_throttling(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Review 53: a module at its Slowdown Temp whose capture reads HW and SW Thermal Slowdown 'Not Active'
    was thermal_throttling; it is that hot without throttling yet (at_max_operating_temp, said so)."""
    reasons = ("    Clocks Event Reasons\n        Idle                        : Not Active\n"
               "        HW Slowdown                 : Not Active\n"
               "            HW Thermal Slowdown     : Not Active\n"
               "        SW Thermal Slowdown         : Not Active\n")
    text = _temperature_q(94).replace("    Temperature\n", reasons + "    Temperature\n")
    code, data = doctor_capture(capsys, tmp_path, text)
    causes = found_causes(data)
    assert code == 1 and ("at_max_operating_temp", "0000:02:00.0") in causes
    assert "thermal_throttling" not in {c for c, _ in causes}


def _a100_all_reduce(busbw: float) -> str:
    """nccl-tests' all_reduce_perf over 8 A100-SXM4-80GB (its header, device lines and two large rows)."""
    head = ["# nThread 1 nGpus 8 minBytes 1073741824 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 "
            "agg iters: 1 validation: 1 graph: 0", "#", "# Using devices"]
    head += [f"#  Rank {i:2d} Group  0 Pid  18321 on    dgx-a01 device {i:2d} [0x{7 + 8 * i:02x}] NVIDIA A100-SXM4-80GB"
             for i in range(8)]
    head += ["#", "#       size         count      type   redop    root     time   algbw   busbw #wrong     time"
             "   algbw   busbw #wrong"]
    rows = []
    for size in (2**30, 8 * 2**30):
        alg = busbw * 8 / 14
        t = size / alg / 1e3
        rows.append(f"{size:12d}  {size // 4:12d}     float     sum      -1  {t:7.1f}  {alg:6.2f}  {busbw:6.2f}"
                    f"      0  {t:7.1f}  {alg:6.2f}  {busbw:6.2f}      0")
    return "\n".join(head + rows + ["# Out of bounds values : 0 OK", f"# Avg bus bandwidth    : {busbw:.2f}", "#"])


def test_an_a100_board_is_judged_with_the_a100s_own_links(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The NVSwitch board's links are the module's: 12 NVLink 3 links on an A100, not the H200's 18, so a
    DGX A100 at its usual ~240 GB/s all_reduce busbw is healthy and a quarter of it is slow."""
    code, data = doctor_capture(capsys, tmp_path, _a100_all_reduce(240.0), "--all")
    assert "collective_below_model" not in {c for c, _ in found_causes(data)}
    code, data = doctor_capture(capsys, tmp_path, _a100_all_reduce(60.0), name="slow.txt")
    (f,) = [f for f in data["findings"] if f["cause"] == "collective_below_model"]
    assert 200 < f["evidence"]["expected_gbps"] < 300
