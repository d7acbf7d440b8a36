"""Issue 46 (R5A): amdgpu's SMU/powerplay messaging and SR-IOV mailbox lines, HIP's build without the GPU's target
and XPU Manager's service line, each in the framings pastes show (bare dmesg with the driver's prefix, a journal
line, fenced, quoted in a poster's sentence), scored: right (cause and severity), other (another finding), clear,
refused; and amdgpu's healthy SMU lines (bare, journal): clean or false (a finding at warn or above).
benchmarks/data/r5a_phrasebook.json names each message's source.

    .venv/bin/python -m benchmarks.r5a_phrasebook
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from pathlib import Path

from benchmarks.support.phrasebook import LOUD, read

DATA = Path(__file__).parent / "data" / "r5a_phrasebook.json"
_BUS = "amdgpu 0000:0a:00.0: amdgpu: "


def framings(line: str, kernel: bool) -> list[str]:
    """The message as posters paste it: a kernel line with dmesg's stamp or the journal's, a runtime's line bare."""
    own = f"{_BUS}{line}" if kernel else line
    return [
        f"[   10.116367] {own}" if kernel else own,
        f"Nov 03 20:31:31 node kernel: {own}" if kernel else f"$ ./run.sh\n{own}",
        f"```\n[   10.116367] {own}\n```" if kernel else f"```\n{own}\n```",
        f"dmesg shows:\n    {own}" if kernel else f"the log says:\n    {own}",
    ]


def main() -> None:
    data = json.loads(DATA.read_text(encoding="utf-8"))
    tally: Counter[str] = Counter()
    healthy: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "paste.txt"
        for entry in data["faults"]:
            for text in framings(entry["line"], entry["kernel"]):
                _, found = read(text, where)
                got = {(f["cause"], f["severity"]) for f in found or []}
                tally[
                    "refused" if found is None else "right" if tuple(entry["want"]) in got else "other" if got else "clear"
                ] += 1
        for line in data["healthy"]:
            for text in (f"[    4.1] {_BUS}{line}", f"Nov 03 20:31:31 node kernel: {_BUS}{line}"):
                _, found = read(text, where)
                healthy["false" if any(f["severity"] in LOUD for f in found or []) else "clean"] += 1
    total = sum(tally.values())
    print(f"faults {total}: " + ", ".join(f"{k} {tally[k]}" for k in ("right", "other", "clear", "refused")))
    print(f"healthy {sum(healthy.values())}: clean {healthy['clean']}, false {healthy['false']}")


if __name__ == "__main__":
    main()
