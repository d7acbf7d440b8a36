"""The collective libraries' own logs, as people paste them: NCCL_DEBUG=INFO/WARN lines
(``host:pid:tid [dev] NCCL INFO …``; RCCL prints the same shapes, as NCCL or RCCL), behind a
launcher's or a pod's name or bare (``transport/nvls.cc:251 NCCL WARN Cuda failure …``), and
HCCL's plog lines (``[ERROR] HCCL(pid,proc):time [file.cc:N][tid][Init]…errNo[0x…]…``).

Kept is what doctor judges, each with its line: the network transport each process chose
(``NET/IB : Using [0]mlx5_0:1/IB``, or ``NET/IB : No device found.`` then ``NET/Socket : Using``;
a channel ``via NET/Socket/0`` or ``Using network Socket`` says it outright), the set-up failures
(WARN lines of socket.cc, bootstrap.cc, init.cc…, an NVLS ``Cuda failure``), the errors while it
ran, and NVLS's 'multicast support is not available' (info). Up to NCCL 2.4 the bootstrap printed
``NET/Socket : Using`` on every process, so in such a log that line alone chooses nothing."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from gpuvet.captures import hccl_places, nccl_resweep, nccl_retried
from gpuvet.captures.hccl_links import link_failure
from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.nccl_fallbacks import Fallback, fallback
from gpuvet.captures.nccl_paths import NcclTopo, add
from gpuvet.captures.nccl_quoted import last_errors, wrapped
from gpuvet.captures.nccl_runs import RANK_LINE
from gpuvet.captures.nccl_warns import RETRY, advice, benign, cut_failure
from gpuvet.captures.text import Line

_TEXT = 400  # characters of a line kept as evidence: a WARN line with its GIDs and HCA name fits whole
# host:pid:tid [dev] (or host:pid [dev]), then the source file:line and, in newer builds, the function ('(nvlsAllocateMem)')
_LOG = lazy(
    # (a run of '*' or 'x' taken from its start only: linear on a long one, review 55)
    r"(?:(?:(?P<redacted><[\w .-]{1,62}>|(?<!\*)\*{2,}|(?<!x)x{3,}|(?<!X)X{3,})|(?P<host>(?!\d+:|\.*:)[\w.-]{1,63})):"
    # pid:tid as printed, or masked by the poster, the tid with it or not ('host-01.example.com:XXXXXX [5]')
    r"(?:(?P<pid>\d{1,9}):(?P<tid>\d{1,9})|(?:X{2,}|x{2,}|\*{2,}|<[\w .-]{1,20}>)(?::(?:\d{1,9}|X{2,}|x{2,}))?)"
    r"\s+\[(?P<dev>\d{1,4})\]\s+)?"
    r"(?:(?P<src>[\w./-]{1,120}\.(?:cc|cu|cpp|c|h)):(?P<srcline>\d{1,6})\s+(?:\([\w:~]{1,120}\)\s+)?)?"
    # NCCL 2.0-2.2 printed no 'NCCL' after the prefix ('host:pid:tid [0] INFO NET : Using interface …')
    r"(?:\b(?P<lib>NCCL|RCCL)\s+|(?(tid)|(?!)))(?P<level>INFO|WARN|ERROR|ABORT|TRACE)\b:?\s?(?P<msg>.*)$")
# a per-rank logger's form of the same line: the source and the host in brackets after its own prefix
# ('rank_7.log:[0007/0064][2025-02-16 22:31:34,418] [misc/socket.cc:586] [node12:pid=3942411] NCCL WARN …')
_BRACKETED = lazy(r"(?:\[(?P<rank>\d{1,6})/\d{1,6}\](?:\[[^\]\n]{1,40}\])?\s*)?"
                  r"\[(?P<src>[\w./-]{1,120}\.(?:cc|cu|cpp|c|h)):(?P<srcline>\d{1,6})\]\s+"
                  r"\[(?P<host>[A-Za-z0-9][\w.-]{0,62}):(?:pid=)?(?P<pid>\d{1,9})(?::(?P<tid>\d{1,9}))?\]\s+"
                  r"(?:\[(?P<dev>\d{1,4})\]\s+)?(?P<lib>NCCL|RCCL)\s+(?P<level>INFO|WARN|ERROR|ABORT|TRACE)\b:?\s?"
                  r"(?P<msg>.*)$")
# PyTorch's watchdog on a collective that timed out, with its sequence number: past the first, collectives ran,
# so the communicator had come up ('WorkNCCL(SeqNum=66, OpType=ALLREDUCE, …)')
_WATCHDOG_SEQ = lazy(r"\bWork(?:NCCL|RCCL)?\(SeqNum=(\d{1,12})\b")
_PLOG = lazy(r"^\s*\[(?P<level>ERROR|WARNING|INFO|EVENT|DEBUG)\]\s+(?P<lib>HCCL|HCCP)\((?P<pid>\d{1,9}),"
             r"[^)]{0,80}\):\S*\s+\[(?P<src>[\w./-]{1,120}:\d{1,6})\](?:\[\d{1,9}\])?(?P<msg>.*)$")
# NCCL's IB completion error quoted without its 'NCCL WARN' prefix (in a sentence, a chat paste): its words are
# NCCL's own, old ('with error 12, opcode 0') and new ('with status=12 opcode=0 … vendor err 129'), any IB plugin
_BARE_COMPLETION = lazy(r"\bNET/IB\w{0,8}\s*:\s*Got completion from peer\s+\S+\s+with (?:error |status=)\d+.*$")
# a name GitHub's markdown made a link of in a pasted line ('[net_ib.cc:101](http://net_ib.cc:101/)')
_UNLINKED = lazy(r"\[([^\]\s]{1,120})\]\(https?://[^)\s]{1,200}\)")
# NCCL's 'host:pid:tid' prefix alone on a line (a paste cut right after it): the host it names ran a process
_PREFIX_ONLY = lazy(r"^\s*(?P<host>[A-Za-z][\w.-]{0,62}):\d{1,9}:\d{1,9}\s*$")
# a word standing for any host in a poster's paste ('host:22337:22453 [6]'): no host's name
_PLACEHOLDER = lazy(r"^(?:host|hostname|node|nodename|localhost|server|machine|myhost|my-?host)\d?$", re.I)
_VERSION = lazy(r"\b(NCCL|RCCL) version\s*:?\s*(\d[\w.+-]*)")
# the devices run to the line's end; its '; OOB eth0:…' tail is cut off in code (_devices), never by a lazy group
# before optional blanks: that backtracked cubically on a line of blanks not ending the way it expects (REV67a #1)
_NET_USING = lazy(r"^NET/(?P<net>[\w-]+)\s*:\s*(?:Using\s+|(?=\[\d+\] ))(?P<devs>.*)$")
_OOB_TAIL = lazy(r"\s*OOB\s+\S+")
_NET_NONE = lazy(r"^NET/(?P<net>[\w-]+)\s*:\s*No device found")
# the job turned InfiniBand off itself: on a launcher's -x / export / env dump, or NCCL's own 'set by environment'
IB_OFF = lazy(r"\bNCCL_IB_DISABLE(?:=| set by environment to )1\b|\bNCCL_NET=[\"']?Socket\b", re.I)
NO_VERBS = lazy(r"Failed to open libibverbs|libibverbs\.so.*(?:not found|cannot open)", re.I)
_USING_NETWORK = lazy(r"^Using (?:internal |external )?[Nn]etwork (?P<net>\S.*?)\s*$")  # 2.0-2.2: 'internal'
_VIA = lazy(r"\bvia NET/(?P<net>[\w-]+)")
# 'Channel 00/0 : 0[0] -> 8[0]' (a device index), 2.7's '1[1e0] -> 0[1e0]' (a busId in hex)
_PEERS = lazy(r"\b(?P<a>\d{1,6})\[[0-9a-fA-F]{1,12}\] -> (?P<b>\d{1,6})\[[0-9a-fA-F]{1,12}\]")

_COMM = lazy(r"\brank (?P<rank>\d+) n[Rr]anks (?P<n>\d+)(?:.*?\bnNodes (?P<nodes>\d+))?")
_DEVICE = lazy(r"\[\d+\] ?([^\s\[;]+)")  # 2.0-2.2 print one a line: 'NET/IB: [2] mlx5_1:1/IB'
_NVLS_NA = lazy(r"NVLS multicast support is not available", re.I)
_FAILS = lazy(r"fail|error|refused|timed? ?out|unreachable|abort|invalid|cannot|could not|unable|mismatch|"
              r"neither|no route|reset by peer|closed by (?:remote )?peer|\bstatus=[1-9]|vendor err|no POLLOUT|"
              r"NET/IB\w{0,8}\s*:\s*Got comp\w{0,8}$",
              re.I)  # NET/IB: 'with status=12'; a socket: 'Connection closed by remote peer'
# NET/IB warns 'Got completion from peer … with error' only on an error: its WARN cut mid-word before its status
# ('NET/IB : Got comple', issue 46, batch T) is one; a whole line is judged by its status ('status=0' is none), and
# its 'Got async event' may be benign (a subnet manager's client reregistration)
# a verbs call of NCCL's IB transport that failed ('Call to ibv_create_qp failed', 'ibv_reg_mr_iova2 failed with error
# 12'): what it could not get names the cause, whichever step's trace follows it, so every rank's copy of the line
# reads alike (issue 46, batch N: one rank's trace cut, its peers' not)
_VERBS = lazy(r"\b(?:ibv|mlx5dv)_(?P<call>create_qp|create_cq|create_srq|alloc_pd|create_comp_channel|"
              r"reg_mr(?:_iova2?)?|reg_dmabuf_mr|open_device|get_device_list|query_device|query_port)\b"
              r".{0,60}?\bfail", re.I)
VERBS_KIND = {"reg_mr": "ib_memory", "reg_mr_iova": "ib_memory", "reg_mr_iova2": "ib_memory",
              "reg_dmabuf_mr": "ib_memory", "open_device": "ib_device", "get_device_list": "ib_device",
              "query_device": "ib_device", "query_port": "ib_device"}  # the rest: a QP, CQ, SRQ or PD: ib_resource
# the CUDA/HIP error NCCL's 'Cuda failure' quotes names the cause: out of memory is the job's memory, not the module
_OOM = lazy(r"\b(?:Cuda|Hip|ROCr) failure (?:'out of memory'|2\b)|\b(?:cudaErrorMemoryAllocation|"
            r"hipErrorOutOfMemory)\b|\bFailed to CUDA (?:malloc|calloc|host alloc)\b", re.I)  # alloc.h's too
_GOES_ON = lazy(r"falling back|fall back|ignor|continu|will be (?:used|disabled)|skipp", re.I)  # a WARN, no failure
_INIT_FILES = {"socket.cc", "bootstrap.cc", "init.cc", "transport.cc", "channel.cc", "connect.cc", "comm.cc",
               "proxy.cc", "utils.cc"}
_INIT_WORDS = lazy(r"\binit|bootstrap|connect|socket|address family|AF_INET|listen|accept", re.I)


@dataclass(frozen=True)
class LogLine:
    """One line of a library's log, with the process and module it names (None where it names none)."""

    line: int
    lib: str  # NCCL, RCCL, HCCL
    level: str  # INFO, WARN, ERROR
    host: str | None
    pid: int | None
    dev: int | None  # the process's CUDA/HIP device, NCCL's [n]
    source: str | None  # the library's file:line (misc/socket.cc:484)
    message: str
    text: str  # as pasted, after a launcher prefix (at most _TEXT characters)
    redacted: bool = False  # the poster replaced the host's name (<cluster_name>, ****): the host is not known
    tid: int | None = None  # the thread NCCL's host:pid:tid prefix names
    rank: int | None = None  # the rank a per-rank logger's '[rank/size]' prefix names


@dataclass(frozen=True)
class NetChoice:
    """The network transport one process used between nodes, and what says so."""

    host: str | None
    pid: int | None
    transport: str  # "IB" (verbs: InfiniBand or RoCE, the plugins' IBext too), "Socket", or the plugin's name
    devices: tuple[str, ...]  # mlx5_0:1/IB, eth0
    line: int
    basis: str  # the words it was read from
    peers: tuple[int, int] | None = None  # the ranks a channel 'a[dev] -> b[dev] via NET/…' joins


@dataclass(frozen=True)
class LogFailure:
    kind: str  # "init" (the communicator did not come up), "nvls" (NVLink SHARP set-up), "runtime", "stalled", "link",
    # or a verbs call NET/IB made that failed: "ib_resource" (QP, CQ, PD), "ib_memory" (reg_mr), "ib_device"
    at: LogLine
    rank: int | None = None
    collective: str | None = None  # the collective that stalled, where the line names it (HCCL's tag[Broadcast_…])


@dataclass(frozen=True)
class PeerRefused:
    """A WARN saying the CUDA runtime refused peer access (error 217, cudaErrorPeerAccessUnsupported) while
    NCCL set up its P2P transport, with the pair of bus ids the process's last 'via P2P' channel joined."""

    at: LogLine
    pair: tuple[str, str] | None


@dataclass
class NcclLog:
    libs: list[str] = field(default_factory=list)  # NCCL, RCCL, HCCL, in order seen
    version: str | None = None
    lines: int = 0
    env: list[LogLine] = field(default_factory=list)  # 'NCCL_IB_ADDR_RANGE set by environment to …' lines
    choices: list[NetChoice] = field(default_factory=list)
    no_ib: list[LogLine] = field(default_factory=list)  # 'NET/IB : No device found', no libibverbs
    failures: list[LogFailure] = field(default_factory=list)
    nvls_unavailable: list[LogLine] = field(default_factory=list)
    ranks: dict[tuple[str | None, int | None], int] = field(default_factory=dict)  # (host, pid) -> rank
    nodes: int | None = None  # nNodes a communicator printed
    completed: list[LogLine] = field(default_factory=list)  # 'Init COMPLETE': a communicator came up
    seen_hosts: list[str] = field(default_factory=list)  # every host a line names, in order (a job's extent)
    redacted: bool = False  # the poster replaced host names (<cluster_name>): processes are told apart by pid
    net_peers: dict[tuple[int, int], str] = field(default_factory=dict)  # ranks a 'via NET/…' channel joins
    test_hosts: list[str] = field(default_factory=list)  # the hosts nccl-tests' rank lines name: the whole job's
    claimed: set[int] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)
    ib_off: str | None = None  # 'NCCL_IB_DISABLE=1' or 'NCCL_NET=Socket' where the job set it (line N)
    buses: dict[tuple[str | None, int], str] = field(default_factory=dict)  # (host, rank) -> bus id, inside a node
    p2p_last: dict[tuple[str | None, int | None], tuple[str, str]] = field(default_factory=dict)  # its last P2P pair
    p2p_channel: dict[tuple[str | None, int | None], LogLine] = field(default_factory=dict)  # the line that named it
    p2p_refused: list[PeerRefused] = field(default_factory=list)  # the CUDA runtime refused peer access
    topology: dict[str | None, NcclTopo] = field(default_factory=dict)  # host -> NCCL's dump of its paths
    retries: list[LogLine] = field(default_factory=list)  # 'Call to connect returned …, retrying' (INFO)
    bootstrap: dict[tuple[str | None, int | None], LogLine] = field(default_factory=dict)  # 'Bootstrap : Using …'
    fallbacks: list[Fallback] = field(default_factory=list)  # INFO lines saying a path was lost (nccl_fallbacks)
    advice: list[LogLine] = field(default_factory=list)  # R14A: RCCL's init advice (iommu=pt …): a config note

    @property
    def kinds(self) -> list[str]:
        return [f"{lib} plog" if lib == "HCCL" else f"{lib} debug log" for lib in self.libs]

    @property
    def one_node(self) -> bool:
        """The job is known to run on one node: a communicator said nNodes 1, or nccl-tests' ranks are on one host."""
        return self.nodes == 1 or len(self.test_hosts) == 1

    @property
    def one_host(self) -> str | None:
        """The one host every prefixed line names, where it is a name: none in a log of several hosts or whose
        poster masked them ('<hostname>', '****', or a word standing for any host: 'host:22337:22453 [6]')."""
        if len(self.seen_hosts) != 1 or self.redacted or _PLACEHOLDER.match(self.seen_hosts[0]):
            return None
        return self.seen_hosts[0]

    @property
    def hosts(self) -> list[str]:
        return list(dict.fromkeys(c.host for c in self.choices if c.host))


def _log_line(ln: Line) -> LogLine | None:
    text = _UNLINKED.sub(r"\1", ln.text) if "](http" in ln.text else ln.text  # GitHub's autolinks undone
    if "CCL" not in text and not ((" INFO " in text or " WARN " in text) and re.search(r":\d{1,9} \[\d{1,4}\] ", text)):
        return _bare(ln)
    m = _BRACKETED.search(text) if "] [" in text else None
    m = m or _LOG.search(text)
    if m is not None:
        src = f"{m.group('src')}:{m.group('srcline')}" if m.group("src") else None
        return LogLine(ln.no, m.group("lib") or "NCCL", m.group("level"), m.group("host"), _int(m.group("pid")),
                       _int(m.group("dev")), src, m.group("msg").strip(), kept(text),
                       m.groupdict().get("redacted") is not None, _int(m.group("tid")),
                       _int(m.groupdict().get("rank")))
    p = _PLOG.match(text)
    if p is not None:
        level = {"WARNING": "WARN", "EVENT": "INFO", "DEBUG": "INFO"}.get(p.group("level"), p.group("level"))
        return LogLine(ln.no, "HCCL", level, None, int(p.group("pid")), None, p.group("src"),
                       p.group("msg").strip(), kept(text))
    return _bare(ln)


def _bare(ln: Line) -> LogLine | None:
    """NCCL's IB completion error quoted without its prefix: a WARN of a host and process not named."""
    bare = _BARE_COMPLETION.search(ln.text) if "Got completion" in ln.text else None
    return None if bare is None else LogLine(ln.no, "NCCL", "WARN", None, None, None, None, bare.group(0),
                                             kept(ln.text))


def kept(text: str, width: int = _TEXT) -> str:
    """The line as evidence, cut only between words and marked (a cut 'mlx5_1' of 'mlx5_10' names another device)."""
    s = text.strip()
    if len(s) <= width:
        return s
    head = s[:width]
    if not s[width].isspace() and any(c.isspace() for c in head):
        head = head.rsplit(None, 1)[0]
    return f"{head.rstrip()} …"


def _int(text: str | None) -> int | None:
    return int(text) if text is not None else None


# a poster's label for what they hoped to see ('Expected:', '### Expected behavior', 'It should print:'): the library's
# lines right under it are their expectation, not the run's (issue 46, batch K)
_WISH = r"(?:expected|what I expected|(?:it|NCCL) should (?:print|show|say|use)|I should see)\b[\w ()/,-]{0,30}"
_EXPECTED = lazy(rf"^\s*(?:#{{1,6}}\s*(?:\*\*)?\s*{_WISH}(?:\*\*)?\s*:?|(?:\*\*)?\s*{_WISH}:\s*(?:\*\*)?)\s*$",
                 re.I)  # a heading ('### Expected behavior'), or a label that ends in its colon ('Expected:')


def _not_hoped(lines: list[Line], claimed: set[int]) -> list[Line]:
    """``lines`` less the library's lines right under a poster's 'Expected' label (blank lines between them
    kept; any other line ends it): those are claimed as read and judged as nothing."""
    out, hoped = [], False
    for ln in lines:
        if _EXPECTED.match(ln.text) is not None:
            hoped = True
        elif hoped and _log_line(ln) is not None:
            claimed.add(ln.no)
            continue
        else:
            hoped = hoped and not ln.text.strip()
        out.append(ln)
    return out


def parse(lines: list[Line]) -> NcclLog:
    """Every library log line in ``lines``; an empty NcclLog where there is none."""
    out = NcclLog()
    by_process: dict[tuple[str | None, int | None], list[tuple[str, NetChoice]]] = {}
    pending: dict[_Thread, tuple[LogLine, int]] = {}  # each thread's last WARN no word marked failed, lines since
    first_frame: dict[tuple[str | None, int | None], LogLine] = {}  # each process's first trace no WARN explains
    ran = False  # a watchdog timed out a collective past the first: the communicator had come up
    quiet: list[LogLine] = []  # WARNs no word marked failed and none of the notes a healthy run prints
    for ln in _not_hoped(lines, out.claimed):  # a poster's 'Expected:' line is their wish, no line of the run
        if "SeqNum=" in ln.text and (w := _WATCHDOG_SEQ.search(ln.text)) is not None:
            ran = ran or int(w.group(1)) > 1
        v = _VERSION.search(ln.text) if "version" in ln.text else None
        if v is not None and ln.text.strip().startswith(v.group(0)[:4]):  # the bare 'NCCL version 2.18.3' line
            out.version = out.version or v.group(2)
            out.claimed.add(ln.no)
        if out.ib_off is None and "NCCL_" in ln.text and (off := IB_OFF.search(ln.text)) is not None:
            out.ib_off = f"{off.group(0)} (line {ln.no})"
        if "Rank" in ln.text and (r := RANK_LINE.match(ln.text.strip())) is not None:
            out.test_hosts += [r.group(3)] if r.group(3) not in out.test_hosts else []
        at = _log_line(ln)
        if at is None:
            if out.lines and (only := _PREFIX_ONLY.match(ln.text)) and only.group("host") not in out.seen_hosts:
                out.seen_hosts.append(only.group("host"))
            continue
        out.lines += 1
        out.claimed.add(ln.no)
        if at.lib not in out.libs:
            out.libs.append(at.lib)
        if at.host and at.host not in out.seen_hosts:
            out.seen_hosts.append(at.host)
        if at.rank is not None:
            out.ranks.setdefault((at.host, at.pid), at.rank)
        out.redacted = out.redacted or at.redacted
        if v is not None:
            out.version = out.version or v.group(2)
        if _ENV.match(at.message):
            out.env.append(at)
        before = len(out.failures)
        _read(at, out, by_process)
        quiet += [at] if len(out.failures) == before and _quiet(at) else []
        _traced(at, out, pending, before)
        _unwarned(at, out, first_frame)
    _unnamed(out, quiet, lines)
    wrapped(out, lines, _log_line, _TEXT)
    last_errors(out, lines, lambda at: _read(at, out, by_process), _TEXT)  # PyTorch's quote of NCCL's last WARN
    bootstrap = _socket_is_bootstrap(out.version, by_process)
    shared = _before_25(out.version)  # 2.4 opens NET/Socket once, for the bootstrap and as the fallback alike
    for key, said in by_process.items():
        no_ib = min((a.line for a in out.no_ib if (a.host, a.pid) == key), default=None)  # sockets after it: the fallback
        choice = _choose([s for s in said if not (bootstrap and s[0] == "socket" and (
            no_ib is None or not shared and s[1].line < no_ib))])
        if choice is not None:
            out.choices.append(choice)
    out.choices += _no_ib_is_socket(out, by_process) if shared else []
    connected = nccl_retried.connected(lines, _log_line)
    out.failures = [LogFailure("runtime" if f.kind == "init" and ran else f.kind, f.at,
                               out.ranks.get((f.at.host, f.at.pid))) for f in out.failures
                    if not (f.kind == "init" and _came_up(f.at, out.completed) or nccl_retried.retried(f.at, connected))]
    out.failures = _placed(out)
    return out


def _quiet(at: LogLine) -> bool:
    """An NCCL/RCCL WARN no failure word marked that is none of the lines read as what they are (no IB, NVLS absent,
    peer access refused) nor a note NCCL prints on healthy runs (nccl_warns.BENIGN)."""
    msg = at.message
    return at.level in ("WARN", "ERROR") and at.lib != "HCCL" and not (
        _GOES_ON.search(msg) or NO_VERBS.search(msg) or _NET_NONE.match(msg) or _NVLS_NA.search(msg)
        or _PEER_REFUSED.search(msg) or benign(msg))


def _unnamed(out: NcclLog, quiet: list[LogLine], lines: list[Line]) -> None:
    """A WARN left quiet (its error-return trace did not follow to make it a failure) is still a lead, of a process
    whose log says nothing failed: beside another failure of the same process it is that failure's context (like
    kernel_unknown's lines beside a named message). NET/Socket's 'message truncated' is one such: no failure word.
    So is NET/IB's benign 'client reregistration' that one process got again and again (nccl_resweep, of ``lines``)."""
    failed = {(f.at.host, f.at.pid) for f in out.failures}
    out.failures += [LogFailure("unnamed", at) for at in quiet if (at.host, at.pid) not in failed]
    out.failures += nccl_resweep.repeated(lines, _log_line)  # the subnet manager re-sweeping one process's port


def _placed(out: NcclLog) -> list[LogFailure]:
    """A failure line quoted without NCCL's prefix (a title, a sentence) in a log whose every prefixed line names
    one host is that host's: the poster's log is one node's (where it names two, or redacted them, it stays unplaced)."""
    host = out.one_host
    if host is None or "HCCL" in out.libs:  # R14B: a plog's failures placed from its own fields (hccl_places)
        return hccl_places.placed(out.failures)
    return [replace(f, at=replace(f.at, host=host)) if f.at.host is None and f.at.pid is None else f
            for f in out.failures]


def _came_up(warn: LogLine, completed: list[LogLine]) -> bool:
    """The WARN's own thread (or its device, where no thread is printed) reached Init COMPLETE after it: the
    communicator came up, so the WARN declined an option ('Cannot enable MSCCL++; environment is not MSCCL
    compatible') and is no init failure."""
    return any(c.line > warn.line and (c.host, c.pid) == (warn.host, warn.pid) and (
        c.tid == warn.tid if c.tid is not None and warn.tid is not None else c.dev == warn.dev is not None)
        for c in completed)


_ENV = lazy(r"^(?:NCCL|RCCL)_\w{1,60} set by environment to ")  # a setting the process runs under
_TRACE = lazy(r"^(?P<file>[\w./-]{1,120}\.(?:cc|cu|cpp|c|h)):\d{1,6} -> [1-9]\d{0,3}\b")  # 'init.cc:1245 -> 5'


_Thread = tuple[str | None, int | None, int | None]  # host, pid, tid
TRACE_WITHIN = 3  # further lines of the WARN's own thread its error-return trace may come after it


def _traced(at: LogLine, out: NcclLog, pending: dict[_Thread, tuple[LogLine, int]], before: int) -> None:
    """A WARN no failure word marks ('Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 3b000') is
    a failure when its error-return trace ('NCCL INFO init.cc:1245 -> 5') follows it closely in the same
    thread: NCCL prints that trace only for a call that returned an error, right after the WARN it caused. A
    trace further on (a socket closed at teardown) is none of the WARN's, and one after the process's Init
    COMPLETE is no init failure."""
    key = (at.host, at.pid, at.tid)
    if len(out.failures) > before:  # this line failed in its own words: the trace after it is its own
        pending.pop(key, None)
    elif at.level in ("WARN", "ERROR") and at.lib != "HCCL":
        if not (_GOES_ON.search(at.message) or NO_VERBS.search(at.message) or _NET_NONE.match(at.message)
                or _PEER_REFUSED.search(at.message)):  # read as what it is already (peer access, no IB)
            pending[key] = (at, 0)
    elif key in pending:
        warn, since = pending.pop(key)
        if at.level == "INFO" and (t := _TRACE.match(at.message)) is not None:
            out.failures.append(LogFailure("init" if _at_init(warn, t.group("file"), out) else "runtime", warn))
        elif since + 1 < TRACE_WITHIN:
            pending[key] = (warn, since + 1)


def _unwarned(at: LogLine, out: NcclLog, first: dict[tuple[str | None, int | None], LogLine]) -> None:
    """An error-return trace with no WARN before it (some calls fail without one: an NCCL_IB_ADDR_RANGE no GID
    falls in) is an init failure once it reaches init.cc before its process's Init COMPLETE: its first frame
    (transport/net_ib.cc:282 -> 2) names where it failed. A WARN read as a runtime failure (ibv_modify_qp
    failed) whose error reaches init.cc so is init's; a process past Init is left."""
    if at.level != "INFO" or at.lib == "HCCL" or (t := _TRACE.match(at.message)) is None:
        return
    key, init = (at.host, at.pid), t.group("file").rsplit("/", 1)[-1] == "init.cc"
    if any((c.host, c.pid) == key for c in out.completed):
        first.pop(key, None)
        return
    if any((f.at.host, f.at.pid) == key for f in out.failures):  # a WARN said it: init's when its error reaches init
        first.pop(key, None)
        out.failures = [LogFailure("init", f.at) if init and f.kind == "runtime" and (f.at.host, f.at.pid) == key
                        else f for f in out.failures]
        return
    first.setdefault(key, at)
    if init:
        out.failures.append(LogFailure("init", first.pop(key)))


def _at_init(warn: LogLine, trace_file: str, out: NcclLog) -> bool:
    """An init failure: the WARN or its trace in an init file or naming init's steps, before its process's Init
    COMPLETE."""
    if any((c.host, c.pid) == (warn.host, warn.pid) and c.line < warn.line for c in out.completed):
        return False
    files = {(warn.source or "").rsplit(":", 1)[0].rsplit("/", 1)[-1], trace_file.rsplit("/", 1)[-1]}
    return bool(files & _INIT_FILES) or _INIT_WORDS.search(warn.message) is not None


def _read(at: LogLine, out: NcclLog, by_process: dict[tuple[str | None, int | None],
                                                      list[tuple[str, NetChoice]]]) -> None:
    """What one line says: a transport, a failure, NVLS' absence, a communicator's rank."""
    msg, key = at.message, (at.host, at.pid)
    _channel_buses(at, out)
    out.advice += [at] if at.level == "WARN" and advice(msg) else []  # R14A: RCCL's init advice, a config note
    if at.level == "INFO" and msg[:1] in "=+" and add(at.host, at.line, msg, out.topology):
        for rank, bus in out.topology[at.host].gpus.items():  # its GPU lines: each rank's bus id
            out.buses.setdefault((at.host, rank), bus_of(bus))
        return
    if at.level in ("WARN", "ERROR") and _PEER_REFUSED.search(msg) and "shm" not in (at.source or ""):
        out.p2p_refused.append(PeerRefused(at, out.p2p_last.get(key)))  # shm.cc's: its cuMem host path, its own
        return
    out.fallbacks += [lost] if at.level == "INFO" and (lost := fallback(at)) is not None else []
    kind = _failure_kind(at)
    if kind is not None:
        out.failures.append(LogFailure(kind, at))
        return
    if NO_VERBS.search(msg) or _NET_NONE.match(msg):
        out.no_ib.append(at)
        return
    if _NVLS_NA.search(msg):
        out.nvls_unavailable.append(at)
        return
    if "Init COMPLETE" in msg:
        out.completed.append(at)
    if at.level == "INFO" and "retrying" in msg and RETRY.search(msg):
        out.retries.append(at)
    if at.level == "INFO" and msg.startswith("Bootstrap") and "Using" in msg:  # the interface its sockets use
        out.bootstrap.setdefault(key, at)
    if (c := _COMM.search(msg)) is not None:
        out.ranks.setdefault(key, int(c.group("rank")))
        if (b := _INIT_BUS.search(msg)) is not None:  # ncclCommInitRank's 'busId 48000': the rank's module
            out.buses.setdefault((at.host, int(c.group("rank"))), bus_of(b.group(1)))
        if c.group("nodes"):
            out.nodes = max(out.nodes or 0, int(c.group("nodes")))
        return
    said = _transport(at)
    if said is not None:
        by_process.setdefault(key, []).append(said)
        if said[1].peers is not None:
            out.net_peers.setdefault(said[1].peers, said[1].transport)


# 'Channel 00 : 0[2d000] -> 1[2e000] via P2P/IPC': NCCL's busId as hex (domain, bus, device, function) inside a
# node (P2P, SHM); a NET channel joins a rank of another node, whose bus id is that node's. NCCL prints the id
# without its leading zeros: a module on bus 01 is '1000', one on bus 00 of a VM '50' (issue 46, batch R)
_LOCAL_CHANNEL = lazy(r"\b(\d{1,6})\[([0-9a-fA-F]{2,12})\] -> (\d{1,6})\[([0-9a-fA-F]{2,12})\] via (P2P|SHM)\b")
_INIT_BUS = lazy(r"\bbusId (?:0x)?([0-9a-fA-F]{2,12})\b")
_PEER_REFUSED = lazy(r"peer access is not supported|cudaErrorPeerAccessUnsupported|"
                     r"CUDA_ERROR_PEER_ACCESS_UNSUPPORTED", re.I)


def bus_of(nccl_bus: str) -> str:
    """NCCL's busId hex ('2d000', '10001b000') as a bus id: 0000:2D:00.0, 0001:1B:00.0."""
    x = nccl_bus.lower().zfill(9)
    return f"{x[:-5].upper()}:{x[-5:-3].upper()}:{x[-3:-1].upper()}.{x[-1]}"


def _channel_buses(at: LogLine, out: NcclLog) -> None:
    """The bus id of each rank a channel inside the node joins, and the process's last P2P pair."""
    if "via" not in at.message or (c := _LOCAL_CHANNEL.search(at.message)) is None:
        return
    a, b = bus_of(c.group(2)), bus_of(c.group(4))
    out.buses.setdefault((at.host, int(c.group(1))), a)
    out.buses.setdefault((at.host, int(c.group(3))), b)
    if c.group(5) == "P2P":
        out.p2p_last[(at.host, at.pid)] = (a, b)
        out.p2p_channel[(at.host, at.pid)] = at


def listing(log: NcclLog) -> list[tuple[str | None, str]]:
    """(host, bus id) of each module the log's channels inside a node name, by host and rank."""
    return [(host, bus) for (host, _), bus in sorted(log.buses.items(), key=lambda kv: (kv[0][0] or "", kv[0][1]))]


_RANKED = ("via", "network", "net", "socket")  # what outranks what when one process says several things


def _transport(at: LogLine) -> tuple[str, NetChoice] | None:
    msg = at.message
    if (v := _VIA.search(msg)) is not None:
        p = _PEERS.search(msg)
        peers = (min(int(p.group("a")), int(p.group("b"))), max(int(p.group("a")), int(p.group("b")))) if p else None
        return "via", NetChoice(at.host, at.pid, _net(v.group("net")), (), at.line, f"channel {v.group(0)}", peers)
    if (u := _USING_NETWORK.match(msg)) is not None:
        return "network", NetChoice(at.host, at.pid, _net(u.group("net")), (), at.line, u.group(0))
    if (n := _NET_USING.match(msg)) is not None and "for sideband" not in msg:  # 2.0-2.2: NET/IB's OOB interface
        net, devs = _net(n.group("net")), _devices(n.group("devs"))
        if not _DEVICE.search(devs) and not devs.replace("[RO]", "").strip():
            return None  # 2.2x's 'NET/IB : Using [RO]; OOB eth0:…' after 'No device found': no device, no choice
        devices = tuple(_DEVICE.findall(devs)) or (devs[:80],)
        return ("socket" if net == "Socket" else "net"), NetChoice(at.host, at.pid, net, devices, at.line, msg[:160])
    return None


def _devices(said: str) -> str:
    """The devices a 'NET/IB : Using' line names, without its '; OOB eth0:…' tail or the blanks around them."""
    head, semi, tail = said.rstrip().rpartition(";")
    return (head if semi and _OOB_TAIL.fullmatch(tail) else said).strip()


def _socket_is_bootstrap(version: str | None,
                         by_process: dict[tuple[str | None, int | None], list[tuple[str, NetChoice]]]) -> bool:
    """Up to NCCL 2.4 every process's bootstrap printed 'NET/Socket : Using' before NET/IB's own line:
    there the bare line names the out-of-band interface, not the transport (a version below 2.5, or a
    process that printed both, says so); a channel 'via NET/Socket' or 'Using network Socket' still does, and so
    does the line a process prints after its 'NET/IB : No device found.' (2.4 names its bootstrap 'Bootstrap :')."""
    return _before_25(version) or any({"socket", "net"} <= {k for k, _ in said} for said in by_process.values())


def _no_ib_is_socket(out: NcclLog, by_process: dict[tuple[str | None, int | None], list[tuple[str, NetChoice]]]
                     ) -> list[NetChoice]:
    """NCCL < 2.5: a process whose NET/IB found no device and that named no network at all (its one NET/Socket
    line not in the excerpt) runs on sockets: 2.4 has no other transport left (a plugin would have said so)."""
    said: dict[tuple[str | None, int | None], NetChoice] = {}
    for at in out.no_ib:
        if (n := _NET_NONE.match(at.message)) is not None and _net(n.group("net")) == "IB" \
                and (at.host, at.pid) not in by_process:
            said.setdefault((at.host, at.pid), NetChoice(at.host, at.pid, "Socket", (), at.line,
                                                         f"{at.message[:120]} (NCCL < 2.5: NET/Socket is left)"))
    return list(said.values())


def _before_25(version: str | None) -> bool:
    """NCCL below 2.5: its one 'NET/Socket : Using' line serves the bootstrap and, where NET/IB then finds no
    device, the transport too (it prints no second one)."""
    v = re.match(r"(\d+)\.(\d+)", version) if version is not None else None
    return v is not None and (int(v.group(1)), int(v.group(2))) < (2, 5)


def _net(name: str) -> str:
    """NET/IB, NET/IBext_v8 (the SHARP/plugin build of verbs) -> IB; Socket stays Socket."""
    name = name.strip()
    return "IB" if name.upper().startswith("IB") else name


def _choose(said: list[tuple[str, NetChoice]]) -> NetChoice | None:
    """The strongest word one process gave; the devices of its NET/… Using line kept beside it."""
    if not said:  # a process that named no transport
        return None
    best = min(said, key=lambda s: _RANKED.index(s[0]))[1]
    listed = tuple(dict.fromkeys(d for _, c in said if c.transport == best.transport for d in c.devices))  # each line's
    return NetChoice(best.host, best.pid, best.transport, listed, best.line, best.basis)


def _failure_kind(at: LogLine) -> str | None:
    """init, nvls or runtime for a WARN/ERROR that reports a failure; None for other lines (a WARN
    that libibverbs is absent is NCCL going on without InfiniBand, judged as the transport)."""
    if at.level not in ("WARN", "ERROR", "ABORT"):
        return None
    msg = at.message
    if NO_VERBS.search(msg) or _NET_NONE.match(msg):
        return None
    file = (at.source or "").rsplit(":", 1)[0].rsplit("/", 1)[-1]
    if "nvls" in file or "NVLS" in msg or "Multicast support requested" in msg:  # the device API's NVLS team
        return "nvls"
    if at.lib == "HCCL":  # R9C: a link to a peer device that could not be set up says so (hccl_links)
        return "init" if "[Init]" in msg or "Init" in msg.split("errNo")[0] else "link" if link_failure(
            at.source, msg) else "runtime"
    if "v_" in msg and (v := _VERBS.search(msg)) is not None:  # ibv_, mlx5dv_
        return VERBS_KIND.get(v.group("call").lower(), "ib_resource")
    if _OOM.search(msg):
        return "cuda_oom"
    if not (_FAILS.search(msg) or cut_failure(msg)) or _GOES_ON.search(msg) or benign(msg):  # 2.19+: async error event
        return None
    return "init" if file in _INIT_FILES or _INIT_WORDS.search(msg) else "runtime"
