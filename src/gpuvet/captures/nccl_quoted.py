"""An NCCL/RCCL WARN's words found outside its own line: a paste that wrapped a failed WARN after its colon (the next
line holds the rest of its words), and PyTorch's DistBackendError, which quotes NCCL's last WARN (ncclGetLastError)
under 'Last error:' after 'NCCL error in: …ProcessGroupNCCL.cpp:N, <ncclGetErrorString>, NCCL version …' and its
own reading of the result ('ncclSystemError: System call (e.g. socket, malloc) …'). The quoted text is the WARN
without its prefix: the failure NCCL returned to the framework, whatever words it holds, so it is read as a WARN of
a process the log does not name."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from gpuvet.captures.text import Line

if TYPE_CHECKING:
    from gpuvet.captures.nccl_log import LogLine, NcclLog

# 'Last error:' with the WARN's text on the same line (a logger that joined the lines) or on the next; what comes
# before it on its line (a launcher's '[rank3]:', srun's '3: ') is taken off the next line alike
_LAST = re.compile(r"^(?P<prefix>.{0,40}?)\bLast error:\s*(?P<msg>.*)$")
_NONE = re.compile(r"^(?:Unknown NCCL Error|\(?none\)?)\b", re.I)  # PyTorch's words where NCCL kept no WARN


def last_errors(out: NcclLog, lines: list[Line], read: Callable[[LogLine], None], limit: int) -> None:
    """Each WARN PyTorch quoted under 'Last error:' that no WARN line of the log printed, read as one (``read``:
    nccl_log's reading of a line: a failure by its words, peer access refused …); a failure of the run where its
    words name none: NCCL returned it as an error."""
    from gpuvet.captures.nccl_log import LogFailure, LogLine, kept

    said = {f.at.message for f in out.failures}
    for i, ln in enumerate(lines):
        if "Last error:" not in ln.text or (m := _LAST.match(ln.text)) is None:
            continue
        at, msg = ln, m.group("msg").strip()
        if not msg and i + 1 < len(lines):
            at, prefix = lines[i + 1], m.group("prefix").strip()
            msg = at.text.strip()
            msg = msg[len(prefix) :].strip() if prefix and msg.startswith(prefix) else msg
        if not msg or len(msg) > limit or _NONE.match(msg) or msg in said or " NCCL WARN " in f" {msg}":
            continue
        warn = LogLine(at.no, "NCCL", "WARN", None, None, None, None, msg, kept(at.text))
        before = len(out.failures) + len(out.p2p_refused)
        read(warn)
        out.failures += [LogFailure("runtime", warn)] if len(out.failures) + len(out.p2p_refused) == before else []
        out.lines, out.libs = out.lines + 1, out.libs if "NCCL" in out.libs else [*out.libs, "NCCL"]
        out.claimed.add(at.no)
        said.add(msg)


def wrapped(out: NcclLog, lines: list[Line], log_line: Callable[[Line], LogLine | None], limit: int) -> None:
    """A failed WARN the paste wrapped after a colon ('… peer 10.0.0.3<5921> message truncated :' above 'receiving
    1048576 bytes instead of 65536'): the next line, no library line of its own, is the rest of its words."""
    from gpuvet.captures.nccl_log import kept

    ends = {f.at.line for f in out.failures if f.at.message.rstrip().endswith(":")}
    rest = (
        {
            ln.no - 1: ln.text.strip()
            for ln in lines
            if ln.no - 1 in ends
            and 0 < len(ln.text.strip()) <= limit
            and log_line(ln) is None
            and not ln.text.lstrip().startswith("#")
        }
        if ends
        else {}
    )
    out.failures = [
        replace(
            f, at=replace(f.at, message=f"{f.at.message} {rest[f.at.line]}", text=kept(f"{f.at.text} {rest[f.at.line]}"))
        )
        if f.at.line in rest
        else f
        for f in out.failures
    ]
