"""decorations.peel's whole-text pre-tests (issue 43) skip a pass only where the text proves it has nothing to
do: a decoration that a later round brings to a line's start is still taken off, a launcher prefix on two lines
far apart in the sample is still found, and the caller's list is never changed (copied only on write)."""

from __future__ import annotations

from gpuvet.captures.decorations import peel, strip_prefix


def _numbered(texts: list[str]) -> list[tuple[int, str]]:
    return [(i + 1, s) for i, s in enumerate(texts)]


def test_a_quote_mark_under_a_prefix_comes_off_in_the_next_round() -> None:
    lines = _numbered(["[1,0]<stdout>: > NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.",
                       "[1,0]<stdout>: > NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus."])
    out = peel(lines)
    assert [s for _, s in out.lines] == ["NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.",
                                         "NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus."]
    assert out.quoted == 2


def test_a_quote_mark_in_an_indented_block_comes_off_after_the_indentation() -> None:
    lines = _numbered(["dmesg:", "", "    > NVRM: Xid (PCI:0000:3b:00): 79", "    > NVRM: Xid (PCI:0000:3b:00): 48"])
    out = peel(lines)
    assert [s for _, s in out.lines][2:] == ["NVRM: Xid (PCI:0000:3b:00): 79", "NVRM: Xid (PCI:0000:3b:00): 48"]
    assert out.quoted == 2


def test_a_prefix_on_two_lines_far_apart_is_found() -> None:
    texts = [f"plain line {i}" for i in range(1200)]
    texts[10] = "[1,0]<stdout>: NVRM: Xid (PCI:0000:3b:00): 79"
    texts[1100] = "[1,0]<stdout>: NVRM: Xid (PCI:0000:3b:00): 48"  # in another piece of the sample than the first
    lines, tags, note = strip_prefix(_numbered(texts))
    assert lines[10][1] == "NVRM: Xid (PCI:0000:3b:00): 79" and lines[1100][1] == "NVRM: Xid (PCI:0000:3b:00): 48"
    assert tags == ("[1,0]<stdout>",) and note.startswith("2 line(s)")


def test_the_callers_lines_are_left_as_given() -> None:
    texts = ["", "    indented block line one", "    indented block line two", "> quoted", "```", "  fenced", "```"]
    lines = _numbered(texts)
    kept = list(lines)
    out = peel(lines)
    assert lines == kept
    assert out.lines != kept  # something was peeled: the changes are in a copy
