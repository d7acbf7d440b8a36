"""What the layer above the node's tools prints about its GPUs, as operators paste it (issue 46): Slurm's
node registration (``Reason=gres/gpu count reported lower than configured (0 < 8)`` in scontrol, sinfo -R
or slurmctld's log; slurmd's ``can't stat gres.conf file /dev/nvidia0``), Kubernetes' node resources
(``kubectl describe node``'s Capacity/Allocatable blocks, ``get node -o yaml``, jsonpath or JSON forms of
nvidia.com/gpu and amd.com/gpu), DCGM's host engine log and the container runtime's CDI errors.

Each is read into an application-error record of its own kind (records.AppError), so doctor judges it as
it judges every error line a program printed (doctor/capture_errors.KIND_CAUSES); what a count means is
doctor's. A scheduler's count is the design the node was registered with: fewer GPUs than configured, or
fewer allocatable than its capacity, is a module the node's daemon or device plugin no longer offers."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from gpuvet.captures import (
    accel_runtime,
    accel_runtime_lines,
    cluster_texts,
    exporter_text,
    fabric_counters,
    fabric_tools,
    health_events,
    job_view,
    nhc_checks,
    node_reports,
    node_services,
    ops_logs,
    scheduler_devices,
    slurm_nodes,
)
from gpuvet.captures.app_errors import AppErrorsParse
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.records import AppError
from gpuvet.captures.text import Line

# Slurm's words for a node registering fewer GPUs than slurm.conf gives it: 'gres/gpu count reported lower
# than configured (0 < 8)' (20.11 on), 'gres/gpu count too low (0 < 4)' (older), and slurmctld's
# '_node_config_validate: gres/gpu: Count changed on node n1 (4 != 3)'; a typed gres ('gres/gpu:a100') too
_SLURM_LOW = re.compile(r"gres/gpu(?::[\w.-]+)? count (?:reported lower than configured|too low) \((\d+) < (\d+)\)")
_SLURM_CHANGED = re.compile(r"gres/gpu(?::[\w.-]+)?: Count changed on node (\S+) \((\d+) != (\d+)\)")
_SLURM_RECORD = re.compile(r"\bGres=\S*gpu\S*|\bState=\S+")  # scontrol show node's GPUs and state
_SLURM_NODE = re.compile(r"\bNodeName=(\S+)|\bnode[= ]([\w.-]+)")
# slurmd cannot find a device file gres.conf names (the driver not loaded, no GPU, or a wrong File=)
_SLURM_NO_FILE = re.compile(r"(?:can't stat|Waiting for) gres\.conf file (/dev/\S+)")
# slurmd discarding a GPU configured without a File= while it autodetected others: the config, not a module
_SLURM_DISCARD = re.compile(r"Discarding the following config-only GPU|autodetected GPUs are being ignored")
# slurmd built without the library its gres.conf asks to autodetect with (AutoDetect=nvml/rsmi)
_SLURM_NO_LIB = re.compile(r"configured to autodetect (\w+) functionality, but we weren't able to find that lib")
# a drain reason naming a GPU fault (scontrol's Reason=, or a sinfo -R row) that is no count line
_GPU_FAULT = r"\b(?:GPU|gpu|GPUs|gpus|Xid|XID|ECC|ecc|NVLink|nvlink|NVRM|nvidia)\b"
# the words that make a drain reason naming a GPU a fault (review 56): without one it is an admin's drain
# ('scheduled nvidia driver upgrade', 'GPU firmware update'), said, not judged
_FAULT_WORD = re.compile(r"\b(?:fail\w*|err(?:or)?s?|lost|los(?:s|ing)|missing|xid|ecc|fallen|fell|off the bus|count|"
                         r"unhealthy|down|dead|hung|hangs?|hanging|degraded|bad|broken|faulty|fault|crash\w*|timeout|"
                         r"timed out|not (?:found|detected|responding|visible)|unreachable|mismatch|throttl\w*|"
                         r"overheat\w*|problems?|issues?|rma|reset required|requires? (?:a )?reset)\b", re.I)
_SLURM_REASON = re.compile(r"\bReason=(.*" + _GPU_FAULT + r".*?)(?:\s\[\S+\])?\s*$")
_SINFO_HEAD = re.compile(r"^\s*REASON\s+USER\s+TIMESTAMP\s+NODELIST\s*$")  # sinfo -R's header
_SINFO_ROW = re.compile(r"^\s*(.*" + _GPU_FAULT + r".*?)\s+\S+\s+\d{4}-\d\d-\d\dT[\d:]+\s+(\S+)\s*$")
# LBNL NHC failing a GPU check ('ERROR: nhc:  Health check failed:  check_gpu_count: …'; its drain note 'NHC: …')
_NHC_FAILED = re.compile(r"Health check failed:\s+(.*" + _GPU_FAULT + r".*)$")
# any NHC check's failure: the check's function name, then its message (Azure's azurehpc-health-checks end it with
# 'FaultCode: NHC2010'); a measurement the suite holds below its threshold ('BUS BW (expected >=431.0 GB/s, but
# measured 15.1 GB/s)', 'Bandwidth 9.8 is less than 24', 'IB BW (expected > 380 Gbps, but measured 12 Gbps',
# STREAM's 'less than expeted value') is said as such, never as a GPU the scheduler lost
_NHC_CHECK = re.compile(r"Health check failed:\s+(?P<check>[A-Za-z_]\w{0,60}):\s+(?P<msg>\S.*?)\s*$")
_NHC_MEASURED = re.compile(r"expected\s*>=?\s*[\d.]+\s*(?:[GM]B/s|Gbps|Gb/s).{0,40}?measured\s+[\d.]+|"
                           r"\bBandwidth\s+[\d.]+\s+is less than\s+[\d.]+|less than expec?ted value", re.I)
# the checks of a GPU or interconnect (the suites' names: check_gpu_*, check_nccl_*, check_ib_*, check_nv_healthmon,
# check_hw_topology, check_nvlink_*, csc's nvidia-smi healthmon); a check of a file system or service is not one
_NHC_SHORT = re.compile(r"_count\b|\bcount\b|\bfound \d+|\blost\b|missing|fallen off|fell off|not (?:found|detected|"
                        r"visible)", re.I)  # a GPU count short or a GPU gone: the node offers fewer GPUs
_NHC_GPU_CHECK = re.compile(r"gpu|nccl|rccl|_ib_|ib_bw|nvlink|nv_|nvsmi|nvidia|xid|ecc|dcgm|hw_topology|xgmi|cuda",
                            re.I)
# a node condition a GPU health agent sets (EKS' AcceleratedHardwareReady False with reason NvidiaXID79Error or
# NvidiaDeviceCountMismatch): describe's row is Type, Status, two times, Reason, Message; the Reason column alone is
# read (a message may name a past fault), and only where the Status means a problem (_CONDITION_UP)
_K8S_TIME = r"(?:\w{3}, \d{1,2} \w{3} \d{4} \d\d:\d\d:\d\d [+-]\d{4}|\d{4}-\d\d-\d\dT[\d:.]+(?:Z|[+-][\d:]{4,5})?|<unknown>)"
_K8S_CONDITION = re.compile(r"^\s*(\w+)\s+(False|True|Unknown)\s+(?:" + _K8S_TIME + r"\s+" + _K8S_TIME + r"\s+)?"
                            r"(\w+)(?:\s|$)")
_GPU_REASON = re.compile(r"(?:Nvidia|NVIDIA|Gpu|GPU|Amd|AMD)\w*(?:Error|Mismatch|Failure|Failed|Unhealthy|Lost|Degraded)\w*")
_GPU_CONDITION = re.compile(r"Accelerat|Gpu|GPU|Nvidia|NVIDIA")  # a GPU agent's own condition (its healthy row read)
# a condition whose name says a good state (Ready, AcceleratedHardwareReady) has a problem when False; the others
# (MemoryPressure, node-problem-detector's GPUProblem, NetworkUnavailable) when True
_CONDITION_UP = re.compile(r"(?:Ready|Healthy|(?<!Un)Available)$")
# the same agents' events ('Warning  NvidiaXID79Error  3m  eks-node-monitoring-agent  …' in describe's Events)
_K8S_EVENT = re.compile(r"^\s*Warning\s+((?:Nvidia|NVIDIA|Gpu|GPU|Amd|AMD)\w*(?:Error|Mismatch|Failure|Failed|Unhealthy|"
                        r"Lost|Degraded)\w*)\s")
# the NVIDIA installer in a driver container (the GPU operator's driver daemonset) failing to load the module
_DRIVER_LOAD = re.compile(r"Unable to load the kernel module '?nvidia(?:\.ko)?'?|Could not load (?:the )?NVIDIA "
                          r"(?:driver )?kernel modules?", re.I)
# the scheduler finding no node with a free GPU: 'Insufficient nvidia.com/gpu' (a pod's FailedScheduling event)
_K8S_INSUFFICIENT = re.compile(r"\d+ Insufficient ((?:nvidia|amd)\.com/gpu)|requested number of devices unavailable "
                               r"for ((?:nvidia|amd)\.com/gpu)")  # kubelet's admission error (UnexpectedAdmissionError)
# the NVIDIA device plugin finding no module to offer (no driver in its view, or the runtime not nvidia's)
_PLUGIN_NONE = re.compile(r"No devices found\. Waiting indefinitely|Incompatible strategy detected|"
                          r"If this is a GPU node, did you (?:set the docker default runtime|configure the NVIDIA)")

# kubelet's device manager admitting a pod to no healthy device, or to devices gone unhealthy since their allocation
# (kubernetes pkg/kubelet/cm/devicemanager/manager.go), and the NVIDIA device plugin marking one unhealthy
# (internal/plugin/server.go): GPUs the node no longer offers (GEN2)
_K8S_UNHEALTHY = re.compile(r"(?:no healthy devices present|previously allocated devices are no longer healthy); "
                            r"cannot allocate unhealthy devices ((?:nvidia|amd)\.com/[\w.-]+)|"
                            r"'((?:nvidia|amd)\.com/[\w.-]+)' device marked unhealthy: (\S+)")
# the GPU operator's driver validation retrying while its driver container's root holds no nvidia-smi (validator
# v1-v23: 'running command chroot with args [/run/nvidia/driver nvidia-smi]', chroot's 'failed to run command',
# 'command failed, retrying after 5 seconds'; cmd/nvidia-validator since: 'failed to validate the driver, retrying
# after N seconds', 'driver is not ready: …'): the driver is not installed on the node (yet)
_OPERATOR_DRIVER = re.compile(r"chroot: failed to run command '?nvidia-smi'?|failed to validate the driver, retrying|"
                              r"\bdriver is not ready: ")
# the validator's own steps that say no fault: its check of a driver on the host (none is expected where the driver
# container installs it) and the command it runs for it
_OPERATOR_STEP = re.compile(r"(?:No pre-installed driver detected|Detected a pre-installed driver|Detected pre-installed "
                            r"driver) on the host|running command chroot with args \[\S*(?:/run/nvidia/driver|/host) "
                            r"nvidia-smi\]")
# the validator's plugin check finding no GPU resource the node offers
_OPERATOR_NO_RESOURCE = re.compile(r"GPU resources are not discovered by the node|unable to find any allocatable GPU "
                                   r"resource")
# slurmctld, slurmd and srun refusing a GRES set-up (src/interfaces/gres.c, src/common/slurm_errno.c): a gres the
# configuration does not define, a gres.conf record not matching its File=, GRES data no plugin reads (GresTypes),
# File= or Type= on some records only, AutoDetect finding another count than slurm.conf gives
_SLURM_GRES_BAD = re.compile(r"Invalid generic resource \(gres\) specification|Invalid GRES (?:record for|configured on "
                             r"node)|No plugin configured to process GRES data|lacks \\?\"File=\\?\" parameter|"
                             r"If using AutoDetect the amount of GPUs configured in slurm\.conf does not match|"
                             r"some records have \\?\"(?:File|Type=)\\?\" specification")

# the device plugin's resources: whole GPUs, and under MIG's mixed strategy each MIG profile's slices
# ('nvidia.com/mig-1g.10gb: 56'): the node's GPUs in MIG mode are offered as those, not as nvidia.com/gpu
# issue 46 (FX68A): Habana's and Huawei's device plugins' resources the same way (habana.ai/gaudi,
# huawei.com/Ascend910, huawei.com/Ascend310P)
_K8S_RESOURCE = r"((?:nvidia|amd)\.com/gpu|habana\.ai/gaudi|huawei\.com/Ascend\w{1,20}?|nvidia\.com/mig-[\w.-]{1,40}?)"
_MIG = "nvidia.com/mig-"
_K8S_BLOCK = re.compile(r"^\s*\"?(capacity|allocatable)\"?:\s*\{?\s*$", re.I)  # describe's, -o yaml's, -o json's
# FX68A: text after the value ('nvidia.com/gpu:  7       <=========== here', a poster's mark) is tolerated and noted
_K8S_ENTRY = re.compile(r"^\s*\"?" + _K8S_RESOURCE + r"\"?:\s*\"?(\d+)\"?,?(?:\s+(\S[^\n]{0,200}?))?\s*$")
_K8S_KEY = re.compile(r"^\s*\"?[\w./-]+\"?:\s*\S")  # any entry of a block (cpu: 8, memory: 1Ki)
# one-line forms: jsonpath ('status.capacity.amd.com/gpu: 0'), and custom-columns' names
_K8S_INLINE = re.compile(r"\b(capacity|allocatable)\.\"?" + _K8S_RESOURCE + r"\"?\s*[:=]\s*\"?(\d+)", re.I)
# GPU feature discovery's label: the modules the node had when it was labelled (its design, in the node's words)
_GFD_COUNT = re.compile(r"\b" + _K8S_RESOURCE + r"\.count[=:]\s*\"?(\d+)")
_GPU_WORD = re.compile(r"\bGPUs?\b|nvidia|amdgpu|rocm|\bgpu\b", re.I)
# the node a Kubernetes listing is of: its hostname label (describe's Labels, -o yaml/json), -o yaml's address of
# type Hostname, or describe's first line 'Name:  gpu-node-031' (a node's: 'Roles:' follows it; a pod's does not)
_K8S_HOSTNAME = re.compile(r"kubernetes\.io/hostname\"?\s*[=:]\s*\"?([A-Za-z0-9][\w.-]{0,62})")
_K8S_ADDRESS = re.compile(r"^\s*-?\s*\"?address\"?:\s*\"?([A-Za-z][\w.-]{0,62})\"?,?\s*$")
_K8S_NAME = re.compile(r"^Name:\s+([A-Za-z0-9][\w.-]{0,62})\s*$")

# nv-hostengine's log: 'YYYY-MM-DD HH:MM:SS.mmm ERROR [pid:tid] message [file:line] [function]'
_HOSTENGINE = re.compile(r"\bERROR\s+\[\d+:\d+\]\s+(.*?Failed to initialize NVML.*?)(?:\s\[/\S+\])")
# dcgmi or dcgm-exporter finding no host engine to talk to (nv-hostengine / nvidia-dcgm not running)
_NO_HOSTENGINE = re.compile(r"Unable to connect to host engine|Host engine connection invalid/disconnected|"
                            r"unable to establish a connection to the specified host|Host engine is not valid any longer",
                            re.I)
# the container runtime failing to hand a GPU over by CDI name (podman, docker, containerd)
_CDI = re.compile(r"unresolvable CDI devices?|failed to inject CDI devices|CDI device injection failed", re.I)



@dataclass
class _Blocks:
    """A Kubernetes node's resource blocks as read: (block, resource) -> count and the line that said it."""

    counts: dict[tuple[str, str], tuple[int, Line]] = field(default_factory=dict)
    bare: list[Line] = field(default_factory=list)  # a block that listed entries but no GPU resource
    trailing: list[tuple[Line, str]] = field(default_factory=list)  # a GPU entry's text after its value
    read: set[int] = field(default_factory=set)  # the lines of the blocks that list a GPU resource


def parse(lines: list[Line], marks: Marks | None = None) -> AppErrorsParse:
    """The scheduler's, orchestrator's, DCGM host engine's and container runtime's GPU lines. ``marks``: the
    whole text's, whose byte triples tell the words it lacks (a bug report: most of them) without a search."""
    out = AppErrorsParse()
    nhc_checks.read(lines, out, marks)  # R14D: NHC's hardware checks (IB port, Ethernet device), its edited counts
    slurm = _candidates(lines, _SLURM_WORDS, marks)
    if slurm:  # sinfo -R's rows hold none of the words: after its header every line is read
        seen = out.claimed  # nhc_checks' lines (R14D) are read
        _slurm([ln for ln in lines if ln.no not in seen] if any("REASON" in lines[i].text for i in slurm)
               else [lines[i] for i in slurm if lines[i].no not in seen], out)
    if marks is None or any(marks.may(w) for w in _K8S_WORDS):
        _kubernetes(lines, out)
    for i in _candidates(lines, _LINE_WORDS, marks):  # each pattern tried only on a line holding a literal it needs
        ln = lines[i]
        t = ln.text
        if "hostengine" in t and (m := _HOSTENGINE.search(t)) is not None:
            _add(out, "hostengine_no_nvml", ln, m.group(1).strip(), tool="nv-hostengine")
        elif ("ost engine" in t or "specified host" in t) and _NO_HOSTENGINE.search(t):
            _add(out, "hostengine_unreachable", ln, t.strip(), tool="DCGM")
        elif "CDI" in t and _CDI.search(t):
            _add(out, "container_cdi", ln, t.strip(), tool="container runtime (CDI)")
        elif ("No devices" in t or "strategy" in t or "GPU node" in t) and _PLUGIN_NONE.search(t):
            _add(out, "k8s_plugin_no_devices", ln, t.strip(), tool="NVIDIA device plugin")
        elif (" False " in t or " True " in t) and (cond := _K8S_CONDITION.match(t)) is not None:
            _condition(out, ln, cond.group(1), cond.group(2), cond.group(3))
        elif "Warning" in t and (event := _K8S_EVENT.match(t)) is not None:
            _add(out, "k8s_gpu_condition", ln, f"node event {event.group(1)}: {t.strip()}", tool="Kubernetes")
        elif "kernel module" in t and _DRIVER_LOAD.search(t):
            _add(out, "driver_load_failed", ln, t.strip(), tool="NVIDIA installer (driver container)")
        elif _device_layer(out, ln):
            continue
        elif ("Insufficient" in t or "unavailable for" in t) and (short := _K8S_INSUFFICIENT.search(t)) is not None:
            _add(out, "k8s_insufficient_gpu", ln, f"no free {short.group(1) or short.group(2)}: {t.strip()}",
                 tool="Kubernetes scheduler")
    node_reports.read(lines, out)  # a health check's or smoke test's verdict per node (AX2)
    ops_logs.read(lines, out, marks)  # sinfo, kubectl get pods, gres.conf fatals, gpud, dcgm-exporter, Ray (OPS3)
    job_view.read(lines, out, marks)  # a job's or container's device view: pyxis/enroot, cgroup.conf, srun tasks (R3A)
    cluster_texts.read(lines, out, marks)  # kubectl ds/describe, Xid conditions and counts, Gaudi ports, NHC design (R4C)
    exporter_text.read(lines, out, marks)  # a non-GPU exporter's Prometheus text: read, not judged (R5B)
    node_services.read(lines, out, marks)  # systemd: DCGM's host engine unit failed (R5B)
    accel_runtime.read(lines, out, marks)  # nrtd, tpu-info, any vendor's device plugin in kubelet, gpud fabric (R8B)
    accel_runtime_lines.read(lines, out, marks)  # the Neuron runtime's crash report header: versions, no fault (R10B)
    accel_runtime_lines.read_ascend(lines, out, marks)  # Ascend DSMI could not count the NPUs (R10B)
    health_events.read(lines, out, marks)  # NVSentinel's health monitors: read, a failure left to others (R9C)
    fabric_tools.read(lines, out, marks)  # Slingshot's diags, ibdiagnet counters, switch views, GPCNeT (R12A)
    fabric_counters.read(lines, out, marks)  # ibdiagnet PM, UFM unhealthy ports, cxi driver errors (R13B)
    slurm_nodes.read(lines, out, marks)  # sinfo -o with '|' separators: GPU nodes down or not responding (R12A)
    scheduler_devices.read(lines, out, marks)  # HAMi's registered devices, ray status' GPUs: read, listed (R14D)
    if out.errors:
        kinds = ", ".join(dict.fromkeys(e.kind for e in out.errors))
        out.notes.append(f"scheduler, orchestrator and runtime GPU lines: {len(out.claimed)} read ({kinds})")
    return out


# the literals parse's line patterns need, one of them on every line it reads; Slurm's and Kubernetes' readers'
_LINE_WORDS = ("hostengine", "ost engine", "specified host", "CDI", "No devices", "strategy", "GPU node", " False ",
               " True ", "Warning", "kernel module", "Insufficient", "unavailable for", "unhealthy", "chroot",
               "validate the driver", "driver is not ready", "GPU resource", "pre-installed", "running command")
_SLURM_WORDS = ("gres", "GRES", "generic resource", "Reason=", "REASON", "config-only", "autodetect", "check failed",
                "NodeName=", "Gres=",
                "State=")
_K8S_WORDS = ("apacity", "llocatable", "APACITY", "LLOCATABLE", ".count")


def _candidates(lines: list[Line], words: tuple[str, ...], marks: Marks | None) -> list[int]:
    """The indexes of the lines holding one of ``words`` that ``marks`` does not rule out (marks.holding: a long
    text's found in it, issue 43; joining a bug report's lines a block at a time made each a Line, 0.15 s at 20 MB)."""
    return holding(lines, words, marks)


def _device_layer(out: AppErrorsParse, ln: Line) -> bool:
    """A line of kubelet's device manager, the device plugin's health or the GPU operator's validator: read (True)
    where one of their patterns says it (GEN2)."""
    t = ln.text
    if "unhealthy" in t and (sick := _K8S_UNHEALTHY.search(t)) is not None:
        said = f"{sick.group(2)} device {sick.group(3)} marked unhealthy" if sick.group(2) else \
            f"no healthy {sick.group(1)} to allocate"
        _add(out, "k8s_device_unhealthy", ln, f"{said}: {t.strip()}", tool="Kubernetes device manager")
    elif ("chroot" in t or "driver" in t) and _OPERATOR_DRIVER.search(t):
        _add(out, "operator_driver_not_ready", ln, t.strip(), tool="GPU operator validator")
    elif ("pre-installed" in t or "running command" in t) and (step := _OPERATOR_STEP.search(t)) is not None:
        out.claimed.add(ln.no)
        out.notes += [] if any("validator's step" in n for n in out.notes) else [
            f"the GPU operator validator's step (line {ln.no}: {step.group(0)[:90]}): no fault by itself"]
    elif "GPU resource" in t and _OPERATOR_NO_RESOURCE.search(t):
        _add(out, "k8s_no_gpu_resource", ln, f"the GPU operator's validator: {t.strip()}", tool="GPU operator")
    else:
        return False
    return True


def _add(out: AppErrorsParse, kind: str, ln: Line, text: str, tool: str, host: str | None = None) -> None:
    """A record of ``kind``, counted once per host (a drain record carries the node or node list it names, AX2)."""
    out.claimed.add(ln.no)
    for i, e in enumerate(out.errors):
        if e.kind == kind and e.host == host:
            out.errors[i] = AppError(e.kind, e.line, e.text, e.module, e.tool, e.times + 1, host=host)
            return
    out.errors.append(AppError(kind, ln.no, text[:300], None, tool, host=host))


def _condition(out: AppErrorsParse, ln: Line, kind: str, status: str, reason: str) -> None:
    """A node condition row: a GPU fault where its Reason names one and its Status means a problem; a GPU
    agent's condition, or a fault's name under a status meaning none (a message of one cleared), said."""
    fault = _GPU_REASON.fullmatch(reason) is not None
    problem = status == ("False" if _CONDITION_UP.search(kind) else "True")
    if fault and problem:
        _add(out, "k8s_gpu_condition", ln, f"node condition {kind} {status}: {reason}: {ln.text.strip()}",
             tool="Kubernetes")
    elif not problem and status != "Unknown" and (fault or _GPU_CONDITION.search(kind)):
        out.claimed.add(ln.no)
        out.notes.append(f"Kubernetes node condition {kind} {status}, reason {reason}: no GPU problem")


def _slurm(lines: list[Line], out: AppErrorsParse) -> None:
    """Slurm's count lines (the node named where its line or an earlier NodeName= says), slurmd's missing
    device files and discarded GPUs, and a drain reason naming a GPU fault."""
    node: str | None = None
    sinfo = False
    for ln in lines:
        s = ln.text
        if "NodeName=" in s and (m := _SLURM_NODE.search(s)) is not None:
            node = m.group(1)
        if ("Gres=" in s or "State=" in s) and node is not None and (rec := _SLURM_RECORD.search(s)) is not None:
            out.claimed.add(ln.no)  # a node record's GPUs and state (scontrol show node): read, judged by its Reason=
            out.notes.append(f"Slurm node {node}: {rec.group(0)}")
        if "REASON" in s and _SINFO_HEAD.match(s):
            sinfo = True
            continue
        if sinfo and (row := _SINFO_ROW.match(s)) is not None and not _SLURM_LOW.search(s):
            _drained(out, ln, f"{row.group(2)} drained", row.group(1).strip(), "Slurm (sinfo -R)",
                     [row.group(2)])  # the row's node list as Slurm prints it: one drain, one record
            continue
        if "gres" not in s and "GRES" not in s and "Reason=" not in s and "config-only" not in s \
                and "autodetect" not in s and "check failed" not in s:
            continue
        if (low := _SLURM_LOW.search(s)) is not None:
            where = _node_in(s) or node
            said = f"{'node ' + where + ': ' if where else ''}Slurm counts {low.group(1)} GPU(s) of " \
                   f"{low.group(2)} configured: {s.strip()}"
            _add(out, "slurm_gpu_count_low", ln, said, tool="Slurm")
        elif (changed := _SLURM_CHANGED.search(s)) is not None:
            said = f"node {changed.group(1)}: Slurm's GPU count changed from {changed.group(2)} configured to " \
                   f"{changed.group(3)}: {s.strip()}"
            kind = "slurm_gpu_count_low" if int(changed.group(3)) < int(changed.group(2)) else "slurm_gres_config"
            _add(out, kind, ln, said, tool="Slurm")
        elif (nofile := _SLURM_NO_FILE.search(s)) is not None:
            _add(out, "slurm_gres_no_device", ln, f"slurmd: no device file {nofile.group(1)}: {s.strip()}",
                 tool="slurmd")
        elif (lib := _SLURM_NO_LIB.search(s)) is not None:
            _add(out, "slurm_gres_config", ln, f"slurmd cannot autodetect with {lib.group(1)} (not built with it): "
                 f"{s.strip()}", tool="slurmd")
        elif (refused := _SLURM_GRES_BAD.search(s)) is not None or _SLURM_DISCARD.search(s):
            _add(out, "slurm_gres_config", ln, s.strip(), tool="slurmd" if refused is None else "Slurm")
        elif (check := _NHC_CHECK.search(s) or nhc_checks.RETURNED.search(s)) is not None:  # R14D: 'Check … returned 1'
            _nhc_failed(out, ln, check.group("check"), check.groupdict().get("msg") or check.group(0))
        elif (nhc := _NHC_FAILED.search(s)) is not None:
            _add(out, "slurm_drained_gpu", ln, f"node health check failed: {nhc.group(1).strip()}", tool="NHC")
        elif (reason := _SLURM_REASON.search(s)) is not None:
            _drained(out, ln, f"{'node ' + node + ': ' if node else ''}drained", reason.group(1), "Slurm",
                     [node] if node else None)


def _nhc_failed(out: AppErrorsParse, ln: Line, check: str, message: str) -> None:
    """An NHC check that failed: a measurement below its threshold, or another GPU or interconnect check, is the
    suite's verdict, cited (a GPU count short or a GPU lost: the GPUs the node no longer offers); a file system's
    or service's check is said, not judged (no module of gpuvet's)."""
    said = f"{check}: {message}"
    gpu = _NHC_GPU_CHECK.search(check) is not None or re.search(_GPU_FAULT, message) is not None
    if _NHC_MEASURED.search(message):
        _add(out, "nhc_below_threshold", ln, said, tool="NHC")
    elif gpu and _NHC_SHORT.search(f"{check} {message}"):
        _add(out, "slurm_drained_gpu", ln, f"node health check failed: {said}", tool="NHC")
    elif gpu:
        _add(out, "nhc_check_failed", ln, said, tool="NHC")
    else:
        out.claimed.add(ln.no)
        out.notes.append(f"NHC check {check} failed ({message[:120]}): not a GPU or interconnect check, not judged")


def _drained(out: AppErrorsParse, ln: Line, who: str, reason: str, tool: str, hosts: list[str] | None = None) -> None:
    """A drain reason naming a GPU: a fault where it says one (_FAULT_WORD), carrying the node (or sinfo's node list)
    the record names, else an admin's drain, said."""
    said = f"{who}: {reason}"
    if _FAULT_WORD.search(reason):
        for host in hosts or (None,):
            _add(out, "slurm_drained_gpu", ln, said, tool=tool, host=host)
    else:
        out.claimed.add(ln.no)
        out.notes.append(f"Slurm {said} (an admin's drain: the reason names no fault)")


def _node_in(text: str) -> str | None:
    m = _SLURM_NODE.search(text)
    return (m.group(1) or m.group(2)) if m else None


def _kubernetes(lines: list[Line], out: AppErrorsParse) -> None:
    """Kubernetes' GPU resources, node by node (kubectl describe nodes prints each node's 'Name:' then its own
    Capacity and Allocatable: one node's counts are never put on another's, REV68a)."""
    starts = [i for i, ln in enumerate(lines) if ln.text.startswith("Name:") and _K8S_NAME.match(ln.text)
              and any(n.text.startswith("Roles:") for n in lines[i + 1:i + 3])]
    cuts = [0, *starts[1:], len(lines)]
    for a, b in zip(cuts, cuts[1:], strict=False):
        _kubernetes_node(lines[a:b], out, several=len(starts) > 1)


def _kubernetes_node(lines: list[Line], out: AppErrorsParse, several: bool = False) -> None:
    """One node's GPU resources: allocatable below capacity (GPUs the device plugin marked unhealthy), a
    capacity of none, or blocks that list no GPU resource in a file about GPUs."""
    blocks = _blocks(lines)
    out.claimed.update(ln.no for _, ln in blocks.counts.values())
    out.claimed |= blocks.read  # FX68A: a GPU-listing block's other entries (cpu, memory, pods) are read with it
    out.notes += [f"line {ln.no}: text after {res_said}'s value tolerated ({said[:60]!r})"
                  for ln, said in blocks.trailing if (res_said := ln.text.strip().split(":")[0].strip('"'))]
    node = _k8s_node(lines) if blocks.counts or blocks.bare else None
    if node is not None:
        out.notes.append(f"Kubernetes node {node} (named by the listing)")
    before = len(out.errors)
    slices = {r: n for (b, r), (n, _) in blocks.counts.items() if b != "labelled" and r.startswith(_MIG) and n > 0}
    if slices:
        out.notes.append(f"Kubernetes: MIG slices offered ({', '.join(sorted(slices))}): the GPUs in MIG mode are "
                         "offered as those, so nvidia.com/gpu below the GPUs labelled, or none, is not judged a GPU lost")
    for res in sorted({r for _, r in blocks.counts}):
        cap, alloc = blocks.counts.get(("capacity", res)), blocks.counts.get(("allocatable", res))
        out.notes.append(f"Kubernetes {res}: capacity {cap[0] if cap else 'not shown'}, allocatable "
                         f"{alloc[0] if alloc else 'not shown'}")
        labelled = blocks.counts.get(("labelled", res))
        whole = bool(slices) and res == "nvidia.com/gpu"  # some of the GPUs partitioned: not all offered whole
        if labelled is not None and cap is not None and cap[0] < labelled[0] and not whole:
            said = f"{res}: capacity {cap[0]} of the {labelled[0]} GPU feature discovery labelled (gpu.count)"
            _add(out, "k8s_gpus_unhealthy", cap[1], said, tool="Kubernetes")
        elif cap is not None and alloc is not None and alloc[0] < cap[0]:
            said = f"{res}: allocatable {alloc[0]} of capacity {cap[0]} ({cap[0] - alloc[0]} device(s) withheld" + (
                ", all of them: the device plugin itself may be down)" if alloc[0] == 0 else " by the device plugin)")
            _add(out, "k8s_gpus_unhealthy", alloc[1], said, tool="Kubernetes")
        elif (said_one := cap or alloc) is not None and said_one[0] == 0 and not whole and not res.startswith(_MIG):
            ln = said_one[1]
            _add(out, "k8s_no_gpu_resource", ln, f"{res}: none offered: {ln.text.strip()}", tool="Kubernetes")
    if not blocks.counts and blocks.bare and any(_GPU_WORD.search(ln.text) for ln in lines):
        ln = blocks.bare[0]
        _add(out, "k8s_no_gpu_resource", ln, f"the node's {ln.text.strip().rstrip(':')} lists no nvidia.com/gpu or "
             "amd.com/gpu resource", tool="Kubernetes")
    if node is not None:  # the findings read here say which node, as Slurm's do
        out.errors[before:] = [replace(e, text=f"node {node}: {e.text}"[:300], host=node if several else e.host)
                               for e in out.errors[before:]]  # several nodes: each finding on its own


def _k8s_node(lines: list[Line]) -> str | None:
    """The node the listing names: its hostname label, -o yaml's Hostname address, describe's 'Name:' line."""
    for ln in lines:
        if "hostname" in ln.text and (label := _K8S_HOSTNAME.search(ln.text)) is not None:
            return label.group(1)
    for i, ln in enumerate(lines):
        s = ln.text
        if "address" in s and (addr := _K8S_ADDRESS.match(s)) is not None and i + 1 < len(lines) \
                and re.search(r"type\"?:\s*\"?Hostname\b", lines[i + 1].text):
            return addr.group(1)
        if s.startswith("Name:") and (name := _K8S_NAME.match(s)) is not None and \
                any(n.text.startswith("Roles:") for n in lines[i + 1:i + 3]):
            return name.group(1)
    return None


def _blocks(lines: list[Line]) -> _Blocks:
    got = _Blocks()
    block: str | None = None
    gpu_in_block = False
    opened: Line | None = None
    for ln in lines:
        s = ln.text
        if ".count" in s and (label := _GFD_COUNT.search(s)) is not None:
            got.counts[("labelled", label.group(1))] = (int(label.group(2)), ln)
        named = "apacity" in s or "llocatable" in s or "APACITY" in s or "LLOCATABLE" in s
        if named and (inline := _K8S_INLINE.search(s)) is not None:
            got.counts[(inline.group(1).lower(), inline.group(2))] = (int(inline.group(3)), ln)
            continue
        if named and (head := _K8S_BLOCK.match(s)) is not None:
            _close(got, block, gpu_in_block, opened)
            block, gpu_in_block, opened = head.group(1).lower(), False, ln
            continue
        if block is None:
            continue
        if (entry := _K8S_ENTRY.match(s)) is not None:
            got.counts[(block, entry.group(1))] = (int(entry.group(2)), ln)
            gpu_in_block = True
            if entry.group(3):
                got.trailing.append((ln, entry.group(3)))
        elif not _K8S_KEY.match(s) or not s.startswith((" ", "\t")):
            _close(got, block, gpu_in_block, opened)
            block = None
            continue
        got.read.add(ln.no)
    _close(got, block, gpu_in_block, opened)
    return got


def _close(got: _Blocks, block: str | None, gpu_in_block: bool, opened: Line | None) -> None:
    if block is not None and not gpu_in_block and opened is not None:
        got.bare.append(opened)
    if block is not None and gpu_in_block and opened is not None:
        got.read.add(opened.no)
