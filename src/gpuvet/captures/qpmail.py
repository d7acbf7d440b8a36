"""Issue 46 (R12D): a kernel log pasted from a mail or a bug tracker's mail copy in quoted-printable (RFC 2045
6.7): the mailer broke each line longer than 76 characters with a soft break, an '=' at the line's end, and wrote
'=' itself as '=3D' (a space or '!' as '=20', '=21'). A driver's line so broken ('ASIC reset failed with error, -='
then '38 for drm dev, ...') holds its words on two lines; joined at the breaks it reads as the driver printed it.
Read so only where the text is a mail's: two or more lines of a mail's width (60-78 characters) end in one '=' and
go on unindented below (a tool's help text that ends a line on '[default =' goes on indented)."""

from __future__ import annotations

import re

_ESCAPE = re.compile(r"=(3D|2[01])")  # '=', ' ', '!': the escapes a kernel line's words need
_LEAST = 2  # soft breaks from which on the text is a quoted-printable mail's
_WIDTH = (60, 78)


def soft_breaks(text: str) -> tuple[list[str], list[int]]:
    """The lines of ``text`` with each soft break's '=' taken off and the escapes read, and the 0-based indices
    of the lines that continue the one before them; ([], []) where the text is no quoted-printable mail's."""
    if "=\n" not in text:  # most texts: one search
        return [], []
    lines = text.split("\n")
    breaks = [i for i, s in enumerate(lines[:-1]) if _broken(s) and not lines[i + 1].startswith(("  ", "\t"))]
    if len(breaks) < _LEAST:
        return [], []
    for i in breaks:
        lines[i] = lines[i][:-1]
    return [_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), s) if "=" in s else s for s in lines], [i + 1 for i in breaks]


def _broken(s: str) -> bool:
    """One '=' ends a line of a mail's width ('==' is a tool's rule or a comparison, never a soft break)."""
    return _WIDTH[0] <= len(s) <= _WIDTH[1] and s.endswith("=") and not s.endswith("==")
