"""Issue 46 (R12A): the fabric's own test tools (HPE Slingshot's cxiberstat.sh, cxibwcheck.sh, dgnettest_run.sh),
ibdiagnet2's counter and cable lines, a switch's Broadcom fdrstat and Junos inventory, GPCNeT's usage error and
sinfo -o with '|': each fault judged on its NIC, port or node, each healthy run read and clear, never refused. The
lines (benchmarks/data/r12a_phrasebook.json, each source named there) are set bare, behind pdsh's host prefix,
under the command typed at a prompt, and in a poster's fenced block with a sentence.

    .venv/bin/python -m benchmarks.r12a_phrasebook [--show clear,generic,false,refused]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.support.phrasebook import lines_framings, run_framed

DATA = Path(__file__).parent / "data" / "r12a_phrasebook.json"
PROMPT = {
    "cxiberstat": "# cxiberstat.sh",
    "cxibwcheck": "# cxibwcheck.sh -v nid[000008-000011]",
    "dgnettest": "$ dgnettest_run.sh -n nid[000022-000028]",
    "ibdiagnet": "$ grep -E '^-[EW]-' /var/tmp/ibdiagnet2/ibdiagnet2.log",
    "fdrstat": 'BCM.0> dsh -c "phydiag 118-119 fdrstat counter"',
    "junos": "root@sw01> show version",
    "gpcnet": "$ mpirun -np 8 ./network_load_test",
    "sinfo": "$ sinfo -o '%a|%c|%N|%t|%E|%G'",
}


def framings(case: dict[str, Any]) -> dict[str, str]:
    """The ways a paste shows the lines, pdsh's host prefix second."""
    out = lines_framings(case["lines"], PROMPT[case["source"]], "It prints this:")
    return {"bare": out["bare"], "pdsh": "\n".join(f"uan01: {ln}" for ln in case["lines"]), **out}


def main(argv: list[str] | None = None) -> int:
    return run_framed(__doc__, argv, DATA, framings, ("faults", "healthy"))


if __name__ == "__main__":
    raise SystemExit(main())
