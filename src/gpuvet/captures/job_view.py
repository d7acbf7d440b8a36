"""The GPUs a job or a container sees, as its set-up decides them (issue 46, R3A): a job's view is not the node's.

- enroot's NVIDIA hook (hooks.d/98-nvidia.sh, run by pyxis for ``srun --container-image``) failing: enroot's
  common::checkcmd prints '[ERROR] Command not found: nvidia-container-cli, see …/libnvidia-container' (the
  NVIDIA container library is not installed on the node), then '[ERROR] …/98-nvidia.sh exited with return code N';
  pyxis relays both behind 'slurmstepd: error: pyxis:' and its own 'container start failed', 'couldn't start
  container' (read as their context). A container on that node gets no GPU: the node's set-up, not a module.
- Slurm's cgroup.conf without ``ConstrainDevices=yes`` (or with ``=no``) beside a GPU job (--gres=gpu, --gpus,
  CUDA_VISIBLE_DEVICES, /dev/nvidiaN): the job's tasks see every device file and rely on CUDA_VISIBLE_DEVICES
  alone, while a container (pyxis/enroot) gets only its GPU's device file, so the node's index the variable names
  is not there ('no CUDA-capable device is detected'); ``ls /dev/nvidiaN``'s 'cannot access' lines are that view.
- nvidia-smi's 'No devices were found' in a job's or a cgroup's view: one srun task's line (--label's '0: ', or a
  task variable the poster echoed, 'PROC_ID=0 '), or beside a cgroup device filter (bpftool's cgroup_device
  program, systemd's DeviceAllow=/DevicePolicy=, ConstrainDevices=yes): the job's or container's device access,
  warn, never the node's modules missing (capture_failures leaves it to this record: VIEW_KINDS).

Each is an application-error record (records.AppError) of a kind doctor/capture_errors.KIND_CAUSES judges."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gpuvet.captures.marks import holding
from gpuvet.captures.records import AppError

if TYPE_CHECKING:
    from gpuvet.captures.app_errors import AppErrorsParse
    from gpuvet.captures.marks import Marks
    from gpuvet.captures.text import Line

# the words a text holding these lines has (runtime_marks.OPS_MARKS names them): without one it is not read here
MARKS = (
    "pyxis",
    "enroot",
    "98-nvidia",
    "Command not found: nvidia-container-cli",
    "ConstrainCores",
    "ConstrainDevices",
    "cgroup.conf",
    "cgroup_device",
    "DeviceAllow",
    "DevicePolicy",
    "No devices",
    "busy or unavailable",
)
# the kinds whose line is nvidia-smi's 'No devices were found' seen from a job or a cgroup (capture_failures)
VIEW_KINDS = frozenset({"job_view_no_devices", "container_view_no_devices"})

_NO_CLI = re.compile(
    r"(?:\[ERROR\] )?Command not found: nvidia-container-cli\b|"
    r"\bnvidia-container-cli: (?:command )?not found"
)
_HOOK = re.compile(r"\[ERROR\] (\S*hooks\.d/\d*-?nvidia\.sh) exited with return code (\d+)")
_PYXIS = re.compile(
    r"\bpyxis: (?:container start failed|couldn't start container|printing contents of log file|"
    r"if the image has an unusual entrypoint)|spank_pyxis\.so|Failed to invoke spank plugin stack"
)
_CGROUP_KEY = re.compile(r"^\s*(Constrain\w+|CgroupAutomount|CgroupPlugin|TaskAffinity|AllowedRAMSpace)\s*=\s*(\S+)")
_DEVICES_ON = re.compile(r"^\s*ConstrainDevices\s*=\s*yes\b", re.I | re.M)
_GPU_JOB = re.compile(r"--gres[= ]\S*gpu|--gpus(?:-per-\w+)?\b|CUDA_VISIBLE_DEVICES|/dev/nvidia\d|--container-image")
_NO_DEVICE_FILE = re.compile(r"cannot access '?/dev/(nvidia\d+)'?: No such file or directory")
# a task's line: srun --label's 'N: ', or an echoed task variable ('PROC_ID=0 ', 'RANK=1 ', 'SLURM_PROCID=0 ')
_BARE_NONE = re.compile(r"^\s*(?P<label>)(?P<var>)No devices (?:were )?found\.?\s*$")
_TASKS = re.compile(r"\s(?:--ntasks(?:-per-node)?[= ]?[2-9]|--tasks[= ]?[2-9]|-n\s*[2-9]|--gpus-per-task)")
_LISTED = re.compile(r"^\s*GPU \d{1,3}: .{1,96} \(UUID: ")
_TASK_NONE = re.compile(
    r"^\s*(?:(?P<label>\d{1,4}): |\S*?(?:PROC_?ID|RANK|TASK_?ID)=(?P<var>\d{1,4})[\s:]+)"
    r"No devices (?:were )?found\.?\s*$"
)
_NONE = re.compile(r"^\s*(?:\S+@\S+:\S*\s?[#$]\s*)?No devices were found\s*$")
_FILTER = re.compile(r"\bcgroup_device\b|\bDeviceAllow=|\bDevicePolicy=(?:closed|strict)|^\s*ConstrainDevices\s*=\s*yes")
# CUDA's error 46 in a job given one GPU: CUDA_VISIBLE_DEVICES as set or echoed ('=7', ': 7', a label and the value
# on the next line), and nvidia-smi's process rows (old: '|    7     69344  python   4961MB |'; new: '|    7   N/A  N/A
# 69344      C   python   4961MiB |')
_BUSY = re.compile(r"all CUDA-capable devices are busy or unavailable")
_VISIBLE = re.compile(r"CUDA[_ ]VISIBLE[_ ]DEVICES\s*[=:]?\s*['\"]?(\d{1,3})?['\"]?\s*$", re.I)
_ROW = re.compile(r"^\|\s+(\d{1,3})\s+(?:N/A\s+N/A\s+|\d+\s+\d+\s+)?(\d+)\s+(?:[CGM+]{1,3}\s+)?(\S+).*?\d+\s*Mi?B\s*\|\s*$")
_CONTAINER = re.compile(r"--container-image|\bpyxis\b|\benroot\b|docker|podman|apptainer|singularity", re.I)


def read(lines: list[Line], out: AppErrorsParse, marks: Marks | None = None) -> None:
    """The job's and container's view lines, added to ``out`` (ops_layer.parse's); lines it claimed are left."""
    held = holding(lines, MARKS, marks)
    if not held:
        return
    _hook(lines, held, out)
    _cgroup_conf(lines, held, out)
    _no_devices(lines, held, out)
    _busy(lines, held, out)


def _add(out: AppErrorsParse, kind: str, ln: Line, text: str, tool: str) -> None:
    out.claimed.add(ln.no)
    out.errors.append(AppError(kind, ln.no, text[:300], None, tool))


def _hook(lines: list[Line], held: list[int], out: AppErrorsParse) -> None:
    """enroot's NVIDIA hook: its missing CLI (the cause), its exit status (said where no cause is), pyxis' relay."""
    found = False
    for i in held:
        ln = lines[i]
        if ln.no in out.claimed:
            continue
        if _NO_CLI.search(ln.text):
            _add(
                out,
                "container_hook_no_cli",
                ln,
                "nvidia-container-cli not found by enroot's NVIDIA hook: "
                "libnvidia-container is not installed on the node, so its pyxis/enroot containers get no GPU",
                tool="enroot (pyxis)",
            )
            found = True
    for i in held:
        ln = lines[i]
        if ln.no in out.claimed or (m := _HOOK.search(ln.text)) is None:
            continue
        if found:
            out.claimed.add(ln.no)
        else:
            _add(
                out,
                "container_hook_failed",
                ln,
                f"enroot's NVIDIA hook {m.group(1)} failed (return code "
                f"{m.group(2)}): the container was not given its GPUs (the node's container set-up)",
                tool="enroot (pyxis)",
            )
            found = True
    out.claimed.update(lines[i].no for i in held if "pyxis" in lines[i].text and _PYXIS.search(lines[i].text))


def _cgroup_conf(lines: list[Line], held: list[int], out: AppErrorsParse) -> None:
    """A cgroup.conf pasted beside a GPU job whose devices it does not constrain."""
    if not any("Constrain" in lines[i].text for i in held):
        return
    keys = [(i, m) for i, ln in enumerate(lines) if "=" in ln.text and (m := _CGROUP_KEY.match(ln.text))]
    if len(keys) < 2 or any(ln.no in out.claimed for i, _ in keys for ln in (lines[i],)):
        return
    text = "\n".join(ln.text for ln in lines)
    if _DEVICES_ON.search(text) or not _GPU_JOB.search(text):
        out.claimed.update(lines[i].no for i, _ in keys)  # read: devices constrained, or no GPU job beside it
        return
    said = next((i for i, m in keys if m.group(1) == "ConstrainDevices"), keys[0][0])
    absent = [m.group(1) for i, m in keys if m.group(1) == "ConstrainDevices"] == []
    gone = [m.group(1) for ln in lines if (m := _NO_DEVICE_FILE.search(ln.text))]
    seen = f"; its container lacks /dev/{', /dev/'.join(gone[:8])}" if gone else ""
    _add(
        out,
        "slurm_devices_unconstrained",
        lines[said],
        f"Slurm cgroup.conf {'lacks ConstrainDevices=yes' if absent else 'sets ConstrainDevices=no'}: GPU jobs "
        "are not confined to their GPUs (CUDA_VISIBLE_DEVICES alone keeps the node's index, which a pyxis/enroot "
        "container may lack)" + seen,
        tool="Slurm (cgroup.conf)",
    )
    out.claimed.update(lines[i].no for i, _ in keys)
    out.claimed.update(ln.no for ln in lines if _NO_DEVICE_FILE.search(ln.text))


def _no_devices(lines: list[Line], held: list[int], out: AppErrorsParse) -> None:
    """nvidia-smi's 'No devices were found' in one task's view, or beside a cgroup device filter."""
    if not any("No devices" in lines[i].text for i in held):
        return
    container = _CONTAINER.search("\n".join(ln.text for ln in lines)) is not None
    kind = "container_view_no_devices" if container else "job_view_no_devices"
    filtered = any(_FILTER.search(lines[i].text) for i in held)
    # srun --label's 'N: ' is peeled before any reader: a job of several tasks whose other task lists a GPU
    tasks = any("srun " in ln.text and _TASKS.search(ln.text) for ln in lines) and any(
        _LISTED.match(ln.text) for ln in lines
    )
    for i in held:
        ln = lines[i]
        if "No devices" not in ln.text or ln.no in out.claimed:
            continue
        task = _TASK_NONE.match(ln.text) or (_BARE_NONE.match(ln.text) if tasks else None)
        if task is not None:
            n = task["label"] or task["var"] or "of the job"
            _add(
                out,
                kind,
                ln,
                f"a job task ({n}) sees no GPU (nvidia-smi: No devices found){' in its container' if container else ''}: "
                "its device access (GPU request, cgroup device constraint, container hook), not the node's modules",
                tool="srun task",
            )
        elif filtered and _NONE.match(ln.text):
            _add(
                out,
                kind,
                ln,
                "nvidia-smi: No devices were found inside a cgroup whose device filter (cgroup_device, "
                "DeviceAllow=, ConstrainDevices) hides /dev/nvidia*: that view's device access, not the modules",
                tool="nvidia-smi (cgroup view)",
            )


def _busy(lines: list[Line], held: list[int], out: AppErrorsParse) -> None:
    """CUDA's 'busy or unavailable' (error 46) in a job that CUDA_VISIBLE_DEVICES gave one GPU: that GPU is the one
    another process holds (nvidia-smi's process row names it, where pasted), not a fault of the node."""
    busy = next((i for i in held if _BUSY.search(lines[i].text)), None)
    if busy is None or lines[busy].no in out.claimed:
        return
    gpu = None
    for i, ln in enumerate(lines):
        if "VISIBLE" in ln.text.upper() and (m := _VISIBLE.search(ln.text)) is not None:
            nxt = lines[i + 1].text.strip() if i + 1 < len(lines) else ""
            gpu = m.group(1) or (nxt if nxt.isdigit() and len(nxt) <= 3 else None)
    if gpu is None:
        return
    rows = [m for ln in lines if ln.text.startswith("|") and (m := _ROW.match(ln.text)) is not None and m[1] == gpu]
    held_by = f" (nvidia-smi lists PID {rows[0][2]} {rows[0][3]} on it)" if rows else ""
    out.claimed.add(lines[busy].no)
    out.errors.append(
        AppError(
            "job_gpu_busy",
            lines[busy].no,
            f"the job's GPU {gpu} (CUDA_VISIBLE_DEVICES={gpu}) is "
            f"busy or unavailable{held_by}: another process holds it (exclusive compute mode) or "
            f"the scheduler gave it twice: {lines[busy].text.strip()}"[:300],
            f"GPU {gpu}",
            "CUDA (job)",
        )
    )
