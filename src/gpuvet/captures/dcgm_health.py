"""`dcgmi health -c`: DCGM's passive health report, and `dcgmi discovery -l`'s module list.

The health report is a box: ``Overall Health | Healthy`` (nothing found), or per entity a row
``-> 0 | Failure`` under its group (GPU, Switch, …), and per system that raised an incident a row
``-> NVLINK system | Failure`` whose message follows on rows with an empty key, wrapped at the
box's width. DCGM 1.x printed ``GPU ID: 0 | Warning`` and ``PCIe system: Warning - message`` on
the value side instead; both are read. `-c -j` prints the same tree as JSON (``body`` ->
``Overall Health`` -> ``value``). Each incident keeps the entity, system, health and message as
printed; doctor judges them (capture_checks.dcgm_health)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from typing import Any

from gpuvet.captures.dcgm import two_cells
from gpuvet.captures.dcgm_nvswitch import SYSTEM
from gpuvet.captures.dcgm_nvswitch import judge as switch_judged
from gpuvet.captures.dcgm_nvswitch import message as switch_message
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.records import DcgmHealthIncident, SmiTextModule
from gpuvet.captures.smi_text import SmiText, bus
from gpuvet.captures.text import MAX_MODULES, Line

_HEALTH = ("Healthy", "Warning", "Failure", "Internal error")
_FRAME = re.compile(r"^\s*\+[-=+]+\+\s*$")
_ENTITY = re.compile(r"^(?:->\s*(\d{1,4})|GPU ID:\s*(\d{1,4}))$")
_SYSTEM = re.compile(r"^->\s*((?:PCIe|NVLINK|PMU|MCU|Memory|SM|InfoROM|Thermal|Power|NvSwitch \w+|CPU \w+|ConnectX)"
                     r"(?: system)?|Driver)$", re.I)
_OLD_SYSTEM = re.compile(r"^((?:PCIe|NVLINK|PMU|MCU|Memory|SM|InfoROM|Thermal|Power) system|Driver):\s*"
                         r"(Healthy|Warning|Failure)\s*(?:-\s*(.*))?$", re.I)
_OVERALL_VALUE = re.compile(r"^Overall Health:\s*(\S.*)$")
_HEALTH_VALUE = re.compile(r"^(Healthy|Warning|Failure|Internal error)\b\s*-?\s*(.*)$", re.I)
_GROUPS = ("GPU", "Switch", "NvSwitch", "CPU", "CPU Core", "Link", "ConnectX", "GPU_I", "GPU_CI")


@dataclass
class DcgmHealthParse:
    overall: str | None = None  # Healthy, Warning, Failure as printed; None: no report read
    incidents: list[DcgmHealthIncident] = field(default_factory=list)
    entities: dict[str, str] = field(default_factory=dict)  # "GPU 0" -> its health as printed
    claimed: set[int] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)


@dataclass
class _State:
    group: str = "GPU"
    entity: str | None = None
    system: str | None = None
    health: str = ""
    message: list[str] = field(default_factory=list)


def parse(lines: list[Line], marks: tuple[str, ...] = (), whole: Marks | None = None) -> DcgmHealthParse:
    """The health report in the lines, as its box or as -j JSON, else the incidents DCGM's own log lines
    carry, and DCGM's failure messages any other line prints holding one of ``marks`` (MESSAGE_MARKS the
    text holds; none: overall stays None)."""
    out = _parse_box(lines)
    if out.overall is None and any('"Health Monitor Report"' in ln.text for ln in lines):
        return _parse_json_lines(lines) or out
    if out.overall is None:
        return _parse_log(lines, marks, whole)
    return out


# the report's, its -j document's and DCGM's own log lines' marks (formats.py's markers, with MESSAGE_MARKS): an incident
# line ('health system'), the NvSwitch module's ('[['), a relay's failure-reason code (NVSentinel), nvvs.log's levels
REPORT_MARKS = ("Health Monitor Report", "Overall Health", "health system", "Health System", "HEALTH SYSTEM", "[[",
                "DCGM_FR_", "ERROR [", "WARNING [", "INFO [", "DEBUG [", "VERBOSE [")
# issue 46: words of DCGM's failure messages (knowledge/dcgm_errors.yaml) as it prints them, one in each message
# read outside DCGM's own output (dcgm_messages.read's ``bare``: a log line of another program, a poster's sentence);
# the format asks for those the text holds, and only lines holding one are read (tests/captures: each such
# message holds one of them)
MESSAGE_MARKS = (
    "NvLink errors", "retired page", "memory mismatch", "required bandwidth", "double-bit ECC", "single-bit ECC",
    "from libnvidia-ml", "to the host engine", "allocate at least", "bound to a CUDA context", "below the threshold",
    "'s NVLink", "NCCL error:", "Detected XID", "miscompare failure", "due to thermal violation",
    "exceeds minimum threshold", "NvSwitch", "NVSwitch", "PCIe replay", "to achieve target power",
    "Error using CUDA API", "memory elements on GPU", "blacklisted driver", "on the denylist", "fallen off the bus",
    "create a CUDA context", "Recovery action:", "row remap", "uncorrectable memory errors", "link generation of",
    "memory bandwidth of", "peer-to-peer test", "is currently down", "Fabric State is", "contained error",
    "desired power minimum", "desired stress level", "NvLinks are up", "Pending page retirements", "SRAM Threshold",
    "ECC is not enabled", "user-specified maximum", "graphics contexts", "permissions to create a file",
    "thermal violations", "Thermal violations", "corresponding CUDA device", "seconds into the test",
    "maximum allowed latency", "due to power violation", "read the power usage", "corrupt InfoROM", "in a pending state")


def quoted(lines: list[Line]) -> DcgmHealthParse:
    """Issue 46, read.py's read_quoted (nothing else was read): DCGM's failure messages a poster's sentences quote,
    each an incident marked as theirs."""
    out = _parse_log(lines, MESSAGE_MARKS)
    out.incidents = [replace(i, quoted=True) for i in out.incidents]
    return out


def parse_marked(lines: list[Line], marks: Marks) -> DcgmHealthParse:
    """parse, told which MESSAGE_MARKS the whole text holds (each looked for once: a text holding none has no
    line read for a DCGM message); a text holding none of REPORT_MARKS has only its messages read."""
    present = tuple(m for m in MESSAGE_MARKS if marks.any((m,)))
    return parse(lines, present, marks) if marks.any(REPORT_MARKS) else _messages(lines, present)


# nv-hostengine's log (and the tools that relay it): "[[Health]] Detected a WARNING in health system Thermal:
# 'Detected clocks event due to thermal violation in GPU 2. …'" under any prefix (timestamp, level, [pid:tid])
_LOG = re.compile(r"Detected an? (WARNING|FAILURE|ERROR) in health system ([A-Za-z][\w ]{0,30}?):\s*(.*)$", re.I)
_LOG_GPU = re.compile(r"\bGPU (?:ID )?(\d{1,4})\b")
# its NvSwitch module's ERROR lines (captures/dcgm_nvswitch.py): what DCGM watches on the NVSwitches is unread,
# said again each time the module runs; judged by the doctor (knowledge/faults.yaml's dcgm_nvswitch_unread)
SWITCH_MODULE = SYSTEM


# a DCGM failure-reason code (dcgm_errors.h, DCGM_FR_*) as a health incident's relay prints it: NVSentinel's
# node condition 'ErrorCode:DCGM_FR_IMEX_UNHEALTHY GPU:0 IMEX daemon status is -3 (not READY)', a log's
# 'DCGM_FR_NVLINK_DOWN: GPU 3 …'; the code names the system, the words after it are DCGM's message
_CODE = re.compile(r"\b(DCGM_FR_[A-Z0-9_]{2,60})\b[:,]?\s*(?:GPU(?: ID)?[:\s]\s*(\d{1,4})\b[:,]?)?\s*(.*)$")


def _coded(c: re.Match[str]) -> DcgmHealthIncident:
    """The incident a DCGM_FR_* code reports; its health is not in such a line: Warning, the milder one."""
    entity = f"GPU {int(c.group(2))}" if c.group(2) else "GPU (id not in the line)"
    return DcgmHealthIncident(entity, c.group(1), "Warning", c.group(3).strip()[:400])


def _parse_log(lines: list[Line], marks: tuple[str, ...] = (), whole: Marks | None = None) -> DcgmHealthParse:
    """DCGM's own log lines that report a health incident: each an incident on the GPU its message names
    (the report's box is not there; Overall Health is the worst incident's, as the box would say)."""
    out = DcgmHealthParse()
    switch: dict[str, int] = {}  # the NvSwitch module's error messages, each with how often it was logged
    for ln in lines:
        if (marks and any(m in ln.text for m in marks) or "[" in ln.text and _LEVELLED.search(ln.text)) and \
                _message(ln, out):
            continue
        if ("[[NvSwitch]]" in ln.text or "modules/nvswitch/" in ln.text) and (e := switch_message(ln.text)):
            switch[e] = switch.get(e, 0) + 1
            out.claimed.add(ln.no)
            continue
        if "DCGM_FR_" in ln.text and (c := _CODE.search(ln.text)) is not None:
            out.incidents.append(_coded(c))
            out.claimed.add(ln.no)
            continue
        if "health system" not in ln.text or (m := _LOG.search(ln.text)) is None:
            continue
        message = m.group(3).strip().strip("`'\" ").strip()
        gpu = _LOG_GPU.search(message)
        health = "Warning" if m.group(1).upper() == "WARNING" else "Failure"
        out.incidents.append(DcgmHealthIncident(f"GPU {int(gpu.group(1))}" if gpu else "GPU (id not in the line)",
                                                _system_name(m.group(2)), health, message[:400]))
        out.claimed.add(ln.no)
    _diag_setup(lines, out)
    _dcgm_log_lines(lines, out)
    found, said = switch_judged(switch, lines, out.claimed, whole)
    out.incidents += found
    out.notes += said
    _settle(out, bool(found))
    return out


def _messages(lines: list[Line], marks: tuple[str, ...]) -> DcgmHealthParse:
    """DCGM's failure messages alone, in a text holding none of the report's or DCGM's log's own marks: the lines
    holding one of ``marks`` (issue 43: a bug report's Xid 79 lines hold 'fallen off the bus' too, and every
    line of it looked at for the report's box would take a second of a 20 MB report)."""
    out = DcgmHealthParse()
    for i in holding(lines, marks):  # a long text's found in it (issue 43: 0.15 s of a 20 MB report line by line)
        _message(lines[i], out)
    _settle(out, False)
    return out


def _settle(out: DcgmHealthParse, switch: bool) -> None:
    """Overall Health as the worst incident's, said with what was read (none read: the report stays unread)."""
    if not out.incidents:
        return
    healths = {i.health for i in out.incidents}
    worst = next((h for h in ("Failure", "Warning") if h in healths), None)
    out.overall = worst or "not printed (DCGM's log: its own ERROR lines alone)"
    taken = f"Overall Health taken as {worst}, the worst" if worst else "no health incident"
    said = [i.system for i in out.incidents if i.system.startswith("DCGM_FR_") and "DCGM_FR_" not in i.message]
    codes = ", ".join(dict.fromkeys(said))
    if len(said) == len(out.incidents):
        out.notes.append(f"DCGM failure message(s) in DCGM's own words: {len(said)} line(s) read ({codes}), not "
                         f"`dcgmi health -c`'s report: {taken}")
        return
    also = ", its NvSwitch module's ERROR lines" if switch else ""
    also += f", {len(said)} DCGM failure message(s) in DCGM's own words ({codes})" if said else ""
    out.notes.append(f"DCGM log: {len(out.claimed)} health incident line(s) read ('Detected a … in health "
                     f"system …'{also}), not `dcgmi health -c`'s report: {taken}")


_LEVELLED = re.compile(r"(?:ERROR|FATAL|WARNING|WARN) \[\d")  # DCGM's own log line at a failure level (_DCGM_LINE)


def _message(ln: Line, out: DcgmHealthParse) -> bool:
    """A DCGM failure message the line prints, as an incident of its code on the GPU it names; False where the
    line prints none. Every format is read in DCGM's own log line at a failure level, only the distinctive ones
    elsewhere (dcgm_messages' ``bare``: another program's line, a poster's sentence); either way only a message
    that is a finding wherever it is read (``judged``): DCGM's own trouble (a field it could not read) is not."""
    from gpuvet.captures.dcgm_messages import read_all  # loaded where a line holds a message's words

    if "health system" in ln.text or "DCGM_FR_" in ln.text:
        return False
    own = _DCGM_LINE.match(ln.text) if "[" in ln.text else None
    bare = own is None or own.group(1) not in ("ERROR", "FATAL", "WARNING", "WARN")
    msg = next((m for m in read_all(own.group(2) if own else ln.text, bare) if m.judged), None)
    if msg is None:
        return False
    out.incidents.append(DcgmHealthIncident(msg.entity or "GPU (id not in the line)", msg.code,
                                            "Failure" if msg.severity == "ISOLATE" else "Warning",
                                            ln.text.strip()[:400]))
    out.claimed.add(ln.no)
    return True


# DCGM's own log line (nv-hostengine.log, the diagnostic's nvvs.log): 'YYYY-MM-DD HH:MM:SS.mmm LEVEL [pid:tid]
# message [/path/file.cpp:N] [Class::Function]' (the stamp may be gone: a paste's prefix is cleaned off); nvvs
# names a test's plugin in its message ('[[pcie]] …', '[[Diag]]') and each test it starts ('Test pcie start')
_DCGM_LINE = re.compile(r"^\s*(?:\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:\.\d{1,6})?\s+)?(FATAL|ERROR|WARNING|WARN|INFO|DEBUG|"
                        r"VERBOSE)\s+\[\d{1,9}:\d{1,9}\]\s+(.*?)(?:\s+\[/?[^\]\s]+:\d+\])?(?:\s+\[[^\]\s]+\])?\s*$")
_TEST_START = re.compile(r"^Test (\w[\w ]{0,40}?) start\b")
_PLUGIN = re.compile(r"\[\[(\w{1,40})\]\]")


# nvvs (dcgmi diag's validation suite) failing to set itself up: its config package or SKU file missing, a test
# plugin that does not load; the diagnostic did not run its tests, which says nothing of the modules
_SETUP = re.compile(r"Could not read package diag config|config package is installed|bad file: \S*(?:nvidia-validation"
                    r"-suite|diag-skus)|Couldn't load (?:a definition for \w+ in )?plugin|(?:Unable|Failed) to load "
                    r"(?:the )?plugin", re.I)
DIAG_SETUP = "diagnostic set-up"  # the incidents' system: nvvs could not set up (knowledge: dcgm_diag_not_run)


def _diag_setup(lines: list[Line], out: DcgmHealthParse) -> None:
    """nvvs's own ERROR lines saying it could not set up (config, plugins): one incident, the first such message."""
    said = [m.group(2) for ln in lines if ln.no not in out.claimed and "[" in ln.text
            and (m := _DCGM_LINE.match(ln.text)) is not None and m.group(1) in ("ERROR", "FATAL")
            and _SETUP.search(m.group(2))]
    if said:
        out.incidents.append(DcgmHealthIncident("the diagnostic (nvvs)", DIAG_SETUP, "ERROR",
                                                f"{said[0][:300]} ({len(said)} set-up ERROR line(s))"))


def _dcgm_log_lines(lines: list[Line], out: DcgmHealthParse) -> None:
    """The rest of DCGM's log lines, read and said: their count by level, the tests nvvs started, the plugins
    named, and the first ERROR line's message. Only an incident line or a DCGM_FR_ code is judged: a debug
    log's ERROR line is DCGM's own trouble as often as a module's, and the diagnostic's verdict is its result."""
    levels: dict[str, int] = {}
    tests: list[str] = []
    plugins: list[str] = []
    errors: list[str] = []
    for ln in lines:
        if ln.no in out.claimed or "[" not in ln.text or (m := _DCGM_LINE.match(ln.text)) is None:
            continue
        out.claimed.add(ln.no)
        level, message = m.group(1), m.group(2)
        levels[level] = levels.get(level, 0) + 1
        if (t := _TEST_START.match(message)) is not None and t.group(1) not in tests:
            tests.append(t.group(1))
        plugins += [p for p in _PLUGIN.findall(message) if p not in plugins]
        if level in ("ERROR", "FATAL"):
            errors.append(message)
    if not levels:
        return
    counts = ", ".join(f"{n} {level}" for level, n in levels.items())
    said = f"DCGM log (nv-hostengine or nvvs): {sum(levels.values())} line(s) read ({counts})"
    said += f"; tests started: {', '.join(tests)}" if tests else ""
    said += f"; plugins named: {', '.join(plugins)}" if plugins else ""
    said += (f"; {len(errors)} ERROR line(s), the first: {errors[0][:200]!r} (not judged: no health incident or "
             "DCGM_FR_ code in it; the diagnostic's own result says pass or fail)") if errors else \
        "; no ERROR line, no health incident: nothing about the modules to judge"
    out.notes.append(said)


def _parse_json_lines(lines: list[Line]) -> DcgmHealthParse | None:
    """`-c -j`: the JSON document from its first '{' line to its last '}' line."""
    first = next((i for i, ln in enumerate(lines) if ln.text.strip().startswith("{")), None)
    last = max((i for i, ln in enumerate(lines) if ln.text.strip().endswith("}")), default=None)
    if first is None or last is None or last < first:
        return None
    got = parse_json("\n".join(ln.text for ln in lines[first:last + 1]))
    if got is not None:
        got.claimed = {ln.no for ln in lines[first:last + 1]}
    return got


def _parse_box(lines: list[Line]) -> DcgmHealthParse:
    out = DcgmHealthParse()
    start = next((i for i, ln in enumerate(lines) if "Health Monitor Report" in ln.text
                  or re.search(r"\|\s*Overall Health\s*(?:\||:)", ln.text)), None)
    if start is None:
        return out
    state = _State()
    if start and _FRAME.match(lines[start - 1].text):  # the box's top edge
        out.claimed.add(lines[start - 1].no)
    for ln in lines[start:]:
        if _FRAME.match(ln.text) or "Health Monitor Report" in ln.text:
            out.claimed.add(ln.no)
            continue
        if not _row(out, state, ln):
            break
        out.claimed.add(ln.no)
    _close(out, state)
    if out.overall is None:
        out.claimed.clear()
    return out


def _one_cell(s: str) -> str | None:
    """A box's row of one cell, stripped (split, not a regex of lazy cells and blanks: review 55 F13)."""
    body = s.strip()
    return body[1:-1].strip() if len(body) > 1 and body[0] == "|" and body[-1] == "|" else None


def _row(out: DcgmHealthParse, state: _State, ln: Line) -> bool:
    """One row of the box; False at the first line that is not one (the report ended)."""
    row = two_cells(ln.text)  # | key | value |
    if row is None:
        wide = _one_cell(ln.text)  # | Health Monitor Report |, | Overall Health: Warning |
        if wide is not None and (m := re.match(r"Overall Health:\s*(\S.*)$", wide)) is not None:
            out.overall = m.group(1).strip()
            return True
        return bool(ln.elision)
    key, value = row
    if (o := _OVERALL_VALUE.match(value)) is not None:  # | Group 1 | Overall Health: Warning | (DCGM's guide)
        out.overall = o.group(1).strip()
    elif key == "Overall Health":
        out.overall = value
    elif key in _GROUPS:
        _close(out, state)
        state.group, state.entity = key, None
    elif (e := _ENTITY.match(key)) is not None:
        _close(out, state)
        state.entity = f"{state.group if e.group(1) else 'GPU'} {e.group(1) or e.group(2)}"
        out.entities[state.entity] = value
    elif key.startswith("->") and key[2:].strip() == "Errors":
        pass
    elif (s := _SYSTEM.match(key)) is not None:
        _close(out, state)
        state.system = _system_name(s.group(1))
        state.health, first = split_health(value)  # "Warning - Detected more than 8 PCIe replays …"
        state.message = [first] if first else []
    elif not key and (old := _OLD_SYSTEM.match(value)) is not None:
        _close(out, state)
        state.system, state.health = _system_name(old.group(1)), old.group(2)
        state.message = [old.group(3)] if old.group(3) else []
    elif not key and state.system is not None and value:
        state.message.append(value)
    elif key or value:
        return key.startswith("->") or key.startswith("...")  # a level gpuvet does not know: kept in the box
    return True


def split_health(value: str) -> tuple[str, str]:
    """A system row's value: its health word, and the message DCGM printed after it on the same row."""
    m = _HEALTH_VALUE.match(value)
    return (m.group(1), m.group(2).strip()) if m else (value, "")


def _system_name(text: str) -> str:
    name = text.strip()
    return name if name.lower() == "driver" or name.lower().endswith("system") else f"{name} system"


def _close(out: DcgmHealthParse, state: _State) -> None:
    """The incident being read, if any, is complete."""
    if state.system is not None:
        out.incidents.append(DcgmHealthIncident(state.entity or "GPU (id not in the excerpt)", state.system,
                                                state.health, " ".join(state.message).strip()))
    state.system, state.health, state.message = None, "", []


def parse_json(text: str) -> DcgmHealthParse | None:
    """`dcgmi health -c -j`; None when the text is not that JSON."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    header = data.get("header") if isinstance(data, dict) else None
    body = data.get("body") if isinstance(data, dict) else None
    if not isinstance(body, dict) or not isinstance(header, list) or "Health Monitor Report" not in header:
        return None
    out = DcgmHealthParse(overall=_value(body.get("Overall Health")))
    for group, node in body.items():
        if group == "Overall Health" or not isinstance(node, dict):
            continue
        for eid, entity in _children(node).items():
            name = f"{group} {eid}"
            out.entities[name] = _value(entity) or ""
            for system, inc in _children(_children(entity).get("Errors", {})).items():
                health, first = split_health(_value(inc) or "")
                message = " ".join([first, *(str(x) for x in _overflow(inc))]).strip()
                out.incidents.append(DcgmHealthIncident(name, _system_name(system), health, message))
    return out


def _value(node: Any) -> str | None:
    return str(node["value"]) if isinstance(node, dict) and "value" in node else None


def _children(node: Any) -> dict[str, Any]:
    kids = node.get("children") if isinstance(node, dict) else None
    return kids if isinstance(kids, dict) else {}


def _overflow(node: Any) -> list[Any]:
    if not isinstance(node, dict):
        return []
    more = node.get("overflow")
    return more if isinstance(more, list) else []


# --- dcgmi discovery -l ------------------------------------------------------------------------
_COUNT = re.compile(r"^\s*(\d{1,4}) GPUs? found\s*(?:\((?:Active|[A-Za-z ]{1,20})\))?\.?\s*$")  # '(Active)' newer
_GPU_ROW = re.compile(r"^\s*\|\s*(\d{1,4})\s*\|\s*Name:\s*(.+?)\s*\|\s*$")
_NO_NAME = re.compile(r"<+\s*NULL\s*>+|\(null\)|N/A", re.I)  # DCGM prints <<<NULL>>> for a name it could not read
_FIELD_ROW = re.compile(r"^\s*\|\s*\|\s*(PCI Bus ID|Device UUID):\s*(\S+)\s*\|\s*$")


def parse_discovery(lines: list[Line]) -> SmiText:
    """`dcgmi discovery -l`: its GPU rows (id, name, bus id, UUID) as a module list."""
    out = SmiText()
    current: SmiTextModule | None = None
    announced = 0
    for ln in lines:
        if (g := _GPU_ROW.match(ln.text)) is not None and len(out.modules) < MAX_MODULES:
            name = "" if _NO_NAME.fullmatch(g.group(2)) else g.group(2)  # DCGM's placeholder is no model name
            current = SmiTextModule(f"GPU {int(g.group(1))}", name, {"Index": str(int(g.group(1)))})
            out.modules.append(current)
            out.claimed.add(ln.no)
        elif current is not None and (f := _FIELD_ROW.match(ln.text)) is not None:
            if f.group(1) == "PCI Bus ID":
                current.bus_id = bus(f.group(2))
            else:
                current.fields["GPU UUID"] = f.group(2)
            out.claimed.add(ln.no)
        elif (c := _COUNT.match(ln.text)) is not None:
            announced = int(c.group(1))
            out.claimed.add(ln.no)
        elif (out.modules and (_FRAME.match(ln.text) or "| GPU ID |" in ln.text)):
            out.claimed.add(ln.no)
        elif "| GPU ID |" in ln.text or "Device Information" in ln.text:
            out.claimed.add(ln.no)
    if not out.modules:
        out.claimed.clear()
    else:
        found = f"{announced} GPUs found, " if announced else ""
        out.notes.append(f"dcgmi discovery -l: {found}{len(out.modules)} module(s) read (id, name, bus id, UUID)")
        _announced(out, announced)
    return out


def _announced(out: SmiText, announced: int) -> None:
    """'N GPUs found.' past the rows shown (an excerpt cut short) is said as a count: a module the excerpt
    does not show is not listed (its index, model and bus id are unknown, and inventing them would not do)."""
    missing = announced - len(out.modules)
    if missing > 0:
        out.notes.append(f"dcgmi discovery -l: {announced} GPUs found, {len(out.modules)} row(s) shown (the capture "
                         f"is cut): {missing} module(s) DCGM found are not in the excerpt, not listed")
