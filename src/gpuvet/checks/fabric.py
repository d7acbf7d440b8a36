"""A module's registration with its switched NVLink domain, judged once for every job: not
Completed, a failed status or an unhealthy summary keeps it out of the domain's collectives."""

from __future__ import annotations

from gpuvet.backends.readings import FabricState


def live_problem(f: FabricState) -> str | None:
    """What keeps the module out of its NVLink domain, or None when it is in."""
    if f.state != "completed":
        return f"fabric state {f.state.replace('_', ' ')}: not registered with the NVLink fabric"
    if f.status not in (None, "success"):
        return f"fabric status {f.status}: the fabric manager could not set the module up"
    if f.health not in (None, "healthy"):
        return f"fabric health {f.health}"
    return None
