"""Issue 46 (R14D): LBNL NHC's (mej/nhc) hardware checks, judged as the fact each states. Its checks end with
``die 1 "$FUNCNAME:  <message>"``, which nhc prints as ``ERROR:  nhc:  Health check failed:  <message>`` and
node-mark-offline repeats with the node (``/usr/libexec/nhc/node-mark-offline b001 check_hw_ib:  …``):

- check_hw_ib (scripts/lbnl_hw.nhc): ``No IB port[ <dev>] is ACTIVE (LinkUp[ <rate> Gb/sec]).``: the InfiniBand
  port the node's nhc.conf requires is down (the configuration is the node's design: nic_port_down);
  ``Version mismatch between kernel OFED drivers and userspace OFED libraries.``: the IB stack's set-up.
- check_hw_eth: ``Ethernet device <dev> not detected.``: an interface the configuration requires is missing.
- check_nv_healthmon (scripts/lbnl_nv.nhc): ``nvidia-healthmon not found or not runnable.``: the tool, not a GPU.
- a check that returns non-zero without dying: ``Health check failed:  Check <check> <args> returned <rc>``
  (and the log's ``Node Health Check failed.  Check … returned …``). A site's Xid check beside the Xids it found
  (``Found XID errors: 63``, read by nhc_xids as the Xids they are) is cited by those; a count check whose line
  the same text shows edited in nhc.conf (a diff's ``<``/``>`` lines) failed on the edit: a configuration note.

The rest (a GPU check's own failure, a count short) is ops_layer's (_nhc_failed)."""

from __future__ import annotations

import re

from gpuvet.captures import ops_logs
from gpuvet.captures.app_errors import AppErrorsParse
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.text import Line

WORDS = ("check_hw_", "check_nv_", "node-mark-", "returned", "NHC", "nhc", "Node Health Check", "Running check:")
_IB_DOWN = re.compile(r"\bcheck_hw_ib:\s+No IB port(?: (?P<dev>\S+))? is ACTIVE \(LinkUp(?: (?P<rate>[\d.]+) Gb/sec)?\)")
_OFED = re.compile(r"\bcheck_hw_ib:\s+Version mismatch between kernel OFED drivers and userspace OFED libraries")
_ETH = re.compile(r"\bcheck_hw_eth:\s+Ethernet device (?P<dev>\S+) not detected")
_NO_TOOL = re.compile(r"\bcheck_nv_\w+:\s+(?P<tool>\S+) not found or not runnable")
RETURNED = re.compile(r"\bCheck (?P<check>[A-Za-z_]\w{0,60})(?P<args>(?: [^\s:]{1,40}){0,6}) returned (?P<rc>\d{1,3})\b")
_MARKED = re.compile(r"\bnode-mark-(?:offline|online)\s+(?P<host>[A-Za-z0-9][\w.-]{0,62})\s+(?:check_\w+|\S+:)")
# NHC's framing of a check's message: nhc's 'Health check failed:', node-mark-offline's line, scontrol's
# 'Reason=NHC', sinfo -R's REASON column starting 'NHC:'
_FRAME = re.compile(r"Health check failed:|\bnode-mark-(?:offline|online)\b|\bReason=NHC\b|^\s*NHC:")
_NODE_NAME = re.compile(r"\bNodeName=([A-Za-z0-9][\w.-]{0,62})\b")
_MARK_NOTE = re.compile(r"\bnode-mark-(?:offline|online):\s+(?P<said>.{1,160})$")
_PROMPT = re.compile(r"^\s*\[?\w[\w.-]*@(?P<host>[A-Za-z0-9][\w.-]{0,62})[ :][^#$\]]*\]?[#$]")
# nhc -v's own run (its README): 'Node Health Check starting.', 'Running check:  "check_hw_eth eth0"', 'Node Health
# Check completed successfully (1s).': read, no fault
_RUN = re.compile(r"^\s*(?:\S.{0,40}?\s)?(?:Node Health Check (?P<end>starting|completed successfully)\b|"
                  r"Running check:\s+\")")
_XIDS_FOUND = re.compile(r"\bFound XID errors?:\s*\d", re.I)
_COUNT = re.compile(r"count", re.I)
_PAIR = re.compile(r"(?<!\w)([A-Za-z_]\w{0,60})\s+(\d+)\b")  # a word and the count after it, on a diff's old side
_DIFF_SPAN = 6  # lines: a diff's new side follows its old one within these


def read(lines: list[Line], out: AppErrorsParse, marks: Marks | None = None) -> None:
    """The NHC lines above, into ``out`` (a record per fact and node, its lines claimed; the rest said)."""
    if marks is not None and not any(marks.may(w) for w in WORDS):
        return
    found = holding(lines, WORDS, marks)
    if not found:
        return
    host = _host(lines, found)
    xids = any(_XIDS_FOUND.search(lines[i].text) for i in holding(lines, ("XID", "Xid", "xid"), marks))
    edits = _Edits(lines)
    for i in found:
        ln = lines[i]
        t = ln.text
        framed = _FRAME.search(t) is not None  # NHC's own words only inside its framing (review 67b F6)
        if framed and (m := _IB_DOWN.search(t)) is not None:
            _add(out, "nhc_ib_port_down", ln, _ib_said(m, host, t), host)
        elif framed and _OFED.search(t):
            _add(out, "nhc_check_failed", ln, f"check_hw_ib: {t.strip()}", host)
        elif framed and (e := _ETH.search(t)) is not None:
            _add(out, "nhc_netdev_missing", ln, f"NHC check_hw_eth: network device {e.group('dev')} not detected on "
                 f"{host or 'the node'}: {t.strip()}", host)
        elif framed and (n := _NO_TOOL.search(t)) is not None:
            out.claimed.add(ln.no)
            out.notes.append(f"NHC: {n.group('tool')} is not installed or not runnable: the check's tool, not a GPU")
        elif (r := RETURNED.search(t)) is not None:
            _returned(out, ln, r, xids, edits)
        elif (run := _RUN.match(t)) is not None:
            out.claimed.add(ln.no)
            if run.group("end") == "completed successfully":
                _note(out, "NHC: Node Health Check completed successfully: every check it ran passed")
        elif (note := _MARK_NOTE.search(t)) is not None:
            out.claimed.add(ln.no)
            out.notes.append(f"NHC's node-mark script: {note.group('said').strip()}")


def _returned(out: AppErrorsParse, ln: Line, r: re.Match[str], xids: bool, edits: _Edits) -> None:
    """A check that returned non-zero: cited by the Xids it found, or a configuration note where the text shows
    its count edited; else left to ops_layer (not claimed)."""
    check = r.group("check")
    if xids and "xid" in check.lower():
        out.claimed.add(ln.no)
        _note(out, f"NHC's {check} failed on the Xids it found (read as those Xids)")
    elif _COUNT.search(check) and (edit := edits.of(check)) is not None:
        out.claimed.update(edit[2])
        out.claimed.add(ln.no)
        _note(out, f"NHC's {check}{r.group('args')} failed after nhc.conf was edited to expect {edit[1]} where it "
                   f"expected {edit[0]}: the failure follows the configuration change, not a GPU lost")


class _Edits:
    """The diff lines of nhc.conf in a text, read once (review 67b F3: a rescan per 'returned' line was quadratic):
    each old-side line's (check, count) pairs, indexed by check; a check's edit is found from its own lines."""

    def __init__(self, lines: list[Line]) -> None:
        self._lines = lines
        self._old: dict[str, list[tuple[int, str]]] | None = None
        self._found: dict[str, tuple[str, str, set[int]] | None] = {}

    def of(self, check: str) -> tuple[str, str, set[int]] | None:
        """A diff changing ``check``'s count: (before, after, its lines), else None."""
        if check not in self._found:
            self._found[check] = self._edit(check)
        return self._found[check]

    def _edit(self, check: str) -> tuple[str, str, set[int]] | None:
        if self._old is None:
            self._old = self._index()
        given = re.compile(r"\b" + re.escape(check) + r"\s+(?P<n>\d+)")
        for i, n in self._old.get(check, ()):
            for later in self._lines[i + 1:i + _DIFF_SPAN]:  # the new side ('>' or '+'; a paste's cleaning may take '>')
                if (new := given.search(later.text)) is not None and new.group("n") != n:
                    return n, new.group("n"), {self._lines[i].no, later.no}
        return None

    def _index(self) -> dict[str, list[tuple[int, str]]]:
        old: dict[str, list[tuple[int, str]]] = {}
        for i, ln in enumerate(self._lines):
            if ln.text.lstrip()[:1] not in ("<", "-"):
                continue
            last: dict[str, str] = {}  # a check named twice on one line: its last count (as the old regex's '.*')
            for m in _PAIR.finditer(ln.text):
                last[m.group(1)] = m.group(2)
            for word, n in last.items():
                old.setdefault(word, []).append((i, n))
        return old


def _ib_said(m: re.Match[str], host: str | None, t: str) -> str:
    """check_hw_ib's failure in words: with a rate it fails on a port down and on one ACTIVE at another rate."""
    port = f" {m.group('dev')}" if m.group("dev") else ""
    where = f"on {host or 'the node'}"
    if not m.group("rate"):
        return f"NHC check_hw_ib: no InfiniBand port{port} ACTIVE (LinkUp) {where}: {t.strip()}"
    return (f"NHC check_hw_ib: no InfiniBand port{port} ACTIVE at {m.group('rate')} Gb/s {where} (a port down, or "
            f"up at another rate: ibstat's State and Rate say which): {t.strip()}")


def _host(lines: list[Line], found: list[int]) -> str | None:
    """The node NHC judged: node-mark-offline's argument, else scontrol's one NodeName beside NHC's Reason, else the
    one host a shell prompt names."""
    marked = {m.group("host") for i in found if (m := _MARKED.search(lines[i].text))}
    if len(marked) == 1:
        return marked.pop()
    if not marked and any("Reason=NHC" in lines[i].text for i in found):
        named = {m.group(1) for ln in lines if "NodeName=" in ln.text and (m := _NODE_NAME.search(ln.text))}
        if len(named) == 1:
            return named.pop()
    prompts = {m.group("host") for ln in lines[:400] if "@" in ln.text and (m := _PROMPT.match(ln.text))}
    return prompts.pop() if len(prompts) == 1 and not marked else None


def _add(out: AppErrorsParse, kind: str, ln: Line, text: str, host: str | None) -> None:
    """A record of ``kind`` per host, counted (NHC repeats its failure on every run and in its log)."""
    ops_logs.add(out, kind, ln, text, "NHC", host)


def _note(out: AppErrorsParse, said: str) -> None:
    if said not in out.notes:
        out.notes.append(said)
