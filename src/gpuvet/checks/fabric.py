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
    if f.health not in (None, "healthy"):  # registered, the fabric degraded (degraded(); doctor: fabric_degraded)
        return f"the NVLink fabric reports it {f.health}"
    return None


def degraded(state: str | None, status: str | None, health: str | None) -> bool:
    """Issue 46 (FX68E): registered (State Completed, Status Success) and yet not Healthy: the module is in its
    NVLink domain, the fabric under it is degraded (NVML's nvmlGpuFabricInfo_v3 health mask: bandwidth degraded,
    route recovery in progress, route unhealthy, access timeout recovery). A warning of its own, never 'not
    registered'."""
    return ((state or "").lower() == "completed" and (status or "success").lower() == "success"
            and (health or "healthy").lower() != "healthy")
