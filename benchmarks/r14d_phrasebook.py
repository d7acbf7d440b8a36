"""Issue 46 (R14D): operators' and schedulers' own tools around the GPU in their own words: ps and top listings
with a GPU task in uninterruptible sleep (ps aux with and without its header, ps -eo stat,wchan, ps -el, top), LBNL
NHC's hardware checks (check_hw_ib's no ACTIVE port, check_hw_eth's missing device, node-mark-offline's log line, a
site's 'Found XID errors'), NVML's unknown error inside a container (docker exec, kubectl logs); and healthy texts:
listings whose GPU tasks run or sleep, nhc -v's passing run, a count check failing on an edited nhc.conf, HAMi's
registered devices, ray status. Each fault judged with its cause and severity, each healthy text read with no warn
and never refused. The lines (benchmarks/data/r14d_phrasebook.json, each source named there) are set bare, under
the command typed at a prompt, fenced under a poster's sentence, and (one-line cases) in a poster's sentence.

    .venv/bin/python -m benchmarks.r14d_phrasebook [--show clear,generic,false,refused]
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.support.phrasebook import node_framings, run_framed

DATA = Path(__file__).parent / "data" / "r14d_phrasebook.json"


def main(argv: list[str] | None = None) -> int:
    return run_framed(__doc__, argv, DATA, node_framings, ("faults", "healthy"))


if __name__ == "__main__":
    raise SystemExit(main())
