"""Doctor's step for the NVLink domain's own state, as nvidia-smi -q's Fabric section prints it: a
module whose registration with the fabric manager is not Completed, whose status is an error
(Insufficient Resources, …) or whose health summary is not Healthy cannot run the domain's
collectives, whatever its links say. A capture without the section says nothing about it."""

from __future__ import annotations

from gpuvet.captures.records import ModuleHealth
from gpuvet.doctor.evidence import Evidence
from gpuvet.doctor.model import Cited, finding
from gpuvet.doctor.outcome import HIGH, Outcome, clear, confirmed, unknown
from gpuvet.node import vendor_tools


def _problem(h: ModuleHealth) -> str | None:
    state, status, health = h.fabric_state, h.fabric_status, h.fabric_health
    if state is not None and state.lower() != "completed":
        return f"fabric state {state}: not registered with the NVLink fabric"
    if status is not None and status.lower() != "success":
        return f"fabric status {status}: the fabric manager could not set the module up"
    if health is not None and health.lower() != "healthy":
        return f"fabric health {health}"
    return None


def fabric_registration(ev: Evidence) -> Outcome:
    read = [h for h in ev.captures.health if h.fabric_state or h.fabric_status or h.fabric_health]
    if not read:
        return unknown("no captured Fabric section (give nvidia-smi -q, or -q -d FABRIC, from an NVSwitch node)")
    found = [finding("fabric_unregistered", HIGH, module=h.module, fix=f"{vendor_tools.FABRIC_STATE_LOOK}; "
                     f"{vendor_tools.FABRIC_STATE_FIX}", reading=problem, state=h.fabric_state,
                     status=h.fabric_status, health=h.fabric_health)
             for h in read if (problem := _problem(h)) is not None]
    if found:
        return confirmed(f"{len(found)} module(s) not in the NVLink domain", *found)
    source = ev.smi_source()
    return clear(f"{len(read)} module(s) registered with the NVLink fabric",
                 *(Cited(source, "Fabric State / Status", f"{h.fabric_state} / {h.fabric_status}", h.module)
                   for h in read))
