"""Issue 46 (MGL): the GPU management libraries' status codes as programs quote them, read as a class.
benchmarks/data/mgmt_status_phrasebook.json holds what a device plugin, an exporter, a monitor, xpumd, hl-smi or a
Python binding logs when a call to NVML, AMD SMI, ROCm SMI, Level Zero or HLML fails: the enum's name, its number
(``ret=999``, ``nvml error: 15``, ``0x78000001``), the library's error string, a binding's exception class
(pynvml's ``NVMLError_GpuIsLost``), each with its source; and the healthy lines beside them (a successful init, a
field the product does not support, a call the user's rights refuse), which must stay clear.

Each message is set in the framings real logs show (bare, a klog line, a JSON log line, a Python traceback's last
line, quoted by a poster) and read by ``gpuvet doctor --from`` (in-process). A framing is counted right (the cause at
its severity on the right module: the bus id the line names, or none), severity or subject (the cause, at another
severity or on another subject), generic (another finding only), clear (read, no finding) or refused (exit 2); a
healthy one clean, false (a finding at warn or above) or refused.

    .venv/bin/python -m benchmarks.mgmt_status_phrasebook [--show severity,subject,generic,clear,refused,false]
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from benchmarks.support.phrasebook import healthy_said, placed, print_faults, run, shown

DATA = Path(__file__).parent / "data" / "mgmt_status_phrasebook.json"


@dataclass(frozen=True)
class Message:
    source: str
    printed: str
    want: str | None
    severity: str | None
    subject: str


def framings(m: Message) -> dict[str, str]:
    """The message as logs show it."""
    head, _, rest = m.printed.partition("\n")
    tail = f"\n{rest}" if rest else ""
    exception = "Error_" in head.split(":")[0] or "Exception" in head.split(":")[0]
    return {
        "bare": m.printed,
        "klog": f"E1207 12:00:00.000000       1 metrics.go:45] {head}{tail}",
        "json": json.dumps(
            {"level": "error", "ts": "2026-12-07T12:00:00.000Z", "caller": "nvml/collector.go:88", "msg": m.printed}
        ),
        "traceback": 'Traceback (most recent call last):\n  File "monitor.py", line 41, in <module>\n'
        "    poll(handle)\n" + (m.printed if exception else f"RuntimeError: {m.printed}"),
        "quoted": f"Since the upgrade our exporter keeps logging '{head}' and shows no GPU metrics.",
    }


def _named(module: str, subject: str) -> bool:
    low = module.lower()
    if subject == "bus":
        return "3b:00.0" in low
    return low in ("", "node") or "not in the log" in low


def verdict(m: Message, code: int, found: list[dict[str, str]], quoted: bool) -> str:
    return placed(m.want, m.severity, code, found, quoted, lambda module: _named(module, m.subject), "subject")


def main(argv: list[str] | None = None) -> int:
    show = shown(__doc__, argv)
    data = json.loads(DATA.read_text(encoding="utf-8"))
    messages = [Message(r["source"], r["printed"], r["want"], r["severity"], r["subject"]) for r in data["messages"]]
    faults: dict[str, Counter[str]] = {}
    healthy = Counter[str]()
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "capture.txt"
        for m in messages:
            for frame, text in framings(m).items():
                code, found = run(text, where)
                v = verdict(m, code, found, quoted=frame == "quoted")
                (healthy if m.want is None else faults.setdefault(m.source, Counter()))[v] += 1
                if v in show:
                    print(
                        f"{v:9} {frame:9} {m.printed.splitlines()[0][:70]!r} -> "
                        f"{[(f['cause'], f['severity'], f['module']) for f in found]} (want {m.want} {m.severity})"
                    )
    print(f"{len(messages)} messages; sources: {', '.join(data['sources'])}")
    print_faults("library", 12, faults)
    print(healthy_said(healthy))
    return 0


if __name__ == "__main__":
    sys.exit(main())
