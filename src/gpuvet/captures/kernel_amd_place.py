"""Issue 46: two readings of amdgpu's events that need the whole log, not one line (captures/kernel.py's _events,
before the echoes are dropped). A message amdgpu printed without a bus id ('[drm:gfx_v9_0_ring_test_ring [amdgpu]]
*ERROR* … ring 1 test failed') in a log whose amdgpu lines name one module only is that module's: the driver
drives no other there. And a reset the driver called a success ('GPU reset succeeded, trying to resume', 'mode1
reset succeed') whose engines then fail their ring or IB tests did not bring the module back: a failed reset."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from gpuvet.captures import amd_asic_reset, amd_hang_outcome, amd_ras_counts
from gpuvet.captures.kernel_places import AMD_BUS, AMD_NO_BUS
from gpuvet.node.bus import bus_key

if TYPE_CHECKING:
    from gpuvet.captures.kernel import KernelEvent
    from gpuvet.captures.text import Line

_RESETS = frozenset(("amd_gpu_reset", "amd_reset_resumed"))
HANG_KINDS = amd_hang_outcome.KINDS  # the kinds judged() may give a module's hangs
# what fails after a reset when the engines did not come back: a ring or IB self-test, an IP block's resume
_AFTER = ("amd_ring_test_failed", "amd_recovery_failed")
_DONE = re.compile(r"reset(?:\(\d+\))? succeed(?:ed)?\b", re.I)  # the driver's word that the reset itself worked


def settled(lines: list[Line], events: list[KernelEvent], notes: list[str]) -> list[KernelEvent]:
    """``events`` with the bus-less amdgpu ones placed on the log's only amdgpu module, and a reset followed by
    failed engine tests on its module read as the failed reset it was (amd_reset_failed)."""
    placed = amd_asic_reset.weighed(lines, amd_ras_counts.garbled(_placed(lines, events, notes)))  # R12D
    return amd_hang_outcome.judged(lines, _not_back(lines, placed))  # AGX1: its outcome


def _placed(lines: list[Line], events: list[KernelEvent], notes: list[str]) -> list[KernelEvent]:
    """Bus-less amdgpu events moved to the one module the log's amdgpu lines name; merged with that module's
    event of the same kind (the first line kept, the counts added). Two or more modules: left unplaced."""
    if not any(e.module == AMD_NO_BUS for e in events):
        return events
    named = {bus_key(m.group(1)) for ln in lines if "gpu" in ln.text and (m := AMD_BUS.search(ln.text)) is not None}
    if len(named) != 1:
        return events
    only = named.pop()
    merged: dict[tuple[str, str], KernelEvent] = {}
    for e in events:
        e = replace(e, module=only) if e.module == AMD_NO_BUS else e
        had = merged.get((e.kind, e.module))
        merged[(e.kind, e.module)] = e if had is None else replace(
            had if had.line <= e.line else e, count=had.count + e.count)
    notes[:] = [n for n in notes if f"'{AMD_NO_BUS}'" not in n]
    notes.append(f"kernel log: amdgpu message(s) naming no module read as {only}'s, the only module the log's "
                 "amdgpu lines name")
    return list(merged.values())


def _not_back(lines: list[Line], events: list[KernelEvent]) -> list[KernelEvent]:
    """A reset on a module whose engines fail after the driver said the reset itself succeeded: amd_reset_failed,
    its text the reset's line and the first failure after it."""
    out = list(events)
    for k, reset in enumerate(out):
        if reset.kind not in _RESETS:
            continue
        failed = [e for e in out if e.kind in _AFTER and e.module == reset.module and e.line > reset.line]
        done = [ln.no for ln in lines if reset.line <= ln.no and "succeed" in ln.text and _DONE.search(ln.text)]
        after = [e for e in failed if any(d < e.line for d in done)]
        if after:
            first = min(after, key=lambda e: e.line)
            out[k] = replace(reset, kind="amd_reset_failed",
                             text=f"{reset.text[:160]} - then, line {first.line}: {first.text[:160]}")
    return out
