"""Batch I's misses on AMD, NIC and Ascend tools (issue 46), each fixed for its class of input and tested
on lines written here in the tool's own format: a library WARN its own thread outlives to Init COMPLETE,
the communicator-init lines' bus ids; amdgpu's VBIOS tables stuck at init and a kernel WARNING inside
amdgpu; lspci's corrected-error status bits alone; an HCCL task timeout (a stalled collective)."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import capture_findings, capture_json


def _init(host: str, pid: int, tid: int, rank: int, bus: str) -> str:
    return (f"{host}:{pid}:{tid} [{rank}] NCCL INFO ncclCommInitRank comm 0x5a1f{rank}0 rank {rank} nranks 2 "
            f"cudaDev {rank} nvmlDev {rank} busId {bus} commId 0x7e11 localSize 256 used 1024 bytes - Init COMPLETE\n")


def test_a_warn_whose_own_thread_then_completes_init_is_no_init_failure(tmp_path: Path) -> None:
    warn = ("gpu07:4410:4418 [1] /src/rccl/src/init.cc:2011 NCCL WARN MSCCL++: Cannot enable MSCCL++; "
            "environment is not MSCCL compatible\n")
    log = warn + _init("gpu07", 4410, 4417, 0, "1b000") + _init("gpu07", 4410, 4418, 1, "9c000")
    assert capture_findings(tmp_path, log) == {}
    modules = capture_json(tmp_path, log, "inventory")["modules"]
    assert [m["bus_id"] for m in modules] == ["0000:1B:00.0", "0000:9C:00.0"]  # type: ignore[attr-defined]
    failed = warn + _init("gpu07", 4410, 4417, 0, "1b000")  # the warning thread never came up
    assert capture_findings(tmp_path, failed) == {("collective_init_failed", "gpu07 GPU 1"): "critical"}


def test_the_vbios_tables_stuck_and_aborted_are_an_init_failure_on_the_module_named_before(tmp_path: Path) -> None:
    log = ("[    9.811204] amdgpu 0000:c3:00.0: amdgpu: Fetched VBIOS from ROM BAR\n"
           "[    9.811530] amdgpu: ATOM BIOS: 113-D1630200-112\n"
           "[   29.812877] [drm:atom_op_jump [amdgpu]] *ERROR* atombios stuck in loop for more than 20secs aborting\n"
           "[   29.813940] [drm:amdgpu_atom_execute_table_locked [amdgpu]] *ERROR* atombios stuck executing B2D4 "
           "(len 62, WS 0, PS 0) @ 0xB2F0\n")
    assert capture_findings(tmp_path, log) == {("module_init_failed", "0000:C3:00.0"): "critical"}


def test_a_kernel_warning_inside_amdgpu_is_a_driver_warning_with_or_without_a_bus_id(tmp_path: Path) -> None:
    trace = ("[  211.400118] WARNING: CPU: 7 PID: 1822 at drivers/gpu/drm/amd/amdgpu/amdgpu_irq.c:617 "
             "amdgpu_irq_put+0x9a/0xb0 [amdgpu]\n"
             "[  211.400301] RIP: 0010:amdgpu_irq_put+0x9a/0xb0 [amdgpu]\n"
             "[  211.400512]  amdgpu_fence_driver_hw_fini+0xe4/0x110 [amdgpu]\n")
    assert capture_findings(tmp_path, trace) == {("module_driver_warning", "an AMD module, bus id not in the log"): "warn"}
    other = ("[    4.190311] amdgpu 0000:c1:00.0: amdgpu: SMU is initialized successfully!\n"
             "[  211.400118] WARNING: CPU: 7 PID: 1822 at fs/ext4/inode.c:3645 ext4_set_page_dirty+0x3e/0x50\n"
             "[  211.400301] RIP: 0010:ext4_set_page_dirty+0x3e/0x50\n")
    assert capture_findings(tmp_path, other) == {}  # another subsystem's warning is not a GPU's


_AER = """\t\tUESta:\tDLP- SDES- TLP- FCP- CmpltTO- CmpltAbrt- UnxCmplt- RxOF- MalfTLP- ECRC- UnsupReq- ACSViol-
\t\tUEMsk:\tDLP- SDES- TLP- FCP- CmpltTO- CmpltAbrt- UnxCmplt- RxOF- MalfTLP- ECRC- UnsupReq- ACSViol-
\t\tCESta:\tRxErr+ BadTLP- BadDLLP- Rollover- Timeout+ AdvNonFatalErr-
\t\tCEMsk:\tRxErr- BadTLP- BadDLLP- Rollover- Timeout- AdvNonFatalErr+
"""


def test_corrected_aer_status_bits_alone_are_info_and_an_uncorrectable_bit_a_warning(tmp_path: Path) -> None:
    head = ("41:00.0 3D controller: NVIDIA Corporation GA100 [A100 PCIe 40GB] (rev a1)\n"
            "\tCapabilities: [100 v1] Advanced Error Reporting\n")
    assert capture_findings(tmp_path, head + _AER) == {("pcie_aer_corrected_bits", "41:00.0"): "info"}
    failed = head + _AER.replace("CmpltTO-", "CmpltTO+", 1)
    assert capture_findings(tmp_path, failed) == {("pcie_aer_errors", "41:00.0"): "warn"}


def test_an_hccl_task_timeout_is_a_stalled_collective_once_per_device(tmp_path: Path) -> None:
    log = ("Traceback (most recent call last):\n"
           '  File "/srv/app/worker.py", line 212, in _sync_inputs\n'
           "    dist.broadcast_object_list(inputs)\n"
           "RuntimeError: ACL stream synchronize failed.\n"
           "EI9999: Inner Error!\n"
           "EI9999: 2025-03-02-07:15:41.022.118  The error from device(chipId:5, dieId:0), serial number is 2, "
           "hccl fftsplus task timeout occurred during task execution, stream_id:3, sq_id:3, task_id:1204, "
           "stuck notify num:1, timeout:30min(default).[FUNC:ProcessStarsCoreErrorInfo][FILE:device_error_proc.cc]"
           "[LINE:1321]\n"
           "        TraceBack (most recent call last):\n")
    assert capture_findings(tmp_path, log) == {("collective_stalled", "GPU 5 (host not in the log)"): "critical"}
    failed_call = ("EI9999: 2025-03-02-07:15:41.022.118  call hcclCommInitRootInfo failed.\n")
    assert capture_findings(tmp_path, failed_call) != {("collective_stalled", "host and GPU not in the log"): "critical"}


_ROCM = """========================ROCm System Management Interface========================
================================= Concise Info =================================
{errors}GPU  Temp   AvgPwr  SCLK     MCLK     Fan     Perf  PwrCap  VRAM%  GPU%
0    {temp}  {power}  {sclk}  {mclk}  21.96%  {perf}  250.0W  {vram}  {gpu}
1    41.0c  35.0W   852Mhz   167Mhz   21.96%  auto  250.0W    0%   0%
================================================================================
============================= End of ROCm SMI Log ==============================
"""


def test_a_rocm_smi_row_the_tool_could_not_read_beside_its_error_is_the_tools_warning(tmp_path: Path) -> None:
    errors = ("ERROR: 15 GPU[0]: power: Data (usually from reading a file) was not of the type that was expected\n"
              "WARNING:  One or more commands failed\n")
    hung = _ROCM.format(errors=errors, temp="N/A  ", power="N/A   ", sclk="None   ", mclk="None   ", perf="unknown",
                        vram="0%   ", gpu="0%")
    assert capture_findings(tmp_path, hung) == {("module_reported_warning", "GPU[0]"): "warn"}
    healthy = _ROCM.format(errors="", temp="40.0c", power="34.0W ", sclk="852Mhz ", mclk="167Mhz ", perf="auto",
                           vram="0%   ", gpu="0%")
    assert capture_findings(tmp_path, healthy) == {}
    no_error = _ROCM.format(errors="", temp="N/A  ", power="N/A   ", sclk="None   ", mclk="None   ", perf="unknown",
                            vram="0%   ", gpu="0%")
    assert capture_findings(tmp_path, no_error) == {}  # readings not taken, the tool says no error: not judged


def _models(tmp_path: Path, text: str) -> list[tuple[str, str]]:
    return [(m["model"], m["bus_id"]) for m in capture_json(tmp_path, text, "inventory")["modules"]]  # type: ignore[attr-defined]


def test_the_module_a_program_says_it_runs_on_is_listed_where_nothing_else_lists_one(tmp_path: Path) -> None:
    julia = ("INFO: Testing using device Tesla P100-PCIE-16GB\n"
             "  CUDA error: uncorrectable ECC error encountered (code #214, ERROR_ECC_UNCORRECTABLE)\n")
    assert [m for m, _ in _models(tmp_path, julia)] == ["Tesla P100-PCIE-16GB"]
    tf = ("2025-01-09 10:11:12.345678: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1613] Created device "
          "/job:localhost/replica:0/task:0/device:GPU:0 with 14791 MB memory:  -> device: 0, name: Tesla T4, "
          "pci bus id: 0000:00:04.0, compute capability: 7.5\n"
          "RuntimeError: CUDA error: an illegal memory access was encountered\n")
    assert _models(tmp_path, tf) == [("Tesla T4", "0000:00:04.0")]  # TensorFlow 2.5 on
    assert _models(tmp_path, tf.replace("-> device", "-> physical GPU (device").replace("7.5\n", "7.5)\n")) == [
        ("Tesla T4", "0000:00:04.0")]
