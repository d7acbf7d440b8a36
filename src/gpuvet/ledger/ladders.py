"""Escalation ladders (ladders.yaml, or a site's own file): for each fault, the step for its
1st, 2nd, 3rd… occurrence on one module within a window, and the step a module is on now."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cache
from importlib import resources
from pathlib import Path

import yaml

from gpuvet.errors import GpuvetError
from gpuvet.files import Input, as_text, read_input
from gpuvet.knowledge import xid
from gpuvet.knowledge.package_yaml import load_package_yaml
from gpuvet.ledger.model import Occurrence, Step
from gpuvet.quantities import parse_seconds

MAX_FILE_BYTES = 1 << 20
WINDOW_RANGE = (60.0, 3 * 365 * 86400.0)


@dataclass(frozen=True)
class Ladder:
    fault: str
    name: str
    window_s: float
    steps: tuple[str, ...]
    category: str

    def step_for(self, nth: int) -> str:
        return self.steps[min(nth, len(self.steps)) - 1]


@dataclass(frozen=True)
class Ladders:
    steps: tuple[str, ...]  # least to most severe
    faults: dict[str, Ladder]
    default: Ladder
    where: str
    same_as: dict[str, str] = field(default_factory=dict)  # another command's name of a fault -> its key

    def key(self, fault: str) -> str:
        """The ladder's key of a fault named by doctor or validate (``same_as``), else the name itself:
        one fault counts once on a module whichever command saw it."""
        return self.same_as.get(fault, fault)

    def ladder(self, fault: str) -> Ladder:
        """The fault's own ladder; an Xid without one takes ``xid:critical`` where the knowledge base
        drains on it (a drain must not start at watch), else ``xid:*``; anything else the default."""
        fault = self.key(fault)
        if fault in self.faults:
            return self.faults[fault]
        if fault.startswith("xid:"):
            code = fault[4:]
            if code.isdigit() and xid(int(code)).drains and "xid:critical" in self.faults:
                return self.faults["xid:critical"]
            if "xid:*" in self.faults:
                return self.faults["xid:*"]
        return self.default

    def rank(self, step: str) -> int:
        return self.steps.index(step)


def load_ladders(path: str | Path | None = None) -> Ladders:
    """gpuvet's ladders, or the site's file (--ladders): bad content is a GpuvetError naming it."""
    if path is None:
        return _builtin()
    where = str(path)
    fix = "give a readable YAML file (its form: docs/ledger.md)."
    rules = Input(not_file=", not a regular file", fix=fix, cannot=None, max_bytes=MAX_FILE_BYTES,
                  too_big=lambda _, at: GpuvetError("the ladders file is over 1 MiB", where=at,
                                                    fix="a ladders file is a few lines."))
    try:
        raw = read_input(path, where, rules)
    except OSError as exc:
        raise GpuvetError(f"cannot read the ladders file: {exc.strerror or exc}", where="--ladders",
                          fix=fix) from None
    return parse_ladders(as_text(raw, errors="replace", newlines=False), where)


@cache
def _builtin() -> Ladders:
    text = resources.files("gpuvet.ledger").joinpath("ladders.yaml").read_text(encoding="utf-8")
    return parse_ladders(text, "gpuvet's ladders.yaml", trusted=True)


def parse_ladders(text: str, where: str, trusted: bool = False) -> Ladders:
    try:
        data = load_package_yaml(text) if trusted else yaml.safe_load(text)  # trusted: the package's own
    except yaml.YAMLError as exc:
        raise GpuvetError(f"not YAML: {str(exc).splitlines()[0]}", where=where,
                          fix="fix the YAML (its form: docs/ledger.md).") from None
    if not isinstance(data, dict) or not isinstance(data.get("faults"), dict):
        raise GpuvetError("a ladders file is a mapping with `faults:` (and optionally `steps:` and `default:`)",
                          where=where, fix="start from src/gpuvet/ledger/ladders.yaml (docs/ledger.md).")
    steps = _steps(data.get("steps", list(_builtin().steps) if where != "gpuvet's ladders.yaml" else None), where)
    faults = {str(k): _ladder(str(k), v, steps, f"{where}: faults.{k}") for k, v in data["faults"].items()}
    default_raw = data.get("default", {"name": "a finding without a ladder", "window": "30d", "ladder": ["watch"]})
    builtin = where == "gpuvet's ladders.yaml"
    same_as = _same_as(data["same_as"], faults, where) if "same_as" in data else {} if builtin else _builtin().same_as
    return Ladders(steps, faults, _ladder("*", default_raw, steps, f"{where}: default"), where, same_as)


def _same_as(raw: object, faults: dict[str, Ladder], where: str) -> dict[str, str]:
    """``same_as: {module_missing: presence}``: each name maps to a fault the file has a ladder for."""
    if not isinstance(raw, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in raw.items()):
        raise GpuvetError("`same_as` must map names to fault keys", where=f"{where}: same_as",
                          fix="e.g. same_as: {module_missing: presence, nvlink_down: link_down}")
    unknown = sorted(v for v in raw.values() if v not in faults and not v.startswith("xid:"))
    if unknown:
        raise GpuvetError(f"`same_as` names fault(s) without a ladder: {', '.join(unknown)}", where=f"{where}: same_as",
                          fix="map each name to a key listed under `faults:`.")
    return dict(raw)


def _steps(raw: object, where: str) -> tuple[str, ...]:
    if not isinstance(raw, list) or not raw or not all(isinstance(s, str) and s for s in raw):
        raise GpuvetError("`steps` must be a list of step names, least severe first", where=f"{where}: steps",
                          fix="e.g. steps: [watch, restart_job, reset_module, reboot_node, drain, rma]")
    return tuple(raw)


def _ladder(fault: str, raw: object, steps: tuple[str, ...], where: str) -> Ladder:
    if not isinstance(raw, dict):
        raise GpuvetError("each fault is a mapping {name, window, ladder}", where=where,
                          fix="e.g. {name: Xid 79, window: 30d, ladder: [reboot_node, rma]}")
    ladder = raw.get("ladder")
    if not isinstance(ladder, list) or not ladder:
        raise GpuvetError("`ladder` must be a non-empty list of steps", where=where,
                          fix="list the step for the 1st, 2nd… occurrence, e.g. [reboot_node, rma].")
    unknown = [s for s in ladder if s not in steps]
    if unknown:
        raise GpuvetError(f"unknown step(s) {unknown}", where=where, fix=f"use the steps: {', '.join(steps)}.")
    window = parse_seconds(str(raw.get("window", "30d")), f"{where}.window", *WINDOW_RANGE)
    return Ladder(fault, str(raw.get("name", fault)), window, tuple(str(s) for s in ladder),
                  str(raw.get("category", "Unattributed")))


def ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def window_words(seconds: float) -> str:
    days = seconds / 86400
    return f"{days:g} days" if days >= 1 else f"{seconds / 3600:g} hours"


def current_step(occurrences: list[Occurrence], ladders: Ladders, now_utc: str) -> Step | None:
    """The most severe step any of the module's faults stands on now (None: nothing within its
    window). Each fault counts its own occurrences within its own window ending now."""
    best: Step | None = None
    now = datetime.fromisoformat(now_utc)
    for fault in sorted({o.fault for o in occurrences}):
        ladder = ladders.ladder(fault)
        recent = [o for o in occurrences if o.fault == fault
                  and datetime.fromisoformat(o.last_utc) >= now - timedelta(seconds=ladder.window_s)]
        if not recent:
            continue
        step = _step(fault, ladder, recent, ladders)
        if best is None or step.rank > best.rank or (step.rank == best.rank and step.nth > best.nth):
            best = step
    return best


def _step(fault: str, ladder: Ladder, recent: list[Occurrence], ladders: Ladders) -> Step:
    nth = len(recent)
    first = recent[0]
    where = f"{first.node}/{first.slot}" if first.slot else first.node
    name = ladder.name
    if nth == 1:
        why = f"1st {name} in {window_words(ladder.window_s)}, on {where} on {first.first_utc[:10]}"
    else:
        why = f"{ordinal(nth)} {name} in {window_words(ladder.window_s)}; the first on {where} on {first.first_utc[:10]}"
    step = ladder.step_for(nth)
    return Step(step, ladders.rank(step), fault, nth, ladder.window_s, why)
