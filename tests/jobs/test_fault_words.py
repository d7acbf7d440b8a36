"""Newcomer 56 MEDIUM 7 and 9: the knowledge base's words are read by people. No title or action
stops mid-sentence (scheduler_gpus_short's fix ended '… state=resume) only after'), and a title
says what in one short line (nic_port_down's ran 288 characters of legal clauses): the when and
why stay in the meaning, which doctor --verbose prints under it."""

from __future__ import annotations

import re

from gpuvet.knowledge import faults

TITLE_MOST = 100  # characters: a title heads a finding and fits about one 80-column line plus its place
# words a sentence cannot end on: an article, a conjunction, a preposition waiting for its object (a
# stranded "for" or "with" and a closing "only" read whole: "no mapping for", "link-local only")
_DANGLING = frozenset(
    "a an the and or nor but of to from into onto by at in on as than then after before until "
    "while when whether if unless because since so its their his her your our whose which that is are "
    "was were be been not no every each".split())


def _cut(text: str) -> str | None:
    """Why ``text`` reads as cut mid-sentence, or None."""
    words = re.findall(r"[\w'’]+|\S", text.strip())
    if not words:
        return "empty"
    if words[-1] in {",", ";", ":", "(", "[", "-", "—", "/"}:
        return f"ends on {words[-1]!r}"
    if words[-1].lower() in _DANGLING:
        return f"ends on {words[-1]!r}"
    for a, b in ("()", "[]", "{}"):
        if text.count(a) != text.count(b):
            return f"unbalanced {a}{b}"
    return None


def test_no_fault_text_ends_mid_sentence() -> None:
    """Every fault's title, meaning and action; each that reads as cut is named (one test, not one per text:
    a test's own cost in pytest and xdist was ten times a text's check)."""
    cut = [f"faults.yaml {kind}.{field} reads as cut ({_cut(text)}): …{text[-80:]!r}"
           for kind, f in faults().items() for field in ("title", "meaning", "action")
           if _cut(text := getattr(f, field)) is not None]
    assert not cut, "\n".join(cut)
    assert len(faults()) > 100


def test_the_detector_finds_the_cut_the_newcomer_met() -> None:
    assert _cut("resume the node (scontrol update nodename=… state=resume) only after")
    assert _cut("configured with (Slurm")
    assert _cut("reseat it, or") and not _cut("reseat it, or replace it")


def test_every_title_is_one_short_line() -> None:
    long = {k: len(f.title) for k, f in faults().items() if len(f.title) > TITLE_MOST or "\n" in f.title}
    assert not long, f"titles over {TITLE_MOST} characters (give the fault a short `title` in faults.yaml): {long}"


def test_a_short_title_keeps_the_whole_meaning_beside_it() -> None:
    port = faults()["nic_port_down"]
    assert port.title == "A NIC port the node needs is down"
    assert "the design declares" in port.meaning  # the when stays, for --verbose and docs/knowledge.md
    assert faults()["link_down"].title == faults()["link_down"].meaning  # a short meaning is its own title
