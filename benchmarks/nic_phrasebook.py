"""Issue 46 (PHRM): the NICs' own failure messages, read as a class. benchmarks/data/nic_phrasebook.json holds the
messages RDMA NIC drivers and tools print when a NIC, port, cable or link is wrong, each with its source (mlx5_core's
health poll, command interface, probe, events and carrier lines; the PCI core's link line; bnxt_en, ice; mlx5_ib's
completion errors; perftest's failures; ibstat's and ibv_devinfo's port states; ethtool -S's error counters and
ethtool's link), what an engineer reads in it (the cause, its severity) and healthy lines that must stay quiet (a
normal probe, link-up, a cable plugged).

Each message is set in the framings real captures show it in (dmesg's stamps, a journal's, the driver's own prefix with
the card's bus id and without it, quoted by a poster; a tool's output bare, under its header, quoted) and read by
``gpuvet doctor --from`` (in-process). A framing is counted right (the cause at its severity on the right NIC: its bus
id, its device name, or none where the text names none), severity or subject (the cause, at another severity or on
another subject), generic (another finding only), clear (read, no finding) or refused (exit 2); a healthy one clean,
false (a finding at warn or above) or refused; an 'other' message (an error line that says nothing of the card's
health alone) only read or refused.

    .venv/bin/python -m benchmarks.nic_phrasebook [--show severity,subject,generic,clear,refused,false]
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from benchmarks.support.phrasebook import healthy_said, print_faults, run, shown

DATA = Path(__file__).parent / "data" / "nic_phrasebook.json"
BUS, NETDEV, IBDEV, BNXT_BUS, ICE_BUS = "0000:3b:00.0", "enp59s0f0np0", "mlx5_0", "0000:17:00.0", "0000:31:00.0"
# the mlx5 macros that put the function, the line and the pid before the message (mlx5_core.h, mlx5_ib.h)
_PREFIXED = (
    "mlx5_core_err",
    "mlx5_core_warn",
    "mlx5_core_dbg",
    "mlx5_log",
    "mlx5_core_warn_rl",
    "mlx5_core_info_rl",
    "mlx5_core_err_rl",
    "mlx5_ib_warn",
)
NOT_NAMED = None  # the framing names no NIC: a finding's subject must say so (or be empty)


def _stamp(i: int) -> str:
    return f"[{8000 + i * 37:5d}.{123456 + i:06d}]"


def _journal(i: int) -> str:
    return f"Mar 03 10:{14 + i:02d}:03 gpu-node-07 kernel:"


@dataclass(frozen=True)
class Message:
    source: str
    path: str
    call: str
    func: str | None
    printed: str
    frame: str
    want: str | None  # a cause, None (healthy), or 'other'
    severity: str | None


def _body(m: Message) -> str:
    return f"{m.func}:{412}:(pid 0): {m.printed}" if m.call in _PREFIXED else m.printed


def _kernel(lines: list[str]) -> dict[str, str]:
    """A run of kernel lines with dmesg's stamps and a journal's."""
    return {
        "dmesg": "\n".join(f"{_stamp(i)} {t}" for i, t in enumerate(lines)),
        "journal": "\n".join(f"{_journal(i)} {t}" for i, t in enumerate(lines)),
    }


def _mlx5(m: Message) -> dict[str, tuple[str, str | None]]:
    body = _body(m)
    ok = f"mlx5_core {BUS}: firmware version: 28.39.1002"
    out: dict[str, tuple[str, str | None]] = {k: (v, BUS) for k, v in _kernel([ok, f"mlx5_core {BUS}: {body}"]).items()}
    out["no bus id"] = (f"{_stamp(1)} mlx5_core: {body}", NOT_NAMED)
    out["quoted"] = (f"After a few hours dmesg shows 'mlx5_core {BUS}: {body}' and the port is gone.", BUS)
    return out


def _carrier(m: Message) -> dict[str, tuple[str, str | None]]:
    """The netdev's carrier lines: up, then the message (lost), or up and down three times over (a flap)."""
    head, up, bus = {
        "bnxt_lost": (f"bnxt_en {BNXT_BUS} eth0:", "NIC Link is Up, 100000 Mbps full duplex, Flow control: none", BNXT_BUS),
        "ice_lost": (
            f"ice {ICE_BUS} ens1f0:",
            "NIC Link is up 100 Gbps Full Duplex, Requested FEC: RS-FEC, "
            "Negotiated FEC: RS-FEC, Autoneg Advertised: On, Autoneg Negotiated: True, Flow Control: "
            "None",
            ICE_BUS,
        ),
    }.get(m.frame, (f"mlx5_core {BUS} {NETDEV}:", "Link up", BUS))
    seq = [up, m.printed] * (3 if m.frame == "netdev_flap" else 1) + ([up] if m.frame == "netdev_flap" else [])
    return {k: (v, bus) for k, v in _kernel([f"{head} {t}" for t in seq]).items()}


def _simple(m: Message) -> dict[str, tuple[str, str | None]]:
    """One driver line after a healthy one of its card (netdev, bnxt_en, ice, the RDMA core's ibdev), and quoted."""
    head, bus, ok = {
        "netdev": (f"mlx5_core {BUS} {NETDEV}:", BUS, "renamed from eth0"),
        "bnxt": (f"bnxt_en {BNXT_BUS} eth0:", BNXT_BUS, "NIC Link is Up, 100000 Mbps full duplex, Flow control: none"),
        "ice": (
            f"ice {ICE_BUS}:",
            ICE_BUS,
            "The DDP package was successfully loaded: ICE OS Default Package version 1.3.30.0",
        ),
        "ice_netdev": (f"ice {ICE_BUS} ens1f0:", ICE_BUS, "renamed from eth0"),
        "ib": (f"infiniband {IBDEV}:", IBDEV, "ib_core: registered"),
    }[m.frame]
    body = _body(m)
    out: dict[str, tuple[str, str | None]] = {
        k: (v, bus)
        for k, v in _kernel([f"{head} {ok}" if m.frame != "ib" else f"{head} Port 1 link up", f"{head} {body}"]).items()
    }
    if m.frame == "ib":
        out["older prefix"] = (f"{_stamp(1)} {IBDEV}:{m.func}:412:(pid 0): {m.printed}", IBDEV)
    out["quoted"] = (f"Our node logs '{head} {body}' every few minutes.", bus)
    return out


def _watchdog(m: Message) -> dict[str, tuple[str, str | None]]:
    lines = [f"mlx5_core {BUS} {NETDEV}: Link up", "------------[ cut here ]------------", m.printed]
    out: dict[str, tuple[str, str | None]] = {k: (v, BUS) for k, v in _kernel(lines).items()}
    out["alone"] = (f"{_stamp(0)} {m.printed}", NETDEV)
    return out


_HEADER = """---------------------------------------------------------------------------------------
                    RDMA_Write BW Test
 Dual-port       : OFF		Device         : mlx5_0
 Number of qps   : 1		Transport type : IB
 Connection type : RC		Using SRQ      : OFF
 TX depth        : 128
 CQ Moderation   : 100
 Mtu             : 4096[B]
 Link type       : IB
 Max inline data : 0[B]
 rdma_cm QPs	 : OFF
 Data ex. method : Ethernet
---------------------------------------------------------------------------------------
 local address: LID 0x0b QPN 0x0417 PSN 0x9ad2d9 RKey 0x1fdfbc VAddr 0x007f3a1c5ff000
 remote address: LID 0x0c QPN 0x0418 PSN 0x5cb6f1 RKey 0x1fe0bd VAddr 0x007f19a8b6a000
---------------------------------------------------------------------------------------
"""


def _perftest(m: Message) -> dict[str, tuple[str, str | None]]:
    first = m.printed.strip().splitlines()[0]
    return {
        "bare": (m.printed, NOT_NAMED),
        "under its header": (_HEADER + m.printed, IBDEV),
        "quoted": (f"ib_write_bw to the other node fails with '{first.strip()}' every time.", NOT_NAMED),
    }


_IBSTAT = """CA '{dev}'
\tCA type: {ca}
\tNumber of ports: 1
\tFirmware version: 16.35.2000
\tHardware version: 0
\tNode GUID: 0x0c42a10300a1b2c3
\tSystem image GUID: 0x0c42a10300a1b2c3
\tPort 1:
\t\tState: {state}
\t\tPhysical state: {phys}
\t\tRate: {rate}
\t\tBase lid: 11
\t\tLMC: 0
\t\tSM lid: 1
\t\tCapability mask: 0x2651e848
\t\tPort GUID: 0x0c42a10300a1b2c3
\t\tLink layer: InfiniBand
"""
_DEVINFO = """hca_id:\t{dev}
\ttransport:\t\t\tInfiniBand (0)
\tfw_ver:\t\t\t\t16.35.2000
\tnode_guid:\t\t\t0c42:a103:00a1:b2c3
\tsys_image_guid:\t\t\t0c42:a103:00a1:b2c3
\tvendor_id:\t\t\t0x02c9
\tvendor_part_id:\t\t\t4119
\thw_ver:\t\t\t\t0x0
\tboard_id:\t\t\tMT_0000000008
\tphys_port_cnt:\t\t\t1
\t\tport:\t1
\t\t\tstate:\t\t\t{state}
\t\t\tmax_mtu:\t\t4096 (5)
\t\t\tactive_mtu:\t\t4096 (5)
\t\t\tsm_lid:\t\t\t1
\t\t\tport_lid:\t\t11
\t\t\tport_lmc:\t\t0x00
\t\t\tlink_layer:\t\tInfiniBand
\t\t\tactive_width:\t\t{width}
\t\t\tactive_speed:\t\t{speed}
\t\t\tphys_state:\t\t{phys}
"""


def _listing(m: Message) -> dict[str, tuple[str, str | None]]:
    if m.frame == "ibstat":
        state, phys, rate, ca = m.printed.split("|")
        text = _IBSTAT.format(dev=IBDEV, ca=ca, state=state, phys=phys, rate=rate)
        if m.want == "nic_rate_low":  # the design is its peers' (the catalog alone is none: checks/nics.py)
            text += "".join(_IBSTAT.format(dev=f"mlx5_{i}", ca=ca, state=state, phys=phys, rate=400) for i in (1, 2))
    else:
        state, phys, width, speed, _ = m.printed.split("|")
        text = _DEVINFO.format(dev=IBDEV, state=state, phys=phys, width=width, speed=speed)
    return {"listing": (text, IBDEV), "with its prompt": (f"$ {m.frame}\n{text}", IBDEV)}


_STATS = [
    "rx_packets: 845320277",
    "rx_bytes: 2195783498134",
    "tx_packets: 896117891",
    "tx_bytes: 2655285206479",
    "rx_discards_phy: 0",
    "rx_crc_errors_phy: 0",
    "rx_symbol_err_phy: 0",
    "rx_pcs_symbol_err_phy: 0",
    "rx_corrected_bits_phy: 0",
    "link_down_events_phy: 0",
    "rx_out_of_buffer: 0",
]
_INFO = f"driver: mlx5_core\nversion: 6.8.0-49-generic\nfirmware-version: 28.39.1002 (MT_0000000838)\nbus-info: {BUS}\n"


def _ethtool(m: Message) -> dict[str, tuple[str, str | None]]:
    if m.frame == "ethtool":
        text = (
            f"Settings for {NETDEV}:\n\tSupported ports: [ FIBRE ]\n\tSupported link modes:   100000baseCR4/Full\n"
            f"\tSpeed: {'100000Mb/s' if m.printed == 'yes' else 'Unknown!'}\n\tDuplex: "
            f"{'Full' if m.printed == 'yes' else 'Unknown! (255)'}\n\tPort: Direct Attach Copper\n\tAuto-negotiation: "
            f"on\n\tLink detected: {m.printed}"
        )
        return {"ethtool": (text, NETDEV), "with its prompt": (f"$ ethtool {NETDEV}\n{text}", NETDEV)}
    name = m.printed.split(":")[0]
    stats = [s for s in _STATS if not s.startswith(name + ":")] + [m.printed]
    block = "NIC statistics:\n" + "\n".join(f"     {s}" for s in stats)
    grep = "\n".join(f"     {s}" for s in stats if "err" in s or "phy" in s or s.startswith(name))
    return {
        "ethtool -S": (f"$ ethtool -S {NETDEV}\n{block}", NETDEV),
        "with ethtool -i": (f"$ ethtool -i {NETDEV}\n{_INFO}$ ethtool -S {NETDEV}\n{block}", BUS),
        "grep'd": (f"$ ethtool -S {NETDEV} | grep -E 'err|phy'\n{grep}", NETDEV),
    }


def framings(m: Message) -> dict[str, tuple[str, str | None]]:
    """The message as captures show it: each framing's text and the NIC a right finding names (None: none)."""
    if m.frame in ("mlx5", "mlx5_plain"):
        return _mlx5(m)
    if m.frame in ("netdev_lost", "netdev_flap", "bnxt_lost", "ice_lost"):
        return _carrier(m)
    if m.frame == "watchdog":
        return _watchdog(m)
    if m.frame == "perftest":
        return _perftest(m)
    if m.frame in ("ibstat", "ibv_devinfo"):
        return _listing(m)
    if m.frame in ("ethtool", "ethtool_S"):
        return _ethtool(m)
    return _simple(m)


def _named(module: str, subject: str | None) -> bool:
    return (not module or "not in the log" in module) if subject is None else subject in module


def verdict(m: Message, subject: str | None, code: int, found: list[dict[str, str]]) -> str:
    loud = [f for f in found if f["severity"] in ("warn", "critical")]
    if m.want is None:
        return "refused" if code == 2 else "false" if loud else "clean"
    if m.want == "other":
        return "refused" if code == 2 else "read"
    mine = [f for f in found if f["cause"] == m.want]
    if any(f["severity"] == m.severity and _named(f["module"], subject) for f in mine):
        return "right"
    if mine:
        return "severity" if not any(f["severity"] == m.severity for f in mine) else "subject"
    return "generic" if found else "refused" if code == 2 else "clear"


GROUPS = {
    "health.c": "health poll",
    "fw_tracer.c": "health poll",
    "cmd.c": "command timeouts",
    "pagealloc.c": "command timeouts",
    "main.c": "probe and load",
    "dd.c": "probe and load",
    "rl.c": "probe and load",
    "eswitch.c": "probe and load",
    "events.c": "alarms, modules",
    "en_main.c": "carrier",
    "dev.c": "carrier",
    "bnxt.c": "other drivers",
    "ice_main.c": "other drivers",
    "reporter_tx.c": "transmit stalls",
    "sch_generic.c": "transmit stalls",
    "pci.c": "PCIe link line",
    "cq.c": "RDMA completions",
    "ibstat.c": "listings",
    "devinfo.c": "listings",
    "en_stats.c": "ethtool",
    "bnxt_ethtool.c": "ethtool",
    "ice_ethtool.c": "ethtool",
}


def group(m: Message) -> str:
    """The message's class, by its source file (perftest's files are one, ethtool's settings another)."""
    if m.source == "perftest":
        return "perftest"
    return GROUPS.get(Path(m.path.split(" ")[0]).name, "ethtool")


def main(argv: list[str] | None = None) -> int:
    show = shown(__doc__, argv)
    data = json.loads(DATA.read_text(encoding="utf-8"))
    messages = [
        Message(r["source"], r["path"], r["call"], r["func"], r["printed"], r["frame"], r["want"], r["severity"])
        for r in data["messages"]
    ]
    faults: dict[str, Counter[str]] = {}
    healthy, other = Counter[str](), Counter[str]()
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp) / "capture.txt"
        for m in messages:
            for frame, (text, subject) in framings(m).items():
                code, found = run(text, where)
                v = verdict(m, subject, code, found)
                (healthy if m.want is None else other if m.want == "other" else faults.setdefault(group(m), Counter()))[
                    v
                ] += 1
                if v in show:
                    print(
                        f"{v:9} {frame:16} {m.printed.splitlines()[0][:70]!r} -> "
                        f"{[(f['cause'], f['severity'], f['module']) for f in found]} (want {m.want} {m.severity})"
                    )
    print(f"{len(messages)} messages ({'; '.join(data['sources'])})")
    print_faults("class", 20, faults)
    print(
        healthy_said(healthy)
        + f"; other error lines {sum(other.values())}: read {other['read']}, refused {other['refused']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
