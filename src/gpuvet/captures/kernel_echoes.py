"""Kernel events that are another event seen again (issue 46): the cause is the finding, its echo is not a
second one; and an event the rest of the log explains (the probe not called for a GPU vfio-pci holds). Kept
apart from kernel.py's reading so each stays one job."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol, TypeVar

from gpuvet.captures import pci_resources
from gpuvet.captures.smi_words import HANDLE_KINDS, handle_words_kind

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from gpuvet.captures.kernel import KernelEvent
    from gpuvet.captures.text import Line


class _Event(Protocol):
    @property
    def kind(self) -> str: ...

    @property
    def module(self) -> str: ...

    @property
    def line(self) -> int: ...


E = TypeVar("E", bound=_Event)

# an amdgpu hang (a ring timed out, the module reset), seen again from the display as a fence timeout
_HANGS = frozenset(("amd_hang_recovered", "amd_hang_outcome_cut",  # AGX1: a hang read with its outcome
                    "amd_ring_timeout", "amd_ring_recovered", "amd_gpu_reset", "amd_reset_resumed", "amd_reset_failed",
                    "amd_recovery_failed", "amd_mes_unresponsive", "amd_ring_test_failed"))
PASSTHROUGH = "probe_not_called_passthrough"
# kinds no pattern reads (kernel_messages.yaml): a read kind the rest of the log explains; a GPU function's BAR the
# PCI enumeration could not assign, or the NVIDIA driver found invalid, or one left small (pci_enum.KIND, NVRM_KIND,
# SMALL_KIND, AMD_SMALL_KIND; either of the first two in a virtual machine, GUEST_KIND); nvidia-smi's lost handle in
# NVML's 'Not Found' (HANDLE_NOT_FOUND: handle_kind), and in NVML's other words for a module's state (smi_words)
HANDLE_NOT_FOUND = "smi_handle_not_found"
DERIVED = (PASSTHROUGH, "pci_bar_unassigned", "bar_invalid", "bar_small", "amd_bar_not_resized", "intel_bar_reduced",
           "bar_unmapped_guest", "amd_hang_recovered", "amd_hang_outcome_cut",  # AGX1: amd_hang_outcome.KINDS
           HANDLE_NOT_FOUND, *HANDLE_KINDS, *pci_resources.KINDS,  # a GPU's function or port off the bus
           "pci_vf_bar_unassigned",  # R10A: pci_any_bars.VF_KIND
           "guest_gpu_not_started")  # FX68F: kernel_guest.GUEST_KIND
# the driver said the module did not start (it refused it, its probe, init or firmware failed, its BAR had no window):
# nvidia-smi's 'Unable to determine the device handle' for it, and an unnamed failure line of the same start, say it
# again - the module was never lost from the bus
NOT_STARTED = frozenset(("init_failed", "unsupported_by_driver", "probe_failed", "probe_not_called", "gsp_failed",
                         "gfw_boot_failed", "fsp_boot_failed", "amd_init_failed", "intel_init_failed", "cannot_attach",
                         "bar_invalid", "bar_unmapped_guest", "pci_bar_unassigned", "driver_load_oops"))
# (the cause, its echo): another driver owning the devices (the NVIDIA probe never called), seen again as
# 'No NVIDIA devices probed' or a failed probe (and a module the driver refused or could not initialise, seen
# again as 'No NVIDIA graphics adapter found'); a hung ring's fences found signalled by the fallback timer only
_ECHOES = ((_HANGS, "amd_fence_timeout"), (_HANGS, "amd_fence_fallback"),
           # amdkfd's queue-eviction fence timeout ('qcm fence wait loop timeout expire') the reset then recovered
           (_HANGS, "amd_queue_fence_timeout"),
           (_HANGS, "amd_vm_flush_timeout"),  # issue 46: a TLB flush or a KIQ fence not acknowledged during that hang
           (_HANGS, "amd_reset_dumped"),  # R4A: the device coredump the hang's timeout or reset wrote, said again
           (frozenset(("probe_not_called", PASSTHROUGH)), "probe_failed"),
           # the GSP firmware that did not start while the driver initialised the module: RmInitAdapter's reason
           # ('RmInitAdapter: Cannot initialize GSP firmware RM'), the one init failure, not a second cause
           (frozenset(("init_failed",)), "gsp_failed"),
           # a module the driver refused (the open module's GSP-RM cannot run on it: 'missing NVDEC0 engine'), seen
           # again as 'RmInitAdapter failed': the refusal is the reason the module did not initialise
           (frozenset(("unsupported_by_driver",)), "init_failed"),
           # a full reset's own line after it reset the chip ('GPU reset succeeded, trying to resume'): the reset
           # 'GPU reset begin!' opened, said again; alone (a log cut or grepped to it) it is the reset
           (frozenset(("amd_gpu_reset",)), "amd_reset_resumed"),
           # amdgpu's reset re-starts the IP blocks: their failure then ('PSP create ring failed!' after 'PSP is
           # resuming...') is the failed reset's own step on that module, not a second cause beside it
           (frozenset(("amd_reset_failed", "amd_recovery_failed")), "amd_init_failed"),
           # an engine's ring or IB test failing while a hang or reset on that module is under way (the reset
           # re-runs every test) is that reset's step, not a module that never came up
           (_HANGS - {"amd_ring_test_failed"}, "amd_ring_test_failed"),
           (NOT_STARTED, "driver_init_failed"), (NOT_STARTED | {"driver_init_failed"}, "smi_no_handle"),
           (NOT_STARTED | {"driver_init_failed"}, HANDLE_NOT_FOUND))
_NOT_FOUND = re.compile(r"device handle for .{0,60}?:\s*Not Found\b", re.I)


def handle_kind(text: str) -> str:
    """nvidia-smi's 'Unable to determine the device handle for GPU …': NVML's 'Not Found' is a module the driver
    lists but never initialised (HANDLE_NOT_FOUND); a reset needed, external power missing, a corrupted infoROM, an
    interrupt fault or the caller refused are NVML's words for those states (smi_words); its other words (Unknown
    Error, GPU is lost) one it no longer reaches (smi_no_handle)."""
    return HANDLE_NOT_FOUND if "Not Found" in text and _NOT_FOUND.search(text) else handle_words_kind(text)


# an echo that names no module (the driver's word for the whole probe): any module's cause explains it
_NODE_ECHOES = ((frozenset(("probe_not_called", PASSTHROUGH, "probe_failed", "unsupported_by_driver",
                            "init_failed")), "no_adapter"),)
# vfio-pci given an NVIDIA function (its 'add [10de:…]' line, vfio-pci.ids=10de:… on the kernel's command line):
# a GPU passed through to a VM on purpose; a framebuffer driver's own line (nouveau 0000:41:00.0: …) owns one
_VFIO_NVIDIA = re.compile(r"vfio[-_]pci(?:\.ids=(?:[0-9a-fA-F]{4}:[0-9a-fA-F]{4},)*|: add \[)10de:", re.I)
_FB_OWNER = re.compile(r"\b(?:nouveau|nvidiafb|rivafb|rivatv) [0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.")


def without_echoes(events: Sequence[E]) -> list[E]:
    """The events less each echo on a module whose cause is there: alone, an echo is a finding."""
    out = list(events)
    for causes, echo in _ECHOES:
        held = {e.module for e in out if e.kind in causes}
        out = [e for e in out if not (e.kind == echo and e.module in held)]
    for causes, echo in _NODE_ECHOES:
        if any(e.kind in causes for e in out):
            out = [e for e in out if e.kind != echo]
    return _crash_leads(out)


def _crash_leads(events: list[E]) -> list[E]:
    """FX68C: a driver's unnamed error line just before an oops in its code, or in that oops's trace (its RIP), is
    the crash's: said in gpu_driver_oops's finding, not a lead of its own."""
    from gpuvet.captures import kernel_driver_oops, kernel_unknown

    crashed = [e.line for e in events if e.kind == kernel_driver_oops.KIND]
    if not crashed:
        return events
    return [e for e in events if not (e.kind == kernel_unknown.UNNAMED and kernel_driver_oops.around(e.line, crashed))]


def passed_through(events: list[KernelEvent], texts: Iterable[str]) -> list[KernelEvent]:
    """'probe routine was not called' where the log shows vfio-pci holding an NVIDIA function and no framebuffer
    driver's own line: the passthrough's (probe_not_called_passthrough), not a module that failed to come up."""
    if not any(e.kind == "probe_not_called" for e in events):
        return events
    vfio = fb = False
    for text in texts:
        if "vfio" in text and _VFIO_NVIDIA.search(text):
            vfio = True
        fb = fb or ("fb " in text or "nouveau " in text or "rivatv " in text) and _FB_OWNER.search(text) is not None
    if not vfio or fb:
        return events
    return [replace(e, kind=PASSTHROUGH) if e.kind == "probe_not_called" else e for e in events]


_RESET_DONE = re.compile(r"\b(?:MODE[12]|BACO|PCI|mode1|mode2) reset\b|reset(?:\(\d+\))? succeeded", re.I)
_TEARDOWN = re.compile(r"\bring \S+ test failed|\bIB test (?:failed|timed out)|\bib ring test failed|"
                       r"\bK[GC]Q (?:dis|en)able failed", re.I)
_TORN_DOWN = frozenset(("amd_recovery_failed", "amd_ring_test_failed"))


def recovered(lines: Sequence[Line], hits: list[tuple[int, str, Line]]) -> list[tuple[int, str, Line]]:
    """A ring or IB test (KIQ's, any engine's) or a KGQ/KCQ disable failing while a reset tears the engines down
    is the driver on its way to a full (MODE1, BACO) reset: a failure only when no such reset or success follows."""
    if not any(kind in _TORN_DOWN for _, kind, _ in hits):
        return hits  # nothing to weigh against a reset: the log is not searched for one
    done = [i for i, ln in enumerate(lines) if "reset" in ln.text.lower() and _RESET_DONE.search(ln.text)]
    return [(i, kind, ln) for i, kind, ln in hits
            if not (kind in _TORN_DOWN and _TEARDOWN.search(ln.text) and any(d > i for d in done))]
