"""History from a Prometheus server over its HTTP API: ``/api/v1/query_range`` for each
dcgm-exporter (or gpuvet) series, paged so that no answer holds more than ``MAX_POINTS`` points
per series (Prometheus refuses more than 11,000), with a step chosen from the span."""

from __future__ import annotations

import http.client
import json
import math
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gpuvet.errors import GpuvetError
from gpuvet.watch import bounds
from gpuvet.watch.read_prom import QUERY_SETS, SeriesSink, add_range_json
from gpuvet.watch.recording import Recording

MAX_POINTS = 10_000  # per series per request, below Prometheus' 11,000
NICE_STEPS = (15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 900.0, 1800.0, 3600.0)
TARGET_POINTS = 10_000  # points per series over the whole span when the step is chosen for the user
TIMEOUT_S = 120.0  # one answer, start to end
READ_TIMEOUT_S = 30.0  # one wait for the next piece of it
STEP_S = (1.0, 86400.0)  # below a second no exporter samples; above a day a window holds one point
MAX_STEPS = 1_000_000  # points per series over the span: 100 requests per series

Fetch = Callable[[str], Any]  # URL -> parsed JSON (injected by tests)


@dataclass(frozen=True)
class HistoryQuery:
    url: str  # http://host:9090
    start: float  # Unix seconds
    end: float
    step_s: float
    match: str = ""  # '{Hostname=~"rack3.*"}'


def choose_step(span_s: float) -> float:
    """The smallest round step that keeps the span under TARGET_POINTS points per series (at
    least 15 s, a common scrape interval; at most an hour, beyond which windows lose meaning)."""
    for step in NICE_STEPS:
        if span_s / step <= TARGET_POINTS:
            return step
    return NICE_STEPS[-1]


def check_match(match: str) -> str:
    """A label selector in braces; raises GpuvetError otherwise."""
    text = match.strip()
    if text and not (text.startswith("{") and text.endswith("}")):
        raise GpuvetError(f"--match {match!r} is not a label selector", where="--match",
                          fix="write it in braces, e.g. --match '{Hostname=~\"rack3.*\"}'.")
    return text


def check_span(start: float, end: float, step: float) -> None:
    """Raises GpuvetError for a step outside STEP_S, or one that cuts the span into more than
    MAX_STEPS points per series."""
    if not STEP_S[0] <= step <= STEP_S[1]:
        raise GpuvetError(f"a step of {step:g} s is out of range: allowed is from 1s to 1d", where="--step",
                          fix="e.g. --step 60s (or leave it out: chosen from --since).")
    if (end - start) / step > MAX_STEPS:
        raise GpuvetError(f"{(end - start) / step:,.0f} points per series at a {step:g} s step: more than "
                          f"{MAX_STEPS:,}", where="--step",
                          fix=f"a step of at least {math.ceil((end - start) / MAX_STEPS):,} s, or a shorter --since.")


def chunks(start: float, end: float, step: float) -> list[tuple[float, float]]:
    """[start, end] cut into pieces of at most MAX_POINTS steps; pieces do not overlap."""
    out = []
    width = step * (MAX_POINTS - 1)
    t = start
    while t <= end:
        hi = min(t + width, end)
        out.append((t, hi))
        t = hi + step
    return out


def http_fetch(url: str) -> Any:
    """GET ``url`` and parse the JSON; raises GpuvetError with Prometheus' own error text, and for
    an answer larger than MAX_JSON_BYTES or slower than TIMEOUT_S in all (read a piece at a time,
    so a huge body is refused at the bound and a drip at the deadline)."""
    where = url.split("?")[0]
    request = urllib.request.Request(url, headers={"Accept": "application/json", "User-Agent": "gpuvet"})
    deadline = time.monotonic() + TIMEOUT_S
    try:
        with urllib.request.urlopen(request, timeout=min(TIMEOUT_S, READ_TIMEOUT_S)) as answer:  # noqa: S310
            body = _body(answer, deadline, where)
    except urllib.error.HTTPError as exc:
        try:
            why = json.loads(exc.read(4096)).get("error", exc.reason)
        except (ValueError, AttributeError, OSError):
            why = exc.reason
        raise GpuvetError(f"Prometheus answered {exc.code}: {str(why)[:300]}", where=where,
                          fix="check --match (PromQL label selector) and --step.") from None
    except (urllib.error.URLError, TimeoutError, OSError, http.client.HTTPException) as exc:
        reason = getattr(exc, "reason", exc)
        raise GpuvetError(f"cannot reach Prometheus ({reason})", where=where,
                          fix="check --prometheus-url (e.g. http://prometheus:9090) and that it answers.") from None
    try:
        return json.loads(body)
    except RecursionError:
        raise GpuvetError("the answer nests deeper than its JSON reader follows", where=where,
                          fix="point --prometheus-url at the Prometheus server itself, not a UI or proxy page.") from None
    except ValueError:  # JSONDecodeError, or an integer beyond 4,300 digits, or bytes that are not UTF-8
        raise GpuvetError("the answer is not JSON", where=where,
                          fix="point --prometheus-url at the Prometheus server itself, not a UI or proxy page.") from None


def _body(answer: Any, deadline: float, where: str) -> bytes:
    limit = bounds.MAX_JSON_BYTES
    fix = "narrow the read: a larger --step, a shorter --since, or fewer modules (--match)."
    length = answer.headers.get("Content-Length", "")
    if length.isdigit() and int(length) > limit:
        raise bounds.too_big(limit, f"answer (it says {int(length) / 2**20:,.0f} MiB)", where, fix)
    parts, size = [], 0
    while piece := answer.read1(2**20):
        size += len(piece)
        if size > limit:
            raise bounds.too_big(limit, "answer", where, fix)
        if time.monotonic() > deadline:
            raise GpuvetError(f"the answer took more than {TIMEOUT_S:g} s (and was not finished)", where=where,
                              fix=fix + " Or check the server's load.")
        parts.append(piece)
    return b"".join(parts)


def _range_url(q: HistoryQuery, metric: str, lo: float, hi: float) -> str:
    params = urllib.parse.urlencode({"query": metric + q.match, "start": f"{lo:.3f}", "end": f"{hi:.3f}",
                                     "step": f"{q.step_s:g}"})
    return q.url.rstrip("/") + "/api/v1/query_range?" + params


def read_history(q: HistoryQuery, fetch: Fetch = http_fetch) -> Recording:
    """The series of the first naming (dcgm-exporter, then gpuvet) that has temperatures.

    Raises GpuvetError when neither has, naming the selector used."""
    if not q.url.startswith(("http://", "https://")):
        raise GpuvetError(f"{q.url!r} is not an http(s) URL", where="--prometheus-url",
                          fix="e.g. --prometheus-url http://prometheus:9090")
    check_span(q.start, q.end, q.step_s)
    pieces = chunks(q.start, q.end, q.step_s)
    for naming, metrics in QUERY_SETS.items():
        sink = SeriesSink(f"Prometheus {naming} history", q.url)
        found = 0
        for i, metric in enumerate(metrics):
            for lo, hi in pieces:
                found += add_range_json(sink, fetch(_range_url(q, metric, lo, hi)), q.url)
            if i == 0 and found == 0:
                break  # no temperatures under this naming
        if found:
            rec = sink.finish()
            rec.notes.append(f"read {naming} series from {q.url} at a {q.step_s:g} s step in {len(pieces)} "
                             f"request(s) per series")
            return rec
    first = ", ".join(m[0] for m in QUERY_SETS.values())
    raise GpuvetError(f"no series {first} matching {q.match or 'anything'} between "
                      f"{_utc(q.start)} and {_utc(q.end)}", where=q.url,
                      fix="check --match and --since (and that dcgm-exporter or gpuvet is scraped).")


def _utc(t: float) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(t, UTC).isoformat(timespec="seconds") if math.isfinite(t) else str(t)
