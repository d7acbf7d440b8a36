"""Issue 46, batch S's kernel-log and driver-state classes, each on lines written here: amdgpu's RAS EEPROM
unreachable over the SMU's I2C bus (a healthy board's boot lines), rocm-smi/amd-smi saying the amdgpu module is
not loaded."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.helpers import doctor_capture, found_causes

EEPROM = """\
[    4.118020] amdgpu 0000:0c:00.0: amdgpu: SMU is initialized successfully!
[    4.120511] [drm:smu_v11_0_i2c_xfer [amdgpu]] *ERROR* Received I2C_NAK_7B_ADDR_NOACK !!!
[    4.120640] [drm:smu_v11_0_i2c_xfer [amdgpu]] *ERROR* WriteI2CData() - I2C error occurred :1
[    4.120788] [drm:amdgpu_ras_eeprom_init [amdgpu]] *ERROR* Failed to read EEPROM table header, res:-5
[    4.131002] [drm] Initialized amdgpu 3.40.0 20150101 for 0000:0c:00.0 on minor 0
"""


def test_a_ras_eeprom_the_board_does_not_wire_is_no_fault(capsys: pytest.CaptureFixture[str],
                                                          tmp_path: Path) -> None:
    code, data = doctor_capture(capsys, tmp_path, EEPROM)
    assert code == 0 and not [f for f in data["findings"] if f["severity"] in ("warn", "critical")]


def test_an_amdgpu_error_beside_the_eeprom_lines_is_still_read(capsys: pytest.CaptureFixture[str],
                                                              tmp_path: Path) -> None:
    text = EEPROM + "[    9.500000] [drm:gmc_v9_0_process_interrupt [amdgpu]] *ERROR* SMU mailbox stalled, fatal\n"
    _, data = doctor_capture(capsys, tmp_path, text)
    assert ("driver_error_unnamed", "0000:0C:00.0") in found_causes(data)


@pytest.mark.parametrize("text", [
    "$ rocm-smi\ncat: /sys/module/amdgpu/initstate: No such file or directory\n"
    "ERROR:root:Driver not initialized (amdgpu not found in modules)\n",
    "# amd-smi list\nERROR:root:Unable to get devices, driver not initialized (amdgpu not found in modules)\n",
])
def test_rocm_smi_without_the_amdgpu_module_is_no_module_visible(capsys: pytest.CaptureFixture[str],
                                                                 tmp_path: Path, text: str) -> None:
    _, data = doctor_capture(capsys, tmp_path, text)
    found = {(f["cause"], f["severity"]) for f in data["findings"]}
    assert ("no_modules_visible", "critical") in found
    assert any("amdgpu" in f.get("fix", "") for f in data["findings"])


def _warn_or_worse(data: dict[str, object]) -> set[tuple[str, str, str]]:
    found = data["findings"]
    assert isinstance(found, list)
    return {(f["cause"], f.get("module"), f["severity"]) for f in found if f["severity"] in ("warn", "critical")}


@pytest.mark.parametrize("text", [
    # the driver's dev_printk prefix on AMD-Vi's line (newer kernels)
    "Mar  3 10:12:01 gpu7 kernel: nvidia 0000:41:00.0: AMD-Vi: Event logged [IO_PAGE_FAULT domain=0x000b "
    "address=0xfee00000 flags=0x0030]\n" * 3,
    # an older kernel: the bus id after device=, the GPU named by its driver's own line
    "[   12.000100] nvidia 0000:41:00.0: enabling device (0000 -> 0003)\n"
    "[  700.120000] AMD-Vi: Event logged [IO_PAGE_FAULT device=41:00.0 domain=0x000b address=0x1000 flags=0x0000]\n",
    # Intel VT-d
    "[    3.500000] amdgpu 0000:41:00.0: amdgpu: VRAM: 16368M\n"
    "[  851.002211] DMAR: [DMA Write NO_PASID] Request device [41:00.0] fault addr 0x7f2e0000 [fault reason 0x05] "
    "PTE Write access is not set\n",
])
def test_the_iommu_refusing_a_gpus_dma_is_named_on_that_module(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                                text: str) -> None:
    _, data = doctor_capture(capsys, tmp_path, text)
    assert _warn_or_worse(data) == {("iommu_dma_fault", "0000:41:00.0", "warn")}
    assert "iommu=pt" in next(f["fix"] for f in data["findings"] if f["cause"] == "iommu_dma_fault")


def test_an_iommu_fault_of_another_device_is_not_the_gpus(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    text = ("[   12.000100] nvidia 0000:41:00.0: enabling device (0000 -> 0003)\n"
            "[  700.120000] AMD-Vi: Event logged [IO_PAGE_FAULT device=c1:00.0 domain=0x000b address=0x1000 "
            "flags=0x0000]\n")
    _, data = doctor_capture(capsys, tmp_path, text)
    assert not [c for c, _, _ in _warn_or_worse(data) if c == "iommu_dma_fault"]


HUNG = """\
[Tue Feb  4 09:12:00 2025] INFO: task {task}:4411 blocked for more than 120 seconds.
[Tue Feb  4 09:12:00 2025]       Tainted: P           OE     6.8.0-45-generic #45-Ubuntu
[Tue Feb  4 09:12:00 2025] "echo 0 > /proc/sys/kernel/hung_task_timeout_secs" disables this message.
[Tue Feb  4 09:12:00 2025] Call Trace:
[Tue Feb  4 09:12:00 2025]  <TASK>
[Tue Feb  4 09:12:00 2025]  __schedule+0x27c/0x6b0
[Tue Feb  4 09:12:00 2025]  {frame}
"""
XID = "[Tue Feb  4 09:09:58 2025] NVRM: Xid (PCI:0000:b3:00): 31, pid=9912, name=python3, Ch 00000008\n"


@pytest.mark.parametrize(("text", "module"), [
    (XID + HUNG.format(task="python3", frame="schedule+0x60/0x100"), "0000:B3:00.0"),  # after the driver's error
    (HUNG.format(task="kworker/u8:2", frame="os_acquire_mutex+0x4b/0x60 [nvidia]"), "bus id not in the log"),
    (HUNG.format(task="nvidia-smi", frame="schedule+0x60/0x100"), "bus id not in the log"),
])
def test_a_task_hung_in_the_gpu_driver_is_a_wedged_driver(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                          text: str, module: str) -> None:
    _, data = doctor_capture(capsys, tmp_path, text)
    assert ("module_needs_reset", module, "critical") in _warn_or_worse(data)
    assert "reboot" in next(f["fix"] for f in data["findings"] if f["cause"] == "module_needs_reset")


def test_a_task_hung_elsewhere_is_not_the_gpus(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    text = "[Tue Feb  4 09:00:00 2025] nvidia 0000:b3:00.0: enabling device (0000 -> 0003)\n" + \
        HUNG.format(task="jbd2/sda1-8", frame="jbd2_journal_commit_transaction+0x2a1/0x1a20 [jbd2]")
    _, data = doctor_capture(capsys, tmp_path, text)
    assert not _warn_or_worse(data)


def test_an_iommu_fault_beside_the_drivers_own_fault_is_that_faults_context(capsys: pytest.CaptureFixture[str],
                                                                            tmp_path: Path) -> None:
    text = ("Jan  9 04:10:11 n1 kernel: amdgpu 0000:2a:00.0: amdgpu: ring gfx_0.0.0 timeout, signaled seq=88, "
            "emitted seq=90\n"
            "Jan  9 04:10:11 n1 kernel: amdgpu 0000:2a:00.0: AMD-Vi: Event logged [IO_PAGE_FAULT domain=0x0010 "
            "address=0x1f000 flags=0x0020]\n")
    _, data = doctor_capture(capsys, tmp_path, text)
    assert "iommu_dma_fault" not in {c for c, _, _ in _warn_or_worse(data)}
