"""Issue 46: Axera's ``axcl_smi`` / ``axcl-smi`` table (the AXCL runtime's node tool for AX650N cards, shaped like
nvidia-smi's): its banner 'AXCL-SMI  V2.18.0 … Driver  V2.18.0', then per card a row of index, name, firmware, bus
id and memory used / total, and a row of fan, temperature, power usage / cap, CPU and NPU use and CMM (the card's
media memory) used / total; its Processes section lists the card index, PID, name and NPU memory. Read as the
card's inventory and readings; it prints no health word, so a card is never judged from this table."""

from __future__ import annotations

import re
from dataclasses import replace

from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.records import ListedModule, ListedParse, SmiProcess, StateReading
from gpuvet.captures.text import MAX_MODULES, Line

TOOL = "axcl-smi"
MARKERS = ("AXCL-SMI",)
_BANNER = lazy(r"^\s*\|\s*AXCL-SMI\s+(V?[\w.-]{1,32})\s+Driver\s+(V?[\w.-]{1,32})\s*\|")
_ROW1 = lazy(r"^\s*\|\s*(\d{1,3})\s+(\S{1,40})\s+(V?[\w.-]{1,32})\s*\|\s*([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:"
             r"[0-9a-fA-F]{2}\.[0-7])\s*\|\s*(\d{1,9})\s*MiB\s*/\s*(\d{1,9})\s*MiB\s*\|\s*$")
_ROW2 = lazy(r"^\s*\|\s*(\S{1,6})\s+(\d{1,3}|--)C?\s+(\S{1,8})\s*/\s*(\S{1,8})\s*\|\s*(\d{1,3})%\s+(\d{1,3})%\s*\|"
             r"\s*(\d{1,9})\s*MiB\s*/\s*(\d{1,9})\s*MiB\s*\|\s*$")
_PROC = lazy(r"^\s*\|\s*(\d{1,3})\s+(\d{1,9})\s+(\S{1,200})\s+(\d{1,12}\s*[KMG]iB)\s*\|\s*$")
_FRAME = lazy(r"^\s*[+|][-=+|]*\s*$|^\s*\|\s*(?:Card\s+Name|Fan\s+Temp|Processes:|Card\s+PID)")


_MAX_PROCS = 64  # processes kept per card


def read(lines: list[Line], out: ListedParse) -> None:
    """The cards of the axcl-smi tables in the lines, each as its last table lists it, with the processes that
    table's Processes section lists on it (a watch log's thousand tables are one card each, never a thousand copies)."""
    if not any("AXCL-SMI" in ln.text for ln in lines):
        return
    cards: dict[str, ListedModule] = {}
    procs: dict[str, dict[str, SmiProcess]] = {}  # this table's, by card index then pid
    table: list[str] = []  # this table's cards' bus ids
    notes: dict[str, None] = {}
    for i, ln in enumerate(lines):
        text = ln.text
        if (b := _BANNER.match(text)) is not None:
            _attach(cards, table, procs)
            table, procs = [], {}
            out.driver = b.group(2)
            notes[f"{TOOL}: version {b.group(1)}, driver {b.group(2)}"] = None
        elif (r := _ROW1.match(text)) is not None:
            second = _ROW2.match(lines[i + 1].text) if i + 1 < len(lines) else None
            card = _card(r, second)
            if card.bus_id in cards or len(cards) < MAX_MODULES:
                cards[card.bus_id or card.label] = card
                table.append(card.bus_id or card.label)
            notes[f"{TOOL}: card {r.group(1)} {r.group(2)}: firmware {r.group(3)}"] = None
            out.claimed |= {ln.no} | ({lines[i + 1].no} if second else set())
            continue
        elif (p := _PROC.match(text)) is not None and not _ROW2.match(text):
            held = procs.setdefault(p.group(1), {})
            if p.group(2) in held or len(held) < _MAX_PROCS:
                held[p.group(2)] = SmiProcess(p.group(2), "C", p.group(3), p.group(4))
        elif not _FRAME.match(text):
            continue
        out.claimed.add(ln.no)
    _attach(cards, table, procs)
    if cards:
        out.kinds.append(TOOL)
        out.modules += cards.values()
        out.notes += notes


def _attach(cards: dict[str, ListedModule], table: list[str], procs: dict[str, dict[str, SmiProcess]]) -> None:
    """A table's processes onto its own cards (by the card index its Processes rows print)."""
    if not procs:
        return
    for key in table:
        card = cards[key]
        cards[key] = replace(card, processes=tuple(procs.get(card.label.split()[-1], {}).values()))


def _card(r: re.Match[str], second: re.Match[str] | None) -> ListedModule:
    """One card from its two rows; a second row cut or absent leaves its readings unknown."""
    temp = power = cap = npu = None
    if second is not None:
        temp = float(second.group(2)) if second.group(2).isdigit() else None
        power = _watts(second.group(3))
        cap = _watts(second.group(4))
        npu = float(second.group(6))  # the NPU's use: the accelerator's engine (CPU%: the card's own host cores)
    state = StateReading(busy_pct=npu, power_w=power, power_cap_w=cap, memory_used_mib=float(r.group(5)))
    return ListedModule(f"Card {r.group(1)}", name=f"Axera {r.group(2)}", bus_id=r.group(4).upper(),
                        memory_mib=float(r.group(6)), temperature_c=temp, power_limit_w=cap, tool=TOOL, state=state)


def _watts(text: str) -> float | None:
    digits = text.rstrip("Ww")
    return float(digits) if digits.replace(".", "", 1).isdigit() and len(digits) <= 8 else None
