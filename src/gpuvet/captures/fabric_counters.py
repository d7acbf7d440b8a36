"""The fabric's counters and error lines beside fabric_tools' (issue 46, R13B): ibdiagnet2's PM counter blocks
(ibdiagnet2.pm: 'Port=2 Lid=0x0599 GUID=0x… Port Name=…' then 'symbol_error_counter_extended=0x…'), UFM's unhealthy
ports list ('0xGUID, 25, "spine-sw-03", 0xPEER, 25, "leaf-sw-38", {FLAPPING}, <time>'), HPE Slingshot's cxi driver
error lines (cxi_core/cxi_ss1's 'cxi3[hsn3]: C_EC_UNCOR_NS: C1_PCT error: tct_cam_ucor (42)', the older 'EE error:
eq_rsrvn_uflw (38)'), NCCL's NET/IB completion error quoted in a poster's sentence, a segfault inside NCCL's or RCCL's
library and a journal's own header. Formats from the tools' documentation and source (NVIDIA ibdiagnet's user manual;
UFM's REST API 'unhealthy_ports'; HewlettPackard/shs-docs troubleshoot/cassini/*.md; shs-cxi-driver's c_error_class
and error_event_names; rdma-core's enum ibv_wc_status).

What an engineer reads in them: a port whose link error counters are not zero (symbol errors, link error recoveries,
the link downed, receive errors) is that link's (cable, transceiver, switch port: NVIDIA's counters guide); UFM's
unhealthy condition (FLAPPING, HIGH_BER, …) on a link is the link's; a cxi error of class C_EC_CRIT or an
uncorrectable memory error (…_ucor) is the NIC's hardware (HPE's cxi_healthcheck: 'a node reboot may be required for
this uncorrectable error'), other uncorrectable or bad-connection classes the link's, and software, info, transient
and corrected classes (and the old driver's EE events, which name no class) are read and said, not judged. A program's
segfault in libnccl is the program's crash (no hardware finding); a journal's header is read."""

from __future__ import annotations

import re

from gpuvet.captures.app_errors import AppErrorsParse
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.ops_logs import add
from gpuvet.captures.records import AppError
from gpuvet.captures.text import Line

# the literals a line read here holds one of (runtime_marks.OPS_MARKS has each)
MARKS = (
    "Lid=0x",
    '", {',
    "C_EC_",
    "EE error:",
    "Got completion with error",
    "segfault at",
    "-- Logs begin at",
    "-- Journal begins at",
    "-- No entries --",
)
WORDS = (*MARKS, "Port=", "_counter", "_errors", "_cntr", "C_EE_ERR_INFO", "---")
# ibdiagnet2.pm's port header and its counters (decimal or 0x hex); the counters whose non-zero value is a link fault
_PM_HEAD = re.compile(r"^\s*Port=(?P<port>\d+)\s+Lid=(?P<lid>0x[0-9a-fA-F]+)\s+GUID=(?P<guid>0x[0-9a-fA-F]+)\b")
# a value of at most 40 characters (docs/limits.md, a number): decimal (leading zeros are decimal) or 0x hex
_PM_ROW = re.compile(r"^\s*(?P<name>[a-z][a-z0-9_]*?)(?:_extended)?=(?P<v>0x[0-9a-fA-F]{1,38}|\d{1,40})\s*$")
LINK_COUNTERS = (
    "symbol_error_counter",
    "link_error_recovery_counter",
    "link_downed_counter",
    "port_rcv_errors",
    "port_rcv_remote_physical_errors",
    "local_link_integrity_errors",
    "excessive_buffer_overrun_errors",
)
# UFM's unhealthy ports: node GUID, port, "desc", peer GUID, peer port, "peer desc", {conditions}, time
_UFM = re.compile(
    r"^\s*(?P<g>0x[0-9a-fA-F]+),\s*(?P<p>\d+),\s*\"(?P<d>[^\"]*)\",\s*(?P<pg>0x[0-9a-fA-F]+),\s*"
    r"(?P<pp>\d+),\s*\"(?P<pd>[^\"]*)\",\s*\{(?P<c>[^}]*)\}"
)
# the cxi driver's error line (cxi_err.c: '<dev>[<netdev>]: <class>: <block> error: <name> (<bit>)') and its detail
_CXI = re.compile(
    r"\b(?P<drv>cxi_core|cxi_ss1)\s+(?P<bdf>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.\d):\s+"
    r"(?:(?P<dev>cxi\d+)\[(?P<net>\w+)\]:\s+)?(?:(?P<cls>C_EC_[A-Z_]+):\s+)?(?P<rest>.*?)\s*$"
)
_CXI_ERR = re.compile(r"^(?P<block>\w+ )?error:\s+(?P<name>\w+)\s+\((?P<bit>\d+)\)")
_CXI_DETAIL = re.compile(r"^(?:C_\w+_ERR_INFO\w*\s+[0-9a-fA-F]+|\w+_(?:err_)?cntr:\s+\d+|\w+:\s+\d+)\.?$")
_CRITICAL = ("C_EC_CRIT",)
_LINKISH = ("C_EC_BADCON_NS", "C_EC_BADCON_S", "C_EC_DEGRD_NS", "C_EC_UNCOR_NS", "C_EC_UNCOR_S")
# NCCL's NET/IB completion error quoted in a sentence (NCCL 2.0-2.3: 'NET/IB : Got completion with error 12, opcode 1,
# len0, vendor err 129'); a log line of its own is nccl_log's
_QUOTED_IB = re.compile(
    r"['\"`(]\s*[^'\"`]{0,80}?NET/IB\w{0,8}\s*:\s*Got completion with error (?P<st>\d{1,2}),"
    r"\s*opcode (?P<op>\d+),\s*len\s*(?P<len>\d+),\s*vendor err (?P<v>\d+)"
)
# a program's segfault inside NCCL's or RCCL's library (the kernel's 'segfault at … in libnccl.so.2[…]'), searched
# in a line's first 4,096 characters (docs/limits.md, captures; the kernel prints it in under 200) from a program name
# that starts after a character not of a name (a lookbehind, not \b: each name is tried once, not from each of its dots)
_LINE_BOUND = 4096
_LIB_SEGV = re.compile(
    r"(?<![\w.-])(?P<who>[\w.-]{1,64})\[(?P<pid>\d+)\]:\s+segfault at \w+ ip \w+ sp \w+ error \d+ in "
    r"(?P<lib>lib[rn]ccl[\w.]*)\["
)
_JOURNAL_HEAD = re.compile(r"^\s*-- (?:Logs begin at .+|Journal begins at .+|No entries) --\s*$")


def read(lines: list[Line], out: AppErrorsParse, marks: Marks | None = None) -> None:
    """The lines of this module's kinds, added to ``out`` (ops_layer.parse's): findings as records, the rest claimed."""
    if not holding(lines, MARKS, marks):
        return
    held = holding(lines, WORDS, marks)
    _pm_counters(lines, held, out)
    _ufm(lines, held, out)
    _cxi(lines, held, out)
    for i in held:
        ln = lines[i]
        if "Got completion" in ln.text and (q := _QUOTED_IB.search(ln.text)) is not None:
            _quoted_completion(ln, q, out)
        elif "segfault at" in ln.text and (s := _LIB_SEGV.search(ln.text[:_LINE_BOUND])) is not None:
            out.claimed.add(ln.no)
            _note(
                out,
                f"{s.group('who')}[{s.group('pid')}] crashed (segfault) in {s.group('lib')}: the "
                "program's crash inside the collective library, no GPU or driver fault in the line",
            )
        elif "-- " in ln.text and _JOURNAL_HEAD.match(ln.text):
            out.claimed.add(ln.no)
            _note(out, f"journal: {ln.text.strip()[:120]} (read; no GPU or driver line judged here)")


def _value(v: str) -> int:
    """A counter's value as printed: 0x hex, else decimal (leading zeros kept decimal: '007' is 7)."""
    return int(v[2:], 16) if v[:2] in ("0x", "0X") else int(v, 10)


def _note(out: AppErrorsParse, note: str) -> None:
    """``note`` said once."""
    if note not in out.notes:
        out.notes.append(note)


def _pm_counters(lines: list[Line], held: list[int], out: AppErrorsParse) -> None:
    """ibdiagnet2.pm's blocks: a port with a non-zero link error counter is that link's errors (one finding a port,
    its counters said together)."""
    if not any("Port=" in lines[i].text for i in held):
        return
    port, ports, bad = None, 0, dict[str, tuple[Line, list[str]]]()
    for i in held:
        ln = lines[i]
        if (h := _PM_HEAD.match(ln.text)) is not None:
            port, ports = f"GUID {h.group('guid')} port {h.group('port')} (Lid {h.group('lid')})", ports + 1
            out.claimed.add(ln.no)
        elif port is not None and (r := _PM_ROW.match(ln.text)) is not None:
            out.claimed.add(ln.no)
            if r.group("name") in LINK_COUNTERS and (value := _value(r.group("v"))):
                bad.setdefault(port, (ln, []))[1].append(f"{r.group('name')} {value}")
        elif set(ln.text.strip()) == {"-"}:
            out.claimed.add(ln.no)
    for where, (ln, said) in bad.items():
        add(
            out,
            "fabric_port_counter",
            ln,
            f"ibdiagnet PM: {where}: {', '.join(said)} (link error counters above "
            "zero: the cable, transceiver or switch port of that link)",
            tool="ibdiagnet (PM counters)",
            host=where,
        )
    if ports:
        out.notes.append(f"ibdiagnet PM counters: {ports} port(s) read (link error counters judged above zero)")


def _ufm(lines: list[Line], held: list[int], out: AppErrorsParse) -> None:
    """UFM's unhealthy ports: each link once (UFM lists both of its ends), its conditions said."""
    seen: set[frozenset[str]] = set()
    for i in held:
        ln = lines[i]
        if '", {' not in ln.text or (u := _UFM.match(ln.text)) is None:
            continue
        out.claimed.add(ln.no)
        a, b = (
            f"{u.group('d') or u.group('g')} port {u.group('p')}",
            f"{u.group('pd') or u.group('pg')} port {u.group('pp')}",
        )
        if (link := frozenset((a, b))) in seen:
            continue
        seen.add(link)
        conditions = ", ".join(c.strip() for c in u.group("c").split(",") if c.strip()) or "unhealthy"
        add(
            out,
            "fabric_port_counter",
            ln,
            f"UFM unhealthy port: {a} <-> {b}: {conditions} (the link's cable, transceiver or switch ports)",
            tool="UFM (unhealthy ports)",
            host=f"{a} <-> {b}",
        )
    if seen:
        out.notes.append(f"UFM unhealthy ports: {len(seen)} link(s) read")


def _cxi(lines: list[Line], held: list[int], out: AppErrorsParse) -> None:
    """The cxi driver's error lines by their class (shs-cxi-driver's c_error_class): critical and uncorrectable memory
    errors the NIC's, bad-connection/degraded/other uncorrectable the link's; the rest and the details read."""
    said: list[str] = []
    for i in held:
        ln = lines[i]
        if "cxi" not in ln.text or (m := _CXI.search(ln.text)) is None:
            continue
        rest, cls = m.group("rest"), m.group("cls")
        err = _CXI_ERR.match(rest[3:] if rest.startswith("EE ") else rest)
        if err is None:
            if cls is not None or _CXI_DETAIL.match(rest.strip()):
                out.claimed.add(ln.no)
            continue
        out.claimed.add(ln.no)
        nic = f"{m.group('dev')}[{m.group('net')}]" if m.group("dev") else m.group("drv")
        what = f"{nic} {cls or 'EE'}: {(err.group('block') or '').strip()} error {err.group('name')} ({err.group('bit')})"
        memory = "ucor" in err.group("name") and (cls or "").startswith("C_EC_UNCOR")
        if cls in _CRITICAL or memory:
            _module(
                out,
                "cxi_nic_uncorrectable",
                ln,
                m.group("bdf"),
                f"{what}: an uncorrectable error in the NIC "
                "(HPE: a node reboot may be required; a NIC that raises it again is replaced)",
            )
        elif cls in _LINKISH:
            _module(
                out,
                "cxi_link_errors",
                ln,
                m.group("bdf"),
                f"{what}: the NIC's link (HPE: poor HSN link quality: the cable, the switch port)",
            )
        else:
            said.append(f"{m.group('bdf')} {what}")
    if said:
        out.notes.append(
            f"cxi driver: {'; '.join(dict.fromkeys(said))[:300]} (software, informational, transient "
            "or corrected classes, or an event with no class: read, not judged)"
        )


def _module(out: AppErrorsParse, kind: str, ln: Line, bdf: str, text: str) -> None:
    """A record on the NIC's bus id, counted once a bus id and kind."""
    out.claimed.add(ln.no)
    for i, e in enumerate(out.errors):
        if e.kind == kind and e.module == bdf.lower():
            out.errors[i] = AppError(e.kind, e.line, e.text, e.module, e.tool, e.times + 1)
            return
    out.errors.append(AppError(kind, ln.no, text[:300], bdf.lower(), "cxi driver (Slingshot NIC)"))


def _quoted_completion(ln: Line, q: re.Match[str], out: AppErrorsParse) -> None:
    """NCCL's NET/IB completion error as a poster quotes it: its ibv_wc_status by name and number, with the verdict
    NCCL's own WARN line gets (collective_runtime_error: its action names error 12 the fabric between the nodes)."""
    from gpuvet.captures.rdma_verbs import VERBS_WORDS, status_words

    st = int(q.group("st"))
    name = status_words(st) if 1 <= st <= len(VERBS_WORDS) else "a status ibv_wc_status does not list"
    add(
        out,
        "nccl_error",
        ln,
        f"NCCL NET/IB: completion with error {st} ({name}), opcode {q.group('op')}, vendor err {q.group('v')} (quoted)",
        tool="NCCL (NET/IB, quoted)",
    )
