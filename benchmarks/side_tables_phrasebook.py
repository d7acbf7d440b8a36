"""Issue 46 (R7C): RDMA GID tables (show_gids), ethtool's failures, ibstat's port states (a card's every port
Disabled, a value cut mid-word), a failed P2P enable (simpleP2P), Moore Threads' mthreads-gmi table and dcgmi dmon
-l's field listing, read as a class. The lines (benchmarks/data/side_tables_phrasebook.json, each source named
there) are set the ways a paste shows them: bare, under the command typed at a prompt, in a poster's fenced block
with a sentence, and as a page's HTML source. Faults are counted right (cause and severity), severity (cause, other
severity), generic (another loud finding), clear or refused; the 'said' rows said, unsaid, false (a loud finding) or
refused; healthy rows clean, false or refused.

    .venv/bin/python -m benchmarks.side_tables_phrasebook [--show clear,unsaid,false,refused]
"""

from __future__ import annotations

import sys
from pathlib import Path

from benchmarks.support.phrasebook import run_web_framed

DATA = Path(__file__).parent / "data" / "side_tables_phrasebook.json"
PROMPT = {"show_gids": "[root@node ~]# show_gids", "ethtool": "$ sudo ethtool -A ens1f0 rx off tx off",
          "ibstat": "$ ibstat", "simpleP2P": "user@box:~/cuda-samples/build$ ./simpleP2P",
          "mthreads-gmi": "(base) user@worker:~$ mthreads-gmi", "dcgmi": "$ dcgmi dmon -l"}


def main(argv: list[str] | None = None) -> int:
    return run_web_framed(__doc__, argv, DATA, PROMPT)


if __name__ == "__main__":
    sys.exit(main())
