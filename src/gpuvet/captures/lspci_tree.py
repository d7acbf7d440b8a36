"""lspci's tree (``lspci -t``, ``-tv``): the PCIe hierarchy drawn with ``-+-``, ``|``, ``\\-``, a domain and bus
in brackets (``-+-[0000:00]-+-00.0``), a bridge's secondary bus range after its function (``+-01.1-[01]--+-00.0``).

It is structure only: ``-t`` names no device, and ``-tv``'s names stand beside functions whose full bus id
the drawing spreads over its lines. So the tree is read as what it is, the buses and functions counted and
said in a note; no module is listed from it and nothing is judged (a GPU's link is lspci -vvv's)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuvet.captures.text import Line

KIND = "lspci -t"
# the drawing: tree characters, bus brackets and functions, then (-tv) two blanks and the device's name; the name's
# gap is found from a run's first blank only, and the drawing is one character class: linear on a long blank run
_DRAWING = re.compile(r"[ \t|+\\`-][ \t|+\\`\-\[\]0-9a-fA-F:.]*")
_NAME_GAP = re.compile(r"(?<!\s)\s{2,}(?=[A-Za-z])")
_FUNCTION = re.compile(r"[-+]([0-9a-fA-F]{2}\.[0-7])(?![0-9a-fA-F])")  # '-00.0', '+-01.1': a function on the tree
_DOMAIN = re.compile(r"\[([0-9a-fA-F]{4}:[0-9a-fA-F]{2})\]")  # a root's '[0000:00]'
_COMMAND = re.compile(r"\blspci\b(?:\s+-[A-Za-z]+)*\s+-[A-Za-su-z]*t[A-Za-z]*\b")  # 'lspci -tv', 'sudo lspci -t -v'
_BRIDGE = re.compile(r"-\[([0-9a-fA-F]{2}(?:-[0-9a-fA-F]{2})?)\]-")  # a bridge's secondary bus (range)
_TREE_FIRST = frozenset(" \t|+\\`-")  # _DRAWING's first character: a line opening otherwise is no drawing (cheap)


@dataclass
class LspciTree:
    claimed: set[int] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)
    roots: list[str] = field(default_factory=list)  # '0000:00'
    functions: int = 0
    bridges: int = 0
    named: int = 0  # functions -tv named


def parse(lines: list[Line]) -> LspciTree:
    """The tree's lines, counted; an empty LspciTree (nothing claimed) where the text draws none."""
    out = LspciTree()
    command: int | None = None
    for ln in lines:
        if "lspci" in ln.text and _COMMAND.search(ln.text):
            command = ln.no
            continue
        if ln.text[:1] not in _TREE_FIRST or "." not in ln.text:  # no drawing, or no function on it: skip the regexes
            continue
        gap = _NAME_GAP.search(ln.text)
        tree = (ln.text[:gap.start()] if gap is not None else ln.text).rstrip()
        if not _DRAWING.fullmatch(tree) or not (found := _FUNCTION.findall(tree)):
            continue
        out.claimed.add(ln.no)
        out.functions += len(found)
        out.roots += _DOMAIN.findall(tree)
        out.bridges += len(_BRIDGE.findall(tree))
        out.named += 1 if gap is not None else 0
    if out.claimed:
        out.claimed |= {command} if command is not None else set()
        names = (f"{out.named} function(s) named (-tv); its names are not read as modules" if out.named else
                 "no device names (-t without -v): no module is listed from it")
        out.notes.append(f"lspci -t: a PCIe tree of {len(out.roots) or 'no'} root bus(es)"
                         f"{' (' + ', '.join(out.roots[:8]) + ')' if out.roots else ''}, {out.functions} function(s), "
                         f"{out.bridges} bridge(s) to a secondary bus; {names}; nothing judged from it")
    return out
