"""The RDMA fabric's own tools beyond ibstat (issue 46, AX3), read together: iproute2's ``rdma`` and rdma-core's
listings (captures/rdma_tool.py), infiniband-diags' fabric views (captures/ib_diags.py: iblinkinfo, ibnetdiscover,
ibqueryerrors, ibcheckerrors) and ibdiagnet's screen (captures/ibdiagnet.py). Their ports are the NIC records the
other RDMA listings give, added beside them (formats.py), judged by the NIC checks (checks/nics.py): a port down, a
port read down then up again, a link below what it could run, error counters past infiniband-diags' thresholds."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from gpuvet.backends.nic_readings import Nic
from gpuvet.captures import ib_diags, ibdiagnet, rdma_tool
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.nic_tools import NicLinesParse
from gpuvet.captures.text import Line

# the tools' command lines as a prompt shows them ('$ rdma -j link', '[root@n01 ~]# iblinkinfo | grep Up'): read with
# their output, never alone
_COMMAND = re.compile(
    r"^\s*(?:[^\n]{0,64}?[$#]\s*)?(?:sudo\s+)?(?:rdma(?:\s+-\w+)*\s+(?:link|dev|res|resource|stat|"
    r"statistic)|iblinkinfo|ibnetdiscover|ibqueryerrors|ibcheckerrors|ibdiagnet|sminfo|ibv_devices)"
    r"\b[^\n]{0,200}$"
)
COMMANDS = ("rdma ", "iblinkinfo", "ibnetdiscover", "ibqueryerrors", "ibcheckerrors", "ibdiagnet", "sminfo", "ibv_devices")


FabricParse = NicLinesParse  # the NIC tools' record and the lines read (nic_tools.NicLinesParse)


def parse(lines: list[Line], marks: Marks) -> FabricParse:
    """Each tool's ports in ``lines``, one NIC record per device (a device two of them list is one)."""
    out = FabricParse()
    found: dict[str, Nic] = {}
    for reader in (rdma_tool.read, ib_diags.read, ibdiagnet.read):
        nics, kinds, claimed = reader(lines, marks)
        out.kinds += [k for k in kinds if k not in out.kinds]
        out.claimed |= claimed
        for nic in nics:
            found[nic.device] = _joined(found[nic.device], nic) if nic.device in found else nic
    out.nics = list(found.values())
    if out.claimed:
        out.claimed |= {lines[i].no for i in holding(lines, COMMANDS, marks) if _COMMAND.match(lines[i].text)}
    return out


def parsed(lines: list[Line], marks: Marks, made: Callable[..., object]) -> object:
    """formats.Parsed (``made``: given, not imported, as env_report's) of parse: the record where a line was read,
    the tools read named."""
    got = parse(lines, marks)
    return made(got if got.claimed else None, got.claimed, kinds=tuple(got.kinds))


def quoted(lines: list[Line]) -> FabricParse:
    """Called (formats.read_quoted) only where nothing else was read: a port's link line a poster's sentence quotes
    (read.py keeps a quoting sentence from the formats), its port judged as rdma link's."""
    return parse(lines, Marks(lines)) if holding(lines, ("physical_state",)) else FabricParse()


def _joined(first: Nic, second: Nic) -> Nic:
    """Two tools' records of one device: the first's ports, the second's added where the first lacks them."""
    ports = {p.port: p for p in second.ports} | {p.port: p for p in first.ports}
    return replace(
        first,
        ports=tuple(ports[k] for k in sorted(ports)),
        firmware=first.firmware or second.firmware,
        node_guid=first.node_guid or second.node_guid,
        netdevs=first.netdevs or second.netdevs,
    )
