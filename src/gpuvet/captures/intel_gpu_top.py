"""Issue 46 (R14E): intel_gpu_top's samples (igt-gpu-tools tools/intel_gpu_top.c) in its three forms:

- -J: one JSON object per period ('"period"', '"frequency": {"requested", "actual"}', '"interrupts"', '"rc6"',
  '"power": {"GPU", "Package"}', '"imc-bandwidth"', '"engines": {"Render/3D/0": {"busy", "sema", "wait"}}',
  '"clients"'), in an array or one after another;
- the interactive screen's header ('intel-gpu-top: Intel Alderlake_s (Gen12) @ /dev/dri/card0 -  300/ 300 MHz;
  100% RC6;  0.00/ 4.87 W;  0 irqs/s') and its engine rows ('Render/3D    0.00% |   |  0%  0%');
- -l's columns ('Freq MHz  IRQ RC6  Power W  …  RCS/0  BCS/0  VCS/0  VECS/0', then 'req  act  /s  %  gpu  pkg …').

Busy engines, clocks and power are load, not faults: each sample is said (engines busy, frequency, RC6, power) and
nothing judged."""

from __future__ import annotations

import json
import re

from gpuvet.captures.bench_results import BenchResult, BenchResults
from gpuvet.captures.text import Line

TOOL = "intel_gpu_top"
_HEADER = re.compile(r"^\s*intel-gpu-top:\s+(.{2,80}?)\s+-\s+(\d+)/\s*(\d+) MHz;\s+(\d+(?:\.\d+)?)% RC6;"
                     r"(?:\s+(\d+(?:\.\d+)?)/\s*(\d+(?:\.\d+)?) W;)?")
_ENGINE = re.compile(r"^\s*([A-Z][A-Za-z]+(?:/3D)?(?:/\d+)?)\s+(\d+(?:\.\d+)?)%\s+\|")
_ENGINES_HEAD = re.compile(r"^\s*ENGINES\s+BUSY\b")
_LIST_HEAD = re.compile(r"^\s*Freq MHz\s+IRQ\s+RC6\b")
_LIST_UNITS = re.compile(r"^\s*req\s+act\s+/s\s+%")
_LIST_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)(?:\s+\d+(?:\.\d+)?){2,}\s*$")
_JSON_KEYS = ('"engines"', '"frequency"', '"rc6"')
_GAP = re.compile(r"[ \t\n\r\[,\]]*")  # between -J's objects: blanks, the array's brackets, commas


def parse(lines: list[Line]) -> BenchResults:
    """The samples of any of its forms, their lines claimed."""
    out = _json(lines)
    _text(lines, out)
    if out.results:
        out.notes.append(f"intel_gpu_top: {len(out.results)} sample(s); " + "; ".join(r.said for r in out.results[:3])
                         + " (load, not judged)")
    return out


def _json(lines: list[Line]) -> BenchResults:
    """-J's objects: decoded one after another from the first '{', the lines they span claimed. Linear in the
    text (review 67b F4): the gap between objects is skipped in place and newlines are counted once each."""
    out = BenchResults()
    if not any(k in ln.text for ln in lines[:200] for k in _JSON_KEYS):
        return out
    start = next((i for i, ln in enumerate(lines) if ln.text.lstrip().startswith(("{", "["))), None)
    if start is None:  # the keys without an object (a quote, a cut paste): no sample to read (review 67b F2)
        out.notes.append("intel_gpu_top: -J's keys without a JSON object ('{'): no sample read")
        return out
    text = "\n".join(ln.text for ln in lines[start:])
    decoder, at, counted, newlines, ends = json.JSONDecoder(), 0, 0, 0, []
    while at < len(text):
        gap = _GAP.match(text, at)  # matches the empty string at worst
        at = gap.end() if gap is not None else at
        if at >= len(text) or text[at] != "{":
            break
        try:
            sample, at = decoder.raw_decode(text, at)
        except (ValueError, RecursionError):  # a cut object, or nesting deeper than Python's stack
            break
        newlines, counted = newlines + text.count("\n", counted, at), at  # each newline counted once
        if isinstance(sample, dict) and "engines" in sample:
            out.results.append(BenchResult(TOOL, _sample(sample), lines[start].no))
            ends.append(newlines)
    if out.results:
        last = start + max(ends)
        close = next((j for j in range(last + 1, min(len(lines), last + 3)) if lines[j].text.strip() in ("]", "],")),
                     last)
        out.claimed = {ln.no for ln in lines[start : close + 1]}
    return out


def _sample(s: dict[str, object]) -> str:
    """One -J sample in words: actual of requested MHz, RC6, power, each engine's busy share."""
    freq, rc6, power = s.get("frequency"), s.get("rc6"), s.get("power")
    parts = []
    if isinstance(freq, dict):
        parts.append(f"{_num(freq.get('actual'))} MHz actual of {_num(freq.get('requested'))} requested")
    if isinstance(rc6, dict):
        parts.append(f"RC6 {_num(rc6.get('value'))} %")
    if isinstance(power, dict):
        parts.append("power " + ", ".join(f"{k} {_num(v)} W" for k, v in power.items() if k != "unit"))
    engines = s.get("engines")
    if isinstance(engines, dict):
        parts.append("engines busy " + ", ".join(f"{k} {_num(v.get('busy'))} %" for k, v in engines.items()
                                                 if isinstance(v, dict)))
    return ", ".join(parts)


def _num(v: object) -> str:
    try:
        return f"{float(str(v)):.1f}"
    except ValueError:
        return "?"


def _text(lines: list[Line], out: BenchResults) -> None:
    """The screen's header with its engine rows, and -l's rows under its two header lines."""
    listing = False
    for ln in lines:
        text = ln.text
        if (h := _HEADER.match(text)) is not None:
            power = f", power {h.group(5)} W GPU of {h.group(6)} W package" if h.group(5) else ""
            out.results.append(BenchResult(TOOL, f"{h.group(1)}: {h.group(2)} MHz actual of {h.group(3)} requested, "
                                           f"RC6 {h.group(4)} %{power}", ln.no))
        elif _ENGINES_HEAD.match(text) or _LIST_UNITS.match(text):
            pass
        elif _LIST_HEAD.match(text):
            listing = True
        elif out.results and _ENGINE.match(text):
            pass
        elif listing and (r := _LIST_ROW.match(text)) is not None:
            out.results.append(BenchResult(TOOL, f"{r.group(2)} MHz actual of {r.group(1)} requested, "
                                           f"{r.group(3)} irqs/s, RC6 {r.group(4)} %", ln.no))
        else:
            continue
        out.claimed.add(ln.no)
