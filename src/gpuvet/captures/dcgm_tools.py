"""DCGM's smaller tools, read so a paste of them is never refused (issue 46, FX68A).

``dcgmi modules -l`` (dcgmi/Module.cpp): a 'List Modules' box, 'Status: Success', then one row per host-engine
module, '| Module ID | Name | State |', the state one of Module::statusToStr's: Loaded, Not loaded, Failed to load,
Unloaded, Paused, Denylisted (Blacklisted before DCGM 2.4). A module that failed to load leaves its monitoring
feature unavailable (Profiling: the DCP metrics, on GPUs or drivers it does not support): info, never a GPU's fault;
'Not loaded' is the host engine's lazy loading (a module loads on its first use) and said only.

``dcgmproftester`` (dcgmproftester/DcgmProfTester.cpp): 'GPU 0, TestField 1007 test PASSED.' (or 'test FAILED.',
'testing FAILED.' where a worker did not start), 'All Tests Passed.', the CUDA device's
attributes it prints ('CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: 48'), 'Bus ID … mapped to cuda device ID 0' and its
workers' progress lines. A FAILED test is a benchmark's failed validation (warn); PASSED is said."""

from __future__ import annotations

import json
import re

from gpuvet.captures.app_errors import AppErrorsParse
from gpuvet.captures.records import AppError
from gpuvet.captures.text import Line

MODULES_MARKS = ("List Modules", "Module ID")
PROFTESTER_MARKS = ("TestField", "dcgmproftester", "CU_DEVICE_ATTRIBUTE_", "All Tests Passed")
MARKS = (*MODULES_MARKS, *PROFTESTER_MARKS)  # in runtime_marks.SIDE_MARKS: read by side_tables' format
MODULE_FAILED, PROFTESTER_FAILED = "dcgm_module_failed", "dcgm_proftester_failed"  # doctor/capture_errors.py
STATES = ("Loaded", "Not loaded", "Failed to load", "Unloaded", "Paused", "Denylisted", "Blacklisted")
_BOX = re.compile(r"^\+[-=+]{3,}\+$")
_HEADS = ("List Modules", "Status: Success", "Module ID")  # 'Status: Failure' is the listing's own failure: said
_RESULT = re.compile(r"^GPU (\d{1,3}), TestField (\d{1,5}) (test|testing) (PASSED|FAILED)\.?$")
_ATTRIBUTE = re.compile(r"^CU_DEVICE_ATTRIBUTE_([A-Z0-9_]{1,60}): (\S{1,40})$")
_BUS = re.compile(r"^Bus ID ([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]) mapped to cuda device ID (\d{1,3})$")
_CHATTER = re.compile(r"^Worker \d{1,4}:\d{1,4}\[\d{1,6}\]: |^(?:All Tests Passed\.|DCGM CudaContext Init completed "
                      r"successfully\.|Skipping CreateDcgmGroups\(\)|Max Memory bandwidth: |CUDA_VISIBLE_DEVICES: |"
                      r"Running version \S{1,20} binary with CUDA driver version )|"
                      # the command that ran it, as typed (after a prompt, or the bare command and its options);
                      # never the tool's own error line ('dcgmproftester12: error while loading shared libraries')
                      r"^\S{0,60}[$#]\s[^\n]{0,400}?\bdcgmproftester\d{0,3}\b|"
                      r"^(?:sudo\s{1,4})?\S{0,200}\bdcgmproftester\d{0,3}(?:\s{1,4}-[^\n]{0,400})?$")
_SAID_ATTRIBUTES = {"MULTIPROCESSOR_COUNT": "SMs", "COMPUTE_CAPABILITY_MAJOR": "cc major",
                    "COMPUTE_CAPABILITY_MINOR": "cc minor", "GLOBAL_MEMORY_BUS_WIDTH": "bus width",
                    "ECC_SUPPORT": "ECC"}


def _cells(text: str) -> list[str] | None:
    """A box row's cells ('| 8 | Profiling | Failed to load |'), split, not a regex; None for any other line."""
    s = text.strip()
    if len(s) < 3 or s[0] != "|" or s[-1] != "|":
        return None
    return [c.strip() for c in s[1:-1].split("|")]


def modules(lines: list[Line], out: AppErrorsParse) -> None:
    """dcgmi modules -l: each module's state; one failed to load reported (info), the others said."""
    if not any("List Modules" in ln.text for ln in lines):
        return
    rows: list[tuple[Line, str, str]] = _json_rows(lines, out)
    for ln in lines:
        cells = _cells(ln.text)
        if cells is not None and len(cells) == 3 and cells[0].isdigit() and cells[2] in STATES:
            rows.append((ln, cells[1], cells[2]))
            out.claimed.add(ln.no)
        elif (cells is not None and len(cells) == 1 and cells[0].startswith(_HEADS)) or \
                (cells is not None and cells[:1] == ["Module ID"]) or _BOX.match(ln.text.strip()):
            out.claimed.add(ln.no)
    failed = next((ln for ln in lines if "Status: Failure" in ln.text), None)
    if failed is not None:  # the host engine could not list its modules: said, never claimed as a header
        out.notes.append(f"dcgmi modules -l: the listing failed (line {failed.no}: '{failed.text.strip()[:120]}'): "
                         "no module's state was read")
    if not rows:
        return
    by_state: dict[str, list[str]] = {}
    for _, name, state in rows:
        by_state.setdefault(state, []).append(name)
    out.notes.append("dcgmi modules -l: " + "; ".join(f"{s}: {', '.join(n)}" for s, n in by_state.items())
                     + " (DCGM's host-engine modules; 'Not loaded' is its lazy loading: a module loads on first use)")
    for ln, name, state in rows:
        if state == "Failed to load":
            out.errors.append(AppError(MODULE_FAILED, ln.no, f"DCGM module {name}: Failed to load (its monitoring "
                                       "feature is unavailable; the GPU is not judged)", None, "dcgmi modules"))


def _json_rows(lines: list[Line], out: AppErrorsParse) -> list[tuple[Line, str, str]]:
    """dcgmi modules -l -j (DcgmiOutputJson: {"header": ["List Modules", …], "body": {"Core": {"children": {"Name":
    {"value": …}, "State": {"value": …}}}}}): each module's row, placed on the line that holds its state."""
    text = "\n".join(ln.text for ln in lines)
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or '"body"' not in text:
        return []
    try:
        doc = json.loads(text[start:end + 1])
    except (ValueError, RecursionError):
        return []
    body = doc.get("body") if isinstance(doc, dict) else None
    if not isinstance(body, dict):
        return []
    first = text[:start].count("\n")
    out.claimed |= {ln.no for ln in lines[first:first + text[start:end + 1].count("\n") + 1]}
    rows: list[tuple[Line, str, str]] = []
    for name, entry in body.items():
        kids = entry.get("children") if isinstance(entry, dict) else None
        state = kids.get("State") if isinstance(kids, dict) else None
        value = state.get("value") if isinstance(state, dict) else None
        if isinstance(value, str) and value in STATES:
            at = next((ln for ln in lines[first:] if f'"{value}"' in ln.text), lines[first])
            rows.append((at, str(name), value))
    return rows


def proftester(lines: list[Line], out: AppErrorsParse) -> None:
    """dcgmproftester: each GPU's TestField result (FAILED: warn), its summary and the device's attributes."""
    if not any(m in ln.text for ln in lines for m in PROFTESTER_MARKS):
        return
    results: list[tuple[Line, re.Match[str]]] = []
    attributes: dict[str, str] = {}
    buses: list[str] = []
    claimed: set[int] = set()
    for ln in lines:
        s = ln.text.strip()
        if (r := _RESULT.match(s)) is not None:
            results.append((ln, r))
        elif (a := _ATTRIBUTE.match(s)) is not None:
            attributes[a.group(1)] = a.group(2)
        elif (b := _BUS.match(s)) is not None:
            buses.append(f"{b.group(1).lower()} = CUDA device {b.group(2)}")
        elif _CHATTER.match(s) is None:
            continue
        claimed.add(ln.no)
    if not results and not attributes:  # the tool printed nothing of its own (it did not start): its lines left
        return  # to the other readers, its error line a lead (REV68a)
    out.claimed |= claimed
    said = [f"GPU {r.group(1)} TestField {r.group(2)} {r.group(3)} {r.group(4)}" for _, r in results]
    shown = [f"{_SAID_ATTRIBUTES[k]} {v}" for k, v in attributes.items() if k in _SAID_ATTRIBUTES]
    out.notes.append("dcgmproftester: " + ("; ".join(said) or "no test result printed")
                     + (f"; device: {', '.join(shown)}" if shown else "") + (f"; {'; '.join(buses)}" if buses else ""))
    for ln, r in results:
        if r.group(4) == "FAILED":
            out.errors.append(AppError(PROFTESTER_FAILED, ln.no, ln.text.strip()[:300], f"GPU {r.group(1)}",
                                       "dcgmproftester"))
