"""systemd's word that DCGM's host engine service failed (issue 46, R5B): systemctl status' failed-unit head line
('× nvidia-dcgm.service - NVIDIA DCGM service', systemd 248+), its 'Active: failed' under a DCGM unit's head, and
the journal's '<unit>: Failed with result …' / 'Failed to start NVIDIA DCGM service'. Read as the host engine down
(doctor: dcgm_hostengine_down, the knowledge base's verdict: a monitoring service's state, not a GPU's). The fabric
manager's unit is fabric_manager's, nvidia-persistenced's driver_state's."""

from __future__ import annotations

import re

from gpuvet.captures.app_errors import AppErrorsParse
from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.records import AppError
from gpuvet.captures.text import Line

# the literals a line read here holds one of (runtime_marks.OPS_MARKS has each: the format's markers)
MARKS = ("dcgm.service", "hostengine.service", "DCGM service")
_UNIT = r"(?:nvidia-dcgm|dcgm|nv-hostengine)\.service"
_FAILED = lazy(
    rf"^\s*\u00d7 {_UNIT}|{_UNIT}: Failed with result|Failed to start (?:NVIDIA DCGM service|{_UNIT})", re.IGNORECASE
)
_HEAD = lazy(rf"^\s*[\u25cf\u00d7\u25cb*]?\s*{_UNIT}\s+-")
_ACTIVE_FAILED = lazy(r"^\s*Active: failed\b")


def read(lines: list[Line], out: AppErrorsParse, marks: Marks | None = None) -> None:
    """The first line saying a DCGM unit failed, as one host-engine-down record (its lines claimed)."""
    held = holding(lines, MARKS, marks)
    said: list[Line] = []
    for i in held:
        ln = lines[i]
        if _FAILED.search(ln.text):
            said.append(ln)
        elif _HEAD.match(ln.text):
            said += [x for x in lines[i + 1 : i + 5] if _ACTIVE_FAILED.match(x.text)][:1]
    if not said or any(e.kind == "hostengine_unreachable" for e in out.errors):
        return
    out.claimed.update(ln.no for ln in said)
    first = said[0]
    out.errors.append(AppError("hostengine_unreachable", first.no, first.text.strip()[:300], None, "systemd"))
