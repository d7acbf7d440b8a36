"""Doctor on captures beyond NVIDIA's own tools (issue 46, dev set dev_g_other): HCCL's error codes take
HCCL's advice from the knowledge base, not NCCL's; the Ascend runtime's codes are their own finding; the
amdgpu driver's initialisation failure is a module that did not come up. Captures written here in the
format torch_npu, CANN and the kernel print."""

from __future__ import annotations

from gpuvet.knowledge import hccl_code
from tests.support.helpers import doctor_capture, found_causes

EI0006 = """\
[rank3]: RuntimeError: InnerRunOpApi:torch_npu/csrc/framework/OpParamMaker.cpp:281 OPS function error: HcclAllreduce, \
error code is 6
[rank3]: [ERROR] 2025-05-14-07:02:31 (PID:58110, Device:3, RankID:3) ERR01100 OPS call acl api failed.
[rank3]: EI0006: [PID: 58110] 2025-05-14-07:02:31.441.902 Getting socket times out. Reason: Remote Rank did not send \
the data in time. Please check the reason for the rank being stuck
"""


def test_an_hccl_code_gets_hccls_own_advice_not_nccls(capsys, tmp_path) -> None:
    code, data = doctor_capture(capsys, tmp_path, EI0006)
    [f] = data["findings"]
    assert code == 1 and (f["cause"], f["module"]) == ("collective_runtime_error", "GPU 3 (host not in the log)")
    assert f["fix"] == hccl_code("EI0006").action and "HCCL_CONNECT_TIMEOUT" in f["fix"]
    assert "NET/IB" not in f["fix"] and f["evidence"]["meaning"] == hccl_code("EI0006").meaning


def test_a_code_the_list_lacks_still_gets_hccls_general_advice(capsys, tmp_path) -> None:
    _, data = doctor_capture(capsys, tmp_path, EI0006.replace("EI0006", "EI0042"))
    [f] = data["findings"]
    assert f["fix"] == hccl_code("EI0042").action and not hccl_code("EI0042").known
    assert "meaning" not in f["evidence"]


RUNTIME_ONLY = """\
worker-2: EH9999: 2024-11-20-14:51:09.377.162  wait for compute device to finish failed, runtime result = 107020.\
[FUNC:ReportCallError][FILE:log_inner.cpp][LINE:161]
worker-2:         TraceBack (most recent call last):
worker-2: EH9999: Inner Error!
worker-2:         rtDeviceSynchronize execute failed, reason=[task timeout][FUNC:FuncErrorReason]\
[FILE:error_message_manage.cc][LINE:53]
"""


def test_the_ascend_runtimes_own_code_is_an_npu_runtime_error_not_a_refusal(capsys, tmp_path) -> None:
    code, data = doctor_capture(capsys, tmp_path, RUNTIME_ONLY)
    [f] = data["findings"]
    assert code == 1 and (f["cause"], f["severity"]) == ("npu_runtime_error", "warn")
    assert "task timeout" in f["evidence"]["message"] and "HCCL_EXEC_TIMEOUT" in f["fix"]


AMD_INIT = """\
[    6.402117] amdgpu 0000:2d:00.0: [drm:amdgpu_ring_test_helper [amdgpu]] *ERROR* ring mes_kiq_3.1.0 test failed (-110)
[    6.413050] [drm:amdgpu_device_init [amdgpu]] *ERROR* hw_init of IP block <gfx_v11_0> failed -110
[    6.421733] amdgpu 0000:2d:00.0: amdgpu: amdgpu_device_ip_init failed
[    6.428190] amdgpu 0000:2d:00.0: amdgpu: Fatal error during GPU init
"""


def test_amdgpus_fatal_error_during_gpu_init_is_a_module_that_did_not_come_up(capsys, tmp_path) -> None:
    code, data = doctor_capture(capsys, tmp_path, AMD_INIT)
    assert code == 1 and ("module_init_failed", "0000:2D:00.0") in found_causes(data)
    [f] = [x for x in data["findings"] if x["cause"] == "module_init_failed"]
    assert f["severity"] == "critical" and "amdgpu" in f["fix"]


RBT = """\
          RocmBandwidthTest Version: 2.6.0

          Device: 0,  AMD EPYC 7763 64-Core Processor
          Device: 1,  AMD Instinct MI250X,  GPU-1a2b3c4d5e6f7081,  c1:0.0
          Device: 2,  AMD Instinct MI250X,  GPU-2a2b3c4d5e6f7082,  c6:0.0
          Device: 3,  AMD Instinct MI250X,  GPU-3a2b3c4d5e6f7083,  c9:0.0
          Device: 4,  AMD Instinct MI250X,  GPU-4a2b3c4d5e6f7084,  ce:0.0

          Unidirectional copy peak bandwidth GB/s

          D/D       0           1           2           3           4

          0         N/A         24.902      24.888      24.911      24.899

          1         25.121      1271.223    37.533      37.512      37.498

          2         25.107      37.541      1270.871    37.515      9.102

          3         25.119      37.507      37.522      1271.015    37.540

          4         25.114      37.499      9.095       37.531      1270.442
"""


def test_rocm_bandwidth_tests_gpu_pairs_are_judged_against_their_peers(capsys, tmp_path) -> None:
    """Device 2 <-> Device 4 at 9.1 GB/s while every other pair reads ~37.5: GPUs 1 and 3 in GPU order
    (the CPU row and column are host memory; the diagonal a module's copy to itself)."""
    code, data = doctor_capture(capsys, tmp_path, RBT)
    assert code == 1 and [(f["cause"], f["between"]) for f in data["findings"]] == [
        ("link_degraded", ["GPU 1", "GPU 3"])]
    _, healthy = doctor_capture(capsys, tmp_path, RBT.replace("9.102", "37.520").replace("9.095", "37.511"))
    assert healthy["findings"] == []


LINK_STATUS = """\
[    5.912800] nvidia 0000:41:00.0: 63.008 Gb/s available PCIe bandwidth, limited by 8.0 GT/s PCIe x8 link at \
0000:40:01.1 (capable of 252.048 Gb/s with 16.0 GT/s PCIe x16 link)
[    5.913100] mlx5_core 0000:3b:00.0: 126.016 Gb/s available PCIe bandwidth, limited by 8.0 GT/s PCIe x16 link at \
0000:3a:00.0 (capable of 252.048 Gb/s with 16.0 GT/s PCIe x16 link)
[    6.001000] amdgpu 0000:0b:00.0: 32.000 Gb/s available PCIe bandwidth, limited by 2.5 GT/s PCIe x16 link at \
0000:00:03.1 (capable of 252.048 Gb/s with 16.0 GT/s PCIe x16 link)
"""


def test_the_pci_cores_link_status_line_of_a_gpu_driver_is_that_gpus_link(capsys, tmp_path) -> None:
    """A GPU's path trained narrower than it can is a downgraded link (warn); at full width but a lower speed,
    an idle downshift (info); a NIC's or a drive's line is theirs, not a GPU's."""
    code, data = doctor_capture(capsys, tmp_path, LINK_STATUS)
    assert code == 1 and {(f["cause"], f["module"], f["severity"]) for f in data["findings"]} == {
        ("pcie_link_downgraded", "0000:41:00.0", "warn"), ("pcie_link_idle_speed", "0000:0B:00.0", "info")}


PERFTEST_FAILED = """\
---------------------------------------------------------------------------------------
                    RDMA_Read BW Test
 Dual-port       : OFF          Device         : mlx5_2
 Number of qps   : 1            Transport type : IB
 Link type       : Ethernet
 GID index       : 1
---------------------------------------------------------------------------------------
 Failed to modify QP 297 to RTR
 Unable to Connect the HCA's through the link
"""


def test_a_perftest_run_that_failed_is_named_with_perftests_own_line(capsys, tmp_path) -> None:
    code, data = doctor_capture(capsys, tmp_path, PERFTEST_FAILED)
    [f] = data["findings"]
    assert code == 1 and (f["cause"], f["severity"], f["evidence"]["nic"]) == ("rdma_test_failed", "warn", "mlx5_2")
    assert f["evidence"]["error"] == "Failed to modify QP 297 to RTR" and f["evidence"]["times"] == 2
    code, data = doctor_capture(capsys, tmp_path, " Couldn't connect to 192.168.10.2:18515\n")  # the line alone
    assert code == 1 and [f["cause"] for f in data["findings"]] == ["rdma_test_failed"]


AMD_AER = """\
[  812.100231] pcieport 0000:00:01.1: AER: Multiple Corrected error received: 0000:03:00.0
[  812.100245] amdgpu 0000:03:00.0: PCIe Bus Error: severity=Corrected, type=Data Link Layer, (Transmitter ID)
[  812.100248] amdgpu 0000:03:00.0:   device [1002:73bf] error status/mask=00001000/00002000
[  812.100251] amdgpu 0000:03:00.0:    [12] Timeout
"""


def test_an_amd_gpus_own_aer_errors_are_the_modules(capsys, tmp_path) -> None:
    code, data = doctor_capture(capsys, tmp_path, AMD_AER)
    [f] = data["findings"]
    assert code == 1 and (f["cause"], f["module"], f["evidence"]["below"]) == (
        "pcie_aer_errors", "0000:03:00.0", "the module itself")
    assert not any("not a GPU" in n for n in data["notes"])


HIP_FAULT = """\
Loading checkpoint shards: 100%|██████████| 4/4 [00:03<00:00,  1.21it/s]
Memory access fault by GPU node-2 (Agent handle: 0x55d1c0a5e9a0) on address 0x7f3a2c000000. Reason: Page not present \
or supervisor privilege.
Aborted (core dumped)
"""


def test_rocms_runtime_errors_are_read_as_cudas_are(capsys, tmp_path) -> None:
    """The HSA runtime's memory access fault and HIP's errors: the application's first (warn), named by the
    HSA node the line gives; HIP's out of memory is no hardware fault (info)."""
    code, data = doctor_capture(capsys, tmp_path, HIP_FAULT)
    [f] = data["findings"]
    assert code == 1 and (f["cause"], f["severity"], f["evidence"]["kind"]) == (
        "application_hip_error", "warn", "hip_memory_fault")
    _, oom = doctor_capture(capsys, tmp_path, "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB. "
                                              "GPU 0 has a total capacity of 191.98 GiB\n")
    assert [(x["cause"], x["severity"]) for x in oom["findings"]] == [("application_out_of_memory", "info")]
    assert "amd-smi" in oom["findings"][0]["fix"]


AMD_VM_FAULT = """\
[ 4410.118072] amdgpu 0000:c1:00.0: amdgpu: [gfxhub0] no-retry page fault (src_id:0 ring:24 vmid:8 pasid:32771, for \
process python3 pid 88121 thread python3 pid 88121)
[ 4410.118081] amdgpu 0000:c1:00.0: amdgpu:   in page starting at address 0x00007f1c2a400000 from IH client 0x1b (UTCL2)
[ 4410.118086] amdgpu 0000:c1:00.0: amdgpu: VM_L2_PROTECTION_FAULT_STATUS:0x00800932
[ 4410.200001] amdgpu 0000:c1:00.0: amdgpu: [gfxhub0] retry page fault (src_id:0 ring:0 vmid:9 pasid:32772, for \
process python3 pid 88200 thread python3 pid 88200)
"""


def test_an_amdgpu_page_fault_is_a_warning_on_its_module_a_printed_retry_fault_too(capsys, tmp_path) -> None:
    code, data = doctor_capture(capsys, tmp_path, AMD_VM_FAULT)
    [f] = data["findings"]
    assert code == 1 and (f["cause"], f["module"], f["severity"]) == ("module_page_fault", "0000:C1:00.0", "warn")
    assert f["evidence"]["times"] == 2  # R10A: gmc_v9_0.c prints a retry fault only where XNACK could not resolve it
