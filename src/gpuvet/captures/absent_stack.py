"""A host or container whose GPU or RDMA device files, or the user-space provider that opens them, are not there
(issue 46, R7A). Each is one fact an engineer reads off the lines the tools print for it:

- the NVIDIA device files missing: ``ls: cannot access '/dev/nvidia*': No such file or directory`` (GNU ls; busybox
  prints ``ls: /dev/nvidia*: No such file or directory``), nvidia-modprobe, whose job is to create them, exiting
  non-zero (a transcript's ``echo $?`` under it, or its own 'nvidia-modprobe: …' error). Beside lsmod's ``nvidia``
  row or that failure the driver is loaded and only its files are missing (udev, nvidia-modprobe, a container given
  no devices); alone, most often the driver is not loaded (the verdict of the same absence other tools print).
- libhsakmt's 'Failed to open /dev/dri/renderD128: Permission denied': the user outside the render/video group.
- libibverbs' warnings (rdma-core libibverbs/init.c and dynamic_driver.c): 'no userspace device-specific driver found
  for /sys/class/infiniband_verbs/uverbsN' (the kernel has the HCA, no provider library claims it), 'Driver X does
  not support the kernel ABI of N' (provider and kernel apart), and ibv_devinfo's '0 HCAs found' / 'No IB devices
  found' (libibverbs opened none), 'Failed to get IB devices list: <strerror>' (no verbs in the kernel).
  'couldn't load driver 'libX-rdmav2.so'' alone is rdma-core trying every provider its config names: routine where
  another provider claims the device, so read and not judged unless nothing was found.
The same 'No IB devices found' from a perftest run is perftest's (captures/perftest.py), not read here."""

from __future__ import annotations

import re

from gpuvet.captures import verbs_unseen
from gpuvet.captures.app_errors import AppErrorsParse
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.records import AppError
from gpuvet.captures.text import Line

NODES_MISSING, NO_RDMA = "nvidia_device_files_missing", "rdma_no_usable_device"
# the files absent with nothing saying the module is loaded: the fact R6B's reading of the client library's 'could not
# open the device file /dev/nvidiactl (No such file or directory)' names (app_errors' smi_no_driver), its verdict
NODES_ABSENT = "nvidia_device_files_absent"
# (formats.py gives these lines to device_nodes' format, which calls this reader: driver_marks.NODES)
_WORDS = ("/dev/dri/renderD", "/dev/nvidia", "nvidia-modprobe", "echo $?", "libibverbs", "HCAs found", "IB devices",
          "ibpanic")
_LS_MISSING = re.compile(r"\bls: (?:cannot access )?['\"]?(/dev/nvidia[\w*?-]*)['\"]?: No such file or directory")
# one GPU's node (/dev/nvidia2): a job's or a container's view holds some of them by design (Slurm's device cgroup)
_ONE_GPU = re.compile(r"/dev/nvidia\d+")
_LSMOD = re.compile(r"^\s*nvidia\s+\d+\s+\d+\b")
_MODPROBE_SAID = re.compile(r"\bnvidia-modprobe: (?:unable|failed|error|cannot|could not)\b.*", re.I)
_RC = re.compile(r"^\s*([1-9]\d{0,2})\s*$")
_NO_PROVIDER = re.compile(r"libibverbs: Warning: no userspace device-specific driver found for \S*?(uverbs\d+)")
_ABI = re.compile(r"libibverbs: Warning: Driver \S+ does not support the kernel ABI of \d+")
_COULD_NOT_LOAD = re.compile(r"libibverbs: Warning: couldn't load driver '[^']+'")
# FX68E: libibverbs' init (init.c) when the directory its providers' config files sit in is missing: no
# ibverbs-providers (rdma-core's user-space drivers) installed; said beside 'No IB devices found', never alone
_NO_CONFIG = re.compile(r"libibverbs: Warning: couldn't open config directory '([^'\n]{1,200})'")
_NONE_FOUND = re.compile(r"^\s*(?:0 HCAs found:?|No IB devices found)\s*$")
# ibv_devinfo's and ibv_devices' perror when ibv_get_device_list fails (no ib_uverbs in the kernel: ENOSYS)
_LIST_FAILED = re.compile(r"\bFailed to get IB devices list: \w[\w ]{2,60}$")
# libhsakmt's open of a render node (fmm.c: pr_err 'Failed to open %s: %s', then 'Check user is in "video" group'):
# the user's access to the GPU, rocr_status' fact for rocminfo's own 'Unable to open /dev/kfd …: Permission denied'
_RENDER_DENIED = re.compile(r"Failed to open /dev/dri/renderD\d+: (?:Permission denied|Operation not permitted)")
RENDER_DENIED = "rocr_user_denied"
_PERFTEST = ("ib_write_", "ib_read_", "ib_send_", "ib_atomic_")


def parse(lines: list[Line], marks: Marks | None = None) -> AppErrorsParse:
    """The NVIDIA device files missing and RDMA devices no provider opens (the module's docstring), one each."""
    out = AppErrorsParse()
    at = holding(lines, _WORDS, marks)
    if at:
        _nvidia(lines, at, out)
        _verbs(lines, at, out)
        verbs_unseen.read(lines, at, out)  # R10C: devices libibverbs lists but cannot reach
        denied = next((lines[i] for i in at if "renderD" in lines[i].text and _RENDER_DENIED.search(lines[i].text)), None)
        if denied is not None:
            out.claimed.add(denied.no)
            out.errors.append(AppError(RENDER_DENIED, denied.no, denied.text.strip()[:300], None, "libhsakmt"))
    return out


def _nvidia(lines: list[Line], at: list[int], out: AppErrorsParse) -> None:
    missing = [
        (i, m.group(1))
        for i in at
        if (m := _LS_MISSING.search(lines[i].text)) is not None and not _ONE_GPU.fullmatch(m.group(1))
    ]
    if not missing:
        return
    loaded = any(_LSMOD.match(ln.text) for ln in lines if ln.text.lstrip().startswith("nvidia"))
    failed = _modprobe_failed(lines, at)
    first = lines[missing[0][0]]
    said = f"{', '.join(sorted({p for _, p in missing}))}: no such file"
    if loaded:
        said += "; lsmod lists the nvidia module loaded"
    if failed:
        said += f"; {failed}"
    out.claimed |= {lines[i].no for i, _ in missing}
    out.errors.append(
        AppError(
            NODES_MISSING if loaded or failed else NODES_ABSENT, first.no, f"{said} ({first.text.strip()})"[:300], None, "ls"
        )
    )


def _modprobe_failed(lines: list[Line], at: list[int]) -> str | None:
    """nvidia-modprobe's failure: its own error line, or a transcript's 'echo $?' printing non-zero right after it."""
    for i in at:
        t = lines[i].text
        if (m := _MODPROBE_SAID.search(t)) is not None:
            return m.group(0).strip()[:120]
        if (
            "echo $?" in t
            and i + 1 < len(lines)
            and (rc := _RC.match(lines[i + 1].text)) is not None
            and any("nvidia-modprobe" in lines[j].text for j in range(max(0, i - 2), i))
        ):
            return f"nvidia-modprobe exited {rc.group(1)}"
    return None


def _verbs(lines: list[Line], at: list[int], out: AppErrorsParse) -> None:
    texts = [
        (i, lines[i].text)
        for i in at
        if "libibverbs" in lines[i].text or "IB devices" in lines[i].text or "HCAs found" in lines[i].text
    ]
    devices = sorted({m.group(1) for _, t in texts if (m := _NO_PROVIDER.search(t)) is not None}, key=lambda d: int(d[6:]))
    abi = [i for i, t in texts if _ABI.search(t)]
    tried = [i for i, t in texts if _COULD_NOT_LOAD.search(t)]
    perftest = any(w in ln.text for ln in lines for w in _PERFTEST)
    none = [i for i, t in texts if (_NONE_FOUND.match(t) or _LIST_FAILED.search(t)) and not (perftest and "No IB" in t)]
    config = [(i, m.group(1)) for i, t in texts if (m := _NO_CONFIG.search(t)) is not None][:1] if none else []
    out.claimed |= {lines[i].no for i, t in texts if _NO_PROVIDER.search(t)} | {lines[i].no for i in abi + tried + none}
    out.claimed |= {lines[i].no for i, _ in config}
    if not (devices or abi or none):
        return  # a provider the config names not installed, while another claims the device: routine
    parts = []
    if devices:
        parts.append(f"libibverbs has no user-space provider for {', '.join(devices)} (the kernel's RDMA devices)")
    if abi:
        parts.append("a provider does not support the kernel's verbs ABI")
    if tried:
        parts.append(f"{len(tried)} provider librar{'y' if len(tried) == 1 else 'ies'} could not be loaded")
    if none:
        parts.append(f"'{lines[none[0]].text.strip()}': no RDMA device usable")
    if config:
        parts.append(f"libibverbs could not open its providers' config directory {config[0][1]} (no user-space "
                     "providers installed)")
    first = min(i for i in (*abi, *none, *(i for i, t in texts if _NO_PROVIDER.search(t))))
    out.errors.append(AppError(NO_RDMA, lines[first].no, "; ".join(parts)[:300], None, "libibverbs"))
