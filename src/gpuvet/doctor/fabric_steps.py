"""Doctor's step for the NVLink domain's own state, as nvidia-smi -q's Fabric section prints it: a
module whose registration with the fabric manager is not Completed, whose status is an error
(Insufficient Resources, …) or whose health summary is not Healthy cannot run the domain's
collectives, whatever its links say. A capture without the section says nothing about it."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from gpuvet.backends.readings import FabricState
from gpuvet.captures.records import ModuleHealth
from gpuvet.checks.fabric import degraded, live_problem
from gpuvet.doctor.evidence import Evidence
from gpuvet.doctor.model import Cited, Finding, finding
from gpuvet.doctor.outcome import HIGH, MEDIUM, Outcome, clear, confirmed, unknown
from gpuvet.errors import GpuvetError
from gpuvet.node import vendor_tools
from gpuvet.node.bus import bus_key

if TYPE_CHECKING:  # the parser loads when a fabric manager log was read
    from gpuvet.captures.fabric_manager import FmEvent


def _problem(h: ModuleHealth) -> str | None:
    state, status, health = h.fabric_state, h.fabric_status, h.fabric_health
    if degraded(state, status, health):  # FX68E: registered, the fabric under it degraded (fabric_degraded)
        detail = f" ({h.fabric_health_detail})" if h.fabric_health_detail else ""
        return f"registered (State {state}, Status {status or 'not printed'}) but fabric health {health}{detail}"
    if state is not None and state.lower() != "completed":
        return f"fabric state {state}: not registered with the NVLink fabric"
    if status is not None and status.lower() != "success":
        return f"fabric status {status}: the fabric manager could not set the module up"
    if health is not None and health.lower() != "healthy":
        return f"fabric health {health}"
    return None


def _live(ev: Evidence) -> Outcome | None:
    """The node's own modules (live or simulated) as NVML's fabric info gives them; None when it
    has no fabric state to give (a capture, a board without a fabric manager)."""
    if ev.backend is None or ev.backend.captured:
        return None
    try:
        modules = ev.backend.health().modules
    except GpuvetError:
        return None
    states = [(m.id, m.fabric) for m in modules if isinstance(m.fabric, FabricState)
              and m.fabric.state != "not_supported"]
    if not states:
        return None
    source = "simulated node (a model, not hardware)" if ev.backend.simulated else "NVML fabric info"
    found = [finding("fabric_unregistered", HIGH, module=mid, fix=f"{vendor_tools.FABRIC_STATE_LOOK}; "
                     f"{vendor_tools.FABRIC_STATE_FIX}", reading=problem, state=f.state, status=f.status,
                     health=f.health)
             for mid, f in states if (problem := live_problem(f)) is not None]
    if found:
        return confirmed(f"{len(found)} module(s) not in the NVLink domain", *found)
    return clear(f"{len(states)} module(s) registered with the NVLink fabric",
                 *(Cited(source, "fabric state / status", f"{f.state} / {f.status}", mid) for mid, f in states))


def fabric_registration(ev: Evidence) -> Outcome:
    read = [h for h in ev.captures.health if h.fabric_state or h.fabric_status or h.fabric_health]
    if not read:
        live = _live(ev)
        if live is not None:
            return live
        return unknown(f"no Fabric section read (give {vendor_tools.GIVE['fabric_section']})")
    found = [finding(kind, HIGH, module=h.module, fix=None if low else f"{vendor_tools.FABRIC_STATE_LOOK}; "
                     f"{vendor_tools.FABRIC_STATE_FIX}", reading=problem,  # degraded: the knowledge base's action
                     state=h.fabric_state, status=h.fabric_status, health=h.fabric_health,
                     carried={"clique": h.fabric_clique} if h.fabric_clique else None)
             for h in read if (problem := _problem(h)) is not None
             for low in [degraded(h.fabric_state, h.fabric_status, h.fabric_health)]
             for kind in ["fabric_degraded" if low else "fabric_unregistered"]]
    if found:
        out = [f for f in found if f.cause == "fabric_unregistered"]
        said = f"{len(out)} module(s) not in the NVLink domain" if out else \
            f"{len(found)} module(s) in the NVLink domain on a degraded fabric"
        return confirmed(said, *found)
    source = ev.smi_source()
    return clear(f"{len(read)} module(s) registered with the NVLink fabric",
                 *(Cited(source, "Fabric State / Status", f"{h.fabric_state} / {h.fabric_status}", h.module)
                   for h in read))


def _kernel_sxids(ev: Evidence, host: str | None = None) -> dict[tuple[str, str], str]:
    """The kernel log's NVSwitch SXids on ``host`` (a log of several hosts) by (switch bus id, SXid): the module
    its finding names."""
    said = {}
    for e in ev.captures.kernel_events:
        if e.kind.startswith("nvswitch_sxid") and e.host == host and len(parts := e.module.split()) == 4:
            said[(bus_key(parts[1]), parts[3])] = e.module
    return said


def _switch_errors(label: str, events: list[FmEvent], pattern: re.Pattern[str],
                   kernel: dict[tuple[str, str], str], cited: list[Cited]) -> list[Finding]:
    """The NVSwitch SXids the fabric manager logged, one finding per switch and SXid (its ports and count
    said), as the kernel's SXid lines are judged: fatal is critical, non-fatal a warn. An SXid the kernel log
    holds too (a bug report has both logs) is the kernel's finding: this log's line is cited beside it."""
    groups: dict[tuple[bool, str, str], list[tuple[FmEvent, str | None]]] = {}
    for e in events:
        if (m := pattern.search(e.text)) is not None:
            key = (m.group(1).lower() == "fatal", bus_key(m.group(3)) if m.group(3) else "bus id not in the log",
                   m.group(2))
            groups.setdefault(key, []).append((e, m.group(4)))
    for (_, where, sxid), hits in list(groups.items()):
        if (module := kernel.get((where, sxid))) is not None:
            cited.append(Cited(label, f"SXid {sxid} on {where}, also in the kernel log (finding '{module}')",
                               hits[0][0].text[:240], where=f"line {hits[0][0].line}, {len(hits)} time(s)"))
            del groups[(_, where, sxid)]
    return [finding("nvswitch_sxid_fatal" if fatal else "nvswitch_sxid", HIGH if fatal else MEDIUM,
                    module=f"nvswitch {where} SXid {sxid}", file=label, line=hits[0][0].line, reading=hits[0][0].text,
                    times=len(hits), ports=_port_numbers(hits))
            for (fatal, where, sxid), hits in groups.items()]


def _port_numbers(hits: list[tuple[FmEvent, str | None]]) -> list[str]:
    """The switch ports an SXid's lines name, each once, in number order."""
    return sorted({p for _, p in hits if p}, key=int)


def fabric_manager(ev: Evidence) -> Outcome:
    """The fabric manager's service as its journal tells it: not needed on a board without NVSwitches
    (NV_WARN_NOTHING_TO_DO: its failure is expected), failed or stopped last (the domain is not set up),
    or running."""
    logs = ev.captures.fabric_manager
    if not logs:
        return unknown("no fabric manager journal (give journalctl -u nvidia-fabricmanager or its "
                       "systemctl status)")
    from gpuvet.captures import fabric_manager as fm_log  # its logs were read: the parser is loaded

    found: list[Finding] = []
    cited: list[Cited] = []
    also: list[Cited] = []  # SXid lines the kernel log holds too: cited, judged by the kernel's step
    for label, log, host in [(label, part, host) for label, whole in logs for host, part in whole.by_host()]:
        before = len(found)  # a log of several hosts: each host's service and switches apart (captures/hosted.py)
        last = log.last_state
        if log.nothing_to_do:
            hit = next(e for e in log.events if e.kind == "nothing_to_do")
            found.append(finding("fabric_manager_not_needed", HIGH, line=hit.line, reading=hit.text, file=label))
        elif last is not None and last.kind in ("failed", "stopped") and (
                cards := fm_log.without_switches([h.product for h in ev.captures.health])) is not None:
            found.append(finding("fabric_manager_not_needed", HIGH, line=last.line, reading=last.text, file=label,
                                 modules=sorted(set(cards))[:8]))  # no NVSwitch-class module: its failure is expected
        elif last is not None and last.kind in ("failed", "stopped"):
            errors = [e.text for e in log.events if e.kind == "error"][-3:]
            found.append(finding("fabric_manager_failed", MEDIUM, line=last.line, reading=last.text, file=label,
                                 errors=errors))
        found += [finding("nvls_setup_failed", MEDIUM, file=label, line=e.line, reading=e.text,
                          module=None) for e in log.events if e.kind == "multicast_failed"][:1]  # one: the same team
        if last is not None:
            cited.append(Cited(label, "fabric manager's last state", f"{last.kind} (line {last.line})"))
        cited += [Cited(label, "fabric manager not needed (gpud)", e.text, f"line {e.line}")  # FX68E: no NVSwitch
                  for e in log.events if e.kind == "not_needed"][:4]
        found += _switch_errors(label, [e for e in log.events if e.kind == "switch_error"], fm_log.SWITCH_ERROR,
                                _kernel_sxids(ev, host), also)
        found[before:] = [replace(f, host=host) for f in found[before:]]
    if found:
        return confirmed(f"{len(found)} fabric manager finding(s)", *found, cited=tuple(also))
    if also and not cited:
        return clear("the fabric manager's SXid line(s) are the kernel log's, judged by its step", *also)
    if not cited:
        return unknown("can't tell: the fabric manager's lines name no start, stop or failure")
    running = any(c.field.startswith("fabric manager's last state") and c.value.startswith("started") for c in cited)
    skipped = [c for c in cited if c.field.startswith("fabric manager not needed")]
    said = "; ".join([*(["the fabric manager is running"] if running else []),
                      *([f"not needed where {len(skipped)} check(s) found no NVSwitch"] if skipped else [])])
    return clear(said or "the fabric manager is running", *cited, *also)
