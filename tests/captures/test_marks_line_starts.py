"""The markers anchored at a line's start, searched in one pass (issue 43: each pass tried every newline):
each is found exactly where its own search finds it, on a short text and on one long enough for byte triples."""

from __future__ import annotations

import re

import pytest

from gpuvet.captures.formats import FORMATS
from gpuvet.captures.marks import Marks, Needing
from gpuvet.captures.text import clean

GROUPS = [g for f in FORMATS for g in f.groups()]
ROW = re.compile(r"\n[^\S\n]*\d+[^\S\n]+\d+[^\S\n]+\w+")
GPU = re.compile(r"\n[^\S\n]*GPU \d+: ")
CODE = Needing(re.compile(r"\n[^\S\n]*E[A-Z]\d{4}\b"), ("EI0", "EJ0"))
FILLER = "[  1.000000] usb 1-1.3: new high-speed USB device number 7 using xhci_hcd\n" * 1200  # past 64 KiB


@pytest.mark.parametrize("text", [
    "GPU 0: NVIDIA H100 (UUID: GPU-1)\n", "  8  16  float\n", "\tEI0001 boom\n", "EJ0002 x\nGPU 3: A\n 1 2 w\n",
    "GPU0 row\nEI9 no\n", "", "EA0001 only a code the words rule out\n"])
@pytest.mark.parametrize("long", [False, True])
def test_each_anchored_marker_is_found_where_its_own_search_finds_it(text: str, long: bool) -> None:
    lines = clean(FILLER + text if long else text).lines
    marks = Marks(lines)
    marks.settle([(ROW, GPU, CODE)])
    for marker in (ROW, GPU, CODE):
        assert marks.found[marker] == Marks(lines).has(marker), (marker, text)


def test_the_formats_markers_answer_as_one_by_one() -> None:
    lines = clean(FILLER + "GPU 1: x\n 4 8 sum a b c d\nEI0005 failed\nPort 1:\n").lines
    marks = Marks(lines)
    marks.settle(GROUPS)
    assert all(marks.found[m] == Marks(lines).has(m) for m in marks.found)
