"""nv-hostengine's own ERROR lines about its NvSwitch module (issue 46, AX4), as NVIDIA/DCGM's
modules/nvswitch/*.cpp logs them (DcgmNvSwitchManager.cpp v2.1-v3.3, DcgmNscqManager.cpp and
DcgmNvsdmManager.cpp v4): DCGM 3+ tags them '[[NvSwitch]]', DCGM 2 names only the source path.

What they mean depends on what the module reached. NSCQ (libnvidia-nscq) loaded and a session made, then a
read failed, or NSCQ warned at session creation that the driver and NSCQ versions differ: the node has (or is
meant to have) NVSwitches and DCGM cannot read them. NSCQ never loaded ('Could not load NSCQ', then 'Not
attached to NvSwitches. Aborting' every few seconds): on a node without NVSwitches that is the module's noise,
said but not judged, unless the capture shows NVSwitches (an HGX/DGX board, the fabric manager, nvswitch
kernel lines). DCGM's own bookkeeping in the module (a message version, a field id) says nothing of switches."""

from __future__ import annotations

import re

from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.marks import Marks
from gpuvet.captures.records import DcgmHealthIncident
from gpuvet.captures.text import Line

# the module's ERROR line: '[[NvSwitch]] message [/…/modules/nvswitch/X.cpp:N] [DcgmNs::Class::Fn]' (DCGM 3+),
# 'message [/…/modules/nvswitch/X.cpp:N] [DcgmNs::DcgmNvSwitchManager::Fn]' (DCGM 2: no tag); a cut line may
# lack the function's closing bracket
_LINE = lazy(r"\bERROR\s+\[\d+:\d+\]\s+(\[\[NvSwitch\]\]\s+)?(.*?)(\s+\[/?[^\]\s]+:\d+\])?"
                   r"(?:\s+\[[\w:~]+\]?)?\s*$")
_SOURCE = lazy(r"modules/nvswitch/|DcgmNvSwitchManager|DcgmNscqManager|DcgmModuleNvSwitch|DcgmNvsdmManager")
# NSCQ's session made with a warning: DcgmNvSwitchManager.cpp / DcgmNscqManager.cpp's AttachToNscq
VERSION = "Ensure driver version matches NSCQ version"
# NSCQ (or NVSDM) loaded and a session made: what follows failed on switches it reached
_LOADED = lazy(r"Ensure driver version matches NSCQ|Could not create NSCQ session|Could not enumerate physical "
                     r"IDs|Could not read (?:Switch status|NvLink states|Switch fatal errors|NvSwitch status|IB CX "
                     r"cards status)|NSCQ (?:field Id \d+ )?passed error|AttachNvSwitches returned|AttachNvsdmDevices"
                     r"\(\) returned|AttachNvLinks\(\) returned|NVSDM returned unknown state", re.I)
# the module never reached a switch: NSCQ (NVSDM) not loaded, and the loop's 'not attached' after it
_IDLE = lazy(r"Not attached to (?:NvSwitches|NVSDM)|Could not load (?:NSCQ|NVSDM)", re.I)
# the loop's echo of 'not attached' (DCGM_ST_UNINITIALIZED's words), read with _IDLE's lines as the same fact
_ECHO = lazy(r"returned:? \[?Object is in an undefined state", re.I)
# DCGM's own bookkeeping in the module: a request's version, a field id, its task runner, fake switches
_INTERNAL = lazy(r"^(?:Version mismatch|Unexpected module command|Invalid numFieldIds|Received msg = nullptr|"
                       r"Unable to (?:enqueue|start a DcgmTaskRunner)|Got error .* task runner|We could only create|"
                       r"Unknown fieldId|Unhandled type|An invalid pointer|Failed to (?:append|get DcgmFvBuffer)|"
                       r"Encountered a problem while retrieving|(?:Unknown|Not all threads|Exception caught).*exit|"
                       r"NvSwitch blank append|PreWatchFieldCheck)", re.I)
# a capture's own sign that the node has NVSwitches, outside the module's lines: an HGX or NVSwitch DGX board,
# the fabric manager, the nvswitch kernel driver's lines, the NSCQ package of a driver branch (DCGM 4's 'Could not
# load NSCQ' names the package itself: 'If this system has NvSwitches, please ensure that the package
# libnvidia-nscq is installed'); compiled, Marks searches it
_SHOWN = re.compile(r"\bHGX\b|\bDGX[- ]?(?:A100|H100|H200|H20|B200|B300|GB200|2)\b|fabric ?manager|nv-fabricmanager|"
                    r"\bnvidia-nvswitch\d*\b|\bnvswitch\d*: |libnvidia-nscq[-_]\d{3}", re.I)
MODULE = "NVSwitch (DCGM's NvSwitch module)"
SYSTEM = "NvSwitch module"  # the incidents' system (the doctor judges it: knowledge/faults.yaml's dcgm_nvswitch_unread)


def message(text: str) -> str | None:
    """The NvSwitch module's message an ERROR line logs; None for another line or DCGM's own bookkeeping."""
    if "[[NvSwitch]]" not in text and _SOURCE.search(text) is None or "ERROR" not in text:
        return None
    m = _LINE.search(text)
    if m is None or m.group(1) is None and _SOURCE.search(m.group(3) or text[m.end(2):]) is None:
        return None
    said = m.group(2).strip()
    return None if _INTERNAL.match(said) else said


def judge(said: dict[str, int], lines: list[Line], claimed: set[int],
          whole: Marks | None = None) -> tuple[list[DcgmHealthIncident], list[str]]:
    """The module's messages (each with its count) as one incident where the switches were reached or the capture
    shows them (its lines, or ``whole``: the whole text's, another reader's lines too, looked for only here);
    else, the module never attached on a node shown to have none, a note (its log noise)."""
    if not said:
        return [], []
    loaded = [m for m in said if _LOADED.search(m)]
    idle = [m for m in said if _IDLE.search(m)]
    shown = any(ln.no not in claimed and _SHOWN.search(ln.text) for ln in lines) or \
        (whole is not None and bool(idle) and not loaded and whole.any((_SHOWN,)))
    if idle and not loaded and not shown:
        n = sum(n for m, n in said.items() if _IDLE.search(m) or _ECHO.search(m))
        return [], [f"DCGM's NvSwitch module: {n} line(s) say it never attached to NVSwitches ({idle[0][:120]!r}): "
                    "nothing in the capture shows this node has NVSwitches (no HGX or DGX board, fabric manager, "
                    "nvswitch kernel line or NSCQ library named), so this is DCGM's log noise on a node without "
                    "them, not judged (nv-hostengine --denylist-modules 1 quiets it)"]
    first = next((m for m in said if VERSION in m), loaded[0] if loaded else next(iter(said)))
    total = sum(said.values())
    why = ("libnvidia-nscq's version is not the driver's (install it at the driver's exact version): "
           if VERSION in first else "")
    return [DcgmHealthIncident(MODULE, SYSTEM, "ERROR", f"DCGM cannot read the switches' state: {why}{first[:300]} "
                               f"({total} line(s))")], []
