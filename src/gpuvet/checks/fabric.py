"""A module's registration with its switched NVLink domain, judged once for every job: not
Completed, a failed status or an unhealthy summary keeps it out of the domain's collectives."""

from __future__ import annotations

from gpuvet.backends.readings import FabricState


def live_problem(f: FabricState) -> str | None:
    """What keeps the module out of its NVLink domain, or None when it is in: health, validate and
    doctor say it in these words."""
    if f.state != "completed":
        return f"not registered with the NVLink fabric (state {f.state.replace('_', ' ')})"
    if f.status not in (None, "success"):
        return f"NVLink fabric registration failed ({f.status})"
    if f.health not in (None, "healthy"):
        return f"the NVLink fabric reports it {f.health}"
    return None
