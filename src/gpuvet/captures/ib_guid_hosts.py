"""Issue 46 (R14E): a listing of hosts and their InfiniBand port GUIDs, as superbench's topology-aware IB traffic
test gathers it from each VM (its ib_traffic_topo_aware input: 'VM_hostname vma414bbc00005I', then the port GUID
the host's ibstat gave, '0ff08c4321664e96', one pair per host). An inventory: the hosts and their GUIDs are said;
no port state is in it, so nothing is judged."""

from __future__ import annotations

import re

from gpuvet.captures.bench_results import BenchResult, BenchResults
from gpuvet.captures.text import Line

TOOL = "host IB port GUID listing"
_HOST = re.compile(r"^\s*VM_hostname\s+([\w.-]{1,64})\s*$")
_GUID = re.compile(r"^\s*(?:0x)?([0-9a-fA-F]{16})\s*$")


def parse(lines: list[Line]) -> BenchResults:
    """Each host with the GUID lines after it; nothing where no host line opens a pair."""
    out = BenchResults()
    host: tuple[str, int] | None = None
    guids: list[str] = []
    pairs: list[tuple[str, int, list[str]]] = []
    for ln in lines:
        if (h := _HOST.match(ln.text)) is not None:
            host, guids = (h.group(1), ln.no), []
            pairs.append((host[0], host[1], guids))
        elif host is not None and (g := _GUID.match(ln.text)) is not None:
            guids.append(g.group(1).lower())
        else:
            continue
        out.claimed.add(ln.no)
    pairs = [p for p in pairs if p[2]]
    if not pairs:
        return BenchResults()
    out.results = [BenchResult(TOOL, f"{name}: {', '.join(g)}", no) for name, no, g in pairs]
    out.notes.append(f"{TOOL}: {len(pairs)} host(s), each with its port GUID(s) (" + "; ".join(
        r.said for r in out.results[:12]) + "); no port state in it, nothing judged")
    return out
