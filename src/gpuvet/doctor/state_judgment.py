"""One snapshot of a state table read across its own fields, as an engineer reads it at a glance (issue 46, STJ).

A module the table shows ~100 % busy while it draws idle power (a quarter of its design's TDP or less, and well
under the cap printed beside it) is not doing the work its utilization says: its clocks or power are held down by
something the table does not show, an engine hung with a context left on it, or a frozen counter. Busy at high
power is simply busy; a draw at its printed cap is a cap (power_limit's), not idle. Where the capture reads more,
it must agree before anything is said:

- clocks read (-q's SM clock against its maximum): a module at more than half its maximum clock is running
  a light kernel at full speed (a spin-wait, a memory-bound job), not held idle;
- a working performance state (P0-P7) with no clocks read: a light job can't be told from a stuck engine there,
  whether or not a process is listed (a container's view lists none of the host's), so only idle clocks or an
  idle performance state (P8 and lower) make it a finding; with no process listed where the table lists them,
  the finding names the two readings a capture cannot tell apart (a context a crashed process left, or a job in
  another PID namespace);
- identical peers in the snapshot busy too: every module of the job reads so (a collective's kernels spinning
  while one rank waits, a stalled data loader: a software hang the modules are healthy in), not one module's fault.

The design is the catalog's TDP for the model (the cap printed where the model is not in it). Identical peers in
the same snapshot are named beside it (their busy and draw), so the finding reads against its own node."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuvet.doctor.model import Finding, finding
from gpuvet.doctor.outcome import MEDIUM

if TYPE_CHECKING:
    from gpuvet.captures.records import ListedModule, SmiTextModule
    from gpuvet.doctor.evidence import Evidence

CAUSE = "module_busy_at_idle_power"
BUSY_PCT = 90.0  # utilization read as 'fully busy'
IDLE_POWER = 0.25  # a draw at a quarter of the design's TDP or less is an idle module's
BELOW_CAP = 0.5  # a draw over half the printed cap is not idle power, whatever the design
IDLE_CLOCK = 0.5  # an SM clock at half its maximum or less is held down
IDLE_PSTATE = 8  # P8 and lower (P12): the driver's idle performance states (P5 is a video/medium state)
_PSTATE = re.compile(r"^P(\d{1,2})$")


@dataclass(frozen=True)
class Snapshot:
    """One module's figures in one table: what the rule reads, None where the table did not print it."""

    where: str  # the module as findings name it: 'GPU 0 (0000:04:00.0)', a bus id, or the tool's label
    model: str | None
    tool: str
    busy_pct: float | None
    power_w: float | None
    power_cap_w: float | None
    clock_mhz: float | None = None
    clock_max_mhz: float | None = None
    pstate: int | None = None
    processes: int | None = None  # listed on it; None: the table lists no processes at all (not known)


def state_findings(ev: Evidence) -> list[Finding]:
    """Each module of the captured state tables that reads busy at idle power (the module's docstring)."""
    snaps = [_nvidia(m, ev.smi_source()) for m in ev.captures.smi_text] + [_listed(m) for _, m in ev.captures.states]
    return [f for s in snaps if (f := _busy_at_idle(s, snaps)) is not None]


def _busy_at_idle(s: Snapshot, peers: list[Snapshot]) -> Finding | None:
    if s.busy_pct is None or s.busy_pct < BUSY_PCT or not s.power_w:
        return None  # 0 W: a die that reports no power of its own (an MI250X's second GCD), not a reading
    design, basis = _design(s)
    if design is None or s.power_w > IDLE_POWER * design:
        return None
    if s.power_cap_w and s.power_w > BELOW_CAP * s.power_cap_w:
        return None  # at or near a cap set low: power_limit's to judge, not idle
    clocks_read = s.clock_mhz is not None and bool(s.clock_max_mhz)
    if clocks_read and s.clock_mhz is not None and s.clock_max_mhz and s.clock_mhz > IDLE_CLOCK * s.clock_max_mhz:
        return None  # a light kernel at full clock (a spin-wait, a memory-bound job): not held idle
    if not clocks_read and s.pstate is not None and s.pstate < IDLE_PSTATE:
        return None  # a working performance state: a light job (a container's view lists none) or a stuck engine
    if any(p is not s and p.model == s.model and p.busy_pct is not None and p.busy_pct >= BUSY_PCT for p in peers):
        return None  # its identical peers busy too: the job's state (kernels spinning while a rank waits), not its own
    said = f"{s.busy_pct:g} % busy at {s.power_w:g} W of {design:g} W ({basis})"
    return finding(
        CAUSE,
        MEDIUM,
        module=s.where,
        tool=s.tool,
        busy_pct=s.busy_pct,
        power_w=s.power_w,
        design_w=design,
        basis=basis,
        power_cap_w=s.power_cap_w,
        said=said,
        clocks=_clocks(s),
        processes=_processes(s),
        peers=_peers(s, peers),
    )


def _design(s: Snapshot) -> tuple[float | None, str]:
    from gpuvet.node.catalog import find_model

    model = find_model(s.model) if s.model else None
    if model is not None and model.tdp_w:
        return float(model.tdp_w), f"the {model.name}'s design TDP"
    if s.power_cap_w:
        return s.power_cap_w, "the cap the table prints (the model's design is not in the catalog)"
    return None, ""


def _clocks(s: Snapshot) -> str:
    if s.clock_mhz is not None and s.clock_max_mhz:
        return f"SM clock {s.clock_mhz:g} of {s.clock_max_mhz:g} MHz: held at idle"
    if s.pstate is not None:
        return f"performance state P{s.pstate}" + (" (an idle state)" if s.pstate >= IDLE_PSTATE else "")
    return "the table prints no clocks nor throttle reasons: a heuristic on utilization against power"


def _processes(s: Snapshot) -> str:
    if s.processes is None:
        return "the capture lists no processes: which job holds it can't be told"
    if s.processes == 0:
        return (
            "no process listed on it: a context a crashed process left behind, or a job in another PID "
            "namespace (a container's, which the host's table does not name); the capture can't tell which"
        )
    return f"{s.processes} process(es) listed on it, at idle clocks: the job is not running on it"


def _peers(s: Snapshot, peers: list[Snapshot]) -> str | None:
    same = [p for p in peers if p is not s and p.model == s.model and p.tool == s.tool and p.power_w is not None]
    if not same:
        return None
    shown = ", ".join(
        f"{p.where} {p.busy_pct:g} % at {p.power_w:g} W" if p.busy_pct is not None else f"{p.where} at {p.power_w:g} W"
        for p in same[:4]
    )
    return f"its identical peers in the same table: {shown}{' …' if len(same) > 4 else ''}"


def _listed(m: ListedModule) -> Snapshot:
    st = m.state
    where = f"{m.label} ({m.bus_id})" if m.bus_id else m.label
    procs = None if m.processes is None else len(m.processes)
    return Snapshot(
        where,
        m.name,
        m.tool or "a vendor's tool",
        st.busy_pct if st else None,
        st.power_w if st else None,
        (st.power_cap_w if st else None) or m.power_limit_w,
        processes=procs,
    )


def _nvidia(m: SmiTextModule, source: str) -> Snapshot:
    f = m.fields
    state = _PSTATE.match(f.get("Performance State", "").strip())
    listed = {v for k, v in f.items() if k.startswith("Processes/") and k.endswith("Process ID")}
    procs = 0 if f.get("Processes", "").strip() == "None" else (len(listed) if listed else None)
    return Snapshot(
        m.bus_id,
        m.product,
        source,
        _num(f, "Utilization/Gpu"),
        _num(f, "Power Draw", "Instantaneous Power Draw", "Average Power Draw"),
        _num(f, "Current Power Limit", "Power Limit"),
        _num(f, "Clocks/SM"),
        _num(f, "Max Clocks/SM"),
        int(state.group(1)) if state else None,
        procs,
    )


def _num(fields: dict[str, str], *ends: str) -> float | None:
    """The first field whose path ends on one of ``ends`` whole ('Clocks/SM' is not 'Max Clocks/SM')."""
    from gpuvet.captures.text import number

    for end in ends:
        for key, value in fields.items():
            if (key == end or key.endswith("/" + end)) and not key.startswith("Processes/"):
                return number(value)
    return None
