"""Doctor's step for the network beyond the board (interconnect-slow, after the module fabric): each
NIC port up at its design rate, GPUDirect RDMA's peer memory, NCCL's device variables. The verdicts
are the NIC checks' (checks/nics.py), the same health gives; this only turns them into causes."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from gpuvet.backends.nic_readings import Nic, NicPcie, NicReadings
from gpuvet.backends.readings import Unavailable
from gpuvet.checks import nics
from gpuvet.doctor.evidence import Evidence
from gpuvet.doctor.model import Cited, Finding, finding
from gpuvet.doctor.outcome import HIGH, MEDIUM, Outcome, clear, confirmed, unknown
from gpuvet.node.bus import bus_key
from gpuvet.node.model import EndpointKind
from gpuvet.node.vendor_tools import CAPTURED, GIVE

if TYPE_CHECKING:  # the parser loads when a log is read
    from gpuvet.captures.rdma_verbs import VerbsSetup
    from gpuvet.captures.ucx import UcxError, UcxLimit


def _declared(ev: Evidence) -> list[nics.DeclaredNic]:
    from gpuvet.node.nic_catalog import find_nic_model

    if ev.declared is None:
        return []
    return [nics.DeclaredNic(e.id, find_nic_model(e.model)) for e in ev.declared.endpoints
            if e.kind is EndpointKind.NIC]


def _readings(ev: Evidence) -> NicReadings | Unavailable | None:
    return ev.backend.nics() if ev.backend is not None else None


def _far(ev: Evidence) -> list[nics.NicVerdict]:
    """nic_far: a module whose nearest NIC is farther than the design's (declared, the simulated
    spec, else for a captured topo -m its peers'). Needs NICs placed in the PCIe tree (topo -m's
    NIC columns, a spec); a live node's tree holds none yet."""
    from gpuvet.checks import nic_affinity

    if ev.node is None or not nic_affinity.nics_of(ev.node):
        return []
    return nic_affinity.far(ev.node, ev.declared)


def _bus_nics(ev: Evidence, readings: NicReadings | None) -> NicReadings:
    """lspci's NIC functions as NICs with their PCIe link, for the one NIC rule (nics.pcie): the ports of the
    RDMA device on the same bus id give the rate it is judged against. One per card (a dual-port card's
    functions share one link); none where a listing gave that card's link already (lshca)."""
    if not ev.captures.nic_links:
        return NicReadings((), None, CAPTURED["pcie"], captured=True)
    # lspci was read: its parser's modules load only then (doctor --sim loads none of them)
    from gpuvet.captures.links import NO_DEVICE_LINE
    from gpuvet.captures.pcie_values import generation

    listed = {bus_key(n.bus_id)[:-1]: n for n in readings.nics if n.bus_id} if readings is not None else {}
    out: dict[str, Nic] = {}
    for link in ev.captures.nic_links:
        card = bus_key(link.device)[:-1]
        nic = listed.get(card)
        if card in out or nic is not None and nic.pcie is not None or link.device == NO_DEVICE_LINE:
            continue
        pcie = NicPcie(generation(link.speed_gts), link.width, generation(link.cap_speed_gts), link.cap_width)
        name = re.sub(r"\s*\(rev \w+\)", "", (link.name or "").partition(": ")[2]).strip()[:80] or link.device
        out[card] = replace(nic, pcie=pcie) if nic is not None else Nic(name, None, bus_key(link.device), (), pcie=pcie)
    return NicReadings(tuple(out.values()), None, CAPTURED["pcie"], captured=True)


def _found(verdicts: list[nics.NicVerdict]) -> Outcome:
    found = [finding(v.kind, HIGH, v.module, fix=v.fix, nic=v.nic, reading=v.reason) for v in verdicts]
    return confirmed(f"{len(verdicts)} NIC finding(s): {verdicts[0].reason}", *found)


def nic_ports(ev: Evidence) -> Outcome:
    readings = _readings(ev)
    far = _far(ev)
    bus = nics.pcie(_bus_nics(ev, readings if isinstance(readings, NicReadings) else None))
    if (far or bus) and not isinstance(readings, NicReadings):
        return _found(far + bus)
    if readings is None:
        return unknown(f"can't tell: no NIC listing ({GIVE['nic_listing']}) in the evidence")
    if isinstance(readings, Unavailable):
        return unknown(f"can't tell: the NICs could not be read ({readings.reason})")
    if not readings.nics and not _declared(ev):
        return unknown("can't tell: no InfiniBand or RoCE NIC on this node, and none declared")
    env = ev.env if ev.backend is not None and ev.backend.local_host else {}
    verdicts = nics.ports(readings, _declared(ev)) + nics.nccl_environment(readings, env) + nics.pcie(readings) + bus
    verdicts += nics.counters_at_limit(readings) + nics.ethtool_errors(readings) + nics.counters_over_threshold(readings)
    vendors = {m.model.vendor for m in ev.node.modules} if ev.node is not None else set()
    verdicts += nics.peer_memory(readings, vendors) + far
    if verdicts:
        return _found(verdicts)
    cited = [Cited(n.read_from or readings.source, f"{n.device} port {p.port}", f"{p.state} {p.rate_gbps:g} Gb/s"
                   if p.rate_gbps is not None else p.state) for n in readings.nics for p in n.ports]
    if not cited or not nics.judged(readings):
        return unknown(f"can't tell: {len(readings.nics)} NIC(s) listed, no port's state read (ibdev2netdev's "
                       f"Up/Down is the netdev's: give {GIVE['nic_ports']})")
    return clear(nics.summary(readings), *cited)


BW_SIZE_MIN = 65536  # smaller messages are message-rate bound: their Gb/s says nothing about the link
BW_SHARE_MIN = 0.8  # perftest's write/read/send BW reaches ~95 % of the line rate at large messages


_GPU_MR = re.compile(r"allocate MR|register GPU MR|create MR", re.I)


def _failed(ev: Evidence) -> list[Finding]:
    """One rdma_test_failed per run that failed, with perftest's first error line; a run on GPU memory whose memory
    region was refused is GPUDirect RDMA's registration (R8C: no nvidia_peermem / dma-buf), peer_memory_missing."""
    out = []
    for label, r in ev.captures.perftest:
        mr = next((f for f in r.failures if _GPU_MR.search(f[1])), None) if r.gpu_buffer else None
        if mr is not None:
            out.append(finding("peer_memory_missing", HIGH, r.device, nic=r.device or "a NIC the log does not name",
                               test=r.test, file=label, line=mr[0], error=mr[1], times=len(r.failures),
                               meaning="the HCA refused to register GPU memory (ibv_reg_mr on a GPU buffer): GPUDirect "
                               "RDMA has no peer-memory path (nvidia_peermem / nv_peer_mem not loaded, or no dma-buf)"))
        elif r.failures:
            out.append(finding("rdma_test_failed", HIGH, r.device, nic=r.device, test=r.test, file=label,
                               line=r.failures[0][0], error=r.failures[0][1], times=len(r.failures)))
    return out


def _completion_errors(ev: Evidence) -> list[Finding]:
    """One rdma_completion_error per host, port and status UCX reported (retry exceeded on mlx5_0 port 1),
    citing its first line and counting the processes and lines that saw the same. Where UCX's lines name two
    or more hosts, each host's port is its own finding (review 56: mlx5_0:1 on nodeA and on nodeB are two)."""
    groups: dict[tuple[str | None, str | None, int | None, str], list[tuple[str, UcxError]]] = {}
    hosts = {e.host for _, e in ev.captures.rdma_errors if e.host is not None}
    for label, e in ev.captures.rdma_errors:
        groups.setdefault((e.host if len(hosts) > 1 or e.pid is None else None, e.device, e.port, e.what),
                          []).append((label, e))  # R14B: a host no UCX bracket named (libmlx5's, a Ray worker's ip)
    out = []
    for (host, device, port, what), items in groups.items():
        label, first = items[0]
        seen = sorted({f"{e.host}:{e.pid}" for _, e in items if e.host is not None and e.pid is not None})
        nic = device if port is None else f"{device} port {port}"  # a verbs line may name no port, or no NIC
        out.append(replace(finding(_completion_cause(what, first.transport), MEDIUM, nic,
                                   nic=nic or "a NIC the log does not name", error=what, side=_side(what),
                                   transport=first.transport,
                                   syndrome=first.syndrome, file=label, line=first.line, log=first.text,
                                   times=len(items), processes=seen[:16] or None), host=host))
    return out


# a program's own completion status of its local side (ibv_wc_status 1, 2: local length, local QP operation error):
# the shape of the request it posted, refused by its HCA before it left the port, not the fabric (R4C); a local
# protection error (4) stays the NIC's finding: a GPUDirect RDMA mapping the node broke raises it as well
_OWN_REQUEST = re.compile(r"\blocal (?:length|QP operation) error|\bLOC_(?:LEN|QP_OP)_ERR\b", re.I)


def _completion_cause(what: str, transport: str | None) -> str:
    """The program's own request where the program logged the status; the kernel's line (mlx5_ib's 'QP N error')
    names no program whose request it was, so it stays the NIC's finding."""
    own = _OWN_REQUEST.search(what) is not None and not (transport or "").startswith("the kernel")
    return "rdma_request_local_error" if own else "rdma_completion_error"


def _side(what: str) -> str | None:
    """Which side a completion status points at, as the knowledge base says it (nccl_warns.yaml's completion_sides,
    REV67a #7: no meaning held in code; None: the status says no side)."""
    from gpuvet.knowledge import completion_sides  # noqa: PLC0415 - read where a completion is judged

    w = what.lower()
    return next((said for words, said in completion_sides() if any(x in w for x in words)), None)


def _setup_failed(ev: Evidence) -> list[Finding]:
    """One rdma_setup_failed per device and step a program could not set up (a QP's RTR, a devx INIT2RTR, a memory
    region), citing its first line and the errno text beside it; the device the line or the log names, else none."""
    groups: dict[tuple[str | None, str], list[tuple[str, VerbsSetup]]] = {}
    for label, s in ev.captures.rdma_setup:
        groups.setdefault((s.device, s.step), []).append((label, s))
    return [finding("rdma_setup_failed", HIGH, device, nic=device or "a NIC the log does not name", step=step,
                    reason=next((s.reason for _, s in items if s.reason), None), file=items[0][0],
                    line=items[0][1].line, log=items[0][1].text, times=len(items))
            for (device, step), items in groups.items()]


# a NIC driver's kernel lines by their kind (captures/nic_driver.py): the cause each names
_KIND_CAUSES = {"failed": "nic_driver_failed", "fatal": "nic_firmware_fatal", "alarm": "nic_hardware_alarm",
                "slot_power": "nic_slot_power_reported", "port_unused": "nic_port_unused"}  # R14E
_CARRIER_CAUSES = {"lost": "nic_port_down_undeclared", "flapping": "nic_errors"}
NOT_NAMED = "bus id not in the log"


def _driver_failed(ev: Evidence) -> list[Finding]:
    """One finding per card and kind a NIC driver's kernel lines say (captures/nic_driver.py), by bus id: the card it
    failed (nic_driver_failed), whose firmware stopped (nic_firmware_fatal: critical, a warning where it only stalled or
    the driver's recovery brought it back) or that raised an alarm (nic_hardware_alarm); an interface whose link was
    lost or flaps; the RDMA core's completion errors on a device."""
    out = []
    for label, f in ev.captures.nic_driver:
        nic = f.bus_id or f.netdev or f"a {f.driver} card, {NOT_NAMED}"
        found = finding(_KIND_CAUSES[f.kind], HIGH, f.bus_id or f.netdev, nic=nic, driver=f.driver,
                        firmware=f.firmware, file=label, line=f.line, log=f.text, times=f.count)
        out.append(replace(found, severity="warn") if f.kind == "fatal" and not f.severe else found)
    for label, c in ev.captures.nic_carrier:
        nic = f"{c.bus_id} ({c.netdev})" if c.netdev else c.bus_id
        said = (f"the link went down {c.downs} times after it was up" if c.kind == "flapping" else
                "the link went down after it was up and the log shows it no more up")
        out.append(finding(_CARRIER_CAUSES[c.kind], HIGH, nic, nic=nic, driver=c.driver, reading=said, file=label,
                           line=c.line, log=c.text, times=c.downs))
    for label, e in ev.captures.nic_completions:
        out.append(finding("rdma_completion_error", MEDIUM, e.device, nic=e.device, error=e.message,
                           transport="the kernel's RDMA stack", file=label, line=e.line, log=e.text, times=e.count))
    return out


def _memlock(ev: Evidence) -> list[Finding]:
    """One rdma_memlock_limit per host whose UCX said a verbs call failed for the max locked memory limit:
    the node's set-up (ulimit -l), not a port's, citing the first line and the limit UCX read."""
    hosts: dict[str, list[tuple[str, UcxLimit]]] = {}
    for label, e in ev.captures.rdma_memlock:
        hosts.setdefault(e.host, []).append((label, e))
    return [replace(finding("rdma_memlock_limit", HIGH, None, call=first.call, limit=first.current or "not said",
                            file=label, line=first.line, log=first.text, times=len(items)),
                    host=host if len(hosts) > 1 else None)
            for host, items in hosts.items() for label, first in items[:1]]


def _bandwidth(ev: Evidence) -> tuple[list[Finding], list[Cited]]:
    """Each BW run's best large-message Gb/s against its port's rate; a run that also failed is judged
    on the rows it did measure, so one failed run never hides another's slow link."""
    if not ev.captures.perftest:
        return [], []
    readings = _readings(ev)
    rates = {n.device: max((p.rate_gbps or 0.0 for p in n.ports), default=0.0) for n in readings.nics} \
        if isinstance(readings, NicReadings) else {}
    found, cited = [], []
    for label, run in ((label, r) for label, r in ev.captures.perftest if r.test.endswith("BW")):
        big = [r for r in run.rows if r.size_bytes >= BW_SIZE_MIN]
        rate = rates.get(run.device or "")
        if not big or not rate:
            continue
        best = max(r.bw_avg_gbps for r in big)
        cited.append(Cited(label, f"{run.test} on {run.device}", f"{best:.1f} of {rate:g} Gb/s"))
        if best < rate * BW_SHARE_MIN:
            found.append(finding("rdma_bandwidth_low", HIGH, run.device, nic=run.device, reading=f"{run.test} "
                                 f"{best:.1f} Gb/s at {max(r.size_bytes for r in big):,} B, {best / rate:.0%} of "
                                 f"the port's {rate:g} Gb/s", file=label))
    return found, cited


def rdma_bandwidth(ev: Evidence) -> Outcome:
    """perftest's bandwidth at large messages against the port's rate (a NIC listing in the evidence
    gives it: ibstat, ibv_devinfo, sysfs); "can't tell" without one, or with small messages only.
    A failed run is its own finding beside the others' verdicts, and so is a completion error UCX reported."""
    failed = _failed(ev) + _driver_failed(ev) + _setup_failed(ev)
    found, cited = _bandwidth(ev)
    limits = _memlock(ev)
    if errors := _completion_errors(ev):
        said = errors[0].evidence
        where = f"{errors[0].host} {said['nic']}" if errors[0].host else said["nic"]
        return confirmed(f"RDMA traffic failed: {said['error']} on {where} ({said['times']} time(s))",
                         *errors, *limits, *failed, *found)
    if limits:
        said = limits[0].evidence
        return confirmed(f"UCX could not set up RDMA: {said['call']} failed for the max locked memory limit "
                         f"(ulimit -l, {said['limit']})", *limits, *failed, *found)
    if failed and not ev.captures.perftest:
        said = failed[0].evidence
        return confirmed(f"{said['nic']}: {failed[0].title or failed[0].cause}: {str(said['log'])[:120]}", *failed)
    if failed or found:
        first = next((r for _, r in ev.captures.perftest if r.failures), None) if failed else None
        head = (f"{len(failed)} perftest run(s) failed: {first.failures[0][1][:120]}" if first is not None else
                f"{len(found)} RDMA bandwidth run(s) below {BW_SHARE_MIN:.0%} of the port's rate")
        if failed and found:
            head += f"; {len(found)} RDMA bandwidth run(s) below {BW_SHARE_MIN:.0%} of the port's rate"
        return confirmed(head, *failed, *found)
    if not any(r.test.endswith("BW") for _, r in ev.captures.perftest):
        return unknown("no perftest bandwidth run (give ib_write_bw / ib_read_bw / ib_send_bw output)")
    if not cited:
        return unknown("can't tell: the perftest runs have no message of 64 KiB or more, or their device's rate "
                       f"is not in the evidence (give {GIVE['nic_rates']} with them)")
    return clear("perftest reaches the port's rate", *cited)
