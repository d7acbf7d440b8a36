"""doctor on the driver's installation and binding (issue 46, captures/driver_state.py): each fault the capture
proves is one finding of its cause (faults.yaml), a pass-through set-up is said at info only, and a healthy
binding is clear; inventory lists lshw's GPUs and says each GPU's bound driver."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.helpers import run


def _doctor(tmp_path: Path, text: str) -> tuple[int, list[tuple[str, str, str | None]]]:
    path = tmp_path / "capture.txt"
    path.write_text(text)
    code, out, err = run(["doctor", "--from", str(path), "--json"])
    assert code in (0, 1), err
    return code, [(f["cause"], f["severity"], f.get("module")) for f in json.loads(out)["findings"]]


def test_nouveau_on_a_card_with_nvidia_installed_is_a_warning_on_that_module(tmp_path: Path) -> None:
    text = ("$ lspci -k -s 65:00.0\n65:00.0 VGA compatible controller: NVIDIA Corporation GA104 "
            "[GeForce RTX 3070] (rev a1)\n\tKernel driver in use: nouveau\n\tKernel modules: nouveau, nvidia\n")
    code, found = _doctor(tmp_path, text)
    assert (code, found) == (1, [("gpu_bound_to_other_driver", "warn", "65:00.0")])


def test_vfio_pci_on_a_hypervisor_host_is_info_and_exit_zero(tmp_path: Path) -> None:
    text = ("81:00.0 3D controller [0302]: NVIDIA Corporation GH100 [H100 PCIe] [10de:2331] (rev a1)\n"
            "        Kernel driver in use: vfio-pci\n        Kernel modules: nvidiafb, nouveau\n")
    assert _doctor(tmp_path, text) == (0, [("module_passed_through", "info", "81:00.0")])


def test_a_healthy_lspci_k_is_clear(tmp_path: Path) -> None:
    text = ("17:00.0 3D controller: NVIDIA Corporation GH100 [H100 SXM5 80GB] (rev a1)\n"
            "\tSubsystem: NVIDIA Corporation Device 16c1\n\tKernel driver in use: nvidia\n"
            "\tKernel modules: nvidiafb, nouveau, nvidia_drm, nvidia\n")
    assert _doctor(tmp_path, text) == (0, [])


def test_a_dkms_build_failure_is_one_install_finding(tmp_path: Path) -> None:
    text = ("Building initial module for 6.8.0-31-generic\n"
            "Error! Bad return status for module build on kernel: 6.8.0-31-generic (x86_64)\n"
            "Consult /var/lib/dkms/nvidia/535.161.07/build/make.log for more information.\n"
            "dkms autoinstall on 6.8.0-31-generic/x86_64 failed for nvidia(10)\n"
            "Error! One or more modules failed to install during autoinstall.\n")
    assert _doctor(tmp_path, text)[1] == [("driver_install_failed", "warn", None)]


def test_a_key_the_kernel_rejected_is_critical(tmp_path: Path) -> None:
    text = "$ sudo modprobe nvidia\nmodprobe: ERROR: could not insert 'nvidia': Key was rejected by service\n"
    assert _doctor(tmp_path, text)[1] == [("driver_module_rejected", "critical", None)]


def test_persistenced_finding_no_device_is_no_module_visible(tmp_path: Path) -> None:
    text = ("Aug 26 09:12:01 node3 systemd[1]: Starting NVIDIA Persistence Daemon...\n"
            "Aug 26 09:12:01 node3 nvidia-persistenced[1811]: Failed to query NVIDIA devices. Please ensure that the "
            "NVIDIA device files (/dev/nvidia*) exist, and that user 0 has read and write permissions for those "
            "files.\n"
            "Aug 26 09:12:01 node3 systemd[1]: nvidia-persistenced.service: Control process exited, code=exited, "
            "status=1/FAILURE\n"
            "Aug 26 09:12:01 node3 systemd[1]: Failed to start NVIDIA Persistence Daemon.\n")
    assert _doctor(tmp_path, text)[1] == [("no_modules_visible", "critical", None)]


def test_inventory_lists_lshw_gpus_and_says_their_driver(tmp_path: Path) -> None:
    path = tmp_path / "lshw.txt"
    path.write_text("  *-display\n       description: 3D controller\n       product: GH100 [H100 PCIe]\n"
                    "       vendor: NVIDIA Corporation\n       bus info: pci@0000:c1:00.0\n"
                    "       configuration: driver=nvidia latency=0\n")
    code, out, err = run(["inventory", "--from", str(path), "--json"])
    data = json.loads(out)
    assert code == 0, err
    assert [(m["bus_id"], m["model"]) for m in data["modules"]] == [("0000:C1:00.0", "NVIDIA H100 PCIe")]  # catalogued
    assert any("kernel driver in use nvidia" in n for n in data["notes"])
