"""A tool's --json output that a paste cut short: read up to its last complete field.

People paste rocm-smi/amd-smi --json into threads, and the stored copy often stops before the
closing braces, or breaks inside a string where the text was wrapped or lost (a raw line break in
a JSON string is never the tool's). What stands before the last comma outside a string is whole:
closing the brackets still open there gives valid JSON with every field that was complete, and
nothing after the break is guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*(")?|[{}\[\],]')
_CLOSE = {"{": "}", "[": "]"}


@dataclass(frozen=True)
class Salvage:
    """The repaired text, how many of the source's lines it keeps whole, and why it stopped."""

    text: str
    lines_kept: int  # the lines up to (and including) the one holding the last complete field
    broken: bool  # True: a string broken across lines (text lost there); False: the text just ends


def salvage(text: str) -> Salvage | None:
    """The complete part of a cut JSON document, closed; None when it is not a cut document (it is
    whole, malformed before any break, or has no complete field)."""
    stack: list[str] = []
    safe: tuple[int, tuple[str, ...]] | None = None
    broken = False
    for m in _TOKEN.finditer(text):
        tok = m.group(0)
        if tok[0] == '"':
            if m.group(1) is None:  # the string runs into a line break or the end: the paste stops here
                broken = bool(text[m.end():].strip())
                break
        elif tok in _CLOSE:
            stack.append(tok)
        elif tok in "}]":
            if not stack or _CLOSE[stack.pop()] != tok or not stack:
                return None  # mismatched, or the document closed: not a cut one
        elif stack:  # a comma: everything before it is whole
            safe = (m.start(), tuple(stack))
    if safe is None:
        return None
    at, open_ = safe
    closed = text[:at] + "".join(_CLOSE[b] for b in reversed(open_))
    return Salvage(closed, text.count("\n", 0, at) + 1, broken)


_MEMBER = re.compile(r'\s*"[^"\n]{1,80}"\s*:')
CUT_KEY = "(cut)"  # the key of an object whose own key the paste cut off


def fragment(text: str) -> Salvage | None:
    """A paste that starts inside a document, at an object's member (``"fclk_0": {``): the objects
    its unmatched closing brackets end are opened before it under the key ``(cut)`` (their own
    keys were cut off, and are not guessed), and its end is salvaged as a cut document's; None
    when it does not start at a member or no complete field is left."""
    if not _MEMBER.match(text):
        return None
    prefix, depth = "{", 0
    for m in _TOKEN.finditer(text):
        tok = m.group(0)
        if tok[0] == '"':
            if m.group(1) is None:
                break
        elif tok in _CLOSE:
            depth += 1
        elif tok in "}]":
            if depth:
                depth -= 1
            else:  # closes an object opened before the paste began: its parent holds it under (cut)
                prefix = ("[" if tok == "]" else '{"' + CUT_KEY + '": ') + prefix
    return salvage(prefix + text)
