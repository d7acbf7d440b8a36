"""Whether each module has joined its switched NVLink domain: registered with the fabric manager
(state completed, status success) and not called unhealthy. A module that has not joined cannot run
the domain's collectives, whatever its links say. A board without a fabric manager (PCIe cards, a
mesh) answers "not supported": nothing to judge."""

from __future__ import annotations

from collections.abc import Sequence

from gpuvet.backends.readings import ModuleHealth, Unavailable
from gpuvet.checks.fabric import live_problem
from gpuvet.checks.model import Cited
from gpuvet.health.model import Finding, Status
from gpuvet.node import vendor_tools

CHECK = "fabric_state"


def fabric_state(readings: Sequence[ModuleHealth], source: str) -> list[Finding]:
    found: list[Finding] = []
    cited: list[Cited] = []
    for m in readings:
        s = m.fabric
        if isinstance(s, Unavailable) or s.state == "not_supported":
            continue
        problem = live_problem(s)
        if problem:
            found.append(Finding(CHECK, Status.FAIL, f"{m.id}: {problem}", m.id,
                                 fix=f"{vendor_tools.FABRIC_STATE_LOOK}; {vendor_tools.FABRIC_STATE_FIX}"))
        cited.append(Cited(source, "fabric state / status", f"{s.state} / {s.status or 'n/a'}", m.id))
    if found:
        return found
    if not cited:
        return [Finding(CHECK, Status.SKIP, "no switched NVLink domain (no fabric manager to ask)")]
    return [Finding(CHECK, Status.OK, f"{len(cited)} module(s) registered with the NVLink fabric",
                    evidence=tuple(cited))]
