"""Issue 46 (R4C): fabric, scheduler and monitoring texts: NCCL's NET/IB async events (every ibv_event_type_str
name), an RDMA program's completion statuses, kubectl's daemonset READY and an init container's exit, a node's
XidCriticalError condition, Xid 45 counted per node, Habana's 'no interfaces were detected' and an NHC check on a
PCIe GPU: how doctor reads each, in the framings pastes show.

The messages are the tools' own (benchmarks/data/fabric_phrasebook.json names each one's source); each is framed
bare, quoted by a poster ('> ' with GitHub's links of 'file.cc:N'), and in a Markdown code fence. A fault's verdict:
right (its cause at its severity on the module named), severity, misplaced, generic, clear or refused; a healthy
text's: clean, false (a finding at warn or above) or refused.

    python -m benchmarks.fabric_phrasebook [--show false,generic]
"""

from __future__ import annotations

import sys
from pathlib import Path

from benchmarks.support import phrasebook

DATA = Path(__file__).parent / "data" / "fabric_phrasebook.json"


def main(argv: list[str] | None = None) -> int:
    return phrasebook.run_posted(__doc__, argv, DATA)


if __name__ == "__main__":
    sys.exit(main())
