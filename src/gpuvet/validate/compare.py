"""Two runs side by side: what changed in the environment, and each check's % change with
regressions marked."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import JsonValue

from gpuvet.checks.model import Check, Scalar, Verdict
from gpuvet.logbook.document import Environment
from gpuvet.validate.direction import lower_is_better

REGRESSION_PCT = 5.0


@dataclass(frozen=True)
class EnvChange:
    key: str
    a: JsonValue
    b: JsonValue


@dataclass(frozen=True)
class ResultChange:
    key: str
    unit: str | None
    a: Scalar
    b: Scalar
    change_pct: float | None  # positive: better
    verdict_a: str | None
    verdict_b: str | None
    regression: bool


def missing_checks(checks_a: Sequence[Check], checks_b: Sequence[Check]) -> tuple[list[str], list[str]]:
    """The check keys only run A has, and those only run B has."""
    a = {c.key for c in checks_a}
    b = {c.key for c in checks_b}
    return sorted(a - b), sorted(b - a)


def not_recorded(env_a: Environment, env_b: Environment) -> list[str]:
    """The module fields B has that no module of A recorded (A written before they existed, e.g. the
    firmware fields): not a change of every module, so compare leaves them out and says so once."""
    def fields(env: Environment) -> set[str]:
        return {k for m in env.modules for k in m.to_json() if k != "id"}

    return sorted(fields(env_b) - fields(env_a)) if env_a.modules else []


def compare(env_a: Environment, checks_a: Sequence[Check], env_b: Environment,
            checks_b: Sequence[Check], judge_missing: bool = True) -> tuple[list[EnvChange], list[ResultChange]]:
    """``judge_missing``: a check that B lacks is a regression (two complete runs of one kind);
    otherwise (an aborted run, a watch run) only the checks both runs have are compared."""
    fa, fb = env_a.flat(), env_b.flat()
    unrecorded = set(not_recorded(env_a, env_b))
    env = [EnvChange(k, fa.get(k), fb.get(k)) for k in sorted(set(fa) | set(fb))
           if fa.get(k) != fb.get(k) and k.rpartition(".")[2] not in unrecorded]
    a = {c.key: c for c in checks_a}
    b = {c.key: c for c in checks_b}
    keys = set(a) | set(b) if judge_missing else set(a) & set(b)
    return env, [_change(key, a.get(key), b.get(key)) for key in sorted(keys)]


def _change(key: str, ca: Check | None, cb: Check | None) -> ResultChange:
    """One check in both runs (or in one of them): its % change, and whether B regressed."""
    va, vb = ca.number if ca else None, cb.number if cb else None
    change = None
    if va and vb is not None:
        change = 100.0 * (vb - va) / abs(va)
        if lower_is_better(key.split("/")[1]):
            change = -change
    rank_a = ca.verdict.rank if ca else Verdict.PASS.rank
    rank_b = cb.verdict.rank if cb else Verdict.PASS.rank
    regression = rank_b > rank_a or (change is not None and change < -REGRESSION_PCT) or (ca is not None and cb is None)
    return ResultChange(key, (ca.unit if ca else None) or (cb.unit if cb else None), ca.value if ca else None,
                        cb.value if cb else None, change, ca.verdict.value if ca else None,
                        cb.verdict.value if cb else None, regression)
