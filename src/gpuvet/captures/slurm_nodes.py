"""sinfo's table with a custom format's separator (issue 46, R12A): 'sinfo -o' with '|' between its fields ('%a|%f|…'),
its header the fields' names (AVAIL|…|STATE|…|REASON |…|GRES |…|NODELIST). Slurm's sinfo(1) names the states and their
flags: '*' after a state is a node not responding to slurmctld.

What an engineer reads in it: a GPU node (its GRES or its partition names GPUs) down, failed, or drained and not
responding is a finding on that node with the reason its admin or slurmctld gave; drained or reserved rows that
respond are set aside (an admin's drain), said in a note. The states and their verdicts are sinfo_states', the same
table ops_logs reads the space-aligned form with; every '|' table is read here, whatever its first column
(PARTITION, NODELIST, HOSTNAMES: ops_logs leaves those to this reader)."""

from __future__ import annotations

from gpuvet.captures.app_errors import AppErrorsParse
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.ops_logs import add
from gpuvet.captures.sinfo_states import GPU_PART, STATE, verdict
from gpuvet.captures.text import Line


def read(lines: list[Line], out: AppErrorsParse, marks: Marks | None = None) -> None:
    """Each '|'-separated sinfo table in ``lines`` (its header names STATE and NODELIST or HOSTNAMES)."""
    for i in holding(lines, ("|STATE", "STATE|"), marks):
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
        gres, part = row.get("GRES", ""), row.get("PARTITION", "")
        state, judged = STATE.match(row.get("STATE", "").lower()), verdict(row.get("STATE", ""))
        if state is None or judged is None or not GPU_PART.search(f"{part} {gres}") or node in seen:
            continue
        reason = row.get("REASON", "")
        where = ", ".join(w for w in (f"partition {part}" if part else "", gres) if w)
        said = f"node {node} ({where}) {row.get('STATE')}" + (f", reason '{reason}'" if reason and reason != "none" else "")
        if judged == "bad":
            seen.add(node)
            why = " and not responding to slurmctld" if "*" in state.group(2) else ""
            add(
                out,
                "slurm_drained_gpu",
                ln,
                f"sinfo: {said}{why}: its GPUs are not offered to jobs",
                tool="Slurm (sinfo)",
                host=node,
            )
        else:
            seen.add(node)
            aside.append(f"{said} ({'drained' if judged == 'drain' else 'set aside'})")
    if aside:
        out.notes.append("sinfo, GPU nodes drained or set aside (an admin's act, said): " + "; ".join(aside))
