"""Batch K's misses on NVIDIA kernel and nvidia-smi output (issue 46), each fixed for its class of input and
tested on lines written here in the tool's own form."""

from __future__ import annotations

from pathlib import Path

from gpuvet.captures import kernel
from gpuvet.captures.text import Line
from tests.support.helpers import capture_findings


def _lines(text: str) -> list[Line]:
    return [Line(i + 1, t) for i, t in enumerate(text.splitlines())]


# the PCI core's enumeration of a GPU function (pci/probe.c, setup-res.c), in 6.8's and older kernels' words
_ENUM = ("{p} pci 0000:05:00.0: [10de:2684] type 00 class 0x030000 PCIe Legacy Endpoint\n"
         "{p} pci 0000:05:00.0: BAR 0 [mem 0x00000000-0x00ffffff]\n"
         "{p} pci 0000:05:00.1: [10de:22ba] type 00 class 0x040300 PCIe Endpoint\n"
         "{p} pci 0000:05:00.0: BAR 5 [io  size 0x0080]: can't assign; no space\n")
_NEW_FAIL = ("{p} pci 0000:05:00.0: BAR 1 [mem size 0x800000000 64bit pref]: can't assign; no space\n"
             "{p} pci 0000:05:00.0: BAR 1 [mem size 0x800000000 64bit pref]: failed to assign\n")
_OLD_FAIL = ("{p} pci 0000:05:00.0: BAR 3: no space for [mem size 0x02000000 64bit pref]\n"
             "{p} pci 0000:05:00.0: BAR 3: failed to assign [mem size 0x02000000 64bit pref]\n")


def test_a_gpu_bar_the_kernel_could_not_assign_is_a_module_the_driver_cannot_map(tmp_path: Path) -> None:
    for p in ("[    2.831115]", "Jan 12 09:14:02 rk3588 kernel: [    2.831115]", "<6>[    2.8311]"):
        for fail in (_NEW_FAIL, _OLD_FAIL):
            text = (_ENUM + fail).format(p=p)
            assert capture_findings(tmp_path, text) == {("module_cannot_attach", "0000:05:00.0"): "critical"}, p
            got = kernel.parse(_lines(text))
            assert [(m.module, m.vendor) for m in got.modules] == [("0000:05:00.0", "NVIDIA")]  # not the audio


def test_a_bar_assigned_after_a_first_failure_and_an_io_bar_stay_clear(tmp_path: Path) -> None:
    later = "{p} pci 0000:05:00.0: BAR 1 [mem 0x4000000000-0x47ffffffff 64bit pref]: assigned\n"
    older = "{p} pci 0000:05:00.0: BAR 3: assigned [mem 0x4800000000-0x4801ffffff 64bit pref]\n"
    for text in ((_ENUM + _NEW_FAIL + later).format(p="[ 1.2]"), (_ENUM + _OLD_FAIL + older).format(p="[ 1.2]"),
                 _ENUM.format(p="[ 1.2]")):
        assert capture_findings(tmp_path, text) == {}


def test_enumeration_lines_inventory_an_nvidia_or_amd_gpu_and_no_other_function() -> None:
    text = ("[ 0.91] pci 0000:c1:00.0: [1002:74a1] type 00 class 0x120000 PCIe Endpoint\n"
            "[ 0.92] pci 0000:00:02.0: [8086:a780] type 00 class 0x030000 conventional PCI endpoint\n"
            "[ 0.93] pci 0000:01:00.0: [10de:2f04] type 00 class 0x030000 PCIe Legacy Endpoint\n"
            "[ 0.94] pci 0000:02:00.0: [15b3:1021] type 00 class 0x020000 PCIe Endpoint\n")
    got = kernel.parse(_lines(text))
    assert [(m.module, m.vendor) for m in got.modules] == [("0000:01:00.0", "NVIDIA"), ("0000:C1:00.0", "AMD")]
    assert not got.events


_NVML_UNKNOWN = "$ nvidia-smi\nFailed to initialize NVML: Unknown Error\n"
# a driver package update as each package manager logs it (pacman's ALPM log, dpkg.log, apt, dnf, dkms)
_UPDATES = ("[2024-05-02T08:11:40+0200] [ALPM] upgraded nvidia-utils (550.67-1 -> 550.78-1)\n",
            "2024-05-02 08:11:40 upgrade nvidia-utils-550:amd64 550.67-0ubuntu1 550.78-0ubuntu1\n",
            "Unpacking libnvidia-compute-550:amd64 (550.78-0ubuntu1) over (550.67-0ubuntu1) ...\n",
            "  Upgrading        : 3:nvidia-driver-cuda-libs-550.78-1.el9.x86_64          3/12\n",
            "==> dkms remove nvidia/550.67 -k 6.8.9-arch1-1\n")


def test_nvml_unknown_error_after_a_driver_update_is_the_module_and_libraries_apart(tmp_path: Path) -> None:
    for update in _UPDATES:
        for text in (update + _NVML_UNKNOWN, _NVML_UNKNOWN + "\nthe log of today's update:\n" + update):
            assert capture_findings(tmp_path, text) == {("driver_library_mismatch", None): "critical"}, text


def test_nvml_unknown_error_without_an_update_in_the_file_stays_a_device_access_fault(tmp_path: Path) -> None:
    for text in (_NVML_UNKNOWN, _NVML_UNKNOWN + "[ALPM] upgraded linux (6.8.8-1 -> 6.8.9-1)\n"):
        assert capture_findings(tmp_path, text) == {("device_permissions", None): "warn"}


_TABLE = """Mon Jun  3 11:02:45 2024
+---------------------------------------------------------------------------------------+
| NVIDIA-SMI 535.171.04             Driver Version: 535.171.04   CUDA Version: 12.2     |
|-----------------------------------------+----------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |
|                                         |                      |               MIG M. |
|=========================================+======================+======================|
|   0  NVIDIA GeForce RTX 4090        Off | 00000000:41:00.0 Off |                  Off |
|  0%   38C    P8              21W / 450W |      2MiB / 24564MiB |      0%      Default |
|                                         |                      |                  N/A |
+-----------------------------------------+----------------------+----------------------+
"""
_LISTING = "$ nvidia-smi -L\nGPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-3f1c2a9e-8d7b-4c15-9a0e-6b2d4f8e1c37)\n"
_NO_DEVICE = ("$ CUDA_VISIBLE_DEVICES=1 python train.py\n"
              "RuntimeError: CUDA error: no CUDA-capable device is detected\n")


def test_a_program_seeing_no_device_where_a_tool_lists_modules_is_its_own_view(tmp_path: Path) -> None:
    for listing in (_TABLE, _LISTING):
        for text in (_NO_DEVICE + listing, listing + _NO_DEVICE):
            assert capture_findings(tmp_path, text) == {("program_sees_no_listed_module", None): "info"}


def test_a_program_seeing_no_device_with_no_listing_stays_no_module_visible(tmp_path: Path) -> None:
    assert capture_findings(tmp_path, _NO_DEVICE) == {("no_modules_visible", None): "critical"}


def test_a_gsp_that_did_not_start_at_init_is_the_init_failure_not_a_second_cause(tmp_path: Path) -> None:
    """'RmInitAdapter: Cannot initialize GSP firmware RM' is RmInitAdapter's reason: one critical, the init's."""
    for p in ("[    5.753942] ", "Nov 02 10:01:12 pi5 kernel: "):
        text = (f"{p}NVRM: kgspExecuteFwsec_TU102: failed to execute FWSEC for FRTS: no initialized WPR2 found\n"
                f"{p}NVRM: RmInitAdapter: Cannot initialize GSP firmware RM\n"
                f"{p}NVRM: GPU 0000:03:00.0: RmInitAdapter failed! (0x62:0xffff:1863)\n"
                f"{p}NVRM: GPU 0000:03:00.0: rm_init_adapter failed, device minor number 0\n")
        assert capture_findings(tmp_path, text) == {("module_init_failed", "0000:03:00.0"): "critical"}
    # a heartbeat lost while the module ran (no init failure) still needs the reset; so does 'WPR2 already up'
    assert capture_findings(tmp_path, "[ 9.1] NVRM: GPU 0000:03:00.0: GSP RM heartbeat timed out\n") == {
        ("module_needs_reset", "0000:03:00.0"): "critical"}
    wpr2 = ("[ 9.1] NVRM: GPU0 _kgspBootGspRm: unexpected WPR2 already up, cannot proceed with booting GSP\n"
            "[ 9.1] NVRM: GPU 0000:03:00.0: RmInitAdapter failed! (0x62:0x40:2168)\n")
    assert capture_findings(tmp_path, wpr2) == {("module_needs_reset", "0000:03:00.0"): "critical",
                                                ("module_init_failed", "0000:03:00.0"): "critical"}


def test_xid_lines_a_poster_shortened_inside_a_driver_log_are_read_with_their_modules() -> None:
    for p in ("03:12:09  ", "[ 8812.400113] ", "2025-03-01T03:12:09.114+00:00 "):
        text = (f"{p}NVRM: Xid (PCI:0000:3b:00): 43, pid=2231, name=python, Ch 00000008\n"
                f"{p}Xid 43 PCI:0000:5e:00 pid=2232 ...\n"
                f"{p}Xid (PCI:0000:86:00): 43, pid=2233, ...\n"
                f"{p}...\n")
        got = kernel.parse(_lines(text))
        assert sorted((x.bus_id, x.code) for x in got.xids) == [("0000:3B:00.0", 43), ("0000:5E:00.0", 43),
                                                                ("0000:86:00.0", 43)], p
        assert [m.module for m in got.modules] == ["0000:3B:00.0", "0000:5E:00.0", "0000:86:00.0"]


def test_a_shortened_xid_line_without_a_driver_line_or_in_a_sentence_is_not_the_drivers() -> None:
    assert not kernel.parse(_lines("19:15:34  Xid 31 PCI:0000:f0:00 pid=477448 ...\n")).xids
    text = ("[ 1.0] NVRM: Xid (PCI:0000:3b:00): 43, pid=2231, name=python, Ch 00000008\n"
            "Then I saw Xid 43 PCI:0000:5e:00 on the other card too\n"
            "[ 1.1] Xid 43 PCI:0000:86:00 again?\n")
    assert [x.bus_id for x in kernel.parse(_lines(text)).xids] == ["0000:3B:00.0"]


def test_a_gpu_monitors_xid_names_its_module_for_the_inventory() -> None:
    from gpuvet.captures import plugin_xids

    text = ("I0214 08:01:12.004512       1 health.go:164] XidCriticalError: Xid=48 on Device=GPU-0b3d9a51-1c2e-4f7a-"
            "8e60-5d2a9c7f4e13; marking device as unhealthy.\n"
            "2024/02/14 08:01:12 XidCriticalError: Xid=79 on Device=GPU-0b3d9a51-1c2e-4f7a-8e60-5d2a9c7f4e13, the "
            "device will go unhealthy.\n"
            "2024/02/14 08:01:13 XidCriticalError: Xid=94 on Device=MIG-5c8e2f41-7a0b-5d3c-9e1f-2b4a6c8d0e57, the "
            "device will go unhealthy.\n"
            'DCGM_FI_DEV_XID_ERRORS{gpu="1",UUID="GPU-aa",pci_bus_id="00000000:3B:00.0",Hostname="n1"} 13\n')
    got = plugin_xids.parse(_lines(text))
    assert [(m.module, m.uuid) for m in got.modules] == [
        ("GPU-0b3d9a51-1c2e-4f7a-8e60-5d2a9c7f4e13", "GPU-0b3d9a51-1c2e-4f7a-8e60-5d2a9c7f4e13"),
        ("0000:3B:00.0", None)]


def test_the_drivers_loading_line_gives_the_inventory_its_version_where_no_tool_does(tmp_path: Path) -> None:
    from tests.support.helpers import capture_json

    for loading, version in (
            ("NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.183.01  Sun May 12 19:39:15 UTC 2024", "535.183.01"),
            ("NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  570.124.06  Release Build  (dvs-builder@U16)",
             "570.124.06"),
            ("NVRM: loading NVIDIA UNIX Open Kernel Module for aarch64  560.35.03  Release Build", "560.35.03"),
            ("NVRM: loading NVIDIA UNIX ppc64le Kernel Module  418.87.01  Thu Aug  8 15:53:22 CDT 2019", "418.87.01")):
        text = (f"[    4.100200] {loading}\n"
                "[    9.2] NVRM: GPU 0000:3b:00.0: RmInitAdapter failed! (0x22:0x38:852)\n")
        assert kernel.parse(_lines(text)).driver == version
        software = capture_json(tmp_path, text, "inventory")["software"]
        assert isinstance(software, dict) and software["driver_version"] == version
