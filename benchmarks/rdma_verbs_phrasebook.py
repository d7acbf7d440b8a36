"""Issue 46 (RDV): what RDMA programs and the kernel's RDMA stack print when a queue pair, a completion or a connection
fails on a NIC, read as a class. benchmarks/data/rdma_verbs_phrasebook.json holds the messages as their sources print
them (the kernel's mlx5_ib QP errors and error-CQE dumps, Open MPI openib's handle_wc, Mooncake's transfer engine,
NVSHMEM's IBGDA/IBRC transports, UCX, libfabric's fi_getinfo, perftest's own line as a guard), each source named, with
what an engineer reads in it: a completion with error on a device and port (rdma_completion_error), a queue pair or
verbs resource a program could not set up (rdma_setup_failed); and healthy lines that must stay quiet (NCCL's NET/IB
choice, ucx_info, UCX INFO, a transfer engine's device listing, a QP reaching RTS, a poster's sentence).

Each message is set in the framings real captures show (bare; dmesg's and the journal's stamps for kernel lines; a glog
prefix 'E1207 12:00:00.000000  123 app.cpp:45]' for a program's; pdsh's 'host: '; the last line quoted in a sentence)
and read by ``gpuvet doctor --from`` in-process, scored as benchmarks/rdma_tools_phrasebook.py scores (right,
severity, subject, generic, clear, refused; healthy clean, false, refused).

    .venv/bin/python -m benchmarks.rdma_verbs_phrasebook [--show generic,clear,refused,false]
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

from benchmarks.rdma_tools_phrasebook import HOST, Message, run, verdict
from benchmarks.support.phrasebook import healthy_said, print_faults, shown

DATA = Path(__file__).parent / "data" / "rdma_verbs_phrasebook.json"


def framings(m: Message) -> dict[str, str]:
    """The message as captures show it, by framing."""
    lines = m.printed.splitlines()
    last = lines[-1].strip()
    every = {
        "bare": m.printed,
        "dmesg": "\n".join(f"[{812345.678901 + i:.6f}] {line}" for i, line in enumerate(lines)),
        "journal": "\n".join(f"Dec 07 12:00:{i:02d} {HOST} kernel: {line}" for i, line in enumerate(lines)),
        "prefix": "\n".join(f"E1207 12:00:00.{i:06d}  4242 app.cpp:45] {line}" for i, line in enumerate(lines)),
        "host": "\n".join(f"{HOST}: {line}" for line in lines),
        "quoted": f"Running `{m.command}` the transfer stops and the log says '{last}'. Any idea?",
    }
    return {k: v for k, v in every.items() if k in m.frames}


def messages() -> tuple[list[Message], dict[str, str]]:
    data = json.loads(DATA.read_text(encoding="utf-8"))
    keys = ("tool", "source", "path", "command", "printed", "want", "severity", "subject")
    return [Message(*(r[k] for k in keys), tuple(r["frames"])) for r in data["messages"]], data["sources"]


def main(argv: list[str] | None = None) -> int:
    show = shown(__doc__, argv)
    listed, sources = messages()
    faults: dict[str, Counter[str]] = {}
    healthy = Counter[str]()
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "capture.txt"
        for m in listed:
            for frame, text in framings(m).items():
                code, found = run(text, where)
                v = verdict(m, code, found)
                (healthy if m.want is None else faults.setdefault(m.tool, Counter()))[v] += 1
                if v in show:
                    print(
                        f"{v:9} {m.tool:14} {frame:7} {m.printed.splitlines()[-1][:70]!r} -> "
                        f"{[(f['cause'], f['severity'], f['module']) for f in found]} (want {m.want} {m.severity})"
                    )
    print(f"{len(listed)} messages ({'; '.join(sources)})")
    print_faults("tool", 16, faults)
    print(healthy_said(healthy))
    return 0


if __name__ == "__main__":
    sys.exit(main())
