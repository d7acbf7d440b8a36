"""The vendor tools' own verdicts as doctor's findings: an NPU that npu-smi marks Critical,
Alarm or Warning, an AMD module whose amd-smi RAS/ECC fields show an uncorrectable error. The
tool judged the module already; doctor said "no cause found" beside it (issue 41)."""

from __future__ import annotations

from gpuvet.captures.records import ToolVerdict
from gpuvet.doctor.evidence import Evidence
from gpuvet.doctor.model import Cited, Finding, finding
from gpuvet.doctor.outcome import HIGH, MEDIUM, Outcome, clear, confirmed, unknown
from gpuvet.node.vendor_tools import GIVE, TOOL_VERDICT_FIX, TOOL_VERDICT_KINDS


def tool_verdicts(ev: Evidence) -> Outcome:
    """Each listed module's own verdict: critical and warn states are findings; ok ones are cited."""
    read = ev.captures.verdicts
    if not read:
        return unknown(f"no vendor tool's own verdict on a module was read ({GIVE['tool_verdicts']})")
    found = [_finding(v) for v in read if v.severity in ("critical", "warn")]
    odd = [v for v in read if v.severity == "unknown"]
    said = f"; {len(odd)} state(s) gpuvet does not know, not judged (first: {_said(odd[0])})" if odd else ""
    said += _counted([v for v in read if v.severity == "info"])
    if found:
        return confirmed("the vendor's own tool reports modules in an error state" + said, *found)
    ok = [v for v in read if v.severity in ("ok", "info")]
    if not ok:
        return unknown(f"{len(odd)} module state(s) of words gpuvet does not know (first: {_said(odd[0])})")
    return clear("every module state the vendor's tool printed is healthy" + said,
                 *[Cited(ev.capture_source(*TOOL_VERDICT_KINDS.get(v.tool, (v.tool,))) or v.tool, v.field, v.value,
                         where=v.where) for v in ok[:64]])


def _counted(info: list[ToolVerdict]) -> str:
    """Counts the tool printed that no bound judges (correctable errors, an application's programming errors)."""
    if not info:
        return ""
    first = ", ".join(f"{_said(v)}" for v in info[:3])
    return (f"; {len(info)} count(s) said, not judged (no bound from a source says how many are too many): "
            f"{first}{' …' if len(info) > 3 else ''}")


def _finding(v: ToolVerdict) -> Finding:
    from gpuvet.captures import rocm_sensors  # a parser's module: loaded when a file was read (issue 43)

    if v.field in rocm_sensors.PATHS:  # readings no sensor gives, or none: the module's sensors/SMU not answering
        cause = "module_unreadable" if v.severity == "critical" else "module_sensors_unreadable"  # none / some read
        return finding(cause, HIGH if v.severity == "critical" else MEDIUM,
                       module=None if v.module == rocm_sensors.UNNAMED else v.where, tool=v.tool,
                       field=v.field, value=v.value, label=v.module, bus_id=v.bus_id)
    cause = "module_reported_critical" if v.severity == "critical" else "module_reported_warning"
    return finding(cause, HIGH if v.severity == "critical" else MEDIUM, module=v.where, fix=TOOL_VERDICT_FIX.get(v.tool),
                   tool=v.tool, field=v.field, value=v.value, label=v.module, bus_id=v.bus_id)


def _said(v: ToolVerdict) -> str:
    return f"{v.where}: {v.tool} {v.field} {v.value!r}"
