"""A vGPU guest's licence as ``nvidia-smi -q`` prints it (issue 46, batch BJ): the ``vGPU Software Licensed Product``
section's ``Product Name`` (the licensed edition: NVIDIA Virtual Compute Server, NVIDIA RTX Virtual Workstation,
NVIDIA Virtual Applications/PC: no GPU model) and ``License Status`` (``Licensed (Expiry: …)``, ``Unlicensed
(Unrestricted)``, ``Unlicensed (Restricted)``, older drivers' bare ``Unlicensed``). NVIDIA's vGPU licensing guide:
an unlicensed vGPU runs at full capability for a grace period (20 minutes), then restricted (frame rate and
performance capped, CUDA blocked on compute editions): a job on it is throttled or fails. One record per status line
that says Unlicensed; a Licensed one is said."""

from __future__ import annotations

import re
from collections.abc import Callable

from gpuvet.captures.app_errors import AppErrorsParse
from gpuvet.captures.records import AppError
from gpuvet.captures.text import Line

MARKS = ("License Status",)
KIND = "vgpu_unlicensed"
_STATUS = re.compile(r"^\s*License Status\s*:\s*(Unlicensed|Licensed)\b\s*(\([^()]{0,80}\))?\s*$", re.I)
_EDITION = re.compile(r"^\s*Product Name\s*:\s*(\S[^:]{0,80}?)\s*$")
_SECTION = "vGPU Software Licensed Product"


def parse(lines: list[Line]) -> AppErrorsParse:
    """Each -q License Status line: Unlicensed is a record (with the edition above it), Licensed a note; no line
    claimed (read beside -q's reader, which claims them)."""
    out = AppErrorsParse()
    for i, ln in enumerate(lines):
        if "License Status" not in ln.text or (m := _STATUS.match(ln.text)) is None:
            continue
        edition = _edition(lines, i)  # the line is -q's: its reader claims it (its section and edition with it)
        said = f"{edition}: " if edition else ""
        state = f"{m.group(1)} {m.group(2) or ''}".strip()
        if m.group(1).lower() == "licensed":
            out.notes.append(f"nvidia-smi -q: vGPU licence at line {ln.no}: {said}{state}")
            continue
        restricted = "restricted" in state.lower() and "unrestricted" not in state.lower()
        when = "now runs restricted" if restricted else "runs restricted once the grace period ends (20 minutes)"
        out.errors.append(AppError(KIND, ln.no, f"{said}License Status: {state}: the vGPU {when}"[:300],
                                   tool="nvidia-smi -q"))
    return out


def _edition(lines: list[Line], i: int) -> str | None:
    """The licensed edition printed just above the status, under the licensed-product section."""
    for ln in lines[max(0, i - 3):i][::-1]:
        if (e := _EDITION.match(ln.text)) is not None:
            above = [x.text for x in lines[max(0, i - 4):i]]
            return e.group(1) if any(_SECTION in t for t in above) or "Virtual" in e.group(1) else None
    return None


def parsed(lines: list[Line], make: Callable[..., object]) -> object:
    """formats.py's run: the licence read beside -q (no line claimed), the file named by it where it said something
    (``make``: formats.Parsed, passed in so this module does not import the format list)."""
    got = parse(lines)
    return make(got, set(), found=bool(got.errors or got.notes))
