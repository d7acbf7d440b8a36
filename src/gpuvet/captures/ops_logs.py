"""The status screens of the software that runs GPU nodes, read where ops_layer's line rules find nothing (issue 46,
OPS3): ``sinfo``'s state table (a GPU partition's nodes in fail/down/inval are GPUs the scheduler does not offer;
drained and maintenance nodes are said), ``scontrol show node``'s ``Gres=(null)`` beside a gres.conf that defines
GPUs (the scheduler does not see them), slurmd's and slurmctld's ``fatal:``/``error:`` about gres.conf
(src/interfaces/gres.c: 'gres.conf duplicate records for gpu', 'Invalid GRES record'), and ``kubectl get pods``
of the GPU operator's namespace (an operand on the GPU path crash-looping: the driver, its validator, the toolkit,
the device plugin; the operator's own controller and its labellers and exporters are said, not judged).

The node agents' and cluster runtimes' own logs (gpud, dcgm-exporter, the device plugin's config echo, Ray and vLLM)
are ops_agents'. Both add records of ops_layer's kinds (doctor/capture_errors.KIND_CAUSES judges them)."""

from __future__ import annotations

import re

from gpuvet.captures import ops_agents
from gpuvet.captures.app_errors import AppErrorsParse
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.records import AppError
from gpuvet.captures.sinfo_states import GPU_PART, verdict
from gpuvet.captures.text import Line

# sinfo's state table (default, -N, -l, -o with %P %t %N): its header names STATE and NODELIST
_SINFO_HEAD = re.compile(r"^\s*(?:PARTITION|NODELIST|HOSTNAMES)\b.*\bSTATE\b")

# slurmd's and slurmctld's fatal or error lines about gres.conf or a GPU GRES that ops_layer's rules did not read
# (src/interfaces/gres.c, src/common/gres.c: 'fatal: gres.conf duplicate records for gpu', 'fatal: Gres gpu has
# invalid count value', 'error: gres.conf for gpu, ...'; src/plugins/gres/gpu: 'error: gpu/nvml: ...')
_SLURM_GRES_FATAL = re.compile(
    r"\b(fatal|error):\s+(.{0,80}?(?:gres\.conf|\bgres/gpu\b|\bGres gpu\b|\bGRES\b|"
    r"\bgpu/(?:nvml|rsmi|oneapi|nrt)\b).*)$"
)
# scontrol show node's Gres=(null): the node registered no GRES (a poster's emphasis '**Gres=(null)**' kept)
_GRES_NULL = re.compile(r"\bGres=\(null\)")
_NODE_NAME = re.compile(r"\bNodeName=([\w.-]+)")
# gres.conf's GPU records: 'Name=gpu Type=h100 File=/dev/nvidia0', 'NodeName=n[1-4] Name=gpu File=/dev/nvidia[0-7]',
# 'Name=gpu Count=8'
_GRES_CONF = re.compile(r"^\s*(?:NodeName=\S+\s+)?Name=gpu\b(?P<rest>.*)$")
_GRES_COUNT = re.compile(r"\bCount=(\d+)")
_GRES_RANGE = re.compile(r"\bFile=\S*\[(\d+)-(\d+)\]")

# kubectl get pods (-n gpu-operator, -A, -o wide): NAME READY STATUS RESTARTS AGE, NAMESPACE first with -A
_PODS_HEAD = re.compile(r"^\s*(?:NAMESPACE\s+)?NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\b")
_POD_FAILING = re.compile(
    r"CrashLoopBackOff|^(?:Init:)?Error$|ImagePullBackOff|ErrImagePull|CreateContainer\w*Error|"
    r"RunContainerError|OOMKilled|^Init:(?:CrashLoopBackOff|ImagePullBackOff|ErrImagePull)"
)
# kubelet's event for a container restarting: 'Back-off restarting failed container nvidia-driver-ctr in pod …'
_BACKOFF = re.compile(r"Back-off restarting failed container (\S+) in pod ([\w.-]+)")
# the GPU operator's operands by pod name: kind, what it is (the GPU path: no GPU offered while it fails)
_OPERANDS: tuple[tuple[re.Pattern[str], str | None, str], ...] = (
    (re.compile(r"nvidia-driver|driver-daemonset"), "operator_driver_not_ready", "the driver container"),
    (
        re.compile(r"validator"),
        "operator_operand_failing",
        "the GPU operator's validator (driver, toolkit, CUDA or plugin validation)",
    ),
    (re.compile(r"container-toolkit|toolkit-daemonset"), "operator_operand_failing", "the container toolkit"),
    (re.compile(r"device-plugin"), "k8s_no_gpu_resource", "the device plugin (no nvidia.com/gpu offered)"),
    (re.compile(r"mig-manager"), "operator_operand_failing", "the MIG manager"),
    (re.compile(r"."), None, "not on the GPU path (the operator's controller, feature discovery, DCGM or its exporter)"),
)

# the words that mark a text as holding these lines (each in runtime_marks.OPS_MARKS, the format's markers): a text
# with none of them is not read here, though it holds a line a pattern below would match (ollama's 'Listening on')
MARKS = (
    "STATE",
    "NODELIST",
    "READY",
    "Back-off restarting",
    "fatal:",
    '"component"',
    "fabric_manager_active",
    '"caller"',
    "| GPU UUID",
    "dcgm-exporter",
    "DCGM successfully",
    "Not collecting",
    "/metrics",
    "device-plugin",
    "failOnInitError",
    "migStrategy",
    "required GPUs",
    "placement group",
    "Ray cluster",
    "GPU available",
    "resource request",
    "Assertion `",
    "Gres=",
    "gres.conf",
    "gres/",
    "GRES",
)
WORDS = ("STATE", "Gres=(null)", "fatal:", "error:", "READY", "Back-off restarting", *MARKS, *ops_agents.WORDS)


def read(lines: list[Line], out: AppErrorsParse, marks: Marks | None = None) -> None:
    """The status screens and logs above the node's tools, added to ``out`` (ops_layer.parse's): lines it claimed
    already are left to it."""
    held = holding(lines, WORDS, marks)
    if not any(w in lines[i].text for i in held for w in MARKS):
        return
    found = [i for i in held if lines[i].no not in out.claimed]
    # a table's header, though node_reports read its rows as a verdict table (sinfo -N's NODELIST … STATE)
    heads = [i for i in held if "STATE" in lines[i].text or "READY" in lines[i].text]
    for i in heads:
        if _SINFO_HEAD.match(lines[i].text) and "|" not in lines[i].text:  # '|'-separated: slurm_nodes
            _sinfo(lines, i, out)
        elif _PODS_HEAD.match(lines[i].text):
            _pods(lines, i, out)
    if any("Gres=(null)" in lines[i].text for i in found):
        _gres_null(lines, out)
    for i in found:
        ln = lines[i]
        t = ln.text
        if ln.no in out.claimed:
            continue
        if ("fatal:" in t or "error:" in t) and (m := _SLURM_GRES_FATAL.search(t)) is not None:
            add(
                out,
                "slurm_gres_config",
                ln,
                f"Slurm {m.group(1)}: {m.group(2).strip()} (the node's GPUs are not schedulable until gres.conf is fixed)",
                tool="slurmd",
            )
        elif "Back-off" in t and (b := _BACKOFF.search(t)) is not None:
            operand_failing(out, ln, b.group(2), "restarting (Back-off)", t.strip())
    ops_agents.read(lines, [i for i in found if lines[i].no not in out.claimed], out)


def add(out: AppErrorsParse, kind: str, ln: Line, text: str, tool: str, host: str | None = None) -> None:
    """A record of ``kind``, counted once per host (as ops_layer's)."""
    out.claimed.add(ln.no)
    for i, e in enumerate(out.errors):
        if e.kind == kind and e.host == host:
            out.errors[i] = AppError(e.kind, e.line, e.text, e.module, e.tool, e.times + 1, host=host)
            return
    out.errors.append(AppError(kind, ln.no, text[:300], None, tool, host=host))


def _rows(lines: list[Line], head: int) -> list[tuple[Line, dict[str, str]]]:
    """The rows under a table's header, by its column names (a row with another count of cells is left; a
    RESTARTS cell's '(4m ago)' joins the cells it spills into)."""
    # -o wide's two-word column names made one ('NOMINATED NODE', 'READINESS GATES')
    names = re.sub(r"\b(NOMINATED|READINESS) (NODE|GATES)\b", r"\1_\2", lines[head].text).split()
    rows: list[tuple[Line, dict[str, str]]] = []
    for ln in lines[head + 1 :]:
        cells = re.sub(r" \(([^()\s]+) ago\)", r"(\1_ago)", ln.text).split()
        if not cells:
            break
        if len(cells) == len(names):
            rows.append((ln, dict(zip(names, cells, strict=True))))
    return rows


def _sinfo(lines: list[Line], head: int, out: AppErrorsParse) -> None:
    """sinfo's rows: a GPU partition's nodes down, failed or INVAL are a finding (one per row, its node list the
    host); drained and maintenance rows are said with it, a partition without GPUs in a note."""
    out.claimed.add(lines[head].no)
    first: int | None = None
    aside: list[str] = []
    for ln, row in _rows(lines, head):
        out.claimed.add(ln.no)
        said_state = verdict(row.get("STATE", ""))
        part = f"{row.get('PARTITION', '')} {row.get('GRES', '')}"
        nodes = row.get("NODELIST") or row.get("HOSTNAMES") or "?"
        said = f"{row.get('NODES', '')} {row.get('STATE', '')} {nodes}".strip()
        if said_state is None:
            continue
        if not GPU_PART.search(part):
            out.notes.append(f"sinfo: partition {part.strip()}: {said} (no GPU partition: not judged)")
        elif said_state == "bad":
            first = len(out.errors) if first is None else first
            add(
                out,
                "slurm_drained_gpu",
                ln,
                f"sinfo, GPU partition {part.strip()}: {said}: no GPU offered on them (the reason: sinfo -R)",
                tool="Slurm (sinfo)",
                host=nodes,
            )
        else:
            aside.append(f"{said} ({'draining' if said_state == 'drain' else 'set aside'})")
    if aside:
        out.notes.append("sinfo, GPU partitions: " + "; ".join(aside))
    if first is not None and aside and first < len(out.errors):
        e = out.errors[first]
        out.errors[first] = AppError(
            e.kind, e.line, f"{e.text}; also {'; '.join(aside)}"[:300], e.module, e.tool, e.times, host=e.host
        )


def _gres_null(lines: list[Line], out: AppErrorsParse) -> None:
    """scontrol's Gres=(null) for a node beside gres.conf GPU records: the node registered none of the GPUs its
    gres.conf defines (slurm.conf's NodeName line gives it no Gres=gpu, or slurmd read another file)."""
    defined, kinds = 0, set()
    for ln in lines:
        if (rec := _GRES_CONF.match(ln.text.replace("**", ""))) is not None:
            rest = rec.group("rest")
            count, rng = _GRES_COUNT.search(rest), _GRES_RANGE.search(rest)
            defined += int(count.group(1)) if count else int(rng.group(2)) - int(rng.group(1)) + 1 if rng else 1
            kinds.update(re.findall(r"\bType=(\S+)", rest))
            out.claimed.add(ln.no)
    node: str | None = None
    for ln in lines:
        if (name := _NODE_NAME.search(ln.text)) is not None and "Name=gpu" not in ln.text:
            node = name.group(1)
        if "Gres=(null)" in ln.text and _GRES_NULL.search(ln.text):
            out.claimed.add(ln.no)
            if defined == 0:
                out.notes.append(f"Slurm node {node or '?'}: Gres=(null) (no GPU GRES registered; no gres.conf shown)")
                continue
            typed = f" ({', '.join(sorted(kinds))})" if kinds else ""
            add(
                out,
                "slurm_gpu_count_low",
                ln,
                f"node {node or '?'}: Slurm registers no GPUs (Gres=(null)) although "
                f"the gres.conf shown defines {defined} gpu{typed}: GPU jobs cannot be scheduled on it (slurm.conf's "
                "NodeName line needs Gres=gpu:…)",
                tool="Slurm",
                host=node,
            )


def _pods(lines: list[Line], head: int, out: AppErrorsParse) -> None:
    """kubectl get pods: an operand on the GPU path failing is a finding; the others said, Running ones counted."""
    out.claimed.add(lines[head].no)
    running = 0
    for ln, row in _rows(lines, head):
        out.claimed.add(ln.no)
        status = row.get("STATUS", "")
        if _POD_FAILING.search(status):
            operand_failing(
                out,
                ln,
                row.get("NAME", "?"),
                status,
                f"{row.get('NAME', '?')} {row.get('READY', '')} {status} restarts {row.get('RESTARTS', '?')}",
                row.get("NODE"),  # -o wide's node: the finding's subject
            )
        elif status in ("Running", "Completed", "Succeeded"):
            running += 1
    out.notes.append(f"kubectl get pods: {running} pod(s) Running or Completed")


def operand_failing(out: AppErrorsParse, ln: Line, name: str, status: str, said: str, node: str | None = None) -> None:
    """A GPU operator pod failing now (get pods' status, kubelet's back-off, describe pod's state: one verdict):
    a finding where the pod is on the GPU path, said where it is not."""
    for pattern, kind, what in _OPERANDS:
        if pattern.search(name):
            if kind is None:
                out.claimed.add(ln.no)
                out.notes.append(f"pod {name} {status}: {what}; a software fault of the operator, no GPU judged")
            else:
                add(
                    out,
                    kind,
                    ln,
                    f"GPU operator pod {name} {status}: {what} is failing, so the node's GPUs are not offered: {said}",
                    tool="Kubernetes (GPU operator)",
                    host=node,
                )
            return
