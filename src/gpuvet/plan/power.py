"""Splitting a node's power budget among modules by how busy they are: busy modules get more,
idle ones keep a floor. Speed under a cap is the simulated node's power model
(``gpuvet.node.power_model``: clock share f where P_static + (TDP − P_static)·f³ = cap; an
assumption, stated there), not a second law. Advice only: nothing is applied to any device."""

from __future__ import annotations

from dataclasses import dataclass

from gpuvet.node.memory import PlanError
from gpuvet.node.power_model import PowerModel


@dataclass(frozen=True)
class PowerSplit:
    caps_w: list[float]
    throughput_equal: float  # work per second with the budget split evenly (sum of module speeds)
    throughput_split: float
    utilisation_equal: float  # share of the budget doing useful work
    utilisation_split: float


def _speed(cap: float, tdp: float) -> float:
    """Throughput share of compute-bound work under ``cap`` (it was √(cap/TDP), which had no source
    and disagreed with the simulated node's own law)."""
    return PowerModel(tdp).speed(cap)


def split_power(budget_w: float, loads: list[float], tdp_w: float, floor_w: float = 100.0) -> PowerSplit:
    if budget_w <= 0:
        raise PlanError("--budget", f"{budget_w:g} W is not a positive budget", "e.g. --budget 4000")
    if not loads or any(not 0 <= x <= 1 for x in loads):
        raise PlanError("--loads", "loads are shares of time busy, each between 0 and 1", "e.g. --loads 1,1,0.2,0")
    if not any(loads):
        raise PlanError("--loads", "every module is idle: there is no work to split the budget for",
                        "give at least one load above 0")
    n = len(loads)
    if budget_w < floor_w * n:
        raise PlanError("--budget", f"{budget_w:g} W is under the floor of {n} modules × {floor_w:g} W = "
                        f"{floor_w * n:g} W", f"give --budget {floor_w * n:g} or more, or lower --floor")
    equal = [min(budget_w / n, tdp_w)] * n
    caps = [floor_w] * n
    left = budget_w - floor_w * n
    weights = list(loads)
    while left > 1e-6 and sum(weights) > 0:
        total = sum(weights)
        spent = 0.0
        for i, w in enumerate(weights):
            if w <= 0:
                continue
            give = min(left * w / total, tdp_w - caps[i])
            caps[i] += give
            spent += give
            if caps[i] >= tdp_w - 1e-9:
                weights[i] = 0.0
        left -= spent
        if spent < 1e-9:
            break

    def work(cs: list[float]) -> float:
        return sum(load * _speed(c, tdp_w) for load, c in zip(loads, cs, strict=True))

    def used(cs: list[float]) -> float:
        return sum(load * c for load, c in zip(loads, cs, strict=True)) / budget_w

    return PowerSplit(caps, work(equal), work(caps), used(equal), used(caps))
