"""Issue 43 (reading speed): a long text's words found by numpy a step of it at a time (lines._places) mark the
lines str.find marked, and the kernel reader's lines less nvswitch's open notices read as they did with them."""

from __future__ import annotations

import re

from gpuvet.captures import kernel, lines
from gpuvet.captures.lines import TextLines, line_ends, unless
from gpuvet.captures.marks import Marks
from gpuvet.captures.text import Line, clean

BODY = "NVRM: Xid 79\nab abc\nxxabxab\n\nab\ncab ab  \nzzab\n  nvidia-nvswitch3: open\nerror: Xid\nXi\nd\nrror"


def _places(body: str) -> TextLines:
    """``body``'s lines as places in it, as text.clean keeps a long ASCII text's."""
    led = "\n" + body
    starts, ends = line_ends(led, 1)
    return TextLines(led, starts, ends, whole=True)


def test_words_found_a_step_at_a_time_mark_the_lines_holding_them(monkeypatch):
    monkeypatch.setattr(lines, "_SEARCHED", 5)  # steps shorter than most words: words cross a step's end
    places = _places(BODY)
    listed = [Line(n, s) for n, s in enumerate(BODY.split("\n"), 1)]
    for words in (
        ["ab"],
        ["abc", "xab", "b  "],
        ["Xid"],
        ["Xid", "NVRM"],
        ["d"],
        ["nvidia", "rror"],
        ["zzab"],
        ["rror"],
        ["absent"],
        [" "],
    ):
        want = [i for i, ln in enumerate(listed) if any(w in ln.text for w in words)]
        assert places.holding(words) == want, words
        assert places[3:].holding(words) == [i - 3 for i in want if i >= 3], words
        assert places[2:9].holding(words) == [i - 2 for i in want if 2 <= i < 9], words


XID = "[  100.000001] NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
OPENED = ("[  100.000002] nvidia-nvswitch3: open (major=511)", "nvidia-nvswitch12: open (major=234)")
SYSLOG = "Dec  6 08:00:00 dgx kernel: nvidia-nvswitch3: open (major=511)"  # not the notice alone: read as before
SXID = "[  100.000003] nvidia-nvswitch3: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link 32 egress non-posted PRIV error"
LOG = "\n".join([*OPENED * 30, XID, *OPENED, SXID, SYSLOG, *OPENED * 30])


def test_nvswitch_open_notices_are_no_worded_line_and_change_no_parse(monkeypatch):
    read = clean(LOG).lines
    worded = [ln.text for _, ln in kernel._worded(read)]
    assert worded == [XID, SXID, SYSLOG]
    got = kernel.parse(read)
    assert [x.code for x in got.xids] == [79] and (got.sxid_details or got.events)  # the SXid read too
    monkeypatch.setattr(kernel, "_OPENED", re.compile("(?!)"))  # no line the notice: every one worded, as before
    assert len(kernel._worded(read)) == 3 + 122
    assert kernel.parse(read) == got


def test_nvswitch_open_notices_left_out_of_a_long_texts_places_too():
    places = _places(LOG)
    marks = Marks(places, places.text)
    assert [ln.text for _, ln in kernel._worded(places, marks)] == [XID, SXID, SYSLOG]
    assert kernel.parse(places, marks) == kernel.parse(clean(LOG).lines)
    assert unless(places, list(range(len(places))), kernel._OPENED) == [60, 63, 64]


def test_a_block_of_lines_with_gaps_is_their_texts_joined():
    places = _places(BODY)
    for gone in ({2}, {1, 5, 6}, {4, 9, 12}, set(range(2, 13, 2)), set()):
        rest = places.without(gone)
        texts = [ln.text for ln in rest]
        for first in range(len(rest)):
            for stop in range(first + 1, len(rest) + 1):
                assert lines.block(rest, first, stop) == "\n".join(texts[first:stop])
