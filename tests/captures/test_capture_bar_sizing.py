"""Issue 46 (batch Q): a module whose BAR the host could not size or assign, named with that cause from every
way the kernel log says it; lines written here in the driver's and the kernel's own form."""

from __future__ import annotations

from pathlib import Path

from gpuvet.captures import kernel
from gpuvet.captures.text import Line
from tests.support.helpers import capture_findings

ATTACH = "module_cannot_attach"


def _lines(text: str) -> list[Line]:
    return [Line(i + 1, t) for i, t in enumerate(text.splitlines())]


def _invalid(bar: int, fn: str, head: str, indent: str) -> str:
    """nv-pci.c's two-line report, the second line indented under the first one's prefix."""
    return (f"{head}NVRM: This PCI I/O region assigned to your NVIDIA device is invalid:\n"
            f"{indent}NVRM: BAR{bar} is 0M @ 0x0 (PCI:{fn})\n")


def test_the_drivers_invalid_bar_alone_under_any_prefix_is_the_module_it_names(tmp_path: Path) -> None:
    for head in ("[   3.402117] ", "Mar 02 08:11:27 ws01 kernel: ", "<4>[    3.4021] "):
        for bar in (0, 1, 2):
            text = "[   3.40] nvidia-nvlink: Nvlink Core is being initialized, major device number 234\n" + \
                _invalid(bar, "0000:41:00.0", head, " " * len(head))
            assert capture_findings(tmp_path, text) == {(ATTACH, "0000:41:00.0"): "critical"}, (head, bar)
            got = kernel.parse(_lines(text))
            assert [(m.module, m.vendor) for m in got.modules] == [("0000:41:00.0", "NVIDIA")]


def test_a_failed_probe_after_the_invalid_bar_is_one_finding_with_the_bar_as_its_cause(tmp_path: Path) -> None:
    text = (_invalid(0, "0000:07:00.0", "[   21.50] ", "              ") +
            "[   21.51] NVRM: The system BIOS may have misconfigured your GPU.\n"
            "[   21.52] nvidia: probe of 0000:07:00.0 failed with error -1\n"
            "[   21.53] NVRM: The NVIDIA probe routine failed for 1 device(s).\n"
            "[   21.54] NVRM: None of the NVIDIA devices were initialized.\n")
    assert capture_findings(tmp_path, text + text) == {(ATTACH, "0000:07:00.0"): "critical"}
    events = kernel.parse(_lines(text + text)).events
    assert [(e.kind, e.count) for e in events] == [("bar_invalid", 2)]
    assert "BAR0 is 0M" in events[0].text


def test_each_passed_through_module_with_an_unmapped_bar_is_named(tmp_path: Path) -> None:
    text = "".join(_invalid(1, fn, "[9120.06] ", "          ") + f"[9120.07] nvidia: probe of {fn} failed with error -1\n"
                   for fn in ("0000:00:06.0", "0000:00:07.0"))
    text += "[9120.08] NVRM: The NVIDIA probe routine failed for 2 device(s).\n"
    assert capture_findings(tmp_path, text) == {(ATTACH, "0000:00:06.0"): "critical",
                                                (ATTACH, "0000:00:07.0"): "critical"}


def test_a_probe_failure_on_another_module_stays_its_own_finding(tmp_path: Path) -> None:
    text = (_invalid(1, "0000:21:00.0", "[ 5.10] ", "        ") +
            "[ 5.90] nvidia 0000:c1:00.0: some other line\n"
            "[ 5.91] nvidia: probe of 0000:c1:00.0 failed with error -1\n")
    got = capture_findings(tmp_path, text)
    assert got[(ATTACH, "0000:21:00.0")] == "critical"
    assert got[("module_init_failed", "0000:C1:00.0")] == "critical"


def test_a_healthy_boots_bar_assignment_lines_give_no_finding(tmp_path: Path) -> None:
    text = ("[ 0.61] pci 0000:01:00.0: [10de:2684] type 00 class 0x030000 PCIe Legacy Endpoint\n"
            "[ 0.61] pci 0000:01:00.0: BAR 0 [mem 0xf2000000-0xf2ffffff]\n"
            "[ 0.61] pci 0000:01:00.0: BAR 1 [mem 0x7800000000-0x7fffffffff 64bit pref]\n"
            "[ 0.61] pci 0000:01:00.0: BAR 3 [mem 0x8000000000-0x8001ffffff 64bit pref]\n"
            "[ 0.90] pci 0000:01:00.0: BAR 1 [mem 0x7800000000-0x7fffffffff 64bit pref]: assigned\n"
            "[ 4.20] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  560.35.03  Fri Aug 16 21:39:15 UTC 2024\n"
            "[ 4.30] nvidia 0000:01:00.0: vgaarb: changed VGA decodes: olddecodes=io+mem,decodes=none:owns=io+mem\n")
    assert capture_findings(tmp_path, text) == {}


_GPU = "{p} pci 0000:2d:00.0: [10de:2705] type 00 class 0x030000 PCIe Legacy Endpoint\n"
SMALL = "module_bar_small"


def test_an_nvidia_bar1_of_256_mib_is_resizable_bar_not_in_effect_at_info(tmp_path: Path) -> None:
    for p in ("[    1.9031]", "Jun 03 10:00:01 box kernel:"):
        for bar1 in ("{p} pci 0000:2d:00.0: BAR 1 [mem 0x6fe0000000-0x6fefffffff 64bit pref]\n",
                     "{p} pci 0000:2d:00.0: reg 0x14: [mem 0xd0000000-0xdfffffff 64bit pref]\n"):
            text = (_GPU + "{p} pci 0000:2d:00.0: BAR 0 [mem 0xfa000000-0xfaffffff]\n" + bar1).format(p=p)
            assert capture_findings(tmp_path, text) == {(SMALL, "0000:2D:00.0"): "info"}, (p, bar1)
            got = kernel.parse(_lines(text))
            assert [(m.module, m.vendor) for m in got.modules] == [("0000:2D:00.0", "NVIDIA")]


def test_a_bar1_resized_or_large_and_another_vendors_small_bar_stay_clear(tmp_path: Path) -> None:
    resized = (_GPU + "{p} pci 0000:2d:00.0: BAR 1 [mem 0x6fe0000000-0x6fefffffff 64bit pref]\n"
               "{p} pci 0000:2d:00.0: BAR 1 [mem 0x7000000000-0x73ffffffff 64bit pref]: assigned\n").format(p="[ 1.1]")
    intel = ("[ 1.1] pci 0000:03:00.0: [8086:56a0] type 00 class 0x030000 PCIe Endpoint\n"
             "[ 1.1] pci 0000:03:00.0: BAR 1 [mem 0x6fe0000000-0x6fefffffff 64bit pref]\n"
             "[ 4.2] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  560.35.03  Fri Aug 16 21:39:15 UTC 2024\n")
    for text in (resized, intel):
        assert capture_findings(tmp_path, text) == {}


def test_amdgpu_that_could_not_resize_its_vram_bar_is_info_on_its_module(tmp_path: Path) -> None:
    for said in ("amdgpu 0000:0c:00.0: amdgpu: Not enough PCI address space for a large BAR.",
                 "[drm:amdgpu_device_resize_fb_bar [amdgpu]] *ERROR* Problem resizing BAR0 (-28)."):
        text = ("[ 4.01] [drm] amdgpu kernel modesetting enabled.\n"
                "[ 4.02] amdgpu 0000:0c:00.0: amdgpu: Fetched VBIOS from VFCT\n"
                f"[ 4.03] {said}\n"
                "[ 4.04] amdgpu 0000:0c:00.0: amdgpu: VRAM: 16368M 0x0000008000000000 - 0x00000083FEFFFFFF\n")
        assert capture_findings(tmp_path, text) == {(SMALL, "0000:0C:00.0"): "info"}, said


def test_the_small_bar_gives_way_to_the_fault_on_the_same_module(tmp_path: Path) -> None:
    text = (_GPU + "{p} pci 0000:2d:00.0: BAR 1 [mem 0x6fe0000000-0x6fefffffff 64bit pref]\n").format(p="[ 1.1]") + \
        _invalid(1, "0000:2d:00.0", "[ 3.30] ", "         ")
    assert capture_findings(tmp_path, text) == {(ATTACH, "0000:2D:00.0"): "critical"}


def test_the_kernels_bar_failure_on_a_function_the_driver_names_is_that_modules_cause(tmp_path: Path) -> None:
    text = ("[    0.74] pci 0000:65:00.0: BAR 1: no space for [mem size 0x1000000000 64bit pref]\n"
            "[    0.74] pci 0000:65:00.0: BAR 1: failed to assign [mem size 0x1000000000 64bit pref]\n"
            "[    0.75] pci 0000:65:00.1: BAR 0: failed to assign [mem size 0x00004000]\n"
            "[   12.10] NVRM: GPU 0000:65:00.0: RmInitAdapter failed! (0x22:0x56:667)\n"
            "[   12.11] NVRM: GPU 0000:65:00.0: rm_init_adapter failed, device minor number 0\n")
    assert capture_findings(tmp_path, text) == {(ATTACH, "0000:65:00.0"): "critical"}
    assert [e.kind for e in kernel.parse(_lines(text)).events] == ["pci_bar_unassigned"]


def test_in_a_virtual_machine_the_unmapped_bar_is_the_guests_mmio_window() -> None:
    bar = _invalid(2, "0000:00:05.0", "[    1.12] ", "           ")
    for guest in ("[    0.00] Hypervisor detected: KVM\n", "[    0.00] DMI: QEMU Standard PC (Q35 + ICH9, 2009)\n",
                  "[    0.00] DMI: Cloud Hypervisor cloud-hypervisor, BIOS 0\n"):
        events = kernel.parse(_lines(guest + bar)).events
        assert [(e.kind, e.module) for e in events] == [("bar_unmapped_guest", "0000:00:05.0")], guest
    host = "[    0.00] DMI: Supermicro SYS-4029GP-TRT/X11DPG-OT-CPU, BIOS 3.3 02/21/2020\n"
    assert [e.kind for e in kernel.parse(_lines(host + bar)).events] == ["bar_invalid"]
