"""What a launcher, a log collector, a forum or an editor puts before each line of a tool's output,
peeled off before any parser reads the line (text.clean calls this, once, for every capture).

Peeled, in rounds until nothing more comes off (they nest: a quoted, indented block of Open MPI
tags): markdown quote marks (``> ``, nested), a block's common indentation (a markdown code block
indents by 4 spaces or a tab; a whole paste indented by any amount), and a prefix every line of a
run carries: Open MPI ``--tag-output`` ``[1,0]<stdout>:``, ``mpirun``'s ``[host:pid]``, Slurm
``srun --label`` ``N: ``, a rank label ``[N] ``, kubectl/docker ``--timestamps``
(``2024-05-01T12:00:00.123456Z``), syslog and journalctl's ``date host program[pid]:``, docker
compose's ``service-1  | ``, pdsh/clush ``host: `` and Ray's ``(pid=N)``; and, once, a diff's or a patch's
line marks (diffs.py: the new side read, a removed '-' line dropped). A prefix is taken only
where it is consistent: on most of the file's lines, or on a run of consecutive lines, so one line
that happens to start like a prefix (a nccl-tests row's leading size, ``1: lo:``) is left as is.
Line numbers never change; each peeling is said in a note.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from operator import itemgetter
from typing import cast

from gpuvet.captures import diffs, gutter, ray_hosts, webtext
from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.wrapping import WRAP_WIDTHS as WRAP_WIDTHS  # a wrapped paste: its own module, read from here
from gpuvet.captures.wrapping import Unwrapped as Unwrapped
from gpuvet.captures.wrapping import unwrap as unwrap
from gpuvet.captures.wrapping import without as without

Numbered = list[tuple[int, str]]
RAY = "Ray/SkyPilot worker"

_QUOTE = lazy(r"^\s{0,3}(>\s?)+")
_OWN_GT = lazy(r"Peer access from |Peer-to-Peer \(P2P\) access")  # deviceQuery prints them after '> '
_LEAD = lazy(r"^[ \t]*")
_FENCE = ("```", "~~~")
_HOST = r"[A-Za-z0-9][\w.-]{0,62}"
_STAMP = r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?"
# sycl-ls before 2023 ('[opencl:0] GPU : …', '[host:0] HOST: …'): a device listing's own, not mpirun's tag (R3B)
_SYCL = r"(?!(?:ext_oneapi_)?(?:opencl|level_zero|cuda|hip|host):\d+\] +(?:GPU|CPU|ACC|HOST) ?:)"
_MONTH_DAY = r"[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d(?:\.\d{1,9})?"


@dataclass(frozen=True)
class Prefix:
    label: str
    rx: re.Pattern[str]
    hosts: int = 0  # its tag names a host or a service: at most max(8, lines / hosts) of them, never a driver's
    anywhere: bool = False  # unambiguous: taken on two lines wherever they are


PREFIXES = (
    Prefix("Open MPI --tag-output", lazy(r"^[ \t]*\[\d+,\d+\]<(?:stdout|stderr|stddiag)>:(?: (?=\S))?"),
           anywhere=True),
    Prefix("mpirun [host:pid]", lazy(r"^[ \t]*\[" + _SYCL + _HOST + r":\d{1,9}\][ \t]?")),
    Prefix("syslog/journalctl", lazy(r"^[ \t]*(?:" + _STAMP + "|" + _MONTH_DAY + r") (?P<tag>" + _HOST +
                                     r") [A-Za-z][\w./@-]{0,63}(?:\[\d{1,9}\])?:(?: |$)"), hosts=2),
    Prefix("kubectl/docker --timestamps", lazy(r"^[ \t]*" + _STAMP + r"(?:[ \t]|$)")),
    Prefix("torchrun --tee", lazy(r"^[ \t]*\[default\d{1,5}\]:"), anywhere=True),  # the line right after it
    Prefix("PyTorch rank", lazy(r"^[ \t]*\[rank\d{1,5}\]: ?"), anywhere=True),  # [rank0]: Traceback
    Prefix("kubectl logs --prefix", lazy(r"^[ \t]*\[pod/[^\]\s]{1,200}\][ \t]?")),
    Prefix("bracketed timestamp", lazy(r"^[ \t]*\[" + _STAMP + r"\][ \t]?")),
    Prefix("ctime timestamp", lazy(r"^[ \t]*[A-Z][a-z]{2} " + _MONTH_DAY + r" \d{4}[ \t]?")),  # --timestamp-output
    Prefix("Slurm srun --label", lazy(r"^[ \t]*\d{1,5}:(?: |$)")),
    Prefix("rank label [N]", lazy(r"^[ \t]*\[\d{1,5}\](?:[ \t]|$)(?![ \t]*\"[SHR?]-)")),  # not ibnetdiscover's port
    Prefix("docker compose service", lazy(r"^[ \t]*" + _HOST + r"[ \t]+\|[ \t]?"), hosts=4),
    Prefix("pdsh/clush host", lazy(r"^(?:[A-Za-z][\w.-]{0,62}|\d{1,3}(?:\.\d{1,3}){3}):(?: |$)"), hosts=3),
    # Ray's worker prefix, as SkyPilot prints it too: (pid=N), (Actor pid=N), (head, rank=0, pid=N),
    # (worker1, rank=1, ip=10.0.0.2, pid=N), (setup pid=N, ip=…)
    Prefix(RAY, lazy(r"^[ \t]*\([^()\n]{0,80}?\bpid=\d+[^()\n]{0,40}\) ?")),
)
_NOT_HOSTS = {"kernel", "NVRM", "NOTE", "WARNING", "ERROR", "INFO", "Warning", "Error", "Note", "Output", "Result",
              "Results", "Example", "Usage", "Command", "Log", "Logs", "Reason", "Status", "Message", "Cause"}
_HOST_KINDS = ("pdsh/clush host", "docker compose service")
_HOSTLIKE = lazy(r"[\d.-]")  # node07, gpu-a100-3, host.example.com: never a bare word (Device:, State:)
RUN = 3  # consecutive lines carrying one prefix: a launcher's, not a coincidence
MOST = 0.6  # or this share of the file's lines
ROUNDS = 6  # decorations nest; each round peels one layer of each kind


@dataclass
class Peeled:
    lines: Numbered
    notes: list[str]
    hosts: tuple[str, ...]
    quoted: int = 0
    unglued: set[int] = field(default_factory=set)  # lines that had a fence typed on them
    fences: dict[int, str] = field(default_factory=dict)  # of those, the ones that opened or closed a block: the
    # fence's own indentation (the line's after it is the tool's)
    host_of: dict[int, str] = field(default_factory=dict)  # line number -> the host its prefix named, where the
    # prefixes named two hosts or more (one log of several nodes: their modules are not one)
    host: str | None = None  # the one host a host-naming prefix named (the file's host: doctor --from's several files)


@dataclass(frozen=True)
class Survey:
    """What the whole text says peel need look for (one pass over the text each: most hold none), found where
    the text is at hand: text.clean finds it before the lines are made, so a bug report's text is let go first."""

    web: bool  # a no-break or zero-width space, a curly quote or a dash a web page typesets
    xml: bool  # the capture is XML (its entities are its own)
    entity: bool  # an HTML entity somewhere
    glued: bool  # a fence or ** that may be typed on a line
    quoted: bool  # a '>' somewhere
    fenced: bool  # a '`' or '~' somewhere
    quote_lines: tuple[int, ...]  # the lines with a '>' in their first 4 characters
    tabbed: bool  # a line led by tabs then 4 spaces
    diff: diffs.Signs | None = None  # where a diff's marks may be (diffs.py)
    rst: bool = False  # a reStructuredText code block's directive ('.. code-block:: shell')

    @classmethod
    def of(cls, whole: str, lead: int = 0) -> Survey:
        """The survey of ``whole``; ``lead``: 1 where the text is given after a newline of its own (the
        text's first line then starts at 1, as every other starts after its newline)."""
        xml = webtext.XML.search(whole, lead, lead + 200_000) is not None
        return cls(web=not whole.isascii() and webtext.WEB_SPACE.search(whole) is not None,  # isascii: a flag the str holds
                   xml=xml, entity=not xml and "&" in whole and webtext.ENTITY.search(whole) is not None,  # '&': memchr
                   glued="`" in whole or ("*" in whole and "**" in whole),  # one character first (2 ms, not 17 on 20 MB)
                   quoted=">" in whole, fenced="`" in whole or "~" in whole,
                   quote_lines=tuple(_quote_lines(whole, lead)) if ">" in whole else (),
                   tabbed=_tab_then_spaces(whole),  # an editor's tabs for 8 spaces (most texts hold none)
                   diff=diffs.Signs.of(whole), rst=_rst_sign(whole))


def peel(numbered: Numbered, whole: str | None = None, survey: Survey | None = None) -> Peeled:
    """The lines with every consistent decoration removed, the notes saying what was. ``whole``: the lines'
    texts joined by newlines, where the caller has that text already (no second copy of a bug report);
    ``survey``: that text's survey, where the caller made it and let the text go."""
    notes: list[str] = []
    if survey is None:
        survey = Survey.of("\n".join(s for _, s in numbered) if whole is None else whole)
    del whole
    out = Peeled(gutter.ungutter(webtext.web_text(numbered, notes, survey), notes), notes, ())
    glued = survey.glued
    # the passes after _web_text only take characters off a line: a character the text lacks is on no line of
    # any round (where _web_text unescaped '&gt;' or '&#96;', the lines are not the text: looked at as they are)
    quoted = survey.quoted or out.lines is not numbered
    fenced = survey.fenced or out.lines is not numbered
    look = list(survey.quote_lines) if quoted and out.lines is numbered else None  # the first round's, from the text
    if survey.tabbed:
        out.lines = _untab(out.lines, notes)
    listed, undiffed = False, survey.diff is None
    indented: dict[str, set[int]] = {}
    for round_ in range(ROUNDS):  # quote marks and prefixes nest; indentation comes off after each, once
        before = out.lines
        out.lines = _unquote(out.lines, out, look) if quoted else out.lines
        look = None  # a prefix or an indentation taken off may bring a '>' to a line's start
        if not listed:  # a list item's mark comes off once: '- - x' is a list item holding '- x'
            out.lines, listed = _unlist(out.lines, notes)
        if not undiffed:  # a diff's marks come off once, after the quote marks ('> +line': a review's quote)
            out.lines, undiffed = diffs.undiff(out.lines, notes, survey.diff)  # type: ignore[arg-type]
        lines, tags, note, kind = _strip(out.lines)
        if note:
            _named(out, kind, tags)
            out.lines, out.hosts = lines, out.hosts + tags
            out.notes.append(note)
        peeled = out.lines != before
        if glued and not peeled:  # once the quote marks and prefixes are off ('0: ```' is srun's, no glue)
            out.lines, glued = _unglue(out.lines, out), False
            peeled = out.lines != before
        if round_ and not peeled:
            break
        out.lines = _dedent(out.lines, indented, out.fences, fenced)
        out.lines = _unrst(out.lines, indented) if survey.rst else out.lines
        if not peeled and out.lines == before:
            break
    for what, nos in indented.items():
        out.notes.append(f"{len(nos)} line(s) were indented by {what} (a paste or a markdown code block), read "
                         "without it")
    if out.unglued:
        out.notes.append(f"{len(out.unglued)} line(s) had a code fence typed on them (```[ 12.3] …, … seq=47```) "
                         "or were set in `inline code` or **bold**, read without it")
    return out


def _named(out: Peeled, kind: Prefix | None, tags: tuple[str, ...]) -> None:
    """The hosts a prefix just peeled names (its lines still on ``out``): each line's, or the file's one."""
    if kind is not None and kind.hosts and len(tags) > 1:
        for no, host in _hosts_of(kind, out.lines).items():
            out.host_of.setdefault(no, host)  # an outer prefix's host first (pdsh over syslog)
    elif kind is not None and kind.hosts:
        out.host = out.host or tags[0]
    elif kind is not None and kind.label == RAY:  # R14B: its 'ip=' names the node (ray_hosts.py)
        ray_hosts.name(out, {n: m.group(0) for n, s in out.lines if (m := _match(kind, s)) is not None})


_ITEMS = ("- ", "* ")


def _unlist(numbered: Numbered, notes: list[str]) -> tuple[Numbered, bool]:
    """Each line set as a markdown list item (`- ` or `* `, a chat message or a post without a fence): the
    line after the mark, taken only where every non-blank line is an item with the same mark (one line
    that starts so is the tool's). Whether the marks came off."""
    first = next((s.lstrip(" ") for _, s in numbered[:64] if s.strip()), "")
    mark = first[:2]
    if mark not in _ITEMS or not all(s.lstrip(" ")[:2] == mark or s.strip() in ("", mark[0]) for _, s in numbered):
        return numbered, False
    notes.append(f"{sum(1 for _, s in numbered if s.strip())} line(s) were markdown list items ('{mark}'), read "
                 "without the mark")
    return [(n, s.replace(mark.strip(), "", 1)[1:] if s.strip() not in ("", mark[0]) else "")
            for n, s in numbered], True


def _tab_then_spaces(whole: str) -> bool:
    """Whether a line is led by tabs then 4 spaces: found by its tabs (memchr's speed; few texts hold many),
    not by a search for the string at every character."""
    i = whole.find("\t")
    while i >= 0:
        if whole.startswith("    ", i + 1):
            j = i
            while whole[j - 1:j] == "\t":
                j -= 1
            if j == 0 or whole[j - 1] == "\n":
                return True
        i = whole.find("\t", i + 1)
    return False


def _untab(numbered: Numbered, notes: list[str]) -> Numbered:
    """An editor's (or a terminal's) tabs for each 8 leading spaces (an indented listing such as
    nvidia-smi -q, whose reader goes by indentation): a tab-led line read with its tabs as 8 columns,
    where the text holds a line led by a tab then spaces (no tool indents so); a line holding a tab after
    its indentation (topo -m's tab-separated rows and header) is left as it is."""
    lines: Numbered = []
    changed = 0
    for item in numbered:
        s = item[1]
        if s[:1] == "\t":
            body = s.lstrip("\t ")
            lead = s[:len(s) - len(body)]
            if "\t" not in body:
                item, changed = (item[0], lead.expandtabs(8) + body), changed + 1
        lines.append(item)
    notes.append(f"{changed} line(s) were indented by tabs and spaces (an editor's tab for 8 spaces), read as "
                 "spaces")
    return lines


def _unquote(numbered: Numbered, out: Peeled, look: list[int] | None = None) -> Numbered:
    """Markdown quote marks, on any line that has them (a quote block may hold one line). Only the lines with
    a '>' in their first 4 characters are looked at (``look``: those the caller found in the text), and the
    list is copied only where one changes (issue 43)."""
    if look is None:
        look = [i for i, (_, s) in enumerate(numbered) if s.find(">", 0, 4) >= 0]
    lines = numbered
    for i in look:
        n, s = numbered[i]
        if s.lstrip()[:1] == ">" and (m := _QUOTE.match(s)) is not None:
            end = m.end()
            if _OWN_GT.match(s, end):  # deviceQuery's own '> Peer access from …': only the marks before it go
                end = s.rfind(">", 0, end)
                if s.find(">", 0, end) < 0:
                    continue
            lines = list(numbered) if lines is numbered else lines
            lines[i], out.quoted = (n, s[end:]), out.quoted + 1
    return lines


_TEXT = itemgetter(1)
_QUOTE_AT = lazy(r"\n[^\n]{0,3}>")  # a literal newline first: the search skips from line to line at C speed


def _quote_lines(whole: str, lead: int = 0) -> list[int]:
    """0-based numbers of the text's lines with a '>' in their first 4 characters, in order; ``lead``: 1 where
    the text opens with a newline of its own (then its first line is found as the others are)."""
    gt, nl = whole.find(">", 0, 4), whole.find("\n", 0, 4)
    numbers = [0] if gt >= 0 and (nl < 0 or gt < nl) and not lead else []
    line, last = -lead, 0
    for m in _QUOTE_AT.finditer(whole):
        line += whole.count("\n", last, m.start() + 1)
        numbers.append(line)
        last = m.start() + 1
    return numbers


_LANGUAGE = lazy(r" ?[A-Za-z][\w+#.-]{0,30}")  # a fence's info string, one word alone in any case: ```shell,
# ``` text, ```c++, ```JSON, ```Bash (an indent is the tool's: ```    Fabric, ```  Current : 1, a -q excerpt's line)


def _unglue(numbered: Numbered, out: Peeled) -> Numbered:
    """A code fence typed on the output's first or last line (```[  12.3] amdgpu …, … seq=47```): the line is
    the tool's, the fence markdown's. A fence alone or with a language tag stays a fence; backtick fences
    only (the glued ones pastes show)."""
    lines: Numbered = []
    if (places := _places(numbered, "`", "*")) is not None:  # a long text's lines: only those that may change
        lines = numbered
        for at in places:
            if (item := _unglued(numbered, at, out)) != numbered[at]:
                lines = list(numbered) if lines is numbered else lines
                lines[at] = item
        return lines
    for at in range(len(numbered)):  # a line without a backtick is kept as the same pair
        lines.append(_unglued(numbered, at, out))
    return lines


def _unglued(numbered: Numbered, at: int, out: Peeled) -> tuple[int, str]:
    """_unglue's work on one line."""
    item = numbered[at]
    s = item[1]
    if s[-1:] in ("`", "*") and (inner := _marked_up(s)) is not None:
        item, s = (item[0], inner), inner
        out.unglued.add(item[0])
    if "**" in s and (bare := _SPANS.sub(r"\1", s)) != s:
        item, s = (item[0], bare), bare  # R5C: a **bold** span inside the line: the same line bare
        out.unglued.add(item[0])
    if "`" in s and (t := s.strip()) and len(t) > 3:
        head, tail = t[:3] == "```", t[-3:] == "```"
        rest = t.lstrip("`") if head else t  # a fence is 3 or more: ````diff
        rest = rest.rstrip("`") if tail else rest
        if rest.strip(" \t+-") and (tail or (head and not _is_language(rest, s, numbered[at + 1:at + 9]))):
            item = (item[0], s[:len(s) - len(s.lstrip())] + rest if head else s.rstrip().rstrip("`"))
            out.unglued.add(item[0])
            if head != tail:  # it opened or closed a block ("```text```" is inline code)
                out.fences[item[0]] = s[:len(s) - len(s.lstrip())]
    return item


def _is_language(rest: str, fence: str, after: Numbered) -> bool:
    """Whether what follows a fence is its language tag: one word alone, not a -q section typed on the
    fence (```Clocks): a capitalised word whose next line is deeper and holds -q's ' : ' is the tool's."""
    if not _LANGUAGE.fullmatch(rest):
        return False
    if rest.lstrip()[0].islower():
        return True
    nxt = next((t for _, t in after if t.strip()), "")
    return not (" : " in nxt and _depth(nxt) > _depth(fence))


def _depth(s: str) -> int:
    return len(s.expandtabs(8)) - len(s.expandtabs(8).lstrip())


# a span a poster set in **bold** inside a line ('(38 vs. 0)  no **CUDA-capable device is detected**'): flanked by no
# word character, as markdown's rule ('2**10' stays); a bold label ('- **PCIe:** x4') is a report's own mark, kept
_SPANS = re.compile(r"(?<![\w*])\*\*(?=[^\s*])([^*\n]{1,400}?)(?<=[^\s*:])\*\*(?![\w*:])")
_PEELS = 4  # marks taken off one line at most (a post's **`…`**: two); review 55 F5: one recursion a mark overflowed


def _marked_up(s: str) -> str | None:
    """A whole line set in inline code (`…` or ``…``) or in **bold** by hand (a chat or forum post): the
    line inside (**`…`**: both marks off, at most _PEELS); None for any other line (a fence, a line that only
    ends so)."""
    inner = None
    for _ in range(_PEELS):
        if (peeled := _peeled(s if inner is None else inner)) is None:
            break
        inner = peeled
    return inner


def _peeled(s: str) -> str | None:
    """``s`` with one pair of marks around the whole line taken off; None where it has none."""
    t = s.lstrip()
    for mark in ("**", "``", "`"):
        if len(t) > 2 * len(mark) and t.startswith(mark) and t.endswith(mark) and t[:3] != "```" \
                and t[len(mark)] != mark[0] and t[-len(mark) - 1] != mark[0]:
            return s[:len(s) - len(t)] + t[len(mark):-len(mark)]
    return None


def _skip(s: str) -> bool:
    """A line that takes no part in a block's indentation: blank, a code fence, a poster's cut."""
    if s[:1].isalnum():  # most lines: flush-left words
        return False
    t = s.strip()
    return not t or t[:3] in _FENCE or t in ("...", "…", "[...]", "(...)")


RST_MOST = 4 * 2**20  # characters: a longer text is no reStructuredText page's paste (each search: 10 ms a 20 MB)


def _rst_sign(whole: str) -> bool:
    return len(whole) <= RST_MOST and (".. code" in whole or ".. sourcecode" in whole)


_RST = lazy(r"^([ \t]*)\.\. (?:code-block|code|sourcecode)::")


def _unrst(numbered: Numbered, indented: dict[str, set[int]]) -> Numbered:
    """Each reStructuredText code block (``.. code-block:: shell`` and the lines deeper than it, blank ones
    among them) without its common indentation, as a markdown code block's: the tool's own columns kept."""
    given = numbered
    for i in [i for i, (_, s) in enumerate(numbered) if ".. " in s and _RST.match(s)]:
        lead, end = _depth(numbered[i][1]), i + 1
        while end < len(numbered) and (not numbered[end][1].strip() or _depth(numbered[end][1]) > lead):
            end += 1
        numbered = _dedent_run(numbered, i + 1, end, indented, given=given)
    return numbered


def _dedent(numbered: Numbered, indented: dict[str, set[int]], glued: dict[int, str], fenced: bool = True) -> Numbered:
    """The whole paste's common indentation where its first line sits at it (a tool's excerpt cut from its
    middle starts deeper than it goes on, -q's `Current : 1` under a cut `Link Width`: that indentation is
    the tool's), each fenced block's as far as its opening fence is indented, and 4 spaces or a tab off each
    markdown code block (lines outside fences all indented so, after a blank line or the start), as markdown
    reads them. A tool's own indented lines follow their flush-left header with no blank between: kept. A
    line a fence was typed on (``glued``) opens or closes its block and is part of it. ``fenced``: whether a
    line may hold a fence's '`' or '~' (the caller's one search of the text); the list is copied only where a
    run changes (issue 43)."""
    given = numbered
    numbered = _dedent_run(numbered, 0, len(numbered), indented, given=given)
    places = _places(numbered, "`", "~")
    fences = [i for i, (_, s) in (enumerate(numbered) if places is None else ((i, numbered[i]) for i in places))
              if ("`" in s or "~" in s) and s.strip()[:3] in _FENCE] if fenced else []
    if glued:  # rare: a pass over the lines only then
        fences = sorted({*fences, *(i for i, (n, _) in enumerate(numbered) if n in glued)})
    for a, b in zip(fences[::2], [*fences[1::2], len(numbered)], strict=False):
        lead = glued.get(numbered[a][0], _LEAD.match(numbered[a][1]).group(0))  # type: ignore[union-attr]
        start, end = a + (numbered[a][0] not in glued), b + (b < len(numbered) and numbered[b][0] in glued)
        numbered = _dedent_run(numbered, start, end, indented, lead, given) if lead else numbered
    inside = {i for a, b in zip(fences[::2], [*fences[1::2], len(numbered)], strict=False) for i in range(a, b + 1)}
    blank = getattr(numbered, "blank", None)  # a long text's lines: its empty ones found at C speed, each line made
    texts: list[str] | _Texts = list(map(_TEXT, numbered)) if blank is None else _Texts(numbered)  # when read
    done = 0  # a markdown code block starts after a blank line (or at the start): only those lines are looked at
    for start in [0, *(i + 1 for i, s in enumerate(cast(list[str], texts)) if not s or s.isspace())] if blank is None \
            else [0, *(i + 1 for i in blank())]:
        if start < done or start >= len(texts) or start in inside or not _indented_or_blank(texts[start]):
            continue
        end = start
        while end < len(texts) and end not in inside and _indented_or_blank(texts[end]):
            end += 1
        if end - start >= 2:
            block = [s for s in (texts[k] for k in range(start, end)) if not _skip(s)]
            numbered = _dedent_run(numbered, start, end, indented, "\t" if block and block[0][:1] == "\t" else "    ",
                                   given)
        done = end
    return numbered


class _Texts:
    """The texts of a long text's lines (lines.TextLines: each made when read), as _dedent reads them."""
    def __init__(self, numbered: Numbered) -> None:
        self.numbered = numbered

    def __len__(self) -> int:
        return len(self.numbered)
    def __getitem__(self, k: int) -> str:
        return self.numbered[k][1]


def _places(numbered: Numbered, *words: str) -> list[int] | None:
    """Where a long text's lines (lines.TextLines) hold one of ``words``; None for a list (its lines tested)."""
    holding = getattr(numbered, "holding", None)
    return None if holding is None else holding(list(words))


def _indented_or_blank(s: str) -> bool:
    return s[:4] == "    " or s[:1] == "\t" or _skip(s)


def _dedent_run(numbered: Numbered, start: int, end: int, indented: dict[str, set[int]],
                lead: str | None = None, given: Numbered | None = None) -> Numbered:
    first = next((s for _, s in numbered[start:end] if not _skip(s)), "")
    if lead is None and not first[:1].isspace():  # the first line is flush left: nothing in common (most files)
        return numbered
    body = [s for _, s in numbered[start:end] if not _skip(s)]
    if len(body) < 2:
        return numbered
    common = _common_lead(body) if lead is None else _common_lead([lead, *body])  # markdown's: at most the lead
    if not common or (lead is None and _LEAD.match(body[0]).group(0) != common):  # type: ignore[union-attr]
        return numbered  # a cut excerpt: it starts deeper than its shallowest line
    what = _describe(common)
    run = [(n, s[len(common):] if s.startswith(common) else s.lstrip(" \t")) for n, s in numbered[start:end]]
    indented.setdefault(what, set()).update(n for n, s in numbered[start:end] if s.startswith(common))
    numbered = list(numbered) if numbered is given else numbered  # the caller's list is never changed
    numbered[start:end] = run  # in place (our own copy, made once): a bug report has thousands of blocks
    return numbered


def _common_lead(body: list[str]) -> str:
    leads = [_LEAD.match(s).group(0) for s in body]  # type: ignore[union-attr]  # the pattern always matches
    common = min(leads, key=len)
    while common and not all(lead.startswith(common) for lead in leads):
        common = common[:-1]
    return common


def _describe(lead: str) -> str:
    tabs, spaces = lead.count("\t"), lead.count(" ")
    parts = ([f"{spaces} space(s)"] if spaces else []) + ([f"{tabs} tab(s)"] if tabs else [])
    return " and ".join(parts)


def strip_prefix(numbered: Numbered) -> tuple[Numbered, tuple[str, ...], str]:
    """The first kind of prefix the lines carry consistently, removed where it is; its tags and a note. A
    host-naming kind (pdsh, docker compose) only where its names look like hosts (node07, gpu-a100-3,
    10.0.3.7) and repeat: a driver's tag (NVRM:) or a listing's keys (State:, Device:) are none."""
    lines, tags, note, _ = _strip(numbered)
    return lines, tags, note


def _hosts_of(kind: Prefix, numbered: Numbered) -> dict[int, str]:
    """Line number -> the host a host-naming prefix names on that line (before it is cut)."""
    return {n: _tag(m) for n, s in numbered if (m := _match(kind, s)) is not None}


def _strip(numbered: Numbered) -> tuple[Numbered, tuple[str, ...], str, Prefix | None]:
    """strip_prefix, with the kind of prefix it removed (None: none)."""
    body = [s for _, s in numbered[:4000] if not _skip(s)]  # a launcher prefixes every line: a sample decides
    seen = _seen(body)
    for kind in PREFIXES:
        if kind.label not in seen:  # C-speed searches of the sample rule most kinds out
            continue
        matches = [_match(kind, s) for s in body]
        hits = [m for m in matches if m is not None]
        if len(hits) < 2 or not _consistent(kind, [m is not None for m in matches], len(hits)):
            continue
        tags = list(dict.fromkeys(_tag(m) for m in hits))
        if kind.hosts and (len(tags) > _most_hosts(kind, len(hits)) or any(_is_driver(t) for t in tags)
                           or (kind.label.startswith("pdsh") and _kernel_log(body))):
            continue  # a listing's keys (a name per row), or the kernel's own tags (NVRM:, nvidia-modeset:)
        note = f"{len(hits)} line(s) carried the {kind.label} launcher prefix, removed ({_list(tags)})"
        return [(n, _cut(kind, s)) for n, s in numbered], tuple(tags), note, kind
    return numbered, (), "", None


# each kind's pattern over the sample's text: '^' made the newline before each line (a literal the search skips to,
# where a multiline '^' is tried at every character); a line's end ('$') as it is
_AT_LINE = {kind.label: lazy("\n" + kind.rx.pattern[1:], re.M) for kind in PREFIXES}


def _seen(body: list[str], step: int = 512) -> set[str]:
    """The kinds whose pattern starts two of the lines or more (a kind taken on fewer is none): each searched
    for in the lines' text, joined ``step`` lines at a time (no copy of the whole sample held)."""
    hits = dict.fromkeys(_AT_LINE, 0)
    for at in range(0, len(body), step):
        piece = "\n".join(["", *body[at:at + step]])
        for label, rx in _AT_LINE.items():
            end = 0
            while hits[label] < 2 and (m := rx.search(piece, end)) is not None:
                hits[label], end = hits[label] + 1, m.end()
    return {label for label, n in hits.items() if n >= 2}


def _match(kind: Prefix, s: str) -> re.Match[str] | None:
    """The kind's prefix on the line. A host-naming kind's only where the name looks like a host: a line of
    prose ('Output:', 'Log:') or a key ('State:') carries none, and leaves the launcher's lines theirs."""
    m = kind.rx.match(s)
    if m is None or kind.label not in _HOST_KINDS:
        return m
    tag = _tag(m)
    return m if _HOSTLIKE.search(tag) and tag not in _NOT_HOSTS else None


def _most_hosts(kind: Prefix, hits: int) -> int:
    """A host or a service prints several lines each: its names repeat (keys of a `key: value` listing, or a
    markdown table's first column, a name per row, do not)."""
    return min(hits // 2, max(8, hits // kind.hosts) if kind.label.startswith("pdsh") else max(2, hits // kind.hosts))


def _consistent(kind: Prefix, carried: list[bool], hits: int) -> bool:
    """On most lines, or a run of RUN lines in a row (Open MPI's tag: any two lines)."""
    if kind.anywhere or hits >= MOST * len(carried):
        return True
    run = 0
    for c in carried:
        run = run + 1 if c else 0
        if run >= RUN:
            return True
    return False


def _cut(kind: Prefix, s: str) -> str:
    """The line without its prefix; on a line a fence was typed before (```node01: GPU0 …), the prefix
    behind the fence (_unglue takes the fence off later)."""
    at = len(s) - len(s.lstrip("`")) if s[:3] == "```" else 0
    m = _match(kind, s[at:] if at else s)  # the patterns are anchored at the line's start
    return s if m is None else s[:at] + s[at + m.end():]


def _tag(m: re.Match[str]) -> str:
    """The host (syslog), or the whole prefix without its punctuation (a launcher's)."""
    return m.group("tag") if "tag" in m.re.groupindex else m.group(0).strip().rstrip(":|").strip()


_KERNEL_LINE = lazy(r"[ \t]*(?:\[ *\d+\.\d+\]|\[[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d |(?:NVRM|nvidia[\w-]*|amdgpu"
                    r"|kfd|kernel):|[a-z][\w-]{0,31} (?:[\da-fA-F]{4}:)?[\da-fA-F]{2}:[\da-fA-F]{2}\.[0-7]: )")


def _kernel_log(body: list[str]) -> bool:
    """Whether the lines hold the kernel's own, led by nothing (a dmesg stamp, NVRM:, a driver's
    `i915 0000:03:00.0:`): then every `tag: ` is the kernel's prefix grammar (IPv6:, e1000e:, usb1-port2:,
    i915:), never a pdsh host's, which would lead those lines too."""
    return any(_KERNEL_LINE.match(s) for s in body)


def _is_driver(tag: str) -> bool:
    """A tag the kernel or a driver prints before its message, never a host's name."""
    return tag in _NOT_HOSTS or tag.lower().startswith(("nvidia", "nvrm", "amdgpu", "kernel", "kfd", "drm")) or bool(
        _IPOIB.fullmatch(tag))  # R11B: an IPoIB netdev's ('ib6: lost carrier', systemd-networkd's), never a host


_IPOIB = lazy(r"ib\d{1,2}(?:\.[0-9a-f]{1,4})?|ibp\d{1,3}s\d{1,3}\w{0,8}")


def _list(items: list[str], most: int = 6) -> str:
    return ", ".join(items[:most]) + (f" and {len(items) - most} more" if len(items) > most else "")
