"""Issue 46 (AX3): the RDMA fabric's own tools, read as a class. benchmarks/data/rdma_tools_phrasebook.json holds what
iproute2's ``rdma`` (link, dev, resource, statistic), rdma-core's listings (ibv_devices, sminfo) and infiniband-diags'
fabric views (iblinkinfo, ibnetdiscover, ibqueryerrors, perfquery, the older ibcheckerrors) and ibdiagnet print, each
as the tool's source or documentation prints it (its source named), with what an engineer reads in it: a port down or
not Active, a port read down then up again, a link below what both its ends support or below the fabric's other links,
error counters past infiniband-diags' thresholds; and healthy output that must stay quiet (ports Active, counters
under their thresholds, congestion counters, an unused switch port).

Each message is set in the framings real captures show (the output bare, under a shell prompt, fenced in a poster's
question, each line behind pdsh's 'host: ', one line quoted in a sentence) and read by ``gpuvet doctor --from``
(in-process). A framing is counted right (the cause at its severity on the right port: its device and port, or none
where the paste names none), severity or subject (the cause, at another severity or on another port), generic
(another finding only), clear (read, no finding) or refused (exit 2); a healthy one clean, false (a finding at warn
or above) or refused; an 'other' message (a line that says nothing of a port's health alone) only read or refused.

    .venv/bin/python -m benchmarks.rdma_tools_phrasebook [--show severity,subject,generic,clear,refused,false]
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from benchmarks.support.phrasebook import healthy_said, print_faults, run, shown

DATA = Path(__file__).parent / "data" / "rdma_tools_phrasebook.json"
HOST = "gpu-node-07"


@dataclass(frozen=True)
class Message:
    tool: str
    source: str
    path: str
    command: str
    printed: str
    want: str | None  # a cause, None (healthy), or 'other'
    severity: str | None
    subject: str | None  # what the finding's module must hold (its port); None: the paste names none
    frames: tuple[str, ...]


def framings(m: Message) -> dict[str, str]:
    """The message as captures show it, by framing."""
    last = m.printed.strip().splitlines()[-1].strip()
    every = {
        "bare": m.printed,
        "prompt": f"[root@{HOST} ~]# {m.command}\n{m.printed}",
        "fenced": f"Running `{m.command}` on {HOST} I get:\n```\n{m.printed}\n```\nIs that a hardware problem?",
        "host": "\n".join(f"{HOST}: {line}" for line in m.printed.splitlines()),
        "quoted": f"After the reboot `{m.command}` still prints '{last}' and the job hangs at init.",
    }
    return {k: v for k, v in every.items() if k in m.frames}


def verdict(m: Message, code: int, found: list[dict[str, str]]) -> str:
    loud = [f for f in found if f["severity"] in ("warn", "critical")]
    if m.want is None:
        return "refused" if code == 2 else "false" if loud else "clean"
    if m.want == "other":
        return "refused" if code == 2 else "read"
    mine = [f for f in found if f["cause"] == m.want]
    named = [f for f in mine if m.subject is None or m.subject in f["module"]]
    if any(f["severity"] == m.severity for f in named):
        return "right"
    if mine:
        return "severity" if named else "subject"
    return "generic" if found else "refused" if code == 2 else "clear"


def messages() -> tuple[list[Message], dict[str, str]]:
    data = json.loads(DATA.read_text(encoding="utf-8"))
    return [
        Message(
            r["tool"],
            r["source"],
            r["path"],
            r["command"],
            r["printed"],
            r["want"],
            r["severity"],
            r["subject"],
            tuple(r["frames"]),
        )
        for r in data["messages"]
    ], data["sources"]


def main(argv: list[str] | None = None) -> int:
    show = shown(__doc__, argv)
    listed, sources = messages()
    faults: dict[str, Counter[str]] = {}
    healthy, other = Counter[str](), Counter[str]()
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "capture.txt"
        for m in listed:
            for frame, text in framings(m).items():
                code, found = run(text, where)
                v = verdict(m, code, found)
                group = m.tool.split(" ")[0]
                (healthy if m.want is None else other if m.want == "other" else faults.setdefault(group, Counter()))[v] += 1
                if v in show:
                    print(
                        f"{v:9} {m.tool:18} {frame:7} {m.printed.splitlines()[-1][:60]!r} -> "
                        f"{[(f['cause'], f['severity'], f['module']) for f in found]} (want {m.want} {m.severity})"
                    )
    print(f"{len(listed)} messages ({'; '.join(sources)})")
    print_faults("tool", 16, faults)
    print(healthy_said(healthy) + f"; other lines {sum(other.values())}: read {other['read']}, refused {other['refused']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
