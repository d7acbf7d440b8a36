"""The NICs a listing names by their PCI function (issue 46, FX68E): lspci's one-line form of a network adapter
(``86:00.0 Ethernet controller: Mellanox Technologies MT2892 Family [ConnectX-6 Dx]``; the Infiniband and Network
classes, Mellanox/NVIDIA, Broadcom, Intel, Amazon's EFA and ENA) and mstflint's ``mstconfig query`` / MFT's
``mlxconfig query`` (mlxconfig_ui: ``Device #1:``, ``Device type:    ConnectX5``, ``Name:``, ``Description:``,
``Device:         /sys/bus/pci/devices/0000:03:00.0/config`` or ``/dev/mst/mt4119_pciconf0``, then
``Configurations:`` and one ``NAME  value`` line each). Each names a NIC (its model, its bus id) for inventory;
nothing of them is judged. ``-E- Unsupported device`` is the tool's refusal of a card it does not support (mstflint
4.26 dropped ConnectX-3), said as the tool's limit, never a fault of the card. The RDMA devices another tool lists
beside them take their model from here (backends/capture/pci_nics.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuvet.backends.nic_readings import Nic
from gpuvet.captures.marks import holding
from gpuvet.captures.nic_tools import NicLinesParse
from gpuvet.captures.text import Line

KIND, MLXCONFIG = "lspci (NICs)", "mstconfig/mlxconfig query"
_VENDORS = ("Mellanox Technologies", "NVIDIA Corporation", "Broadcom", "Intel Corporation", "Amazon.com",
            "Cisco Systems", "Chelsio", "QLogic", "Marvell", "Huawei")
_LSPCI = re.compile(r"^\s{0,8}(?P<bus>(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+(?:Ethernet|Infiniband|"
                    r"Network|Fabric) controller(?: \[[0-9a-f]{4}\])?:\s+(?P<name>\S.{0,200}?)\s*$")
_BRACKET = re.compile(r"\[([^\]\[]{2,60})\](?:\s*\(rev [0-9a-f]{2}\))?\s*$")  # lspci's model name, in brackets
_DEVICE_NO = re.compile(r"^\s{0,8}Device #(\d{1,3}):\s*$")
_FIELD = re.compile(r"^\s{0,8}(Device type|Name|Description|Device|PCI device|Part Number|PSID):\s+(\S.{0,300}?)\s*$")
_BDF = re.compile(r"(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]")
_CONFIG_HEAD = re.compile(r"^\s{0,8}Configurations:")
_CONFIG = re.compile(r"^\s{1,16}([A-Z][A-Z0-9_]{1,60}(?:\[\d{1,4}\])?)\s{2,60}(\S.{0,80}?)\s*$")
_UNSUPPORTED = re.compile(r"^\s{0,8}-E-\s+Unsupported device\b")
_LSPCI_COMMAND = re.compile(r"(?:^|[\s#$>])lspci\b")
_COMMAND = re.compile(r"\b(?:mstconfig|mlxconfig)\b.{0,120}\bq(?:uery)?\b")
MAX_NICS = 256


@dataclass
class _Card:
    values: dict[str, str] = field(default_factory=dict)
    configs: list[str] = field(default_factory=list)


NicPciParse = NicLinesParse  # the NIC tools' record and the lines read (nic_tools.NicLinesParse)


def parse(lines: list[Line]) -> NicPciParse:
    """The NICs lspci's lines and mstconfig's query name, and the lines read."""
    out = NicPciParse()
    for ln in (lines[i] for i in holding(lines, (" controller",))):  # a bug report's lines are mostly others'
        if (m := _LSPCI.match(ln.text)) is not None and any(v in m.group("name") for v in _VENDORS):
            out.nics.append(Nic(m.group("bus"), _model(m.group("name")), m.group("bus"), ()))
            out.claimed.add(ln.no)
    if out.nics:  # the lspci command line above them (a prompt's, a grep's)
        out.claimed |= {ln.no for ln in lines if "lspci" in ln.text and _LSPCI_COMMAND.search(ln.text) is not None}
        out.kinds.append(KIND)
    _mlxconfig(lines, out)
    out.nics = out.nics[:MAX_NICS]
    return out


def _model(name: str) -> str:
    """lspci's bracketed model ('ConnectX-6 Dx'), else its name without the vendor."""
    if (b := _BRACKET.search(name)) is not None:
        return b.group(1).strip()
    return next((name.split(v, 1)[1].strip(" ,.") for v in _VENDORS if v in name), name)[:80] or name[:80]


def _mlxconfig(lines: list[Line], out: NicPciParse) -> None:
    """mstconfig/mlxconfig query's device blocks and its refusals, into ``out``."""
    cards: list[_Card] = []
    refused, read, configs = 0, set[int](), False
    if not holding(lines, ("Device #", "-E-")):
        return  # no device block and no refusal: nothing of the query's (found at C speed in a bug report's lines)
    for ln in lines:
        t = ln.text
        if _UNSUPPORTED.match(t):
            refused += 1
        elif ("mstconfig" in t or "mlxconfig" in t) and _COMMAND.search(t):
            pass
        elif _DEVICE_NO.match(t):
            cards.append(_Card())
            configs = False
        elif cards and (m := _FIELD.match(t)) is not None:
            cards[-1].values.setdefault(m.group(1), m.group(2))
        elif cards and _CONFIG_HEAD.match(t):
            configs = True
        elif cards and configs and (c := _CONFIG.match(t)) is not None:
            cards[-1].configs.append(f"{c.group(1)} {c.group(2)}")
        elif cards and t.strip() and not set(t.strip()) <= {"-"}:
            configs = False
            continue
        else:
            continue
        read.add(ln.no)
    if not cards and not refused:
        return
    out.claimed |= read
    out.kinds.append(MLXCONFIG)
    out.nics += [_card_nic(c) for c in cards if c.values]
    out.notes += [_card_said(i, c) for i, c in enumerate(cards, 1) if c.values]
    if refused:
        out.notes.append(_refusal(refused, cards))


def _card_nic(c: _Card) -> Nic:
    where = c.values.get("Device") or c.values.get("PCI device") or ""
    bus = m.group(0) if (m := _BDF.search(where)) is not None else None
    kind = re.sub(r"^ConnectX(\d)", r"ConnectX-\1", c.values.get("Device type", "")) or None
    return Nic(bus or where or "mlxconfig device", kind, bus, (), board_id=c.values.get("PSID"))


def _card_said(i: int, c: _Card) -> str:
    what = ", ".join(f"{k} {v}" for k, v in c.values.items() if k != "Description")
    more = f"; {len(c.configs)} configuration(s) read ({', '.join(c.configs[:6])}{', …' if len(c.configs) > 6 else ''})" \
        if c.configs else ""
    return f"{MLXCONFIG}: device #{i}: {what}{more}"


def _refusal(times: int, cards: list[_Card]) -> str:
    """'-E- Unsupported device': the tool's, never the card's; ConnectX-3 named where the listing shows one."""
    cx3 = any(re.search(r"ConnectX-?3", c.values.get("Device type", "")) for c in cards)
    why = ("mstflint 4.26 dropped ConnectX-3 (4th generation) support: mstflint 4.25 or MFT's mlxconfig reads it"
           if cx3 else "an older mstflint or NVIDIA's MFT (mlxconfig) may support it")
    return (f"{MLXCONFIG}: '-E- Unsupported device' ({times} time(s)): this version of the tool does not support the "
            f"card ({why}); a limit of the tool, no fault of the card")
