"""rocm-smi --showtemp's lines without their 'GPU[N] :' prefix (a poster's excerpt: 'Temperature (Sensor junction)
(C): 43.0') and amdgpu's hwmon files as 'grep . temp*' or a script prints them ('temp2_label : junction',
'temp2_input : 43000', millidegrees): each sensor's reading said (issue 46: such an excerpt was left unread). No
module is named by them, so none is judged: the readings are said as the tool or the driver printed them."""

from __future__ import annotations

import re

from gpuvet.captures.records import ListedModule, ListedParse
from gpuvet.captures.text import Line

MARKERS = ("Temperature (Sensor", "_label", "_input")
_SMI = re.compile(r"^\s*Temperature \(Sensor ([\w ]{1,20})\) \(C\):\s*(-?\d+(?:\.\d+)?|N/A)\s*$")
# hwmon: 'temp2_label : junction', '/sys/class/drm/card0/device/hwmon/hwmon3/temp2_input:43000'
_HWMON = re.compile(r"^\s*(?:\S*/)?(temp\d{1,2})_(label|input)\s*[:=]\s*(\S{1,20})\s*$")
_MILLI = re.compile(r"-?\d{1,9}")  # an input's millidegrees, as int() reads them ('--5' is none)
_MODEL = re.compile(r"\bAMD (?:Instinct MI\d{2,3}[A-Z]{0,2}|Radeon (?:RX|PRO|Pro) [A-Z]?\d{3,4}[A-Z]{0,3})\b")
_AMDGPU_LABELS = {"edge", "junction", "mem", "hotspot"}  # amdgpu_pm.c's temp1..3 labels


def read(lines: list[Line], out: ListedParse) -> None:
    """The sensors' readings, said in one note per source; their lines claimed."""
    smi = [(ln, m) for ln in lines if "Temperature (Sensor" in ln.text and (m := _SMI.match(ln.text)) is not None]
    if smi:
        out.claimed |= {ln.no for ln, _ in smi}
        said = ", ".join(f"{m.group(1).strip()} {m.group(2)} C" for _, m in smi)
        out.notes.append(f"rocm-smi --showtemp: {said} (its module not named on these lines: read, not judged)")
        out.kinds.append("rocm-smi --showtemp")
    _hwmon(lines, out)
    named = list(dict.fromkeys(m.group(0) for ln in lines if "AMD" in ln.text for m in _MODEL.finditer(ln.text)))
    if out.kinds and not out.modules and len(named) == 1:  # the one module the text names: listed, as named
        out.modules.append(ListedModule("GPU (named in the text)", name=named[0]))


def _hwmon(lines: list[Line], out: ListedParse) -> None:
    """amdgpu's hwmon temperature files: a label and its input (millidegrees C) per tempN, where a label is
    amdgpu's own (edge, junction, mem)."""
    found = [(ln, m) for ln in lines if "temp" in ln.text and (m := _HWMON.match(ln.text)) is not None]
    labels = {m.group(1): m.group(3) for _, m in found if m.group(2) == "label"}
    if not labels or not set(labels.values()) <= _AMDGPU_LABELS:
        return
    values = {m.group(1): int(m.group(3)) for _, m in found if m.group(2) == "input" and _MILLI.fullmatch(m.group(3))}
    said = [f"{labels[t]} {values[t] / 1000:g} C" for t in labels if t in values]
    if not said:
        return
    out.claimed |= {ln.no for ln, _ in found}
    out.notes.append(f"amdgpu hwmon: {', '.join(said)} (its module not named on these lines: read, not judged)")
    out.kinds.append("amdgpu hwmon")
