"""Windows' event log and WSL's lines (captures/windows.py, issue 46): each rendering of a display driver's event
(Event Viewer's text, its XML, Get-WinEvent, wevtutil), TDRs, live kernel events and the TDR bug check read as
the driver's messages on the device they name; WSL's dxg probing read and never a fault; dxdiag's and
Win32_VideoController's adapters listed; Windows' nvidia-smi table (CRLF, PowerShell prompt) read with its
driver model. The texts are written here in each tool's format."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuvet.captures import windows
from gpuvet.captures.read import read
from gpuvet.captures.text import clean

VIEWER_153 = """Log Name:      System
Source:        nvlddmkm
Date:          3/14/2025 9:12:41 PM
Event ID:      153
Task Category: None
Level:         Error
Keywords:      Classic
User:          N/A
Computer:      DESKTOP-7Q2
Description:
The description for Event ID 153 from source nvlddmkm cannot be found. Either the component that raises this \
event is not installed on your local computer or the installation is corrupted.

The following information was included with the event:

\\Device\\Video4
Error occurred on GPUID: 2d00
"""
XML_13 = """<Event xmlns="http://schemas.microsoft.com/win/2004/08/events/event">
  <System>
    <Provider Name="nvlddmkm" />
    <EventID Qualifiers="49322">13</EventID>
    <Level>2</Level>
    <TimeCreated SystemTime="2024-02-02T10:01:02.5Z" />
  </System>
  <EventData>
    <Data>\\Device\\Video3</Data>
    <Data>Graphics Exception: ESR 0x405840=0x82000200 0x405844=0x0</Data>
  </EventData>
</Event>
"""
XML_4101 = """<Event xmlns="http://schemas.microsoft.com/win/2004/08/events/event">
  <System>
    <Provider Name="Display" />
    <EventID Qualifiers="0">4101</EventID>
    <Level>3</Level>
  </System>
  <EventData>
    <Data>nvlddmkm</Data>
    <Data />
  </EventData>
</Event>
"""
GET_WINEVENT = """PS C:\\> Get-WinEvent -FilterHashtable @{LogName='System'; ProviderName='nvlddmkm','Display'} -MaxEvents 3

   ProviderName: nvlddmkm

TimeCreated                      Id LevelDisplayName Message
-----------                      -- ---------------- -------
1/9/2026 11:02:17 PM            153 Error            The description for Event ID '153' in Source 'nvlddmkm' cannot be found.
1/9/2026 10:58:03 PM            153 Error            The description for Event ID '153' in Source 'nvlddmkm' cannot be found.

   ProviderName: Display

TimeCreated                      Id LevelDisplayName Message
-----------                      -- ---------------- -------
1/9/2026 11:02:19 PM 4101 Warning Display driver nvlddmkm stopped responding and has successfully recovered.
"""
RELIABILITY = """Description
A problem with your hardware caused Windows to stop working correctly.

Problem signature
Problem Event Name:\tLiveKernelEvent
Code:\t141
Parameter 1:\tffffd40f9e3b2010
Parameter 2:\tfffff8054c7a1a40
OS version:\t10_0_22631
Extra information about the problem
Bucket ID:\tLKD_0x141_Tdr:6_IMAGE_nvlddmkm.sys_Ampere_3D
"""
BUGCHECK = """The computer has rebooted from a bugcheck.  The bugcheck was: 0x00000116 (0xffffb50c1b9ad010, \
0xfffff80675e7ad58, 0xffffffffc000009a, 0x0000000000000004). A dump was saved in: C:\\WINDOWS\\Minidump\\011026-9.dmp.
What failed: nvlddmkm.sys
"""
DXG = """$ dmesg | grep dxg
[    0.298811] hv_vmbus: registering driver dxgkrnl
[    1.671332] misc dxg: dxgk: dxgkio_is_feature_enabled: Ioctl failed: -22
[    1.675518] misc dxg: dxgk: dxgkio_query_adapter_info: Ioctl failed: -22
[    1.676100] misc dxg: dxgk: dxgkio_query_adapter_info: Ioctl failed: -2
/sbin/ldconfig.real: /usr/lib/wsl/lib/libcuda.so.1 is not a symbolic link
"""
BLOCKED = """user@box:~$ nvidia-smi
Failed to initialize NVML: GPU access blocked by the operating system
Failed to properly shut down NVML: GPU access blocked by the operating system
"""
DXDIAG = """------------------
Display Devices
------------------
           Card name: NVIDIA GeForce RTX 4070 Ti
        Manufacturer: NVIDIA
           Chip type: NVIDIA GeForce RTX 4070 Ti
            DAC type: Integrated RAMDAC
         Device Type: Full Device (POST)
      Display Memory: 44677 MB
    Dedicated Memory: 12011 MB
       Shared Memory: 32665 MB
      Driver Version: 32.0.15.6094
        Driver Model: WDDM 3.1
           Card name: AMD Radeon(TM) Graphics
        Manufacturer: Advanced Micro Devices, Inc.
    Dedicated Memory: 496 MB
      Driver Version: 31.0.21912.14
        Driver Model: WDDM 3.1
"""
VIDEO_CONTROLLER = """PS C:\\Users\\me> Get-CimInstance Win32_VideoController | Format-List Name,DriverVersion,VideoProcessor

Name           : NVIDIA RTX A4000
DriverVersion  : 31.0.15.3667
VideoProcessor : NVIDIA RTX A4000
"""
SMI_WINDOWS = ("PS C:\\> & 'C:\\Windows\\System32\\nvidia-smi.exe'\r\n"
               "Mon Jan 12 10:14:02 2026\r\n"
               "+-----------------------------------------------------------------------------------------+\r\n"
               "| NVIDIA-SMI 572.16                 Driver Version: 572.16         CUDA Version: 12.8     |\r\n"
               "|-----------------------------------------+------------------------+----------------------+\r\n"
               "| GPU  Name                  Driver-Model | Bus-Id          Disp.A | Volatile Uncorr. ECC |\r\n"
               "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |\r\n"
               "|                                         |                        |               MIG M. |\r\n"
               "|=========================================+========================+======================|\r\n"
               "|   0  NVIDIA GeForce RTX 4090      WDDM  |   00000000:01:00.0  On |                  Off |\r\n"
               "|  0%   38C    P8             21W /  450W |    1507MiB /  24564MiB |      3%      Default |\r\n"
               "|                                         |                        |                  N/A |\r\n"
               "+-----------------------------------------+------------------------+----------------------+\r\n")


def _parse(text: str) -> windows.KernelParse:
    return windows.parse(clean(text).lines)


def test_event_viewer_text_of_nvlddmkm_153_is_a_driver_error_on_the_bus_its_gpuid_gives() -> None:
    got = _parse(VIEWER_153)  # GPUID 2d00: NVIDIA's RM gpu id, bus << 8 | device
    assert [(e.kind, e.module) for e in got.events] == [("win_driver_error", "0000:2D:00.0")]
    assert "Error occurred on GPUID: 2d00" in got.events[0].text and not got.xids


def test_event_13_graphics_exception_is_read_as_xid_13_and_its_id_is_said_to_be_no_xid_elsewhere() -> None:
    got = _parse(XML_13)
    assert [(x.bus_id, x.code) for x in got.xids] == [("\\Device\\Video3 (nvlddmkm)", 13)]
    assert not got.events and any("not Xid numbers" in n for n in got.notes)


def test_display_4101_as_xml_and_as_get_winevent_is_a_tdr_of_the_named_driver() -> None:
    xml = _parse(XML_4101)
    assert [(e.kind, e.module) for e in xml.events] == [("win_tdr", "an NVIDIA module (nvlddmkm), bus id not in the log")]
    table = _parse(GET_WINEVENT)
    kinds = sorted((e.kind, e.count) for e in table.events)
    assert kinds == [("win_driver_error", 2), ("win_tdr", 1)]


def test_live_kernel_event_141_and_the_tdr_bug_check() -> None:
    live = _parse(RELIABILITY)
    assert [(e.kind, e.module) for e in live.events] == [("win_tdr", "an NVIDIA module (nvlddmkm), bus id not in the log")]
    failed = _parse(BUGCHECK)
    assert [e.kind for e in failed.events] == ["win_tdr_failed"]


def test_wsl_dxg_probing_is_read_and_is_no_fault() -> None:
    got = _parse(DXG)
    assert not got.events and not got.xids
    assert len(got.claimed) == 5  # the four dxg lines and ldconfig's
    assert any("healthy machines" in n for n in got.notes) and any("symbolic link" in n for n in got.notes)


def test_nvml_blocked_inside_wsl_is_one_event_said_twice() -> None:
    got = _parse(BLOCKED)
    assert [(e.kind, e.count) for e in got.events] == [("wsl_gpu_blocked", 1)]
    assert len(got.claimed) == 2


@pytest.mark.parametrize(("version", "release"), [("31.0.15.2756", "527.56"), ("32.0.15.6094", "560.94"),
                                                  ("30.0.14.7212", "472.12"), ("27.21.14.5671", "456.71"),
                                                  ("552.86", None)])
def test_nvidia_windows_driver_version_gives_its_release(version: str, release: str | None) -> None:
    assert windows.release(version) == release


def test_dxdiag_lists_each_vendors_adapters_with_driver_and_driver_model() -> None:
    lines = clean(DXDIAG).lines
    nvidia = windows.listing(lines)
    assert [(m.product, m.fields.get("Driver Model/Current"), m.fields.get("FB Memory Usage/Total"))
            for m in nvidia.modules] == [("NVIDIA GeForce RTX 4070 Ti", "WDDM", "12011 MiB")]
    assert nvidia.driver == "560.94"
    amd = windows.amd_listing(lines)
    assert [(m.name, m.memory_mib) for m in amd.modules] == [("AMD Radeon(TM) Graphics", 496.0)]
    assert amd.driver == "31.0.21912.14"


def test_win32_videocontroller_list_names_the_adapter() -> None:
    got = windows.listing(clean(VIDEO_CONTROLLER).lines)
    assert [m.product for m in got.modules] == ["NVIDIA RTX A4000"] and got.driver == "536.67"


def test_other_tools_name_lines_are_no_adapter() -> None:
    text = "  Name:                    gfx90a\n  Marketing Name:          AMD Instinct MI210\n  Name: NVIDIA A100\n"
    assert windows.adapters(clean(text).lines) == []


def test_windows_table_with_crlf_and_powershell_prompt_reads_its_driver_model(tmp_path: Path) -> None:
    path = tmp_path / "smi.txt"
    path.write_bytes(SMI_WINDOWS.encode())
    fc = read(str(path))
    assert fc.smi is not None and fc.smi.driver == "572.16"
    assert [(m.product, m.fields.get("Driver Model/Current")) for m in fc.smi.modules] == [
        ("NVIDIA GeForce RTX 4090", "WDDM")]


def test_a_file_of_events_is_read_as_the_windows_log(tmp_path: Path) -> None:
    path = tmp_path / "events.txt"
    path.write_text(VIEWER_153 + "\n" + RELIABILITY)
    fc = read(str(path))
    assert "Windows event log or WSL lines" in fc.kinds
    assert sorted(e.kind for e in fc.kernel.events) == ["win_driver_error", "win_tdr"]


CUDA_ERR = ("Wed Jan 14 09:00:01 2026\n"
            "+---------------------------------------------------------------------------------------+\n"
            "| NVIDIA-SMI 550.54.10              Driver Version: 551.61       CUDA Version: ERR!     |\n"
            "|-----------------------------------------+----------------------+----------------------+\n"
            "| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |\n"
            "| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |\n"
            "|=========================================+======================+======================|\n"
            "|   0  NVIDIA GeForce RTX 4060 ...    On  | 00000000:01:00.0  On |                  N/A |\n"
            "| N/A   45C    P8               3W /  115W |     900MiB /  8188MiB |      1%      Default |\n"
            "+-----------------------------------------+----------------------+----------------------+\n")


def test_cuda_version_err_is_unknown_in_the_table_and_an_event_of_the_cuda_library(tmp_path: Path) -> None:
    path = tmp_path / "smi.txt"
    path.write_text(CUDA_ERR)
    fc = read(str(path))
    assert fc.smi is not None and fc.smi.cuda is None and fc.smi.driver == "551.61"
    assert any("CUDA Version: ERR!" in n for n in fc.smi.notes)
    assert [e.kind for e in fc.kernel.events] == ["smi_cuda_unreadable"]


FORMAT_LIST = """PS C:\\> Get-WinEvent -LogName System -MaxEvents 2 | Format-List

TimeCreated  : 2/3/2026 7:41:09 PM
ProviderName : nvlddmkm
Id           : 153
Message      : The description for Event ID '153' in Source 'nvlddmkm' cannot be found.  The following information \
is part of the event:'\\Device\\Video3', 'Error occurred on GPUID: 100'

TimeCreated  : 2/3/2026 7:40:55 PM
ProviderName : nvlddmkm
Id           : 13
Message      : The description for Event ID '13' in Source 'nvlddmkm' cannot be found.  The following information \
is part of the event:'\\Device\\Video3', 'Graphics SM Warp Exception on (GPC 1, TPC 0, SM 1): Out Of Range Address'
"""
WEVTUTIL = """Event[0]:
  Log Name: System
  Source: nvlddmkm
  Date: 2026-01-05T22:10:41.1120000Z
  Event ID: 14
  Level: Error
  Description:
\\Device\\Video5
0000(2000) 00000000 00000000

Event[1]:
  Log Name: System
  Source: Display
  Event ID: 4101
  Description:
Display driver nvlddmkm stopped responding and has successfully recovered.
"""


def test_get_winevent_format_list_reads_each_record_once() -> None:
    got = _parse(FORMAT_LIST)  # Event 153 ties \\Device\\Video3 to GPUID 100: Event 13 on Video3 is that GPU's
    assert [(e.kind, e.module, e.count) for e in got.events] == [("win_driver_error", "0000:01:00.0", 1)]
    assert [(x.bus_id, x.code) for x in got.xids] == [("0000:01:00.0", 13)]


def test_wevtutil_text_records_keep_their_own_devices() -> None:
    got = _parse(WEVTUTIL)
    assert [(e.kind, e.module) for e in got.events] == [
        ("win_driver_error", "\\Device\\Video5 (nvlddmkm)"),
        ("win_tdr", "an NVIDIA module (nvlddmkm), bus id not in the log")]


@pytest.mark.parametrize("line", [
    "NVIDIA OpenGL Driver: The NVIDIA OpenGL driver lost connection with the display driver due to exceeding the "
    "Windows Time-Out limit and is unable to continue. The application must close. Error code: 3",
    "D3D12 ERROR: Device removed, reason: DXGI_ERROR_DEVICE_HUNG",
    "Fatal error: GetDeviceRemovedReason returned 0x887a0006"])
def test_a_programs_view_of_a_tdr_is_one(line: str) -> None:
    assert [e.kind for e in _parse(line + "\n").events] == ["win_tdr"]


ANALYZE = """0: kd> !analyze -v
*******************************************************************************
*                        Bugcheck Analysis                                    *
*******************************************************************************

VIDEO_TDR_FAILURE (116)
Attempt to reset the display driver and recover from timeout failed.
Arguments:
Arg1: ffffe00123456010, Optional pointer to internal TDR recovery context (TDR_RECOVERY_CONTEXT).
Arg2: fffff80123456789, The pointer into responsible device driver module (e.g. owner tag).
Arg3: ffffffffc000009a, Optional error code (NTSTATUS) of the last failed operation.
Arg4: 0000000000000004, Optional internal context dependent data.

BUGCHECK_CODE:  116

BUGCHECK_P1: ffffe00123456010

PROCESS_NAME:  System

STACK_TEXT:
ffffd000`2a1b0a48 fffff801`2c4f2f5c     : 00000000`00000116 ffffe001`23456010 : nt!KeBugCheckEx
ffffd000`2a1b0a50 fffff801`2c4c2867     : fffff801`23456789 ffffe001`23456010 : dxgkrnl!TdrBugcheckOnTimeout+0xec

IMAGE_NAME:  nvlddmkm.sys

FAILURE_BUCKET_ID:  0x116_IMAGE_nvlddmkm.sys
"""


def test_a_dump_analysis_of_a_failed_tdr_is_one_event_on_the_image_it_names() -> None:
    got = _parse(ANALYZE)
    assert [(e.kind, e.module, e.count) for e in got.events] == [
        ("win_tdr_failed", "an NVIDIA module (nvlddmkm), bus id not in the log", 1)]


@pytest.mark.parametrize(("text", "kind", "module"), [
    ("Device status\nWindows has stopped this device because it has reported problems. (Code 43)\n", "win_code_43",
     "a GPU, bus id not in the log"),
    ("           Card name: NVIDIA GeForce GTX 1070\n      Driver Version: 31.0.15.1694\n"
     "Device Problem Code: Code 43\n", "win_code_43", "NVIDIA GeForce GTX 1070, bus id not in the log"),
    ("Name                    : AMD Radeon RX 6800 XT\nConfigManagerErrorCode  : 12\nDriverVersion           : "
     "31.0.21001.45002\n", "win_code_12", "AMD Radeon RX 6800 XT, bus id not in the log"),
    ("This device cannot find enough free resources that it can use. (Code 12)\n", "win_code_12",
     "a GPU, bus id not in the log")])
def test_device_managers_problem_code_is_read_on_the_adapter(text: str, kind: str, module: str) -> None:
    assert [(e.kind, e.module) for e in _parse(text).events] == [(kind, module)]


def test_a_working_adapters_problem_code_is_none() -> None:
    text = "           Card name: NVIDIA GeForce RTX 3080\nDevice Problem Code: No Problem\nConfigManagerErrorCode : 0\n"
    assert _parse(text).events == []
