"""Issue 46 (R8B), on lines written in the tools' own words: AWS Neuron's runtime daemon nrtd (its HAL timing out
and the devices it resets, each on its bus id; its device init failing on the devices given to it), tpu-info's chips
table with 'Libtpu metrics unavailable' (read, no fault), NVIDIA's device plugin's Xid=999 (its own code, no driver
Xid), kubelet's device-manager lines for any vendor's resource and a vendor OCI runtime failing a pod's start, and
gpud's fabric state 'Not Supported' (a PCIe GPU's design) against a state that is a fault."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import capture_findings, doctor_text

_J = "Jan 08 21:53:19 ip-10-0-0-31 "


def test_nrtd_hal_timeout_and_resets_warn_on_each_reset_device(tmp_path: Path) -> None:
    text = (
        f"{_J}nrtd[4154]: [NRTD:nrtd_main] nrtd build using:1.0.4109.0\n"
        f"{_J}nrtd[4154]: [hal] request seq: 2, cmd: 1 timed out\n"
        f"{_J}nrtd[4154]: [TDRV:reset_mla] Resetting 0000:00:1e.0\n"
        f"{_J}nrtd[4154]: [TDRV:reset_mla] Resetting 0000:00:1f.0\n"
    )
    assert capture_findings(tmp_path, text) == {
        ("module_firmware_unresponsive", "0000:00:1e.0"): "warn",
        ("module_firmware_unresponsive", "0000:00:1f.0"): "warn",
    }


def test_nrtd_init_failure_is_the_configuration_not_the_hardware(tmp_path: Path) -> None:
    for cause in (
        "[NMGR:kmgr_init_mlas] No devices specified",
        "[TDRV:tdrv_init_mla_phase1] Could not open the device index:2",
    ):
        text = f"nrtd[1]: {cause}\nnrtd[1]: [NRTD:InitTongas] Failed to initialize devices, error:2\n"
        code, got = doctor_text(tmp_path, text)
        assert [(f["cause"], f["severity"]) for f in got["findings"]] == [("gpu_config_mismatch", "warn")]
        assert cause.split("] ")[1] in got["findings"][0]["evidence"]["log"]


def test_tpu_info_chips_without_libtpu_metrics_are_read_and_clear(tmp_path: Path) -> None:
    text = (
        "TPU Chips\n\u2503 Chip        \u2503 Type        \u2503 Devices \u2503 PID  \u2503\n"
        "\u2502 /dev/accel0 \u2502 TPU v4 chip \u2502 1       \u2502 1201 \u2502\n"
        "\u2502 /dev/accel1 \u2502 TPU v4 chip \u2502 1       \u2502 1201 \u2502\n"
        "Libtpu metrics unavailable. Is there a framework using the TPU?\n"
    )
    code, got = doctor_text(tmp_path, text)
    assert code == 0 and not got["findings"]
    assert any("2 TPU chip(s)" in n for n in got["notes"]) and any("libtpu" in n for n in got["notes"])


def test_device_plugin_xid_999_is_its_own_code_not_a_driver_xid(tmp_path: Path) -> None:
    uuid = "GPU-1b2c3d4e-0000-1111-2222-333344445555"
    text = f"2024/03/01 10:00:00 XidCriticalError: Xid=999 on Device={uuid}, the device will go unhealthy.\n"
    assert capture_findings(tmp_path, text) == {("scheduler_gpus_short", None): "warn"}
    # a driver Xid the plugin reports stays an Xid on its module (plugin_xids), double space or not
    assert ("scheduler_gpus_short", None) not in capture_findings(tmp_path, text.replace("999 on", "79 on "))


def test_kubelet_lines_of_any_vendors_plugin_are_read(tmp_path: Path) -> None:
    unhealthy = (
        "Warning  UnexpectedAdmissionError  kubelet\n  Allocate failed due to no healthy devices present;\n"
        "  cannot allocate unhealthy devices huawei.com/Ascend910B4-1\n"
    )
    assert capture_findings(tmp_path, unhealthy) == {("scheduler_gpus_short", None): "warn"}
    oci = (
        'E0817 16:52:02.414082  176281 pod_workers.go:1324] "Error syncing pod, skipping" err="failed to create '
        "shim task: OCI runtime create failed: /usr/local/Ascend/Ascend-Docker-Runtime/ascend-docker-runtime did "
        'not terminate successfully: exit status 1"\n'
    )
    ended = (
        'E0818 16:33:56.754985  176281 client.go:90] "ListAndWatch ended unexpectedly for device plugin" '
        'err="EOF" resource="huawei.com/Ascend910B4-1"\n'
    )
    assert capture_findings(tmp_path, ended + oci) == {
        ("gpu_stack_pod_not_ready", None): "info",
        ("gpu_config_mismatch", None): "warn",
    }


def test_gpud_fabric_not_supported_is_the_design_and_a_failed_state_warns(tmp_path: Path) -> None:
    line = (
        "NVIDIA-H100-PCIe with unhealthy fabric state: GPU GPU-8ca5630b-8911-2e29-513a-869117d22eaa: state=Not "
        "Supported; GPU GPU-b52a020b-b703-61ba-e7c7-8b25ab6de799: state=Not Supported\n"
    )
    code, got = doctor_text(tmp_path, line)
    assert code == 0 and not got["findings"] and any("NVSwitch" in n for n in got["notes"])
    assert capture_findings(tmp_path, line.replace("state=Not Supported\n", "state=Failure\n")) == {
        ("node_health_check_failed", None): "warn"
    }


def test_neuron_runtime_statuses_of_the_devices_state_are_judged(tmp_path: Path) -> None:
    stamp = "2024-Dec-20 10:11:12.0123 4321:4388 ERROR  NRT:nrt_execute   "
    want = {
        "NRT_EXEC_HW_ERR_HBM_UE (1201)": ("module_hardware_error", "critical"),
        "NRT_EXEC_HW_ERR_REPAIRABLE_HBM_UE (1205)": ("row_remap_pending", "warn"),
        "NRT_EXEC_NC_BUSY": ("other_processes", "warn"),
    }
    for status, (cause, severity) in want.items():
        code, got = doctor_text(tmp_path, f"{stamp}nrt_execute failed: {status}\n")
        assert [(f["cause"], f["severity"]) for f in got["findings"]] == [(cause, severity)]
    assert capture_findings(tmp_path, stamp.replace("ERROR", "INFO ") + "status NRT_SUCCESS\n") == {}


def test_device_plugin_xid_on_all_devices_is_the_xid_with_no_bus_id(tmp_path: Path) -> None:
    text = "2024/03/01 10:00:00 XidCriticalError: Xid=79, All devices will go unhealthy.\n"
    assert capture_findings(tmp_path, text) == {("module_fell_off_bus", "bus id not in the log"): "critical"}
    no_device = capture_findings(tmp_path, text.replace("=79", "=999"))
    assert no_device == {("scheduler_gpus_short", None): "warn"}


def test_a_runtime_line_relaying_the_container_cli_is_read_as_what_it_relays(tmp_path: Path) -> None:
    text = (
        "docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI "
        "runtime create failed: /usr/bin/nvidia-container-runtime did not terminate successfully: exit status 1: "
        "nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown.\n"
    )
    assert ("gpu_config_mismatch", None) not in capture_findings(tmp_path, text)
