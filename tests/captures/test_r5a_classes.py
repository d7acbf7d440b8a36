"""Issue 46 (R5A): amdgpu's SMU messaging and SR-IOV mailbox (drivers/gpu/drm/amd/pm/swsmu/smu_cmn.c,
amdgpu_smu.c, powerplay's smu7 manager, amdgpu/mxgpu_ai.c), a page fault of the module's own firmware (gmc_v9_0.c's
'Faulty UTCL2 client ID: MP0'), HIP's build without the GPU's target (rocclr devprogram.cpp) and ROCm's tools
finding no GPU in a toolbox container: each on its module at its severity, the healthy forms clear. Lines
written in the drivers' and runtimes' formats."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import capture_findings

_BUS = "amdgpu 0000:0a:00.0: amdgpu: "


def test_mailbox_loop_is_the_modules_firmware_not_answering(tmp_path: Path) -> None:
    text = "".join(f"[  61.{i:06d}] {_BUS}trn=2 ACK should not assert! wait again !\n" for i in range(6))
    assert capture_findings(tmp_path, text) == {("module_firmware_unresponsive", "0000:0A:00.0"): "warn"}


def test_smu_message_without_answer_is_a_warn_on_its_module(tmp_path: Path) -> None:
    text = (
        f"[ 301.200000] {_BUS}SMU: I'm not done with your previous command: SMN_C2PMSG_66:0x0000000E "
        "SMN_C2PMSG_82:0x00000000\n"
        f"[ 301.300000] {_BUS}SMU: No response msg_reg: 14 resp_reg: 0\n"
    )
    assert capture_findings(tmp_path, text) == {("module_firmware_unresponsive", "0000:0A:00.0"): "warn"}


def test_smu_that_fails_the_bring_up_is_an_init_failure(tmp_path: Path) -> None:
    text = (
        "[   10.116367] amdgpu 0000:0a:00.0: SMU: No response msg_reg: 6 resp_reg: 0\n"
        "[   10.116374] amdgpu 0000:0a:00.0: Failed to enable requested dpm features!\n"
        "[   10.116375] amdgpu 0000:0a:00.0: Failed to setup smc hw!\n"
    )
    found = capture_findings(tmp_path, text)
    assert found[("module_init_failed", "0000:0A:00.0")] == "critical"
    assert set(found) <= {("module_init_failed", "0000:0A:00.0"), ("module_firmware_unresponsive", "0000:0A:00.0")}


def test_powerplay_messages_with_the_driver_prefix(tmp_path: Path) -> None:
    text = f"[    3.100000] {_BUS}[AVFS] Something is broken. See log!\n"
    assert capture_findings(tmp_path, text) == {("module_firmware_unresponsive", "0000:0A:00.0"): "warn"}


def test_firmware_client_page_fault_is_not_a_process(tmp_path: Path) -> None:
    lines = [
        f"Nov 03 20:31:31 host kernel: {_BUS}[mmhub] page fault (src_id:0 ring:153 vmid:0 pasid:0)",
        f"Nov 03 20:31:31 host kernel: {_BUS}  in page starting at address 0x0000000000000000 from client 18",
        f"Nov 03 20:31:31 host kernel: {_BUS}MMVM_L2_PROTECTION_FAULT_STATUS:0x00000D32",
        f"Nov 03 20:31:31 host kernel: {_BUS}         Faulty UTCL2 client ID: MP0 (0x6)",
    ]
    assert capture_findings(tmp_path, "\n".join(lines) + "\n") == {("module_firmware_page_fault", "0000:0A:00.0"): "warn"}


def test_a_process_page_fault_stays_the_processs(tmp_path: Path) -> None:
    lines = [
        f"[ 812.1] {_BUS}[gfxhub] page fault (src_id:0 ring:24 vmid:8 pasid:32770)",
        f"[ 812.1] {_BUS} Process python3 pid 4242 thread python3 pid 4242",
        f"[ 812.1] {_BUS}         Faulty UTCL2 client ID: TCP (0x8)",
    ]
    assert capture_findings(tmp_path, "\n".join(lines) + "\n") == {("module_page_fault", "0000:0A:00.0"): "warn"}


def test_hip_program_built_for_another_target_is_info(tmp_path: Path) -> None:
    lines = [
        ":3:hip_module.cpp           :58  : 200571623936d us:   hipModuleLoadData ( 0x1530be577e18, 0x1530be554400 )",
        ":1:devprogram.cpp           :1838: 200571714934d us:  Error: The program ISA amdgcn-amd-amdhsa--gfx1100 is "
        "not compatible with the device ISA amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-",
        "Error: create kernel metadata map using COMgr",
        "Error: Cannot create kernels.",
        "RuntimeError: HIP error: hipErrorNoBinaryForGpu",
    ]
    assert capture_findings(tmp_path, "\n".join(lines) + "\n") == {("application_build_lacks_target", None): "info"}


def test_amd_smi_finding_no_gpu_in_a_toolbox_is_the_containers_access(tmp_path: Path) -> None:
    text = (
        "Running the toolbox images on Fedora 43:\n"
        "ERROR:root:Unable to detect any GPU devices, check amdgpu version and module status (sudo modprobe amdgpu)\n"
        "RuntimeError: No HIP GPUs are available\n"
    )
    assert capture_findings(tmp_path, text) == {("container_gpu_access", None): "warn"}


def test_healthy_smu_lines_stay_clear(tmp_path: Path) -> None:
    lines = [
        f"[    4.1] {_BUS}SMU is initialized successfully!",
        f"[    4.1] {_BUS}smu driver if version = 0x0000000e, smu fw if version = 0x0000000e, smu fw program = 0",
        f"[    4.2] {_BUS}SMU is resumed successfully!",
    ]
    assert not {k: s for k, s in capture_findings(tmp_path, "\n".join(lines) + "\n").items() if s != "info"}


def test_xpu_manager_service_not_ready_is_the_driver_stacks_state(tmp_path: Path) -> None:
    # intel/xpumanager's CLI when xpumd is not ready (its Level Zero init, or the daemon): as xpu-smi's Level Zero error
    text = "$ xpumcli -v\nError: XPUM Service Status Error.\n"
    assert capture_findings(tmp_path, text) == {("api_reports_driver_state", None): "warn"}
    healthy = "$ xpu-smi -v\nCLI:\n    Version: 1.2.13.20230704\n    Build ID: 7a0d1a1c\n"
    assert not {k: s for k, s in capture_findings(tmp_path, healthy).items() if s != "info"}


def test_bare_powerplay_lines_of_a_drm_kmod_console_read_as_the_prefixed_ones(tmp_path: Path) -> None:
    from gpuvet.captures.kernel import AMD_NO_BUS

    text = (
        "[drm:amdgpu_ucode_print_smc_hdr] ucode_start_addr: 131072\n"
        "[AVFS] Something is broken. See log!\n"
        " failed to send message 254 ret is 0 \n\n"
        " failed to send pre message 14a ret is 0 \n"
    )
    assert capture_findings(tmp_path, text) == {("module_needs_reset", AMD_NO_BUS): "critical"}
    other = "[    2.000000] nvidia 0000:01:00.0: enabling device (0000 -> 0003)\n failed to send message 254 ret is 0 \n"
    assert not any("AMD" in (m or "") for _, m in capture_findings(tmp_path, other))
