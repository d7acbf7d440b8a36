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

import contextlib
import io
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks.support.phrasebook import LOUD, doctor, shown

from gpuvet.cli.app import main as gpuvet

DATA = Path(__file__).parent / "data" / "side_tables_phrasebook.json"
PROMPT = {"show_gids": "[root@node ~]# show_gids", "ethtool": "$ sudo ethtool -A ens1f0 rx off tx off",
          "ibstat": "$ ibstat", "simpleP2P": "user@box:~/cuda-samples/build$ ./simpleP2P",
          "mthreads-gmi": "(base) user@worker:~$ mthreads-gmi", "dcgmi": "$ dcgmi dmon -l"}


def framings(tool: str, lines: list[str], stamped: bool = False) -> dict[str, str]:
    """The ways a paste shows the lines."""
    body = [f"[5621799.{i:06d}] {ln}" for i, ln in enumerate(lines)] if stamped else lines
    html = [f"<div><pre><code><span>$ </span>{PROMPT[tool].split('$ ', 1)[-1].split('# ', 1)[-1]}", *body,
            "</code></pre></div>", "<p>That is all it printed.</p>"]
    return {"bare": "\n".join(body), "prompt": "\n".join([PROMPT[tool], *body]),
            "fenced": "\n".join(["It prints this:", "```", *body, "```"]), "html": "\n".join(html)}


def _fault(case: dict[str, Any], text: str, where: Path) -> str:
    code, found = doctor(text, where)
    if code == 2:
        return "refused"
    if any(f["cause"] == case["cause"] and f["severity"] == case["severity"] for f in found):
        return "right"
    if any(f["cause"] == case["cause"] for f in found):
        return "severity"
    return "generic" if any(f["severity"] in LOUD for f in found) else "clear"


def _said(case: dict[str, Any], text: str, where: Path) -> str:
    where.write_text(text + "\n", encoding="utf-8")
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        gpuvet(["doctor", "--from", str(where), "--json"])
    if not out.getvalue().strip():
        return "refused"
    if any(f["severity"] in LOUD for f in json.loads(out.getvalue())["findings"]):
        return "false"
    return "said" if case["said"] in out.getvalue() else "unsaid"


def main(argv: list[str] | None = None) -> int:
    show = shown(__doc__, argv)
    data = json.loads(DATA.read_text())
    tallies: dict[str, Counter[str]] = {"faults": Counter(), "said": Counter(), "healthy": Counter()}
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "paste.txt"
        for group in ("faults", "said", "healthy"):
            for case in data[group]:
                for frame, text in framings(case["tool"], case["lines"], case.get("stamped", False)).items():
                    if group == "faults":
                        verdict = _fault(case, text, where)
                    elif group == "said":
                        verdict = _said(case, text, where)
                    else:
                        code, found = doctor(text, where)
                        verdict = "refused" if code == 2 else "false" if any(
                            f["severity"] in LOUD for f in found) else "clean"
                    tallies[group][verdict] += 1
                    if verdict in show:
                        print(f"{verdict:>8}  {frame:<7} {case['name']}")
    for group, tally in tallies.items():
        print(f"{group}: {sum(tally.values())} framings: " + ", ".join(f"{k} {n}" for k, n in sorted(tally.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
