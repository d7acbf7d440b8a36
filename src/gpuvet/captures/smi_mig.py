"""`nvidia-smi mig -lgi / -lgip / -lci / -lcip`: the boxes that list a module's MIG GPU instances, the
profiles it offers, its compute instances and their profiles (``| GPU instances: |`` over rows
``|   0  MIG 1g.10gb   19   9   2:1 |``; a profile's second row holds more columns, no index). A
partition is a configuration, not a fault: each box is read for what it names (the modules by index,
the profiles, how many instances) and said; nothing is judged from it. ``No GPU instances found`` and
``No MIG-enabled devices found`` are said as printed."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from gpuvet.captures.text import Line

_TITLE = re.compile(r"^\s*\|\s*(GPU instances|GPU instance profiles|Compute instances|Compute instance profiles):\s*\|")
_COMMAND = {"GPU instances": "-lgi", "GPU instance profiles": "-lgip", "Compute instances": "-lci",
            "Compute instance profiles": "-lcip"}
_BOX = re.compile(r"^\s*(?:\|.*\||\+[-=+]+\+?)\s*$")  # a row or an edge of the box (an edge cut short too)
_ROW = re.compile(r"^\s*\|\s*(\d{1,4})\s+(?:\d{1,4}\s+)?MIG\s+(\S{1,40})\s")  # GPU [GPU instance] MIG <profile>
_NONE = re.compile(r"No (?:GPU|compute) instances? (?:profiles? )?found|No MIG-enabled devices found", re.I)


@dataclass
class MigListing:
    """What the boxes name: per box, the command it is, the modules (nvidia-smi's index) and profiles."""

    boxes: list[tuple[str, list[tuple[int, str]]]] = field(default_factory=list)  # (command, [(gpu, profile)])
    claimed: set[int] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)


def parse(lines: list[Line]) -> MigListing:
    out = MigListing()
    box: tuple[str, list[tuple[int, str]]] | None = None
    for i, ln in enumerate(lines):
        if (t := _TITLE.match(ln.text)) is not None:
            box = (_COMMAND[t.group(1)], [])
            out.boxes.append(box)
            out.claimed |= {ln.no} | ({lines[i - 1].no} if i and lines[i - 1].text.strip().startswith("+") else set())
        elif box is not None and _BOX.match(ln.text):
            out.claimed.add(ln.no)
            if (r := _ROW.match(ln.text)) is not None:
                box[1].append((int(r.group(1)), r.group(2)))
        elif _NONE.search(ln.text) and ("MIG" in ln.text or "instance" in ln.text):
            out.claimed.add(ln.no)
            out.notes.append(f"nvidia-smi mig: '{ln.text.strip()[:120]}' (line {ln.no})")
        else:
            box = None
    out.notes += [_said(command, rows) for command, rows in out.boxes]
    return out


def _said(command: str, rows: list[tuple[int, str]]) -> str:
    """'nvidia-smi mig -lgi: 4 row(s) on GPU 0, 1: 1g.10gb x2, 2g.20gb, 3g.40gb; a configuration, not judged'."""
    if not rows:
        return f"nvidia-smi mig {command}: its box lists no row (cut, or none configured)"
    gpus = ", ".join(str(g) for g in sorted({g for g, _ in rows}))
    kinds = Counter(p for _, p in rows)
    named = ", ".join(f"{p} x{n}" if n > 1 else p for p, n in kinds.items())
    what = "profile(s) offered" if command.endswith("p") else "instance(s)"
    return (f"nvidia-smi mig {command}: {len(rows)} {what} on GPU {gpus}: {named}; MIG partitioning is a "
            "configuration, not judged")
