"""Windows' own records of a GPU fault (issue 46, WIN): the bug checks as WinDbg, WhoCrashed, BlueScreenView, the WER
and Kernel-Power events print them (captures/windows_bugcheck.py), WHEA-Logger's hardware error records
(captures/whea.py), Device Manager's problem codes as pnputil, Get-PnpDevice and the device's Properties show them
(captures/windows_devices.py), and the display drivers' records in the renderings the first reader missed (nvlddmkm's
'Resetting TDR occurred on GPUID', Get-WinEvent's table, the TDR notice, AMD's driver timeout). The texts are written
here in each tool's format."""

from __future__ import annotations

import pytest

from gpuvet.captures import whea, windows
from gpuvet.captures.text import clean

NO_BUS = "bus id not in the log"


def _events(text: str) -> list[tuple[str, str]]:
    return [(e.kind, e.module) for e in windows.parse(clean(text).lines).events]


ANALYZE_119 = """0: kd> !analyze -v
*******************************************************************************
*                        Bugcheck Analysis                                    *
*******************************************************************************

VIDEO_SCHEDULER_INTERNAL_ERROR (119)
The video scheduler has detected that fatal violation has occurred. This resulted
in a condition that video scheduler can no longer progress. Any other values after
parameter 1 must be individually examined according to the subtype.
Arguments:
Arg1: 0000000000000002, The driver failed upon the submission of a command.
Arg2: ffffffffc000000d

BUGCHECK_CODE:  119

MODULE_NAME: watchdog

IMAGE_NAME:  watchdog.sys

FAILURE_BUCKET_ID:  0x119_2_DRIVER_FAILED_SUBMIT_COMMAND_nvlddmkm!unknown_function
"""
WHOCRASHED = """On Sat 14/03/2026 21:12:41 your computer crashed or a problem was reported
crash dump file: C:\\WINDOWS\\Minidump\\031426-9843-01.dmp
This was probably caused by the following module: nvlddmkm.sys (nvlddmkm+0x1A2B3C)
Bugcheck code: 0x3B (0xC0000005, 0xFFFFF8047C2A1B3C, 0xFFFFB50C1B9AD010, 0x0)
Error: SYSTEM_SERVICE_EXCEPTION
file path: C:\\WINDOWS\\System32\\DriverStore\\FileRepository\\nv_dispi.inf_amd64\\nvlddmkm.sys
product: NVIDIA Windows Kernel Mode Driver, Version 546.01

On Fri 13/03/2026 18:02:11 your computer crashed or a problem was reported
crash dump file: C:\\WINDOWS\\Minidump\\031326-7421-01.dmp
This was probably caused by the following module: ntoskrnl.exe (nt+0x3F8A20)
Bugcheck code: 0x1A (0x41792, 0xFFFF8A8000012345, 0x1, 0x0)
Error: MEMORY_MANAGEMENT
"""
BLUESCREENVIEW = """==================================================
Dump File         : 031426-9843-01.dmp
Crash Time        : 3/14/2026 9:12:41 PM
Bug Check String  : PAGE_FAULT_IN_NONPAGED_AREA
Bug Check Code    : 0x00000050
Parameter 1       : ffffd68b8a3b7000
Caused By Driver  : amdkmdag.sys
Caused By Address : amdkmdag.sys+1a2b3c
File Version      : 31.0.24027.1012
==================================================
"""
KERNEL_POWER = """Log Name:      System
Source:        Microsoft-Windows-Kernel-Power
Event ID:      41
Level:         Critical
Description:
The system has rebooted without cleanly shutting down first. This error could be caused if the system stopped \
responding, crashed, or lost power unexpectedly.
Event Xml:
  <EventData>
    <Data Name="BugcheckCode">278</Data>
    <Data Name="BugcheckParameter1">0xffffb50c1b9ad010</Data>
  </EventData>
"""
WER_124 = (
    "The computer has rebooted from a bugcheck.  The bugcheck was: 0x00000124 (0x0000000000000004, "
    "0xffffb50c1b9ad028, 0x0000000000000000, 0x0000000000000000). A dump was saved in: C:\\WINDOWS\\MEMORY.DMP.\n"
)


def test_a_video_scheduler_bug_check_is_the_display_driver_crashing_however_the_analysis_names_its_image() -> None:
    # the image is Microsoft's watchdog.sys; the one display driver the text names (the bucket's nvlddmkm) owns it
    assert _events(ANALYZE_119) == [("win_video_crash", f"an NVIDIA module (nvlddmkm), {NO_BUS}")]


def test_whocrashed_a_crash_in_nvlddmkm_is_the_gpus_and_one_in_ntoskrnl_is_not() -> None:
    got = windows.parse(clean(WHOCRASHED).lines)
    assert [(e.kind, e.module) for e in got.events] == [("win_driver_crash", f"an NVIDIA module (nvlddmkm), {NO_BUS}")]
    assert "NVIDIA Windows Kernel Mode Driver" not in got.events[0].text and "0x3B" in got.events[0].text
    assert any("MEMORY_MANAGEMENT" in n and "no display driver" in n for n in got.notes)


def test_bluescreenview_names_the_amd_driver_and_its_version() -> None:
    got = windows.parse(clean(BLUESCREENVIEW).lines)
    assert [(e.kind, e.module, e.count) for e in got.events] == [
        ("win_driver_crash", f"an AMD module (amdkmdag), {NO_BUS}", 1)
    ]
    assert "amdkmdag.sys 31.0.24027.1012" in got.events[0].text


def test_kernel_power_41_gives_its_bugcheck_code_in_decimal() -> None:
    assert _events(KERNEL_POWER) == [("win_tdr_failed", f"a GPU (display driver not named), {NO_BUS}")]  # 278: 0x116


def test_whea_uncorrectable_bug_check_is_a_pcie_fatal_error_only_from_a_pcie_source() -> None:
    assert _events(WER_124) == [("win_whea_pcie", f"a PCIe device, {NO_BUS}")]
    machine_check = WER_124.replace("(0x0000000000000004,", "(0x0000000000000000,")
    got = windows.parse(clean(machine_check).lines)
    assert got.events == [] and any("machine check" in n for n in got.notes) and got.claimed


WHEA_17_WIN10 = """Log Name:      System
Source:        Microsoft-Windows-WHEA-Logger
Event ID:      17
Level:         Warning
Description:
A corrected hardware error has occurred.

Component: PCI Express Root Port
Error Source: Advanced Error Reporting (PCI Express)

Primary Bus:Device:Function: 0x0:0x1:0x1
Secondary Bus:Device:Function: 0x1:0x0:0x0
Primary Device Name:PCI\\VEN_1022&DEV_1483&SUBSYS_14531022&REV_00
Secondary Device Name:PCI\\VEN_10DE&DEV_2684&SUBSYS_16F310DE&REV_A1
"""
WHEA_20_WIN7 = """A fatal hardware error has occurred.

Component: PCI Express Endpoint
Error Source: Advanced Error Reporting (PCI Express)

Bus:Device:Function: 0x3:0x0:0x0
Vendor ID:Device ID: 0x1002:0x73BF
Class Code: 0x30000
"""
WHEA_18_CPU = """A fatal hardware error has occurred.

Reported by component: Processor Core
Error Source: Machine Check Exception
Error Type: Cache Hierarchy Error
Processor APIC ID: 12
"""


def test_whea_17_names_the_gpu_below_the_root_port_as_the_errors_device() -> None:
    got = whea.parse(clean(WHEA_17_WIN10).lines)
    gpu, port = got.devices["0000:01:00.0"], got.devices["0000:00:01.1"]
    assert (gpu.vendor, gpu.correctable, gpu.uncorrectable) == ("10de", 1, 0) and got.gpu("0000:01:00.0")
    assert (port.driver, port.vendor, port.sources, port.correctable) == ("pcieport", "1022", ["0000:01:00.0"], 0)


def test_whea_fatal_endpoint_record_is_a_fatal_error_of_that_gpu() -> None:
    got = whea.parse(clean(WHEA_20_WIN7).lines)
    d = got.devices["0000:03:00.0"]
    assert (d.vendor, d.uncorrectable, d.fatal) == ("1002", 1, 1) and got.gpu("0000:03:00.0")


def test_a_machine_check_record_is_the_hosts_note_never_a_device() -> None:
    got = whea.parse(clean(WHEA_18_CPU).lines)
    assert got.devices == {} and len(got.claimed) == 5
    assert any("Processor Core" in n and "not of a GPU" in n for n in got.notes)


PNPUTIL = """Microsoft PnP Utility

Instance ID:                PCI\\VEN_10DE&DEV_2504&SUBSYS_397D1462&REV_A1\\4&2a3b5c9d&0&0008
Device Description:         NVIDIA GeForce RTX 3060
Class Name:                 Display
Status:                     Problem
Problem Code:               43 (0x2B) [CM_PROB_FAILED_POST_START]
Driver Name:                oem42.inf
"""
PNPDEVICE = """Name                        : NVIDIA GeForce RTX 3060
Status                      : Error
ConfigManagerErrorCode      : CM_PROB_FAILED_ADD
Present                     : True
Problem                     : CM_PROB_FAILED_ADD
"""
PROPERTIES = """NVIDIA GeForce RTX 3060 Properties
Device type:\tDisplay adapters
Location:\tPCI bus 1, device 0, function 0
Device status
Windows cannot verify the digital signature for the drivers required for this device. (Code 52)
"""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (PNPUTIL, [("win_code_43", f"NVIDIA GeForce RTX 3060, {NO_BUS}")]),
        (PNPDEVICE, [("win_code_31", f"NVIDIA GeForce RTX 3060, {NO_BUS}")]),  # said twice in its block: one
        (PROPERTIES, [("win_code_52", "0000:01:00.0")]),  # Device Manager's Location gives the bus id
        ("This device cannot start. (Code 10)\n", [("win_code_10", f"a GPU, {NO_BUS}")]),
    ],
)
def test_device_managers_problem_codes_in_each_tools_form(text: str, expected: list[tuple[str, str]]) -> None:
    assert _events(text) == expected


def test_a_disabled_adapter_is_a_note_not_a_fault() -> None:
    got = windows.parse(clean("Device status\nThis device is disabled. (Code 22)\n").lines)
    assert got.events == [] and any("disabled" in n for n in got.notes) and got.claimed


NVLDDMKM_153 = """Log Name:      System
Source:        nvlddmkm
Event ID:      153
Level:         Error
Description:
The description for Event ID 153 from source nvlddmkm cannot be found.

The following information was included with the event:

\\Device\\Video3
Resetting TDR occurred on GPUID:100
"""
TABLE = """   ProviderName: nvlddmkm

TimeCreated                      Id LevelDisplayName Message
-----------                      -- ---------------- -------
3/14/2026 9:12:41 PM            153 Error            The description for Event ID '153' in Source 'nvlddmkm' canno...
"""
NOTICE = """Display driver stopped responding and has recovered
Display driver NVIDIA Windows Kernel Mode Driver, Version 552.22 stopped responding and has successfully recovered.
"""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (NVLDDMKM_153, [("win_tdr", "0000:01:00.0")]),  # GPUID 100: bus 1, device 0; the record is one TDR
        (TABLE, [("win_driver_error", f"an NVIDIA module (nvlddmkm), {NO_BUS}")]),  # a row its console width cut
        (NOTICE, [("win_tdr", f"an NVIDIA module (nvlddmkm), {NO_BUS}")]),  # the notice's title and body: one TDR
        (
            "AMD Software has detected a driver timeout on your system.\n",
            [("win_tdr", f"an AMD module (amdkmdag), {NO_BUS}")],
        ),
        (
            "D3D12 device removed, reason: DXGI_ERROR_DRIVER_INTERNAL_ERROR (0x887A0020)\n",
            [("win_driver_error", f"a GPU (display driver not named), {NO_BUS}")],
        ),
    ],
)
def test_the_display_drivers_records_in_more_renderings(text: str, expected: list[tuple[str, str]]) -> None:
    assert _events(text) == expected


def test_atikmdag_52236_is_logged_on_healthy_machines() -> None:
    text = (
        NVLDDMKM_153.replace("nvlddmkm", "atikmdag")
        .replace("153", "52236")
        .replace("\\Device\\Video3\nResetting TDR occurred on GPUID:100", "CPLIB :: General - Invalid Parameter")
    )
    got = windows.parse(clean(text).lines)
    assert got.events == [] and any("healthy machines" in n for n in got.notes)


def test_gpuid_is_the_rm_gpu_id() -> None:
    assert [windows.gpuid_bus(g) for g in ("100", "2d00", "10a00")] == ["0000:01:00.0", "0000:2D:00.0", "0001:0A:00.0"]
