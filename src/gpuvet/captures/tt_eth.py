"""Issue 46 (R13D): tt-metal's wait for a Tenstorrent chip's ethernet ports to train (tt_metal/llrt/tt_cluster.cpp:
'Waiting for ethernet ports to train on chip [1, 0, 0, 0].', then '[n; [1, 0, 0, 0]] Still waiting... {0: True, …,
14: False, …}' each poll). A port the last poll still reads False never trained: the chip-to-chip link on it (a
cable, a connector, a board's port or its firmware) is down, and a multi-chip workload on that mesh cannot start. A
warn on the chip (its mesh coordinates: the log gives no bus id), the ports named; a wait whose ports all read
True is no fault."""

from __future__ import annotations

import re

from gpuvet.captures.records import ListedModule, ListedParse
from gpuvet.captures.text import Line

MARKERS = ("Still waiting", "ethernet ports to train")
NOT_TRAINING = "tt-metal: ethernet ports not training"  # the verdict path (captures/verdicts.py: its severity)
SEVERITY = {NOT_TRAINING: "warn"}
TOOL = "tt-metal"
_POLL = re.compile(r"\[\d{1,6}; \[(\d{1,3}(?:, \d{1,3}){3})\]\] Still waiting\.\.\. \{([^}]{0,2000})\}")
_PORT = re.compile(r"\b(\d{1,3}): (True|False)\b")


def read(lines: list[Line], out: ListedParse) -> None:
    """Each chip polled, listed; the ports its last poll read False one verdict on it; the polls' lines claimed."""
    last: dict[str, tuple[Line, list[str]]] = {}
    polls: list[int] = []
    for ln in lines:
        if "Still waiting" not in ln.text or (m := _POLL.search(ln.text)) is None:
            continue
        polls.append(ln.no)
        last[m.group(1)] = (ln, [p.group(1) for p in _PORT.finditer(m.group(2)) if p.group(2) == "False"])
    for chip, (ln, down) in last.items():
        said = f"chip [{chip}]: ethernet port(s) {', '.join(down[:8])} never trained (the last poll still reads False)"
        ras = ((NOT_TRAINING, f"{said}, line {ln.no}"),) if down else ()
        out.modules.append(ListedModule(f"TT chip [{chip}]", "Tenstorrent chip", tool=TOOL, ras=ras))
    if polls:
        out.claimed |= set(polls)
        out.kinds.append(TOOL)
