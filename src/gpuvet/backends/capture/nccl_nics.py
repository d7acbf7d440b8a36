"""The RDMA devices an NCCL/RCCL debug log names (issue 46, R14A): NET/IB's device list ('NET/IB : Using
[0]mlx5_0:1/IB [1]mlx5_1:1/RoCE ; OOB …', 2.0-2.2's one line per device 'NET/IB: [2] mlx5_1:1/IB'), each device with
the port and link layer NCCL chose, as inventory lists it. The ports' state, rate and bus id are not in the log, so
none is given (never invented), and doctor judges no port from it."""

from __future__ import annotations

import re

from gpuvet.backends.nic_readings import Nic
from gpuvet.captures.nccl_log import NcclLog

_HCA = re.compile(r"^(?P<dev>[A-Za-z][\w.-]{0,40}):(?P<port>\d{1,3})(?:/(?P<layer>[\w/]{1,20}))?$")  # mlx5_0:1/IB


def nccl_nics(log: NcclLog, label: str) -> list[Nic]:
    """One Nic per host and HCA NET/IB named, in the order the log names them: two hosts' mlx5_0 are two devices
    (REV67a #6), as two hosts' modules are; read_from says the host, port and link layer as NCCL printed them."""
    out: dict[tuple[str | None, str], Nic] = {}
    for c in log.choices:
        if c.transport != "IB":
            continue
        for said in c.devices:
            m = _HCA.match(said)
            if m is None or (c.host, m.group("dev")) in out:
                continue
            host = f" on {c.host}" if c.host else ""
            out[(c.host, m.group("dev"))] = Nic(m.group("dev"), None, None, (), read_from=(
                f"read from {label}: NCCL's NET/IB{host} chose port {m.group('port')}, link layer "
                f"{m.group('layer') or 'not said'}; ports' state and bus id not in the log"))
    return list(out.values())
