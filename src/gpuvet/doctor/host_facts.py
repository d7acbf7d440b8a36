"""Issue 46 (R14E): the host's own facts in a kernel log, said beside the modules' findings. A playbook stops at its
first confirmed cause and keeps a later step only where it is more severe (run.py), so the OOM killer's kills, a
warn about the host's memory, were hidden behind an Xid warn on a module read earlier in the same log: a different
subject, never the same fact. Each kernel event whose cause is one of HOST_CAUSES is a finding on the node here, at
the knowledge base's severity, as kernel_messages would say it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuvet.doctor.model import Finding, finding
from gpuvet.doctor.outcome import HIGH

if TYPE_CHECKING:
    from gpuvet.doctor.captures import Captures

HOST_CAUSES = frozenset({"host_out_of_memory"})


def findings(captures: Captures) -> list[Finding]:
    """The host's facts the kernel log holds (captures/kernel_oom.py's OOM kills), one finding each."""
    if not captures.kernel_events:
        return []
    from gpuvet.captures.kernel_messages import kernel_message_catalog  # read only where a kernel line was

    table = kernel_message_catalog()
    return [finding(table[e.kind].cause, HIGH, module=e.module, fix=table[e.kind].action, message=e.kind,
                    meaning=table[e.kind].meaning, line=e.line, log=e.text[:240], times=e.count)
            for e in captures.kernel_events if e.kind in table and table[e.kind].cause in HOST_CAUSES]
