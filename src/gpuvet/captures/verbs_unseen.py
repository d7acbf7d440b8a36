"""libibverbs' warnings for RDMA devices it lists but cannot reach (issue 46, R10C), as rdma-core prints them
(libibverbs/init.c, sysfs.c; the 'libibverbs: ' prefix is its PFX):

- 'Warning: couldn't stat '/sys/class/infiniband/mlx5_13'.': a verbs device (/sys/class/infiniband_verbs/uverbsN)
  whose RDMA device is not in this sysfs: a container or network namespace shown the host's uverbs list but given only
  some of its devices. The ones it has still open, so it is 'N of M devices unusable' (rdma_devices_partly_unusable,
  warn: doctor/rdma_verdicts' verdict for NCCL's 'Unable to open device' beside devices it uses).
- 'Warning: couldn't read ABI version' (the verbs device's abi_version file unreadable): the same device skipped.
Each line names one device: one finding lists them all.

infiniband-diags' ibstat lists the umad devices and stats each; one that is listed but gone aborts it
(ibdiag_common's IBPANIC: 'ibpanic: [PID] main: stat of IB device 'mlx5_8' failed: No such file or directory', exit
255). A note, not a finding: ibstat dies so on a device umad cannot stat that is healthy, Azure's Accelerated
Networking VF mlx5_an0 (whose ports ibstatus reads fine), and on a device removed while it listed them; the
devices it did list are read."""

from __future__ import annotations

import re

from gpuvet.captures.app_errors import AppErrorsParse
from gpuvet.captures.records import AppError
from gpuvet.captures.text import Line

KIND = "rdma_device_not_visible"
_STAT = re.compile(r"libibverbs: Warning: couldn't stat '?/sys/class/infiniband/([\w.-]{1,40})'?")
_PANIC = re.compile(r"ibpanic: \[\d+\] \w+: stat of IB device '([\w.-]{1,40})' failed(?:: ([\w ]{1,60}))?")
_ABI = re.compile(r"libibverbs: (?:Warning|Fatal): couldn't read (?:uverbs )?ABI version(?: of ([\w.-]{1,40}))?", re.I)


def read(lines: list[Line], at: list[int], out: AppErrorsParse) -> None:
    """One finding for every device libibverbs lists but cannot stat or read (the module's docstring)."""
    hits = [
        (i, m)
        for i in at
        if "couldn't" in lines[i].text and (m := _STAT.search(lines[i].text) or _ABI.search(lines[i].text)) is not None
    ]
    _panic(lines, at, out)
    if not hits:
        return
    names = list(dict.fromkeys(m.group(1) for _, m in hits if m.group(1)))
    out.claimed |= {lines[i].no for i, _ in hits}
    said = (
        f"libibverbs lists {len(names)} RDMA device(s) it cannot reach under /sys/class/infiniband: {_span(names)}"
        if names
        else "libibverbs could not read a verbs device's ABI version"
    )
    first = lines[hits[0][0]]
    out.errors.append(AppError(KIND, first.no, f"{said} ({first.text.strip()})"[:300], None, "libibverbs", times=len(hits)))


def _panic(lines: list[Line], at: list[int], out: AppErrorsParse) -> None:
    """ibstat's abort on a device it listed but could not stat: a note (the module's docstring)."""
    for i in at:
        if "ibpanic" in lines[i].text and (m := _PANIC.search(lines[i].text)) is not None:
            out.claimed.add(lines[i].no)
            why = f" ({m.group(2).strip()})" if m.group(2) else ""
            out.notes.append(
                f"line {lines[i].no}: ibstat aborted (ibpanic) on RDMA device {m.group(1)}: stat of it failed{why}; the "
                f"devices it listed before are read. Not judged: see it with `ibv_devinfo -d {m.group(1)}` or ibstatus"
            )


def _span(names: list[str]) -> str:
    """'mlx5_10-mlx5_22' for a run of one stem's numbers, else the names."""
    parts = [re.fullmatch(r"(.*?)(\d+)", n) for n in names]
    stems = {p.group(1) for p in parts if p is not None}
    if len(stems) == 1 and all(parts) and len(names) > 2:
        nums = sorted({int(p.group(2)) for p in parts if p is not None})
        stem = stems.pop()
        if nums == list(range(nums[0], nums[-1] + 1)):
            return f"{stem}{nums[0]}-{stem}{nums[-1]}"
        return ", ".join(f"{stem}{n}" for n in nums)
    return ", ".join(names)
