"""Texts of the layer that runs accelerator clusters that ops_layer's rules leave unread (issue 46, R4C): Kubernetes'
own formats (``kubectl get ds``' READY against DESIRED for the GPU stack's daemonsets, ``kubectl describe pod``'s
init container that exited non-zero, ``kubectl describe node``'s XidCriticalError condition with its Xids as JSON),
a metric's Xid counts per node, Habana's ``manage_network_ifs.sh --status`` ('no interfaces were detected' under an
accel), and a health check suite's NVLink or P2P check held against a PCIe GPU's design.

Each adds records of its own kind to ops_layer's parse (doctor/capture_errors.KIND_CAUSES judges them) or a note:
a daemonset not ready or an init container that failed before and runs again is the deployment's state (info),
never the GPU's, while one failing now (describe pod's State Waiting in CrashLoopBackOff) is get pods'
Init:CrashLoopBackOff and judged as it (ops_logs); Xid 45 (the driver's preemptive cleanup of a channel a process
left) counted across a rack is no fault; an Xid condition is the condition's words, judged as the Xids it names
would be where they are the program's own (13, 31, 43, 45: said)."""

from __future__ import annotations

import re

from gpuvet.captures import ops_logs
from gpuvet.captures.app_errors import AppErrorsParse
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.records import AppError
from gpuvet.captures.text import Line

# the literals a line read here holds one of (runtime_marks.OPS_MARKS has each, the format's markers)
MARKS = (
    "DESIRED",
    "Init Containers:",
    "XidCritical",
    "XID 45",
    "Xid 45",
    "interfaces were detected",
    "manage_network_ifs",
)

# kubectl get ds (-A): [NAMESPACE] NAME DESIRED CURRENT READY UP-TO-DATE AVAILABLE NODE SELECTOR AGE
_DS_HEAD = re.compile(r"^\s*(?:NAMESPACE\s+)?NAME\s+DESIRED\s+CURRENT\s+READY\s+UP-TO-DATE\s+AVAILABLE\b")
_DS_ROW = re.compile(
    r"^\s*(?:(?P<ns>[a-z0-9][\w.-]{0,62})\s+)?(?P<name>[a-z0-9][\w.-]{0,62})\s+(?P<desired>\d+)\s+"
    r"(?P<current>\d+)\s+(?P<ready>\d+)\s+\d+\s+\d+(?:\s|$)"
)
# the GPU software stack's pods and daemonsets by name (the GPU operator's operands, a device plugin, DCGM)
_GPU_STACK = re.compile(
    r"nvidia|gpu|driver|device-plugin|dcgm|container-toolkit|mig-manager|amdgpu|rocm|habana|neuron", re.I
)
# kubectl describe pod: 'Name:' first, its containers under 'Init Containers:'/'Containers:' at two spaces
_POD_NAME = re.compile(r"^Name:\s+([a-z0-9][\w.-]{0,62})\s*$")
_CONTAINER = re.compile(r"^  ([a-z0-9][\w.-]{0,62}):\s*$")
_EXIT = re.compile(r"^\s+Exit Code:\s+(\d{1,3})\s*$")
_NODE = re.compile(r"^Node:\s+([\w.-]{1,63})(?:/|\s*$)")
# a container's State (now) or Last State (before) and the Reason under it: 'State: Waiting' / 'Reason: CrashLoopBackOff'
_STATE = re.compile(r"^\s{2,8}(State|Last State):\s+(\w+)")
_REASON = re.compile(r"^\s{4,10}Reason:\s+(\w+)")
# the states kubectl get pods shows as a failing STATUS (ops_logs' _POD_FAILING): the same fact, the same verdict
_FAILING_NOW = frozenset(
    {
        "CrashLoopBackOff",
        "ImagePullBackOff",
        "ErrImagePull",
        "CreateContainerConfigError",
        "CreateContainerError",
        "RunContainerError",
        "Error",
        "OOMKilled",
    }
)
# describe node's condition row whose reason is the GPU device plugin's Xid map ('{"31":true}'), GKE's (PR 497)
_XID_CONDITION = re.compile(r"^\s*(XidCriticalError\w*)\s+(True|False|Unknown)\b.*?(\{(?:\s*\"\d{1,3}\"\s*:\s*\w+,?)+\})")
_XID_REASON = re.compile(r"^\s*reason:\s*'?(\{(?:\s*\"\d{1,3}\"\s*:\s*\w+,?)+\})'?\s*$")
_XID_CODE = re.compile(r"\"(\d{1,3})\"\s*:\s*true")
# the Xids NVIDIA's catalog gives to the program's own work (an exception, a page fault, a reset channel, a cleanup)
_PROGRAM_XIDS = frozenset({13, 31, 43, 45})
# a metric's Xid 45 count beside a node (NVSentinel's, a Prometheus table): prose or table that names Xid 45
_XID45 = re.compile(r"\bXID[ _]?45\b", re.I)
# one blank run between fields and none twice in a row (each item ends on its blanks or the end): linear on long blanks
_COUNT_ROW = re.compile(r"^\s*(?:[A-Za-z][\w.-]{0,62}\s+\d[\d,]{0,12}(?:\s+<--)?(?:\s+|$)){1,8}$")
_ROW_MOST = 400  # characters: a count row is a node's name and a few numbers
# manage_network_ifs.sh --status: an accel's name on its own line, then its interfaces or 'no interfaces were detected'
_ACCEL = re.compile(r"^\s*(accel\d{1,3})\s*$")
_NO_IFS = re.compile(r"no (?:habanalabs )?(?:network )?interfaces were detected", re.I)
# a PCIe SKU's name (whose NVLink, bridged at all, has fewer links than an SXM module's) and an NVLink or P2P check
# a line without one of these holds no name _PCIE_SKU reads (H100, A800, NCv5 …): the cheap test before it
_SKU_DIGITS = ("100", "200", "800", "v5", "V5")
_PCIE_SKU = re.compile(r"\b(?:H100|H200|A100|A800|H800)[ -]?(?:PCIe|NVL)\b|\bNC\w{0,12}H100\w{0,4}v5\b|\bNCv5\b", re.I)
_NVLINK_CHECK = re.compile(r"nvlinks? inactive|check_nvlink", re.I)
_P2P_BW = re.compile(r"\bP2P\b.*?\bBandwidth\s+(\d{1,9}(?:\.\d{1,9})?)\s+is less than\s+(\d{1,9}(?:\.\d{1,9})?)", re.I)
_PCIE_MOST = 64.0  # GB/s: more than a PCIe Gen5 x16 link carries one way, so an NVLink bridge carried it


def read(lines: list[Line], out: AppErrorsParse, marks: Marks | None = None) -> None:
    """The lines above, added to ``out`` (ops_layer.parse's); lines it claimed already are left to it."""
    held = holding(lines, MARKS, marks)
    texts = [lines[i].text for i in held]
    if any("DESIRED" in t for t in texts):
        _daemonsets(lines, out)
    if any("Init Containers:" in t for t in texts):
        _init_exits(lines, out)
    if any("XidCritical" in t for t in texts):
        _xid_condition(lines, out)
    if any("XID 45" in t or "Xid 45" in t for t in texts):
        _xid45_counts(lines, out)
    if any("interfaces were detected" in t or "manage_network_ifs" in t for t in texts):
        _no_interfaces(lines, out)
    if any(e.tool == "NHC" for e in out.errors):
        _other_design(lines, out)


def _add(out: AppErrorsParse, kind: str, ln: Line, text: str, tool: str, module: str | None = None) -> None:
    out.claimed.add(ln.no)
    out.errors.append(AppError(kind, ln.no, text[:300], module, tool))


def _daemonsets(lines: list[Line], out: AppErrorsParse) -> None:
    """Each GPU stack daemonset whose READY is below DESIRED: its pods did not come up on that many nodes (info)."""
    head = next((i for i, ln in enumerate(lines) if "DESIRED" in ln.text and _DS_HEAD.match(ln.text)), None)
    if head is None:
        return
    out.claimed.add(lines[head].no)
    ready = []
    for ln in lines[head + 1 :]:
        row = _DS_ROW.match(ln.text)
        if row is None:
            continue
        out.claimed.add(ln.no)
        name, want, up = row.group("name"), int(row.group("desired")), int(row.group("ready"))
        if up < want and _GPU_STACK.search(name):
            _add(
                out,
                "k8s_stack_not_ready",
                ln,
                f"daemonset {name}: {up} of {want} pod(s) ready: {ln.text.strip()}",
                "Kubernetes (kubectl get ds)",
            )
        else:
            ready.append(name)
    if ready:
        out.notes.append(f"kubectl get ds: {len(ready)} daemonset(s) ready or not the GPU stack's")


def _init_exits(lines: list[Line], out: AppErrorsParse) -> None:
    """A GPU stack pod's container (an init container first) that failed. Failing now (its State Waiting in
    CrashLoopBackOff or an image error, or Terminated non-zero) is what kubectl get pods shows as
    Init:CrashLoopBackOff: judged as that status is (ops_logs.operand_failing); a non-zero exit only in its Last
    State (the container running again) is the deployment retrying (info)."""
    pod = next((m.group(1) for ln in lines[:12] if (m := _POD_NAME.match(ln.text)) is not None), None)
    if pod is None or not _GPU_STACK.search(pod):
        return
    node = next((m.group(1) for ln in lines[:40] if "Node:" in ln.text and (m := _NODE.match(ln.text))), None)
    init, container, state = False, "", ""
    exited: tuple[Line, str] | None = None
    for ln in lines:
        t = ln.text
        if t.startswith(("Init Containers:", "Containers:")):
            init = t.startswith("Init")
        elif t.rstrip().endswith(":") and (c := _CONTAINER.match(t)) is not None:
            container, state = c.group(1), ""
        elif not container or ":" not in t:
            continue
        elif "State:" in t and (st := _STATE.match(t)) is not None:
            state = st.group(2) if st.group(1) == "State" else "last"
        elif "Reason:" in t and state in ("Waiting", "Terminated") and (r := _REASON.match(t)) is not None:
            if r.group(1) in _FAILING_NOW:
                status = f"{'Init:' if init else ''}{r.group(1)}"
                said = f"pod {pod}: container {container} {status}: {t.strip()}"
                ops_logs.operand_failing(out, ln, pod, status, said, node)
                return
        elif exited is None and "Exit Code:" in t and (e := _EXIT.match(t)) is not None and e.group(1) != "0":
            exited = (ln, f"pod {pod}: container {container} exited {e.group(1)}: {t.strip()}")
    if exited is not None:
        _add(out, "k8s_stack_not_ready", exited[0], exited[1], "Kubernetes (kubectl describe pod)")


def _xid_condition(lines: list[Line], out: AppErrorsParse) -> None:
    """describe node's XidCriticalError condition (its row or -o yaml's reason): the Xids it names; those of the
    program's own work said, any other judged as the condition of a GPU the node no longer offers."""
    for ln in lines:
        m = _XID_CONDITION.match(ln.text) or _XID_REASON.match(ln.text)
        if m is None:
            continue
        xids = sorted({int(x) for x in _XID_CODE.findall(m.group(m.lastindex or 0))})
        status = m.group(2) if m.re is _XID_CONDITION else "as -o yaml gives it"
        said = f"node condition XidCriticalError {status}: Xid {', '.join(map(str, xids)) or 'none'}"
        if xids and status in ("True", "as -o yaml gives it") and not set(xids) <= _PROGRAM_XIDS:
            _add(out, "k8s_gpu_condition", ln, f"{said}: {ln.text.strip()}", "Kubernetes")
            continue
        out.claimed.add(ln.no)
        note = (
            f"Kubernetes {said} (line {ln.no}): Xid 13/31/43/45 are the program's own work (an exception, a page "
            "fault, a reset channel, a cleanup), no fault of the module by themselves"
        )
        out.notes += [] if any(n.startswith("Kubernetes node condition XidCritical") for n in out.notes) else [note]


def _xid45_counts(lines: list[Line], out: AppErrorsParse) -> None:
    """Xid 45 counted per node (a metric's table or a sentence): the driver's cleanup of a process's channels, as
    many on every node of a job; said, never a fault."""
    said = [ln for ln in lines if "45" in ln.text and _XID45.search(ln.text)]
    if not said:
        return
    near = {n for ln in said for n in range(ln.no - 40, ln.no + 41)}  # the table beside what names Xid 45, not any
    rows = [
        ln
        for ln in lines
        if ln.no in near and len(ln.text) <= _ROW_MOST and _COUNT_ROW.match(ln.text) and re.search(r"\d{2,}", ln.text)
    ]
    out.claimed.update(ln.no for ln in (*said, *rows))
    out.notes.append(
        f"Xid 45 counted (line {said[0].no}{f', {len(rows)} row(s) of counts per node' if rows else ''}):"
        " Xid 45 is the driver's preemptive cleanup of a channel a process left (it ended or was killed),"
        " counted on every node a job runs on; no fault of a module by itself"
    )


def _no_interfaces(lines: list[Line], out: AppErrorsParse) -> None:
    """manage_network_ifs.sh --status: each accel followed by 'no interfaces were detected' has no scale-out port
    up; its --up's 'no habanalabs network interfaces were detected' says the same of the node; an accel followed by
    its interfaces' names is read, said in a note."""
    accel: str | None = None
    up = []
    for ln in lines:
        named, accel = accel, None  # an accel's status is the line right after its name
        if "accel" in ln.text and (a := _ACCEL.match(ln.text)) is not None:
            accel = a.group(1)
            out.claimed.add(ln.no)
        elif "interfaces were detected" not in ln.text or not _NO_IFS.search(ln.text):
            if named is not None and ln.text.strip():
                up.append(named)
                out.claimed.add(ln.no)
        elif named is not None:
            _add(out, "accel_no_interfaces", ln, f"{named}: {ln.text.strip()}", "manage_network_ifs.sh", module=named)
        elif not any(e.kind == "accel_no_interfaces" for e in out.errors):
            _add(out, "accel_no_interfaces", ln, ln.text.strip(), "manage_network_ifs.sh")
        else:
            out.claimed.add(ln.no)
    if up:
        out.notes.append(f"manage_network_ifs.sh: {len(up)} accel(s) list their network interfaces ({', '.join(up[:8])})")


def _other_design(lines: list[Line], out: AppErrorsParse) -> None:
    """A health check's NVLink or P2P check failed (ops_layer's NHC records) on a node the text names a PCIe SKU of:
    all links active, or a P2P bandwidth above what PCIe carries measured below an SXM module's threshold, is the
    check's expectation of another design (info), not the node's fault."""
    if not any(_sku_digits(ln.text) and _PCIE_SKU.search(ln.text) for ln in lines):
        return
    for i, e in enumerate(out.errors):
        if e.tool != "NHC" or e.kind not in ("nhc_below_threshold", "nhc_check_failed"):
            continue
        bw = _P2P_BW.search(e.text)
        if _NVLINK_CHECK.search(e.text) or (bw is not None and float(bw.group(1)) > _PCIE_MOST):
            out.errors[i] = AppError("nhc_other_design", e.line, e.text, e.module, e.tool, e.times, host=e.host)


def _sku_digits(text: str) -> bool:
    """Whether ``text`` may hold a SKU name (cheaper than _PCIE_SKU on every line of a long text)."""
    return any(d in text for d in _SKU_DIGITS)
