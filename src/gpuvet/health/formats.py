"""The report in the forms schedulers read: NHC-style lines with one drain reason for
``scontrol update … state=drain reason=…``, and node-problem-detector's one bounded line.
gpuvet never drains a node itself; the script that runs it decides."""

from __future__ import annotations

import re

from gpuvet.health.model import Finding, HealthReport, Status

NPD_MAX = 80  # node-problem-detector's max_output_length in its own examples
REASON_MAX = 120
_UNSAFE = re.compile(r"[^\x20-\x7e]|[\"$`\\]")  # non-printable, non-ASCII, and what a quoted shell word expands


def safe(text: str, limit: int) -> str:
    """Printable ASCII without double quotes, ``$``, backticks or backslashes (safe inside a
    double-quoted shell word), at most ``limit`` characters."""
    clean = _UNSAFE.sub("_", " ".join(text.split()))
    return clean if len(clean) <= limit else clean[: limit - 3].rstrip() + "..."


def _headline(report: HealthReport) -> list[Finding]:
    return report.failures() if report.status is Status.FAIL else report.unknowns()


def drain_reason(report: HealthReport, limit: int = REASON_MAX) -> str | None:
    """One short reason naming the first failure (and how many more); None when healthy."""
    items = _headline(report)
    if report.status is Status.OK or not items:
        return None
    first = items[0]
    more = f" (+{len(items) - 1} more)" if len(items) > 1 else ""
    prefix = "gpuvet: " if report.status is Status.FAIL else "gpuvet: could not tell: "
    tail = f"{first.check}: {first.reason}"
    return safe(prefix + tail, limit - len(more)) + more


def nhc_lines(report: HealthReport) -> list[str]:
    """Nothing when healthy (as NHC prints nothing); one ERROR (or UNKNOWN) line per finding,
    then ``reason: …``."""
    if report.status is Status.OK:
        return []
    word = "ERROR" if report.status is Status.FAIL else "UNKNOWN"
    lines = [f"{word}: gpuvet health: {f.check}: {safe(f.reason, 400)}" for f in _headline(report)]
    lines += [f"ACTION: gpuvet health: {safe(a.slot, 40)}: {a.step.step}: {safe(a.step.why, 300)}" for a in report.actions]
    return [*lines, f"reason: {drain_reason(report)}"]


def npd_message(report: HealthReport) -> str:
    if report.status is Status.OK:
        sim = " (simulated)" if report.simulated else ""
        warned = "".join(f"; warn: {w.check} {w.module or ''}".rstrip() for w in report.warnings()[:1])
        return safe(f"gpuvet: healthy, {report.modules} modules{sim}{warned}", NPD_MAX)
    reason = drain_reason(report, NPD_MAX) or "gpuvet: unhealthy"
    if report.actions:  # the gravest module's step, where it fits
        step = f" [{report.actions[0].slot}: {report.actions[0].step.step}]"
        if len(reason) + len(step) <= NPD_MAX:
            reason += step
    return reason
