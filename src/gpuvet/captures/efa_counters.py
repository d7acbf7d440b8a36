"""AWS EFA's own counters (issue 46, FX68E), the efa driver's hw_counters (Linux drivers/infiniband/hw/efa/
efa_verbs.c: EFA_DEFINE_DEVICE_STATS, EFA_DEFINE_PORT_STATS) as people paste them: ``name :value`` or ``name: value``
lines (a loop over ``/sys/class/infiniband/efa_0/ports/1/hw_counters/*``, ``rdma statistic show`` is rdma_tool's),
under a title naming whose they are (``client`` over a line of dashes, ``efa_0``). A block is EFA's when it holds a
name only EFA's driver uses (``cmds_err``, ``keep_alive_rcvd``, ``rdma_read_resp_bytes`` …): ENA's ethtool -S shares
``rx_drops`` and the byte counts.

Each block becomes a NIC port of unknown state carrying the error counters (EFA_ERRORS) it read: judged by
checks/nics.py where one is non-zero (the knowledge base's nic_errors), a block of zeros is clean. Traffic and
command counts (tx_pkts, completed_cmds, rdma_read_resp_bytes) are read, not judged."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuvet.backends.nic_readings import EFA_ERRORS, UNKNOWN, Nic, NicPort
from gpuvet.captures.nic_tools import NicLinesParse
from gpuvet.captures.text import Line

KIND = "EFA hw_counters"
EFA = "Elastic Fabric Adapter"  # the device these counters are of (AWS), its model in inventory
# the names only the efa driver gives (device stats, and its port stats no other RDMA driver names alike)
_OWN = frozenset(("submitted_cmds", "completed_cmds", "cmds_err", "no_completion_cmds", "keep_alive_rcvd",
                  "alloc_pd_err", "create_qp_err", "create_cq_err", "reg_mr_err", "alloc_ucontext_err",
                  "create_ah_err", "mmap_err", "rdma_read_wr_err", "rdma_read_resp_bytes", "rdma_write_wr_err",
                  "rdma_write_recv_bytes", "retrans_timeout_events", "unresponsive_remote_events",
                  "impaired_remote_conn_events"))
_PORT = frozenset(("tx_bytes", "tx_pkts", "rx_bytes", "rx_pkts", "rx_drops", "send_bytes", "send_wrs", "recv_bytes",
                   "recv_wrs", "rdma_read_wrs", "rdma_read_bytes", "rdma_write_wrs", "rdma_write_bytes",
                   "retrans_bytes", "retrans_pkts", "lifespan"))
NAMES = _OWN | _PORT

# 'cmds_err :0', 'cmds_err: 0', './cmds_err:0', a sysfs path's last part; the value a decimal count
_VALUE = re.compile(r"^\s{0,16}(?:\S{0,200}/)?([a-z_]{4,40})\s{0,8}[:=]?\s{0,8}(\d{1,20})\s*$")
_PATH_DEV = re.compile(r"/sys/class/infiniband/([\w.-]{1,64})/ports/(\d{1,3})/hw_counters/")
_TITLE = re.compile(r"^\s{0,16}([A-Za-z][\w .()-]{0,39}?):?\s*$")  # 'client', 'server', 'efa_0', 'node A'
_RULE = re.compile(r"^\s{0,16}[-=]{3,200}\s*$")
UNNAMED = "an EFA device (not named)"
MAX_BLOCKS = 256


@dataclass
class _Block:
    name: str
    values: dict[str, int] = field(default_factory=dict)
    lines: set[int] = field(default_factory=set)


EfaParse = NicLinesParse  # the NIC tools' record and the lines read (nic_tools.NicLinesParse)


def parse(lines: list[Line]) -> EfaParse:
    """Each block of EFA counters in ``lines`` as a NIC (its error counters on one port), and the lines read."""
    blocks = [b for b in _blocks(lines) if b.values.keys() & _OWN][:MAX_BLOCKS]
    if not blocks:
        return EfaParse()
    claimed = {n for b in blocks for n in b.lines}
    nics = [Nic(b.name, EFA, None, (NicPort(0 if b.name == UNNAMED else 1, UNKNOWN, UNKNOWN, None, None, UNKNOWN,
                                             {k: v for k, v in b.values.items() if k in EFA_ERRORS}),))
            for b in blocks]
    return EfaParse(nics=nics, kinds=[KIND], claimed=claimed, notes=[_said(b) for b in blocks])


def _blocks(lines: list[Line]) -> list[_Block]:
    """The counters, one block per title (or per sysfs device): a title is a short line before the counters, with the
    rules under it; a counter line with no title before it continues the block before."""
    blocks: list[_Block] = []
    title: str | None = None
    heads: set[int] = set()  # the title's lines and its rules, given to the block the next counter opens
    for ln in lines:
        t = ln.text
        if (m := _VALUE.match(t)) is not None and m.group(1) in NAMES:
            dev = _PATH_DEV.search(t) if "/sys/" in t else None
            name = dev.group(1) if dev else title
            if not blocks or (name is not None and name != blocks[-1].name) or (title is not None and not dev):
                blocks.append(_Block(name or UNNAMED, lines=heads))
            blocks[-1].values.setdefault(m.group(1), int(m.group(2)))
            blocks[-1].lines.add(ln.no)
            title, heads = None, set()
        elif _RULE.match(t) is not None:
            heads.add(ln.no)
        elif (m := _TITLE.match(t)) is not None and t.strip():
            title, heads = m.group(1).strip(), heads | {ln.no}
        elif t.strip():
            title, heads = None, set()
    return blocks


def _said(b: _Block) -> str:
    """One note per block: its error counters (zero or not), what it sent and received."""
    errors = {k: v for k, v in b.values.items() if k in EFA_ERRORS}
    bad = [f"{k} {v:,}" for k, v in errors.items() if v]
    traffic = ", ".join(f"{k} {b.values[k]:,}" for k in ("tx_pkts", "rx_pkts") if k in b.values)
    return (f"{KIND} of {b.name}: {len(errors)} error counter(s) read, "
            + (f"non-zero: {', '.join(bad)}" if bad else "all zero") + (f"; {traffic}" if traffic else ""))
