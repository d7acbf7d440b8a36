"""R5A (issue 46): an amdgpu page fault whose client is one of the module's own firmware engines. gmc_v9_0.c …
gmc_v12_0.c print the fault ('[mmhub] page fault (src_id:0 ring:153 vmid:0 pasid:0)'), then its status and
client ('MMVM_L2_PROTECTION_FAULT_STATUS:0x00000D32', 'Faulty UTCL2 client ID: MP0 (0x6)'). MP0 is the PSP (the
security processor that loads the firmware) and MP1 the SMU: such a fault is the module's firmware touching
memory at its bring-up or after a reset that left the module in an unclean state (a GPU passed through to a VM
and handed on without a full reset), not a process's work: kernel.py's amd_page_fault event on that module is
read as amd_firmware_page_fault (kernel_messages.yaml)."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from gpuvet.captures import amd_hang_outcome
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.text import Line

if TYPE_CHECKING:
    from gpuvet.captures.kernel import KernelParse

KIND = "amd_firmware_page_fault"
_CLIENT = re.compile(r"\bFaulty UTCL2 client ID: (MP[01])\b")
_AFTER = 12  # lines after the fault line its status lines are looked for in


# the module's own SMU messages unanswered (kernel_phrases' amd_smu_no_answer) beside one of these on the same module
# are their echo: the hang, reset, failed bring-up or lost module says it, at its own severity
_STRONGER = frozenset(
    (
        "amd_smu_hung",
        "amd_recovery_failed",
        "amd_smu_setup_failed",
        "amd_init_failed",
        "amd_reset_failed",
        "amd_device_lost",
        "amd_mes_unresponsive",
        "amd_ring_timeout",
        "amd_gpu_reset",
        "amd_reset_resumed",
        "amd_ring_recovered",
        "amd_reset_dumped",
        "amd_ring_test_failed",
        *amd_hang_outcome.KINDS,
    )
)


def read(lines: list[Line], out: KernelParse, marks: Marks | None = None) -> KernelParse:
    """``out`` with each amd_page_fault event whose status lines name a firmware client (MP0, MP1) on the same module
    read as amd_firmware_page_fault, and the SMU's unanswered messages left to a stronger event of their module."""
    _bare_powerplay(lines, out, marks)
    stronger = {e.module for e in out.events if e.kind in _STRONGER}
    out.events = [e for e in out.events if e.kind != "amd_smu_no_answer" or e.module not in stronger]
    if not any(e.kind == "amd_page_fault" for e in out.events):
        return out
    clients = [lines[i] for i in holding(lines, ("client ID: MP",), marks) if _CLIENT.search(lines[i].text)]
    if not clients:
        return out
    out.events = [
        replace(e, kind=KIND) if e.kind == "amd_page_fault" and _own(e.module, e.line, clients) else e for e in out.events
    ]
    out.claimed.update(ln.no for ln in clients)
    return out


def _own(module: str, at: int, clients: list[Line]) -> bool:
    """A firmware client's line just after the fault line ``at``, on the same module (its bus id, any case)."""
    return any(0 < ln.no - at <= _AFTER and module.lower() in ln.text.lower() for ln in clients)


# powerplay's SMU lines as FreeBSD's drm-kmod port prints them, bare (no 'amdgpu' prefix, no bus id): smu7_smumgr.c's
# ' failed to send message 254 ret is 0 ' (and its 'pre message'), the AVFS set-up's '[AVFS] Something is broken'; a
# line indented further is a wrapped message's continuation or a trace's (kernel_wrapped joins the former)
_BARE = {
    "amd_recovery_failed": re.compile(r"^ ?failed to send (?:pre )?message [0-9a-fA-F]{1,4} ret is 0\s*$"),
    "amd_smu_no_answer": re.compile(r"^ ?\[AVFS\] Something is broken\b"),
}


def _bare_powerplay(lines: list[Line], out: KernelParse, marks: Marks | None) -> None:
    """Bare powerplay lines in a text whose other lines show amdgpu (a drm-kmod console log): the same kinds as the
    prefixed lines (kernel.py, kernel_phrases), on the module no line places."""
    from gpuvet.captures.kernel import AMD_NO_BUS, KernelEvent

    found: dict[str, list[Line]] = {}
    for i in holding(lines, ("failed to send", "[AVFS]"), marks):
        ln = lines[i]
        kind = next((k for k, p in _BARE.items() if ln.no not in out.claimed and p.match(ln.text)), None)
        if kind is not None:
            found.setdefault(kind, []).append(ln)
    if not found or not any("amdgpu" in lines[i].text for i in holding(lines, ("amdgpu",), marks)):
        return
    for kind, own in found.items():
        out.events.append(KernelEvent(kind, AMD_NO_BUS, own[0].text.strip()[:240], own[0].no, len(own)))
        out.claimed.update(ln.no for ln in own)
