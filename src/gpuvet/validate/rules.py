"""Rules: typed thresholds read from a YAML file — a field, an operator from a fixed set and a
threshold; never an evaluated string. The defaults ship in ``rules/default.yaml``."""

from __future__ import annotations

import fnmatch
import operator
from collections.abc import Callable, Sequence
from enum import StrEnum
from importlib import resources
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from gpuvet.checks.model import Check, Verdict, worse
from gpuvet.errors import GpuvetError
from gpuvet.files import Input, as_text, read_input
from gpuvet.knowledge import thresholds as knowledge_thresholds


class Op(StrEnum):
    LT = "lt"
    LE = "le"
    GT = "gt"
    GE = "ge"
    EQ = "eq"
    NE = "ne"


OPERATORS: dict[Op, Callable[[float, float], bool]] = {
    Op.LT: operator.lt, Op.LE: operator.le, Op.GT: operator.gt, Op.GE: operator.ge, Op.EQ: operator.eq,
    Op.NE: operator.ne,
}
Field_ = Literal["value", "pct_of_peak", "pct_of_expected", "pct_of_baseline", "cv"]


class Rule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)  # a NaN threshold never fires

    check: str = Field(description="glob on the check name, e.g. gemm_* or *", max_length=200)
    field: Field_
    op: Op
    threshold: float
    verdict: Literal["warn", "fail"]
    device: Literal["gpu", "cpu"] | None = None
    fix: str | None = None

    @field_validator("threshold", mode="before")
    @classmethod
    def _knowledge(cls, value: object) -> object:
        """``{knowledge: NAME}``: the figure of knowledge/faults.yaml's threshold NAME, so validate
        gates a fact by the same figure doctor judges it by (one fact, one threshold)."""
        if not isinstance(value, dict):
            return value
        name = value.get("knowledge")
        if set(value) != {"knowledge"} or not isinstance(name, str) or name not in knowledge_thresholds():
            known = ", ".join(sorted(knowledge_thresholds()))
            raise ValueError(f"a threshold is a number or {{knowledge: NAME}} with NAME one of {known}")
        return knowledge_thresholds()[name].value

    def applies_to(self, check: Check) -> bool:
        return fnmatch.fnmatchcase(check.name, self.check) and (self.device is None or self.device == check.device)

    def broken_by(self, check: Check) -> bool:
        value = getattr(check, self.field)
        return isinstance(value, (int, float)) and not isinstance(value, bool) and OPERATORS[self.op](value, self.threshold)

    def describe(self, check: Check) -> str:
        """The broken rule in words a person reads: "72.8 % of expected, below 85 %"."""
        value = getattr(check, self.field)
        word = _WORDS[self.op]
        if self.field.startswith("pct_of_"):
            what = self.field.removeprefix("pct_of_")
            return f"{value:.3g} % of {what}, {word} {self.threshold:g} %"
        if self.field == "cv":
            return f"spread (CV) {100 * value:.3g} %, {word} {100 * self.threshold:g} %"
        return f"{value:.3g}{' ' + check.unit if check.unit else ''}, {word} {self.threshold:g}"


_WORDS = {Op.LT: "below", Op.LE: "at most", Op.GT: "above", Op.GE: "at least", Op.EQ: "equal to", Op.NE: "not"}


MAX_RULES = 1000  # every check of a long run, a few rules each


class RuleSet(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: int = 1
    extends: Literal["default"] | None = None
    rules: list[Rule] = Field(max_length=MAX_RULES)

    def judge(self, check: Check) -> Check:
        """The check with the most severe verdict its rules give (skips stay skips)."""
        if check.verdict is Verdict.SKIP:
            return check
        verdict: Verdict = check.verdict
        broken: list[Rule] = []
        for rule in self.rules:
            if rule.applies_to(check) and rule.broken_by(check):
                verdict = worse(verdict, Verdict(rule.verdict))
                broken.append(rule)
        if not broken or verdict is check.verdict and check.reason:
            return check
        worst = [r for r in broken if r.verdict == verdict.value] or broken
        reason = "; ".join(r.describe(check) for r in worst)
        return check.but(verdict=verdict, reason=reason, fix=check.fix or worst[0].fix)

    def marginal(self, check: Check) -> bool:
        """Within its own spread of a threshold it is judged by: worth measuring again."""
        if check.cv is None:
            return False
        for rule in self.rules:
            if not rule.applies_to(check) or rule.field == "cv":
                continue
            value = getattr(check, rule.field)
            if isinstance(value, (int, float)) and abs(value - rule.threshold) <= abs(value) * check.cv:
                return True
        return False


def default_rules() -> RuleSet:
    text = resources.files("gpuvet.validate").joinpath("rules", "default.yaml").read_text(encoding="utf-8")
    return _parse(text, "the default rules")


def _parse(text: str, where: str) -> RuleSet:
    from gpuvet.node.yamlload import load_bounded

    try:
        data = load_bounded(text, where, lists={"rules": MAX_RULES})
    except yaml.YAMLError as exc:
        raise GpuvetError(f"not valid YAML: {exc}", where=where, fix="fix the syntax.") from None
    try:
        return RuleSet.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        allowed = ", ".join(o.value for o in Op)
        raise GpuvetError(f"{loc}: {first['msg']}", where=where,
                          fix=f"operators are {allowed}; fields are value, pct_of_peak, pct_of_expected, "
                              "pct_of_baseline, cv; verdicts warn or fail.") from None


def load_rules(path: str | Path | None) -> RuleSet:
    """The default rules, or a user's file (``extends: default`` adds to the defaults)."""
    if path is None:
        return default_rules()
    p = Path(path)
    if not p.is_file():
        raise GpuvetError(f"no rules file {p}", where="--rules", fix="give the path of a YAML rules file.")
    rules = _parse(_read_text(p), str(p))
    if rules.extends == "default":
        return RuleSet(rules=list(rules.rules) + list(default_rules().rules))
    return rules


def _read_text(path: Path) -> str:
    """The file as UTF-8 text by the one safe opener (gpuvet/files.py), or a clear error (a binary
    file, an unreadable one, a huge one, a FIFO or a device)."""
    from gpuvet.node.yamlload import MAX_FILE_BYTES

    fix = "give a YAML rules file (see docs/validate.md)."
    rules = Input(not_file=", not a regular file", fix=fix, cannot_fix="check the path and permissions.",
                  max_bytes=MAX_FILE_BYTES,
                  too_big=lambda _, where: GpuvetError(f"the file is larger than {MAX_FILE_BYTES:,} bytes",
                                                       where=where, fix=fix))
    try:
        return as_text(read_input(path, str(path), rules))
    except UnicodeDecodeError as exc:
        raise GpuvetError(f"not UTF-8 text (byte {exc.start} cannot be decoded): is this a binary file?",
                          where=str(path), fix=fix) from None


def apply_all(rules: RuleSet, checks: Sequence[Check]) -> list[Check]:
    return [rules.judge(c) for c in checks]
