"""`dcgmi diag -r N` as text (the boxed table, DCGM 2.x-4.x) and as `-j` JSON (DCGM 3.x
"DCGM GPU Diagnostic" and 4.x "DCGM Diagnostic" shapes). Each test's result per GPU is evidence.

A table pasted without its ``| Diagnostic | Result |`` header (the post starts at a category row,
``+-----  Hardware  ---…+``) is read from its first category row, and said so in a note. Results
read ``Pass``, ``GPU0: Pass`` (DCGM 4) or ``Fail - GPU: 0`` (DCGM 2/3, one row per status)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from gpuvet.captures.records import DcgmResult
from gpuvet.captures.text import MAX_MODULES, Line

_CATEGORY = re.compile(r"^[|+]-+\s+(\w[\w ]*?)\s+-+\+")
_GPU_RESULT = re.compile(r"^GPU\s*(\d+)\s*:\s*(\w+)\b\s*(.*)$")
_STATUS_GPUS = re.compile(r"^(\w+)\s+-\s+(?:GPUs?\s*:?\s*([\d, ]+)|All)\s*$", re.I)
_BORDER = re.compile(r"^\+[-=+]{3,}\+$")
_COMMAND = re.compile(r"^(?:\S{0,60}[$#]\s)?(?:sudo\s)?dcgmi\s+diag\b")
_STATUSES = ("pass", "fail", "warn", "skip", "not run", "error")


def two_cells(s: str) -> tuple[str, str] | None:
    """A box's '| key | value |' row (a line that starts and ends with a bar and holds one between): the first
    cell and the rest, stripped; None for any other line. Split, not a regex: the regex's lazy cells and blanks
    were retried at every split of a long line of bars and blanks (review 55 F13: a 10 KB line took minutes)."""
    body = s.strip()
    if len(body) < 3 or body[0] != "|" or body[-1] != "|" or body.count("|") < 3:
        return None
    key, _, value = body[1:-1].partition("|")
    return key.strip(), value.strip()


@dataclass
class DcgmParse:
    results: list[DcgmResult] = field(default_factory=list)
    version: str | None = None
    driver: str | None = None  # the Metadata block's 'Driver Version Detected' (DCGM 3.x/4.x)
    device_ids: list[str] = field(default_factory=list)  # its 'GPU Device IDs Detected' (PCI device ids)
    claimed: set[int] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)


def status_of(text: str) -> str | None:
    """DCGM's status word (Pass, Fail, Warn, Skip, Not Run, Error; any case or tense) as one of _STATUSES."""
    t = text.strip().lower()
    for s in _STATUSES:
        if t.startswith(s):
            return "warn" if s == "warn" else s
    return None


def parse_text(lines: list[Line]) -> DcgmParse:
    out = DcgmParse()
    headed = any("Diagnostic" in ln.text and "Result" in ln.text and ln.text.lstrip().startswith("|") for ln in lines)
    first = None if headed else _first_category(lines)
    if not headed and first is None:
        return out
    if first is not None:
        out.notes.append(f"dcgmi diag table without its header rows: read from its first category row (line {first})")
    category, test = "", ""
    in_table = False
    for ln in lines:
        s = ln.text.strip()
        if (s.startswith("| Diagnostic") and "Result" in s) or ln.no == first:
            in_table = True
        if not in_table:
            if s.startswith("Successfully ran diagnostic") or _BORDER.match(s) or _COMMAND.match(s):
                out.claimed.add(ln.no)  # FX68A: the table's top border and the command that printed it
            continue
        if (c := _CATEGORY.match(s)) is not None:
            category = c.group(1).strip()
        elif (r := two_cells(s)) is not None:
            test = _row(out, category, r[0], r[1], test)
        elif not s.startswith(("+", "|")):
            in_table = False
            continue
        out.claimed.add(ln.no)
    out.results = [named_gpus(r) for r in _overall_kept(out.results)]
    return out


_RANK = {"pass": 0, "skip": 1, "not run": 1, "warn": 2, "error": 3, "fail": 3}


def _overall_kept(results: list[DcgmResult]) -> list[DcgmResult]:
    """DCGM 4 prints a test's overall row, then its GPUn: rows. The overall row is dropped where the GPU rows
    already carry its worst status (no second, unlocated failure beside GPU1's); an overall Fail over GPU rows
    that read Skip or Pass (a plugin that failed to start) is kept as the node's result."""
    worst: dict[tuple[str, str], int] = {}
    for r in results:
        if r.gpu is not None:
            key = (r.category, r.test)
            worst[key] = max(worst.get(key, 0), _RANK.get(r.status, 0))
    return [r for r in results if r.gpu is not None or (r.category, r.test) not in worst
            or _RANK.get(r.status, 0) > worst[(r.category, r.test)]]


_DETAIL_GPU = re.compile(r"\bGPU\s?(\d{1,4})(?!\d)")  # DCGM glues its prefix: "GPU 0GPU 0's NvLink"


def named_gpus(r: DcgmResult) -> DcgmResult:
    """A result for the whole group ('Fail - All') whose detail names the GPUs it is about ('GPU 0's NvLink link 0
    is currently down'): the result of those GPUs."""
    if r.gpu is not None or not r.detail:
        return r
    gpus = sorted({int(g) for g in _DETAIL_GPU.findall(r.detail)})
    return DcgmResult(r.category, r.test, ",".join(map(str, gpus)), r.status, r.detail, r.codes) if gpus else r


def gpus(parsed: DcgmParse) -> list[int]:
    """The GPU ids the results name ('GPU0: Pass', 'Fail - GPU: 0, 1', a detail's 'GPU 0'), in order."""
    named = {int(g) for r in parsed.results if r.gpu for g in r.gpu.split(",") if g.strip().isdigit()}
    return sorted(named)[:MAX_MODULES]


def _first_category(lines: list[Line]) -> int | None:
    """A category row followed (within three lines) by a `| test | result |` row: a table without its header;
    never dcgmi stats' box (its '|-- Overall Health --|' section is the job's health, no diag test: side_tables)."""
    if any("statistics for job" in ln.text or "Execution Stats" in ln.text for ln in lines):
        return None
    for i, ln in enumerate(lines):
        if _CATEGORY.match(ln.text.strip()) and any(
                (r := two_cells(x.text)) is not None and status_of(r[1].split(" - ")[0])
                for x in lines[i + 1:i + 4]):
            return ln.no
    return None


_NOTE = re.compile(r"^(?:Warning|Info)\b\s*(?::\s*GPU\s*(\d+))?", re.I)


def _detail(out: DcgmParse, value: str, gpu: str | None) -> str:
    """A Warning/Info row: its text is the detail of the last result of the GPU it names (else the last result)."""
    at = next((i for i in range(len(out.results) - 1, -1, -1) if gpu is None or out.results[i].gpu == gpu),
              len(out.results) - 1)
    r = out.results[at]
    out.results[at] = DcgmResult(r.category, r.test, r.gpu, r.status, ((r.detail or "") + " " + value).strip())
    return r.test


def _row(out: DcgmParse, category: str, name: str, value: str, test: str) -> str:
    """Read one table row; returns the test later continuation rows belong to."""
    if category == "Metadata":
        if name == "DCGM Version":
            out.version = value
        elif name.startswith("Driver Version") and value:  # issue 46 (FX68A): the inventory's driver version
            out.driver = value.split()[0]
        elif name.startswith("GPU Device IDs") and value:
            out.device_ids = [v for v in re.split(r"[,\s]+", value) if v][:MAX_MODULES]
        return test
    if (note := _NOTE.match(name)) is not None and out.results:  # 'Warning: GPU1 | Error using …': a detail row
        return _detail(out, value, note.group(1))
    test = name or test
    if not test or name == "Diagnostic":
        return test
    per_gpu = _GPU_RESULT.match(value)
    grouped = _STATUS_GPUS.match(value)
    if grouped and status_of(grouped.group(1)):
        out.results.append(DcgmResult(category, test, (grouped.group(2) or "").replace(" ", "") or None,
                                      status_of(grouped.group(1)) or "", None))
    elif per_gpu and status_of(per_gpu.group(2)):
        out.results.append(DcgmResult(category, test, per_gpu.group(1), status_of(per_gpu.group(2)) or "",
                                      per_gpu.group(3) or None))
    elif name and status_of(value):
        out.results.append(DcgmResult(category, test, None, status_of(value) or "", None))
    elif value and out.results:  # warning/error text continues the last result
        last = out.results[-1]
        out.results[-1] = DcgmResult(last.category, last.test, last.gpu, last.status,
                                     ((last.detail or "") + " " + value).strip())
        return last.test
    return test


def parse_json(text: str) -> DcgmParse | None:
    """The JSON object of `dcgmi diag -j`, with anything printed before it ignored."""
    start = text.find("{")
    if start < 0 or "test_categories" not in text and '"tests"' not in text:
        return None
    try:
        doc = json.loads(text[start:text.rfind("}") + 1])
    except (ValueError, RecursionError):  # RecursionError: nested deeper than the parser's stack
        return None
    if not isinstance(doc, dict):
        return None
    body = doc.get("DCGM GPU Diagnostic") or doc.get("DCGM Diagnostic") or doc
    if not isinstance(body, dict):
        return None
    out = DcgmParse(version=str(body.get("version")) if body.get("version") is not None else None)
    for cat in _list(body.get("test_categories")):
        if not isinstance(cat, dict):
            continue
        for test in _list(cat.get("tests")):
            if isinstance(test, dict):
                _json_test(out, str(cat.get("category", "")), test)
    return out if out.results else None


def _list(value: object) -> list[Any]:
    """A JSON field that should be a list; anything else (a number, an object) holds no entries."""
    return value if isinstance(value, list) else []


def _json_test(out: DcgmParse, category: str, test: dict[str, Any]) -> None:
    for res in _list(test.get("results")):
        if not isinstance(res, dict):
            continue
        gpu = res.get("gpu_ids", res.get("gpu_id", res.get("entity_id")))
        warnings = res.get("warnings") or []
        warnings = warnings if isinstance(warnings, list) else [warnings]
        detail = "; ".join(str(w.get("warning", w)) if isinstance(w, dict) else str(w) for w in warnings) or None
        codes = tuple(w["error_id"] for w in warnings if isinstance(w, dict) and type(w.get("error_id")) is int)
        out.results.append(DcgmResult(category, str(test.get("name", "?")), None if gpu is None else str(gpu),
                                      status_of(str(res.get("status", ""))) or str(res.get("status", "")).lower(),
                                      detail or (str(res["info"]) if res.get("info") else None), codes))
