"""Tenstorrent chips that do not come back, as tt-kmd and the reset scripts around tt-smi say it (issue 46, R10A).
- tt-kmd (wormhole.c / grayskull.c / blackhole.c, arc_msg_push): 'tenstorrent: Skipping message 00000011 due to FW
  not running.' (pr_warn, no bus id: the chip's ARC firmware is not running, so the driver sends it nothing), and
  'tenstorrent 0000:02:00.0: Device is unresponsive, cannot reset.' (the driver declines to reset it): the chip
  is lost until the host is power-cycled; one verdict on the device (critical), the lines counted;
- tt-metal's and the CI runners' reset scripts around 'tt-smi -r' ('Error: Unsuccessful board reset, trying again
  in 5 seconds ...', '… rebooting', 'Warning: Unsuccessful board reset attempt 1/3, …', 'Error: Unsuccessful SMI
  run, probably ARC / no chips detected failure'): tt-smi's reset found no chips; a later 'Board reset
  successful!' clears it; else accel_tools' 'tt-smi: reset not completed' verdict (warn), no board named."""

from __future__ import annotations

import re

from gpuvet.captures.records import ListedModule, ListedParse
from gpuvet.captures.text import Line

TT_KMD, TT_RESET = "tt-kmd", "tt-smi reset script"
# accel_tools.RESET_INCOMPLETE (warn): the script says tt-smi's reset failed (no chips detected, or tt-smi exited
# non-zero) and retries or reboots; whether the chips came back is not in its lines: one verdict with tt-smi's own
RESET_INCOMPLETE = "tt-smi: reset not completed"
UNRESPONSIVE = "tt-kmd: chip unresponsive, firmware not running"
SEVERITY = {UNRESPONSIVE: "critical"}
MARKERS = ("FW not running", "cannot reset")
RESET_MARKERS = ("Unsuccessful board reset", "Unsuccessful SMI run")
_BUS = r"((?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])"
_FW_DOWN = re.compile(r"\btenstorrent(?: " + _BUS + r")?: Skipping message ([0-9a-fA-F]{1,8}) due to FW not running")
_CANNOT = re.compile(r"\btenstorrent " + _BUS + r": Device is unresponsive, cannot reset")
_FAILED = re.compile(r"\b(?:Error|Warning): Unsuccessful (?:board reset|SMI run)\b.{0,120}")
_SUCCESS = re.compile(r"\bBoard reset successful\b")


def kmd_unresponsive(lines: list[Line], out: ListedParse) -> None:
    """tt-kmd's words for a chip whose firmware is down and that it cannot reset: one critical verdict on the bus id
    the lines name (the nearest one for a line without it), else on the driver with the bus id not in the log."""
    found: dict[str, list[str]] = {}
    read: set[int] = set()
    skipped = 0
    for ln in lines:
        head = ln.text[:400]
        if (c := _CANNOT.search(head)) is not None:
            found.setdefault(c.group(1).upper(), []).insert(0, head[c.start() :].strip()[:160])
        elif (f := _FW_DOWN.search(head)) is not None:
            skipped += 1
            if f.group(1):
                found.setdefault(f.group(1).upper(), [])
        else:
            continue
        read.add(ln.no)
    if not read:
        return
    if not found:
        found[""] = []
    why = (
        f"; {skipped} message(s) skipped: 'due to FW not running' (its ARC firmware is not running)" if skipped else ""
    ) + " (the driver cannot reset it: power-cycle the host, then tt-smi -r)"
    for bus_id, said in found.items():
        text = (said[0] if said else "tt-kmd skips its messages: the chip's firmware is not running") + why
        label = f"TT {bus_id}" if bus_id else "tenstorrent driver (bus id not in the log)"
        out.modules.append(
            ListedModule(label, "Tenstorrent device", bus_id or None, tool=TT_KMD, ras=((UNRESPONSIVE, text[:240]),))
        )
    out.claimed |= read
    out.kinds.append(TT_KMD)


def reset_script(lines: list[Line], out: ListedParse) -> None:
    """A reset script's failed tt-smi resets, counted; not a fault where a later line says the reset succeeded."""
    failed = [(ln, m) for ln in lines if (m := _FAILED.search(ln.text[:400])) is not None]
    if not failed:
        return
    ok = [ln for ln in lines if ln.no > failed[-1][0].no and _SUCCESS.search(ln.text[:200])]
    first = failed[0][1].group(0).strip()
    if ok:
        out.notes.append(
            f"{TT_RESET}: {len(failed)} unsuccessful board reset(s) ('{first[:80]}'), then line "
            f"{ok[0].no}: 'Board reset successful!'"
        )
        out.claimed |= {ln.no for ln, _ in failed} | {ok[0].no}
        out.kinds.append(TT_RESET)
        return
    said = (
        f"{first[:120]} ({len(failed)} time(s)): tt-smi's reset of the board found no chips (its ARC firmware "
        "did not come back); power-cycle the host, update the firmware bundle with tt-flash, then reset again"
    )
    out.modules.append(
        ListedModule(
            "TT board (index not in the log)", "Tenstorrent board", tool=TT_RESET, ras=((RESET_INCOMPLETE, said[:240]),)
        )
    )
    out.claimed |= {ln.no for ln, _ in failed}
    out.kinds.append(TT_RESET)
