"""doctor on Windows' and WSL's captures (issue 46, captures/windows.py): a TDR and a display driver's error event
are warn findings on the device the event names; a failed TDR (bug check 0x116) is critical; NVML blocked inside
WSL is no GPU visible there; WSL's dxg probing, a dxdiag listing and Windows' nvidia-smi table of a healthy
machine give no finding at warn or above. The texts are written here in each tool's format."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.helpers import run

EVENT_153 = """Log Name:      System
Source:        nvlddmkm
Date:          11/2/2025 8:40:13 PM
Event ID:      153
Level:         Error
Description:
The description for Event ID 153 from source nvlddmkm cannot be found.

The following information was included with the event:

\\Device\\Video3
Error occurred on GPUID: 100
"""
TDR = """Event ID:      4101
Source:        Display
Description:
Display driver nvlddmkm stopped responding and has successfully recovered.
"""
TDR_FAILED = """Stop code: VIDEO_TDR_FAILURE
What failed: nvlddmkm.sys
"""
BLOCKED = "$ nvidia-smi\nFailed to initialize NVML: GPU access blocked by the operating system\n"
DXG = ("[    1.102311] misc dxg: dxgk: dxgkio_is_feature_enabled: Ioctl failed: -22\n"
       "[    1.104517] misc dxg: dxgk: dxgkio_query_adapter_info: Ioctl failed: -22\n"
       "[    1.105002] misc dxg: dxgk: dxgkio_query_adapter_info: Ioctl failed: -2\n")
DXDIAG = """           Card name: NVIDIA GeForce RTX 3060
        Manufacturer: NVIDIA
    Dedicated Memory: 12115 MB
      Driver Version: 32.0.15.6603
        Driver Model: WDDM 3.1
"""


def _doctor(tmp_path: Path, text: str) -> list[tuple[str, str, str | None]]:
    path = tmp_path / "capture.txt"
    path.write_text(text)
    code, out, err = run(["doctor", "--from", str(path), "--json"])
    assert code in (0, 1), err
    return [(f["cause"], f["severity"], f.get("module")) for f in json.loads(out)["findings"]]


def test_nvlddmkm_error_event_is_a_warn_on_the_bus_its_gpuid_gives(tmp_path: Path) -> None:
    assert _doctor(tmp_path, EVENT_153) == [("module_driver_error_event", "warn", "0000:01:00.0")]


def test_a_tdr_is_a_warn_on_the_drivers_module(tmp_path: Path) -> None:
    assert _doctor(tmp_path, TDR) == [("module_tdr_recovered", "warn",
                                       "an NVIDIA module (nvlddmkm), bus id not in the log")]


def test_a_failed_tdr_is_critical(tmp_path: Path) -> None:
    assert _doctor(tmp_path, TDR_FAILED) == [("module_hung_reset", "critical",
                                              "an NVIDIA module (nvlddmkm), bus id not in the log")]


def test_nvml_blocked_inside_wsl_is_no_gpu_visible(tmp_path: Path) -> None:
    assert [(c, s) for c, s, _ in _doctor(tmp_path, BLOCKED)] == [("no_modules_visible", "critical")]


def test_healthy_wsl_dxg_lines_and_a_dxdiag_listing_give_no_finding(tmp_path: Path) -> None:
    assert _doctor(tmp_path, DXG) == []
    assert _doctor(tmp_path, DXDIAG) == []


def test_inventory_lists_the_dxdiag_adapter_with_its_release(tmp_path: Path) -> None:
    path = tmp_path / "dxdiag.txt"
    path.write_text(DXDIAG)
    code, out, err = run(["inventory", "--from", str(path), "--json"])
    assert code == 0, err
    got = json.loads(out)
    assert [m["model"] for m in got["modules"]] == ["NVIDIA GeForce RTX 3060"]
    assert got["software"]["driver_version"] == "566.03"


def test_cuda_version_err_is_a_warn_on_the_cuda_library(tmp_path: Path) -> None:
    from tests.captures.test_capture_windows import CUDA_ERR

    assert [(c, s) for c, s, _ in _doctor(tmp_path, CUDA_ERR)] == [("cuda_library_unreadable", "warn")]


def test_code_43_is_the_adapter_not_coming_up(tmp_path: Path) -> None:
    text = DXDIAG + "Device Problem Code: Code 43\n"
    assert _doctor(tmp_path, text) == [("module_init_failed", "critical",
                                        "NVIDIA GeForce RTX 3060, bus id not in the log")]


def test_a_bug_check_in_the_display_driver_is_critical_on_its_module(tmp_path: Path) -> None:
    from tests.captures.test_capture_windows_records import BLUESCREENVIEW

    assert _doctor(tmp_path, BLUESCREENVIEW) == [("display_driver_crashed", "critical",
                                                  "an AMD module (amdkmdag), bus id not in the log")]


def test_whea_corrected_pcie_error_is_the_aer_warn_on_the_gpu_it_names(tmp_path: Path) -> None:
    from tests.captures.test_capture_windows_records import WHEA_17_WIN10

    assert _doctor(tmp_path, WHEA_17_WIN10) == [("pcie_aer_errors", "warn", "0000:01:00.0")]


def test_whea_fatal_pcie_error_is_critical_and_a_machine_check_no_gpus(tmp_path: Path) -> None:
    from tests.captures.test_capture_windows_records import WHEA_18_CPU, WHEA_20_WIN7

    assert _doctor(tmp_path, WHEA_20_WIN7) == [("pcie_aer_fatal", "critical", "0000:03:00.0")]
    assert _doctor(tmp_path, WHEA_18_CPU) == []  # read (exit 0 or 1, not 2), the host's, no finding


def test_whea_uncorrectable_bug_check_from_pcie_is_a_fatal_pcie_error(tmp_path: Path) -> None:
    from tests.captures.test_capture_windows_records import WER_124

    assert _doctor(tmp_path, WER_124) == [("pcie_aer_fatal", "critical", "a PCIe device, bus id not in the log")]


def test_a_quoted_device_manager_code_is_a_lead_at_warn(tmp_path: Path) -> None:
    text = 'My RTX 3060 has a yellow triangle in Device Manager and says "This device cannot start. (Code 10)"\n'
    assert _doctor(tmp_path, text) == [("module_init_failed", "warn", "RTX 3060, bus id not in the log")]
