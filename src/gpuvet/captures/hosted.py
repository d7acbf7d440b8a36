"""A kernel log of several hosts (pdsh/clush's 'node1: ', syslog's host field) read host by host: the
driver's lines are counted per module, and one bus id on two hosts is two modules (issue 46: never merge
without a word). A log of one host, or lines no host prefix named, are left as they were read."""

from __future__ import annotations

from dataclasses import replace

from gpuvet.captures import kernel
from gpuvet.captures.text import Line


def by_host(read: kernel.KernelParse, lines: list[Line], host_of: dict[int, str]) -> None:
    """``read``'s Xids and driver messages from the lines a host named made again from each host's lines alone
    (the kernel reader's own lines: those it claimed), each with its host; the rest kept as they were."""
    if not any(x.line in host_of for x in read.xids) and not any(e.line in host_of for e in read.events):
        return
    hosts: dict[str, list[Line]] = {}
    for ln in lines:
        if ln.no in read.claimed and (host := host_of.get(ln.no)) is not None:
            hosts.setdefault(host, []).append(ln)
    xids = [x for x in read.xids if x.line not in host_of]
    events = [e for e in read.events if e.line not in host_of]
    for host, own in hosts.items():
        one = kernel.parse(own)
        xids += [replace(x, host=host) for x in one.xids]
        events += [replace(e, host=host) for e in one.events]
    read.xids, read.events = xids, events
