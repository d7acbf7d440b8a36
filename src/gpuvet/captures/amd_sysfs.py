"""Issue 46 (YX1): the amdgpu driver's clock and power files under sysfs, and amdvbflash's adapter table, as a
user pastes them to ask about clocks or the VBIOS.

- ``cat /sys/class/drm/cardN/device/pp_dpm_sclk`` (``_mclk``, ``_fclk``, ``_socclk``, ``_dcefclk``, ``_pcie``): one
  line a DPM level, ``N: <value>Mhz`` (amdgpu_pm.c's ``"%d: %uMhz %s"``; pp_dpm_pcie ``N: 8.0GT/s, x16``), the
  level in use marked ``*``. How many levels a board exposes is its firmware's choice (one memory level on an
  Instinct board is normal): said as printed, never judged. ``pp_od_clk_voltage``'s OD_SCLK/OD_MCLK/OD_RANGE
  sections the same way.
- ``amdvbflash -i``: ``adapter [seg] bn dn dID asic flash romsize test bios p/n``, one row an adapter: its bus id,
  device id, ASIC and VBIOS part number listed as an AMD module.

Neither prints a fault: the modules are listed and the levels said, nothing judged."""

from __future__ import annotations

import re

from gpuvet.captures.records import ListedModule, ListedParse
from gpuvet.captures.text import MAX_MODULES, Line

KIND, SYSFS = "amdvbflash -i", "amdgpu sysfs clock levels"
MARKERS = ("pp_dpm_", "pp_od_clk_voltage", "bios p/n")  # the files' names (a cat's path or a grep's), the table's header
_FILE = re.compile(r"(?:/sys/class/drm/(?P<card>card\d{1,3})/device/|\b)(?P<file>pp_dpm_[a-z]{2,8}|pp_od_clk_voltage)\b")
# 'N: ' may be gone: three levels or more look like srun --label's rank prefix, which the cleaner takes off first
_LEVEL = re.compile(r"^\s*(?:(?P<n>\d{1,2}):\s+)?(?P<value>\d{1,6}(?:\.\d{1,3})?(?:Mhz|MHz|mV|GT/s)(?:,\s*x\d{1,2})?"
                    r"(?:\s+\d{1,6}(?:Mhz|MHz|mV))?(?:\s+\d{1,4}Mhz)?)\s*(?P<now>\*)?\s*$")
_SECTION = re.compile(r"^\s*(?:OD_[A-Z]{2,8}|[A-Z]{4,6}):(?:\s+\d.*)?$")  # OD_SCLK:, OD_RANGE:, 'SCLK: 500Mhz 2000Mhz'
_HEAD = re.compile(r"^\s*adapter\s+(?:seg\s+)?bn\s+dn\s+dID\s+asic\s+flash\s+romsize\s+test\s+bios p/n\s*$")
_RULE = re.compile(r"^\s*=+(?:\s+=+){5,}\s*$")
_ROW = re.compile(r"^\s*(?P<adapter>\d{1,2})\s+(?:(?P<seg>[0-9A-Fa-f]{4})\s+)?(?P<bn>[0-9A-Fa-f]{2})\s+"
                  r"(?P<dn>[0-9A-Fa-f]{2})\s+(?P<did>[0-9A-Fa-f]{4})\s+(?P<asic>\S{1,40})\s+(?P<flash>\S{1,30})\s+"
                  r"(?P<rom>[0-9A-Fa-f]{1,8})\s+(?P<test>\S{1,8})\s+(?P<pn>\S{1,40})\s*$")


def parse(lines: list[Line]) -> ListedParse:
    """The clock levels each sysfs file lists and amdvbflash's adapters (possibly none)."""
    out = ListedParse()
    _levels(lines, out)
    _adapters(lines, out)
    return out


def _levels(lines: list[Line], out: ListedParse) -> None:
    """Each pp_dpm_*/pp_od_clk_voltage file's levels under its name, said with the level in use."""
    files: list[tuple[str, list[str], str | None]] = []
    for ln in lines:
        if (f := _FILE.search(ln.text)) is not None and ("pp_" in ln.text):
            files.append((f"{f['card'] + ' ' if f['card'] else ''}{f['file']}", [], None))
            out.claimed.add(ln.no)
        elif files and (m := _LEVEL.match(ln.text)) is not None:
            name, levels, now = files[-1]
            levels.append(f"{m['n'] or len(levels)}: {m['value']}")
            files[-1] = name, levels, (m["value"] if m["now"] else now)
            out.claimed.add(ln.no)
        elif files and files[-1][0].endswith("pp_od_clk_voltage") and _SECTION.match(ln.text):
            files[-1][1].append(ln.text.strip())
            out.claimed.add(ln.no)
    for name, levels, now in files:
        if levels:
            out.notes.append(f"{SYSFS}: {name}: {len(levels)} level(s) ({'; '.join(levels[:10])})"
                             + (f", in use {now}" if now else "") + "; how many levels a board exposes is its "
                             "firmware's choice, not judged")
    if any(levels for _, levels, _ in files):
        out.kinds.append(SYSFS)
    else:
        out.claimed.clear()  # a file's name with no level under it is a poster's word, not the file


def _adapters(lines: list[Line], out: ListedParse) -> None:
    """amdvbflash -i's rows under its header, one AMD module each."""
    head = next((ln.no for ln in lines if "bios p/n" in ln.text and _HEAD.match(ln.text)), None)
    if head is None:
        return
    rows: list[re.Match[str]] = []
    for ln in lines:
        if ln.no <= head or len(rows) >= MAX_MODULES:
            continue
        row = _ROW.match(ln.text)
        if row is not None or _RULE.match(ln.text):
            out.claimed.add(ln.no)
            rows.extend([row] if row is not None else [])
        elif ln.text.strip() and not ln.text.strip().startswith(("```", "#")):
            break  # the table ends at the first line that is not a row
    out.claimed.add(head)
    for m in rows:
        asic = re.sub(r"\(.*\)$", "", m["asic"])
        out.modules.append(ListedModule(f"adapter {m['adapter']}", name=f"AMD {asic}",
                                        bus_id=f"{m['seg'] or '0000'}:{m['bn']}:{m['dn']}.0".upper(),
                                        vbios=m["pn"], device_id=m["did"].upper(), tool=KIND))
    if rows:
        out.kinds.append(KIND)
        out.notes.append(f"{KIND}: {len(rows)} adapter(s): " + "; ".join(
            f"{m['adapter']} at {m['bn']}:{m['dn']} {m['asic']} dID {m['did']}, flash {m['flash']}, ROM test "
            f"{m['test']}, bios p/n {m['pn']}" for m in rows[:8]))
