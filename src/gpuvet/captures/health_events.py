"""NVIDIA NVSentinel's health monitors' own log lines (R9C, issue 46): the JSON lines its Kubernetes pods print
(github.com/NVIDIA/NVSentinel: syslog-health-monitor, gpu-health-monitor … log with Go's slog, '{"time":…,"level":
"INFO","msg":…,"module":"syslog-health-monitor",…}'), and the HealthEvent they send ('"agent":"syslog-health-
monitor","componentClass":"GPU","checkName":"SysLogsXIDError","isHealthy":true,"message":"No Health Failures",
"entitiesImpacted":[{"entityType":"PCI","entityValue":"0001:00:00"}]', a GPU reset acknowledged with
'"GPU_UUID":"GPU-…","success":true').

A line that reports nothing wrong (an INFO line, a healthy event, a reset that succeeded) is read and noted with the
GPUs it names, so such a log is never refused; a line with an unhealthy or fatal event, at ERROR, or whose own words
(its msg, message, the syslog line it carries) name a fault at any level, is left to the other readers (the XID it
carries is the kernel's fact, judged where the kernel's line is read), said in a note, never called clear."""

from __future__ import annotations

import re

from gpuvet.captures.app_errors import AppErrorsParse
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.text import Line

# what every line read holds one of (runtime_marks.OPS_MARKS holds them too)
WORDS = ("health-monitor", '"isHealthy"', "nvsentinel")
_AGENT = re.compile(r"\"(?:module|agent)\"\s*:\s*\"(?P<who>[\w.-]{0,40}(?:health-monitor|nvsentinel)[\w.-]{0,40})\"")
_BAD = re.compile(
    r"\"isHealthy\"\s*:\s*false|\"isFatal\"\s*:\s*true|\"success\"\s*:\s*false|"
    r"\"level\"\s*:\s*\"(?:ERROR|WARN(?:ING)?|FATAL)\"",
    re.I,
)
_JSON = re.compile(r"^\s*\{\s*\"(?:time|level|msg|ts)\"\s*:")
_UUID = re.compile(r"\bGPU-[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
_PCI = re.compile(
    r"\"entityType\"\s*:\s*\"PCI\"\s*,\s*\"entityValue\"\s*:\s*\"(?P<pci>[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:"
    r"[0-9a-fA-F]{2}(?:\.[0-7])?)\""
)
_RESET = re.compile(r"GPU reset[^\"]{0,60}\"[^{}]{0,400}?\"success\"\s*:\s*true")
_HEALTHY = re.compile(r"\"isHealthy\"\s*:\s*true")
# REVFIX65: a line's own words (its msg, message, the syslog line it carries, an error) are read, not its level and
# keys alone: an INFO line whose msg says 'Detected XID 79 (GPU has fallen off the bus)' names a fault
_SAID = re.compile(r"\"(?:msg|message|line|error|err|reason)\"\s*:\s*\"((?:[^\"\\]|\\.){0,600})\"")
_FAULT = re.compile(
    r"\bXID\b|\bSXID\b|fallen off the bus|\berrors?\b|\bfail(?:s|ed|ure|ures)?\b|\bfault|\bis lost\b|\bunhealthy\b|"
    r"\bfatal\b|\bcritical\b|\btimed? ?out\b|\bhung\b|\bdegraded\b|\bdown\b",
    re.I,
)
_NOTHING = re.compile(r"\bNo Health Failures\b|\bno errors?\b|\b0 errors?\b", re.I)  # a healthy event's own words


def _names_fault(t: str) -> str | None:
    """The line's own words that name a fault (an Xid, a failure, a GPU lost), whatever its level says; else None."""
    return next((m.group(1) for m in _SAID.finditer(t) if _FAULT.search(_NOTHING.sub("", m.group(1)))), None)


def read(lines: list[Line], out: AppErrorsParse, marks: Marks | None = None) -> None:
    """NVSentinel's lines that report nothing wrong, claimed, and one note of what they said and name."""
    agents: dict[str, int] = {}
    gpus: list[str] = []
    resets = healthy = 0
    faults: list[str] = []  # the words of INFO lines that name a fault: read, said, never called healthy
    for i in holding(lines, WORDS, marks):
        t = lines[i].text
        if not _JSON.match(t) or (m := _AGENT.search(t)) is None or _BAD.search(t):
            continue
        if (fault := _names_fault(t)) is not None:
            out.claimed.add(lines[i].no)
            faults.append(f"line {lines[i].no}: {fault[:160]}")
            continue
        out.claimed.add(lines[i].no)
        agents[m.group("who")] = agents.get(m.group("who"), 0) + 1
        gpus += [g.group(0) for g in _UUID.finditer(t)] + [f"PCI {p.group('pci')}" for p in _PCI.finditer(t)]
        resets += _RESET.search(t) is not None
        healthy += len(_HEALTHY.findall(t))
    if faults:
        out.notes.append(
            f"NVSentinel: {len(faults)} line(s) whose own words name a fault, not judged here (the fault's own line, "
            f"the kernel's Xid, is the fact; read the node's kernel log at that time): {'; '.join(faults[:3])}"
        )
    if not agents:
        return
    said = [f"{resets} GPU reset(s) acknowledged as succeeded"] if resets else []
    said += [f"{healthy} healthy event(s) sent (isHealthy true)"] if healthy else []
    named = ", ".join(dict.fromkeys(gpus)) or "no GPU named"
    out.notes.append(
        f"NVSentinel ({', '.join(agents)}): {sum(agents.values())} line(s) read, none reporting a failure"
        f"{': ' + '; '.join(said) if said else ''} ({named})"
    )
