"""A check: one judged figure or fact, with its verdict, expectation and evidence."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from gpuvet.logbook.document import Verdict as Verdict  # re-exported: the checks layer's verdict
from gpuvet.logbook.document import check_key

__all__ = ["Check", "Cited", "Evidence", "Json", "Layer", "Verdict", "overall", "worse"]

# what evidence holds: JSON-ready values (read-only views, so a dict of lists of str fits)
Json = str | int | float | bool | None | Sequence["Json"] | Mapping[str, "Json"]
Evidence = Mapping[str, Json]


@dataclass(frozen=True)
class Cited:
    """One reading a verdict rests on, so a "clear" or "ok" can be traced to what was read: the
    source (a captured file and its kind, a simulated node, NVML, the environment), the place in
    it (module, section, line), the field and its value as read. Doctor and health cite these."""

    source: str
    field: str
    value: str
    where: str | None = None

    def words(self) -> str:
        at = f" [{self.where}]" if self.where else ""
        return f"{self.source}{at}: {self.field} = {self.value}"


def worse(a: Verdict, b: Verdict) -> Verdict:
    """The more severe of two verdicts; a skip (nothing measured) stays a skip."""
    if Verdict.SKIP in (a, b):
        return Verdict.SKIP
    return a if a.rank >= b.rank else b


class Layer(StrEnum):
    INVENTORY = "inventory"
    SOFTWARE = "software"
    COMPUTE = "compute"
    HOST_LINK = "host_link"
    MODULE_LINK = "module_link"
    COLLECTIVE = "collective"
    MEMORY = "memory"
    MODEL = "model"
    NETWORK = "network"  # the NICs beyond the board: ports up at their design rate, GPUDirect RDMA


@dataclass(frozen=True)
class Check:
    layer: Layer
    name: str
    verdict: Verdict
    value: float | str | bool | None = None
    unit: str | None = None
    expected: float | str | bool | None = None
    module: str | None = None
    between: tuple[str, str] | None = None
    dtype: str | None = None
    pct_of_peak: float | None = None
    pct_of_expected: float | None = None
    pct_of_baseline: float | None = None
    cv: float | None = None
    reason: str | None = None  # always given for warn, fail and skip
    fix: str | None = None
    device: str = "gpu"  # "gpu" or "cpu": rules may differ
    evidence: Evidence = field(default_factory=dict)

    @property
    def key(self) -> str:
        """Identifies the same check across runs (for baselines and comparisons)."""
        return check_key(self.layer, self.name, self.module, self.between)


def overall(checks: Iterable[Check]) -> Verdict:
    """fail if any check fails, warn if any warns, else pass (skips do not count)."""
    verdicts = {c.verdict for c in checks}
    if Verdict.FAIL in verdicts:
        return Verdict.FAIL
    if Verdict.WARN in verdicts:
        return Verdict.WARN
    return Verdict.PASS
