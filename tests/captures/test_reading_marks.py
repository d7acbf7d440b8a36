"""Issue 43 (reading speed): a long text's words found by numpy a step of it at a time (lines._places) mark the
lines str.find marked."""

from __future__ import annotations

from gpuvet.captures import lines
from gpuvet.captures.lines import TextLines, line_ends
from gpuvet.captures.text import Line

BODY = "NVRM: Xid 79\nab abc\nxxabxab\n\nab\ncab ab  \nzzab\n  nvidia-nvswitch3: open\nerror: Xid\nXi\nd\nrror"


def _places(body: str) -> TextLines:
    """``body``'s lines as places in it, as text.clean keeps a long ASCII text's."""
    led = "\n" + body
    starts, ends = line_ends(led, 1)
    return TextLines(led, starts, ends, whole=True)


def test_words_found_a_step_at_a_time_mark_the_lines_holding_them(monkeypatch):
    monkeypatch.setattr(lines, "_STEP", 5)  # steps shorter than most words: words cross a step's end
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
