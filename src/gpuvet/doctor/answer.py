"""Doctor's answer in the order an engineer reads it: the verdict and the causes, then each check that
judged something (once, however many playbooks ran it), then what the checks that could not tell
would need. A triage runs six playbooks over the same checks; listing every step buried the cause
under thirty "can't tell" rows (issue 46)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gpuvet.checks.roots import Root, Seen, group, link_share, place_title, subject
from gpuvet.doctor.model import DoctorRun, Finding, StepResult
from gpuvet.node.model import Node
from gpuvet.node.vendor_tools import CAPTURE_FOR_CHECK as NEEDS
from gpuvet.node.vendor_tools import GIVE, ON_NODE


@dataclass(frozen=True)
class CantTell:
    """The checks no step could judge, and what would let them."""

    checks: tuple[str, ...]
    give: tuple[str, ...]  # inputs, those that would judge the most checks first


def judged(run: DoctorRun) -> list[StepResult]:
    """Each check that confirmed or cleared something, once: its confirmed step where one is, else its
    first clear one, in the order the checks first ran."""
    kept: dict[str, StepResult] = {}
    for s in run.steps:
        if s.status == "inconclusive":
            continue
        if s.check not in kept or (s.status == "confirmed" and kept[s.check].status != "confirmed"):
            kept[s.check] = s
    order = list(dict.fromkeys(s.check for s in run.steps))
    return [kept[c] for c in order if c in kept]


def cant_tell(run: DoctorRun) -> CantTell:
    """The checks every step of which said can't tell; what to give, by how many checks each input serves."""
    told = {s.check for s in run.steps if s.status != "inconclusive"}
    checks = tuple(dict.fromkeys(s.check for s in run.steps if s.check not in told))
    count: dict[str, int] = {}
    for c in checks:
        need = NEEDS.get(c, c)
        count[need] = count.get(need, 0) + 1
    give = tuple(sorted(count, key=lambda n: (n == ON_NODE, -count[n], list(count).index(n))))
    return CantTell(checks, give)


def cant_tell_line(run: DoctorRun, most: int = 4) -> str | None:
    """"can't tell: 9 check(s); give nvidia-smi -q, the kernel log, … to judge them" (None when every check
    judged): the ``most`` inputs that judge the most checks, the rest counted; --json lists them all."""
    ct = cant_tell(run)
    if not ct.checks:
        return None
    give = [g for g in ct.give if g != ON_NODE]
    on_node = sum(1 for c in ct.checks if NEEDS.get(c) == ON_NODE)
    named = ", ".join(give[:most]) + (f" and {len(give) - most} more" if len(give) > most else "")
    parts = [f"give {named} to judge them"] if give else []
    parts += [f"{on_node} need gpuvet run on the node itself"] if on_node else []
    parts += [temps] if (temps := untold_temperatures(run)) else []
    return f"can't tell: {len(ct.checks)} check(s); " + "; ".join(parts)


def untold_temperatures(run: DoctorRun) -> str | None:
    """The temperatures read whose model publishes no slowdown or shutdown figure, said once in the closing
    line: a row (or a headline) per module was noise on every table of an uncatalogued or cut name (issue 46)."""
    if any(s.check == "thermal_state" and s.status != "inconclusive" for s in run.steps):
        return None
    read = {c.where for s in run.steps if s.check == "thermal_state" for c in s.evidence}
    return (f"{len(read)} temperature(s) read whose model publishes no slowdown or shutdown figure "
            f"(give {GIVE['temperature_limits']})") if read else None


# the checks that measure (a benchmark's figure against the design): what they find follows from a
# fault another check names (a slow pair from a slow link, a lower GEMM from a power cap)
MEASURING = frozenset({"pair_bandwidth", "collective_results", "compute_rate", "rdma_bandwidth"})


def unjudged_figures(run: DoctorRun) -> list[str]:
    """Why each figure read could not be judged (a measuring check that read a log and said can't tell):
    a busbw with no hardware named is no answer, and "no cause found" alone would read as "normal"
    (issue 46, nccl-tests #527). One line per check, its step's own words."""
    told = {s.check for s in run.steps if s.status != "inconclusive"}
    out: dict[str, str] = {}
    for s in run.steps:
        if s.check in _FIGURES and s.check not in told and s.evidence and s.check not in out:
            out[s.check] = s.summary
    return list(out.values())


_FIGURES = MEASURING  # a temperature read but not judged: the closing line's (untold_temperatures)


def finding_key(f: Finding) -> str:
    """``cause/where`` (and the Xid's code): names a finding in --json's ``roots[].explains``."""
    where = place(f) or ("-".join(f.between) if f.between else "node")
    xid = f.evidence.get("xid")
    return f"{f.cause}/{where}" + (f"/xid{xid}" if isinstance(xid, int) else "")


def place(f: Finding) -> str | None:
    """The finding's module, led by its host where the capture named several ('node1 0000:3B:00.0')."""
    return f"{f.host} {f.module}" if f.host and f.module else f.host or f.module


def _seen(f: Finding) -> Seen:
    measured = f.evidence.get("measured")
    expected = f.evidence.get("expected")
    share = link_share(measured, expected) if isinstance(measured, str) and isinstance(expected, str) else None
    title = (f"{subject(place(f), f.between)} at {share} % of design" if f.cause == "link_degraded" and share
             else place_title(f.cause, place(f), f.between))
    return Seen(finding_key(f), f.cause, f.severity, f.check not in MEASURING, place(f), f.between, title,
                f.severity == "critical")


def doctor_roots(findings: Sequence[Finding], design: Node | None) -> list[Root]:
    """The findings grouped under the fault that explains them, by validate's machinery
    (checks/roots.py): a link slowed explains the slow pairs over it, a power cap the lower GEMM
    on its module. Info findings (advice, not faults) stand outside the roots. A capture names
    modules by bus id and pairs by 'GPU 0': those are places too (without a design, pair ends)."""
    faults = [f for f in findings if f.severity != "info"]
    places = {p for f in faults if (p := place(f))} | {m for f in faults if design is None for m in f.between or ()}
    return group([_seen(f) for f in faults], design, frozenset(places))
