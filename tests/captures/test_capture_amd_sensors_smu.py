"""Issue 46 (XR2): an AMD module whose driver or SMU says it is broken, in words written here: a kernel call trace
through amdkfd's hardware-exception path into a GPU reset; powerplay's 'Failed to send message' (the SMU not
answering: read and quoted); rocm-smi -a readings no sensor gives (511 °C, all ones); rocm-smi's 'Expected integer
value from monitor' (a sensor that returned nothing)."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import capture_json


def _severe(tmp_path: Path, text: str) -> list[tuple[str, str, str]]:
    found = capture_json(tmp_path, text)["findings"]
    assert isinstance(found, list)
    return [(f["severity"], f["cause"], str(f.get("module") or "")) for f in found
            if f["severity"] in ("warn", "critical")]


def test_a_trace_through_the_kfd_hardware_exception_is_a_reset(tmp_path: Path) -> None:
    text = ("[ 4410.002211] Workqueue: events kfd_process_hw_exception [amdkfd]\n"
            "[ 4410.002215] Call Trace:\n"
            "[ 4410.002301]  amdgpu_amdkfd_gpu_reset+0x12/0x20 [amdgpu]\n"
            "[ 4410.002306]  kfd_process_hw_exception+0x26/0x30 [amdkfd]\n"
            "[ 4410.002311]  process_one_work+0x1fd/0x3f0\n")
    assert [(s, c) for s, c, _ in _severe(tmp_path, text)] == [("critical", "module_hung_reset")]


def test_a_recovery_frame_alone_in_a_trace_is_a_reset(tmp_path: Path) -> None:
    text = ("[  88.120001] Call Trace:\n[  88.120002]  amdgpu_device_gpu_recover+0x5b1/0x8b0 [amdgpu]\n"
            "[  88.120003]  amdgpu_job_timedout+0x121/0x140 [amdgpu]\n")
    assert [c for _, c, _ in _severe(tmp_path, text)] == ["module_hung_reset"]


def test_powerplay_failing_to_send_an_smu_message_is_read_and_quoted(tmp_path: Path) -> None:
    # R10A: one the SMU refused as not supported (0xfe) is no fault
    for line, want in (("[ 912.5] amdgpu: [powerplay] Failed to send message: 0x5d, ret value: 0x0\n",
                        [("warn", "driver_error_unnamed")]),
                       ("kernel: amdgpu : [powerplay] Failed to send message: 0x41 , ret value : 0x0\n",
                        [("warn", "driver_error_unnamed")]),
                       ("kernel: amdgpu : [powerplay] Failed to send message: 0x41 , ret value : 0xfe\n", [])):
        found = capture_json(tmp_path, line)["findings"]
        assert isinstance(found, list)
        assert [(f["severity"], f["cause"]) for f in found] == want, line
        assert not found or "Failed to send message" in str(found[0]["evidence"]), line


def test_rocm_smi_garbage_readings_are_the_module_not_answering(tmp_path: Path) -> None:
    text = ("========================ROCm System Management Interface========================\n"
            "GPU[0]\t\t: GPU ID: 0x687f\n"
            "GPU[0]\t\t: Temperature: 511.0c\n"
            "GPU[0]\t\t: Unable to determine current clocks. Check dmesg or GPU temperature\n"
            "GPU[0]\t\t: Fan Level: 255 (100.0)%\n"
            "GPU[1]\t\t: GPU ID: 0x687f\n"
            "GPU[1]\t\t: Temperature: 47.0c\n"
            "GPU[1]\t\t: Fan Level: 60 (23.53)%\n"
            "GPU[2]\t\t: GPU ID: 0x687f\n"
            "GPU[2]\t\t: Temperature: 52.0c\n"
            "GPU[2]\t\t: Average Graphics Package Power: 65535.0W\n"
            "==============================End of ROCm SMI Log ==============================\n")
    got = _severe(tmp_path, text)
    assert got == [("critical", "module_unreadable", "GPU[0]"), ("warn", "module_sensors_unreadable", "GPU[2]")]


def test_a_fan_at_full_speed_alone_is_nothing(tmp_path: Path) -> None:
    text = ("GPU[0]\t\t: GPU ID: 0x687f\nGPU[0]\t\t: Temperature: 71.0c\nGPU[0]\t\t: Fan Level: 255 (100.0)%\n")
    assert _severe(tmp_path, text) == []


_TABLE = ("{above}================================= ROCm System Management Interface ==================================\n"
          "=========================================== Concise Info ===========================================\n"
          "GPU  Temp (DieEdge)  AvgPwr  SCLK    MCLK     Fan     Perf  PwrCap  VRAM%  GPU%\n"
          "0    41.0c           88.0W   800Mhz  1000Mhz  21.96%  auto  250.0W    0%   0%\n"
          "1    {temp}           {watts}   800Mhz  1000Mhz  21.96%  auto  250.0W    0%   0%\n"
          "====================================================================================================\n")
_EMPTY = 'Expected integer value from monitor, but got ""\n'


def test_an_empty_monitor_read_is_said_on_the_module_whose_reading_is_missing(tmp_path: Path) -> None:
    text = _TABLE.format(above=_EMPTY * 2, temp="N/A  ", watts="N/A  ")
    assert _severe(tmp_path, text) == [("warn", "module_sensors_unreadable", "GPU[1]")]


def test_an_empty_monitor_read_on_no_module_the_paste_shows_is_still_said(tmp_path: Path) -> None:
    got = _severe(tmp_path, _TABLE.format(above=_EMPTY, temp="40.0c", watts="86.0W"))
    assert got == [("warn", "module_sensors_unreadable", "")]  # no module named: the node's


def test_the_same_table_without_the_message_is_nothing(tmp_path: Path) -> None:
    assert _severe(tmp_path, _TABLE.format(above="", temp="40.0c", watts="86.0W")) == []
