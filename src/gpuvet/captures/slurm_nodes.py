"""sinfo's table with a custom format's separator (issue 46, R12A): 'sinfo -o' with '|' between its fields ('%a|%f|…'),
its header the fields' names (AVAIL|…|STATE|…|REASON |…|GRES |…|NODELIST). Slurm's sinfo(1) names the states and their
flags: '*' after a state is a node not responding to slurmctld.

What an engineer reads in it: a GPU node (its GRES names gpu) down, failed, or drained and not responding is a finding
on that node with the reason its admin or slurmctld gave; drained or reserved rows that respond are set aside (an
admin's drain), said in a note, as ops_logs reads the space-aligned table."""

from __future__ import annotations

import re

from gpuvet.captures.app_errors import AppErrorsParse
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.ops_logs import add
from gpuvet.captures.text import Line

_STATE = re.compile(r"^([a-z_]+)([*~#!%$@^\-+]*)$")
_BAD = frozenset({"down", "fail", "failing", "inval", "unk", "unknown", "not_responding"})
_DRAIN = frozenset({"drain", "drng", "drained", "draining"})


def read(lines: list[Line], out: AppErrorsParse, marks: Marks | None = None) -> None:
    """Each '|'-separated sinfo table in ``lines`` (its header names STATE and NODELIST or HOSTNAMES)."""
    for i in holding(lines, ("|STATE|", "|STATE |"), marks):
        head = [c.strip() for c in lines[i].text.split("|")]
        if "STATE" in head and ("NODELIST" in head or "HOSTNAMES" in head) and lines[i].no not in out.claimed:
            _table(lines, i, head, out)


def _table(lines: list[Line], at: int, head: list[str], out: AppErrorsParse) -> None:
    """The rows under the header at ``at`` (a row of another count of cells ends the table)."""
    out.claimed.add(lines[at].no)
    seen: set[str] = set()
    aside: list[str] = []
    for ln in lines[at + 1 :]:
        cells = [c.strip() for c in ln.text.split("|")]
        if len(cells) < len(head) - 1:
            break
        out.claimed.add(ln.no)
        row: dict[str, str] = {}
        for h, c in zip(head, cells, strict=False):
            row.setdefault(h, c)  # a field named twice (sinfo -o's %t and %T both head STATE): the first kept
        node = row.get("NODELIST") or row.get("HOSTNAMES") or "?"
        gres = row.get("GRES", "")
        state = _STATE.match(row.get("STATE", "").lower())
        if state is None or "gpu" not in gres.lower() or node in seen:
            continue
        base, flags = state.group(1), state.group(2)
        reason = row.get("REASON", "")
        said = f"node {node} ({gres}) {row.get('STATE')}" + (f", reason '{reason}'" if reason and reason != "none" else "")
        if base in _BAD or (base in _DRAIN and "*" in flags):
            seen.add(node)
            why = " and not responding to slurmctld" if "*" in flags else ""
            add(
                out,
                "slurm_drained_gpu",
                ln,
                f"sinfo: {said}{why}: its GPUs are not offered to jobs",
                tool="Slurm (sinfo)",
                host=node,
            )
        elif base in _DRAIN:
            seen.add(node)
            aside.append(said)
    if aside:
        out.notes.append("sinfo, GPU nodes drained (an admin's drain, said): " + "; ".join(aside))
