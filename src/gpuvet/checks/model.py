"""A check: one judged figure or fact, with its verdict, expectation and evidence — the one
record every output uses (memory, the logbook, --json, HTML, JUnit, the terminal; issue 42).
It is a pydantic model so the logbook reads kept rows into the same type the jobs make: reading
is lenient where the past was (older rows lack fields: they default) and keeps what it does not
know (``extra="allow"``); ``to_json`` prints exactly the keys a record was made from.

This module imports nothing of gpuvet: the logbook and the report read it from below."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated, TypedDict, Unpack, overload

from pydantic import BaseModel, ConfigDict, Field, JsonValue, WithJsonSchema

__all__ = ["Check", "Cited", "Evidence", "EvidenceMap", "Json", "Layer", "ModuleTelemetry", "Record", "Stats",
           "Verdict", "check_key", "overall", "worse"]

# what a job's evidence holds: JSON-ready values (read-only views, so a dict of lists of str fits)
Json = str | int | float | bool | None | Sequence["Json"] | Mapping[str, "Json"]
EvidenceMap = Mapping[str, Json]  # a finding's or an event's evidence (doctor, watch)
Number = int | float  # kept as written: an int stays an int when printed again
Scalar = bool | int | float | str | None
JsonObject = dict[str, JsonValue]


class Verdict(StrEnum):
    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    SKIP = "skip"

    @property
    def rank(self) -> int:
        """How bad: pass and skip 0, warn 1, fail 2 (a skip measured nothing, so it is not worse)."""
        return _RANK[self]


_RANK = {Verdict.PASS: 0, Verdict.SKIP: 0, Verdict.WARN: 1, Verdict.FAIL: 2}


def worse(a: Verdict, b: Verdict) -> Verdict:
    """The more severe of two verdicts; a skip (nothing measured) stays a skip."""
    if Verdict.SKIP in (a, b):
        return Verdict.SKIP
    return a if a.rank >= b.rank else b


def check_key(layer: str, name: str, module: str | None, between: tuple[str, str] | None) -> str:
    """``layer/name/where``: the same check across runs (baselines, comparisons)."""
    where = module or ("-".join(between) if between else "node")
    return f"{layer}/{name}/{where}"


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


class Record(BaseModel):
    """A kept record: frozen, lenient about keys it does not know, printed as it was made."""

    model_config = ConfigDict(frozen=True, extra="allow")

    def to_json(self) -> JsonObject:
        """The keys it was made from, no more (defaults are not printed)."""
        return self.model_dump(mode="json", exclude_unset=True)


class Stats(Record):
    """A benchmark's repeats: count, median, interquartile range, extremes."""

    n: int | None = None
    median: Number | None = None
    iqr: Number | None = None
    min: Number | None = None
    max: Number | None = None


class ModuleTelemetry(Record):
    """What one module did while a benchmark ran (None: not readable there)."""

    samples: int = 0
    core_clock_mhz_median: Number | None = None
    core_clock_mhz_min: Number | None = None
    core_clock_mhz_max: Number | None = None
    mem_clock_mhz_median: Number | None = None
    mem_clock_mhz_min: Number | None = None
    mem_clock_mhz_max: Number | None = None
    power_w_median: Number | None = None
    power_w_max: Number | None = None
    power_limit_w: Number | None = None
    temp_c_max: Number | None = None
    throttle_reasons: list[str] = Field(default_factory=list)
    simulated: bool = False


class Evidence(Record):
    """Why a check's figure is what it is. The fields readers use are typed; jobs may add more."""

    stats: Stats | None = None
    telemetry: dict[str, ModuleTelemetry] = Field(default_factory=dict)
    throttle_reasons: list[str] = Field(default_factory=list)
    size_bytes: int | None = None
    sweep: list[tuple[Number, Number | None]] = Field(default_factory=list)  # (message bytes, busbw GB/s)
    algorithm: str | None = None
    ranks: int | None = None
    algorithm_expected: str | None = None
    models: list[str] = Field(default_factory=list)
    baseline: Number | None = None

    def facts(self) -> dict[str, object]:
        """The keys it was made from, as Python values (nested records as dicts)."""
        return self.model_dump(exclude_unset=True)

    def __getitem__(self, key: str) -> object:
        """A key it was made with, as the jobs' evidence mapping read it (KeyError if not given)."""
        return self.facts()[key]

    def __contains__(self, key: object) -> bool:
        return key in self.model_fields_set or key in (self.model_extra or {})

    def get(self, key: str, default: object = None) -> object:
        return self.facts().get(key, default)

    def plus(self, extra: Mapping[str, Json]) -> Evidence:
        """This evidence with ``extra``'s keys added (or replaced)."""
        return Evidence.model_validate({**self.facts(), **extra})


class CheckOptions(TypedDict, total=False):
    """The keywords a check is made with beside its layer, name and verdict (the constructor's
    view of ``Check``'s optional fields, so a mistyped keyword is a type error, not an extra key)."""

    value: Scalar
    unit: str | None
    expected: Scalar
    module: str | None
    between: tuple[str, str] | None
    dtype: str | None
    pct_of_peak: Number | None
    pct_of_expected: Number | None
    pct_of_baseline: Number | None
    cv: Number | None
    reason: str | None
    fix: str | None
    device: str
    evidence: Evidence | EvidenceMap


class Check(Record):
    """One judged figure or fact (``layer`` is a validate layer, or ``fleet`` for a fleet run's)."""

    # a Layer as the jobs make it; text as kept (a fleet run's "fleet", a layer newer than this gpuvet)
    layer: Annotated[Layer | str, WithJsonSchema({"type": "string"})]
    name: str
    verdict: Verdict
    value: Scalar = None
    unit: str | None = None
    expected: Scalar = None
    module: str | None = None
    between: tuple[str, str] | None = None
    dtype: str | None = None
    pct_of_peak: Number | None = None
    pct_of_expected: Number | None = None
    pct_of_baseline: Number | None = None
    cv: Number | None = None
    reason: str | None = None  # always given for warn, fail and skip
    fix: str | None = None
    device: str = "gpu"  # "gpu" or "cpu": rules may differ
    evidence: Evidence = Field(default_factory=Evidence)

    @overload
    def __init__(self, layer: Layer | str, name: str, verdict: Verdict, /, **options: Unpack[CheckOptions]) -> None: ...

    @overload
    def __init__(self, *, layer: Layer | str, name: str, verdict: Verdict | str,
                 **options: Unpack[CheckOptions]) -> None: ...

    def __init__(self, layer: Layer | str | None = None, name: str | None = None, verdict: Verdict | str | None = None,
                 **options: object) -> None:
        """Layer, name and verdict by position as the jobs write them, or by name: only the keys
        given count as set (a missing one is pydantic's error)."""
        given = {k: v for k, v in (("layer", layer), ("name", name), ("verdict", verdict)) if v is not None}
        BaseModel.__init__(self, **given, **options)

    # This only maps positions to names, so pydantic may build the checks of a document it reads
    # without calling it (its marker for BaseModel's own __init__): a run reads back 3x faster.
    # Were the marker ignored, reading stays right (the keyword form above), only slower.
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]

    def but(self, **changes: object) -> Check:
        """A copy with ``changes`` (validated: evidence given as a mapping becomes Evidence)."""
        if isinstance(changes.get("evidence"), Mapping):
            changes["evidence"] = Evidence.model_validate(changes["evidence"])
        return self.model_copy(update=changes)

    def with_evidence(self, **extra: Json) -> Check:
        """A copy whose evidence has ``extra``'s keys added."""
        return self.model_copy(update={"evidence": self.evidence.plus(extra)})

    @property
    def key(self) -> str:
        """Identifies the same check across runs (for baselines and comparisons)."""
        return check_key(self.layer, self.name, self.module, self.between)

    @property
    def where(self) -> str:
        """The module, or the pair of modules (a → b), or empty for the whole node."""
        return " → ".join(self.between) if self.between else (self.module or "")

    @property
    def number(self) -> float | None:
        """The value when it is a plain number (not a flag, not text)."""
        v = self.value
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def overall(checks: Iterable[Check]) -> Verdict:
    """fail if any check fails, warn if any warns, else pass (skips do not count)."""
    verdicts = {c.verdict for c in checks}
    if Verdict.FAIL in verdicts:
        return Verdict.FAIL
    if Verdict.WARN in verdicts:
        return Verdict.WARN
    return Verdict.PASS
