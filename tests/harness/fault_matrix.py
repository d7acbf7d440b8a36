"""The fault matrix validate is judged by: every fault kind that changes what a module or link can
do, on each preset, validated at the default level WITHOUT --expect or --baseline. A case is
caught when a FAIL or WARN names its module or link; a healthy preset must pass with no WARN
from the peer checks. Run by benchmarks/validate_matrix.py (all) and the tests (a subset)."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

import yaml

from gpuvet.checks.model import Check, Verdict

PRESETS = ("hgx-h200-8", "mesh-4", "pcie-8", "grouped-16", "nvl72", "mi300x-8")
# the link each preset's link faults hit: gpu1's own fabric link, or its PCIe link
LINKS = {"hgx-h200-8": ("gpu1", "nvswitch0"), "mesh-4": ("gpu1", "gpu2"), "pcie-8": ("gpu1", "pcisw0"),
         "grouped-16": ("gpu1", "gpu9"), "nvl72": ("gpu1", "nvswitch0"), "mi300x-8": ("gpu1", "gpu2")}


class Fault(TypedDict, total=False):
    """A fault as a spec's ``faults:`` entry writes it."""

    kind: str
    module: str
    between: list[str]
    factor: float
    watts: int


@dataclass(frozen=True)
class Case:
    preset: str
    fault: Fault | None

    @property
    def name(self) -> str:
        if self.fault is None:
            return f"{self.preset}:healthy"
        where = self.fault.get("module") or "-".join(self.fault.get("between") or ["node"])
        return f"{self.preset}:{self.fault['kind']}:{where}"

    @property
    def place(self) -> set[str]:
        f = self.fault or {}
        return {f["module"]} if "module" in f else set(f.get("between") or ())


def cases(presets: tuple[str, ...] = PRESETS) -> list[Case]:
    out = []
    for p in presets:
        link = list(LINKS[p])
        out += [Case(p, None),
                Case(p, {"kind": "link_degraded", "between": link, "factor": 0.33}),
                Case(p, {"kind": "link_down", "between": link}),
                Case(p, {"kind": "power_cap_low", "module": "gpu1", "watts": 300}),
                Case(p, {"kind": "mem_clock_flapping", "module": "gpu1"}),
                Case(p, {"kind": "silent_corruption", "module": "gpu1"}),
                Case(p, {"kind": "p2p_disabled"}),
                Case(p, {"kind": "missing_module", "module": "gpu1"})]
    return out


def spec_file(case: Case, folder: Path) -> str:
    path = folder / f"{case.name.replace(':', '_')}.yaml"
    path.write_text(yaml.safe_dump({"base": case.preset, "faults": [case.fault] if case.fault else []}), encoding="utf-8")
    return str(path)


def caught(case: Case, checks: list[Check]) -> bool:
    """Healthy: nothing failed and the peer checks are quiet. Faulty: a FAIL/WARN names the place
    (a node-wide fault: any FAIL on the module links)."""
    bad = [c for c in checks if c.verdict in (Verdict.FAIL, Verdict.WARN)]
    if case.fault is None:
        return not [c for c in bad if c.verdict is Verdict.FAIL or c.name.startswith("peers_")]
    if not case.place:
        return any(c.verdict is Verdict.FAIL and c.name.startswith(("p2p", "peers_p2p")) for c in bad)
    return any(case.place & ({c.module} | set(c.between or ())) for c in bad)


def run_case(case: Case) -> tuple[bool, list[Check]]:
    from gpuvet.backends.select import open_backend
    from gpuvet.validate.run import Validator

    with tempfile.TemporaryDirectory() as folder:
        backend = open_backend(sim=spec_file(case, Path(folder)))
        checks = Validator(backend).run().checks
    return caught(case, checks), checks
