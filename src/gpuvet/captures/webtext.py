"""Text copied from a rendered web page, read as the tool printed it (decorations.peel's first step): no-break
and zero-width spaces, the quotes, ellipsis and dashes a page typesets, and HTML entities."""

from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING

from gpuvet.captures import htmltext

if TYPE_CHECKING:
    from gpuvet.captures.decorations import Numbered, Survey

_SPACES = str.maketrans({"\u00a0": " ", "\u202f": " ", "\u2007": " ", "\u200b": None, "\u2060": None})
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2026": "..."})
_DASHES = str.maketrans({"\u2013": "--", "\u2014": "--"})  # a word processor's or chat app's dash for '--': no tool's
_WEB = str.maketrans({**_SPACES, **_QUOTES, **_DASHES})
_ELLIPSIS = str.maketrans({"\u2026": "..."})
_OWN_QUOTES = {**_SPACES, **_ELLIPSIS, **_DASHES}  # a line that kept an ASCII '"': its curly
# quotes are its own (a JSON string value's “GPU memory”), never a web page's typesetting, which turns every '"'
WEB_SPACE = re.compile("[\u00a0\u202f\u2007\u200b\u2060\u2018\u2019\u201c\u201d\u2026\u2013\u2014]")
ENTITY = re.compile(r"&(?:gt|lt|amp|quot|#39|#x27|nbsp);")
XML = re.compile(r"<\?xml|<nvidia_smi_log|<gpu id=")


def web_text(numbered: Numbered, notes: list[str], survey: Survey) -> Numbered:
    """Text copied from a rendered web page: no-break and zero-width spaces (a matrix split at them reads
    as one cell), the curly quotes and ellipsis a blog or forum typesets for ' " and ... (a JSON in “…”
    reads as none; no tool prints them), and HTML entities (`-&gt;`) where the capture is not XML, whose
    own escapes they are."""
    numbered = numbered if survey.xml else htmltext.untagged(numbered, notes, survey.quoted, _holding)  # page's HTML
    web = survey.web
    spaced = [n for n, s in numbered if s != s.translate(_SPACES)] if web else []
    typeset = [n for n, s in numbered if s != s.translate(_QUOTES if _typeset(s) else _ELLIPSIS)] if web else []
    dashed = [n for n, s in numbered if s != s.translate(_DASHES)] if web else []
    escaped = set() if survey.xml or not survey.entity else {n for n, s in _holding(numbered, "&") if ENTITY.search(s)}
    if not spaced and not typeset and not dashed and not escaped:
        return numbered
    if spaced:
        notes.append(f"{len(spaced)} line(s) held no-break or zero-width spaces (copied from a web page): read as "
                     "spaces")
    if typeset:
        notes.append(f"{len(typeset)} line(s) held curly quotes or an ellipsis character (typeset by a web page): "
                     "read as ' \" and ...")
    if dashed:
        notes.append(f"{len(dashed)} line(s) held an en or em dash (a word processor's or chat app's for '--'): read "
                     "as --")
    if escaped:
        notes.append(f"{len(escaped)} line(s) held HTML entities (&gt;, &amp; …; copied from a web page): unescaped")
    web_lines = [(n, s.translate(_WEB if _typeset(s) else _OWN_QUOTES)) for n, s in numbered]
    return [(n, html.unescape(s).translate(_SPACES)) if n in escaped else (n, s) for n, s in web_lines]  # &nbsp; too


def _typeset(line: str) -> bool:
    """Whether the line's quotes are a web page's: typesetting turns every '"' on a line, so a line that
    holds one (a JSON key or value) quotes with its own characters, curly ones included."""
    return '"' not in line


def _holding(numbered: Numbered, word: str) -> Numbered:
    """The lines holding ``word`` (a long text's found in its text: lines.TextLines)."""
    holding = getattr(numbered, "holding", None)
    at = None if holding is None else holding([word])
    return [item for item in numbered if word in item[1]] if at is None else [numbered[i] for i in at]
