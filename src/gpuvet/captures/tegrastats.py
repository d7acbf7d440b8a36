"""Jetson's ``tegrastats`` (issue 46, TOOLS): one line a sample, ``RAM …MB … GR3D_FREQ 99% … gpu@55.8C tj@55.8C …``
(JetPack 5/6; older boards print ``GR3D_FREQ 0%@76`` and ``GPU@40.5C``). Its integrated GPU is read as one module
with -q's fields (the last sample's load and temperature, so every check judges them alike) and the samples' peak in
a note. tegrastats prints no verdict of its own: nothing is judged here. A sensor tegrastats cannot read prints
-256C (a powered-off GPU rail): no reading, said, never a temperature. R13D: jtop's stats as jetson-stats prints them
('<key>, <value>' rows: 'GPU, 0', 'Temp GPU, 46.0', 'nvp model, MAXN', jtop.stats of rbonghi/jetson_stats) are the
same module's readings where no tegrastats sample is in the text."""

from __future__ import annotations

import re

from gpuvet.captures.marks import holding
from gpuvet.captures.records import UNNAMED, SmiTextModule
from gpuvet.captures.smi_text import SmiText
from gpuvet.captures.text import Line

MARKER = "GR3D_FREQ"
KIND = "tegrastats"
_LOAD = re.compile(r"\bGR3D_FREQ\s+(\d{1,3})%(?:@\[?(\d{1,5})\b)?")
_TEMP = re.compile(r"\b(?:gpu|GPU)@(-?\d{1,3}(?:\.\d{1,2})?)C\b")
_JUNCTION = re.compile(r"\btj@(-?\d{1,3}(?:\.\d{1,2})?)C\b")
_PRODUCT = "NVIDIA Jetson integrated GPU (tegrastats: model not printed)"


def _reading(m: re.Match[str] | None) -> float | None:
    """A temperature tegrastats read, None for none or its no-sensor value (-256C, anything below -40C)."""
    if m is None or float(m.group(1)) < -40:
        return None
    return float(m.group(1))


def parse(lines: list[Line]) -> SmiText:
    """The Jetson GPU of tegrastats' samples: one module, its last sample's load, clock and temperature."""
    out = SmiText()
    samples: list[tuple[int, str | None, float | None, float | None]] = []
    ram: re.Match[str] | None = None  # the last sample's RAM figure
    for ln in (lines[i] for i in holding(lines, (MARKER,))):  # the sample lines alone (issue 43: no walk)
        if (load := _LOAD.search(ln.text)) is None:
            continue
        ram = _RAM.search(ln.text) or ram
        samples.append((int(load.group(1)), load.group(2), _reading(_TEMP.search(ln.text)),
                        _reading(_JUNCTION.search(ln.text))))
        out.claimed.add(ln.no)
    if not samples:
        return _jtop(lines, out)
    load_pct, clock, temp, junction = samples[-1]
    fields = {"Utilization/Gpu": f"{load_pct} %"}
    fields |= {"Clocks/Graphics": f"{clock} MHz"} if clock else {}
    fields |= {"Temperature/GPU Current Temp": f"{temp:.0f} C"} if temp is not None else {}
    out.modules.append(SmiTextModule(f"{UNNAMED} #1", _PRODUCT, fields))
    temps = [t for _, _, t, _ in samples if t is not None]
    peak = f", GPU temperature peak {max(temps):.1f} C" if temps else ", no GPU temperature read (sensor off or absent)"
    tj = f", junction (tj) {junction:.1f} C" if junction is not None else ""
    out.notes.append(f"{KIND}: {len(samples)} sample(s) of the Jetson GPU; last load {load_pct} %{peak}{tj}; "
                     "tegrastats prints no verdict: its figures are read, not judged against a limit it does not print")
    out.notes += _ram(ram)
    return out


_RAM = re.compile(r"\bRAM (\d{1,7})/(\d{1,7})MB\b")
RAM_HIGH = 0.9  # R13D: shared memory (the GPU's too) this full leaves the next allocation little room


def _ram(last: re.Match[str] | None) -> list[str]:
    """The last sample's RAM in use (its match, read on the sample lines alone), said where it is RAM_HIGH of the
    total or more (the Jetson's CPU and GPU share it): an info, never a finding."""
    if last is None or int(last.group(2)) == 0 or int(last.group(1)) / int(last.group(2)) < RAM_HIGH:
        return []
    used, total = int(last.group(1)), int(last.group(2))
    return [f"{KIND}: RAM {used}/{total} MB in use ({100 * used / total:.0f} %, shared by the CPU and the GPU): high "
            "usage, little room for the next allocation (info)"]


JTOP_MARKER = "Temp GPU"
_JTOP = re.compile(r"^\s*(GPU|Temp GPU|nvp model|jetson_clocks), ([\w.\-]{1,20})\s*$")


def _jtop(lines: list[Line], out: SmiText) -> SmiText:
    """jtop's stats rows: the GPU's load and temperature, the power mode in a note; nothing judged."""
    said: dict[str, str] = {}
    for i in holding(lines, ("GPU, ", "nvp model, ", "jetson_clocks, ")):
        if (m := _JTOP.match(lines[i].text)) is not None:
            said.setdefault(m.group(1), m.group(2))
            out.claimed.add(lines[i].no)
    if "Temp GPU" not in said and "GPU" not in said:
        out.claimed.clear()
        return out
    fields = {"Utilization/Gpu": f"{said['GPU']} %"} if said.get("GPU", "").isdigit() else {}
    temp = _reading(re.match(r"(-?\d{1,3}(?:\.\d{1,2})?)$", said.get("Temp GPU", "")))
    fields |= {"Temperature/GPU Current Temp": f"{temp:.0f} C"} if temp is not None else {}
    out.modules.append(SmiTextModule(f"{UNNAMED} #1", _PRODUCT.replace("tegrastats", "jtop"), fields))
    mode = ", ".join(f"{k} {said[k]}" for k in ("nvp model", "jetson_clocks") if k in said)
    out.notes.append(f"jtop: the Jetson GPU's stats{': ' + mode if mode else ''}; jtop prints no verdict: its figures "
                     "are read, not judged against a limit it does not print")
    return out
