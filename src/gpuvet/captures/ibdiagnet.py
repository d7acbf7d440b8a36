"""ibdiagnet's screen as people paste it (issue 46, AX3): its stages' summary table (ibdiagnet2's 'Summary' / '-I-
Stage  Warnings  Errors  Comment' / '-I- Port Counters  0  3'; ibdiagnet 1's '-I- Stages Status Report:' / 'STAGE
Errors Warnings' rows), its '-E-' errors and '-W-' warnings, its '-I-' lines. The error lines as NVIDIA's ibdiagnet
documentation (IBUtils2 2.x, Fabric Links Validation) prints them: '-E- Link: S…/N…/P19<-->switch-004/U1/P20 -
Unexpected actual link speed 25', '… - Unexpected width, actual link width is 1x'; ibdiagnet 1's stage names from
ibutils' ibdebug_if.tcl.

What an engineer reads in it: a link ibdiagnet says runs below its expected speed or width is a degraded link on the
port it names first (``NicPort.degraded``); an error line naming a port's physical-link error counter, or the Port
Counters stage with errors, is the port's errors over ibdiagnet's thresholds (``NicPort.errors_said``), as is the
Links Check stage with errors (links whose state the scan found wrong); the Speed / Width stage with errors is a
degraded link. Where the paste holds the summary alone, the port is ibdiagnet's log's to name (UNNAMED). Warnings,
and the other stages' errors (GUIDs, LIDs, the subnet manager, partitions), are read, not judged."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuvet.backends.nic_readings import UNKNOWN, Nic, NicPort
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.nic_tools import IBDIAGNET_WORDS as WORDS
from gpuvet.captures.text import Line

UNNAMED = "a fabric port ibdiagnet's log names (not in this paste)"
# what says the '-I-'/'-E-' lines are ibdiagnet's: its name, its summary's heads, its link lines, its stages' ends
_OURS = re.compile(
    r"ibdiagnet|^\s*-I-\s+Stages? (?:Status Report|\s*Warnings)|^\s*-[EW]-\s+Link:\s*\S+<-|^\s*-I-\s+"
    r"[A-Z][\w /]+ (?:finished successfully|finished with errors)"
)
_OURS_WORDS = ("ibdiagnet", "Stage", "Link:", "finished")
_LINE = re.compile(r"^\s*-(?P<level>[EWI])-\s*(?P<text>.*?)\s*$")
_ENDS = re.compile(r"^\s*Link:\s*(?P<a>\S+?)\s*<-+>\s*(?P<b>\S+)\s+-\s+(?P<what>.+)$")
_END = re.compile(r"^(?P<dev>.+?)(?:/N[0-9a-fA-F]{16})?/P(?P<port>\d{1,3})$")
_LID_PORT = re.compile(r"\blid=0x[0-9a-fA-F]{1,4}\s+(?:dev=\d+\s+)?(?P<dev>\S+?)/P(?P<port>\d{1,3})\b")
_SUMMARY_HEAD = re.compile(r"^\s*-I-\s+Stage\s+Warnings\s+Errors\b")
_SUMMARY_ROW = re.compile(r"^\s*-I-\s+(?P<stage>[A-Za-z][\w /&()-]*?)\s+(?P<w>\d+)\s+(?P<e>\d+)(?:\s+.*)?$")
_OLD_HEAD = re.compile(r"^\s*STAGE\s+Errors\s+Warnings\s*$")
_OLD_ROW = re.compile(r"^\s*(?P<stage>[A-Za-z][\w /&()-]*?)\s+(?P<e>\d+)\s+(?P<w>\d+)\s*$")
_SPEED_WIDTH = re.compile(r"\b(?:link speed|link width|width|speed)\b", re.I)
_COUNTER = re.compile(
    r"symbol_?error|link_?error_?recovery|link_?downed|port_?rcv_?errors|local_?link_?integrity|"
    r"excessive_?buffer_?overrun|rcv_?remote_?phys",
    re.I,
)
# the stages whose errors say something of a port (ibdiagnet2's, then ibdiagnet 1's): errors, or a degraded link
_ERROR_STAGES = ("Port Counters", "Links Check", "Performance Counters Report", "Link State Active Check")
_DEGRADED_STAGES = ("Speed / Width checks", "Specific Link Width Check", "Specific Link Speed Check")
MAX_ROWS = 64
# its screen's other lines, read with its '-I-' lines: the rules between stages, a stage's or the summary's title, the
# fabric summary's counts, the pointer to its log
_FRAME = re.compile(
    r"^\s*(?:-{20,}|(?:Fabric )?Summary|Discovery|Lids Check|Links Check|Subnet Manager|Port Counters|"
    r"Nodes Information|Speed / Width checks|Alias GUIDs|Virtualization|Partition Keys|Temperature "
    r"Sensing|Routing|Cable Diagnostic \(Plugin\)|Create IBNetDiscover File|Load Plugins from:|Running: "
    r"ibdiagnet.*|(?:Total Nodes|IB Switches|IB Channel Adapters|IB Aggregation Nodes|IB Routers)\s*:\s*\d+|"
    r"Please see \S+ for complete log)\s*$"
)
_FRAME_WORDS = (
    "---",
    "Summary",
    "Discovery",
    "Check",
    "Manager",
    "Counters",
    "Information",
    "checks",
    "GUIDs",
    "Virtualization",
    "Keys",
    "Sensing",
    "Routing",
    "Plugin",
    "File",
    "Plugins",
    "Running",
    "Nodes",
    "IB ",
    "Please see",
)


@dataclass
class _Reading:
    ports: dict[tuple[str, int], dict[str, str]] = field(default_factory=dict)  # degraded / errors_said
    stages: dict[str, int] = field(default_factory=dict)  # a stage's errors
    claimed: set[int] = field(default_factory=set)


def read(lines: list[Line], marks: Marks | None = None) -> tuple[list[Nic], list[str], set[int]]:
    """The ports ibdiagnet's lines in ``lines`` speak of, its name where it was read, the lines read."""
    at = holding(lines, WORDS, marks)
    if not at or not any(_OURS.search(lines[i].text) for i in holding(lines, _OURS_WORDS, marks)):
        return [], [], set()  # '-I-' and '-E-' lines alone may be another tool's (flint, mlxfwmanager, mlxconfig)
    r = _Reading()
    for i in at:
        text = lines[i].text
        if _OLD_HEAD.match(text):
            _old_rows(lines, i, r)
        elif (m := _LINE.match(text)) is not None:
            r.claimed.add(lines[i].no)
            if (row := _SUMMARY_ROW.match(text)) is not None and not _SUMMARY_HEAD.match(text):
                r.stages[row.group("stage").strip()] = int(row.group("e"))
            elif m.group("level") == "E":
                _error(m.group("text"), r)
    _summary(r)
    r.claimed |= {lines[i].no for i in holding(lines, _FRAME_WORDS, marks) if _FRAME.match(lines[i].text)}
    if not r.claimed:
        return [], [], set()
    nics: dict[str, list[NicPort]] = {}
    for (dev, port), said in r.ports.items():
        nics.setdefault(dev, []).append(
            NicPort(
                port,
                UNKNOWN,
                UNKNOWN,
                None,
                None,
                "InfiniBand",
                degraded=said.get("degraded"),
                errors_said=said.get("errors"),
            )
        )
    return [Nic(dev, None, None, tuple(ports)) for dev, ports in nics.items()], ["ibdiagnet"], r.claimed


def _old_rows(lines: list[Line], at: int, r: _Reading) -> None:
    """ibdiagnet 1's 'Stages Status Report': its head, then a stage's errors and warnings a row."""
    r.claimed.add(lines[at].no)
    for ln in lines[at + 1 : at + 1 + MAX_ROWS]:
        if (m := _OLD_ROW.match(ln.text)) is None:
            break
        r.stages[m.group("stage").strip()] = int(m.group("e"))
        r.claimed.add(ln.no)


def _error(text: str, r: _Reading) -> None:
    """An '-E-' line: a link's degraded speed or width, or a port's error counter, on the port it names first."""
    where: tuple[str, int] = (UNNAMED, 0)
    what = text
    if (link := _ENDS.match(text)) is not None and (end := _END.match(link.group("a"))) is not None:
        where, what = (end.group("dev"), int(end.group("port"))), f"{link.group('what')} (link to {link.group('b')})"
    elif (lid := _LID_PORT.search(text)) is not None:
        where = (lid.group("dev"), int(lid.group("port")))
    if _COUNTER.search(text):
        r.ports.setdefault(where, {}).setdefault("errors", f"ibdiagnet: {what}")
    elif link is not None and _SPEED_WIDTH.search(link.group("what")):
        r.ports.setdefault(where, {}).setdefault("degraded", f"ibdiagnet: {what}")


def _summary(r: _Reading) -> None:
    """A stage with errors that no '-E-' line read here names a port of: the port is its log's (UNNAMED)."""
    said = {k for v in r.ports.values() for k in v}
    for stage, errors in r.stages.items():
        if errors and stage in _ERROR_STAGES and "errors" not in said:
            r.ports.setdefault((UNNAMED, 0), {}).setdefault(
                "errors", f"ibdiagnet's {stage} stage found {errors} error(s) (its log, ibdiagnet2.log, names the ports)"
            )
        elif errors and stage in _DEGRADED_STAGES and "degraded" not in said:
            r.ports.setdefault((UNNAMED, 0), {}).setdefault(
                "degraded",
                f"ibdiagnet's {stage} stage found {errors} link(s) below their expected speed or width (its log names them)",
            )
