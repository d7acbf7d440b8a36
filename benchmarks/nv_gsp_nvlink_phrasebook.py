"""Issue 46 (R9A): the NVIDIA driver's GSP RPC timeout stack frames and NVLink discovery failures, read as gpuvet's
kernel reader reads them, in the framings captures show.

benchmarks/data/nv_gsp_nvlink_phrasebook.json holds the driver's strings (each with its source) that say a fault,
and healthy lines of the same kind (a stale '? ' frame, the RPC frame above the poll, the NVLink core's start).
Each line is read in four framings: bare, a dmesg stamp, a journalctl prefix, and inside a kernel stack dump (the
frames) or after a healthy NVRM line. A fault line counts as right (its cause named), generic (only
driver_error_unnamed: a lead) or clear; a healthy line counts as false when any kind is read from it.
Usage: .venv/bin/python benchmarks/nv_gsp_nvlink_phrasebook.py
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from gpuvet.captures import kernel
from gpuvet.captures.kernel_messages import kernel_message_catalog
from gpuvet.captures.text import Line

DATA = Path(__file__).parent / "data" / "nv_gsp_nvlink_phrasebook.json"
OK = "NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  580.82.07  Release Build"
FRAMINGS = {
    "bare": lambda s: [OK, s],
    "dmesg": lambda s: [f"[ 4711.123456] {OK}", f"[ 4711.123999] {s}"],
    "journal": lambda s: [f"Oct 03 18:00:02 host7 kernel: {OK}", f"Oct 03 18:00:02 host7 kernel: {s}"],
    "stack": lambda s: [
        "Oct 03 18:00:02 host7 kernel: Call Trace:",
        "Oct 03 18:00:02 host7 kernel:  <TASK>",
        "Oct 03 18:00:02 host7 kernel:  os_dump_stack+0xe/0x20 [nvidia]",
        f"Oct 03 18:00:02 host7 kernel:  {s}",
    ],
}


def kinds_of(texts: list[str]) -> set[str]:
    got = kernel.parse([Line(i + 1, t) for i, t in enumerate(texts)])
    return {e.kind for e in got.events} | {f"xid{x.code}" for x in got.xids}


def main() -> None:
    data = json.loads(DATA.read_text(encoding="utf-8"))
    catalog = kernel_message_catalog()
    faults: Counter[str] = Counter()
    false: list[str] = []
    for _, cause, text in data["faults"]:
        for name, frame in FRAMINGS.items():
            causes = {catalog[k].cause if k in catalog else k for k in kinds_of(frame(text))}
            read = "right" if cause in causes else "generic" if causes else "clear"
            faults[read] += 1
            if read != "right":
                print(f"  [{name}/{read}] {text}  {sorted(causes)}")
    healthy = 0
    for text in data["healthy"]:
        for name, frame in FRAMINGS.items():
            healthy += 1
            if kinds := kinds_of(frame(text)):
                false.append(f"{name}: {text} {sorted(kinds)}")
    print(
        f"fault lines x framings: {sum(faults.values())}: right {faults['right']}, generic {faults['generic']}, "
        f"clear {faults['clear']}"
    )
    print(f"healthy lines x framings: {healthy}: false findings {len(false)}")
    for f in false:
        print(f"  false: {f}")


if __name__ == "__main__":
    main()
