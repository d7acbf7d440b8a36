"""What is read of a node's network adapters (InfiniBand HCAs and RoCE NICs): each port's state,
rate and error counters, where the adapter sits on PCIe, and whether GPUDirect RDMA's peer-memory
module is loaded. Live from sysfs, simulated from the spec, or from captures."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuvet.backends.readings import Unavailable

# the counters that count faults (sysfs ports/N/counters; ibstat/perfquery call them the same)
ERROR_COUNTERS = ("symbol_error", "link_downed", "port_rcv_errors", "excessive_buffer_overrun_errors",
                  "link_error_recovery", "local_link_integrity_errors", "port_rcv_remote_physical_errors",
                  "port_xmit_discards")
# where each error counter stops: the width of its field in the InfiniBand PortCounters attribute (IBTA spec,
# PerfMgt): it saturates there and counts no further until cleared
COUNTER_LIMITS = {"symbol_error": 0xFFFF, "link_error_recovery": 0xFF, "link_downed": 0xFF, "port_rcv_errors": 0xFFFF,
                  "port_rcv_remote_physical_errors": 0xFFFF, "port_xmit_discards": 0xFFFF,
                  "local_link_integrity_errors": 0xF, "excessive_buffer_overrun_errors": 0xF}
# the counts past which infiniband-diags calls a port's physical-link error counter bad, read once: the thresholds its
# error_thresholds file suggests for ibqueryerrors (linux-rdma/rdma-core infiniband-diags/etc/error_thresholds, the
# values ibcheckerrs applied by default). Discards, switch relay, constraint and VL15 drops and PortXmitWait count
# congestion and routing, not the link: read, not judged here (checks/nics.counters_over_threshold)
IB_ERROR_THRESHOLDS = {"symbol_error": 10, "link_error_recovery": 10, "link_downed": 10, "port_rcv_errors": 10,
                       "local_link_integrity_errors": 10, "excessive_buffer_overrun_errors": 10,
                       "port_rcv_remote_physical_errors": 100}
# HPE Slingshot cxiberstat's corrected-codeword BER at or above which a NIC's link is judged (captures/fabric_tools):
# HPE gives no number (shs-docs net_diags/cxiberstat.md); 1e-8 sits between its normal run's worst NIC (4.6e-10) and
# its 'bad run' example (2.5e-6), twenty times above the first and 250 times below the second
SLINGSHOT_CCW_BER_LIMIT = 1e-8
# an Ethernet port's physical-layer error counters as ethtool -S names them (mlx5 en_stats.c's PPCNT 802.3 and
# physical-layer groups, bnxt_en's port stats, ice's, the generic netdev stats): a healthy link counts none of them
# (captures/ethtool.py; checks/nics.ethtool_errors)
ETHTOOL_ERRORS = ("rx_crc_errors_phy", "rx_symbol_err_phy", "rx_pcs_symbol_err_phy", "rx_fcs_err_frames",
                  "rx_crc_errors.nic", "rx_crc_errors", "rx_fcs_errors")
# an RDMA port's transport error counters, the driver's own (sysfs ports/N/hw_counters; mlx5: drivers/infiniband/hw/
# mlx5/counters.c): retransmit timeouts, sequence errors (lost packets), RNR retries exhausted, completions in error.
# Read once they count since the driver loaded: a peer process killed mid-job, a job's teardown and adaptive routing
# leave a few on a healthy fabric (AX3's rdma statistic test: 3 and 12 stay quiet); past RDMA_HW_MANY the fabric loses
# traffic (RoCE without a lossless priority, a bad link). gpuvet's figure, no vendor threshold exists for these
RDMA_HW_ERRORS = ("local_ack_timeout_err", "packet_seq_err", "out_of_sequence", "implied_nak_seq_err",
                  "rnr_nak_retry_err", "req_cqe_error", "resp_cqe_error")
RDMA_HW_MANY = 100
# AWS EFA's error counters, its driver's own (hw_counters; Linux drivers/infiniband/hw/efa/efa_verbs.c): admin commands
# failed or never completed, verbs resources the device refused (a PD, QP, CQ, MR, AH, user context, mmap), packets
# dropped on receive, RDMA reads and writes failed, retransmit timeouts, remote peers unresponsive or impaired. A healthy
# device counts none (issue 46, FX68E: captures/efa_counters.py; checks/nics.ethtool_errors judges any above zero)
EFA_ERRORS = ("cmds_err", "no_completion_cmds", "alloc_pd_err", "create_qp_err", "create_cq_err", "reg_mr_err",
              "alloc_ucontext_err", "create_ah_err", "mmap_err", "rx_drops", "rdma_read_wr_err", "rdma_write_wr_err",
              "retrans_timeout_events", "unresponsive_remote_events", "impaired_remote_conn_events")
# an interface's kernel counters as ifconfig and ip -s link print them (captures/netdev_stats.py): frames received or
# sent in error; kept only on a bond, its slaves and IPoIB interfaces
NETDEV_ERRORS = ("RX errors", "TX errors")
ETHTOOL_LINK_DOWNS = ("link_down_events_phy", "link_down_events")  # the link going down since the driver loaded
# the traffic counters, in 4-byte units as sysfs keeps them (port_xmit_data × 4 = bytes)
TRAFFIC_COUNTERS = ("port_xmit_data", "port_rcv_data")
ACTIVE = "ACTIVE"
UNKNOWN = "unknown"  # the listing does not say
LINK_UP = "LinkUp"


@dataclass(frozen=True)
class NicPort:
    port: int
    state: str  # ACTIVE, DOWN, INIT, ARMED (the logical state, without sysfs' "4: ")
    phys_state: str  # LinkUp, Polling, Disabled, … (without "5: ")
    rate_gbps: float | None  # what the port runs at now
    width: str | None  # "4X"
    link_layer: str  # InfiniBand or Ethernet
    counters: dict[str, int] = field(default_factory=dict)  # error counters read (absent: not read)
    traffic: dict[str, int] = field(default_factory=dict)  # TRAFFIC_COUNTERS read, 4-byte units
    # a capture that read the port more than once (rdma link run again): its earlier states, oldest first ('DOWN/Polling')
    seen: tuple[str, ...] = ()
    # a fabric tool's own words that the link trained below what it could (iblinkinfo's 'Could be 4X', ibdiagnet's
    # 'Unexpected width', a link below the fabric's other links in ibnetdiscover): the design is the tool's
    degraded: str | None = None
    # a fabric tool's own words that the port's errors passed its thresholds where it gives no counter (ibdiagnet's
    # summary: 'Port Counters' with errors)
    errors_said: str | None = None


@dataclass(frozen=True)
class Nic:
    device: str  # mlx5_0
    hca_type: str | None  # MT4129: names the model (node/nic_catalog.py)
    bus_id: str | None
    ports: tuple[NicPort, ...]
    firmware: str | None = None
    node_guid: str | None = None
    netdevs: tuple[str, ...] = ()
    numa_node: int | None = None
    read_from: str | None = None  # where this device was read, where it differs by device (a capture file)
    pcie: NicPcie | None = None  # the card's own PCIe link, where a listing gives it (lshca's LnkSta/LnkCap)
    board_id: str | None = None  # the card's PSID as printed (MT_0000000838): which firmware image it takes


@dataclass(frozen=True)
class NicPcie:
    """A NIC's PCIe link as trained and as capable (generation and lanes); None where not given."""

    gen: int | None
    width: int | None
    gen_max: int | None
    width_max: int | None


@dataclass(frozen=True)
class NicReadings:
    nics: tuple[Nic, ...]
    peer_memory: str | None | Unavailable  # the module loaded (nvidia_peermem, nv_peer_mem), None: none
    source: str  # "sysfs", "simulated", a capture's name
    interfaces: tuple[str, ...] | None = None  # every network interface (/sys/class/net); None: not read
    # a captured fragment (doctor --from): its node's design is unknown, so a NIC listed is not one the node must
    # have up; read on the node itself (sysfs, the simulated node) an HCA present is declared by its presence
    captured: bool = False
