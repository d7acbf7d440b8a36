"""Issue 46 (R4A): amdgpu's bring-up and firmware failures in the driver's own words (drivers/gpu/drm/amd/amdgpu:
amdgpu_psp.c, amdgpu_dev_coredump.c; the PCI core's probe line as posters shorten it), and KFD's bring-up as a
sysfs listing shows it: each on its module at its severity, the healthy forms clear."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import capture_findings, doctor_text

_BUS = "amdgpu 0000:c1:00.0: amdgpu: "


def test_psp_command_failure_is_a_module_needing_reset(tmp_path: Path) -> None:
    text = (
        f"[Tue Apr 22 14:05:42 2025] {_BUS}psp gfx command CONFIG_SQ_PERFMON(0x46) failed and response status is (0x100)\n"
    )
    assert capture_findings(tmp_path, text) == {("module_needs_reset", "0000:C1:00.0"): "critical"}


def test_older_psp_command_wording_is_read_too(tmp_path: Path) -> None:
    text = f"[   12.100000] {_BUS}psp command (0x6) failed and response status is (0xFFFF0007)\n"
    assert capture_findings(tmp_path, text) == {("module_needs_reset", "0000:C1:00.0"): "critical"}


def test_trusted_application_load_failure_stays_a_lead(tmp_path: Path) -> None:
    text = f"[    5.400000] {_BUS}psp gfx command LOAD_TA(0x1) failed and response status is (0x7)\n"
    found = capture_findings(tmp_path, text)
    assert ("module_needs_reset", "0000:C1:00.0") not in found
    assert all(sev != "critical" for sev in found.values())


def test_probe_failure_as_posters_shorten_it(tmp_path: Path) -> None:
    text = "dmesg shows:\namdgpu: probe ... failed with error -5\n"
    found = capture_findings(tmp_path, text)
    assert [(c, s) for (c, _), s in found.items()] == [("module_init_failed", "critical")]


def test_psp_firmware_load_of_two_words(tmp_path: Path) -> None:
    text = f"[    4.200000] {_BUS}PSP load sys drv failed!\n"
    assert capture_findings(tmp_path, text) == {("module_init_failed", "0000:C1:00.0"): "critical"}


def test_device_coredump_is_a_reset_of_its_module(tmp_path: Path) -> None:
    lines = [
        "[74127.396721] amdgpu 0000:c5:00.0: amdgpu: [drm] AMDGPU device coredump file has been created",
        "[74127.396724] amdgpu 0000:c5:00.0: amdgpu: [drm] Check your /sys/class/drm/card1/device/devcoredump/data",
        "[74127.396727] amdgpu 0000:c5:00.0: amdgpu: SMU is resuming...",
        "[74127.397656] amdgpu 0000:c5:00.0: amdgpu: SMU is resumed successfully!",
    ]
    found = capture_findings(tmp_path, "\n".join(lines) + "\n")
    assert [m for (c, m) in found] == ["0000:C5:00.0"]
    assert all(sev in ("warn", "critical") for sev in found.values())


def test_healthy_boot_lines_stay_clear(tmp_path: Path) -> None:
    lines = [
        "[    2.734194] [drm] amdgpu kernel modesetting enabled.",
        "[    2.734261] amdgpu: CRAT table not found",
        "[    2.734263] amdgpu: Virtual CRAT table created for CPU",
        "[    3.100000] amdgpu 0000:03:00.0: amdgpu: SMU is initialized successfully!",
        "[    3.200000] kfd kfd: amdgpu: added device 1002:744c",
        "[    3.300000] amdgpu 0000:03:00.0: amdgpu: psp gfx command LOAD_TA(0x1) failed and response status is (0x7)",
    ]
    found = capture_findings(tmp_path, "\n".join(lines[:5]) + "\n")
    assert all(sev == "info" for sev in found.values()), found


def _no_gpu(tmp_path: Path, text: str) -> list[tuple[str, str]]:
    """The findings at warn or above: (cause, severity)."""
    found = capture_findings(tmp_path, text)
    return [(c, s) for (c, _), s in found.items() if s != "info"]


def test_kfd_sysfs_absent_is_no_compute(tmp_path: Path) -> None:
    for said in (
        "$ tree /sys/class/kfd/kfd/topology/\n/sys/class/kfd/kfd/topology/ [error opening dir]\n0 directories, 0 files\n",
        "$ ls /sys/class/kfd\nls: cannot access '/sys/class/kfd': No such file or directory\n",
        "$ ls -l /dev/kfd\nls: cannot access '/dev/kfd': No such file or directory\n",
    ):
        assert _no_gpu(tmp_path, said) == [("framework_sees_no_module", "warn")], said


def test_kfd_topology_of_the_cpu_alone(tmp_path: Path) -> None:
    listing = [
        "ls -lR /sys/class/kfd/kfd/topology",
        "/sys/class/kfd/kfd/topology/nodes:",
        "total 0",
        "drwxr-xr-x 6 root root 0 Feb  8 16:29 0",
        "",
        "/sys/class/kfd/kfd/topology/nodes/0:",
        "total 0",
        "drwxr-xr-x 2 root root    0 Feb  9 12:01 caches",
    ]
    assert _no_gpu(tmp_path, "\n".join(listing) + "\n") == [("framework_sees_no_module", "warn")]
    assert _no_gpu(tmp_path, "$ ls /sys/class/kfd/kfd/topology/nodes\n0\n") == [("framework_sees_no_module", "warn")]


def test_kfd_topology_with_a_gpu_node_is_clear(tmp_path: Path) -> None:
    assert _no_gpu(tmp_path, "$ ls /sys/class/kfd/kfd/topology/nodes\n0  1\n") == []
    listing = [
        "/sys/class/kfd/kfd/topology/nodes:",
        "total 0",
        "drwxr-xr-x 6 root root 0 Feb  8 16:29 0",
        "drwxr-xr-x 6 root root 0 Feb  8 16:29 1",
    ]
    assert _no_gpu(tmp_path, "\n".join(listing) + "\n") == []


def test_rocminfo_rock_not_live(tmp_path: Path) -> None:
    found = _no_gpu(tmp_path, "$ rocminfo --support\nROCk module is NOT live, possibly no GPU devices\n")
    assert found and all(s == "warn" or s == "critical" for _, s in found)


def test_coredump_beside_a_recovered_ring_reset_is_its_echo(tmp_path: Path) -> None:
    lines = [
        "[ 100.000001] amdgpu 0000:04:00.0: amdgpu: ring comp_1.0.0 timeout, signaled seq=10, emitted seq=12",
        "[ 100.000002] amdgpu 0000:04:00.0: amdgpu: [drm] AMDGPU device coredump file has been created",
        "[ 100.000003] amdgpu 0000:04:00.0: amdgpu: Starting comp_1.0.0 ring reset",
        "[ 100.000004] amdgpu 0000:04:00.0: amdgpu: Ring comp_1.0.0 reset succeeded",
    ]
    found = capture_findings(tmp_path, "\n".join(lines) + "\n")
    assert ("module_hung_reset", "0000:04:00.0") not in found
    assert found.get(("module_ring_reset_recovered", "0000:04:00.0")) == "warn"


def test_rocminfo_agent_tail_alone_is_read_not_refused(tmp_path: Path) -> None:
    tail = [
        "  Max Waves Per CU:        40(0x28)",
        "  Grid Max Size per Dimension:",
        "    x                        4294967295(0xffffffff)",
        "  Max fbarriers/Workgrp:   32",
        "  Packet Processor uCode:: 472",
        "  SDMA engine uCode::      145",
        "  Pool Info:",
        "    Pool 1",
        "      Segment:                 GLOBAL; FLAGS: COARSE GRAINED",
        "      Size:                    16760832(0xffc000) KB",
        "      Allocatable:             TRUE",
        "      Accessible by all:       FALSE",
    ]
    code, answer = doctor_text(tmp_path, "\n".join(tail) + "\n")
    assert code == 0 and not answer["findings"]
    assert any("16760832 KB" in note for note in answer["notes"])


def test_amd_smi_throttle_status_quoted_is_read_and_not_judged(tmp_path: Path) -> None:
    text = "\n".join(
        [
            "`amd-smi metric --power` reports `THROTTLE_STATUS: THROTTLED` continuously, even idle at 37 C.",
            "",
            "| State | Samples | `throttle_status` | Bits |",
            "|---|---:|---|---|",
            "| Idle | 11 | `0x00002` | TEMP_HOTSPOT |",
            "| Load | 39 | `0x04002` | TEMP_HOTSPOT, PPT0 |",
        ]
    )
    code, answer = doctor_text(tmp_path, text + "\n")
    assert code == 0 and not answer["findings"]
    assert any("TEMP_HOTSPOT, PPT0" in note for note in answer["notes"])


def test_trusted_application_failure_is_optional_firmware(tmp_path: Path) -> None:
    text = f"[    5.400000] {_BUS}psp gfx command LOAD_TA(0x1) failed and response status is (0x7)\n"
    assert capture_findings(tmp_path, text) == {("module_firmware_optional_missing", "0000:C1:00.0"): "info"}


def test_smu_interface_mismatch_is_an_info_note(tmp_path: Path) -> None:
    lines = [
        "[ 4728.015306] amdgpu 0000:44:00.0: amdgpu: smu driver if version = 0x0000000e, smu fw if version = 0x00000012",
        "[ 4728.015310] amdgpu 0000:44:00.0: amdgpu: SMU driver if version not matched",
        "[ 4728.027522] amdgpu 0000:44:00.0: amdgpu: SMU is resumed successfully!",
    ]
    found = capture_findings(tmp_path, "\n".join(lines) + "\n")
    assert found == {("module_firmware_interface_mismatch", "0000:44:00.0"): "info"}


def test_mes_asking_for_a_reset_is_the_mes_not_answering(tmp_path: Path) -> None:
    text = "[ 500.1] amdgpu 0000:c5:00.0: amdgpu: MES might be in unrecoverable state, issue a GPU reset\n"
    assert capture_findings(tmp_path, text) == {("module_hung_reset", "0000:C5:00.0"): "critical"}


def test_kfd_refusing_the_gpu_in_dmesg_is_no_compute(tmp_path: Path) -> None:
    for line in (
        "[    3.1] kfd kfd: amdgpu: skipped device 1002:7340, PCI rejects atomics 730<0",
        "[    3.1] kfd kfd: amdgpu: device 1002:67df NOT added due to errors",
    ):
        assert _no_gpu(tmp_path, line + "\n") == [("framework_sees_no_module", "warn")], line


def test_kfd_not_supported_on_this_asic_in_dmesg(tmp_path: Path) -> None:
    found = capture_findings(tmp_path, "[    3.1] amdgpu 0000:03:00.0: kfd not supported on this ASIC\n")
    assert [s for s in found.values() if s != "info"] == ["warn"], found
