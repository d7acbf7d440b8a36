"""The forecast scored against what really happened on a fleet: ``watch --replay FILES…
--backtest EVENTS.csv``. EVENTS.csv lists, per module, when it first throttled, or was re-pasted
or replaced; the replay's own ``overheat_forecast`` events are matched to them.

Rules (the same for every threshold setting, so the sweep compares like with like):
- a ``throttled`` outcome is *warned* when the first warning since the module's last
  maintenance came at least ``lead_s`` (the horizon) before it, *late* when it came after that,
  *missed* when none came;
- a ``repasted``/``replaced`` outcome closes the module's history so far: a warning before it is
  *warned before maintenance* (the operator acted on it), none is no fault of the forecast;
- a warning followed by no outcome on that module within ``confirm_s`` (14 days) is a *false
  alarm*; one less than ``confirm_s`` before the end of the data is *open* (not yet decidable);
- module-days are the days each module had telemetry (its forecaster's windows).

The sweep re-runs the forecaster over the windows the replay already formed (no re-reading, no
logbook), one setting at a time, and ranks settings by warned − false alarms, then fewer false
alarms, then the longer median lead."""

from __future__ import annotations

import csv
import io
import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from gpuvet.errors import GpuvetError
from gpuvet.files import Input, read_input
from gpuvet.node.vendor_tools import GIVE
from gpuvet.watch import bounds
from gpuvet.watch.events import Event
from gpuvet.watch.forecast import HOUR, ForecastSettings, ThermalForecaster, decide
from gpuvet.watch.recording import Recording

KINDS = ("throttled", "repasted", "replaced")
MAX_BYTES = 16 * 1024 * 1024  # an events file of a large fleet's year is well under this
MAX_ROWS = 200_000
UNIX_TIME_MAX = 4e9  # 2096-10-02: a larger "Unix time" is milliseconds or a typo, not a time
MAX_ROW_CHARS = 64 * 1024  # a row (and so each cell) of the events file: an event's row is ~60 characters
CONFIRM_S = 14 * 86400.0
SWEEP = tuple(ForecastSettings(alpha=a, margin_s=m * HOUR, min_rise_c=r)
              for a in (0.80, 0.90, 0.95) for m in (24.0, 48.0, 96.0) for r in (0.5, 1.0, 2.0))
_FIX = ("write a CSV file with the header module,time,kind and one row per event, "
        "e.g. node05/gpu3,2026-01-13T02:29Z,throttled")
_FIX_LONG = ("check the file is the events CSV (module,time,kind; a row is ~60 characters) and that every quote it "
             "opens is closed.")


@dataclass(frozen=True)
class Outcome:
    """What really happened to a module, from the user's events file."""

    module: str
    time: float  # Unix seconds
    kind: str  # throttled, repasted, replaced
    line: int
    where: str = ""  # "--backtest FILE", to name the file and line of a refused event


@dataclass(frozen=True)
class Verdict:
    module: str
    kind: str
    time: float
    result: str  # warned, late, missed, warned before maintenance, maintenance without a warning
    warned_at: float | None = None

    @property
    def lead_h(self) -> float | None:
        return None if self.warned_at is None else (self.time - self.warned_at) / HOUR


@dataclass
class Score:
    settings: ForecastSettings
    verdicts: list[Verdict] = field(default_factory=list)
    false_alarms: list[tuple[str, float]] = field(default_factory=list)
    open: list[tuple[str, float]] = field(default_factory=list)
    module_days: float = 0.0

    def count(self, result: str) -> int:
        return sum(v.result == result for v in self.verdicts)

    @property
    def per_1000(self) -> float:
        return 1000 * len(self.false_alarms) / self.module_days if self.module_days else 0.0

    @property
    def median_lead_h(self) -> float | None:
        leads = [v.lead_h for v in self.verdicts if v.result == "warned" and v.lead_h is not None]
        return statistics.median(leads) if leads else None

    def rank(self) -> tuple[float, float, float]:
        warned = self.count("warned")
        return (warned - len(self.false_alarms), -len(self.false_alarms), self.median_lead_h or 0.0)

    def to_json(self) -> dict[str, object]:
        s = self.settings
        return {"settings": {"alpha": s.alpha, "margin_h": s.margin_s / HOUR, "min_rise_c": s.min_rise_c,
                             "step_min_c": s.step_min_c},
                "warned": self.count("warned"), "late": self.count("late"), "missed": self.count("missed"),
                "warned_before_maintenance": self.count("warned before maintenance"),
                "false_alarms": len(self.false_alarms), "open_warnings": len(self.open),
                "module_days": round(self.module_days, 1), "false_alarms_per_1000_module_days": round(self.per_1000, 2),
                "median_lead_h": None if self.median_lead_h is None else round(self.median_lead_h, 1)}


@dataclass
class Backtest:
    """The current settings' score with every verdict, and the sweep ranked best first."""

    current: Score
    sweep: list[Score]
    lead_s: float
    unknown_modules: list[str]
    outcomes: int
    unscored_modules: list[str] = field(default_factory=list)  # in the telemetry, without temperature or power

    @property
    def best(self) -> Score:
        return self.sweep[0]

    def to_json(self) -> dict[str, object]:
        def when(t: float) -> str:
            return datetime.fromtimestamp(t, UTC).isoformat(timespec="seconds")

        return {
            "outcomes": self.outcomes, "lead_h_needed": self.lead_s / HOUR, "unknown_modules": self.unknown_modules,
            "unscored_modules": self.unscored_modules,
            "current": self.current.to_json(),
            "verdicts": [{"module": v.module, "kind": v.kind, "time_utc": when(v.time), "result": v.result,
                          "warned_utc": None if v.warned_at is None else when(v.warned_at),
                          "lead_h": None if v.lead_h is None else round(v.lead_h, 1)} for v in self.current.verdicts],
            "false_alarms": [{"module": m, "warned_utc": when(t)} for m, t in self.current.false_alarms],
            "open_warnings": [{"module": m, "warned_utc": when(t)} for m, t in self.current.open],
            "best": self.best.to_json(),
            "sweep": [s.to_json() for s in self.sweep],
        }


# --- the events file ------------------------------------------------------------------------
def read_outcomes(path: Path) -> list[Outcome]:
    """EVENTS.csv: a header naming module, time and kind (any order, other columns ignored),
    then one event per row. Times are ISO 8601 (no zone: UTC) or Unix seconds. A BOM is dropped;
    CR, LF and CR LF end a line; a row is at most MAX_ROW_CHARS."""
    where = f"--backtest {path}"
    rows = _rows(_read_text(path, where), where)
    header = next(rows, None)
    if header is None:
        raise GpuvetError("the events file is empty", where=where, fix=_FIX)
    names = [h.strip().lower() for h in header[1]]
    missing = [c for c in ("module", "time", "kind") if c not in names]
    if missing:
        raise GpuvetError(f"the header {_show(','.join(header[1]))} has no {' or '.join(missing)} column",
                          where=where, fix=_FIX)
    col = {c: names.index(c) for c in ("module", "time", "kind")}
    out: list[Outcome] = []
    for line, row in rows:
        if not any(cell.strip() for cell in row):
            continue
        if len(out) >= MAX_ROWS:
            raise GpuvetError(f"more than {MAX_ROWS:,} events", where=where, fix="split the file by node or month.")
        if len(row) <= max(col.values()):
            raise GpuvetError(f"line {line} has {len(row)} cells, the header {len(names)}", where=f"{where}:{line}",
                              fix=_FIX)
        module, when, kind = (row[col[c]].strip() for c in ("module", "time", "kind"))
        if not module:
            raise GpuvetError(f"line {line} names no module", where=f"{where}:{line}", fix=_FIX)
        if kind.lower() not in KINDS:
            raise GpuvetError(f"line {line}: kind {_show(kind)} is not one of {', '.join(KINDS)}",
                              where=f"{where}:{line}", fix="use throttled (its first slowdown), repasted or replaced.")
        out.append(Outcome(module, _time(when, f"{where}:{line}"), kind.lower(), line, where))
    if not out:
        raise GpuvetError("the events file has a header but no events", where=where, fix=_FIX)
    return out


def _rows(text: str, where: str) -> Iterator[tuple[int, list[str]]]:
    """(line number, cells) of each CSV row, through the replay's own line reader (BOM, CR, the
    line bound). A quoted cell may run over lines (a spreadsheet's note column), but no row is
    longer than MAX_ROW_CHARS: the csv module's own limit (128 KiB a cell) was a traceback."""
    lines = bounds.text_lines(io.StringIO(text, newline=None), where, MAX_ROW_CHARS, fix=_FIX_LONG)
    reader = csv.reader(lines)
    try:
        for row in reader:
            if sum(map(len, row)) > MAX_ROW_CHARS:
                raise _too_long(f"{where}:{reader.line_num}")
            yield reader.line_num, row
    except csv.Error as exc:
        if "field larger than field limit" in str(exc):
            raise _too_long(f"{where}:{reader.line_num}") from None
        raise GpuvetError(f"line {reader.line_num} is not CSV the reader can take ({exc})",
                          where=f"{where}:{reader.line_num}", fix=_FIX) from None


def _too_long(where: str) -> GpuvetError:
    return GpuvetError(f"a row longer than {MAX_ROW_CHARS:,} characters (a quote opened and never closed runs "
                       "over the lines after it)", where=where, fix=_FIX_LONG)


def _read_text(path: Path, where: str) -> str:
    """The file's text by the one safe opener (gpuvet/files.py), refused plainly when missing,
    not a regular file, too large or not UTF-8; a FIFO is never waited on."""
    fix = "give the path of an events CSV file."
    rules = Input(not_file=", not a regular file", fix=fix, cannot="cannot read it", cannot_fix=fix,
                  max_bytes=MAX_BYTES,
                  too_big=lambda _, at: GpuvetError(f"larger than {MAX_BYTES // 1024 // 1024} MiB", where=at,
                                                    fix="split the file by node or month."))
    data = read_input(path, where, rules)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise GpuvetError(f"not UTF-8 text (byte {exc.start})", where=where, fix=_FIX) from None


def _time(text: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        pass
    else:
        if math.isfinite(value) and 0 <= value < UNIX_TIME_MAX:
            return value
        raise GpuvetError(f"time {_show(text)} is not a Unix time", where=where, fix="write e.g. 2026-01-13T02:29:00Z.")
    try:
        t = datetime.fromisoformat(text.replace("Z", "+00:00").replace("/", "-"))
    except ValueError:
        raise GpuvetError(f"time {_show(text)} is neither ISO 8601 nor Unix seconds", where=where,
                          fix="write e.g. 2026-01-13T02:29:00Z (no zone: UTC) or 1768271340.") from None
    if t.tzinfo is None:
        t = t.replace(tzinfo=UTC)
    return t.timestamp()


def _show(text: str) -> str:
    """Data from the file, quoted, control characters escaped, cut."""
    return repr(text[:80] + ("…" if len(text) > 80 else ""))


# --- the events against the telemetry -------------------------------------------------------
def check_outcomes(outcomes: Sequence[Outcome], rec: Recording, margin_s: float) -> None:
    """Refuses the events before anything is replayed when they cannot be scored against ``rec``:
    its times count from its start (no clock: an event's date has no place on them), or an event
    lies outside the telemetry's span by more than ``margin_s`` (the forecast horizon) either side
    (9999 or 1971 against three days of 2026 was scored 'missed', printed without its year)."""
    if not outcomes or not rec.samples:
        return
    first = outcomes[0]
    if rec.relative_time:
        raise GpuvetError(f"the telemetry has no clock: its times count from its start (a log without a timestamp "
                          f"column, dmon without -o DT, …; see the notes), so the {len(outcomes)} dated event(s) "
                          "cannot be placed on it", where=first.where or "--backtest",
                          fix=f"replay logs with recorded times ({GIVE['timed_log']}), or leave out --backtest.")
    lo = min(s.t for s in rec.samples)
    hi = max(s.t for s in rec.samples)
    outside = [o for o in outcomes if not lo - margin_s <= o.time <= hi + margin_s]
    if outside:
        o = outside[0]
        lines = ", ".join(str(x.line) for x in outside[1:6]) + (", …" if len(outside) > 6 else "")
        more = f"; so are {len(outside) - 1} other event(s) (line {lines})" if len(outside) > 1 else ""
        raise GpuvetError(f"the event at {_utc(o.time)} UTC is outside the telemetry's span, "
                          f"{_utc(lo)} → {_utc(hi)} UTC, by more than the horizon ({margin_s / HOUR:g} h) either "
                          f"side: it cannot be scored{more}", where=f"{o.where or '--backtest'}:{o.line}",
                          fix="check the event's date (ISO 8601, UTC without a zone, or Unix seconds), or replay the "
                              "telemetry that covers it.")


def _utc(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%d %H:%M")


# --- scoring --------------------------------------------------------------------------------
def score(warnings: dict[str, list[float]], outcomes: Sequence[Outcome], module_days: float, settings: ForecastSettings,
          lead_s: float, end: dict[str, float]) -> Score:
    """Match each module's warnings (times, in order) to what happened to it. ``end``: the last
    data time per module (a warning closer to it than ``CONFIRM_S`` with nothing after is open)."""
    out = Score(settings, module_days=module_days)
    by_module: dict[str, list[Outcome]] = defaultdict(list)
    for o in outcomes:
        by_module[o.module].append(o)
    for module in sorted(set(warnings) | set(by_module)):
        times = sorted(warnings.get(module, []))
        used: set[float] = set()
        start = -math.inf
        throttled = False
        for o in sorted(by_module.get(module, []), key=lambda o: o.time):
            before = [t for t in times if start < t <= o.time]
            used.update(before)
            if o.kind == "throttled":
                if not throttled:  # only the first slowdown of a life counts; later ones are its consequence
                    first = before[0] if before else None
                    result = "missed" if first is None else "warned" if o.time - first >= lead_s else "late"
                    out.verdicts.append(Verdict(module, o.kind, o.time, result, first))
                throttled = True
            else:
                out.verdicts.append(Verdict(module, o.kind, o.time, "warned before maintenance" if before else
                                            "maintenance without a warning", before[0] if before else None))
                start, throttled = o.time, False
        for t in times:
            if t in used:
                continue
            later = [o for o in by_module.get(module, []) if t < o.time <= t + CONFIRM_S]
            if later:
                continue
            (out.open if end.get(module, t) - t < CONFIRM_S else out.false_alarms).append((module, t))
    return out


def warnings_of(events: Iterable[Event]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = defaultdict(list)
    for e in events:
        if e.kind == "overheat_forecast" and e.module:
            out[e.module].append(e.time)
    return out


def rerun(forecaster: ThermalForecaster,
          sweep: Sequence[ForecastSettings]) -> dict[ForecastSettings, dict[str, list[float]]]:
    """The same node's windows through a fresh forecaster, judged by every setting of ``sweep``
    at each evaluation (``decide``, the forecaster's own rule), each with its own warned state:
    the history and the fits are shared, so a sweep costs one pass per step threshold and one
    fit per confidence level. Returns each setting's warning times per module."""
    assert forecaster.tap is not None
    out: dict[ForecastSettings, dict[str, list[float]]] = {s: defaultdict(list) for s in sweep}
    for step_min in sorted({s.step_min_c for s in sweep}):
        judged = [s for s in sweep if s.step_min_c == step_min]
        fc = ThermalForecaster(forecaster.slowdown_c, horizon_s=forecaster.horizon_s, window_s=forecaster.window_s,
                               history_s=forecaster.history_s, min_hours=forecaster.min_hours,
                               evaluate_every_s=forecaster.evaluate_every_s, min_util=forecaster.min_util,
                               max_power_cv=forecaster.max_power_cv, min_window_samples=forecaster.min_window_samples,
                               models=forecaster.models, settings=judged[0])
        warned: dict[tuple[ForecastSettings, str], bool] = defaultdict(bool)

        def judge(module: str, now: float, fc: ThermalForecaster = fc, judged: list[ForecastSettings] = judged,
                  warned: dict[tuple[ForecastSettings, str], bool] = warned) -> None:
            fits = {a: fc.forecast(module, now, a) for a in {s.alpha for s in judged}}
            for s in judged:
                f = fits[s.alpha]
                action = None if f is None else decide(f, warned[s, module], s, fc.horizon_s, now)
                if action == "raise":
                    warned[s, module] = True
                    out[s][module].append(now)
                elif action == "withdraw":
                    warned[s, module] = False

        fc.on_evaluate = judge
        for stats in forecaster.tap:
            for e in fc.observe_windows(stats):
                step = e.evidence.get("step_c_per_w", 0.0)
                if e.evidence.get("trend_reset") and isinstance(step, (int, float)) and step < 0 and e.module:
                    for s in judged:  # a step down (maintenance) takes a warning back
                        warned[s, e.module] = False
    return {s: dict(w) for s, w in out.items()}


def backtest(forecasters: Sequence[ThermalForecaster], events: Sequence[Event], outcomes: Sequence[Outcome],
             lead_s: float, sweep: Sequence[ForecastSettings] = SWEEP,
             replayed: Mapping[str, str] | None = None) -> Backtest:
    """Score the replay's own warnings, then each setting of ``sweep`` over the same windows.
    Every forecaster must have kept its windows (``tap``). ``replayed``: every module of the
    replay and its UUID, scored by the forecast or not (one without temperature or power is in
    the telemetry, but the forecast never saw it)."""
    known = {m for fc in forecasters for m in fc.uuids}  # modules with temperature and power: what is scored
    replayed = dict(replayed or {})
    uuids = {u: m for m, u in replayed.items() if u} | {u: m for fc in forecasters for m, u in fc.uuids.items() if u}
    mapped = [Outcome(uuids.get(o.module, o.module), o.time, o.kind, o.line, o.where) for o in outcomes]
    named = {o.module for o in mapped}
    unknown = sorted(m for m in named if m not in known and m not in replayed)
    unscored = sorted(m for m in named if m in replayed and m not in known)
    if outcomes and not named & known:
        raise _nothing_to_score(forecasters, len(named), unknown, unscored, known, replayed)
    mapped = [o for o in mapped if o.module in known]
    days = sum(len(stats) for fc in forecasters for stats in fc.tap or []) and \
        sum(fc.window_s * len(stats) for fc in forecasters for stats in fc.tap or []) / 86400.0
    end: dict[str, float] = {}
    for fc in forecasters:
        for stats in fc.tap or []:
            for m, w in stats.items():
                end[m] = w.t
    current = score(warnings_of(events), mapped, days, forecasters[0].settings if forecasters else ForecastSettings(),
                    lead_s, end)
    swept: dict[ForecastSettings, dict[str, list[float]]] = {s: {} for s in sweep}
    for fc in forecasters:
        for s, per_module in rerun(fc, sweep).items():
            swept[s].update(per_module)
    scores = [score(swept[s], mapped, days, s, lead_s, end) for s in sweep]
    scores.sort(key=lambda s: s.rank(), reverse=True)
    return Backtest(current, scores, lead_s, unknown, len(outcomes), unscored)


def _nothing_to_score(forecasters: Sequence[ThermalForecaster], named: int, unknown: list[str], unscored: list[str],
                      known: set[str], replayed: Mapping[str, str]) -> GpuvetError:
    """No module of the events file can be scored: say whether they are not in the telemetry or
    are there without the readings the forecast needs (and which), never 'nothing' for a name."""
    if not unscored:
        has = f"e.g. {_show(min({*replayed, *known}))}" if replayed or known else "no module at all"
        return GpuvetError(f"none of the {named} modules in the events file is in the telemetry (e.g. "
                           f"{_show(unknown[0])}; the telemetry has {has})", where="--backtest",
                           fix="name modules as gpuvet does (node/gpuN, the node named after the file or Hostname "
                               "label) or by UUID.")
    first = unscored[0]
    why = next((w for fc in forecasters if (w := fc.missing(first))), None) or "no temperature readings"
    others = f"; {len(unknown)} other(s) are not in the telemetry at all" if unknown else ""
    scored = (f"the telemetry has both for e.g. {_show(min(known))}" if known else
              "no module of this telemetry has both")
    return GpuvetError(f"none of the {named} modules in the events file can be scored: {_show(first)} is in the "
                       f"telemetry but has {why}" + (f", as have {len(unscored) - 1} other(s)" if len(unscored) > 1
                                                      else "")
                       + f"{others}. The forecast needs each module's temperature and power together ({scored})",
                       where="--backtest",
                       fix=f"replay telemetry that has them: {GIVE['thermal_log']}, or a dcgm-exporter dump with "
                           "DCGM_FI_DEV_GPU_TEMP and "
                           "DCGM_FI_DEV_POWER_USAGE.")
