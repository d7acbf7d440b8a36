"""The node a Ray worker's line came from (issue 46, R14B): Ray prefixes each remote worker's output with
``(ActorName pid=N, ip=10.0.0.2)``; the driver's own workers carry no ``ip=`` (``(pid=N)``, ``(Actor pid=N)``).

A log of several nodes is read node by node (decorations.Peeled.host_of: a line whose prefix names an ip is that
node's); a log whose every prefixed line names one ip is that node's (Peeled.host). A line with no ip is no node's:
never given one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuvet.captures.lazy_re import lazy

if TYPE_CHECKING:
    from gpuvet.captures.decorations import Peeled

_IP = lazy(r"\bip=(?P<ip>\d{1,3}(?:\.\d{1,3}){3}|[0-9a-fA-F:]{3,39}|[A-Za-z0-9][\w.-]{0,62})")


def name(out: Peeled, prefixes: dict[int, str]) -> None:
    """``prefixes``: line number -> the Ray prefix that line carried (before it was cut)."""
    ips = {n: m.group("ip") for n, p in prefixes.items() if "ip=" in p and (m := _IP.search(p)) is not None}
    if not ips:
        return
    if len(set(ips.values())) == 1 and len(ips) == len(prefixes):
        out.host = out.host or next(iter(ips.values()))
        return
    for n, ip in ips.items():
        out.host_of.setdefault(n, ip)
