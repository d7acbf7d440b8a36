"""Issue 46: the kernel's PCI enumeration and resource lines about a GPU, and the GPU drivers' word on its BARs.

benchmarks/data/pci_resource_phrasebook.json holds the lines as Linux and the drivers print them (the source of
each named): a BAR the kernel could not assign or claim, the NVIDIA driver's 'BAR1 is 0M', a function not ready
after a reset ('not ready 1023ms after resume; giving up'), a hot-plug slot's link down, a DPC containment, a link
the kernel's quirk could not retrain, IOMMU faults on the GPU's bus id, amdgpu's small BAR; and the healthy lines
of the same class (assigned BARs, the enumeration, bridge windows' add_size, the x86 'resource sanity check …
mapping multiple BARs' and PAT notes the NVIDIA driver causes, a ROM with no more image, a slot's link up). Each
row is framed as logs show it (dmesg stamps, journalctl, syslog, a poster's sentence quoting its last line) after
the GPU's enumeration line and its bridge's, and alone (syslog stamps, bare lines, a sentence quoting its first
line: no enumeration line names the GPU); ``gpuvet doctor --from --json`` reads it.

Alone, no line says the function is a GPU: a lead on its bus id ('generic') is the honest reading there, and a
healthy row's refusal is a miss only where its lines name a GPU driver ('unnamed' where they name none). A fault
row is 'right' when a finding names its cause on its module, 'generic' when another finding at warn or above
stands instead, 'clear' when none does, 'refused' when nothing was read. A healthy row is 'clear' (right), 'false'
(a finding at warn or above) or 'refused'.

    .venv/bin/python benchmarks/pci_resource_phrasebook.py [--show]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

from benchmarks.support.phrasebook import LOUD
from benchmarks.support.phrasebook import doctor as run_doctor

DATA = Path(__file__).parent / "data" / "pci_resource_phrasebook.json"
NO_BUS = "bus id not in the log"
_GPU = re.compile(r"\bnvidia\b|\bamdgpu\b|\[(?:10de|1002):", re.I)  # a line that names a GPU or its driver
FRAMES = ("dmesg", "journal", "syslog", "alone", "bare", "quoted")
ALONE = ("alone", "bare", "quoted")  # the framings without the GPU's enumeration and bridge lines before the row


def framed(frame: str, lines: list[str]) -> str:
    """The lines as a log of ``frame`` shows them."""
    if frame == "dmesg":
        return "\n".join(f"[    {1.234567 + i / 1000:.6f}] {ln}" for i, ln in enumerate(lines))
    if frame == "journal":
        return "\n".join(f"Dec 07 08:12:{3 + i:02d} node1 kernel: {ln}" for i, ln in enumerate(lines))
    if frame in ("syslog", "alone"):
        return "\n".join(f"Dec  7 08:12:{3 + i:02d} node1 kernel: {ln}" for i, ln in enumerate(lines))
    if frame == "bare":
        return "\n".join(lines)
    return f"Since the BIOS update my server's dmesg shows `{lines[0]}` at every boot."


def doctor(text: str, where: Path) -> tuple[int, list[dict[str, object]]]:
    """(exit status, findings at warn or above) of doctor --from on ``text``; 2 where it refused the file."""
    code, found = run_doctor(text, where)
    return code or 0, [f for f in found if f.get("severity") in LOUD] + [f for f in found if f.get("severity") not in LOUD]


def verdict(want: str | None, module: str | None, code: int, found: list[dict[str, object]]) -> str:
    if code == 2:
        return "refused"
    serious = [f for f in found if f.get("severity") in LOUD]
    if want is None:
        return "false" if serious else "clear"
    if any(f["cause"] == want and f.get("module") in (module, NO_BUS) for f in found):
        return "right"
    return "generic" if serious else "clear"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--show", action="store_true", help="list every row not read right, with what doctor found")
    args = ap.parse_args(argv)
    data = json.loads(DATA.read_text(encoding="utf-8"))
    tally: dict[tuple[str, str], Counter[str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "capture.log"
        for source, text, want, module in data["rows"]:
            body = text.split("\n")
            context = [
                data["amd_gpu"] if (module or "").startswith("0000:03") or "amdgpu" in text else data["gpu"],
                data["bridge"],
            ]
            for frame in FRAMES:
                lines = body if frame in ALONE else context + body
                code, found = doctor(framed(frame, lines), where)
                v = verdict(want, module, code, found)
                v = "unnamed" if v == "refused" and want is None and frame in ALONE and not _GPU.search(text) else v
                key = ("healthy" if want is None else "fault", "alone" if frame in ALONE else "beside the GPU")
                tally.setdefault(key, Counter())[v] += 1
                if args.show and v not in ("right", "clear") or args.show and want and v == "clear":
                    got = [(f["cause"], f.get("severity"), f.get("module")) for f in found]
                    print(f"{v:8} {frame:8} {source}: {body[-1][:90]!r} -> {got} (want {want})")
    for (kind, where), c in sorted(tally.items()):
        n = len(FRAMES) - len(ALONE) if where != "alone" else len(ALONE)
        print(
            f"{kind} rows, {where} ({n} framings): {sum(c.values())}: "
            + ", ".join(f"{k} {c[k]}" for k in ("right", "generic", "clear", "false", "refused", "unnamed"))
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
