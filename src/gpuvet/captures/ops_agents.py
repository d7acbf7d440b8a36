"""The node agents' and cluster runtimes' own logs (issue 46, OPS3), read so that a text of them is never refused:
gpud (leptonai/gpud: its components' states, JSON with "component", "health", "reason" and extra_info data such as
'fabric_manager_active', its zap log lines and its fabric-state box), dcgm-exporter's start-up log ('Starting
dcgm-exporter', 'DCGM successfully initialized!', 'Not collecting switch metrics; …', 'Skipping line N (…)') and a
query of its /metrics endpoint, the NVIDIA device plugin's klog lines and its config echo ('Running with config:'
then migStrategy, failOnInitError, …: inventory), Ray's and vLLM's words about GPU resources (a request larger than
the cluster, a placement group waiting: configuration, said), and a tool aborting on its own assertion (glibc's
'prog: file:line: func: Assertion `…' failed.').

Only gpud's verdict judges: a GPU component it calls Unhealthy or Degraded (a health agent's verdict, cited, as
NHC's), and the fabric manager inactive on a module that may sit on NVSwitches. Everything else is said."""

from __future__ import annotations

import re

from gpuvet.captures.app_errors import AppErrorsParse
from gpuvet.captures.fabric_manager import without_switches
from gpuvet.captures.text import Line

# gpud's component state, pretty-printed JSON (one key a line) or one line: the keys read, in any order
_GPUD_KEY = re.compile(r"\"(component|health|reason)\"\s*:\s*\"((?:[^\"\\]|\\.)*)\"?")
_GPUD_BAD = ("Unhealthy", "Degraded")
_FM_INACTIVE = re.compile(r"fabric_manager_active\\?\"\s*:\s*false")
# NVML's fabric state in the same data: where it is supported and every GPU's state is Completed with status Success,
# the NVLink fabric is up without the fabric manager daemon (GB200's design: the switch trays manage it)
_FABRIC_SUPPORTED = re.compile(r"fabric_state_supported\\?\"\s*:\s*true")
_FABRIC_STATE = re.compile(r"\"state\\?\"\s*:\s*\\?\"([\w ]+)\\?\"\s*,\s*\\?\"status\\?\"\s*:\s*\\?\"(\w+)")
_PRODUCT = re.compile(r"\b(NVIDIA-[A-Z][\w-]+|NVIDIA [A-Z][\w ]+?\d[\w-]*)\b")
# gpud's zap log line: {"level":"warn","ts":"…","caller":"fabric-manager/component.go:378","msg":"…"}
_ZAP = re.compile(r"^\s*\{\"level\":\"(\w+)\",\"ts\":\"[^\"]*\",\"caller\":\"([^\"]+)\",\"msg\":\"([^\"]*)\"")
# gpud scan's check lines ('✔ NVIDIA-GB200 checked fabric state') and its key | value box of a GPU's fabric state
_CHECKED = re.compile(r"^\s*✔\s+(.*\bchecked\b.*)$")
_BOX = re.compile(
    r"^\s*\|\s*(GPU UUID|Clique ID|State|Status|Health Summary|Bandwidth|Route Recovery|Route Unhealthy|"
    r"Access Timeout Recovery|Incorrect Configuration)\s*\|\s*(.*?)\s*\|\s*$"
)

# dcgm-exporter's start-up and collection log (logrus 'level=info msg="…"' or slog 'level=INFO msg="…"')
_DCGM_EXP = re.compile(
    r"msg=\"((?:Starting dcgm-exporter|DCGM successfully initialized|Collecting DCP Metrics|"
    r"Not collecting [^\"]*|Skipping line [^\"]*|Falling back to metric file[^\"]*|"
    r"Initializing system entities[^\"]*|Kubernetes metrics collection enabled|Pipeline starting|"
    r"Starting webserver|Listening on|TLS is disabled|Failed to watch metrics[^\"]*|Error watching fields: The "
    r"third-party Profiling module returned an unrecoverable error|"
    r"[^\"]*metric (?:not enabled|file)[^\"]*)[^\"]*)\""
)
# a query of its metrics endpoint (curl …:9400/metrics | grep DCGM_FI_…) and curl's progress meter
_METRICS_QUERY = re.compile(r"curl\s.*?/metrics\b(?:.*?\bgrep\s+(?:-\w+\s+)*['\"]?(DCGM_FI_\w+|dcgm\w*))?")
_CURL_METER = re.compile(
    r"^\s*(?:% Total\s+% Received|Dload\s+Upload\s+Total|\d{1,3}\s+\d+[kMG]?\s+\d{1,3}\s+\d+[kMG]?"
    r"\s+\d+\s+\d+\s+\d+[kMG]?\s+\d+[kMG]?\s+[-\d:]+\s+[-\d:]+\s+[-\d:]+\s+\d+[kMG]?)"
)
# the NVIDIA device plugin: its klog lines ('I0207 00:54:34.638748 4284 main.go:154] Starting FS watcher.') and
# the flags of its config echo
_PLUGIN = re.compile(r"nvidia-device-plugin|k8s-device-plugin")
_KLOG_INFO = re.compile(r"\bI\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ [\w.]+:\d+\]")
_PLUGIN_FLAG = re.compile(
    r"\"(migStrategy|failOnInitError|deviceListStrategy|deviceIDStrategy|nvidiaDriverRoot|"
    r"passDeviceSpecs|gdsEnabled|mofedEnabled|resourceName|replicas|renameByDefault|"
    r"useNodeFeatureAPI|deviceDiscoveryStrategy|containerDriverRoot|mpsRoot)\"\s*:\s*\"?([^\",]*)"
)
# Ray's and vLLM's words about GPU resources (vllm/executor/ray_utils.py, ray's autoscaler and placement groups)
_RAY = re.compile(
    r"(The number of required GPUs exceeds the total number of available GPUs[^.]*|The number of "
    r"required GPUs exceeds the total|Ray does not allocate any GPUs on the driver node|Current node has "
    r"no GPU available|Waiting for creating a placement group of specs|The following resource request "
    r"cannot be scheduled right now: \{[^}]*'GPU'[^}]*\}|No available node types can fulfill resource "
    r"request[^\n]*GPU|Connect(?:ing|ed) to (?:existing )?Ray cluster|Total resources|Usage:\s*$)"
)
# glibc's assertion message: 'nvtop: /build/…/extract_gpuinfo_amdgpu.c:324: initDeviceSysfsPaths: Assertion `…' failed.'
_ASSERT = re.compile(r"^\s*([\w.+-]{1,40}): (\S+?:\d+): (\w+): Assertion `(.{1,200})' failed\.")

WORDS = (
    '"component"',
    '"health"',
    '"reason"',
    "fabric_manager_active",
    '"caller"',
    "✔",
    "| State",
    "| Status",
    "| Health Summary",
    "| GPU UUID",
    "| Clique ID",
    "| Bandwidth",
    "| Route",
    "| Access Timeout",
    "msg=",
    "/metrics",
    "% Total",
    "Dload",
    "device-plugin",
    "GPUs",
    "GPU available",
    "placement group",
    "resource request",
    "Ray cluster",
    "Total resources",
    "Assertion `",
    "Strategy",
    "failOnInitError",
    "nvidiaDriverRoot",
    'Enabled"',
    'Root"',
)


def read(lines: list[Line], found: list[int], out: AppErrorsParse) -> None:
    """The agents' and runtimes' lines among ``found`` (the indexes holding one of WORDS, not claimed yet)."""
    gpud: list[tuple[str, str, str, Line]] = []  # component, health, reason, the health's line
    component = ""
    flags: dict[str, str] = {}
    said: dict[str, list[str]] = {}
    for i in found:
        ln = lines[i]
        t = ln.text
        keys = _GPUD_KEY.findall(t) if '"' in t else []
        for key, value in keys:
            if key == "component":
                component = value
            elif key == "health":
                gpud.append((component, value, "", ln))
            elif gpud and not gpud[-1][2]:
                gpud[-1] = (*gpud[-1][:2], value, gpud[-1][3])
        if keys:
            out.claimed.add(ln.no)
        elif "fabric_manager_active" in t and _FM_INACTIVE.search(t) and gpud and not _fabric_up(t):
            gpud[-1] = (gpud[-1][0], gpud[-1][1] + "+fm_inactive", gpud[-1][2], gpud[-1][3])
            out.claimed.add(ln.no)
        elif _agent_line(out, ln, said):
            continue
        elif (flag := _PLUGIN_FLAG.search(t)) is not None:
            flags[flag.group(1)] = flag.group(2).strip()
            out.claimed.add(ln.no)
    if flags:
        out.notes.append("NVIDIA device plugin running with config: " + ", ".join(f"{k} {v}" for k, v in flags.items()))
    for what, items in said.items():
        out.notes.append(f"{what}: " + "; ".join(dict.fromkeys(items))[:400])
    _gpud_verdicts(out, gpud)


def _agent_line(out: AppErrorsParse, ln: Line, said: dict[str, list[str]]) -> bool:
    """One line of gpud's log or box, dcgm-exporter's log or query, the device plugin's klog, Ray's or vLLM's
    resource words, or an assertion: claimed and said (True), none judged."""
    t = ln.text
    if (zap := _ZAP.match(t)) is not None:
        said.setdefault("gpud log", []).append(
            f"{zap.group(1)} {zap.group(2)}: {zap.group(3)}"
            + (
                " (every GPU's fabric state Not Supported by NVML: not judged)"
                if "state=Not Supported" in t and not re.search(r"state=(?!Not Supported)", t)
                else ""
            )
        )
    elif (check := _CHECKED.match(t)) is not None:
        said.setdefault("gpud checks", []).append(check.group(1).strip())
    elif (box := _BOX.match(t)) is not None:
        said.setdefault("gpud fabric state", []).append(f"{box.group(1)} {box.group(2)}")
    elif (exp := _DCGM_EXP.search(t)) is not None:
        said.setdefault("dcgm-exporter", []).append(exp.group(1))
    elif (query := _METRICS_QUERY.search(t)) is not None:
        said.setdefault("metrics endpoint queried (no metric line in the paste follows it)", []).append(
            query.group(1) or "all"
        )
    elif _CURL_METER.match(t):
        pass
    elif _PLUGIN.search(t) and (klog := _KLOG_INFO.search(t)) is not None:
        said.setdefault("NVIDIA device plugin", []).append(t[klog.end() :].strip()[:80])
    elif (ray := _RAY.search(t)) is not None:
        said.setdefault(
            "Ray/vLLM GPU resources (a request against the cluster's GPUs: configuration, no GPU fault)", []
        ).append(ray.group(1).strip())
    elif (bad := _ASSERT.match(t)) is not None:
        said.setdefault(f"{bad.group(1)} aborted on its own assertion", []).append(
            f"{bad.group(3)} ({bad.group(2)}): {bad.group(4)}: a bug of the tool, not a reading of the modules"
        )
    else:
        return False
    out.claimed.add(ln.no)
    return True


def _fabric_up(t: str) -> bool:
    """NVML's fabric state beside fabric_manager_active false: supported, every GPU shown Completed/Success."""
    states = _FABRIC_STATE.findall(t) if _FABRIC_SUPPORTED.search(t) else []
    return bool(states) and all(st == "Completed" and ss == "Success" for st, ss in states)


def _gpud_verdicts(out: AppErrorsParse, states: list[tuple[str, str, str, Line]]) -> None:
    """gpud's states: a GPU component Unhealthy or Degraded, or its fabric manager inactive on a module that may
    sit on NVSwitches, is one finding per component (a later Healthy state of it said with it); others said."""
    from gpuvet.captures.ops_logs import add

    for component in dict.fromkeys(c for c, _, _, _ in states):
        mine = [(h, r, ln) for c, h, r, ln in states if c == component]
        bad = [
            (h, r, ln)
            for h, r, ln in mine
            if h.split("+")[0] in _GPUD_BAD
            or ("+fm_inactive" in h and without_switches([p.group(1) if (p := _PRODUCT.search(r)) else None]) is None)
        ]
        last = mine[-1]
        if not bad or not (component.startswith("accelerator-") or "nvidia" in component or "gpu" in component):
            out.notes.append(f"gpud {component or 'component'}: {last[0].split('+')[0]} ({last[1][:120]})")
            continue
        health, reason, ln = bad[-1] if any(h.split("+")[0] in _GPUD_BAD for h, _, _ in bad) else bad[0]
        inactive = " (fabric_manager_active false)" if any("+fm_inactive" in h for h, _, _ in bad) else ""
        later = (
            f"; a later state says {last[0].split('+')[0]} ({last[1][:80]})"
            if last[2].no > ln.no and last[0].split("+")[0] not in _GPUD_BAD
            else ""
        )
        add(out, "gpud_unhealthy", ln, f"gpud {component} {health.split('+')[0]}: {reason}{inactive}{later}", tool="gpud")
