"""Marks.settle answers a short text's literal markers at once (its runs of three characters in a set, a marker
searched only where its runs are there): each answer must be ``in``'s, whatever the marker's length or characters,
and a group must be answered as ``any`` answers it one marker at a time."""

from __future__ import annotations

import re

from gpuvet.captures.marks import Marks, Needing
from gpuvet.captures.text import Line

TEXTS = ["", "a", "GPU[0] : x\nab", "é€ \U0001f600 x\n\tGPU: 1", "nThread 1 nGpus 8 minBytes", "0123456789" * 3,
         "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n  Fan  Temp  Perf"]
MARKERS = ["GPU[", "GPU: ", "\U0001f600 x", "é€", "nGpus", "minBytes", "789012", "90", "ab", "ba", "x\n", "\tGPU",
           "zz", "€ \U0001f600", "", "a", "\n", "Xid (PCI:", "fallen off the bus", "off the bux", "Fan  Temp", "GPU"]


def _marks(text: str) -> tuple[Marks, str]:
    lines = [Line(i + 1, t) for i, t in enumerate(text.split("\n"))]
    return Marks(lines), "\n" + text  # the lines joined as Marks joins them: each after a newline


def test_each_literal_is_answered_as_in_answers_it() -> None:
    for text in TEXTS:
        present, joined = _marks(text)
        present.settle(tuple((m,) for m in MARKERS))
        assert present.text is None
        assert {m: present.found[m] for m in MARKERS} == {m: m in joined for m in MARKERS}, text


def test_groups_with_patterns_are_answered_as_one_marker_at_a_time() -> None:
    xid = re.compile(r"Xid \(PCI:[0-9a-f:]+\): \d+")
    fan = Needing(re.compile(r"\n[^\S\n]*Fan +Temp"), ("Temp",))
    groups = (("zz", xid), ("nope", "GPU["), (fan, "zz"), ("Fan", "\n[^"), ("a",))
    for text in TEXTS:
        present, joined = _marks(text)
        present.settle(groups)
        alone, _ = _marks(text)
        assert [present.any(g) for g in groups] == [alone.any(g) for g in groups], text
        present.settle(groups)  # the same tuple again: answered, the text let go
        assert present.text is None and [present.any(g) for g in groups] == [alone.any(g) for g in groups]


def test_a_needing_marker_is_one_key_whoever_made_it() -> None:
    one = Needing(re.compile(r"GPU\d+"), ("GPU",))
    other = Needing(re.compile(r"GPU\d+"), ("GPU",))
    assert one == other and hash(one) == hash(other) and len({one, other}) == 1
    assert one != Needing(re.compile(r"GPU\d+"), ("GPU",), unicode=True)
