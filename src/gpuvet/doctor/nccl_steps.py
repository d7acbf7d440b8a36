"""Doctor's reading of the collective libraries' own logs (NCCL_DEBUG=INFO/WARN, RCCL's, HCCL's plog):
the transport each node's processes chose between nodes, and what stopped a communicator. The log is
the runtime's own account of the job: a node on sockets while its peers use InfiniBand is what the
job did, whatever the NICs' state says; a WARN naming socket.cc or nvls.cc is why it stopped."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from gpuvet.checks.model import Json
from gpuvet.doctor import nccl_followers, nccl_ib_need, rdma_verdicts
from gpuvet.doctor.evidence import Evidence
from gpuvet.doctor.model import Cited, Finding, finding
from gpuvet.doctor.outcome import HIGH, MEDIUM, Outcome, clear, confirmed, unknown

if TYPE_CHECKING:  # the log parser loads when a log is read (issue 43)
    from gpuvet.captures.nccl_fallbacks import Fallback
    from gpuvet.captures.nccl_log import LogFailure, LogLine, NcclLog, NetChoice

SOCKET = "Socket"
NO_LOG = ("no NCCL/RCCL debug log or HCCL plog (run the job with NCCL_DEBUG=INFO, or give the plog's "
          "[ERROR] lines)")
_CAUSE = {"init": "collective_init_failed", "nvls": "nvls_setup_failed", "runtime": "collective_runtime_error",
          "stalled": "collective_stalled", "ib_resource": "nccl_ib_resource_failed",
          "ib_memory": "nccl_ib_memory_registration_failed", "ib_device": "nccl_ib_device_failed",
          "cuda_oom": "nccl_cuda_out_of_memory", "unnamed": "collective_runtime_error",
          "link": "collective_link_failed",  # R9C: HCCL's link to a peer device not set up (captures/hccl_links)
          "held": "api_reports_driver_state"}  # R10B: Gaudi's device already acquired (captures/synapse_errors)
_RUNTIME = ("runtime", "unnamed")  # a WARN while the job ran; one no failure word marked (a lead, nccl_warns.UNNAMED)
_IB = ("ib_resource", "ib_memory", "ib_device")  # a verbs call of NET/IB failed: the RDMA setup, any step
_LINES = 16  # line numbers kept per finding
_TEXT = 240  # characters of a program's error line said beside a failure
_CANN_CODE = re.compile(r"^E[IJ]\d{4}$")  # HCCL's (EI) and HCCP's (EJ) error codes
Logs = Sequence[tuple[str, "NcclLog"]]


def nccl_log(ev: Evidence) -> Outcome:
    """interconnect-slow: the transport between nodes, and every failure the log reports."""
    logs = ev.captures.nccl_logs
    if not logs:
        return unknown(NO_LOG)
    found = _failure_findings(logs, ("init", "nvls", "runtime", "stalled", "cuda_oom", "unnamed", "link", "held",
                                     *_IB))
    found += _peer_refused(logs) + _npu_runtime(logs) + _fallbacks(logs, ev)
    more, cited, said = _transport_verdict(logs)
    found += more or nccl_ib_need.unavailable(logs)
    info, info_cited = _nvls_unavailable(logs)
    info += _paths(logs) + _settings_off(logs) + _p2p_by_design(logs, ev) + _advice(logs)
    if found:
        nets = "".join(f"; network transport: {c.value}" for c in cited if c.field == "network transport")
        return confirmed(f"{len(found)} finding(s) in the library's own log: {_first_words(found)}{nets}{info}",
                         *found)
    cited += info_cited
    if not cited or said.startswith("can't tell"):
        return unknown(said + info)
    return clear(said + info, *cited)


def nccl_log_init(ev: Evidence) -> Outcome:
    """compute-errors: a communicator that did not come up (bootstrap, socket, init, NVLS set-up)."""
    logs = ev.captures.nccl_logs
    if not logs:
        return unknown(NO_LOG)
    found = _beside(ev, _failure_findings(logs, ("init", "nvls", *_IB)))
    if found:
        return confirmed(f"the communicator did not come up: {_first_words(found)}", *found)
    done = [(label, at) for label, log in logs for at in log.completed]
    if not done:
        return unknown("can't tell: no set-up failure in the lines given, and none says a communicator came up "
                       "('Init COMPLETE')")
    return clear(f"{len(done)} communicator(s) came up (Init COMPLETE), no set-up failure",
                 *(Cited(label, f"{at.lib} Init COMPLETE", f"line {at.line}", _where(at)) for label, at in done[:64]))


def _beside(ev: Evidence, found: list[Finding]) -> list[Finding]:
    """A program's own CUDA error in the file that holds the library's failure (HPL's 'CUDART Error: … = 700
    (an illegal memory access was encountered) on gpu46'), said beside it: the playbook stops at this step,
    and the program's line would go unseen."""
    out = []
    for f in found:
        said = [f"line {e.line}: {e.text[:_TEXT]}" for label, e in ev.captures.app_errors
                if label == f.evidence.get("file")]
        keys = list(f.evidence)  # said right after the library's own line (text shows the first 8 keys)
        at = keys.index("log") + 1 if "log" in keys else len(keys)
        evidence = {**{k: f.evidence[k] for k in keys[:at]}, "also_in_the_file": said[:4],
                    **{k: f.evidence[k] for k in keys[at:]}}
        out.append(replace(f, evidence=evidence) if said else f)
    return out


def _first_words(found: list[Finding]) -> str:
    return f"{found[0].title.split(':')[0]} ({found[0].module})"


def _where(at: LogLine) -> str:
    if at.host and at.dev is not None:
        return f"{at.host} GPU {at.dev}"
    if at.host:
        return at.host
    if at.dev is not None:
        return f"GPU {at.dev} (host not in the log)"
    return "host and GPU not in the log"


def _failure_findings(logs: Logs, kinds: tuple[str, ...]) -> list[Finding]:
    """One finding per kind of failure and place (host and GPU), citing its first line and counting the rest."""
    groups: dict[tuple[str, str], list[tuple[str, LogFailure]]] = {}
    for label, log in logs:
        for f in _links_in_setup(log.failures):
            if f.kind in kinds:  # a verbs failure is the node's RDMA setup: its GPUs' copies of the line are one
                place = f.at.host if f.kind in _IB and f.at.host else _where(f.at)
                groups.setdefault((f.kind, place), []).append((label, f))
    groups, followers = nccl_followers.fold(groups)  # R14A: the first WARN is the cause; bare traces follow it
    out: list[Finding] = []
    for key, items in groups.items():
        (kind, where), (label, first) = key, items[0]
        devs = sorted({f.at.dev for _, f in items if f.at.dev is not None})
        where = f"{where} GPU {', '.join(map(str, devs))}" if kind in _IB and first.at.host and devs else where
        ranks = sorted({f.rank for _, f in items if f.rank is not None})
        fix, meaning = _library_fix(first.at) if kind != "link" else (None, None)
        carried: dict[str, Json] = {"meaning": meaning} if meaning else {}
        if kind == "link" and (peer := _link_peer(f.at.message for _, f in items)):
            carried["peer"] = peer
        settings = _settings(logs, label, first.at)
        if settings:
            carried["settings"] = settings
        if kind in _IB and (hca := _hca(logs, label, first.at)):
            carried["hca"] = hca
        if first.collective:  # the collective that stalled, as the library's line named it
            carried["collective"] = first.collective
        if key in followers:
            carried["followed_by"] = followers[key]
        found = finding(_CAUSE[kind], HIGH if kind not in _RUNTIME else MEDIUM, module=where, fix=fix,
                        carried=carried or None, file=label,
                        line=first.at.line, at=first.at.source, library=first.at.lib, log=first.at.text,
                        lines=[f.at.line for _, f in items][:_LINES], times=len(items), ranks=ranks or None)
        named = _family(logs, label, items) if kind in ("init", *_RUNTIME) and first.at.lib != "HCCL" else None
        out.append(found if named is None else _as_p2p(found, named[1]) or _async_event(_family_cause(replace(
            found, title=named[0], fix=named[2], evidence={**named[1], **found.evidence}))))
    return rdma_verdicts.judge(logs, _peer_unreachable(out))  # R10C: N of M HCAs failed, a port gone down


def _links_in_setup(failures: list[LogFailure]) -> list[LogFailure]:
    """HCCL's link failures (R9C) where the same log says its communicator could not be set up: that set-up failure
    is the cause (collective_init_failed), the link lines its detail, read as before (the library's error)."""
    if not any(f.kind == "init" and f.at.lib == "HCCL" for f in failures):
        return failures
    return [replace(f, kind="runtime") if f.kind == "link" else f for f in failures]


def _peer_unreachable(found: list[Finding]) -> list[Finding]:
    """NET/IB's completion status 12 (IBV_WC_RETRY_EXC_ERR: the transport retry counter ran out, the peer's port never
    acknowledged) on two or more connections (the peer's address and port) towards the same peer node: no one
    connection's bad luck but the path to that node down or the node gone (NCCL's troubleshooting: the network
    between them): nccl_peer_unreachable on each. One connection, however often quoted, warns."""

    def peer(f: Finding) -> str | None:
        said, status = f.evidence.get("peer"), f.evidence.get("status")
        ok = f.evidence.get("kind") == "nccl_ib_completion" and isinstance(status, str) and status.startswith("12 ")
        return said if ok and isinstance(said, str) else None

    connections: dict[str, set[str]] = {}
    for f in found:
        if (p := peer(f)) is not None:
            connections.setdefault(p.split("<", 1)[0], set()).add(p)
    from gpuvet.knowledge import fault

    severity = fault("nccl_peer_unreachable").severity
    return [replace(f, cause="nccl_peer_unreachable", severity=severity)
            if (p := peer(f)) and len(connections[p.split("<", 1)[0]]) > 1 else f for f in found]


# NET/IB's async event line: 'mlx5_0:1 Got async event : port error' (the HCA and port from 2.12 on; 2.27's 'mlx5_0:1
# async fatal event: …'), its event in
# libibverbs' own words (ibv_event_type_str); 'local catastrophic error' is IBV_EVENT_DEVICE_FATAL: the HCA failed
_ASYNC = re.compile(
    r"(?:(?P<hca>[\w.-]{1,40}):(?P<port>\d{1,3}) )?(?:Got )?async (?:fatal |error )?event\s*:\s*(?P<event>[\w ]{3,60})"
)


def _async_event(found: Finding) -> Finding:
    """An HCA's async event on the HCA and host the line names (not the GPU's: the event is the NIC's); the device's
    fatal event ('local catastrophic error') is the HCA's failure, as critical as its firmware stopping."""
    from gpuvet.knowledge import fault

    log = found.evidence.get("log")
    m = _ASYNC.search(log) if found.evidence.get("kind") == "nccl_ib_async_event" and isinstance(log, str) else None
    if m is None:
        return found
    host = found.module.split(" GPU ")[0] if found.module and "not in the log" not in found.module else None
    hca = f"{m.group('hca')}:{m.group('port')}" if m.group("hca") else None
    module = " ".join(x for x in (host, hca) if x) or found.module
    evidence = {**found.evidence, "event": m.group("event").strip(), **({"hca": hca} if hca else {})}
    if m.group("event").startswith("local catastrophic error"):  # not a queue's ('SRQ catastrophic error')
        return replace(found, cause="nic_firmware_fatal", severity=fault("nic_firmware_fatal").severity,
                       module=module, evidence=evidence)
    if m.group("event").startswith("client reregistration"):  # repeated (captures/nccl_resweep): the SM's sweeps
        from gpuvet.captures import nccl_resweep

        host = host if host and ":" not in host else str(log).split(":", 1)[0].strip() or None
        return replace(found, module=" ".join(x for x in (host, hca or "HCA") if x) if host else found.module,
                       title=nccl_resweep.TITLE, evidence={**evidence, "meaning": nccl_resweep.MEANING},
                       fix=nccl_resweep.FIX)
    return replace(found, module=module, evidence=evidence)


def _as_p2p(found: Finding, named: dict[str, Json]) -> Finding | None:
    """A family whose cause is a pair's (nccl_warns.yaml: NCCL's P2P transport could not open the other GPU's buffer)
    on the pair its channel joined: peer-to-peer between those two modules is what failed, named by the pair, with
    the library's lines cited. Too many peers mapped is a family of its own, the collective's."""
    from gpuvet.knowledge import nccl_warn_family

    pair, kind = named.get("pair"), named.get("kind")
    entry = nccl_warn_family(kind) if isinstance(kind, str) else None
    if entry is None or entry.cause != "p2p_unavailable" or not isinstance(pair, str):
        return None
    a, b = sorted(pair.split(" <-> "))
    return finding(entry.cause, MEDIUM, module=f"{a} <-> {b}", between=(a, b), fix=entry.action,
                   carried={**named, **found.evidence}, process=found.module)


_SOCKETS = ("nccl_socket_connect", "nccl_peer_closed", "nccl_socket_interface", "nccl_bootstrap")


def _family(logs: Logs, label: str, items: list[tuple[str, LogFailure]]) -> tuple[str, dict[str, Json], str] | None:
    """The family of NCCL's WARN a group of failures shows (title, evidence, fix: nccl_warns.yaml): the first line
    whose words name one other than the proxy's (the proxy carries the failure of the step under it), with what
    the line names (the peer's address, an IB completion's status), the P2P pair and the connect retries before it."""
    from gpuvet.captures.nccl_warns import family, unnamed
    from gpuvet.knowledge import ib_completion_status, nccl_warn_family

    said = [(f, fam) for _, f in items if (fam := family(f.at.message, f.at.source)) is not None]
    said = said or [(f, unnamed(f.at.message)) for _, f in items[:1] if f.kind == "unnamed"]
    if not said:
        return None
    f, fam = next(((f, fam) for f, fam in said if fam.name != "nccl_proxy"), said[0])
    entry, log = nccl_warn_family(fam.name), next((lg for lab, lg in logs if lab == label), None)  # NCCL's, first
    evidence: dict[str, Json] = {"kind": fam.name, "meaning": entry.meaning}
    if f is not items[0][1]:
        evidence["named_by"] = f"line {f.at.line}: {f.at.text}"
    if fam.peer:
        evidence["peer"] = fam.peer
    if fam.rank is not None:
        evidence["peer_rank"] = fam.rank
    if fam.status is not None:
        evidence["status"] = f"{fam.status} ({ib_completion_status(fam.status) or 'a status the verbs list lacks'})"
    elif fam.name == "nccl_ib_completion":
        evidence["status"] = "not in the line (cut before it): NCCL_DEBUG=INFO's full WARN names it"
    others = list(dict.fromkeys(g.at.text for _, g in items[1:] if g.at.text != items[0][1].at.text))
    if others:
        evidence["also"] = others[:3]
    if log is not None and fam.name == "nccl_p2p_ipc" and (pair := log.p2p_last.get((f.at.host, f.at.pid))):
        evidence["pair"] = " <-> ".join(pair)
        evidence["channel"] = f"line {log.p2p_channel[(f.at.host, f.at.pid)].line}: " \
                              f"{log.p2p_channel[(f.at.host, f.at.pid)].text}"
    if log is not None and fam.name in _SOCKETS and (using := log.bootstrap.get((f.at.host, f.at.pid))):
        evidence["interface"] = f"line {using.line}: {using.message}"  # the interface and address family chosen
    if log is not None and fam.name == "nccl_socket_connect":
        tried = [r for r in log.retries if (r.host, r.pid) == (f.at.host, f.at.pid) and r.line < f.at.line]
        if tried:
            evidence["retries"] = f"{len(tried)} line(s) '{tried[0].message}' (line(s) " \
                                  f"{', '.join(str(r.line) for r in tried[:8])})"
    return entry.title, evidence, entry.action


def _settings(logs: Logs, label: str, at: LogLine) -> str | None:
    """The library settings the failed process logged as set by its environment before it failed (an
    NCCL_IB_ADDR_RANGE no address falls in, an NCCL_SOCKET_IFNAME no node has): the first place to look."""
    said = [e.message for lab, log in logs if lab == label for e in log.env
            if (e.host, e.pid) == (at.host, at.pid) and e.line < at.line]
    return "; ".join(dict.fromkeys(said))[:400] or None


def _hca(logs: Logs, label: str, at: LogLine) -> str | None:
    """The HCA ports NET/IB said it uses ('mlx5_1:1/RoCE') in the failed process (its host's, where the line names
    no process): the device whose verbs call failed."""
    said = [d for lab, log in logs if lab == label for c in log.choices if c.transport == "IB" and c.host == at.host
            and (at.pid is None or c.pid == at.pid) for d in c.devices]
    return ", ".join(dict.fromkeys(said)) or None


def _library_fix(at: LogLine) -> tuple[str | None, str | None]:
    """HCCL's failures take the knowledge base's advice for their CANN code (the cause's fix speaks of
    NCCL's NET/IB and CUDA); NCCL's and RCCL's keep the cause's fix."""
    if at.lib != "HCCL":
        return None, None
    from gpuvet.knowledge import hccl_code

    entry = hccl_code(at.source if at.source and _CANN_CODE.match(at.source) else "")
    return entry.action, entry.meaning if entry.known else None


def _npu_runtime(logs: Logs) -> list[Finding]:
    """The Ascend runtime's own error codes (EH9999 … reason=[task timeout]): one finding per code and device,
    with the knowledge base's advice; not the collective's failure, though a stuck collective is a common cause."""
    from gpuvet.captures.ascend_errors import AscendLog
    from gpuvet.knowledge import cann_runtime_code

    entry = cann_runtime_code()
    return [finding("npu_runtime_error", MEDIUM, module=_where(f.at), fix=entry.action, file=label, line=f.at.line,
                    at=f.at.source, library=f.at.lib, log=f.at.text, message=f.at.message, meaning=entry.meaning)
            for label, log in logs if isinstance(log, AscendLog) for f in log.runtime]


def _peer_refused(logs: Logs) -> list[Finding]:
    """The CUDA runtime refused peer access while NCCL set up P2P: one finding per pair of modules, named by
    the bus ids the process's 'via P2P' channel joined (the host's GPU where the log names no pair)."""
    out: dict[str, Finding] = {}
    for label, log in logs:
        for r in log.p2p_refused:
            where = " <-> ".join(r.pair) if r.pair else _where(r.at)
            out.setdefault(where, finding("p2p_unavailable", MEDIUM, module=where, between=r.pair,
                                          host=r.at.host, file=label, line=r.at.line, at=r.at.source,
                                          library=r.at.lib, log=r.at.text))
    return list(out.values())


def _transport_verdict(logs: Logs) -> tuple[list[Finding], list[Cited], str]:
    """Sockets between nodes where InfiniBand/RoCE was expected: all nodes (a fallback) or some (a mismatch)."""
    choices = [(label, c) for label, log in logs for c in log.choices]
    if not choices:
        return [], [], "can't tell: the log names no transport (NET/IB, NET/Socket, 'Using network', 'via NET/…')"
    by_host: dict[str, dict[str, list[tuple[str, NetChoice]]]] = {}
    for label, c in choices:
        by_host.setdefault(c.host or "host not in the log", {}).setdefault(c.transport, []).append((label, c))
    cited = [Cited(items[0][0], "network transport", _said(t, items), host)
             for host, nets in by_host.items() for t, items in nets.items()]
    on_socket = [h for h, nets in by_host.items() if SOCKET in nets]
    others = [h for h, nets in by_host.items() if set(nets) - {SOCKET}]
    if on_socket and others:  # one job, two transports: whatever the host names say (a paste may redact them)
        evidence: dict[str, Json] = {"on_socket": [_said(SOCKET, by_host[h][SOCKET], h) for h in on_socket],
                                     **_no_ib(logs, on_socket), "on_other": [
                                         _said(t, items, h) for h in others for t, items in by_host[h].items()
                                         if t != SOCKET]}
        named = [h if h not in others else f"{h} pid {', '.join(_pids(by_host[h][SOCKET]))}" for h in on_socket]
        return [finding("nccl_transport_mismatch", HIGH, module=", ".join(named), carried=evidence)], cited, ""
    if on_socket and not any(c.host for _, c in choices) and (pairs := _socket_ranks(logs)):
        found = _ranks_on_socket(logs, pairs, by_host)
        off = next((log.ib_off for _, log in logs if log.ib_off), None)
        return found, cited, "" if found else f"sockets between ranks {_pairs(pairs)} chosen by the job: {off}"
    hosts = set(by_host) | {h for _, log in logs for h in (*log.seen_hosts, *log.test_hosts)}  # a rank's host counts
    nodes = max((log.nodes or 0) for _, log in logs)
    # the rule (issue 46, batches G and H): a fallback to sockets is a finding only where the log proves the job
    # spans nodes (two hosts, nNodes > 1). One host on NET/Socket after 'NET/IB : No device found' proves neither
    # another node (a 16-rank communicator fits one node) nor an HCA (an RDMA plugin such as HPC-X's IBext is
    # shipped in containers whatever the node carries): can't tell, and said so
    if len(hosts) < 2 and nodes < 2:
        if on_socket and _socket_ranks(logs) and (wrong := _tunnel_sockets(by_host, on_socket, 2)):
            return wrong + nccl_ib_need.unavailable(logs), cited, ""  # NET between ranks is between nodes
        if on_socket and (lo := _loopback_only(logs, by_host, on_socket)):
            return lo, cited, ""  # R3C: NET over loopback only: it cannot leave the host
        if on_socket:
            return [], cited, (f"can't tell: one host in the log ({', '.join(sorted(hosts))}) on NET/Socket: between "
                               "the GPUs of one node it carries nothing; give every node's log if the job spans nodes")
        return [], cited, f"one node in the log, on {', '.join(sorted({c.transport for _, c in choices}))}"
    if not on_socket:
        return [], cited, f"every node's processes use {_nets(by_host)} between nodes ({', '.join(sorted(by_host))})"
    off = next((log.ib_off for _, log in logs if log.ib_off), None)
    tunnels = _tunnel_sockets(by_host, on_socket, nodes or len(hosts))
    if off:  # the job chose sockets: not a fallback, though the interface they run over may still be wrong
        return tunnels, cited, "" if tunnels else f"sockets between nodes ({', '.join(on_socket)}) chosen by the job: {off}"
    fallback = finding("nccl_socket_fallback", HIGH, module=", ".join(on_socket), carried=_no_ib(logs, on_socket),
                       nodes=nodes or len(hosts), on_socket=[_said(SOCKET, by_host[h][SOCKET], h) for h in on_socket])
    return [fallback, *tunnels], cited, ""


# an interface that is no node's own network: a tunnel's (ip6tnl0, tunl0, gre1, sit0, ipip0, vti0) or loopback, or
# an address valid on one link only (fe80::, 169.254.x): NCCL's sockets over one between nodes are slow or unrouted
# a container's or VM's bridge on the host (docker0, libvirt's virbr0) reaches no other node either; a veth end
# or a br-<id> is named by what it carries: a pod's routed address (Calico-style) is the pod's own network, a
# link-local one (a docker veth's fe80::) is caught by the address
_NOT_BETWEEN_NODES = re.compile(r"^(?:(?:ip6tnl|tunl|ip6gre|gretap|gre|sit|ipip|ip_vti|vti|lo|docker|virbr)\d*[:<]"
                                r"|[\w.-]+:(?:fe80:|169\.254\.|127\.))", re.I)


def _tunnel_sockets(by_host: dict[str, dict[str, list[tuple[str, NetChoice]]]], on_socket: list[str],
                    nodes: int) -> list[Finding]:
    """The job's sockets between nodes run over a tunnel, loopback or link-local interface (picked by NCCL or
    named by NCCL_SOCKET_IFNAME): the interface, not the transport, is what times the job out."""
    bad = {h: [d for _, c in by_host[h][SOCKET] for d in c.devices if _NOT_BETWEEN_NODES.match(d)]
           for h in on_socket}
    bad = {h: list(dict.fromkeys(d)) for h, d in bad.items() if d}
    if not bad:
        return []
    return [finding("nccl_socket_wrong_interface", HIGH, module=", ".join(bad), nodes=nodes,
                    interfaces=[f"{h}: {', '.join(d[:4])}" for h, d in bad.items()],
                    on_socket=[_said(SOCKET, by_host[h][SOCKET], h) for h in bad])]


def _loopback_only(logs: Logs, by_host: dict[str, dict[str, list[tuple[str, NetChoice]]]],
                   on_socket: list[str]) -> list[Finding]:
    """One host whose NET/Socket holds loopback alone ('Using [0]lo:127.0.0.1<0>'): NCCL skips lo unless nothing
    else is up or NCCL_SOCKET_IFNAME names it, so the job's network to any other node is none (issue 46, AF); none
    where the log proves the job one node's (nNodes 1, nccl-tests' ranks on one host): it never uses the network."""
    if any(log.one_node for _, log in logs):
        return []
    devices = [d for h in on_socket for _, c in by_host[h][SOCKET] for d in c.devices]
    if not devices or not all(re.match(r"^lo\d*:|^[\w.-]+:(?:127\.|::1<)", d) for d in devices):
        return []
    return _tunnel_sockets(by_host, on_socket, 1)


def _socket_ranks(logs: Logs) -> list[tuple[int, int]]:
    """The rank pairs a channel joins over NET/Socket ('0[0] -> 8[0] via NET/Socket/0'): NCCL takes the
    network only between ranks it cannot join inside a node."""
    return sorted({pair for _, log in logs for pair, net in log.net_peers.items() if net == SOCKET})


def _ranks_on_socket(logs: Logs, pairs: list[tuple[int, int]],
                     by_host: dict[str, dict[str, list[tuple[str, NetChoice]]]]) -> list[Finding]:
    """Sockets between ranks where the log names no host (the poster redacted them: <cluster_name>): the ranks
    the channels join name the place; none when the job chose sockets itself."""
    if any(log.ib_off for _, log in logs):
        return []
    redacted = any(log.redacted for _, log in logs)
    return [finding("nccl_socket_fallback", HIGH, module=_pairs(pairs), carried=_no_ib(logs, list(by_host)),
                    nodes="host names redacted in the log" if redacted else "hosts not named in the log",
                    on_socket=[_said(SOCKET, items[SOCKET], h) for h, items in by_host.items() if SOCKET in items])]


def _pairs(pairs: list[tuple[int, int]]) -> str:
    """'rank 0 <-> rank 8, rank 1 <-> rank 9' (four, then a count)."""
    more = f" and {len(pairs) - 4} more pair(s)" if len(pairs) > 4 else ""
    return ", ".join(f"rank {a} <-> rank {b}" for a, b in pairs[:4]) + more


def _said(transport: str, items: list[tuple[str, NetChoice]], host: str | None = None) -> str:
    """'IB (mlx5_0:1/IB, mlx5_2:1/IB) by 8 process(es), file line 12'."""
    label, first = items[0]
    devices = list(dict.fromkeys(d for _, c in items for d in c.devices))[:6]
    head = f"{host}: " if host else ""
    pids = _pids(items)
    named = f" (pid {', '.join(pids[:4])}{' …' if len(pids) > 4 else ''})" if pids else ""
    return (f"{head}{transport}" + (f" ({', '.join(devices)})" if devices else "") +
            f" by {len(items)} process(es){named}, {label} line {first.line}")


def _pids(items: list[tuple[str, NetChoice]]) -> list[str]:
    return list(dict.fromkeys(str(c.pid) for _, c in items if c.pid is not None))


def _nets(by_host: dict[str, dict[str, list[tuple[str, NetChoice]]]]) -> str:
    return "/".join(sorted({t for nets in by_host.values() for t in nets}))


def _no_ib(logs: Logs, hosts: list[str]) -> dict[str, Json]:
    """Why the socket hosts had no InfiniBand, in NCCL's words (the first such line)."""
    for label, log in logs:
        for at in log.no_ib:
            if (at.host or "host not in the log") in hosts:
                return {"why": at.text, "file": label, "line": at.line}
    return {}


_ADVICE_CHARS = 120  # of each advisory said: cut between words and marked, as the log's evidence is (REV67a #11)


def _advice(logs: Logs) -> str:
    """RCCL's advice at init (iommu=pt, amd_iommu=on, HSA_FORCE_FINE_GRAIN_PCIE=1 not set, NUMA balancing on), said
    as printed: settings to check where the job hangs or is slow, no failure of the node (R14A)."""
    from gpuvet.captures.nccl_log import kept  # noqa: PLC0415 - the parser loads where a log was read (issue 43)

    said = list(dict.fromkeys(kept(at.message, _ADVICE_CHARS) for _, log in logs for at in log.advice))
    if not said:
        return ""
    return f"; RCCL's advice at init (settings to check, no failure): {'; '.join(said[:4])}"


def _paths(logs: Logs) -> str:
    """NCCL's own dump of each node's topology, said as printed (info: the paths between its GPUs and their rate
    are the node's design, what its collectives can reach inside it, not a fault)."""
    said = [t.said() for _, log in logs for t in log.topology.values() if t.gpus]
    return f"; NCCL's topology: {'; '.join(said)}" if said else ""


def _nvls_unavailable(logs: Logs) -> tuple[str, list[Cited]]:
    """NVLS multicast not available: NCCL goes on without it (info, never a finding)."""
    seen: dict[str, list[str]] = {}
    cited: list[Cited] = []
    for label, log in logs:
        for at in log.nvls_unavailable:
            seen.setdefault(at.host or "host not in the log", []).append(str(at.dev) if at.dev is not None else "?")
            cited.append(Cited(label, "NVLS multicast", f"not available (line {at.line})", _where(at)))
    if not seen:
        return "", []
    places = "; ".join(f"{h} GPU {', '.join(dict.fromkeys(d))}" for h, d in seen.items())
    return f"; NVLS multicast not available on {places} (info: NCCL runs without it)", cited


def _p2p_off(logs: Logs) -> str:
    """P2P turned off by the job's own setting (NCCL_P2P_DISABLE=1, NCCL_P2P_LEVEL=LOC): said, never a fault."""
    from gpuvet.captures.nccl_fallbacks import P2P_OFF

    said = [f"{m.group(0)} (line {at.line})" for _, log in logs for at in log.env if (m := P2P_OFF.search(at.text))]
    return f"; P2P turned off by the job's own setting: {said[0]} (info)" if said else ""


def _settings_off(logs: Logs) -> str:
    """P2P turned off by the job's own setting, with every other transport its settings turn off or narrow
    (NCCL_SHM_DISABLE=1, NCCL_IB_DISABLE=1 …: captures/nccl_env_limits.py), said in one info, never a fault."""
    from gpuvet.captures.nccl_env_limits import said

    others = [s for s in said([(at.line, at.text) for _, log in logs for at in log.env]) if not s.startswith("NCCL_P2P")]
    tail = f"; other transports limited by the job's own settings: {', '.join(others)} (info)" if others else ""
    return _p2p_off(logs) + tail


def _pcie_by_design(ev: Evidence, f: Fallback) -> bool:
    """NCCL's INFO 'P2P is disabled between connected GPUs' is a pair joined by PCIe (graph/paths.cc prints its
    NVLink pairs' form as a WARN that stops): NVML reports no P2P there, by design on PCIe and consumer cards (A10G,
    L4, GeForce), a fault only where the modules' design is an NVLink fabric (capture_errors.nvlink_design)."""
    from gpuvet.doctor.capture_errors import nvlink_design

    return f.kind == "nccl_p2p_disabled" and "NVLINK" not in f.at.message and not (
        f.pair is not None and all(nvlink_design(ev, g) for g in f.pair))


def _p2p_by_design(logs: Logs, ev: Evidence) -> str:
    """The PCIe pairs NVML reports without P2P (NCCL's INFO line), said as info: their traffic goes through host
    memory, the design of cards without peer access."""
    said = [f for _, log in logs for f in log.fallbacks if _pcie_by_design(ev, f)]
    if not said:
        return ""
    pairs = list(dict.fromkeys(" <-> ".join(sorted(f.pair)) for f in said if f.pair))
    hosts = ", ".join(dict.fromkeys(f.at.host for f in said if f.at.host)) or "host not in the log"
    return (f"; P2P disabled between PCIe-connected GPUs {', '.join(pairs[:8]) or '(pair not named)'} on {hosts} (line "
            f"{said[0].at.line}: NVML reports no P2P on that path, the design of cards without peer access; "
            "their traffic goes through host memory; info)")


def _fallbacks(logs: Logs, ev: Evidence) -> list[Finding]:
    """NCCL's INFO lines saying a path between GPUs was lost at set-up (P2P disabled between GPUs its topology
    connects, P2P not enabled by the driver, kernels needing more shared memory than the GPU has): one finding per
    family and host, naming the pairs the lines give, the first line quoted; none where the job turned P2P off."""
    from gpuvet.captures.nccl_fallbacks import P2P_KINDS
    from gpuvet.knowledge import nccl_warn_family

    groups: dict[tuple[str, str], list[tuple[str, Fallback]]] = {}
    for label, log in logs:
        for f in log.fallbacks:
            if _pcie_by_design(ev, f):
                continue
            groups.setdefault((f.kind, f.at.host or "host not in the log"), []).append((label, f))
    out: list[Finding] = []
    for (kind, host), items in groups.items():
        if kind in P2P_KINDS and _p2p_off(logs) or kind == "nccl_gdr_disabled" and _gdr_off(logs):
            continue
        entry, (label, first) = nccl_warn_family(kind), items[0]
        pairs = list(dict.fromkeys(" <-> ".join(sorted(f.pair)) for _, f in items if f.pair))
        gpus = sorted({g for _, f in items if f.pair for g in f.pair})
        cause = entry.cause or "p2p_unavailable"
        module = host if kind in P2P_KINDS or first.at.dev is None else f"{host} GPU {first.at.dev}"
        if kind == "nccl_gdr_disabled":  # R8C: the HCAs NCCL named, on their host
            module = f"{host} {', '.join(dict.fromkeys(f.pair[0] for _, f in items if f.pair))}"
        evidence: dict[str, Json] = {"kind": kind, "meaning": entry.meaning, "file": label, "line": first.at.line,
                                     "log": first.at.text, "times": len(items)}
        if pairs and kind != "nccl_gdr_disabled":
            evidence["gpus"], evidence["pairs"] = ", ".join(gpus), pairs[:16]
        if first.figures:
            evidence["shared_memory"] = f"{first.figures[0]} bytes needed, {first.figures[1]} the device allows"
        version = next((lg.version for lab, lg in logs if lab == label and lg.version), None)
        if version:
            evidence["version"] = version
        out.append(replace(finding(cause, MEDIUM, module=module, fix=entry.action, carried=evidence),
                           title=entry.title))
    return out


def _gdr_off(logs: Logs) -> bool:
    """GPUDirect RDMA turned off by the job's own setting (NCCL_NET_GDR_LEVEL=LOC, NCCL_NET_GDR_DISABLE=1)."""
    from gpuvet.captures.nccl_fallbacks import GDR_OFF

    return any(GDR_OFF.search(at.text) for _, log in logs for at in log.env)


def _family_cause(found: Finding) -> Finding:
    """A family whose own cause nccl_warns.yaml names (the NCCL build that does not support the GPU: SHM's cuMem
    host path) takes it, with its severity from faults.yaml; the others keep the communicator's cause."""
    from gpuvet.knowledge import fault, nccl_warn_family

    kind = found.evidence.get("kind")
    cause = nccl_warn_family(kind).cause if isinstance(kind, str) else None
    if cause is None or cause == "p2p_unavailable":  # a pair's cause needs the pair (_as_p2p)
        return found
    return replace(found, cause=cause, severity=fault(cause).severity)


def _link_peer(messages: Iterable[str]) -> str | None:
    """The peer an HCCL link failure names; captures.hccl_links is imported here, not at load: doctor on a live or
    simulated node loads no capture reader (tests/cli/test_cli_lazy.py)."""
    from gpuvet.captures.hccl_links import peer

    return peer(messages)

