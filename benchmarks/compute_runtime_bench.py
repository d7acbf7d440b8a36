"""Issue 46 (R3B): the compute runtimes' device listings and their failures, read as a class: sycl-ls (its three
line forms), clinfo -l, rocminfo's /dev/kfd and hsa_init failures, amdgpu's KFD refusing an ASIC, a kernel booted
with nomodeset and no DRM device bound, i915's reduced BAR on Arc. Each listing
(benchmarks/data/compute_runtime_bench.json, each naming its
source) is framed as a paste shows it: bare, behind the shell prompt that ran it, in a markdown fence, indented as
a markdown code block, quoted with '> '. Counted: right (the kind expected in the finding's evidence), generic
(another finding), clear (no finding), refused (exit 2); healthy listings: clean, false (a warn or above) or
refused.

    .venv/bin/python -m benchmarks.compute_runtime_bench [--show generic,clear,refused,false]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

from benchmarks.support.phrasebook import LOUD, doctor

DATA = Path(__file__).parent / "data" / "compute_runtime_bench.json"


def framings(text: str) -> dict[str, str]:
    """The listing as each kind of paste shows it."""
    return {
        "bare": text,
        "prompt": "$ sycl-ls; clinfo -l; rocminfo\n" + text,
        "fenced": "```\n" + text + "\n```",
        "indented": "\n".join("    " + ln for ln in text.splitlines()),
        "quoted": "\n".join("> " + ln for ln in text.splitlines()),
    }


def judged(text: str, where: Path) -> tuple[int, list[str]]:
    """doctor --from's exit and the evidence of each finding at warn or above (exit 2: refused)."""
    code, found = doctor(text, where)
    return code, [f"{f['cause']} {f['evidence']}" for f in found if f["severity"] in LOUD]


def verdict(want: str | None, code: int, found: list[str]) -> str:
    if code == 2:
        return "refused" if want else "h-refused"
    if want is None:
        return "clean" if not found else "false"
    said = (f"'kind': '{want}'", f"'message': '{want}'")  # an application's kind, or a kernel message's
    return "right" if any(w in f for f in found for w in said) else ("generic" if found else "clear")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--show", default="generic,clear,refused,false,h-refused", help="the verdicts to list")
    show = set(parser.parse_args(argv).show.split(","))
    tally: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "capture.txt"
        for case in json.loads(DATA.read_text(encoding="utf-8")):
            for frame, text in framings(case["text"]).items():
                code, found = judged(text, where)
                tally[v := verdict(case["want"], code, found)] += 1
                if v in show:
                    print(f"{v:8} {frame:9} {case['name']} -> {[f[:90] for f in found]} (want {case['want']})")
    faulty = sum(tally[k] for k in ("right", "generic", "clear", "refused"))
    print(
        f"faulty framings {faulty}: right {tally['right']}, generic {tally['generic']}, clear {tally['clear']}, "
        f"refused {tally['refused']}; healthy {tally['clean'] + tally['false'] + tally['h-refused']}: clean "
        f"{tally['clean']}, false {tally['false']}, refused {tally['h-refused']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
