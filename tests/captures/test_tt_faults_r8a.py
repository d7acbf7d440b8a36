"""Issue 46 (R8A), on lines written in Tenstorrent's tools' and driver's own words (captures/tt_faults.py):
tt-smi 2.x's lower-case 'pci link reset on WH devices at pci indices' and luwen's chip init failure without it,
tt-umd's device open and DRAM training timeout, tt-kmd's hwmon init failure and an oops right after its probe, a
tt-smi -s snapshot cut before its end; healthy lines of each stay clear."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import capture_findings, doctor_text

_LOOP = (
    " Starting pci link reset on WH devices at pci indices: 0 \n Finishing pci link reset on WH devices at pci"
    " indices: 0 \n Re-initializing boards after reset.... \n Detected Chips: 2\n"
)
_INIT = (
    " Error when re-initializing chips!\n Chip initialization failed:\n   Communication Status: Success\n"
    "   DRAM Status: In Progress, 8 out of 8 initialized\n   ARC Status: In Progress, 0 out of 1 initialized\n"
    "   0: luwen_if::chip::init::wait_for_init\n   1: luwen_if::detect_chips::detect_chips\n"
)


def test_tt_smi_lower_case_reset_lines_then_a_chip_init_failure_is_critical_on_that_index(tmp_path: Path) -> None:
    assert capture_findings(tmp_path, _LOOP) == {}
    assert capture_findings(tmp_path, _LOOP + _LOOP + _INIT) == {("module_reported_critical", "TT device 0"): "critical"}


def test_luwen_init_failure_alone_names_arc_and_the_sensors_adapter_bus_all_ones_not_heat(tmp_path: Path) -> None:
    sensors = "blackhole-pci-0100\nAdapter: PCI adapter\nfan_rpm:     4294967295 RPM\nasic_temp:   +65536.0\u00b0C\n"
    code, doc = doctor_text(tmp_path, _INIT + "\n" + sensors)
    (finding,) = doc["findings"]
    assert code == 1 and finding["severity"] == "critical" and finding["module"] == "TT 0000:01:00.0 (0000:01:00.0)"
    said = str(finding["evidence"])
    assert "ARC In Progress (0 of 1)" in said and "all ones" in said and "DRAM" not in said


def test_tt_umd_dram_training_timeout_is_critical_on_the_device_it_opened(tmp_path: Path) -> None:
    opened = (
        "2025-05-21 17:44:37.438 | INFO     | SiliconDriver   - Opened PCI device 0; KMD version: 1.32.0, IOMMU: disabled\n"
    )
    assert capture_findings(tmp_path, opened) == {}
    assert capture_findings(tmp_path, opened + "RuntimeError: DRAM training timed out after 60000 ms\n") == {
        ("module_reported_critical", "TT device 0"): "critical"
    }


def test_tt_kmd_hwmon_init_failure_warns_per_bus_id_its_probe_lines_stay_clear(tmp_path: Path) -> None:
    probe = (
        "[   5.120001] Found a Tenstorrent Wormhole device at bus 0000:c7.\n"
        "[   5.120010] tenstorrent 0000:c7:00.0: enabling device (0000 -> 0002)\n"
    )
    assert capture_findings(tmp_path, probe) == {}
    hwmon = "".join(
        f"[175081.1507{k}] tenstorrent 0000:{b}:00.0: Failed to initialize hwmon.\n" for k, b in enumerate(("c7", "46"))
    )
    assert capture_findings(tmp_path, probe + hwmon) == {
        ("module_reported_warning", "TT 0000:C7:00.0 (0000:C7:00.0)"): "warn",
        ("module_reported_warning", "TT 0000:46:00.0 (0000:46:00.0)"): "warn",
    }


def test_an_oops_right_after_tt_kmds_probe_is_critical_on_that_device(tmp_path: Path) -> None:
    text = (
        "[63754.891208] Found a Tenstorrent Blackhole device at bus 0000:1.\n"
        "[63754.891213] tenstorrent 0000:01:00.0: enabling device (0000 -> 0002)\n"
        "[63754.892836] BUG: kernel NULL pointer dereference, address: 00000000000000c8\n"
        "[63754.892844] #PF: supervisor read access in kernel mode\n"
    )
    assert capture_findings(tmp_path, text) == {("module_reported_critical", "TT 0000:01:00.0 (0000:01:00.0)"): "critical"}


def test_a_tt_smi_snapshot_cut_before_its_end_is_read_not_refused(tmp_path: Path) -> None:
    text = (
        '{\n    "time": "2024-04-04T17:39:38.045841",\n    "host_info": {\n        "OS": "Linux",\n'
        '        "Driver": "TTKMD 1.27.1"\n    },\n    "device_info": [\n        {\n'
        '            "smbus_telem": {\n                "BOARD_ID": "0x10001851170c06c",\n'
        '                "SMBUS_TX_ARC0_FW_VERSION": "0x2190000",\n                "SMBUS_TX_DDR_SPEED":\n'
    )
    code, doc = doctor_text(tmp_path, text)
    assert code == 0 and not [f for f in doc["findings"] if f["severity"] in ("warn", "critical")]


_RIP = (
    "[63754.892836] BUG: unable to handle page fault for address: ffffb1c2c0000000\n"
    "[63754.892859] Oops: 0000 [#1] SMP NOPTI\n"
    "[63754.892870] CPU: 3 PID: 1234 Comm: tt-smi Tainted: G           OE      6.5.0 #1\n"
)


def test_an_oops_in_tt_kmds_code_is_the_drivers_not_the_host_kernels(tmp_path: Path) -> None:
    text = _RIP + "[63754.892880] RIP: 0010:tenstorrent_pci_probe+0x120/0x400 [tenstorrent]\n"
    assert capture_findings(tmp_path, text) == {
        ("module_reported_critical", "tenstorrent driver (bus id not in the log)"): "critical"
    }


def test_an_oops_elsewhere_long_after_tt_kmds_line_stays_the_host_kernels(tmp_path: Path) -> None:
    probe = "[    5.120010] tenstorrent 0000:c7:00.0: enabling device (0000 -> 0002)\n"
    filler = "".join(f"[   {6 + k}.000000] EXT4-fs (sda{k}): mounted filesystem\n" for k in range(8))
    text = probe + filler + _RIP + "[63754.892880] RIP: 0010:ext4_readdir+0x20/0x400\n"
    assert capture_findings(tmp_path, text) == {("host_kernel_oops", "node"): "critical"}
