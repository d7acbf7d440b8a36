"""Issue 46 (AGX1): an amdgpu hang read with its outcome. After 'ring <name> timeout' the driver (amdgpu_job.c,
amdgpu_job_timedout) first tries a soft recovery ('ring gfx timeout, but soft recovered'), then a ring reset
('Starting <ring> ring reset', 'Ring <ring> reset succeeded'), then a full reset (amdgpu_device.c: 'GPU reset
begin!', 'GPU reset succeeded, trying to resume', 'GPU reset(N) succeeded!' or 'GPU reset(N) failed'). An engineer
reads a hang the driver recovered from once or twice as the job's loss (warn: watch for repeats), a failed reset
as critical, and a hang whose outcome the log does not hold (a paste cut after 'GPU reset begin!') as a hang of
unknown outcome (warn, said so). RING_RESETS_REPEATED hangs on one module stay the critical module_hung_reset."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from gpuvet.captures.kernel_places import AMD_BUS
from gpuvet.node.bus import bus_key

if TYPE_CHECKING:
    from gpuvet.captures.kernel import KernelEvent
    from gpuvet.captures.text import Line

RECOVERED = "amd_hang_recovered"  # kernel_messages.yaml: module_hang_recovered (warn)
CUT = "amd_hang_outcome_cut"  # kernel_messages.yaml: module_hang_outcome_unknown (warn)
KINDS = frozenset((RECOVERED, CUT))
REPEATED = 3  # hangs on one module from which on they are a module that keeps hanging (kernel.RING_RESETS_REPEATED)
TAIL = 8  # lines: a hang this close to the log's end whose outcome is not there had it cut (kernel.RING_WINDOW)
_HANGS = ("amd_ring_timeout", "amd_gpu_reset", "amd_reset_resumed")
# what says the module did not come back (the failure, a lost device, a silent SMU or MES): judged as before
_LOST = frozenset(("amd_reset_failed", "amd_recovery_failed", "amd_device_lost", "amd_smu_hung", "amd_mes_unresponsive",
                   "amd_aer_unrecovered", "amd_ring_test_failed"))
_TIMEOUT = re.compile(r"\bring (\S+) timeout\b", re.I)
_SOFT = re.compile(r"\bsoft recovered\b", re.I)
_BEGIN = re.compile(r"\bGPU reset begin\b|\bStarting \S+ ring reset\b", re.I)
_BACK = re.compile(r"\bGPU reset(?:\(\d+\))? succeeded\b|\bmode\d? reset succeed", re.I)
_RING_BACK = re.compile(r"\bRing (\S+) reset succe(?:eded|ss)\b", re.I)
_FAILED = re.compile(r"\bGPU reset(?:\(\d+\))? failed\b|\bGPU Recovery Failed\b|\bring \S+ reset failed\b", re.I)
_WORDS = ("timeout", "reset", "Reset", "recovered", "Recovery")
# the full reset's kind as the driver names it (amdgpu_device.c, amdgpu_reset.c: 'MODE2 reset', 'GPU BACO reset',
# 'GPU pci config reset'): cited with the outcome, as an engineer reads which reset recovered the module
_MODE = re.compile(r"\b(MODE[0-2]|BACO|pci config)\s+reset\b(?!\s+(?:begin|failed))", re.I)


def judged(lines: list[Line], events: list[KernelEvent]) -> list[KernelEvent]:
    """``events`` with one module's amdgpu hangs read as one event of their outcome: all recovered (RECOVERED),
    the last one's recovery begun and its outcome cut from the log (CUT); a failed or lost module, a hang with no
    outcome in a log that goes on, hangs on two modules, or REPEATED hangs and more: unchanged (module_hung_reset)."""
    hangs = [e for e in events if e.kind in _HANGS]
    if not hangs or len({e.module for e in hangs}) != 1 or any(e.kind in _LOST for e in events):
        return events
    read = _outcome(lines, hangs[0].module)
    if read is None or read[1] >= REPEATED:
        return events
    kind, n, said = read
    first = min(hangs, key=lambda e: e.line)
    return [e for e in events if e.kind not in _HANGS] + [
        replace(first, kind=kind, count=n, text=f"{first.text[:200]} - {said}")]


def _outcome(lines: list[Line], module: str) -> tuple[str, int, str] | None:
    """(the kind, how many hangs, the outcome in words) of the module's hangs in the log, or None where one failed,
    one has no outcome in a log that goes on, or the last one ends the log with no recovery begun."""
    states: list[str] = []  # per hang: soft, back, open (timed out), begun (its reset started)
    ring: str | None = None  # the open hang's ring
    last = back_at = -TAIL - 1
    modes: list[str] = []  # the full resets' kinds named
    for i, ln in enumerate(lines):
        text = ln.text
        if not any(w in text for w in _WORDS) or ((b := AMD_BUS.search(text)) is not None and
                                                   bus_key(b.group(1)) != module):
            continue  # another module's line
        if _FAILED.search(text):
            return None
        is_open = bool(states) and states[-1] in ("open", "begun")
        if (t := _TIMEOUT.search(text)) is not None:
            if is_open:
                return None  # a hang with no outcome before the next one
            states.append("soft" if _SOFT.search(text) else "open")
            ring, last = t.group(1), i
        elif _BEGIN.search(text):
            if not is_open:
                states.append("open")  # a reset with no ring timeout before it
            states[-1], last = "begun", i
        elif (r := _RING_BACK.search(text)) is not None:
            if is_open and r.group(1) == ring:
                states[-1], back_at = "back", i
        elif _BACK.search(text):
            if is_open:
                states[-1] = "back"
            elif i - back_at > TAIL:
                states.append("back")  # a reset's success alone (the log grepped or cut to it)
            back_at = i
        if (m := _MODE.search(text)) is not None and m.group(1).upper() not in modes:
            modes.append(m.group(1).upper())
    return _said(states, len(lines) - last, modes)


def _said(states: list[str], after: int, modes: list[str]) -> tuple[str, int, str] | None:
    if not states or states[-1] == "open" or states[-1] == "begun" and after > TAIL:
        return None  # no hang, a bare timeout, or a reset whose outcome a log that goes on never says
    words = {"soft": "soft recovered", "back": "reset succeeded", "begun": "reset begun, outcome not in the log"}
    said = f"{len(states)} hang(s) on the module: " + ", ".join(words[s] for s in states)
    said += f" ({', '.join(modes)} reset)" if modes else ""
    if states[-1] != "begun":
        return RECOVERED, len(states), said
    return CUT, len(states), said + " (the log ends before the reset's outcome: critical if it failed)"
