"""A GPU function lspci -vvv shows with bus mastering off (Control: … BusMaster-) and no kernel driver named in
use (issue 46, batch S): no driver has enabled it, its probe never ran or failed, so nothing can use it (warn,
gpu_no_driver_bound), whether the excerpt ends before its driver lines or lists the modules with none in use.
One vfio-pci holds for a VM, or one with BusMaster+, is not judged. Written in lspci's layout; bus ids made up."""

from __future__ import annotations

from pathlib import Path

from gpuvet.captures import links
from gpuvet.captures.text import clean
from tests.support.helpers import capture_findings

_HEAD = ("b1:00.0 3D controller: NVIDIA Corporation GH100 [H100 PCIe] (rev a1)\n"
         "\tSubsystem: NVIDIA Corporation Device 1626\n"
         "\tControl: I/O- Mem+ BusMaster{m} SpecCycle- MemWINV- VGASnoop- ParErr- Stepping- SERR- FastB2B- DisINTx-\n"
         "\tInterrupt: pin A routed to IRQ {irq}\n"
         "\tCapabilities: [48] MSI: Enable{e} Count=1/16 Maskable+ 64bit+\n")
_OFF = _HEAD.format(m="-", irq=255, e="-")


def test_bus_mastering_off_with_no_driver_is_a_gpu_no_driver_has_enabled(tmp_path: Path) -> None:
    parsed = links.parse_lspci(clean(_OFF).lines).not_enabled
    assert [(g.bus_id, g.vendor, g.msi, g.irq) for g in parsed] == [("B1:00.0", "NVIDIA", "Enable-", 255)]
    assert capture_findings(tmp_path, _OFF) == {("gpu_no_driver_bound", "B1:00.0"): "warn"}
    listed = _OFF + "\tKernel modules: nvidiafb, nouveau, nvidia_drm, nvidia\n\n"
    assert capture_findings(tmp_path, listed) == {("gpu_no_driver_bound", "B1:00.0"): "warn"}


def test_a_function_held_for_a_vm_or_enabled_is_not_judged(tmp_path: Path) -> None:
    held = _OFF + "\tKernel driver in use: vfio-pci\n\tKernel modules: nouveau, nvidia\n\n"
    assert links.parse_lspci(clean(held).lines).not_enabled == []
    on = _HEAD.format(m="+", irq=140, e="+") + "\tKernel driver in use: nvidia\n\n"
    assert capture_findings(tmp_path, on) == {}


def test_a_gpu_functions_memory_regions_and_numa_node_are_said() -> None:
    text = _OFF + ("\tNUMA node: 1\n"
                   "\tRegion 0: Memory at 92000000 (32-bit, non-prefetchable) [size=16M]\n"
                   "\tRegion 1: Memory at 38000000000 (64-bit, prefetchable) [size=128G]\n")
    notes = links.parse_lspci(clean(text).lines).notes
    assert "lspci: NVIDIA B1:00.0: memory regions Region 0 16M, Region 1 128G; NUMA node 1" in notes
