"""The driver's installation and binding as users paste it (issue 46, captures/driver_state.py), each form
written here in the tool's own layout: lspci -k / -nnk / -vv driver lines (tabs or spaces, a domain or none),
lshw -C display (claimed and UNCLAIMED), dkms status in its 2.x and 3.x spellings and its build errors,
modprobe's and systemd-modules-load's refusals, udev's failed modprobe, nvidia-persistenced's journal lines,
the NVIDIA installer's errors, mokutil --sb-state and ubuntu-drivers devices."""

from __future__ import annotations

from pathlib import Path

from gpuvet.captures import read as capture_read
from gpuvet.captures.formats import FileCapture


def _read(tmp_path: Path, text: str) -> FileCapture:
    path = tmp_path / "capture.txt"
    path.write_text(text)
    return capture_read.read(str(path))


def _kinds(fc: FileCapture) -> list[tuple[str, str | None]]:
    return [(e.kind, e.module) for e in fc.app_errors.errors]


LSPCI_K_NOUVEAU = ("01:00.0 VGA compatible controller: NVIDIA Corporation TU104 [GeForce RTX 2080] (rev a1)\n"
                   "\tSubsystem: Micro-Star International Co., Ltd. [MSI] Device 3721\n"
                   "\tKernel driver in use: nouveau\n"
                   "\tKernel modules: nvidiafb, nouveau, nvidia_drm, nvidia\n"
                   "01:00.1 Audio device: NVIDIA Corporation TU104 HD Audio Controller (rev a1)\n"
                   "\tKernel driver in use: snd_hda_intel\n"
                   "\tKernel modules: snd_hda_intel\n")


def test_nouveau_holding_a_card_whose_nvidia_module_is_installed_is_a_binding_fault(tmp_path: Path) -> None:
    fc = _read(tmp_path, LSPCI_K_NOUVEAU)
    assert _kinds(fc) == [("gpu_bound_other_driver", "01:00.0")]
    assert "kernel driver in use nouveau, not nvidia" in fc.app_errors.errors[0].text
    assert "GeForce RTX 2080" in fc.app_errors.errors[0].text


def test_nouveau_alone_on_a_desktop_is_said_not_judged(tmp_path: Path) -> None:
    text = ("0000:0a:00.0 VGA compatible controller [0300]: NVIDIA Corporation GK208B [GeForce GT 710] [10de:128b] "
            "(rev a1)\n        Kernel driver in use: nouveau\n        Kernel modules: nvidiafb, nouveau\n")
    fc = _read(tmp_path, text)
    assert _kinds(fc) == []
    assert any("kernel driver in use nouveau (nothing in the capture expects nvidia)" in n for n in fc.notes)


def test_nouveau_with_the_nvidia_stack_named_elsewhere_is_a_fault(tmp_path: Path) -> None:
    text = ("$ nvidia-smi\nNVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n"
            "$ lspci -k | grep -A3 VGA\n"
            "0a:00.0 VGA compatible controller: NVIDIA Corporation GK208B [GeForce GT 710] (rev a1)\n"
            "        Kernel driver in use: nouveau\n        Kernel modules: nvidiafb, nouveau\n")
    assert ("gpu_bound_other_driver", "0A:00.0") in _kinds(_read(tmp_path, text))


def test_vfio_pci_is_a_passthrough_set_up(tmp_path: Path) -> None:
    text = ("41:00.0 3D controller [0302]: NVIDIA Corporation GA100 [A100 PCIe 40GB] [10de:20f1] (rev a1)\n"
            "\tSubsystem: NVIDIA Corporation Device [10de:145f]\n\tKernel driver in use: vfio-pci\n"
            "\tKernel modules: nvidiafb, nouveau, nvidia_drm, nvidia\n")
    assert _kinds(_read(tmp_path, text)) == [("gpu_passthrough", "41:00.0")]


def test_a_card_with_modules_but_no_driver_in_use_has_none_bound(tmp_path: Path) -> None:
    text = ("c1:00.0 3D controller: NVIDIA Corporation GH100 [H100 PCIe] (rev a1)\n"
            "\tSubsystem: NVIDIA Corporation Device 1626\n\tKernel modules: nvidiafb, nouveau, nvidia_drm, nvidia\n"
            "c2:00.0 Ethernet controller: Mellanox Technologies MT2910 Family [ConnectX-7]\n"
            "\tKernel driver in use: mlx5_core\n")
    assert _kinds(_read(tmp_path, text)) == [("gpu_no_driver", "C1:00.0")]


def test_healthy_bindings_are_notes_only(tmp_path: Path) -> None:
    text = ("17:00.0 3D controller: NVIDIA Corporation GH100 [H100 SXM5 80GB] (rev a1)\n"
            "\tKernel driver in use: nvidia\n\tKernel modules: nvidiafb, nouveau, nvidia_drm, nvidia\n"
            "03:00.0 VGA compatible controller: Advanced Micro Devices, Inc. [AMD/ATI] Navi 31 "
            "[Radeon RX 7900 XTX] (rev c8)\n\tKernel driver in use: amdgpu\n\tKernel modules: amdgpu\n")
    fc = _read(tmp_path, text)
    assert _kinds(fc) == []
    assert sum("kernel driver in use nvidia" in n or "kernel driver in use amdgpu" in n for n in fc.notes) == 2


def test_radeon_holding_a_card_rocm_expects_is_a_fault(tmp_path: Path) -> None:
    text = ("$ rocminfo\nROCk module is NOT loaded, possibly no GPU devices\n"
            "01:00.0 VGA compatible controller: Advanced Micro Devices, Inc. [AMD/ATI] Hawaii XT [Radeon R9 290X]\n"
            "\tKernel driver in use: radeon\n\tKernel modules: radeon, amdgpu\n")
    assert ("gpu_bound_other_driver", "01:00.0") in _kinds(_read(tmp_path, text))


LSHW = """  *-display UNCLAIMED
       description: 3D controller
       product: GA102GL [A10]
       vendor: NVIDIA Corporation
       physical id: 0
       bus info: pci@0000:ca:00.0
       version: a1
       configuration: latency=0
  *-display
       description: VGA compatible controller
       product: ASPEED Graphics Family
       vendor: ASPEED Technology, Inc.
       bus info: pci@0000:03:00.0
       configuration: driver=ast latency=0
  *-display:1
       description: 3D controller
       product: GA102GL [A10]
       vendor: NVIDIA Corporation
       bus info: pci@0000:cb:00.0
       configuration: driver=nvidia latency=0
"""


def test_lshw_unclaimed_display_has_no_driver_and_both_gpus_are_listed(tmp_path: Path) -> None:
    fc = _read(tmp_path, LSHW)
    assert _kinds(fc) == [("gpu_no_driver", "0000:CA:00.0")]
    assert [(g.bus_id, g.vendor) for g in fc.lspci.listed] == [("0000:CA:00.0", "NVIDIA"), ("0000:CB:00.0", "NVIDIA")]
    assert any("kernel driver in use nvidia" in n for n in fc.notes)


def test_dkms_build_failure_of_the_gpu_driver_and_its_state(tmp_path: Path) -> None:
    text = ("$ sudo dkms status\n"
            "nvidia/550.120, 6.11.0-8-generic, x86_64: installed\n"
            "nvidia/550.120: added\n"
            "virtualbox/7.0.16, 6.11.0-8-generic, x86_64: installed\n"
            "$ sudo dkms install nvidia/550.120 -k 6.12.1-arch1-1\n"
            "Building module:\n"
            "Cleaning build area...(bad exit status: 2)\n"
            "Error! Bad return status for module build on kernel: 6.12.1-arch1-1 (x86_64)\n"
            "Consult /var/lib/dkms/nvidia/550.120/build/make.log for more information.\n")
    fc = _read(tmp_path, text)
    assert [k for k, _ in _kinds(fc)] == ["dkms_not_built", "driver_build_failed"]
    assert any("nvidia/550.120 failed to build for kernel 6.12.1-arch1-1" in n for n in fc.notes)
    assert any("nvidia 550.120 installed for kernel 6.11.0-8-generic" in n for n in fc.notes)


def test_another_modules_build_failure_and_old_dkms_spelling(tmp_path: Path) -> None:
    text = ("Error! Bad return status for module build on kernel: 5.15.0-91-generic (x86_64)\n"
            "Consult /var/lib/dkms/bbswitch/0.8/build/make.log for more information.\n"
            "amdgpu, 6.3.6-1697589.22.04, 5.15.0-91-generic, x86_64: installed\n")
    fc = _read(tmp_path, text)
    assert _kinds(fc) == []
    assert any("amdgpu 6.3.6-1697589.22.04 installed for kernel 5.15.0-91-generic" in n for n in fc.notes)


def test_module_refusals_udev_and_persistenced(tmp_path: Path) -> None:
    text = ("modprobe: ERROR: could not insert 'nvidia': Key was rejected by service\n"
            "Mar 02 10:11:12 host systemd-modules-load[512]: Failed to insert module 'nvidia_uvm': "
            "Required key not available\n"
            "modprobe: ERROR: could not insert 'nvidia': No such device\n"
            "Mar 02 10:11:13 host (udev-worker)[611]: nvidia: Process '/sbin/modprobe nvidia-modeset' failed with "
            "exit code 1.\n"
            "Mar 02 10:11:14 host nvidia-persistenced[700]: Failed to query NVIDIA devices. Please ensure that the "
            "NVIDIA device files (/dev/nvidia*) exist, and that user 0 has read and write permissions for those "
            "files.\n"
            "Mar 02 10:11:14 host systemd[1]: nvidia-persistenced.service: Failed with result 'exit-code'.\n"
            "$ mokutil --sb-state\nSecureBoot enabled\n")
    fc = _read(tmp_path, text)
    assert [k for k, _ in _kinds(fc)] == ["driver_key_rejected", "driver_key_rejected", "driver_insert_failed",
                                         "driver_insert_failed", "persistenced_no_devices", "persistenced_failed"]
    assert any(n.startswith("Secure Boot enabled") for n in fc.notes)


def test_installer_errors(tmp_path: Path) -> None:
    text = ("ERROR: An NVIDIA kernel module 'nvidia-drm' appears to already be loaded in your kernel.  This may be "
            "because it is in use (for example, by an X server, a CUDA program, or the NVIDIA Persistence Daemon)\n"
            "ERROR: An error occurred while performing the step: \"Building kernel modules\". See "
            "/var/log/nvidia-installer.log for details.\n")
    assert [k for k, _ in _kinds(_read(tmp_path, text))] == ["driver_install_blocked", "driver_build_failed"]


def test_ubuntu_drivers_devices_lists_the_gpu_and_its_recommendation(tmp_path: Path) -> None:
    text = ("== /sys/devices/pci0000:00/0000:00:03.1/0000:2b:00.0 ==\n"
            "modalias : pci:v000010DEd00002684sv00001043sd000088E2bc03sc00i00\n"
            "vendor   : NVIDIA Corporation\n"
            "model    : AD102 [GeForce RTX 4090]\n"
            "driver   : nvidia-driver-535 - distro non-free\n"
            "driver   : nvidia-driver-550 - distro non-free recommended\n"
            "driver   : xserver-xorg-video-nouveau - distro free builtin\n")
    fc = _read(tmp_path, text)
    assert _kinds(fc) == []
    assert [(g.bus_id, g.model) for g in fc.lspci.listed] == [("0000:2B:00.0", "AD102 [GeForce RTX 4090]")]
    assert any("recommended nvidia-driver-550" in n for n in fc.notes)


def test_inxi_graphics_devices_their_driver_and_a_missing_one(tmp_path: Path) -> None:
    text = ("Graphics:\n"
            "  Device-1: Intel Alder Lake-P GT2 [Iris Xe Graphics] vendor: Lenovo driver: i915 v: kernel\n"
            "    arch: Gen-12.2 bus-ID: 00:02.0\n"
            "  Device-2: NVIDIA GA107M [GeForce RTX 3050 Mobile] vendor: Lenovo driver: N/A\n"
            "    arch: Ampere bus-ID: 01:00.0\n"
            "  Display: x11 server: X.Org v: 21.1.4 driver: X: loaded: modesetting\n"
            "Graphics:  Device-1: NVIDIA GP104 [GeForce GTX 1080] vendor: ASUSTeK driver: nvidia v: 430.40 "
            "bus ID: 02:00.0\n")
    fc = _read(tmp_path, text)
    assert _kinds(fc) == [("gpu_no_driver", "01:00.0")]
    assert any("GP104 [GeForce GTX 1080] (02:00.0): kernel driver in use nvidia 430.40" in n for n in fc.notes)
    assert [g.bus_id for g in fc.lspci.listed] == ["01:00.0", "02:00.0"]


def test_an_instinct_accelerator_class_and_its_binding(tmp_path: Path) -> None:
    text = ("c1:00.0 Processing accelerators [1200]: Advanced Micro Devices, Inc. [AMD/ATI] Aqua Vanjaram "
            "[Instinct MI300X] [1002:74a1]\n\tSubsystem: Advanced Micro Devices, Inc. [AMD/ATI] Device [1002:74a1]\n"
            "\tKernel modules: amdgpu\n")
    assert _kinds(_read(tmp_path, text)) == [("gpu_no_driver", "C1:00.0")]


def test_package_managers_lockdown_and_systemctl_status(tmp_path: Path) -> None:
    text = ("Setting up nvidia-dkms-535 (535.183.01-0ubuntu1) ...\n"
            "dpkg: error processing package nvidia-dkms-535 (--configure):\n"
            " installed nvidia-dkms-535 package post-installation script subprocess returned error exit status 10\n"
            "Building and installing nvidia-kmod                        [FAILED]\n"
            "[   12.331] Lockdown: modprobe: unsigned module loading is restricted; see man kernel_lockdown.7\n"
            "ERROR: The Nouveau kernel driver is currently in use by your system.  This driver is incompatible with "
            "the NVIDIA driver\n"
            "● nvidia-persistenced.service - NVIDIA Persistence Daemon\n"
            "     Loaded: loaded (/lib/systemd/system/nvidia-persistenced.service; static)\n"
            "     Active: failed (Result: exit-code) since Tue 2024-05-14 09:01:22 UTC; 3min ago\n"
            "$ sbctl status\nSecure Boot:\t✓ Enabled\n")
    fc = _read(tmp_path, text)
    assert [k for k, _ in _kinds(fc)] == ["driver_build_failed", "driver_build_failed", "driver_install_blocked",
                                         "driver_key_rejected", "persistenced_failed"]
    assert any(n.startswith("Secure Boot enabled") for n in fc.notes)


def test_a_gpu_module_installed_for_other_kernels_only_leaves_the_running_one_without(tmp_path: Path) -> None:
    text = ("$ uname -r\n5.15.0-91-generic\n$ dkms status\n"
            "nvidia, 535.129.03, 5.15.0-88-generic, x86_64: installed\n"
            "nvidia, 535.129.03, 5.15.0-89-generic, x86_64: installed\n")
    fc = _read(tmp_path, text)
    assert _kinds(fc) == [("dkms_other_kernel", None)]
    assert "not for the running kernel 5.15.0-91-generic" in fc.app_errors.errors[0].text


def test_a_gpu_module_installed_for_the_running_kernel_and_modinfo_are_said(tmp_path: Path) -> None:
    text = ("$ uname -a\nLinux gpu01 6.8.0-45-generic #45-Ubuntu SMP PREEMPT_DYNAMIC Fri Aug 30 12:02:04 UTC 2024 "
            "x86_64 x86_64 x86_64 GNU/Linux\n$ dkms status\nnvidia/550.107.02, 6.8.0-45-generic, x86_64: installed\n"
            "$ modinfo nvidia | head -4\nfilename:       /lib/modules/6.8.0-45-generic/updates/dkms/nvidia.ko.zst\n"
            "import_ns:      DMA_BUF\nalias:          char-major-195-*\nversion:        550.107.02\n"
            "vermagic:       6.8.0-45-generic SMP preempt mod_unload modversions\n")
    fc = _read(tmp_path, text)
    assert _kinds(fc) == []
    assert "running kernel 6.8.0-45-generic" in fc.notes
    assert "modinfo: nvidia 550.107.02 built for kernel 6.8.0-45-generic" in fc.notes


def test_installer_load_errors_and_its_secure_boot_explanation(tmp_path: Path) -> None:
    text = ("ERROR: Unable to load the 'nvidia-drm' kernel module.\n"
            "-> Kernel module load error: Key was rejected by service\n"
            "ERROR: The kernel module failed to load. Secure boot is enabled on this system, so this is likely because "
            "it was not signed by a key that is trusted by the kernel.\n")
    assert [k for k, _ in _kinds(_read(tmp_path, text))] == ["driver_insert_failed", "driver_key_rejected",
                                                            "driver_key_rejected"]
