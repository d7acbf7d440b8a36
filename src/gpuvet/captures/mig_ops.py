"""FX68F (issue 46): what nvidia-smi's MIG commands and the drivers that call NVML's MIG API print, beside the
listing boxes (captures/smi_mig.py).

- ``nvidia-smi mig -cgi … [-C]`` / ``-cci``: 'Successfully created GPU instance ID  9 on GPU  0 using profile MIG
  1g.5gb (ID 19)', 'Successfully created compute instance ID  0 on GPU  0 GPU instance ID  7 using profile MIG 1g.5gb
  (ID  0)', and ``-dgi``/``-dci``'s 'Successfully destroyed …': MIG is on and partitioned, counted per GPU and
  profile; a configuration, not judged.
- nvidia-smi's failures of those commands, '<Failed to|Unable to> <display|create|destroy> <GPU|compute>
  instance(s) …: <NVML's error string>', and a Kubernetes driver's (the DRA driver's, the MIG manager's) 'error
  creating GPU instance for '1g.10gb': Insufficient Resources': NVML's 'Insufficient Permissions' is a caller not
  allowed MIG's configuration or monitoring (MIG_NOT_PERMITTED, warn); 'Insufficient Resources' a GPU with no room
  left for the profile (MIG_NO_ROOM, warn). Other NVML words are said, not judged.
- nvidia-smi's default table's 'MIG devices:' box where a paste holds it alone (a container's nvidia-smi): its
  rows (GPU, GPU instance, compute instance, MIG device; memory, SMs) counted and said."""

from __future__ import annotations

import re
from collections import Counter

from gpuvet.captures.app_errors import AppErrorsParse
from gpuvet.captures.records import AppError
from gpuvet.captures.text import Line

MIG_NOT_PERMITTED, MIG_NO_ROOM = "mig_not_permitted", "mig_no_room"  # doctor/capture_errors.py
MARKS = ("GPU instance", "compute instance", "MIG devices:")
_CREATED = re.compile(r"Successfully (created|destroyed) (GPU|compute) instance ID\s{1,4}(\d{1,3}) (?:on|from) GPU"
                      r"\s{1,4}(\d{1,3})(?: GPU instance ID\s{1,4}\d{1,3})?(?: using profile MIG (\S{1,20}))?")
_FAILED = re.compile(r"(?:Failed to|Unable to) (display|create|destroy|list|get) (?:a |the )?(GPU|compute) instances?"
                     r"[^:\n]{0,80}: ([A-Z][A-Za-z ]{2,40}?)\.?\s*$")
_DRIVER = re.compile(r"error (creating|deleting|destroying) (GPU|compute) instance for '?([\w.+-]{1,20})'?: "
                     r"([A-Z][A-Za-z ]{2,40}?)(?:\"|'|\.|$)")
_KINDS = {"Insufficient Permissions": MIG_NOT_PERMITTED, "Insufficient Resources": MIG_NO_ROOM}
_MIG_TITLE = re.compile(r"^\s*\|\s*MIG devices:\s*\|\s*$")
_MIG_ROW = re.compile(r"^\s*\|\s{0,4}(\d{1,3})\s{1,8}(\d{1,3})\s{1,8}(\d{1,3})\s{1,8}(\d{1,3})\s{0,4}\|\s{0,12}(\d{1,7})MiB"
                      r"\s{0,3}/\s{0,12}(\d{1,7})MiB\s{0,4}\|\s{0,8}(\d{1,4})\b")
_EDGE = re.compile(r"^\s*(?:\+[-=+]{3,}\+|\|[\s|]{0,200}\||\|.{0,200}\|)\s*$")


def parse(lines: list[Line]) -> AppErrorsParse:
    out = AppErrorsParse()
    done: Counter[tuple[str, str, str, str]] = Counter()  # (created, GPU/compute, gpu, profile) -> instances
    for ln in lines:
        s = ln.text
        if "instance" not in s:
            continue
        if (m := _CREATED.search(s)) is not None:
            done[(m.group(1), m.group(2), m.group(4), m.group(5) or "")] += 1
            out.claimed.add(ln.no)
        elif (m := _FAILED.search(s)) is not None or (m := _DRIVER.search(s)) is not None:
            _failed(out, ln, m)
    _said(out, done)
    if not any("NVIDIA-SMI " in ln.text for ln in lines):
        _mig_devices(out, lines)
    return out


def _failed(out: AppErrorsParse, ln: Line, m: re.Match[str]) -> None:
    """A MIG command's failure: judged where NVML's words are a permission or a lack of room, else said."""
    words = m.group(3) if m.re is _FAILED else m.group(4)
    verb = {"creating": "create", "deleting": "delete", "destroying": "destroy"}.get(m.group(1), m.group(1))
    what = f"{verb} {m.group(2)} instances" + (f" for {m.group(3)}" if m.re is _DRIVER else "")
    out.claimed.add(ln.no)
    kind = _KINDS.get(words.strip())
    tool = "nvidia-smi mig" if m.re is _FAILED else "a MIG driver (NVML)"
    if kind is None:
        out.notes.append(f"line {ln.no}: {tool} could not {what}: {words.strip()} (not judged)")
        return
    if any(e.kind == kind for e in out.errors):
        out.errors = [AppError(e.kind, e.line, e.text, e.module, e.tool, e.times + 1) if e.kind == kind else e
                      for e in out.errors]
        return
    text = ln.text.strip()
    at = text.find(m.group(0).strip()[:20])
    out.errors.append(AppError(kind, ln.no, text[:300] if at < 120 else "… " + text[at:][:298], tool=tool,
                               meaning=f"{tool} could not {what}: NVML said '{words.strip()}'"))


def _said(out: AppErrorsParse, done: Counter[tuple[str, str, str, str]]) -> None:
    """'nvidia-smi mig: 7 GPU instance(s) created on GPU 0 (1g.5gb x7); …; MIG is on; a configuration, not judged'."""
    if not done:
        return
    parts = []
    for (verb, level, gpu, profile), n in done.items():
        parts.append(f"{n} {level} instance(s) {verb} on GPU {gpu}" + (f" ({profile})" if profile else ""))
    out.notes.append("nvidia-smi mig: " + "; ".join(parts) + ": MIG is enabled on those GPUs; MIG partitioning is a "
                     "configuration, not judged")


def _mig_devices(out: AppErrorsParse, lines: list[Line]) -> None:
    """The 'MIG devices:' box alone: its rows counted and said."""
    rows: list[str] = []
    for i, ln in enumerate(lines):
        if not _MIG_TITLE.match(ln.text):
            continue
        out.claimed |= {ln.no} | ({lines[i - 1].no} if i and lines[i - 1].text.strip().startswith("+") else set())
        for nxt in lines[i + 1:i + 1 + 4 * 64]:
            if not _EDGE.match(nxt.text):
                break
            out.claimed.add(nxt.no)
            if (r := _MIG_ROW.match(nxt.text)) is not None:
                rows.append(f"GPU {r.group(1)} GI {r.group(2)} CI {r.group(3)} (MIG device {r.group(4)}): "
                            f"{r.group(7)} SMs, {r.group(5)} MiB of {r.group(6)} MiB used")
    if rows:
        out.notes.append(f"nvidia-smi's MIG devices: {len(rows)} MIG device(s): " + "; ".join(rows[:8]) +
                         "; MIG partitioning is a configuration, not judged")
