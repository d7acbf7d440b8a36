"""Issue 46 (R5B): NICs, fabric services and PCIe errors: systemd's failed unit of the fabric manager (its '×' head
line, 'Active: failed', the journal's 'Failed to start'), ibv_devinfo's and ibstat's port in INIT (no subnet manager),
a dual-port card's second PCI function switched off, ethtool's settings past its 'Cannot get' lines, a non-GPU
exporter's Prometheus text, NCCL's NET/IB 'client reregistration' once per rank or again in one process, completion
status 12 on one or two connections to a peer, and an AER excerpt naming its endpoint: how doctor reads each, in
the framings pastes show.

The messages are the tools' own (benchmarks/data/netsvc_phrasebook.json names each one's source); each is framed
bare, quoted by a poster ('> ' with GitHub's links of 'file.cc:N'), and in a Markdown code fence. A fault's verdict:
right (its cause at its severity on the module named), severity, misplaced, generic, clear or refused; a healthy
text's: clean, false (a finding at warn or above) or refused.

    python -m benchmarks.netsvc_phrasebook [--show false,generic]
"""

from __future__ import annotations

import sys
from pathlib import Path

from benchmarks.support import phrasebook

DATA = Path(__file__).parent / "data" / "netsvc_phrasebook.json"


def main(argv: list[str] | None = None) -> int:
    return phrasebook.run_posted(__doc__, argv, DATA)


if __name__ == "__main__":
    sys.exit(main())
