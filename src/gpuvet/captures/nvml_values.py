"""Issue 46 (YX1): NVML's values as a binding prints them in a REPL or a program's log, never nvidia-smi's words:
the clock event (throttle) reasons and the current clocks of one GPU.

- Julia's CUDA.jl (``NVML.clock_event_reasons(dev)``): a named tuple of flags, ``(idle = false, display_setting =
  false, hw_power_brake = false, sw_power_cap = false, application_setting = false, hw_slow = false, sync_boost =
  false, sw_thermal = false, hw_thermal = false)``; ``NVML.clock_info(dev)``: ``(sm = 915, graphics = 915, memory =
  5000, video = 1500)`` in MHz.
- pynvml / nvidia-ml-py (``nvmlDeviceGetCurrentClocksThrottleReasons(h)``, ``…ClocksEventReasons``) and go-nvml
  (``GetCurrentClocksThrottleReasons()``): the bitmask as a number, on the call's line (``= 0x4``, ``: 4``) or the
  REPL's next line, decoded per nvml.h's ``nvmlClocksEventReason*`` bits.

Each flag is put where nvidia-smi -q prints it (``Clocks Event Reasons/HW Slowdown: Active``), so the checks that
judge -q's reasons judge these alike (a hardware slowdown is a finding; idle or an application clock setting is
not). One GPU, named by no bus id: the binding printed none."""

from __future__ import annotations

import re

from gpuvet.captures.records import NVML_VALUES, UNNAMED, SmiTextModule
from gpuvet.captures.smi_text import SmiText
from gpuvet.captures.text import Line

KIND = NVML_VALUES  # doctor cites this file for the -q fields it fills (records.MONITOR_KINDS)
MARKERS = ("clock_event_reasons", "hw_slow", "ThrottleReasons", "EventReasons", "clock_info")
_SECTION = "Clocks Event Reasons"
# nvml.h: nvmlClocksEventReasonGpuIdle 0x1 … nvmlClocksEventReasonDisplayClockSetting 0x100 (-q's names)
_BITS = ((0x1, "Idle"), (0x2, "Applications Clocks Setting"), (0x4, "SW Power Cap"), (0x8, "HW Slowdown"),
         (0x10, "Sync Boost"), (0x20, "SW Thermal Slowdown"), (0x40, "HW Thermal Slowdown"),
         (0x80, "HW Power Brake Slowdown"), (0x100, "Display Clock Setting"))
# CUDA.jl's field names -> -q's
_JULIA = {"idle": "Idle", "application_setting": "Applications Clocks Setting", "sw_power_cap": "SW Power Cap",
          "hw_slow": "HW Slowdown", "sync_boost": "Sync Boost", "sw_thermal": "SW Thermal Slowdown",
          "hw_thermal": "HW Thermal Slowdown", "hw_power_brake": "HW Power Brake Slowdown",
          "display_setting": "Display Clock Setting"}
_CLOCKS = {"sm": "Clocks/SM", "graphics": "Clocks/Graphics", "memory": "Clocks/Memory", "video": "Clocks/Video"}
_FLAG = re.compile(r"\b([a-z_]{2,24})\s*=\s*(true|false)\b")
_TUPLE = re.compile(r"^\s*\((?:\s*[a-z_]{2,24}\s*=\s*[\w.]{1,12}\s*,?)+\s*\)\s*$")
_NUMBER = re.compile(r"\b([a-z]{2,10})\s*=\s*(\d{1,6})\b")
_MASK_CALL = re.compile(r"GetCurrentClocks(?:Throttle|Event)Reasons\b[^=:\n]{0,80}"
                        r"(?:[=:]\s*(?P<value>0x[0-9A-Fa-f]{1,8}|\d{1,10})\s*[,)]?\s*$)?")
_BARE = re.compile(r"^\s*(0x[0-9A-Fa-f]{1,8}|\d{1,10})[Lu]?\s*$")


def parse(lines: list[Line]) -> SmiText:
    """The one GPU whose reasons or clocks the lines print (possibly none)."""
    out, fields, said = SmiText(), dict[str, str](), list[str]()
    for i, ln in enumerate(lines):
        text = ln.text
        if _TUPLE.match(text):
            flags = {k: v for k, v in _FLAG.findall(text) if k in _JULIA}
            if len(flags) >= 3:
                fields |= {f"{_SECTION}/{_JULIA[k]}": "Active" if v == "true" else "Not Active" for k, v in flags.items()}
                said.append(f"clock_event_reasons {', '.join(k for k, v in flags.items() if v == 'true') or 'none set'}")
                out.claimed.update(_with_call(lines, i, "clock_event_reasons"))
            elif i and "clock_info" in lines[i - 1].text and (clocks := dict(_NUMBER.findall(text))).keys() & _CLOCKS.keys():
                fields |= {_CLOCKS[k]: f"{v} MHz" for k, v in clocks.items() if k in _CLOCKS}
                said.append("clocks " + ", ".join(f"{k} {v} MHz" for k, v in clocks.items() if k in _CLOCKS))
                out.claimed.update({ln.no, lines[i - 1].no})
        elif "Reasons" in text and (call := _MASK_CALL.search(text)) is not None:
            value = call["value"] or (_bare(lines[i + 1].text) if i + 1 < len(lines) else None)
            if value is None:
                continue
            mask = int(value, 16) if value.lower().startswith("0x") else int(value)
            fields |= {f"{_SECTION}/{name}": "Active" if mask & bit else "Not Active" for bit, name in _BITS}
            said.append(f"clock event reasons bitmask {value} = {', '.join(n for b, n in _BITS if mask & b) or 'none'}")
            out.claimed.update({ln.no} | ({lines[i + 1].no} if call["value"] is None else set()))
    if fields:
        out.modules.append(SmiTextModule(f"{UNNAMED} #1", "NVIDIA GPU (the binding printed no name)", fields))
        out.notes.append(f"{KIND}: {'; '.join(said)} (as -q's Clocks Event Reasons and Clocks; no bus id printed)")
    return out


def _bare(text: str) -> str | None:
    """A REPL's answer line: the number alone."""
    m = _BARE.match(text)
    return m.group(1) if m else None


def _with_call(lines: list[Line], i: int, call: str) -> set[int]:
    """The tuple's line, and the REPL's call line right above it where it names ``call``."""
    return {lines[i].no} | ({lines[i - 1].no} if i and call in lines[i - 1].text else set())
