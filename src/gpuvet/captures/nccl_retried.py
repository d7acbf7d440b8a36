"""A net plugin's retry loop that ended well (issue 46): its WARNs ('Cannot get incoming CPU.', 'Maximum retry
reached for connect 3.') in a process whose log then says it connected ('NET/FastSocket : Connected after 1000
retries', 'Accepted data socket') are no error: the connection was made. Moved out of nccl_log (R14A) unchanged."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.text import Line

if TYPE_CHECKING:
    from gpuvet.captures.nccl_log import LogLine

_CONNECTED = lazy(r"\bConnected after \d+ retr|\bAccepted data socket|\bconnected after \d+ attempts", re.I)
_PLUGIN_FILE = lazy(r"^net_\w+\.(?:cc|cpp|c)$")  # an external net plugin's source (net_fastsocket.cc), not NCCL's


def connected(lines: list[Line], read: Callable[[Line], LogLine | None]) -> set[tuple[str | None, int | None]]:
    """The processes whose net plugin says it connected after retrying (a cheap word test before the regex)."""
    said = (read(ln) for ln in lines if "onnected after" in ln.text or "Accepted data socket" in ln.text)
    return {(at.host, at.pid) for at in said if at is not None and at.level == "INFO" and _CONNECTED.search(at.message)}


def retried(warn: LogLine, done: set[tuple[str | None, int | None]]) -> bool:
    """A net plugin's WARN in a process the same log shows connecting after its retries: the plugin's retry loop."""
    file = (warn.source or "").rsplit(":", 1)[0].rsplit("/", 1)[-1]
    return (warn.host, warn.pid) in done and bool(_PLUGIN_FILE.match(file))
