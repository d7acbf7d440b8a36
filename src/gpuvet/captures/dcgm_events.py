"""DCGM diagnostic results as JSON in whatever shape a user kept: a preflight's or a job's
structured log of one object per event (``{"event": "Test warn", "gpu": "GPU-…", "test":
"software", "error_code": 29, "detail": "…"}``, a ``"Diagnostic summary"`` of passed/failed
counts), ``dcgmi diag -j`` filtered through jq to a few keys, or objects pasted one after another
and cut. A result is an object that names a test and gives a status (a status key, or an event or
level that says it); its GPU, detail and error code are read where present. A summary whose
failed or warned count exceeds the results shown says so as one warning: the failing tests are not
in the capture, so nothing names a module. The whole ``dcgmi diag -j`` document is dcgm.parse_json's."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from gpuvet.captures.dcgm import DcgmParse, named_gpus, status_of
from gpuvet.captures.json_cut import salvage
from gpuvet.captures.records import DcgmResult
from gpuvet.captures.text import Line

# DCGM's tests and plugins (dcgmi diag -r 1..4, the text table's rows): a result naming one is DCGM's
_TESTS = {"software", "pcie", "memory", "memory_bandwidth", "diagnostic", "targeted_stress", "targeted_power",
          "sm_stress", "context_create", "memtest", "pulse_test", "eud", "cpu_eud", "nvbandwidth", "nccl_tests",
          "denylist", "nvml library", "cuda main library", "permissions and os blocks", "persistence mode",
          "environment variables", "page retirement/row remap", "graphics processes", "inforom"}
_TEST_KEYS = ("test", "test_name", "testName", "plugin", "name")
_GPU_KEYS = ("gpu_id", "gpu_ids", "gpuId", "gpu", "entity_id", "gpu_index")
_DETAIL_KEYS = ("detail", "details", "warning", "warnings", "error", "errors", "info", "message", "msg", "reason")
_SAYS = re.compile(r"\btests?\b\W*(pass|fail|warn|skip)", re.I)  # "Test warn", "test failed"
_UUID = re.compile(r"^GPU-[0-9a-fA-F-]{8,40}$")
_MAX_OBJECTS = 10_000
_Obj = dict[str, object]  # one JSON object as json.loads gives it


def parse(lines: list[Line]) -> DcgmParse:
    """The DCGM results in the JSON objects of the lines (none when no object is DCGM's)."""
    out = DcgmParse()
    if not any(ln.text.lstrip().startswith("{") for ln in lines):
        return out
    results: list[DcgmResult] = []
    summaries: list[_Obj] = []
    spans: set[int] = set()
    objects = 0
    for obj, span in _objects(lines):
        objects += 1
        results += _results(obj, "", "")
        summaries += [d for d in _dicts(obj) if isinstance(d.get("failed"), int) and (
            isinstance(d.get("passed"), int) or isinstance(d.get("total"), int))]
        spans |= span
    if not (results or summaries) or not _dcgm_s(results, "\n".join(ln.text for ln in lines if ln.no in spans)):
        return out
    out.claimed = spans  # the run's other events (its start, its connection) are the same log
    out.results = _unique(results) + _unshown(results, summaries)
    out.notes.append(f"DCGM diagnostic JSON: {len(out.results)} result(s) read from {len(out.claimed)} line(s) of "
                     "JSON objects (the keys the capture kept)")
    if objects >= _MAX_OBJECTS:
        _capped(lines, out)
    return out


def _capped(lines: list[Line], out: DcgmParse) -> None:
    """Past _MAX_OBJECTS the objects are not read: said, and their lines are the same log's (not 'not output
    gpuvet reads')."""
    last = max(out.claimed)
    rest = {ln.no for ln in lines if ln.no > last and ln.text.lstrip().startswith("{")}
    if rest:
        out.claimed |= rest
        out.notes.append(f"DCGM diagnostic JSON: more than {_MAX_OBJECTS:,} objects: the first {_MAX_OBJECTS:,} read, "
                         f"the rest ({len(rest):,} line(s) opening an object) not read (the cap on one capture)")


def _dcgm_s(results: list[DcgmResult], text: str) -> bool:
    """The objects are DCGM's: the text names DCGM, or a result names one of DCGM's tests."""
    return "dcgm" in text.lower() or any(r.test.lower() in _TESTS for r in results)


def _objects(lines: list[Line]) -> Iterator[tuple[object, set[int]]]:
    """Each top-level JSON object opening at the start of a line (jq prints one after another), with
    its line numbers; one the paste cut is read up to its last complete field."""
    i, found = 0, 0
    while i < len(lines) and found < _MAX_OBJECTS:
        if not lines[i].text.lstrip().startswith("{"):
            i += 1
            continue
        obj, used = _decode(lines, i)
        if used == 0:
            i += 1
            continue
        found += 1
        yield obj, {ln.no for ln in lines[i:i + used]}
        i += used


def _decode(lines: list[Line], at: int) -> tuple[object, int]:
    """The object opening at line ``at`` and how many lines it spans (0: none there). It ends before
    the next line opening an object at its indentation; a cut one keeps its complete fields."""
    indent = len(lines[at].text) - len(lines[at].text.lstrip())
    stop = min(len(lines), at + 2000)
    end = next((k for k in range(at + 1, stop) if lines[k].text.startswith("{", indent)
                and not lines[k].text[:indent].strip()), stop)
    chunk = "\n".join(ln.text for ln in lines[at:end]).lstrip()
    try:
        obj, used = json.JSONDecoder().raw_decode(chunk)
        return obj, chunk.count("\n", 0, used) + 1
    except (ValueError, RecursionError):
        cut = salvage(chunk)
    if cut is None:
        return None, 0
    try:
        return json.loads(cut.text), max(cut.lines_kept, 1)
    except (ValueError, RecursionError):
        return None, 0


def _dicts(obj: object) -> Iterator[_Obj]:
    if isinstance(obj, dict):
        yield obj
        for v in obj.values():
            yield from _dicts(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _dicts(v)


def _results(obj: object, test: str, category: str) -> Iterator[DcgmResult]:
    """The results under ``obj``; a test's name and category carry down to the results it holds."""
    if isinstance(obj, list):
        for v in obj:
            yield from _results(v, test, category)
        return
    if not isinstance(obj, dict):
        return
    test = next((str(obj[k]) for k in _TEST_KEYS if isinstance(obj.get(k), str)), test)
    category = str(obj["category"]) if isinstance(obj.get("category"), str) else category
    status = _status(obj)
    if status and test:
        yield _result(obj, test, category, status)
    for key, v in obj.items():
        if isinstance(v, (dict, list)) and key not in ("test_summary", "summary"):
            yield from _results(v, test, category)


def _status(obj: _Obj) -> str | None:
    for key in ("status", "result", "outcome"):
        if isinstance(v := obj.get(key), str) and (s := status_of(v)):
            return s
    said = " ".join(str(obj.get(k, "")) for k in ("event", "msg", "message"))
    if (m := _SAYS.search(said)) is not None:
        return status_of(m.group(1))
    level = str(obj.get("level", "")).lower()
    return "warn" if level.startswith("warn") else "error" if level in ("error", "critical", "fatal") else None


def _result(obj: _Obj, test: str, category: str, status: str) -> DcgmResult:
    gpu, uuid = _gpu(obj)
    texts = [_text(obj[k]) for k in _DETAIL_KEYS if obj.get(k) not in (None, "", [])]
    if obj.get("error_code") not in (None, 0, "0", ""):
        texts.append(f"DCGM error code {obj['error_code']}")
    if uuid:
        texts.append(f"on {uuid}")
    code = obj.get("error_code", obj.get("error_id"))
    return named_gpus(DcgmResult(category, test, gpu, status, "; ".join(t for t in texts if t) or None,
                                 (code,) if type(code) is int and code > 0 else ()))


def _gpu(obj: _Obj) -> tuple[str | None, str | None]:
    """The GPU id(s) as DCGM numbers them, and a UUID where that is what the object gives."""
    for key in _GPU_KEYS:
        v = obj.get(key)
        if isinstance(v, bool) or v is None:
            continue
        if isinstance(v, int) or isinstance(v, str) and v.strip().isdigit():
            return str(int(v)), None
        if isinstance(v, list) and v and all(isinstance(g, int) for g in v):
            return ",".join(map(str, v)), None
        if isinstance(v, str) and _UUID.match(v.strip()):
            return None, v.strip()
    return None, None


def _text(v: object) -> str:
    if isinstance(v, list):
        return "; ".join(_text(x) for x in v)
    if isinstance(v, dict):
        return str(v.get("warning") or v.get("message") or v.get("msg") or json.dumps(v, sort_keys=True))
    return str(v)


def _unique(results: list[DcgmResult]) -> list[DcgmResult]:
    return list(dict.fromkeys(results))


def _unshown(results: list[DcgmResult], summaries: list[_Obj]) -> list[DcgmResult]:
    """A summary counting more failures or warnings than the results shown: one result saying so, a
    warning (which test failed, and on which GPU, is not in the capture: nothing to rate as the module's)."""
    if not summaries:
        return []
    s = summaries[-1]
    counts = {k: v for k in ("passed", "failed", "warned", "skipped", "total") if isinstance(v := s.get(k), int)}
    missing = {key: counts.get(key, 0) - sum(r.status in statuses for r in results)
               for key, statuses in (("failed", ("fail", "error")), ("warned", ("warn",)))}
    unshown = [f"{n} {key}" for key, n in missing.items() if n > 0]
    if not unshown:
        return []
    said = ", ".join(f"{v} {k}" for k, v in counts.items())
    return [DcgmResult("Summary", "diagnostic summary", None, "warn",
                       f"the summary counts {said}: {' and '.join(unshown)} test(s) not shown in the capture "
                       "(which test, on which GPU, not known)")]
