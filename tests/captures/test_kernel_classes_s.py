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
