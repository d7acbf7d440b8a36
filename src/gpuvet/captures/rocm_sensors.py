"""Issue 46: rocm-smi readings that say the module's sensors, or the SMU behind them, stopped answering.

A reading no sensor can give - a temperature of 200 °C and more (511 °C is a 9-bit register read as all ones), a
counter at all ones (65535, 0xFFFF, 4294967295) - is the driver reading garbage from the SMU, not a temperature to
judge: a finding on the module, critical where none of its sensors reads a sane figure (its fan at 255 of 255 and
clocks the tool could not determine beside it). rocm_smi_lib's 'Expected integer value from monitor, but got ""'
is a hwmon file that returned nothing: the module's sensor or SMU not answering; it names no module, so it is said
on a module whose row left its temperature unread, or the tool's own line naming one, else on a module the
paste does not name (ListedParse.unnamed). Each is a ras path judged by captures.verdicts."""

from __future__ import annotations

import re
from dataclasses import replace

from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.records import ListedModule, ListedParse, ToolVerdict
from gpuvet.captures.text import Line

IMPOSSIBLE = "rocm-smi: impossible sensor reading"  # warn: one reading or more garbage, another sane
NONE_SANE = "rocm-smi: every sensor reading impossible"  # critical: the module answers nothing sane
MONITOR_EMPTY = "rocm-smi: sensor returned no value"  # warn: a hwmon read came back empty
UNNAMED = "a module rocm-smi does not name"
PATHS = {IMPOSSIBLE: "warn", NONE_SANE: "critical", MONITOR_EMPTY: "warn"}

_SAID_ELSEWHERE = ("rocm-smi: readings unreadable", "rocm-smi: every reading N/A")  # rocm_table's (it imports this)
_HOTTEST_C = 200.0  # no GPU runs at this: junction limits are ~100-125 °C and the board shuts down past them
_ALL_ONES = frozenset({65535, 4294967295})  # a 16- or 32-bit register read as all ones
_FIGURE = lazy(r"^\s*(0x[0-9a-fA-F]+|\d+(?:\.\d+)?)")
_SENSOR_KEY = lazy(r"temperature|\bfan\b|\bpower\b|\b[sm]clk\b|\bvoltage", re.I)
_CLOCKS_UNREAD = lazy(r"^GPU\[(\d{1,4})\]\s*:\s*Unable to determine current clocks")
_FAN_FULL = lazy(r"^\s*255\b")  # 255 of 255: full speed, or all ones beside garbage (not judged alone)
_EMPTY = lazy(r"\bExpected integer value from monitor, but got \"[^\"]{0,40}\"")
_NAMED = lazy(r"^GPU\[(\d{1,4})\]\s*:\s*(get_\w+), Unexpected data received")  # the tool's line naming it


def _value(text: str) -> float | None:
    m = _FIGURE.match(text)
    return None if m is None else float(int(m.group(1), 16)) if m.group(1).startswith("0x") else float(m.group(1))


def _garbage(key: str, value: str) -> bool:
    figure = _value(value)
    if figure is None:
        return False
    return ("temperature" in key.lower() and figure >= _HOTTEST_C) or figure in _ALL_ONES


def judged_fields(module: ListedModule, fields: dict[str, str], lines: list[Line]) -> ListedModule:
    """rocm-smi -a's fields of one module: garbage readings as a ras path; the temperature they hold dropped."""
    sensors = {k: v for k, v in fields.items() if _SENSOR_KEY.search(k)}
    bad = [f"{k} {v}" for k, v in sensors.items() if _garbage(k, v)]
    if not bad:
        return module
    index = module.label[4:-1]
    unread = any((m := _CLOCKS_UNREAD.match(ln.text)) is not None and m.group(1) == index for ln in lines
                 if "Unable to determine" in ln.text)
    odd = [f"{k} {v}" for k, v in sensors.items() if "fan" in k.lower() and _FAN_FULL.match(v)]
    sane = [k for k, v in sensors.items() if f"{k} {v}" not in bad and f"{k} {v}" not in odd]
    said = ", ".join([*bad, *odd, *(["clocks: unable to determine"] if unread else [])])
    path = NONE_SANE if not sane else IMPOSSIBLE
    hot = module.temperature_c
    return replace(module, temperature_c=None if hot is not None and hot >= _HOTTEST_C else hot,
                   ras=(*module.ras, (path, said[:240])))


def monitor_empty(lines: list[Line], out: ListedParse, before: int) -> None:
    """'Expected integer value from monitor' lines above a listing: said on the module the tool's next line names,
    else on the rows (from ``before``) that left their temperature unread, else on no module named."""
    empty = [ln for ln in lines if "Expected integer" in ln.text and _EMPTY.search(ln.text)]
    if not empty:
        return
    said = f"{len(empty)} line(s) 'Expected integer value from monitor, but got \"\"' (line {empty[0].no})"
    named = {m.group(1): m.group(2) for ln in lines if "Unexpected data" in ln.text
             and (m := _NAMED.match(ln.text.strip())) is not None}
    hit = [k for k in range(before, len(out.modules)) if out.modules[k].label[4:-1] in named]
    hit = hit or [k for k in range(before, len(out.modules)) if out.modules[k].temperature_c is None]
    if any(p in _SAID_ELSEWHERE for k in hit for p, _ in out.modules[k].ras):
        return  # the module's row already says it answers nothing (rocm_table's UNANSWERED, ALL_UNREAD): one finding
    for k in hit:
        mod = out.modules[k]
        what = named.get(mod.label[4:-1], "its row's temperature not read")
        out.modules[k] = replace(mod, ras=(*mod.ras, (MONITOR_EMPTY, f"{said}; {what}")))
    if not hit:
        out.unnamed.append(ToolVerdict("rocm-smi", UNNAMED, None, MONITOR_EMPTY,
                                       f"{said}: the tool names no module and every row pasted read", "warn"))
