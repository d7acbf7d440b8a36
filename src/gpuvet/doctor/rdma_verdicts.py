"""The RDMA device facts NCCL's NET/IB lines state, one verdict each (issue 46, R10C):

- 'N of M devices failed': NET/IB could not open or query some HCAs ('Call to ibv_open_device failed', 'Unable to
  open device mlx5_58': src/transport/net_ib.cc, misc/ibvwrap.cc) while the same host's processes then list the ones
  they use ('NET/IB : Using [0]mlx5_1:1/RoCE …'): the job runs on fewer paths (warn, rdma_devices_partly_unusable,
  the cause libibverbs' 'couldn't stat' names too); none listed is no device usable (nccl_ib_device_failed, critical).
- a port gone down: NET/IB's async event 'port error' (IBV_EVENT_PORT_ERR: the port's link left Active) is a flap
  alone (warn); followed by a completion with status 12 (retry exceeded: the peer never answered) the transfers over
  it failed and the job stops: the port is down (nic_port_down, critical) on the host the event names."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from gpuvet.doctor.model import Finding

if TYPE_CHECKING:
    from gpuvet.captures.nccl_log import NcclLog

PARTLY, FAILED, PORT_DOWN = "rdma_devices_partly_unusable", "nccl_ib_device_failed", "nic_port_down"
_UNABLE = re.compile(r"\bUnable to (?:open|query) (?:device|port) (\w[\w.-]{0,40})")
_PORT_ERROR = re.compile(r"\basync (?:error )?event\s*:\s*port error\b")
_PID = re.compile(r"^\s*\S+?:(\d{1,9})(?::\d{1,9})?\s+\[")


def judge(logs: Sequence[tuple[str, NcclLog]], found: list[Finding]) -> list[Finding]:
    """The findings NCCL's log gave, with these two facts' verdicts set (the module's docstring)."""
    retry = any(str(f.evidence.get("status", "")).startswith("12 ") or f.cause == "nccl_peer_unreachable" for f in found)
    return [_port_down(f) if retry and _is_port_error(f) else _partly(logs, f) if f.cause == FAILED else f for f in found]


def _partly(logs: Sequence[tuple[str, NcclLog]], f: Finding) -> Finding:
    from gpuvet.knowledge import fault

    host = f.module.split(" GPU ")[0] if f.module and "not in the log" not in f.module else None
    label = f.evidence.get("file")
    used = [
        d
        for lab, log in logs
        if lab == label
        for c in log.choices
        if c.transport == "IB" and c.host == host
        for d in c.devices
    ]
    if host is None or not used:
        return f  # no device the host's processes went on with: none usable, the critical verdict stays
    failed = sorted(
        {
            m.group(1)
            for lab, log in logs
            if lab == label
            for x in log.failures
            if x.at.host == host
            if (m := _UNABLE.search(x.at.message)) is not None
        }
    )
    said = (
        f"NET/IB could not open {', '.join(failed) or 'an HCA'}; the host's processes use {', '.join(dict.fromkeys(used))}"
    )
    # the title and fix NET/IB's line was read with stay (the device it could not open); the verdict is the fact's
    return replace(f, cause=PARTLY, severity=fault(PARTLY).severity, evidence={"devices": said, **f.evidence})


def _is_port_error(f: Finding) -> bool:
    log = f.evidence.get("log")
    return f.evidence.get("kind") == "nccl_ib_async_event" and isinstance(log, str) and bool(_PORT_ERROR.search(log))


def _port_down(f: Finding) -> Finding:
    from gpuvet.knowledge import fault

    lines = [str(f.evidence.get("log", ""))] + [str(x) for x in _list(f.evidence.get("also"))]
    pids = {m.group(1) for t in lines if (m := _PID.match(t)) is not None}
    times = f.evidence.get("times")
    n = max(len(pids), times if isinstance(times, int) else 0)
    why = (
        f"an InfiniBand port error event (the port's link left Active) on {n} process(es) of this host, then "
        "NCCL's completion status 12 (retries exceeded): transfers over the port failed"
    )
    p = fault(PORT_DOWN)
    return replace(f, cause=PORT_DOWN, severity=p.severity, title=p.title or f.title, evidence={"judged": why, **f.evidence})


def _list(v: object) -> list[object]:
    return list(v) if isinstance(v, list) else []
