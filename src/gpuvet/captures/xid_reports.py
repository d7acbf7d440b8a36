"""Issue 46 (R4B): the Xids a report about a node names, where no sentence of it says 'shows' or 'got' beside them
(quoted.quoted_xids reads those): a bug report's summary ('driver 610.57.04 takes recurring **Xid 31 MMU faults**'),
its title ('Xid 31 MMU Fault … on driver 610.57.04'), a list under the line that says where they came from ('`dmesg`
shows repeated NVIDIA Xid events, all on the same GPU (PCI `0000:9c:00`)' then '- `Xid 48 / 171`: uncorrectable
DBE'), a table of Xids with counts. Each Xid at its module: the bus id of its own clause, else of the list's lead
line. Never one the poster denies, counts as zero, or sets in a condition (app_errors' _NOT_A_REPORT words)."""

from __future__ import annotations

import re

from gpuvet.captures.kernel import NO_BUS
from gpuvet.captures.records import XidLine
from gpuvet.captures.text import Line

# 'Xid 48', 'Xid 48 / 171', '**Xid 31**', 'Xid 94 bursts', 'Xid 149,' (the catalog's codes are 1-3 digits)
_XID = re.compile(r"\bXids?\s*(?:error\s*|code\s*|#\s*)?(\d{1,3})((?:\s*/\s*\d{1,3}){0,3})\b")
# the report's own words that it happened: a fault taken, recurring, repeated, a count of them
_HAPPENED = re.compile(
    r"\b(?:takes?|took|taking|recurring|repeated(?:ly)?|triggered|observed|occurr(?:ed|ing)|"
    r"hit|hits|bursts?|events?|storms?|faults?|errors?|x\s?\d+|\d+\s?x|\d+ times|on (?:GPU|node|"
    r"driver)\b|shows?|showed|logged|reported|gets?|got|saw|seen|see|seeing)\b",
    re.I,
)
# denied, none, before a fix, in a condition or a question of meaning: not the node's report
_NOT_THEIRS = re.compile(
    r"\b(?:zero|no|not|never|without|clean|unaffected|fixed|resolved|gone|if|whether|unless|"
    r"when you|should|would|could|mean|means|meaning|what is|what does)\b|\?",
    re.I,
)
_LEAD_BACK = 8  # lines back to a list's lead line
_BUS = re.compile(r"\b([0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})(?:\.[0-7])?\b")


def read(lines: list[Line], taken: set[int]) -> tuple[list[XidLine], set[int]]:
    """The Xids the report's lines name (not the lines in ``taken``), one per module and code, each marked
    ``quoted``; the lines read."""
    from gpuvet.captures.quoted import nearest_bus

    out: dict[tuple[str, int], XidLine] = {}
    claimed: set[int] = set()
    for i, ln in enumerate(lines):
        text = ln.text
        if ln.no in taken or "Xid" not in text:
            continue
        found = [m for m in _XID.finditer(text) if _theirs(text, m)]
        if not found:
            continue
        lead = _lead(lines, i)
        if lead is None and _HAPPENED.search(_without_codes(text)) is None:
            continue
        for m in found:
            where = nearest_bus(text, m.start(), m.end())
            if where == NO_BUS and lead is not None and (b := _BUS.search(lead.text)) is not None:
                where = nearest_bus(lead.text, b.start(), b.end())
            for code in [m.group(1), *re.findall(r"\d{1,3}", m.group(2))]:
                out.setdefault((where, int(code)), XidLine(where, int(code), text.strip()[:300], quoted=True, line=ln.no))
        claimed.add(ln.no)
    return list(out.values()), claimed


def _theirs(text: str, m: re.Match[str]) -> bool:
    """The Xid's own clause neither denies it nor sets it in a condition or a question, and the line is no source
    or grep hit, explanation, question to others, alert rule or course (app_errors' tests of a report's words)."""
    if _not_a_report(text, m.start(), m.end()):
        return False
    before = re.split(r"[.;!?]\s|\(", text[max(0, m.start() - 120) : m.start()])[-1]
    after = re.split(r"[.;!?](?:\s|$)|\)", text[m.end() : m.end() + 80])[0]
    return _NOT_THEIRS.search(before + " " + after) is None


def _without_codes(text: str) -> str:
    return _XID.sub(" ", text)


def _lead(lines: list[Line], i: int) -> Line | None:
    """The line a list of Xids stands under (the nearest line before it that names no Xid code, within _LEAD_BACK
    lines, no blank between; its siblings passed over), where it says the Xids happened; None otherwise. Read
    whether or not the list keeps its marks (a paste of list items alone is peeled of them)."""
    for j in range(i - 1, max(-1, i - 1 - _LEAD_BACK), -1):
        text = lines[j].text
        if not text.strip():
            return None
        if _XID.search(text) is not None:
            continue
        return lines[j] if "Xid" in text and _HAPPENED.search(text) is not None else None
    return None


def _not_a_report(text: str, start: int, end: int) -> bool:
    """What app_errors.reported rejects beside its 'shows' and 'theirs' words (a report's list item has neither):
    a source, grep or comment line, code, a denial, condition or question of meaning, a sentence asking others or
    about an alert, a course or what is normal, an explanation; a sentence that ends in a question mark."""
    from gpuvet.captures import app_errors as said

    if said._SOURCE_HIT.match(text) or said._GREP_HIT.match(text) or said._COMMENT.match(text):
        return True
    if said._CODE.match(text[: min(start, said._REACH)].lstrip(" `>*")):
        return True
    before, after = said._outside_quote(text[max(0, start - said._REACH) : start], text[end : end + said._REACH])
    before, after = said._QUOTED_SPAN.sub(" ", before), said._QUOTED_SPAN.sub(" ", after)
    if said._NOT_A_REPORT.search(before + " … " + after) or said._EXPLAINED.match(after):
        return True
    head = re.split(r"[.?!](?:\s|$)", before)[-1]
    tail = re.match(r"[^.?!]*[.?!]?", after)
    sentence = head + " … " + (tail.group() if tail else after)
    return said._NOT_THEIR_SENTENCE.search(sentence) is not None or sentence.rstrip().endswith("?")
