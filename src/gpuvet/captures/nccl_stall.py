"""nccl-tests' header with no result row under it: a paste cut before the table, or a run that never printed one
(issue 46, R6B). The text alone decides: where it shows the run went on past the header (the poster says it
stalled, hangs or is stuck; a ^C; a timeout or a shell prompt after the header) the collective never completed its
first size, a stall (NCCL's P2P path hanging on PCIe bridges with ACS on is the classic one); otherwise the paste is
only cut and nothing is judged (never a warn on a cut paste)."""

from __future__ import annotations

import re

from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.text import Line

KIND = "stalled"  # bench.NcclFailure's kind (doctor/capture_failures: collective_test_stalled)
# the poster's words for a run that stopped moving (never a word of nccl-tests' own '#' lines)
_SAID = lazy(
    r"\b(?:stall(?:s|ed|ing)?|hangs?|hanging|hung|stuck|freez(?:es|ing)|froze|deadlock\w*"
    r"|never (?:finish|complete|return|end|progress)\w*"
    r"|(?:does|did|do)(?:n't| not) (?:finish|complete|progress|return|proceed|continue)"
    r"|no (?:further |more )?(?:output|progress))\b",
    re.I,
)
_SAID_WORDS = ("stall", "hang", "hung", "stuck", "freez", "froze", "deadlock", "never", "n't", "not", "no ")
# the poster's words that deny it in the same clause: 'it no longer hangs', 'not stuck', "doesn't hang any more"
_NEGATED = lazy(r"\b(?:no longer|not|never)\b|n't\b", re.I)
_CLAUSE = lazy(r"[.!?;,]|\bbut\b", re.I)
# after the header: the run interrupted (^C), timed out, or the shell's prompt back with no row printed; the
# prompt's user, host and path are disjoint, bounded classes (REV64: '\S+@\S+:\S*' backtracked cubically)
_AFTER = lazy(
    r"^[ \t]{0,80}\^C|\btimed? ?out\b|^[ \t]{0,80}(?:[^\s@]{1,64}@[^\s:@]{1,253}:[^\s#$]{0,4096}\s?[#$]|\$)\s", re.I
)
_AFTER_WORDS = ("^c", "out", "$", "#")


def went_on(lines: list[Line], header: list[Line]) -> tuple[int, str] | None:
    """The line (number, text) showing the run went on past ``header`` without a result row, or None."""
    if not header:
        return None
    ours = {ln.no for ln in header}
    last = max(ours)
    for ln in lines:
        if ln.no in ours or ln.text.lstrip().startswith("#"):
            continue
        low = ln.text.lower()
        if (any(w in low for w in _SAID_WORDS) and _said(ln.text)) or (
            ln.no > last and any(w in low for w in _AFTER_WORDS) and _AFTER.search(ln.text)
        ):
            return ln.no, ln.text.strip()
    return None


def _said(text: str) -> bool:
    """A stall the line says, not one it denies in the same clause ('it no longer hangs', 'not stuck')."""
    for m in _SAID.finditer(text):
        clause = _CLAUSE.split(text[: m.start()])[-1]
        if not _NEGATED.search(clause):
            return True
    return False
