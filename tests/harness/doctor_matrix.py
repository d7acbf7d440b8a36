"""The fault-injection matrix doctor is judged by: every simulated fault kind, alone, on
several modules and presets, and the cause, place and playbook doctor must name for it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Case:
    preset: str
    fault: dict[str, Any] | None  # None: a healthy node, no finding expected
    symptom: str | None
    cause: str | None
    module: str | None = None
    between: tuple[str, str] | None = None

    @property
    def name(self) -> str:
        if self.fault is None:
            return f"{self.preset}:healthy"
        where = self.fault.get("module") or "-".join(self.fault.get("between") or self.fault.get("modules") or ["node"])
        return f"{self.preset}:{self.fault['kind']}:{where}"


def _module_cases(preset: str, modules: list[str]) -> list[Case]:
    out = []
    for m in modules:
        out += [
            Case(preset, {"kind": "missing_module", "module": m}, "module-missing", "module_missing", m),
            Case(preset, {"kind": "module_lost", "module": m, "at": "10h"}, "module-missing", "module_fell_off_bus", m),
            Case(preset, {"kind": "module_added", "module": m, "at": "12h"}, "module-missing", "module_hot_added", m),
            Case(preset, {"kind": "mem_clock_flapping", "module": m}, "results-fluctuate", "memory_clock_flapping", m),
            Case(preset, {"kind": "power_cap_low", "module": m, "watts": 300}, "compute-below-peak", "power_cap_low", m),
            Case(preset, {"kind": "silent_corruption", "module": m}, "compute-errors", "silent_data_corruption", m),
            Case(preset, {"kind": "thermal_creep", "module": m, "c_per_watt_per_day": 0.002}, "overheating",
                 "thermal_interface_ageing", m),
            Case(preset, {"kind": "ecc_rising", "module": m, "at": "5h"}, "compute-errors", "ecc_errors_rising", m),
            Case(preset, {"kind": "xid", "module": m, "code": 48, "at": "3h"}, "compute-errors", "xid", m),
        ]
    return out


def cases(quick: bool = False) -> list[Case]:
    """The whole matrix, or (``quick``) one case per fault kind plus healthy nodes."""
    out = [Case(p, None, None, None) for p in ("hgx-h200-8", "mesh-4", "pcie-8", "grouped-16")]
    out += _module_cases("hgx-h200-8", ["gpu1"] if quick else ["gpu0", "gpu5"])
    if not quick:
        out += _module_cases("mesh-4", ["gpu2"]) + _module_cases("pcie-8", ["gpu6"])
    links = [("hgx-h200-8", ("gpu2", "nvswitch0")), ("mesh-4", ("gpu0", "gpu3")), ("pcie-8", ("gpu4", "pcisw2"))]
    for preset, between in links[:1] if quick else links:
        out.append(Case(preset, {"kind": "link_down", "between": list(between)}, "interconnect-slow", "link_down",
                        between=between))
        out.append(Case(preset, {"kind": "link_degraded", "between": list(between), "factor": 0.5}, "interconnect-slow",
                        "link_degraded", between=between))
    swaps = [("pcie-8", ("gpu0", "gpu7")), ("grouped-16", ("gpu1", "gpu12"))]
    for preset, pair in swaps[:1] if quick else swaps:
        out.append(Case(preset, {"kind": "wiring_swap", "modules": list(pair)}, "interconnect-slow", "wiring_swapped",
                        between=pair))
    for preset in ["hgx-h200-8"] if quick else ["hgx-h200-8", "mesh-4"]:
        out.append(Case(preset, {"kind": "p2p_disabled"}, "interconnect-slow", "p2p_disabled"))
    return out


def suite_cases() -> list[Case]:
    """What the test suite runs: one case per fault kind and two healthy nodes (the cheap ones);
    ``cases()`` in benchmarks/doctor_matrix.py runs the rest."""
    quick = cases(quick=True)
    return [c for c in quick if c.fault is not None or c.preset in ("mesh-4", "pcie-8")]
