"""Text from hardware, captures and users, made safe for a terminal: a control character (an
escape sequence that retitles the window or clears the screen, a carriage return that hides
what came before) is shown as its escape, ``\\x1b``, never sent. No rich import: health's
prolog path prints through this too."""

from __future__ import annotations

import re

# C0 controls but newline and tab, DEL, C1 controls (0x9b is an 8-bit CSI on many terminals),
# and the bidirectional overrides that reorder what a reader sees
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def literal(text: str) -> str:
    """``text`` with every control character escaped; newlines and tabs kept."""
    return _CONTROL.sub(_escape, text) if _CONTROL.search(text) else text


def line(text: str) -> str:
    """One line: newlines escaped too (a Slurm drain reason or an npd message is one line)."""
    return literal(text).replace("\n", "\\n").replace("\t", " ")
