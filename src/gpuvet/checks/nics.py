"""The boundary beyond the board: each NIC port up and at its design rate, the NICs the node was
built with all there, GPUDirect RDMA's peer-memory module loaded, and NCCL's device variables
naming devices the node has. Pure: readings and the design in, verdicts out.

A port's expected rate comes from the design: the declared NIC model, else the catalog's model of
the card read (its PCI device id), else its peers (the same model's other ports on the node),
never from the port itself. A port no design expects up (the unused second port of a dual-port
Ethernet card, down on every card alike) is not a fault."""

from __future__ import annotations

import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gpuvet import knowledge
from gpuvet.backends.nic_readings import (
    ACTIVE,
    COUNTER_LIMITS,
    EFA_ERRORS,
    ETHTOOL_ERRORS,
    ETHTOOL_LINK_DOWNS,
    IB_ERROR_THRESHOLDS,
    NETDEV_ERRORS,
    RDMA_HW_ERRORS,
    RDMA_HW_MANY,
    UNKNOWN,
    Nic,
    NicPcie,
    NicPort,
    NicReadings,
)
from gpuvet.node import vendor_tools
from gpuvet.node.model import EndpointKind, Node
from gpuvet.node.nic_catalog import NicModel, find_nic_model

DRAINING = frozenset({"nic_port_down", "nic_missing"})  # critical (knowledge/faults.yaml); the rest warn
# what one PCIe lane carries per generation, Gb/s after line coding (PCI-SIG: Gen1-2 8b/10b, Gen3-5 128b/130b,
# Gen6 FLIT): the payload ceiling a NIC's trained link puts on its port
LANE_GBPS = {1: 2.0, 2: 4.0, 3: 7.877, 4: 15.754, 5: 31.508, 6: 60.5}


@dataclass(frozen=True)
class DeclaredNic:
    """A NIC the design says the node has (the spec's NIC endpoints)."""

    id: str
    model: NicModel | None


def declared_nics(design: Node | None) -> list[DeclaredNic]:
    """The NICs a design declares, each with its model where it names one."""
    if design is None:
        return []
    return [DeclaredNic(e.id, find_nic_model(e.model)) for e in design.endpoints if e.kind is EndpointKind.NIC]


@dataclass(frozen=True)
class NicVerdict:
    kind: str  # nic_missing, nic_port_down(_undeclared), nic_rate_low, peer_memory_missing, nccl_device_absent, nic_far
    nic: str | None
    reason: str
    fix: str
    # its subject, so that two ports (two cards) are two findings, never one: the port ('mlx5_3 port 1'), the card
    # of a PCIe verdict ('mlx5_0 (0000:3b:00.0)'), or nic_far's module far from its NIC
    module: str | None = None


def _label(nic: Nic, port: NicPort) -> str:
    """'mlx5_0 port 1'; a port 0 is a capture's that named no port (an HCA's ports count from 1)."""
    return nic.device if port.port == 0 else f"{nic.device} port {port.port}"


def _design_rate(nic: Nic, port: NicPort, declared: NicModel | None, peers: Sequence[tuple[Nic, NicPort]]
                 ) -> tuple[float | None, str]:
    """(Gb/s, what it rests on): the declared model's rate, else the same model's other ports (two or
    more). The catalog alone is no design: one device id covers cards of several speeds (a ConnectX-7
    runs at 400 or 200 Gb/s), so it gives only a floor: an Ethernet port below the slowest speed its model
    runs at (a ConnectX-6 Dx at 2.5 Gb/s) is below any design."""
    if declared is not None:
        return float(declared.rate_gbps), f"{declared.name}, declared"
    others = [p.rate_gbps for n, p in peers if n.hca_type == nic.hca_type and (n, p) != (nic, port)
              and n.firmware == nic.firmware and p.link_layer == port.link_layer and p.rate_gbps is not None]
    model = find_nic_model(nic.hca_type)
    basis = f"its {model.name} peers on the node" if model else "its peers on the node"
    # the peers' median: one faster port (a different card's speed) must not make every other port "slow"; peers
    # only of a model the listing names (ibstatus names none: a 200 Gb/s card beside 400 Gb/s ones may be another
    # card, another role), and of the same firmware
    if len(others) >= 2 and nic.hca_type is not None:
        return float(statistics.median(others)), basis
    ethernet = port.link_layer == "Ethernet" or model is not None and model.link_layers == ("Ethernet",)
    if model is not None and model.slowest_eth_gbps is not None and ethernet:
        return float(model.slowest_eth_gbps), f"no {model.name} runs Ethernet slower, per its driver's release notes"
    return None, ""


def _expected_up(nic: Nic, port: NicPort, declared: bool, peers: Sequence[tuple[Nic, NicPort]]) -> bool:
    """Up unless it is an Ethernet port switched off (physical Disabled) that no card of its model
    has up: the unused second port of a dual-port card (a card of no known model has no such peer: rdma
    link names none; its own sibling function, _siblings, is the same card, not another). InfiniBand ports,
    ports of unknown link layer and declared NICs are expected up."""
    if declared or port.link_layer != "Ethernet" or port.phys_state != "Disabled":
        return True
    return nic.hca_type is not None and any(p.port == port.port and p.state == ACTIVE and n.hca_type == nic.hca_type
                                            and _same_function(n, nic) and not _siblings(n, nic) for n, p in peers)


def _off_fabric(port: NicPort, peers: Sequence[tuple[Nic, NicPort]]) -> bool:
    """An Ethernet port switched off (physical Disabled) on a node whose listing holds InfiniBand ports up: they are
    its fabric, an Ethernet port beside them (front-end, storage) no design names is not needed by it (issue 46:
    gpud's 'some down' H100, ConnectX-6 Dx ports off beside 8 NDR rails Active). With no InfiniBand port up the
    fabric itself is down and nothing tells which ports the node uses: each port down is judged (fresh_u's
    ibstatus, NCCL failing on a node whose IB and Ethernet ports are all DOWN)."""
    return (port.link_layer == "Ethernet" and port.phys_state == "Disabled"
            and any(p.link_layer == "InfiniBand" and p.state == ACTIVE for _, p in peers))


def _card_up(nic: Nic, peers: Sequence[tuple[Nic, NicPort]]) -> bool:
    """A port of the card this device is on is Active (its own other port, or mlx5's sibling function: the same
    model, a node GUID one or two apart): the Disabled port is that card's unused one. In a captured listing a card
    none of whose ports is up (mlx5_0 and mlx5_1 both Disabled) is no such case: its ports warn (R7C)."""
    return any(p.state == ACTIVE and (n is nic or _siblings(n, nic)) for n, p in peers)


def _siblings(a: Nic, b: Nic) -> bool:
    """Two functions of one card: their bus ids, rdma-core's names ('roceP2p1s0f0'/'…f1') or netdevs ('ens1f0np0'/
    'ens1f1np1') but for the function, or node GUIDs 1-3 apart (ibstat's '0x8e84…2550', rdma dev's '8e84:…:2551');
    a model either tool left unsaid does not tell two functions apart."""
    if a is b or (a.hca_type is not None and b.hca_type is not None and a.hca_type != b.hca_type):
        return False
    if _card_keys(a) & _card_keys(b):
        return True
    try:
        ga, gb = (int((n.node_guid or "x").removeprefix("0x").replace(":", ""), 16) for n in (a, b))
    except ValueError:
        return False
    return 0 < abs(ga - gb) <= 3


_CARD = re.compile(r"^(?:(roce\w*?s[0-9a-f]{1,2})f[0-7]|(\w+?\d)f[0-7](?:np[0-7])?|([0-9a-fA-F:]{7,12})\.[0-7])$")


def _card_keys(nic: Nic) -> set[str]:
    """The card a device is a function of, by each name it has with the function left out."""
    return {m.group(0)[: m.end(1) if m.group(1) else m.end(2) if m.group(2) else m.end(3)]
            for name in (nic.device, nic.bus_id or "", *nic.netdevs) if (m := _CARD.match(name))}


_FUNCTION = re.compile(r"(?:^roce\w*?s[0-9a-f]{1,2}f|^[0-9a-fA-F:]{7,12}\.)([0-7])$")


def _same_function(a: Nic, b: Nic) -> bool:
    """Whether two devices are the same PCI function of their cards (or either's is not known)."""
    fa, fb = _function(a), _function(b)
    return fa is None or fb is None or fa == fb


def _function(nic: Nic) -> str | None:
    """The PCI function a RoCE device is (its bus id's, or its name's: rdma-core names it by its address,
    'roceP2p1s0f1'): mlx5 gives each physical port of a card a function and a one-port device of its own, so a card's
    second port is 'port 1' of function 1 and only another card's function 1 up says that port's rail is used."""
    found = _FUNCTION.search(nic.bus_id or "") or _FUNCTION.search(nic.device)
    return found.group(1) if found else None


def _peers_up(nic: Nic, port: NicPort, peers: Sequence[tuple[Nic, NicPort]]) -> bool:
    """Another HCA of the same known model has this port (its number, its link layer) Active: the node uses that
    model's rail (a dual-port card's second port unplugged on every card has no such peer)."""
    return nic.hca_type is not None and any(
        n is not nic and n.hca_type == nic.hca_type and p.port == port.port and p.link_layer == port.link_layer
        and p.state == ACTIVE and _same_function(n, nic) for n, p in peers)


def summary(readings: NicReadings) -> str:
    """What a clear verdict saw: ports up at their design rate, and ports down that no design uses."""
    ports = [p for n in readings.nics for p in n.ports]
    up = sum(1 for p in ports if p.state == ACTIVE)
    unknown = sum(1 for p in ports if p.state == UNKNOWN)
    pairs = [(n, p) for n in readings.nics for p in n.ports]
    beside = sum(1 for p in ports if p.state not in (ACTIVE, UNKNOWN) and _off_fabric(p, pairs))
    off = len(ports) - up - unknown - beside
    more = (f"; {off} switched off, unused by any card of their model" if off else "") + \
        (f"; {beside} Ethernet port(s) switched off beside the InfiniBand fabric (no design says they are used)"
         if beside else "") + \
        (f"; {unknown} of unknown state (the listing does not say)" if unknown else "")
    return f"{len(readings.nics)} NIC(s), {up} port(s) up at their design rate{more}"


def judged(readings: NicReadings) -> bool:
    """Whether any port's state was read at all (ibdev2netdev alone reads none)."""
    return any(p.state != UNKNOWN for n in readings.nics for p in n.ports)


def ports(readings: NicReadings, declared: Sequence[DeclaredNic] = ()) -> list[NicVerdict]:
    """Ports down or slower than their design; NICs of the design that are not there."""
    out: list[NicVerdict] = []
    if len(readings.nics) < len(declared):
        missing = ", ".join(d.id for d in declared[len(readings.nics):])
        out.append(NicVerdict("nic_missing", None, f"{len(readings.nics)} of {len(declared)} NICs of the design "
                              f"found (not found: {missing})", "check `lspci | grep -i mellanox` and `ibv_devices`; "
                              "reseat the card or load its driver (mlx5_core, mlx5_ib)"))
    models = {i: d.model for i, d in enumerate(declared)}
    peers = [(n, p) for n in readings.nics for p in n.ports]
    for i, nic in enumerate(readings.nics):
        for port in nic.ports:
            out += _port(nic, port, models.get(i), i < len(declared), peers, required=not readings.captured)
    return out


def _port(nic: Nic, port: NicPort, model: NicModel | None, declared: bool, peers: Sequence[tuple[Nic, NicPort]],
          required: bool = True) -> list[NicVerdict]:
    """``required``: read on the node itself, whose HCAs are declared by their presence (a port down drains it)."""
    where = _label(nic, port)
    layer = "Ethernet" if port.link_layer == "Ethernet" else "InfiniBand"  # unknown: InfiniBand's words, the common case
    netdev = nic.netdevs[0] if nic.netdevs else "its netdev"
    look = vendor_tools.NIC_PORT_STATE[layer].format(dev=nic.device, netdev=netdev)
    if port.degraded:  # a fabric tool's own words that the link trained below what it could: its design
        return [NicVerdict("nic_rate_low", nic.device, f"{where}: {port.degraded}",
                           f"{look}; " + vendor_tools.NIC_RATE_FIX.format(dev=nic.device, port=port.port), where)]
    if port.state == UNKNOWN:  # a listing that does not say (ibdev2netdev's Up/Down is the netdev's)
        return []
    if port.state == ACTIVE and any(not s.startswith(ACTIVE + "/") for s in port.seen):  # read down, then up again
        return [NicVerdict("nic_errors", nic.device, f"{where} read {', then '.join(port.seen)}, then ACTIVE/"
                           f"{port.phys_state}: the link went down and came back while it was read", "", where)]
    if port.state != ACTIVE:
        if not _expected_up(nic, port, declared, peers) and (required or _card_up(nic, peers)):
            return []
        if not declared and _off_fabric(port, peers):
            return []
        state = f"{port.state}, physical {port.phys_state}" + (f"; read {', then '.join(port.seen)} before"
                                                                if port.seen else "") + _unswept(nic, port)
        # a port the design declares, or one of an HCA the node itself carries, is required: down, it drains the
        # node; in a captured fragment with no design the Active ports of its model beside it say the rail is
        # used (the peers inside the capture); a lone port, or one no Active peer shares the model of, warns
        # (knowledge/faults.yaml)
        kind = "nic_port_down" if declared or required or _peers_up(nic, port, peers) else "nic_port_down_undeclared"
        return [NicVerdict(kind, nic.device, f"{where} ({port.link_layer}) is {state}",
                           f"{look}; " + vendor_tools.NIC_PORT_DOWN_FIX[layer].format(state=state), where)]
    rate, basis = _design_rate(nic, port, model, peers)
    if rate is not None and port.rate_gbps is not None and port.rate_gbps < rate * 0.99:
        width = f" {port.width}" if port.width else ""
        return [NicVerdict("nic_rate_low", nic.device, f"{where} at {port.rate_gbps:g} Gb/s{width}, design "
                           f"{rate:g} Gb/s ({basis})",
                           f"{look}; " + vendor_tools.NIC_RATE_FIX.format(dev=nic.device, port=port.port), where)]
    return []


def _unswept(nic: Nic, port: NicPort) -> str:
    """INIT (or ARMED): the link trained and no subnet manager made the port ACTIVE (IBTA's port states)."""
    if port.state not in ("INIT", "ARMED"):
        return ""
    zero = nic.node_guid is not None and not nic.node_guid.replace("0x", "").strip("0:")
    return (": the link is up, no subnet manager has brought the port to ACTIVE"
            + ("; its node GUID reads zero" if zero else ""))


def counters_at_limit(readings: NicReadings) -> list[NicVerdict]:
    """Error counters read once: no rate without a second reading (watch's nic_errors judges the rise), but
    one that stands at its field's limit has saturated: at least that many errors, the rest uncounted."""
    out = []
    for nic in readings.nics:
        for port in nic.ports:
            full = [f"{name} {value}" for name, value in port.counters.items() if value == COUNTER_LIMITS.get(name)]
            if full:  # the knowledge base's action (an empty fix); the port as its subject: one finding per port
                out.append(NicVerdict("nic_counters_at_limit", nic.device, f"{_label(nic, port)}: "
                                      f"{', '.join(full)} (at the counter's limit)", "", _label(nic, port)))
    return out


def counters_over_threshold(readings: NicReadings) -> list[NicVerdict]:
    """A captured port's InfiniBand error counters, read once, past the counts infiniband-diags calls bad
    (IB_ERROR_THRESHOLDS: its error_thresholds file, as ibqueryerrors and ibcheckerrs judge a single reading), less
    those at their field's limit (counters_at_limit's); or a fabric tool's own words that they are (ibdiagnet's
    summary). A live node is judged by the counters' rise instead (watch)."""
    out = []
    for nic in readings.nics if readings.captured else ():
        for port in nic.ports:
            over = [f"{k} {v:,} (over {IB_ERROR_THRESHOLDS[k]})" for k, v in port.counters.items()
                    if v > IB_ERROR_THRESHOLDS.get(k, v) and v != COUNTER_LIMITS.get(k)]
            said = [port.errors_said] if port.errors_said else []
            if over or said:
                out.append(NicVerdict("nic_errors", nic.device, f"{_label(nic, port)}: " + "; ".join(
                    [*said, *([", ".join(over) + " (infiniband-diags' error_thresholds)"] if over else [])]), "",
                    _label(nic, port)))
    return out


# the data-centre NIC drivers whose cards size their PCIe link to one or two ports' rate (ConnectX, NetXtreme-E, E810):
# a card the PCI core's line names by one of them (captures/pcie_status.py) and that carries under half of what its
# own link is built for holds a port back; a quad-port gigabit card (igb's I350: x4 for four 1 Gb/s ports) does not
SIZED_DRIVERS = ("mlx5_core", "mlx4_core", "bnxt_en", "ice", "mqnic")  # R8C: Corundum's x16 for its 100G ports
LINK_DOWNS_MANY = 10  # link-down events since the driver loaded past a boot's, a cable's reseat and a switch's reboot


def ethtool_errors(readings: NicReadings) -> list[NicVerdict]:
    """An Ethernet port whose ethtool -S counters, read once, show what a healthy link never counts: CRC/FCS or
    symbol errors at the physical layer, or the link down LINK_DOWNS_MANY times or more since the driver loaded."""
    out = []
    for nic in readings.nics:
        for port in nic.ports:
            bad = [f"{k} {v:,}" for k, v in port.counters.items() if k in ETHTOOL_ERRORS and v > 0]
            bad += [f"{k} {v:,}" for k, v in port.counters.items() if k in ETHTOOL_LINK_DOWNS and v >= LINK_DOWNS_MANY]
            hw = [f"{k} {v:,}" for k, v in port.counters.items() if k in RDMA_HW_ERRORS and v > RDMA_HW_MANY]  # R3C
            netdev = [f"{k} {v:,}" for k, v in port.counters.items() if k in NETDEV_ERRORS and v > 0]
            efa = [f"{k} {v:,}" for k, v in port.counters.items() if k in EFA_ERRORS and v > 0]  # FX68E
            if efa and not (bad or hw or netdev):
                out.append(NicVerdict("nic_errors", nic.device, f"{_label(nic, port)}: {', '.join(efa)} (EFA "
                                      "hw_counters, since the driver loaded)", EFA_FIX, _label(nic, port)))
            elif bad or hw or netdev:
                said = [*([f"{', '.join(bad)} (ethtool -S, since the driver loaded)"] if bad else []),
                        *([f"{', '.join(hw)} (hw_counters: RDMA retransmits/lost packets)"] if hw else []),
                        *([f"{', '.join(netdev)} (ifconfig/ip -s link: frames damaged, since it came up)"]
                          if netdev else [])]
                out.append(NicVerdict("nic_errors", nic.device, f"{_label(nic, port)}: {'; '.join(said)}",
                                      RDMA_LOSS_FIX if hw and not bad else "", _label(nic, port)))
    return out


# R3C: what an RDMA port's retransmit and sequence errors point at first (a RoCE fabric dropping packets), then the link
RDMA_LOSS_FIX = ("the fabric lost RDMA packets (retransmit timeouts, sequence errors): on RoCE check the lossless class "
                 "first (PFC enabled on the priority RoCE traffic uses: mlnx_qos -i NETDEV, its ethtool -S "
                 "rx_prioN_packets; ECN/DCQCN on the NIC and the switch; the job's traffic class, NCCL_IB_TC); then the "
                 "link: mlxlink -d DEV -m -c -e for its BER, the cable and the switch port's counters")


# FX68E: what an EFA device's error counters point at (its driver's counters: efa_verbs.c)
EFA_FIX = ("EFA counted errors: cmds_err/no_completion_cmds are the device's admin queue (dmesg | grep efa; a device "
           "that stops answering is replaced by stopping and starting the instance); *_err on create/alloc/reg are "
           "verbs resources refused (ulimit -l, the number of QPs/MRs the job opens); rx_drops, retrans_timeout_events, "
           "unresponsive_remote_events and impaired_remote_conn_events are the fabric or a peer (the security group "
           "must allow all traffic to itself; fi_info -p efa on both ends; the peer instance's own counters)")


def peer_memory(readings: NicReadings, module_vendors: set[str]) -> list[NicVerdict]:
    """GPUDirect RDMA needs the peer-memory module where an RDMA port is up beside NVIDIA modules."""
    if "nvidia" not in module_vendors or not isinstance(readings.peer_memory, (str, type(None))):
        return []
    up = [n.device for n in readings.nics if any(p.state == ACTIVE for p in n.ports)]
    if readings.peer_memory is not None or not up:
        return []
    return [NicVerdict("peer_memory_missing", None, f"no peer-memory module (nvidia_peermem) loaded beside "
                       f"{len(up)} RDMA NIC(s) up ({', '.join(up[:4])}{' ...' if len(up) > 4 else ''}): GPUDirect "
                       "RDMA is off", vendor_tools.PEER_MEMORY_FIX["nvidia"])]


def _named(spec: str) -> tuple[list[str], bool]:
    """NCCL's list syntax: ``^`` excludes, ``=`` asks for exact names, else prefixes; ``:port``."""
    exact = spec.startswith("=")
    if spec.startswith(("^", "^=")):
        return [], exact
    body = spec.lstrip("=")
    return [item.split(":", 1)[0].strip() for item in body.split(",") if item.strip()], exact


def _absent(names: list[str], exact: bool, have: Sequence[str]) -> list[str]:
    return [n for n in names if not any(h == n if exact else h.startswith(n) for h in have)]


def nccl_environment(readings: NicReadings, env: Mapping[str, str]) -> list[NicVerdict]:
    """NCCL_IB_HCA / NCCL_SOCKET_IFNAME naming a device the node does not have: NCCL then falls back
    (to sockets, or another NIC) without failing, and the job runs slow."""
    out = []
    hca = env.get("NCCL_IB_HCA", "").strip()
    if hca:
        names, exact = _named(hca)
        absent = _absent(names, exact, [n.device for n in readings.nics])
        if absent:
            out.append(NicVerdict("nccl_device_absent", None, f"NCCL_IB_HCA={hca} names {', '.join(absent)}, which "
                                  "this node does not have", vendor_tools.NCCL_IB_HCA_FIX, "NCCL_IB_HCA"))
    ifname = env.get("NCCL_SOCKET_IFNAME", "").strip()
    if ifname and readings.interfaces is not None:
        names, exact = _named(ifname)
        absent = _absent(names, exact, readings.interfaces)
        if absent:
            out.append(NicVerdict("nccl_device_absent", None, f"NCCL_SOCKET_IFNAME={ifname} names "
                                  f"{', '.join(absent)}, which this node does not have",
                                  vendor_tools.NCCL_SOCKET_IFNAME_FIX, "NCCL_SOCKET_IFNAME"))
    return out


def pcie(readings: NicReadings) -> list[NicVerdict]:
    """A NIC whose PCIe link trained below its capability (a listing that gives both, lshca's LnkSta and
    LnkCap): a warning where the trained link carries less than its fastest port's rate, a note where not.
    With no port rate read (lspci alone) the fastest rate its model runs at (the catalog) is the bound."""
    out: list[NicVerdict] = []
    for nic in readings.nics:
        link = nic.pcie
        if link is None or not _below_cap(link):
            continue
        now = (f"Gen{link.gen} x{link.width}" if link.gen else f"x{link.width} (its generation not given: Gen"
               f"{link.gen_max} taken)") + f", capable of {f'Gen{link.gen_max} ' if link.gen_max else ''}x{link.width_max}"
        # no trained generation given: its capable one, the most the link carries
        carries = LANE_GBPS.get(link.gen or link.gen_max or 0, 0.0) * (link.width or 0)
        rate = max((p.rate_gbps for p in nic.ports if p.state == ACTIVE and p.rate_gbps is not None), default=None)
        where = f"{nic.device}{f' ({nic.bus_id})' if nic.bus_id else ''}"
        if rate is None and (unread := _rate_unread(nic, where, f"{where} PCIe {now}", carries)) is not None:
            out.append(unread)
        elif rate is not None and carries and carries < rate:
            out.append(NicVerdict("nic_pcie_limits_rate", nic.device, f"{where} PCIe {now}: carries ~{carries:.0f} "
                                  f"Gb/s, below its port's {rate:g} Gb/s",
                                  vendor_tools.NIC_PCIE_FIX.format(bus=nic.bus_id or "<bus id>"), where))
        else:
            said = f"carries ~{carries:.0f} Gb/s" + (f", above its port's {rate:g} Gb/s" if rate is not None else "")
            out.append(NicVerdict("nic_pcie_below_cap", nic.device, f"{where} PCIe {now} ({said})",
                                  knowledge.fault("nic_pcie_below_cap").action, where))
    return out


def _rate_unread(nic: Nic, where: str, said: str, carries: float) -> NicVerdict | None:
    """No port rate read: the model's fastest rate (the catalog; one device id covers slower cards too) above
    what the link carries may be limited; a model the catalog does not know can't be told; None where every
    card of the model fits (the note that it still carries the port's rate holds)."""
    model = find_nic_model(nic.hca_type) or find_nic_model(nic.device)
    if model is not None and carries >= model.rate_gbps:
        return None
    link = nic.pcie
    built = LANE_GBPS.get(link.gen_max or 0, 0.0) * (link.width_max or 0) if link is not None else 0.0
    if model is None and nic.device.split(" ")[0] in SIZED_DRIVERS and carries < built / 2:
        return NicVerdict("nic_pcie_may_limit_rate", nic.device, f"{said} (carries ~{carries:.0f} Gb/s, under half the "
                          f"~{built:.0f} Gb/s its own link is built for; no port rate read)",
                          knowledge.fault("nic_pcie_may_limit_rate").action, where)
    kind = "nic_pcie_may_limit_rate" if model is not None else "nic_pcie_rate_unread"
    fastest = f", below the {model.rate_gbps} Gb/s a {model.name} runs at" if model is not None else ""
    return NicVerdict(kind, nic.device, f"{said} (carries ~{carries:.0f} Gb/s{fastest}; no port rate read)",
                      knowledge.fault(kind).action, where)


def _below_cap(link: NicPcie) -> bool:
    gen_low = link.gen is not None and link.gen_max is not None and link.gen < link.gen_max
    width_low = link.width is not None and link.width_max is not None and link.width < link.width_max
    # a listing that gives the trained width alone (an older lshca's 'x8 >!<'): below its capable width is below
    return (gen_low or width_low) and link.width is not None and (link.gen is not None or width_low and bool(link.gen_max))
