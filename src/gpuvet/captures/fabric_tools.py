"""The fabric's own test tools as operators paste them (issue 46, R12A): HPE Slingshot's diagnostics (cxiberstat.sh's
BER table, cxibwcheck.sh's loopback bandwidth, dgnettest_run.sh's loopback/group/switch tests), a report built from
ibdiagnet2.log's counter and cable lines, a switch's own views (Broadcom's phydiag fdrstat, Junos' show version and
show chassis hardware) and GPCNeT's usage errors. Formats and messages from the tools' documentation
(HewlettPackard/shs-docs, docs/portal/developer-portal/troubleshoot/net_diags/*.md; NVIDIA ibdiagnet's user manual).

What an engineer reads in them: a NIC cxiberstat measures with any uncorrectable codeword (UCW_BER above '<min'), or
a corrected-codeword BER at or above 1e-8 (HPE gives no number: its normal run peaks at 4.6e-10, its 'bad run' at
2.5e-6), is that link's errors (a cable or the NIC: HPE says reseat or replace); a NIC cxibwcheck or dgnettest names
low or failed is the tool's verdict on that NIC or node; an ibdiagnet counter that 'increased during the run' or a
cable's temperature alarm is the port's; a switch's FEC histogram with uncorrected codewords is the switch port's
link. A passing run, a switch's inventory and a usage error are read, never judged."""

from __future__ import annotations

import re

from gpuvet.backends.nic_readings import SLINGSHOT_CCW_BER_LIMIT as CCW_LIMIT
from gpuvet.captures.app_errors import AppErrorsParse
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.ops_logs import add
from gpuvet.captures.text import Line

# the literals a line read here holds one of (runtime_marks.OPS_MARKS has each)
MARKS = (
    "CCW_BER",
    "cxibwcheck",
    "dgnettest",
    "increased during the run",
    "Cable High Temperature",
    "Uncorrected codewords",
    "show chassis",
    "Hardware inventory:",
    "must be run on at least",
    "test bandwidth low",
)
WORDS = (
    *MARKS,
    "cxi",
    "UCW",
    "CCW",
    "Hosts = ",
    "Min = ",
    "Test passed",
    "Test failed",
    "result is",
    "test bandwidth",
    "Running ",
    "Using NIC",
    "Using all NICs",
    "Final ",
    "Per node",
    "Iter ",
    "has PASSED",
    "has FAILED",
    "PMI",
    "Note: Using",
    "codewords",
    "Symbol errors",
    "code words",
    "FDR",
    "Collecting Data",
    "Xcvr",
    "Model:",
    "Hostname:",
    "Junos",
    "PSM",
    "FPC",
    "PIC",
    "Routing Engine",
    "Chassis",
    "nvme",
    "CB ",
    "Item ",
    "Yocto",
    "Linux Kernel",
    "1e-",
    "<min",
    "BER Summary",
    "Bin ",
    "loopback",
    "all2all",
    "bisect",
)
_NUM = r"(?:<min|\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"
_BER_ROW = re.compile(
    r"(?<![\w.-])(?:(?P<node>[\w.-]+):\s+)?(?<![\w.-])(?P<dev>cxi\d+)\s+(?P<ccw>" + _NUM + r")\s+(?P<ucw>" + _NUM + r")\s*$"
)
_BER_CMD = re.compile(r"cxiberstat\.sh\b(?:\s+-\S+)*(?:\s+(?P<node>[\w.-]+))?\s*$")  # the node a local run names
_BER_OTHER = re.compile(
    r"^\s*(?:[\w.-]+:\s+)?(?:Note: Using a duration|\s*Node\s+Device\s+CCW_BER|CCW BER Summary|"
    r"UCW BER Summary|\s*Bin\s+#|\s*(?:1e-\d+|<min):\s+\d+|No UCW BERs)"
)
_BW_ROW = re.compile(r"^\s*(?:[\w.-]+:\s+)*?(?P<node>[\w.-]+):\s+(?P<dev>cxi\d+):\s+(?P<rest>.+?)\s*$")
_BW_OTHER = re.compile(r"^\s*(?:\S+:\s+)?(?:cxibwcheck\.sh:|Hosts = \d|Min = \d|Test (?:passed|failed))")
_DG_CONTEXT = re.compile(r"^\s*(?:Running (?P<test>\w+) tests on (?P<nic>NIC \d+)|Running (?P<all>\w+) tests over)")
_DG_ROW = re.compile(
    r"^\s*(?P<node>[a-z][\w.-]*\d)\s+\d+\s+\d+\s+(?P<min>\d+)\s+(?P<mean>\d+)\s+\d+\s+\d+\s+[\d.]+%"
    r"\s+result is (?P<how>low|high)\s*$"
)
_DG_SET = re.compile(
    r"^\s*(?P<test>\w+)\s+test bandwidth low\s+(?P<bw>\d+) MB/s for (?P<where>.+?)\s+\d+ nodes?:\s+"
    r"(?P<nodes>\S+)\s*$"
)
_DG_OTHER = re.compile(
    r"^\s*(?:Test\s+Iter\s+Bytes|(?:loopback|all2all|bisect|\w+)\s+\d+\s+\d+\s+\d+\s+\d+\s+\d+|"
    r"Final \w+ bandwidth stats|Per node bandwidth stats|Using (?:NIC \d+|all NICs)|nprocs=|"
    r"dgnettest has (?:PASSED|FAILED)|Running \w+ tests|[a-z][\w.-]*\d\s+\d+\s+\d+\s+\d+)"
)
# ibdiagnet's port name 'S<GUID>/N<GUID>/P1/5/1': a match starts only where a name can (not inside another token's
# word or path), its '/'-joined words read once, so a long line costs its length, not its length squared (the lazy
# '\S*?' from every 'S<16 hex>' took 18.6 s on a 160 KB line); lines are searched in their first _IBD_LINE characters
_IBD_PORT = r"(?P<port>(?<![\w/])S[0-9a-f]{16}(?:/[A-Z]\w*)*?/P\d+(?:/\d+)*)"
_IBD_LINE = 4096  # characters: ibdiagnet prints these lines in under 300 (docs/limits.md, captures)
_IBD_COUNTER = re.compile(
    _IBD_PORT + r"\s+-\s+\"?(?P<counter>\w+)\"?\s+increased during the run\s+\(difference value=(?P<diff>\d+)"
)
_IBD_CABLE = re.compile(
    _IBD_PORT + r"\s+-\s+Cable High Temperature (?P<what>Alarm|Warning|detected)\b[^:]{0,120}?temperature:\s*"
    r"(?P<t>-?\d+)C"
)
_FDR = re.compile(
    r"^\s*(?:Number of Uncorrected codewords|Number of codewords|Symbol errors|code words err S\d+|FDR "
    r"(?:start|end) to collect|port \d+: Collecting Data|FDRStat)"
)
_FDR_BAD = re.compile(r"^\s*Number of Uncorrected codewords:\s+(?P<n>(?:\d+\s+)*\d+)\s*$")
_JUNOS = re.compile(
    r"^\s*(?:\S+@\S+>\s*show |Hostname:|Model:|Junos:|Yocto:|Linux Kernel:|JUNOS|Hardware inventory:|"
    r"Item\s+Version\s+Part number|Chassis\s|PSM \d|Routing Engine|nvme\d|CB \d|FPC \d|PIC \d|Xcvr \d)"
)
_GPCNET = re.compile(r"\bERROR: this application must be run on at least \d+ nodes")


def read(lines: list[Line], out: AppErrorsParse, marks: Marks | None = None) -> None:
    """The fabric tools' lines, added to ``out`` (ops_layer.parse's): findings as records, the rest claimed."""
    if not holding(lines, MARKS, marks):  # a text without one of the tools' own marks costs one search of them
        return
    held = holding(lines, WORDS, marks)
    text = {w for w in MARKS if any(w in lines[i].text for i in held)}
    if "CCW_BER" in text:
        _cxiberstat(lines, held, out)
    if "cxibwcheck" in text:
        _cxibwcheck(lines, held, out)
    if "dgnettest" in text or "test bandwidth low" in text:
        _dgnettest(lines, held, out)
    if "increased during the run" in text or "Cable High Temperature" in text:
        _ibdiagnet_report(lines, held, out)
    if "Uncorrected codewords" in text:
        _fdrstat(lines, held, out)
    if "show chassis" in text or "Hardware inventory:" in text:
        _claim(lines, held, out, _JUNOS, "a switch's show version / show chassis hardware: read, no GPU in it")
    for i in held:
        if "must be run on at least" in lines[i].text and _GPCNET.search(lines[i].text):
            out.claimed.add(lines[i].no)
            out.notes.append(f"GPCNeT: {lines[i].text.strip()} (a usage error of the job, no hardware judged)")


def _claim(lines: list[Line], held: list[int], out: AppErrorsParse, pattern: re.Pattern[str], note: str) -> None:
    """The lines ``pattern`` matches claimed, ``note`` said once where one was."""
    got = [lines[i].no for i in held if pattern.match(lines[i].text)]
    if got:
        out.claimed.update(got)
        out.notes.append(note)


def _ber(value: str) -> float | None:
    """A BER cell as a number; '<min' (below what the run could measure) None."""
    return None if value == "<min" else float(value)


def _cxiberstat(lines: list[Line], held: list[int], out: AppErrorsParse) -> None:
    """cxiberstat.sh's rows: a NIC with any uncorrectable codeword, or corrected codewords at or above CCW_LIMIT."""
    rows, local = 0, None
    for i in held:
        ln = lines[i]
        if "cxiberstat" in ln.text and (cmd := _BER_CMD.search(ln.text)) is not None:
            out.claimed.add(ln.no)
            local = cmd.group("node") or local
            continue
        if (m := _BER_ROW.search(ln.text)) is None:
            if _BER_OTHER.match(ln.text):
                out.claimed.add(ln.no)
            continue
        rows += 1
        out.claimed.add(ln.no)
        ccw, ucw = _ber(m.group("ccw")), _ber(m.group("ucw"))
        if ucw is None and (ccw is None or ccw < CCW_LIMIT):
            continue
        node = m.group("node") or local or "the node cxiberstat ran on"
        said = f"corrected-codeword BER {m.group('ccw')}, uncorrectable BER {m.group('ucw')}"
        why = (
            "uncorrectable codewords are data the link lost"
            if ucw is not None
            else f"corrected BER at or above {CCW_LIMIT:g} (gpuvet's line: HPE gives none; its normal run peaks at "
            "4.6e-10, its bad run 2.5e-6)"
        )
        add(
            out,
            "fabric_nic_ber",
            ln,
            f"cxiberstat: {node} {m.group('dev')}: {said}: {why}; HPE: reseat or "
            "replace the cable, then the NIC; check the switch port's error rates",
            tool="cxiberstat.sh",
            host=node,
        )
    if rows:
        out.notes.append(f"cxiberstat.sh: {rows} NIC(s) read (BER judged: UCW above <min, or CCW >= {CCW_LIMIT:g})")


def _cxibwcheck(lines: list[Line], held: list[int], out: AppErrorsParse) -> None:
    """cxibwcheck.sh: a NIC it prints as failed or with low bandwidth is its verdict on that NIC."""
    nics = 0
    for i in held:
        ln = lines[i]
        if (m := _BW_ROW.match(ln.text)) is not None and not m.group("node").startswith("cxibwcheck"):
            out.claimed.add(ln.no)
            rest = m.group("rest")
            if rest.isdigit():
                nics += 1
            elif "low" in rest or "failed" in rest:
                add(
                    out,
                    "fabric_test_failed",
                    ln,
                    f"cxibwcheck.sh: {m.group('node')} {m.group('dev')}: {rest} (the "
                    "tool's verdict: check cabling, link stability, the NIC's and switch's error counters)",
                    tool="cxibwcheck.sh",
                    host=m.group("node"),
                )
        elif _BW_OTHER.match(ln.text):
            out.claimed.add(ln.no)
    if nics:
        out.notes.append(f"cxibwcheck.sh: {nics} NIC bandwidth(s) read")


def _dgnettest(lines: list[Line], held: list[int], out: AppErrorsParse) -> None:
    """dgnettest_run.sh: a node whose result it calls low, a switch set whose bandwidth it calls low; a run with a
    custom NIC mapping (-N) said with them (HPE: its results are not guaranteed valid)."""
    where = "dgnettest"
    custom = any("dgnettest" in lines[i].text and " -N " in lines[i].text for i in held)
    caveat = " (run with a custom NIC mapping -N: HPE says re-run with the defaults before acting)" if custom else ""
    for i in held:
        ln = lines[i]
        t = ln.text
        if (c := _DG_CONTEXT.match(t)) is not None:
            where = f"{c.group('test')} test, {c.group('nic')}" if c.group("nic") else f"{c.group('all')} test"
        if (row := _DG_ROW.match(t)) is not None:
            out.claimed.add(ln.no)
            if row.group("how") == "low":
                add(
                    out,
                    "fabric_test_failed",
                    ln,
                    f"dgnettest {where}: {row.group('node')} result is low (mean "
                    f"{row.group('mean')} MB/s, min {row.group('min')}){caveat}",
                    tool="dgnettest",
                    host=row.group("node"),
                )
        elif (s := _DG_SET.match(t)) is not None:
            add(
                out,
                "fabric_test_failed",
                ln,
                f"dgnettest {where}: {s.group('test')} test bandwidth low "
                f"{s.group('bw')} MB/s for {s.group('where')}: {s.group('nodes')}{caveat}",
                tool="dgnettest",
                host=s.group("nodes"),
            )
        elif _DG_OTHER.match(t) or ("dgnettest" in t and "-n" in t):
            out.claimed.add(ln.no)
    if custom:
        out.notes.append("dgnettest" + caveat)


def _ibdiagnet_report(lines: list[Line], held: list[int], out: AppErrorsParse) -> None:
    """ibdiagnet2's counter lines ('"symbol_error_counter" increased during the run (difference value=27,…)') and
    its cable temperature alarms, bare or in a report built from its log: the port's."""
    for i in held:
        ln = lines[i]
        text = ln.text[:_IBD_LINE]
        if (c := _IBD_COUNTER.search(text)) is not None:
            add(
                out,
                "fabric_port_counter",
                ln,
                f"ibdiagnet: port {c.group('port')}: {c.group('counter')} increased by {c.group('diff')} during the run",
                tool="ibdiagnet",
                host=c.group("port"),
            )
        elif (h := _IBD_CABLE.search(text)) is not None and h.group("what") == "Alarm":
            add(
                out,
                "fabric_cable_alarm",
                ln,
                f"ibdiagnet: port {h.group('port')}: cable high temperature alarm ({h.group('t')}C)",
                tool="ibdiagnet",
                host=h.group("port"),
            )
        elif h is not None:
            out.claimed.add(ln.no)
            out.notes.append(f"ibdiagnet: {ln.text.strip()[:200]} (a warning, not an alarm: said)")


def _fdrstat(lines: list[Line], held: list[int], out: AppErrorsParse) -> None:
    """Broadcom's phydiag fdrstat counter: uncorrected codewords on a switch port are its link's errors."""
    port, read = "?", False
    for i in held:
        ln = lines[i]
        if (p := re.match(r"^\s*port (\d+): Collecting", ln.text)) is not None:
            port = p.group(1)
        if (bad := _FDR_BAD.match(ln.text)) is not None and any(int(n) for n in bad.group("n").split()):
            read = True
            add(
                out,
                "fabric_port_counter",
                ln,
                f"switch port {port} (Broadcom fdrstat): uncorrected codewords {bad.group('n').split()}",
                tool="BCM phydiag fdrstat",
                host=f"switch port {port}",
            )
        elif _FDR.match(ln.text):
            read = True
            out.claimed.add(ln.no)
    if read:  # 'Uncorrected codewords' in another tool's words is not an fdrstat histogram read
        out.notes.append("Broadcom phydiag fdrstat: switch ports' FEC histograms read (uncorrected codewords judged)")
