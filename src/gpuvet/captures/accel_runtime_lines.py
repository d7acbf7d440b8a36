"""Issue 46 (R10B): accelerator runtimes' lines accel_runtime.py does not read. The AWS Neuron runtime's crash report,
its infodump (``ERROR NRT:nrt_infodump`` lines between 'cut here' marks, aws-neuron-sdk's runtime troubleshooting
pages): a header of versions (NRT, CCOM, the driver, the kernel, the instance) and the environment, then the error
the runtime stopped on. The header is the runtime's inventory, no fault: its lines are read (their ERROR level is
the dump's, not a finding) and the versions said in a note; the error after it is left to the readers of NRT's
statuses (captures/accel_runtime.py)."""

from __future__ import annotations

import re

from gpuvet.captures.app_errors import AppErrorsParse
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.records import AppError
from gpuvet.captures.text import Line

_WORDS = ("nrt_infodump",)
_VERSION = re.compile(r"NRT:nrt_infodump\s+(NRT version|CCOM version|Driver version|Kernel):\s+(\S+(?: \S+)?)")
# the header's own lines: the cut marks, its keys, the environment's NAME=value rows
_HEADER = re.compile(
    r"NRT:nrt_infodump\s+(?:-+>8-+|(?:NRT|CCOM|Driver) version:|Instance ID:|Cluster ID:|Kernel:|"
    r"Nodename:|Environment:|[A-Z][A-Z0-9_]{2,60}=)"
)


def read(lines: list[Line], out: AppErrorsParse, marks: Marks | None = None) -> None:
    """The infodump's header lines claimed and its versions said; the error it dumps is not judged here."""
    picked = holding(lines, _WORDS, marks)
    header = [lines[i] for i in picked if _HEADER.search(lines[i].text)]
    if not header:
        return
    out.claimed.update(ln.no for ln in header)
    found = dict.fromkeys(
        m.group(1) + " " + m.group(2).split(" (")[0].split(" #")[0]
        for ln in header
        if (m := _VERSION.search(ln.text)) is not None
    )
    said = f": {', '.join(found)}" if found else ""
    out.notes.append(
        f"Neuron runtime infodump (its crash report's header){said}; the header is the runtime's "
        "inventory, no fault by itself (the error it dumps follows it)"
    )


# Ascend: the driver's device-management interface (DSMI) failing to count the NPUs ('adx_dsmi.cpp:54 … Get physical
# device number failed, err: 87', CANN's IDEDD module) and the runtime's rtGetDevMsg with no context: the runtime
# could not reach any NPU (the driver or the devices not given to the container), whatever the NPUs' health
ASCEND_WORDS = ("Get physical device number failed",)
_DSMI = re.compile(r"\bGet physical device number failed, err:?\s*(\d{1,6})")


def read_ascend(lines: list[Line], out: AppErrorsParse, marks: Marks | None = None) -> None:
    """DSMI's failure to count the NPUs: one runtime_no_device record (its repeats counted)."""
    picked = [lines[i] for i in holding(lines, ASCEND_WORDS, marks) if _DSMI.search(lines[i].text)]
    if not picked:
        return
    out.claimed.update(ln.no for ln in picked)
    first = picked[0]
    code = _DSMI.search(first.text)
    assert code is not None
    text = (
        f"the Ascend runtime could not count the NPUs through the driver's DSMI (error {code.group(1)}, "
        f"{len(picked)} time(s)): the driver or the devices are not reachable from this process or container: "
        f"{first.text.strip()}"
    )
    out.errors.append(AppError("runtime_no_device", first.no, text[:300], None, "Ascend runtime (DSMI)", len(picked)))
