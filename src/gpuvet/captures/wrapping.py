"""A paste wrapped at a fixed width (a mail client, a forum editor, fold): its pieces rejoined before any parser reads
the lines (text.clean calls unwrap once per capture; decorations re-exports it).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import TypeVar

from gpuvet.captures import qpmail

WRAP_WIDTHS = frozenset((72, 76, 78, 80))  # mail clients (72, 76, 78), fold and forum editors (80); 79, 100, 120 are
# tables' own widths (nvidia-smi's old table, perftest's header, nccl-tests' rows): a wrap there cannot be told
_WIDEST = max(WRAP_WIDTHS)
_WRAP_MOST = 1 << 18  # characters: a text a mail client or `fold` wrapped is a post, never a bug report
_WRAP_NEAR = 4  # lines that surely start a record, each side of a continuation: the shapes it is told from
_WRAP_HEADS = 2  # wrapped lines at the least: one line exactly as wide as the rest could be the tool's own
_CORPUS_HEAD = re.compile(r"#\s*(?:source|shows|conclusion|expect|note|tuned)\b", re.I)


@dataclass(frozen=True)
class Unwrapped:
    """Where a wrapped paste was rejoined: the 1-based numbers of the continuation lines (their text now at the
    end of the line before, the line itself left empty, to be dropped) and the note that says so."""

    width: int = 0
    dropped: frozenset[int] = frozenset()

    def note(self) -> str:
        return (f"{len(self.dropped)} line(s) continued the line before them, wrapped at {self.width} columns (a mail "
                f"client, a forum editor or fold): rejoined")


def unwrap(text: str) -> tuple[str, Unwrapped]:
    """A paste whose long lines were cut at exactly one width (mid-token), rejoined where the evidence says so: no
    line of the text (a corpus header aside) is longer than that width; at least two lines are exactly that wide,
    none of them a table's frame (``+---+``, ``| … |``); each such line's pieces end in a shorter line; and each
    piece's shape (its indentation and its first word's kinds of characters) is none of the shapes of the nearby
    lines that surely start a record (a kernel line's tail has no '[' stamp, a table row's tail no '|', a -q
    value's tail no indent) nor its first piece's. One wrapped line alone, a wrap at word boundaries (lines
    shorter than the width) and a tail shaped like the records around it leave no such evidence: left as they
    are."""
    if len(text) > _WRAP_MOST or "\n" not in text:
        return text, Unwrapped()
    mailed, joins = qpmail.soft_breaks(text)  # R12D: a quoted-printable mail's soft breaks ('=' at a line's end)
    if joins:
        return _joined(mailed, joins), Unwrapped(76, frozenset(j + 1 for j in joins))
    if "GPU0" in text and (topo := _topo_folded(text)).dropped:
        return _joined(text.split("\n"), sorted(j - 1 for j in topo.dropped)), topo
    return _unwrap_any(text)


def _unwrap_any(text: str) -> tuple[str, Unwrapped]:
    """unwrap's evidence for any text: the pieces' shapes against the records near them."""
    if _wider_early(text):
        return text, Unwrapped()
    lines = text.split("\n")
    head = 0
    while head < min(12, len(lines)) and _CORPUS_HEAD.match(lines[head]):
        head += 1
    width = max(map(len, lines[head:]), default=0)  # at C speed: most texts stop here
    if width not in WRAP_WIDTHS:
        return text, Unwrapped()
    lengths = list(map(len, lines))
    if lengths.count(width) < _WRAP_HEADS:
        return text, Unwrapped()
    joins = _continuations(lines, head, _pieces(lines, lengths, head, width))
    if len({_first(j, set(joins)) for j in joins}) < _WRAP_HEADS:
        return text, Unwrapped()
    joins += [j for j in range(head + 1, len(lines)) if lengths[j - 1] == width and _rule_tail(lines[j - 1], lines[j])]
    return _joined(lines, joins), Unwrapped(width, frozenset(j + 1 for j in joins))


def _joined(lines: list[str], joins: list[int]) -> str:
    for j in sorted(joins, reverse=True):  # a line wrapped twice: its last piece onto the middle one first
        lines[j - 1] += lines[j]
        lines[j] = ""
    return "\n".join(lines)


_TOPO_LINK = re.compile(r"(?:^|[ \t])(?:X|NV\d{1,3}|SYS|NODE|PHB|PXB|PIX)(?:[ \t]|$)")
_TOPO_HEAD = re.compile(r"[ \t]+GPU0[ \t]")  # topo -m's header: blanks, then its devices from GPU0
_TOPO_CELL = re.compile(r"[ \t]*(?:X|NV\d{1,3}|SYS|NODE|PHB|PXB|PIX|N/A|\d[\d,-]*)(?:[ \t]|$)")  # no row starts so


def _topo_folded(text: str) -> Unwrapped:
    """nvidia-smi topo -m's matrix folded at a wrap width (fold counts a tab to its next stop of 8): rejoined where
    every piece before a continuation is exactly that wide and each continuation cannot start a matrix row (it
    starts with a cell: X, NV#, SYS, a CPU list), the header's own continuation being the line before GPU0's row.
    Any other line inside the matrix (a piece cut mid-word) leaves the text as it is."""
    lines = text[:1 << 16].split("\n")
    at = next((i for i, s in enumerate(lines[:200]) if _TOPO_HEAD.match(s)), None)
    if at is None or (width := len(lines[at].expandtabs())) not in WRAP_WIDTHS or at + 2 >= len(lines):
        return Unwrapped()
    head = lines[at + 1]
    joins = [at + 1] if head.strip() and not head.lstrip().startswith("GPU0") else []
    for j in range(at + 1 + len(joins), len(lines)):
        if not lines[j].strip():
            break
        if _TOPO_CELL.match(lines[j]):
            if len(lines[j - 1].expandtabs()) != width:
                return Unwrapped()  # a cell opening a line not after a full one: not fold's cut
            joins.append(j)
    rows = len(joins) - (1 if joins and joins[0] == at + 1 else 0)
    links = any(_TOPO_LINK.search(s) for s in lines[at + 1:j])  # nvidia-smi's cells, not another tool's figures
    return Unwrapped(width, frozenset(j + 1 for j in joins)) if rows >= _WRAP_HEADS and links else Unwrapped()


def _wider_early(text: str) -> bool:
    """A line wider than any wrap among the text's first 4 KiB, a corpus header's aside: most texts are told apart
    here, without a split of the whole."""
    probe = text[:4096].split("\n")[:-1]
    return any(len(s) > _WIDEST and not _CORPUS_HEAD.match(s) for s in probe)


def _pieces(lines: list[str], lengths: list[int], head: int, width: int) -> set[int]:
    """The lines that may continue the line before: each after a line exactly ``width`` wide (no table frame),
    in runs that end in a shorter, non-blank line (a wrapped line's last piece)."""
    out: set[int] = set()
    j = head + 1
    while j < len(lines):
        if lengths[j - 1] != width or _framed(lines[j - 1]):
            j += 1
            continue
        run = [j]
        while lengths[run[-1]] == width and not _framed(lines[run[-1]]) and run[-1] + 1 < len(lines):
            run.append(run[-1] + 1)
        last = run[-1]
        if lines[last].strip() and lengths[last] < width:  # a frame within the run: a table's own lines
            out.update(run)
        j = last + 1
    return out


def _continuations(lines: list[str], head: int, cont: set[int]) -> list[int]:
    """The candidate lines whose shape differs from every nearby line that surely starts a record (one after a
    line shorter than the width) and from the record's own first line."""
    starts = [i for i in range(head, len(lines)) if i not in cont and lines[i].strip()]
    shapes = [_shape(lines[i]) for i in starts]
    out = []
    for j in sorted(cont):
        at = bisect.bisect_left(starts, j)
        near = set(shapes[max(0, at - _WRAP_NEAR):at + _WRAP_NEAR])
        first, lead = lines[_first(j, cont)], _lead(lines[j])
        if _shape(lines[j]) not in near and _shape(lines[j]) != _shape(first) and not (lead and (
                lead == _lead(first) or (lead != " " and lines[j - 1][-1:] not in (" ", "\t")))):
            out.append(j)  # (a piece that starts with blanks was cut at a word's space or inside a run of them:
            # past one, the line before ends in one; one indented as its first piece is, is a record of its block)
        else:
            cont.discard(j)  # read as a record of its own: the pieces after it continue it, not the line before
    return out


def _lead(s: str) -> str:
    return s[:len(s) - len(s.lstrip())]


def _first(j: int, cont: set[int]) -> int:
    """The first piece of the line whose piece ``j`` is."""
    first = j - 1
    while first in cont:
        first -= 1
    return first


_FRAMES = "|+-=*#~_:."  # the characters tables draw their frames and rules with (rocm-smi: dots)


def _framed(s: str) -> bool:
    """A line a table's frame closes (``+----+``, ``| … |``, a rule of dashes): whole as it stands, exactly the
    table's width, not the first piece of a longer one."""
    body = s.lstrip()  # a piece cut inside a row's padding ends in spaces, not in the frame
    return len(body) > 1 and body[0] == body[-1] and body[0] in _FRAMES


_RUNS = re.compile(r"[A-Z]+|[a-z]+|[0-9]+")


def _rule_tail(ruled: str, s: str) -> bool:
    """The rest of a rule (``=====``) wider than the wrap: a shorter line of nothing but the rule's character."""
    return bool(s) and ruled[-1:] == s[0] and not s[0].isalnum() and s[0] not in " \t|" and s == s[0] * len(s)


def _shape(s: str) -> tuple[int, str]:
    """A line's indentation and, flush left (where a piece cut mid-token starts), the kinds in its first word's
    first 8 characters: upper and lower case letters and digits each a run ('GPU1' A9, 'ffinity' a, '10.0%'
    9.9%, '[' itself); indented, only its first character's kind (an indented record's key is its own word:
    'NVLE:' under 'Link 0:' is a record all the same)."""
    body = s.lstrip()
    indent = len(s) - len(body)
    if indent or not body:
        first = body[:1]
        return indent, "a" if first.isalpha() else "9" if first.isdigit() else first
    return 0, _RUNS.sub(lambda m: "A" if m[0][0].isupper() else "a" if m[0][0].islower() else "9", body[:8].split()[0])


_T = TypeVar("_T", bound=tuple[int, str])


def without(lines: list[_T], dropped: frozenset[int]) -> list[_T]:
    """The lines but the emptied continuations ``unwrap`` joined onto the line before them."""
    return [ln for ln in lines if ln[0] not in dropped]
