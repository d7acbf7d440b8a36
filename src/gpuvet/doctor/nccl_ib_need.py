"""Issue 46 (R14A): whether an NCCL/RCCL log shows its job needed InfiniBand/RoCE. NCCL opens libibverbs at init on
every node, one-node jobs included, and falls back to its socket transport where it cannot (recent releases say
so at INFO): a missing verbs library costs a job something only where it spans nodes or asked for IB. The log
proves that by two hosts, a communicator's nNodes above 1, a channel between ranks over the network ('via NET/…':
NCCL takes the network only between ranks it cannot join inside a node), or an NCCL_IB_* setting (its HCAs, GID
index) the job gave; one host's lines prove none of those."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpuvet.doctor.model import Finding, finding
from gpuvet.doctor.outcome import MEDIUM

if TYPE_CHECKING:  # the log parser loads when a log is read (issue 43)
    from gpuvet.captures.nccl_log import NcclLog

# a setting naming NCCL's IB transport ('NCCL_IB_HCA set by environment to mlx5_0'); NCCL_IB_DISABLE is the opposite
_IB_ASKED = re.compile(r"\bNCCL_(?:IB_(?!DISABLE)\w+|NET set by environment to \W?IB)\b", re.I)
_NOT_SHOWN = "nothing in the log shows the job spans nodes or asked for IB (one host, no NET channel, no NCCL_IB_*)"


def needed(logs: Sequence[tuple[str, NcclLog]]) -> str | None:
    """What in the log shows the job needed IB (said as evidence), or None where nothing does."""
    hosts = {h for _, log in logs for h in (*log.seen_hosts, *log.test_hosts) if not log.redacted}
    if len(hosts) > 1:
        return f"the log names {len(hosts)} hosts ({', '.join(sorted(hosts)[:4])})"
    if (nodes := max((log.nodes or 0) for _, log in logs)) > 1:
        return f"a communicator spans {nodes} nodes (nNodes {nodes})"
    if peers := [p for _, log in logs for p in log.net_peers]:
        a, b = peers[0]
        return f"ranks {a} and {b} are joined over the network ('via NET/…': not inside one node)"
    asked = [e for _, log in logs for e in log.env if _IB_ASKED.search(e.message)]
    return f"the job set {asked[0].message[:120]} (line {asked[0].line})" if asked else None


def unavailable(logs: Sequence[tuple[str, NcclLog]]) -> list[Finding]:
    """NCCL could not open the verbs library on a job not known to be one node: a warn where the log shows the job
    needed IB (needed), else a note that the node has none ('NET/IB : No device found' alone is a node without
    HCAs, a workstation's normal state: no finding)."""
    if any(log.ib_off for _, log in logs):  # sockets on purpose: the missing library is not what chose them
        return []
    from gpuvet.captures.nccl_log import NO_VERBS

    for label, log in logs:
        no_verbs = [at for at in log.no_ib if NO_VERBS.search(at.message)]
        if no_verbs and not log.one_node:
            hosts = list(dict.fromkeys(a.host for a in no_verbs if a.host)) or ["host not in the log"]
            why = needed(logs)
            return [finding("nccl_ib_unavailable" if why else "nccl_ib_library_absent", MEDIUM,
                            module=", ".join(hosts[:8]), file=label, line=no_verbs[0].line, log=no_verbs[0].text,
                            times=len(no_verbs), needed=why or _NOT_SHOWN)]
    return []
