"""A paste copied as a web page's HTML source (a blog's ``<pre><code><span>$ </span>hccn_tool …``): the page's
markup tags taken off every line, so the tool's output inside reads as printed (issue 46). Only where the text is
HTML (lines closing the tags a page wraps code in); only those tags; every line kept, one that held only tags
empty. XML a tool prints (nvidia-smi -q -x, NCCL's topology) names other elements and is left as it is."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpuvet.captures.decorations import Numbered

# the elements a page renders prose and code in (not a tool's: nvidia-smi's XML and NCCL's topology name others)
_ELEMENTS = (r"(?:span|div|pre|code|p|br|a|em|strong|b|i|u|li|ul|ol|h[1-6]|blockquote|hr|img|sup|sub|kbd|samp|tt|"
             r"td|tr|th|table|tbody|thead)")
_TAG = re.compile(r"</?" + _ELEMENTS + r"(?:\s[^<>]{0,400})?/?>", re.I)
_CLOSING = re.compile(r"</" + _ELEMENTS + r">", re.I)
HTML_LINES = 2  # lines closing a page's element from which on the text is the page's HTML, not a stray '<b>'


def untagged(numbered: Numbered, notes: list[str], quoted: bool,
             holding: Callable[[Numbered, str], Numbered]) -> Numbered:
    """The lines with a page's markup tags removed where the text is HTML (``quoted``: the text holds a '>', the
    survey's one-pass test; none, no tag; ``holding``: the lines holding a word, a long text's found in its text);
    else the lines as given."""
    if not quoted:
        return numbered
    closing = [n for n, s in holding(numbered, "</") if _CLOSING.search(s) is not None]
    if len(closing) < HTML_LINES:
        return numbered
    tagged = {n for n, s in holding(numbered, "<") if _TAG.search(s) is not None}
    notes.append(f"{len(tagged)} line(s) held a web page's HTML tags (<span>, <pre>, <code> …; its source copied): "
                 "the tags taken off, every line kept")
    return [(n, _TAG.sub("", s)) if n in tagged else (n, s) for n, s in numbered]
