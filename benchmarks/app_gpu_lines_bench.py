"""Issue 46 (APPX): the GPU lines of programs people run on their own GPUs, read as a class. benchmarks/data/
app_gpu_lines.json holds what miners (T-Rex, PhoenixMiner, lolMiner, xmrig), hashcat, Folding@home and ffmpeg's
hardware encoders print about a card (each with its source), the cause a GPU engineer would name for each, the card
it names, and their healthy lines (hashrates, readings, device lists, 'fan speed … not supported'), which must stay
clear.

Each message is set in the framings real pastes show: bare; the program's own log around it, several cards with
the faulty one among healthy peers ('log'); a journal line; a poster's sentence quoting it. Each is read by
``gpuvet doctor --from`` (in-process) and counted right (the cause at its severity on the card: its index as the
program numbers it, or the bus id the log lists for it), severity, module (the cause elsewhere), generic (another
finding only), clear (read, no finding) or refused (exit 2); a healthy one clean, false (warn or above) or refused.
A poster's sentence is a lead: a critical cause quoted is right at warn.

    .venv/bin/python -m benchmarks.app_gpu_lines_bench [--show right,severity,module,generic,clear,refused,false]
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from benchmarks.support.phrasebook import healthy_said, placed, print_faults, run, shown

DATA = Path(__file__).parent / "data" / "app_gpu_lines.json"


@dataclass(frozen=True)
class Message:
    program: str
    printed: str
    want: str | None
    severity: str | None
    module: str  # substrings, '|' between them, one of which the finding's module holds ('' : none named)


def framings(m: Message, peers: list[str]) -> dict[str, str]:
    """The message as pastes show it."""
    return {
        "bare": m.printed,
        "log": "\n".join([*peers, m.printed, *peers]),
        "journal": f"Dec 07 12:00:00 rig1 {m.program.lower()}[2211]: {m.printed}",
        "quoted": f"My rig keeps stopping and the log shows '{m.printed}' every few minutes, any idea?",
    }


def _named(module: str, want: str) -> bool:
    low = module.lower()
    if not want:
        return low in ("", "node") or "not in the log" in low
    return any(w.lower() in low for w in want.split("|"))


def verdict(m: Message, code: int, found: list[dict[str, str]], quoted: bool) -> str:
    return placed(m.want, m.severity, code, found, quoted, lambda module: _named(module, m.module), "module")


def main(argv: list[str] | None = None) -> int:
    show = shown(__doc__, argv)
    data = json.loads(DATA.read_text(encoding="utf-8"))
    messages = [Message(r["program"], r["printed"], r["want"], r["severity"], r["module"]) for r in data["messages"]]
    faults: dict[str, Counter[str]] = {}
    healthy = Counter[str]()
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "capture.txt"
        for m in messages:
            for frame, text in framings(m, data["peers"][m.program]).items():
                code, found = run(text, where)
                v = verdict(m, code, found, quoted=frame == "quoted")
                (healthy if m.want is None else faults.setdefault(m.program, Counter()))[v] += 1
                if v in show:
                    print(
                        f"{v:9} {frame:8} {m.printed[:70]!r} -> "
                        f"{[(f['cause'], f['severity'], f['module']) for f in found]} (want {m.want} {m.module})"
                    )
    print(f"{len(messages)} messages from {len(data['sources'])} programs' sources")
    print_faults("program", 13, faults, ("right", "severity", "module", "generic", "clear", "refused"))
    print(healthy_said(healthy))
    return 0


if __name__ == "__main__":
    sys.exit(main())
