"""The RDMA device a perftest run names (``Device : mlx5_1`` in its header, ``-d mlx5_1`` on its command line), as
inventory lists it (issue 46, R14B): the run's link type, transport, connection type, MTU and its best result row
are what the capture says of it; its ports' state, rate and bus id are not in a perftest header, so none is given
(never invented), and doctor judges no port from it."""

from __future__ import annotations

from gpuvet.backends.nic_readings import Nic
from gpuvet.captures.perftest import PerftestRun


def perftest_nics(runs: list[PerftestRun], label: str) -> list[Nic]:
    """One Nic per device the runs name, the first run's header said in read_from."""
    out: dict[str, Nic] = {}
    for run in runs:
        if run.device and run.device not in out:
            out[run.device] = Nic(run.device, None, None, (), read_from=f"read from {label}: {_said(run)}")
    return list(out.values())


def _said(run: PerftestRun) -> str:
    fields = [f"perftest {run.test}"]
    fields += [f"link type {run.link_type}"] if run.link_type else []
    fields += [f"transport {run.transport}"] if run.transport else []
    fields += [f"connection {run.connection}"] if run.connection else []
    fields += [f"MTU {run.mtu} B"] if run.mtu else []
    if run.rows:
        best = max(run.rows, key=lambda r: r.bw_avg_gbps)
        fields.append(f"{best.bw_avg_gbps:.2f} Gb/s average at {best.size_bytes} B")
    else:
        fields.append("no result row in the capture")
    return ", ".join(fields) + "; ports and state not in a perftest header"
