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
from dataclasses import dataclass, field
from typing import Any

from gpuvet.captures.dcgm import two_cells
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


def parse(lines: list[Line]) -> DcgmHealthParse:
    """The health report in the lines, as its box or as -j JSON, else the incidents DCGM's own log lines
    carry (none: overall stays None)."""
    out = _parse_box(lines)
    if out.overall is None and any('"Health Monitor Report"' in ln.text for ln in lines):
        return _parse_json_lines(lines) or out
    if out.overall is None:
        return _parse_log(lines)
    return out


# nv-hostengine's log (and the tools that relay it): "[[Health]] Detected a WARNING in health system Thermal:
# 'Detected clocks event due to thermal violation in GPU 2. …'" under any prefix (timestamp, level, [pid:tid])
_LOG = re.compile(r"Detected an? (WARNING|FAILURE|ERROR) in health system ([A-Za-z][\w ]{0,30}?):\s*(.*)$", re.I)
_LOG_GPU = re.compile(r"\bGPU (?:ID )?(\d{1,4})\b")
# its NvSwitch module failing to read the switches ('ERROR [pid:tid] [[NvSwitch]] ReadNvSwitchStatusAllSwitches()
# returned Object is in an undefined state [/…/DcgmModuleNvSwitch.cpp:388] [DcgmNs::…::RunOnce]'): what DCGM
# watches on the NVSwitches is unread, said again each time the module runs
_SWITCH_MODULE = re.compile(r"\bERROR\s+\[\d+:\d+\]\s+\[\[NvSwitch\]\]\s+(.*?)(?:\s+\[/?[^\]\s]+:\d+\])?"
                            r"(?:\s+\[[\w:~]+\])?\s*$")
_SWITCHES = "NVSwitch (DCGM's NvSwitch module)"
SWITCH_MODULE = "NvSwitch module"  # the incidents' system: its ERROR lines, kept as logged (the doctor judges them:
# knowledge/faults.yaml's dcgm_nvswitch_unread), never a health DCGM did not print


# a DCGM failure-reason code (dcgm_errors.h, DCGM_FR_*) as a health incident's relay prints it: NVSentinel's
# node condition 'ErrorCode:DCGM_FR_IMEX_UNHEALTHY GPU:0 IMEX daemon status is -3 (not READY)', a log's
# 'DCGM_FR_NVLINK_DOWN: GPU 3 …'; the code names the system, the words after it are DCGM's message
_CODE = re.compile(r"\b(DCGM_FR_[A-Z0-9_]{2,60})\b[:,]?\s*(?:GPU(?: ID)?[:\s]\s*(\d{1,4})\b[:,]?)?\s*(.*)$")


def _coded(c: re.Match[str]) -> DcgmHealthIncident:
    """The incident a DCGM_FR_* code reports; its health is not in such a line: Warning, the milder one."""
    entity = f"GPU {int(c.group(2))}" if c.group(2) else "GPU (id not in the line)"
    return DcgmHealthIncident(entity, c.group(1), "Warning", c.group(3).strip()[:400])


def _parse_log(lines: list[Line]) -> DcgmHealthParse:
    """DCGM's own log lines that report a health incident: each an incident on the GPU its message names
    (the report's box is not there; Overall Health is the worst incident's, as the box would say)."""
    out = DcgmHealthParse()
    switch: dict[str, int] = {}  # the NvSwitch module's error messages, each with how often it was logged
    for ln in lines:
        if "[[NvSwitch]]" in ln.text and (e := _SWITCH_MODULE.search(ln.text)) is not None:
            switch[e.group(1)] = switch.get(e.group(1), 0) + 1
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
    out.incidents += [DcgmHealthIncident(_SWITCHES, SWITCH_MODULE, "ERROR", f"DCGM cannot read the switches' state: "
                                         f"{message[:300]} ({n} line(s))") for message, n in switch.items()]
    if out.incidents:
        healths = {i.health for i in out.incidents}
        worst = next((h for h in ("Failure", "Warning") if h in healths), None)
        out.overall = worst or "not printed (DCGM's log: its own ERROR lines alone)"
        also = ", its NvSwitch module's ERROR lines" if switch else ""
        taken = f"Overall Health taken as {worst}, the worst" if worst else "no health incident"
        out.notes.append(f"DCGM log: {len(out.claimed)} health incident line(s) read ('Detected a … in health "
                         f"system …'{also}), not `dcgmi health -c`'s report: {taken}")
    return out


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
