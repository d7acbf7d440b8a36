"""Two runs side by side: what changed in the environment, and each check's % change with
regressions marked."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpuvet.validate.baseline import check_key, lower_is_better

REGRESSION_PCT = 5.0
_SEVERITY = {"pass": 0, "skip": 0, "warn": 1, "fail": 2}


@dataclass(frozen=True)
class EnvChange:
    key: str
    a: Any
    b: Any


@dataclass(frozen=True)
class ResultChange:
    key: str
    unit: str | None
    a: Any
    b: Any
    change_pct: float | None  # positive: better
    verdict_a: str | None
    verdict_b: str | None
    regression: bool


def _flatten(env: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in env.items() if k not in ("modules", "time_utc")}
    for m in env.get("modules", []):
        for k, v in m.items():
            if k != "id":
                out[f"{m.get('id')}.{k}"] = v
    return out


def missing_checks(checks_a: list[dict[str, Any]], checks_b: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """The check keys only run A has, and those only run B has."""
    a = {check_key(c) for c in checks_a}
    b = {check_key(c) for c in checks_b}
    return sorted(a - b), sorted(b - a)


def compare(env_a: dict[str, Any], checks_a: list[dict[str, Any]], env_b: dict[str, Any],
            checks_b: list[dict[str, Any]], judge_missing: bool = True) -> tuple[list[EnvChange], list[ResultChange]]:
    """``judge_missing``: a check that B lacks is a regression (two complete runs of one kind);
    otherwise (an aborted run, a watch run) only the checks both runs have are compared."""
    fa, fb = _flatten(env_a), _flatten(env_b)
    env = [EnvChange(k, fa.get(k), fb.get(k)) for k in sorted(set(fa) | set(fb)) if fa.get(k) != fb.get(k)]
    a = {check_key(c): c for c in checks_a}
    b = {check_key(c): c for c in checks_b}
    results = []
    for key in sorted(set(a) | set(b) if judge_missing else set(a) & set(b)):
        ca, cb = a.get(key, {}), b.get(key, {})
        va, vb = ca.get("value"), cb.get("value")
        change = None
        numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (va, vb))
        if numeric and va:
            change = 100.0 * (vb - va) / abs(va)
            if lower_is_better(key.split("/")[1]):
                change = -change
        worse_verdict = _SEVERITY.get(cb.get("verdict", "pass"), 0) > _SEVERITY.get(ca.get("verdict", "pass"), 0)
        regression = worse_verdict or (change is not None and change < -REGRESSION_PCT) or (bool(ca) and not cb)
        results.append(ResultChange(key, ca.get("unit") or cb.get("unit"), va, vb, change, ca.get("verdict"),
                                    cb.get("verdict"), regression))
    return env, results
