"""A program's CUDA error read with what the same captures say of the modules (issue 46, AX1): the runtime's words
alone name no module's state, the tools' listing beside them does.

- 'no CUDA device' (cudaErrorNoDevice, gpu-burn's 'No CUDA devices', deviceQuery's) where the captures show a
  module lost from the bus or needing a reset: that module is the cause (its own finding), the program's view of it
  an echo, dropped.
- the same where nvidia-smi lists the eight SXM modules of an NVSwitch baseboard: CUDA can use none of the modules
  the driver sees (the fabric manager not running, most often): cuda_cannot_use_listed_modules, not the program's
  own view of a listing (program_sees_no_listed_module, which a PCIe card's wrong CUDA_VISIBLE_DEVICES is).
- error 46 ('all CUDA-capable devices are busy or unavailable') where nvidia-smi shows a module in Exclusive_Process
  or Prohibited compute mode: that mode refusing a second process, said on the module (info), not other
  processes slowing it."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from gpuvet.captures.records import AppError
from gpuvet.knowledge import off_bus_xids
from gpuvet.node.bus import bus_key

if TYPE_CHECKING:
    from gpuvet.doctor.evidence import Evidence

NOT_NAMED = "bus id not in the log"  # captures/kernel.py NO_BUS's words (no parser loaded for a simulated node)
CUDA_UNUSABLE = "cuda_unusable_listed"  # app_errors' no_device on a switched board's listed modules
EXCLUSIVE = "devices_busy_exclusive"  # error 46 on a module in an exclusive compute mode
_NO_DEVICE = frozenset(("no_device", "torch_no_cuda", "runtime_no_device"))  # CUDA's, a framework's 'no device'
_LOST = frozenset(("module_fell_off_bus", "module_needs_reset"))  # a module's state that takes it from CUDA
# the SXM modules of an NVSwitch baseboard (HGX/DGX A100, H100, H200, B200; DGX-2's V100-SXM3): not PCIe or NVL cards
_SWITCHED = re.compile(r"SXM[345]|HBM3|\b(?:H200|H20|H800|B100|B200|GB200|B300)\b", re.I)
_CARD = re.compile(r"PCIe|\bNVL\b", re.I)
# CUDA's and NVML's words for a module's own fault: a line naming no module puts it on "bus id not in the log"
_PLACED = frozenset(("nvlink_uncorrectable", "nvml_reset_required", "nvml_inforom", "nvml_power"))
BOARD = 8  # an HGX baseboard's modules: a 4-module board joins them directly, with no NVSwitch to manage
_EXCLUSIVE_MODES = ("E.", "Exclusive", "Prohibited")  # the table's 'E. Process' / 'E. Thread', -q's Exclusive_Process


def rewritten(ev: Evidence, errors: list[tuple[str, AppError]], listed: bool) -> list[tuple[str, AppError]]:
    """The program error lines as the captures' other tools explain them (this module's rules); ``listed``: a tool
    that asks the driver lists modules in the captures."""
    lost, switched, held = _lost(ev), listed and _switched_board(ev), _exclusive(ev)
    out: list[tuple[str, AppError]] = []
    placed = {label for label, e in errors if e.kind == "job_gpu_busy"}  # error 46 on a job's GPU (job_view)
    for label, e in errors:
        if e.kind == "devices_busy" and label in placed:
            continue  # the same line, read with the job's GPU it names
        if e.kind in _NO_DEVICE and lost:
            continue  # the lost module is the cause; CUDA finding none is its echo
        if e.kind == "no_device" and switched:
            e = replace(e, kind=CUDA_UNUSABLE)
        if e.kind in _PLACED:  # a module's own fault: its bus id as the kernel's readers spell it, or none named
            e = replace(e, module=NOT_NAMED if e.module is None else bus_key(e.module))
        if e.kind == "devices_busy" and held:
            out += [(label, replace(e, kind=EXCLUSIVE, module=bus, times=1)) for bus in held]
            continue
        out.append((label, e))
    return out


def _lost(ev: Evidence) -> bool:
    """A module the captures show lost from the bus or needing a reset (a driver's or nvidia-smi's line, an Xid the
    knowledge base marks off the bus)."""
    c = ev.captures
    if any(x.code in off_bus_xids() and not x.quoted for x in c.xids):
        return True
    if not c.kernel_events:
        return False
    from gpuvet.captures.kernel_messages import kernel_message_catalog  # read only where a kernel line was

    table = kernel_message_catalog()
    return any(e.kind in table and table[e.kind].cause in _LOST and not e.quoted for e in c.kernel_events)


def _switched_board(ev: Evidence) -> bool:
    """The modules the captures list are an NVSwitch baseboard's: eight or more, every one an SXM module."""
    models = [m.model for m in ev.inventory.modules] if ev.inventory is not None else []
    return len(models) >= BOARD and all(_SWITCHED.search(m) and not _CARD.search(m) for m in models)


def _exclusive(ev: Evidence) -> list[str]:
    """The modules nvidia-smi shows in an exclusive or prohibited compute mode (their bus ids)."""
    return list(
        dict.fromkeys(
            m.bus_id for m in ev.captures.smi_text if m.fields.get("Compute Mode", "").startswith(_EXCLUSIVE_MODES)
        )
    )
