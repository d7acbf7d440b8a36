"""Issue 46 (SAFE): a GPU tool that printed its own failure verdict is never "clear". After every playbook ran,
each file's verdict lines (captures/tool_failures.py) that no finding at warn or above covers (one on the same
module; for a line naming no module, one citing the same file or one on the node) become ONE lead per file and
module: the tool reported a failure gpuvet does not judge further, its lines quoted, what to read and run next.
No parser is imported here: doctor --sim and --node read no capture."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from gpuvet.doctor.model import Finding, finding
from gpuvet.doctor.outcome import MEDIUM
from gpuvet.node.bus import bus_key
from gpuvet.node.vendor_tools import TOOL_FAILURE_FIX

if TYPE_CHECKING:
    from gpuvet.captures.tool_failures import ToolFailure
    from gpuvet.doctor.captures import Captures

CAUSE = "gpu_tool_reported_failure"
SHOWN = 3  # lines quoted
_SEVERE = ("warn", "critical")
UNREAD = "unread_failure_line"  # captures/unread_leads.py's cause (not imported: doctor --sim loads no parser)
UNREAD_SAID = "reports a failure gpuvet has no rule for: read it"
_INDEX = re.compile(r"GPU\s?\[?(\d+)\]?", re.I)  # 'GPU 0', 'GPU0', rocm-smi's 'GPU[0]'


def leads(caps: Captures, findings: Iterable[Finding]) -> list[Finding]:
    """The leads of the captures' verdict lines no warn or critical finding covers, one per file and module."""
    if not caps.tool_failures:
        return []
    severe = [f for f in findings if f.severity in _SEVERE]
    files = {str(f.evidence.get("file")) for f in severe if f.evidence.get("file") is not None}
    modules = {_named(f.module) for f in severe if f.module}
    grouped: dict[tuple[str, str | None, str | None], list[ToolFailure]] = {}
    for label, failure in caps.tool_failures:
        module = _named(failure.module) if failure.module else None
        if module in modules if module else (label in files or severe):  # a module's line: only its own finding
            continue  # a line of no module: one citing its file, or any on the node
        grouped.setdefault((label, module, failure.cause), []).append(failure)
    led = {label for label, module, _ in grouped if module}  # a file's line of no module: covered by its module's lead
    return [_lead(label, module, lines) for (label, module, _), lines in grouped.items() if module or label not in led]


def _named(module: str) -> str:
    """One spelling of a module's name: its bus id's, or 'GPU N' (the driver's 'GPU0', gpu-burn's 'GPU 0')."""
    if (m := _INDEX.fullmatch(module.strip())) is not None:
        return f"GPU {int(m.group(1))}"
    if " <-> " in module:  # a pair of modules (rvs' peer query), as doctor names a pair
        return module
    return bus_key(module)


def _lead(label: str, module: str | None, lines: list[ToolFailure]) -> Finding:
    tools = list(dict.fromkeys(f.tool for f in lines))
    fix = "; ".join(TOOL_FAILURE_FIX[t] for t in tools if t in TOOL_FAILURE_FIX) or None
    if lines[0].cause and lines[0].cause != UNREAD:
        fix = None  # R12C: a line stating its own fault (the driver not loaded) gets that fault's fix
    pair = tuple(module.split(" <-> ")) if module and " <-> " in module else None
    return finding(lines[0].cause or CAUSE, MEDIUM, module=module, between=pair if pair and len(pair) == 2 else None,
                   fix=fix, file=label, line=lines[0].line,
                   tool=", ".join(tools), log=lines[0].text[:240], count=len(lines),
                   lines=[f"{f.line}: {f.text[:240]}" for f in lines[:SHOWN]],
                   detail=f"{', '.join(tools)} " + (UNREAD_SAID if lines[0].cause == UNREAD else
                                                    "printed it in its own words" if lines[0].cause else
                                                    "reported a failure gpuvet does not judge further")
                          + f" ({len(lines)} line{'s' if len(lines) != 1 else ''})")
