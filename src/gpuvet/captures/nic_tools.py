"""The RDMA tools' listings as people paste them: ``ibstat`` (CA 'mlx5_0' / Port 1: / State: Active),
``ibv_devinfo`` (-v; hca_id: / port: / state: PORT_ACTIVE (4)), ``ibdev2netdev`` (mlx5_0 port 1 ==>
ib0 (Up)) and ``lshca``'s table (PCI_addr | RDMA | Net | Numa | … | LnkCapWidth | LnkStaWidth |
HCA_Type, read by its header's column names, whichever columns a version prints). Each becomes the
same NIC record a live node's sysfs gives (backends/nic_readings.py), so a captured node's NICs are
judged as a live node's are. A device listed by two tools is one device (ibstat's and ibv_devinfo's
readings merged, the first tool's kept where both have one)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from gpuvet.backends.nic_readings import UNKNOWN, Nic, NicPcie, NicPort
from gpuvet.captures import mlxlink
from gpuvet.captures.pcie_values import generation_fault, width_fault
from gpuvet.captures.text import Line
from gpuvet.errors import CaptureError

_IBSTAT_CA = re.compile(r"^CA '([\w.-]{1,64})'\s*$")
_IBV_HCA = re.compile(r"^\s*hca_id:\s*([\w.-]{1,64})\s*$")
_IBV_PORT = re.compile(r"^\s*port:\s*(\d{1,3})\s*$")
_IBSTATUS = re.compile(r"^Infiniband device '([\w.-]{1,64})' port (\d{1,3}) status:\s*$")  # ibstatus' block head
_GBSEC = re.compile(r"^(\d+(?:\.\d+)?)\s*Gb/sec(?:\s*\((\d+X)[^)]*\))?")
_IBSTAT_PORT = re.compile(r"^\s*Port (\d{1,3}):\s*$")  # a poster's paste may have lost the indentation
_KEY = re.compile(r"^\s*([A-Za-z_][\w ]{0,40}?):\s*(.*?)\s*$")
# `ibdev2netdev` (also through `column -t`, with a trailing comment): its Up/Down is the netdev's state
# (IPoIB reads Down on a pure InfiniBand fabric), never the RDMA port's
_IBDEV2NETDEV = re.compile(r"^([\w.-]{1,64})\s+port\s+(\d{1,3})\s+==>\s+([\w.@-]{1,64})\s+\((Up|Down)\)\s*(#.*)?$")
_SPEED = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*Gbps")
_WIDTH = re.compile(r"^(\d+X)")
# ibv_devinfo's port_state words -> sysfs' (PORT_ACTIVE (4) -> ACTIVE), phys_state LINK_UP (5) -> LinkUp
_PHYS = {"LINK_UP": "LinkUp", "POLLING": "Polling", "DISABLED": "Disabled", "SLEEP": "Sleep",
         "PORT_CONFIGURATION_TRAINING": "PortConfigurationTraining", "LINK_ERROR_RECOVERY": "LinkErrorRecovery"}
MAX_NICS = 256
# ethtool's views of an Ethernet port (captures/ethtool.py, read beside these): its block heads, -i's bus line, its
# command line, a grep'd error counter's name (mlx5's '_phy', ice's '.nic', bnxt_en's FCS, the netdev's CRC)
ETHTOOL_MARKS = ("NIC statistics:", "Link detected:", "bus-info:", "Settings for ", "ethtool", "_phy:", ".nic:",
                 "rx_fcs_err", "rx_crc_errors", "Transceiver codes", "Module temperature", "Laser bias current")  # -m
# the RDMA fabric's own tools (captures/ib_fabric.py), the words one of which each line their readers read holds:
# rdma_tool's (a link line's states, a statistic or resource line's device after 'link ' by the RDMA drivers' device
# names, rdma dev's and resource's, -j's, -d's caps, ibv_devices', sminfo's), ib_diags' (iblinkinfo's, ibnetdiscover's,
# ibqueryerrors', ibcheckerrors'; -p's unconnected rows are not read) and ibdiagnet's (an old summary's rows: the lines
# under its head)
_DRIVERS = ("mlx", "irdma", "bnxt_re", "rxe", "siw", "efa", "hfi1", "qib", "qedr", "ionic", "erdma", "hns", "mana",
            "rocep", "ibp", "vmw_pvrdma", "cxgb4", "ocrdma", "usnic", "i40iw")
RDMA_WORDS = ("physical_state", "subnet_prefix", *(f"link {d}" for d in _DRIVERS), "lqpn", "cm-idn", "node_type", "cm_id",
              "ifname", "caps: <", "node GUID", "sminfo")
IB_DIAGS_WORDS = ("==(", '"S-', '"H-', '"R-', "vendid=", "devid=", "guid=0x", "# Topology", "# Initiated", "# Reported",
                  "Errors for", "Data Counters for", "GUID 0x", "##", "#warn: counter", "Error check on lid",
                  "# Checked", "Switch:", "CA:", "Router:", " - SW ", " - CA ", " - RT ")
IBDIAGNET_WORDS = ("-E-", "-W-", "-I-", "STAGE")
FABRIC_MARKS = (*RDMA_WORDS, *IB_DIAGS_WORDS, *IBDIAGNET_WORDS)
# FX68E: libfabric's fi_info (captures/fi_info.py): the default form's provider and version lines, -v's prov_name and
# head, -l's version lines, its command line; AWS EFA's hw_counters (captures/efa_counters.py): each counter line holds
# one of its names' parts
FI_INFO_MARKS = ("provider:", "prov_name:", "fi_info", "version:")
EFA_MARKS = ("_cmds", "_err", "_bytes", "_pkts", "_wrs", "_drops", "_events", "keep_alive", "lifespan")
# FX68E: lspci's network adapter line, mstconfig/mlxconfig query's device block and refusal (captures/nic_pci.py)
PCI_MARKS = (" controller", "Device #", "-E- Unsupported device", "mstconfig", "mlxconfig")
MAX_NUMA = 1023  # Linux numbers NUMA nodes below MAX_NUMNODES (1024 at most)
# lshca's table: a '|'-separated header naming the PCI address and the RDMA device; each row starts with a bus id
_LSHCA_BDF = re.compile(r"^(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")
# 'x16 G3*': width, generation, lshca's mark of a degraded link; an older lshca's LnkStaWidth gives the width alone,
# marked '>!<' where it is below LnkCapWidth ('x8 >!<')
_LSHCA_LINK = re.compile(r"x(\d{1,2})(?:\s*G(\d)(\*)?|\s*>!<|\s*$)")
# lshca's LnkStat cell: the RDMA port's logical state, sysfs' words shortened ('actv', 'down', 'init', 'armd')
_LSHCA_STATE = {"actv": "ACTIVE", "active": "ACTIVE", "down": "DOWN", "init": "INIT", "armd": "ARMED", "armed": "ARMED"}
_LSHCA_FW = re.compile(r"^\s*FW:\s*(\S+)")
_MST_HEAD = re.compile(r"^\s*DEVICE_TYPE\s+MST\s+PCI\b")  # mst status -v's PCI devices table


@dataclass
class _Port:
    port: int
    values: dict[str, str] = field(default_factory=dict)


@dataclass
class _Device:
    name: str
    values: dict[str, str] = field(default_factory=dict)
    ports: dict[int, _Port] = field(default_factory=dict)


@dataclass
class NicToolsParse:
    nics: list[Nic] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    netdevs: dict[tuple[str, int], tuple[str, bool]] = field(default_factory=dict)  # ibdev2netdev
    notes: list[str] = field(default_factory=list)  # what a listing says beside its devices (fi_info's providers, FX68E)



@dataclass
class NicLinesParse(NicToolsParse):
    """A NIC tool's record added beside the NIC tools' (formats.py), with the lines its reader read."""

    claimed: set[int] = field(default_factory=set)

def _blocks(lines: list[Line], head: re.Pattern[str], port: re.Pattern[str],
            unnamed: str | None = None) -> tuple[list[_Device], set[int]]:
    """Devices and their ports from an indented listing: a device line, keys, port lines, keys. ``unnamed``:
    the listing's first device is pasted without its device line (the keys before any are its own)."""
    current: _Device | None = _Device(unnamed) if unnamed else None
    devices: list[_Device] = [current] if current else []
    claimed: set[int] = set()
    where: _Port | None = None
    for ln in lines:
        if (m := head.match(ln.text)) is not None:
            current, where = _Device(m.group(1)), None
            devices.append(current)
        elif current is not None and (m := port.match(ln.text)) is not None:
            where = current.ports.setdefault(int(m.group(1)), _Port(int(m.group(1))))
        elif current is not None and (m := _KEY.match(ln.text)) is not None:
            target = where.values if where is not None else current.values
            target.setdefault(m.group(1).strip().lower(), m.group(2))
        elif current is not None and ln.text[:1] in (" ", "\t"):  # a line of the block read as is (GID[ 0]: …)
            pass
        elif current is not None and ln.text.strip():
            current = where = None
            continue
        else:
            continue
        claimed.add(ln.no)
    return devices[:MAX_NICS], claimed


UNNAMED_CA = "unnamed CA"


def _unnamed_ca(lines: list[Line], claimed: set[int]) -> list[_Device]:
    """ibstat's port blocks pasted without their ``CA '…'`` line: a ``Port N:`` line whose keys hold both
    ``State`` and ``Physical state`` (ibstat's pair) is a port of an adapter the paste does not name."""
    device, taken = _Device(UNNAMED_CA), set[int]()
    port: _Port | None = None
    for ln in lines:
        if (m := _IBSTAT_PORT.match(ln.text)) is not None:
            port = _Port(int(m.group(1)))
            block = {ln.no}
        elif port is not None and (k := _KEY.match(ln.text)) is not None:
            port.values.setdefault(k.group(1).strip().lower(), k.group(2))
            block.add(ln.no)
        elif ln.text.strip():
            port = None
            continue
        if port is not None and {"state", "physical state"} <= port.values.keys():
            device.ports.setdefault(port.port, port)
            taken |= block
    claimed |= taken
    return [device] if device.ports else []


UNNAMED_HCA = "unnamed HCA"


def _unnamed_hca(lines: list[Line], claimed: set[int]) -> list[_Device]:
    """ibv_devinfo pasted without its first ``hca_id:`` line (a grep, a cut header): the keys before the first
    hca_id are an adapter the paste does not name, where a port of theirs reads ibv_devinfo's own state word
    (``PORT_ACTIVE (4)``, ``PORT_DOWN (1)``); nothing else is taken for it."""
    first = next((i for i, ln in enumerate(lines) if _IBV_HCA.match(ln.text)), len(lines))
    devices, taken = _blocks(lines[:first], _IBV_HCA, _IBV_PORT, unnamed=UNNAMED_HCA)
    if not any(p.values.get("state", "").startswith("PORT_") for d in devices[:1] for p in d.ports.values()):
        return []
    claimed |= taken
    return devices[:1]


def _word(text: str | None) -> str:
    """"Active" / "PORT_ACTIVE (4)" / "4: ACTIVE" -> ACTIVE; physical states as sysfs spells them."""
    if not text:
        return "unknown"
    word = re.sub(r"\s*\(\d+\)\s*$", "", text.split(":", 1)[-1].strip())
    word = "INIT" if word == "Initializing" else word.removeprefix("PORT_")  # ibstat's name of INIT (ibstat.c)
    return _PHYS.get(word.upper(), word.upper() if word.upper() in ("ACTIVE", "DOWN", "INIT", "ARMED") else word)


def _state(text: str | None) -> str:
    """A port's logical state; a word none of IBTA's (a value the paste cut mid-word, 'State: Acti') is unknown."""
    word = _word(text)
    return word if word in ("ACTIVE", "DOWN", "INIT", "ARMED") else UNKNOWN


def _ibstat_port(p: _Port) -> NicPort:
    rate = p.values.get("rate")
    return NicPort(p.port, _state(p.values.get("state")), _word(p.values.get("physical state")),
                   float(rate) if rate and re.fullmatch(r"\d+(\.\d+)?", rate) else None, None,
                   p.values.get("link layer", "unknown"))


def _ibv_port(p: _Port) -> NicPort:
    width = _WIDTH.match(p.values.get("active_width", ""))
    speed = _SPEED.search(p.values.get("active_speed", ""))
    lanes = int(width.group(1)[:-1]) if width else None
    rate = float(speed.group(1)) * lanes if speed and lanes else None  # per lane times the width
    return NicPort(p.port, _state(p.values.get("state")), _word(p.values.get("phys_state")), rate,
                   width.group(1) if width else None, p.values.get("link_layer", "unknown"))


def _ibv_type(values: dict[str, str]) -> str | None:
    part = values.get("vendor_part_id", "").strip()
    return f"MT{part}" if part.isdigit() else None


def parse(lines: list[Line]) -> tuple[NicToolsParse, set[int]]:
    out = NicToolsParse()
    ibstat, claimed = _blocks(lines, _IBSTAT_CA, _IBSTAT_PORT)
    ibstat = ibstat or _unnamed_ca(lines, claimed)
    ibv, more = _blocks([ln for ln in lines if ln.no not in claimed], _IBV_HCA, _IBV_PORT)
    claimed |= more
    ibv = _unnamed_hca([ln for ln in lines if ln.no not in claimed], claimed) + ibv
    found: dict[str, Nic] = {}
    for d in ibstat:
        found.setdefault(d.name, Nic(d.name, d.values.get("ca type"), None,
                                     tuple(_ibstat_port(p) for p in d.ports.values()), d.values.get("firmware version"),
                                     d.values.get("node guid")))
    for d in ibv:
        nic = Nic(d.name, _ibv_type(d.values), None, tuple(_ibv_port(p) for p in d.ports.values()),
                  d.values.get("fw_ver"), d.values.get("node_guid"))
        found[d.name] = _merge(found[d.name], nic) if d.name in found else nic
    for name, nic in _ibstatus([ln for ln in lines if ln.no not in claimed], claimed).items():
        found[name] = _merge(found[name], nic) if name in found else nic
        out.kinds += [] if "ibstatus" in out.kinds else ["ibstatus"]
    for name, nic in _lshca([ln for ln in lines if ln.no not in claimed], claimed).items():
        found[name] = _merge(found[name], nic) if name in found else nic
        out.kinds += [] if "lshca" in out.kinds else ["lshca"]
    for name, nic in _mst_status([ln for ln in lines if ln.no not in claimed], claimed).items():
        found[name] = _merge(found[name], nic) if name in found else nic
        out.kinds += [] if "mst status" in out.kinds else ["mst status"]
    for name, nic in _device_box([ln for ln in lines if ln.no not in claimed], claimed).items():
        found[name] = _merge(found[name], nic) if name in found else nic
        out.kinds += [] if "device table" in out.kinds else ["device table"]
    for name, nic in mlxlink.parse([ln for ln in lines if ln.no not in claimed], claimed).items():
        found[name] = _merge(found[name], nic) if name in found else nic
        out.kinds += [] if "mlxlink" in out.kinds else ["mlxlink"]
    for ln in lines:
        if ln.no not in claimed and (m := _IBDEV2NETDEV.match(ln.text.strip())) is not None:
            out.netdevs[(m.group(1), int(m.group(2)))] = (m.group(3), m.group(4) == "Up")
            claimed.add(ln.no)
    out.kinds = [k for k, hit in (("ibstat", ibstat), ("ibv_devinfo", ibv), ("ibdev2netdev", out.netdevs)) if hit] + \
        out.kinds
    out.nics = [_with_netdevs(n, out.netdevs) for n in found.values()]
    for (dev, port), (netdev, up) in out.netdevs.items():
        if dev not in found:  # ibdev2netdev alone: the device, its port and netdev; the port's state rarely
            out.nics.append(Nic(dev, None, None, (_netdev_port(dev, port, netdev, up, out.netdevs),),
                                netdevs=(netdev,)))
    return out, claimed


def _ibstatus(lines: list[Line], claimed: set[int]) -> dict[str, Nic]:
    """`ibstatus` blocks (infiniband-diags' script over sysfs): one per device and port, its keys indented
    (state: 4: ACTIVE, phys state: 5: LinkUp, rate: 100 Gb/sec (4X EDR), link_layer: Ethernet)."""
    blocks: list[tuple[str, int, dict[str, str]]] = []
    for ln in lines:
        if (m := _IBSTATUS.match(ln.text.strip())) is not None:
            blocks.append((m.group(1), int(m.group(2)), {}))
        elif blocks and blocks[-1][0] and ln.text[:1] in (" ", "\t") and (k := _KEY.match(ln.text)) is not None:
            blocks[-1][2].setdefault(k.group(1).strip().lower(), k.group(2))
        elif ln.text.strip() and blocks and blocks[-1][0]:
            blocks.append(("", 0, {}))  # the listing ended: what follows is not a block's
            continue
        else:
            continue
        claimed.add(ln.no)
    out: dict[str, Nic] = {}
    for device, port, v in blocks:
        if not device:
            continue
        rate = _GBSEC.match(v.get("rate", ""))
        nic_port = NicPort(port, _word(v.get("state")), _word(v.get("phys state")),
                           float(rate.group(1)) if rate else None, rate.group(2) if rate else None,
                           v.get("link_layer", "unknown"))
        nic = out.get(device) or Nic(device, None, None, ())
        out[device] = replace(nic, ports=(*nic.ports, nic_port))
    return out


def _merge(first: Nic, second: Nic) -> Nic:
    layers = {p.port: p.link_layer for p in second.ports if p.link_layer != UNKNOWN}
    theirs = {p.port for p in second.ports}
    ports = {p.port: p for p in second.ports} | {
        p.port: replace(p, link_layer=layers.get(p.port, p.link_layer)) if p.link_layer == UNKNOWN else p
        for p in first.ports if p.rate_gbps is not None or p.port not in theirs}  # or a port only the first read
    return replace(first, hca_type=first.hca_type or second.hca_type, firmware=first.firmware or second.firmware,
                   ports=tuple(ports[k] for k in sorted(ports)), bus_id=first.bus_id or second.bus_id,
                   numa_node=first.numa_node if first.numa_node is not None else second.numa_node,
                   netdevs=first.netdevs or second.netdevs, pcie=first.pcie or second.pcie,
                   board_id=first.board_id or second.board_id)


def _lshca(lines: list[Line], claimed: set[int]) -> dict[str, Nic]:
    """lshca's table rows, one device each: its bus id, RDMA name, netdev, NUMA node, HCA type and PCIe
    link (LnkStaWidth against LnkCapWidth); the firmware of the 'FW:' line above the table; the port's state where
    a LnkStat column gives it (an older lshca's). Its Rate column rounds fractional rates (2.5 -> 5): not read."""
    out: dict[str, Nic] = {}
    cols: list[str] = []
    firmware: str | None = None
    for ln in lines:
        cells = [c.strip() for c in ln.text.strip().strip("|").split("|")]
        lower = [c.lower().replace(" ", "_") for c in cells]
        if (fw := _LSHCA_FW.match(ln.text)) is not None:
            firmware = fw.group(1)
        elif len(cells) >= 3 and "rdma" in lower and any(c.startswith("pci") for c in lower):
            cols = lower
        elif cols and len(cells) == len(cols) and _LSHCA_BDF.match(cells[0]):
            row = dict(zip(cols, cells, strict=True))
            if nic := _lshca_nic(row, firmware, ln.no):
                out.setdefault(nic.device, nic)
        elif not cols or not set(ln.text.strip()) <= set("-=+| "):
            continue  # the table's rules ('----') are its own; other lines are not
        claimed.add(ln.no)
    return out


_BOX_KEYS = {"board id": "board_id", "firmware version": "firmware"}


def _device_box(lines: list[Line], claimed: set[int]) -> dict[str, Nic]:
    """A key | value box of RDMA devices (gpud's: '| Device | mlx5_0 |', '| Board ID | MT_0000000838 |',
    '| Firmware Version | 28.41.1000 |'), a column per device: each device's board id and firmware. The rows
    after the Device row are read while their cell count is the Device row's; port rows give no state here."""
    out: dict[str, Nic] = {}
    names: list[str] = []
    for ln in lines:
        cells = [c.strip() for c in ln.text.strip().split("|")] if ln.text.strip().startswith("|") else []
        cells = cells[1:-1] if len(cells) > 2 and cells[-1] == "" else []
        if cells[:1] == ["Device"] and all(re.fullmatch(r"mlx\d+_\d+|[a-z]+\w*_\d+", c) for c in cells[1:]) \
                and len(cells) > 1:
            names = cells[1:]
            out |= {n: Nic(n, None, None, (NicPort(1, UNKNOWN, UNKNOWN, None, None, UNKNOWN),)) for n in names}
        elif names and len(cells) == len(names) + 1 and (key := _BOX_KEYS.get(cells[0].lower())) is not None:
            for name, value in zip(names, cells[1:], strict=True):
                if re.fullmatch(r"[\w.-]{1,64}", value):
                    out[name] = replace(out[name], board_id=value) if key == "board_id" else \
                        replace(out[name], firmware=value)
        elif cells[:1] != [] and names and len(cells) == len(names) + 1:
            continue  # another row of the box (a port's name): nothing here to read
        else:
            names = [] if not set(ln.text.strip()) <= set("+-") else names
            continue
        claimed.add(ln.no)
    return out


def _mst_status(lines: list[Line], claimed: set[int]) -> dict[str, Nic]:
    """``mst status -v``'s PCI devices table (DEVICE_TYPE  MST  PCI  RDMA  NET  NUMA), read by its header's
    column positions (a device without a driver leaves RDMA and NET empty): each card's RDMA name (else its mst
    device), HCA type (the mt<id> of its mst device: mt4129 -> MT4129), bus id, netdev and NUMA node. It gives no
    port state: the ports are ibstat's."""
    out: dict[str, Nic] = {}
    starts: list[tuple[str, int]] = []
    for ln in lines:
        if _MST_HEAD.match(ln.text):
            starts = [(m.group(0).lower(), m.start()) for m in re.finditer(r"\S+", ln.text)]
            claimed.add(ln.no)
            continue
        if not starts or "/dev/mst/" not in ln.text:
            starts = starts if not ln.text.strip() or set(ln.text.strip()) <= set("-") else []
            continue
        ends = [at for _, at in starts[1:]] + [len(ln.text)]
        row = {name: ln.text[at:end].strip() for (name, at), end in zip(starts, ends, strict=True)}
        mst, rdma, numa = row.get("mst", ""), row.get("rdma", ""), row.get("numa", "")
        device = rdma if re.fullmatch(r"[\w.-]{1,64}", rdma) else mst.rsplit("/", 1)[-1]
        if not re.fullmatch(r"[\w.-]{1,64}", device):
            continue
        kind = re.search(r"/dev/mst/mt(\d{3,5})_", mst)
        net = row.get("net", "").removeprefix("net-")
        out.setdefault(device, Nic(device, f"MT{kind.group(1)}" if kind else row.get("device_type") or None,
                                   row.get("pci", "").upper() or None, (NicPort(1, UNKNOWN, UNKNOWN, None, None, UNKNOWN),),
                                   netdevs=(net,) if re.fullmatch(r"[\w.@-]{1,64}", net) else (),
                                   numa_node=int(numa) if numa.isdigit() and int(numa) <= MAX_NUMA else None))
        claimed.add(ln.no)
    return out


def _lshca_link(cell: str, column: str, line: int) -> tuple[int | None, int] | None:
    """'x16 G4' as (generation, width); a width or generation no PCIe link has is refused (exit 2)."""
    if (m := _LSHCA_LINK.search(cell)) is None:
        return None
    width, gen = int(m.group(1)), int(m.group(2)) if m.group(2) else None
    faults = [f for f in (width_fault(width), generation_fault(gen)) if f]
    if faults:
        raise CaptureError(f"lshca {column} {cell[:40]!r}: {'; '.join(faults)}", where=f"line {line}",
                           fix="give lshca's table as it printed it.")
    return gen, width


def _lshca_nic(row: dict[str, str], firmware: str | None, line: int) -> Nic | None:
    device = row.get("rdma", "")
    if not re.fullmatch(r"[\w.-]{1,64}", device):
        return None
    bus = next((v for k, v in row.items() if k.startswith("pci")), "")
    numa = row.get("numa", "")
    link = row.get("link", "").lower()
    layer = "Ethernet" if link.startswith("eth") else "InfiniBand" if link.startswith("ib") else UNKNOWN
    sta = _lshca_link(row.get("lnkstawidth", ""), "LnkStaWidth", line)
    cap = _lshca_link(row.get("lnkcapwidth", ""), "LnkCapWidth", line)
    pcie = NicPcie(sta[0] if sta else None, sta[1] if sta else None,
                   cap[0] if cap else None, cap[1] if cap else None) if sta or cap else None
    if numa.isdigit() and int(numa) > MAX_NUMA:
        raise CaptureError(f"lshca Numa {numa[:40]!r}: no NUMA node is numbered above {MAX_NUMA}",
                           where=f"line {line}", fix="give lshca's table as it printed it.")
    net = row.get("net", "")
    return Nic(device, row.get("hca_type") or None, bus.upper() or None,
               (NicPort(int(row["port"]) if row.get("port", "").isdigit() else 1,
                        _LSHCA_STATE.get(row.get("lnkstat", "").lower(), UNKNOWN), UNKNOWN, None, None, layer),),
               firmware, netdevs=(net,) if re.fullmatch(r"[\w.@-]{1,64}", net) else (),
               numa_node=int(numa) if numa.isdigit() else None, pcie=pcie)


def _netdev_layer(netdev: str) -> str:
    """The link layer a netdev's name gives: IPoIB's 'ib…', Ethernet's 'en…'/'eth…'; a renamed one ('net1') not."""
    return "InfiniBand" if netdev.startswith("ib") else "Ethernet" if netdev.startswith(("en", "eth")) else UNKNOWN


def _netdev_port(dev: str, port: int, netdev: str, up: bool, netdevs: dict[tuple[str, int], tuple[str, bool]]
                 ) -> NicPort:
    """A port ibdev2netdev alone lists: its (Up)/(Down) is the netdev's, so the port's state stays unknown, except
    an IPoIB netdev Down where another device's IPoIB netdev is Up in the same listing: the node runs IPoIB on
    that rail, and the port reads DOWN for the captured-port-down rule (issue 46, batch K). A lone Down, or all
    Down (no IPoIB on a pure InfiniBand fabric), says nothing; so does an Ethernet one."""
    layer = _netdev_layer(netdev)
    peers_up = any(u and _netdev_layer(n) == layer for (d, _), (n, u) in netdevs.items() if d != dev)
    if up or not peers_up or layer != "InfiniBand":  # an Ethernet card's second port Down is often unused
        return NicPort(port, UNKNOWN, UNKNOWN, None, None, UNKNOWN)
    return NicPort(port, "DOWN", UNKNOWN, None, None, layer)


def _with_netdevs(nic: Nic, netdevs: dict[tuple[str, int], tuple[str, bool]]) -> Nic:
    names = tuple(name for (dev, _), (name, _) in sorted(netdevs.items()) if dev == nic.device)
    return replace(nic, netdevs=names) if names else nic
