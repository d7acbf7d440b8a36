"""Issue 46 (R13C), on lines written in the FPGA/NPU tools' and drivers' own words (captures/xrt_tools.py,
neuron_status.py): XRT's examine table (a golden image, a card not ready, no device), xbutil validate's old and
new test verdicts, amdxdna's firmware-start and mailbox lines with its benign debug-BO lookup, FastFlowLM's
firmware check, and the Neuron runtime's NRT status codes by number and name; the healthy ones stay clear."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import capture_findings, doctor_text

CRIT, WARN = "module_reported_critical", "module_reported_warning"
_TABLE = (
    "XRT\n  Version              : 2.13.0\n  XOCL                 : 2.13.0, d3575d38\n\nDevices present\n"
    "BDF             :  Shell                      Platform UUID  Device ID         Device Ready*\n"
    "[0000:65:00.0]  :  xilinx_u280_xdma_201920_3  0x5e278820     mgmt(inst=25856)  Yes\n"
)
_XDNA = "amdxdna 0000:c6:00.1: [drm] *ERROR* "


def test_examine_warns_on_the_golden_image_card_only_the_ready_one_stays_clear(tmp_path: Path) -> None:
    assert capture_findings(tmp_path, _TABLE) == {}
    golden = "[0000:17:00.0]  :  xilinx_u250_GOLDEN_5       n/a            n/a               No\n"
    code, doc = doctor_text(tmp_path, _TABLE + golden)
    (finding,) = doc["findings"]
    assert code == 1 and finding["severity"] == "warn" and "0000:17:00.0" in finding["module"]
    assert "golden image" in str(finding["evidence"])


def test_examine_with_no_device_warns_and_names_the_driver_that_did_not_load(tmp_path: Path) -> None:
    text = "Devices present\n  0 devices found\n[    1.98] kernel: amdxdna: module verification failed: signature\n"
    code, doc = doctor_text(tmp_path, text)
    (finding,) = doc["findings"]
    assert code == 1 and finding["severity"] == "warn" and "amdxdna" in str(finding["evidence"])


def test_old_validate_failed_test_and_unusable_card_warn_on_the_flash_scan_bus(tmp_path: Path) -> None:
    text = (
        "INFO: Found 1 cards\nINFO: Validating card[0]: xilinx_u280_xdma_201910_1\n"
        "ERROR: == verify kernel test FAILED\nINFO: Card[0] failed to validate.\n"
        "INFO: Found total 1 card(s), 0 are usable\nERROR: Card [0] is not ready\n"
        "Card [0000:1a:00.0]\n\tShell running on FPGA:\n\t\txilinx_u280_xdma_201910_1,[ID=0x5d1b9328],[SC=4.2.0]\n"
    )
    assert capture_findings(tmp_path, text) == {(WARN, "XRT 0000:1A:00.0 (0000:1A:00.0)"): "warn"}


def test_old_validate_pcie_gen1_warning_is_said_with_the_tools_words(tmp_path: Path) -> None:
    text = (
        "INFO: Validating card[0]: xilinx_u200_gen3x16_base_1\nINFO: == Starting PCIE link check:\n"
        "LINK ACTIVE, ATTENTION\nEnsure Card is plugged in to Gen3x16, instead of Gen1x16\n"
        "WARN: == PCIE link check PASSED with warning\n"
    )
    code, doc = doctor_text(tmp_path, text)
    (finding,) = doc["findings"]
    assert code == 1 and finding["severity"] == "warn" and "instead of Gen1x16" in str(finding["evidence"])


def test_new_validate_aux_power_warns_and_passed_tests_stay_clear(tmp_path: Path) -> None:
    passed = (
        "Validate Device           : [0000:04:00.1]\n    Platform              : RyzenAI-npu1\n"
        "Test 1 [0000:04:00.1]     : latency \n    Test Status           : [PASSED]\n"
    )
    assert (
        capture_findings(tmp_path, _XDNA.replace("c6", "04") + "aie2_hwctx_cfg_debug_bo: Get bo 4 failed\n" + passed) == {}
    )
    aux = (
        "Validate device[0000:b3:00.1]\n1/4 Test #1 [0000:b3:00.1]  : Aux connection\n"
        "    Warning                 : Aux power is not connected\n    Test Status             : [PASSED WITH WARNINGS]\n"
    )
    assert capture_findings(tmp_path, aux) == {(WARN, "XRT 0000:B3:00.1 (0000:B3:00.1)"): "warn"}


def test_amdxdna_firmware_start_family_is_one_critical_on_its_bus_mailbox_timeout_warns(tmp_path: Path) -> None:
    for line in (
        "aie2_hw_start: firmware is not alive",
        "aie2_check_protocol: Incompatible firmware protocol major 7 minor 2",
        "aie2_smu_exec: smu cmd 4 failed, 0xff",
        "amdxdna_probe: Hardware init failed, ret -22",
    ):
        stamped = f"[    5.573807] {_XDNA}{line}\n"
        assert capture_findings(tmp_path, stamped) == {(CRIT, "NPU 0000:C6:00.1 (0000:C6:00.1)"): "critical"}, line
    timeout = f"Mar 02 10:11:12 box kernel: {_XDNA}aie2_send_mgmt_msg_wait: Wait for completion timeout\n"
    assert capture_findings(tmp_path, timeout) == {(WARN, "NPU 0000:C6:00.1 (0000:C6:00.1)"): "warn"}
    assert capture_findings(tmp_path, "amdxdna 0000:c6:00.1: enabling device (0000 -> 0002)\n") == {}


def test_fastflowlm_firmware_incompatible_is_critical_on_its_accel_node(tmp_path: Path) -> None:
    text = (
        "[ERROR] NPU firmware version on /dev/accel/accel0 is incompatible. Please update NPU firmware!\n"
        "*ERROR* aie2_check_protocol: Incompatible firmware protocol major 7 minor 2\n"
    )
    assert capture_findings(tmp_path, text) == {(CRIT, "/dev/accel/accel0"): "critical"}


def test_nrt_status_codes_application_ones_said_hardware_ones_judged(tmp_path: Path) -> None:
    said = (
        "2021-Nov-01 06:02:18.0992 13660:14125 ERROR  NMGR:dlr_infer   Inference completed with err: 1004\n",
        "2024-Jun-01 13:16:27.706192 273:485 ERROR NRT:nrt_load_collectives  Unsupported topology. Supported number"
        " of Neuron Cores is 1, 2, 8, 16 or a multiple of 32.\n",
    )
    for text in said:
        code, doc = doctor_text(tmp_path, text)
        assert code == 0 and not doc["findings"], text
    code, doc = doctor_text(tmp_path, "ERROR  NRT:nrt_execute   nrt_execute status=1002 on nd0\n")
    assert code == 0 and not doc["findings"] and "NRT_EXEC_BAD_INPUT" in str(doc)
    assert capture_findings(tmp_path, "ERROR NRT:nrt_execute  nrt_execute status=5\n") == {
        (WARN, "Neuron device (index not in the log)"): "warn"
    }


def test_xrt_smi_table2d_device_lists_npu_read_alveo_not_ready_warns(tmp_path: Path) -> None:
    npu = (
        "Device(s) Present\n|BDF             |Name       |Architecture  |Topology  |\n"
        "|[0000:c5:00.1]  |NPU Strix  |AIE2P         |4x8       |\n"
    )
    code, doc = doctor_text(tmp_path, npu)
    assert code == 0 and not doc["findings"]
    alveo = (
        "Device(s) Present\n"
        "|BDF             |Shell                            |Logic UUID  |Device ID       |Device Ready*  |\n"
        "|[0000:65:00.0]  |xilinx_u55c_gen3x16_xdma_base_3  |97D2C1F0    |user(inst=129)  |No             |\n"
    )
    assert capture_findings(tmp_path, alveo) == {(WARN, "XRT 0000:65:00.0 (0000:65:00.0)"): "warn"}
    assert capture_findings(tmp_path, "Device(s) Present\n  0 devices found\n") == {
        (WARN, "XRT device (bus id not in the log)"): "warn"
    }
