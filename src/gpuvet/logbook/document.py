"""The run document: one typed, versioned record of a run (its environment, checks and their
results, events), made by the jobs, kept and returned by the logbook, and read by report,
compare, baseline, fleet and plan. Its JSON Schema is docs/schema/run-document.schema.json
(``write_schema``).

Reading is lenient where the past was (older rows lack fields: they default) and keeps what
it does not know (newer or job-specific keys stay, ``extra="allow"``); writing back prints
exactly the keys that were there (``to_json``), so a kept run prints as it was printed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from enum import StrEnum
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from gpuvet.errors import GpuvetError

DOCUMENT_VERSION = 1  # the ``schema_version`` a run document carries (validate --json's own)
SCHEMA_FILE = "run-document.schema.json"

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


def check_key(layer: str, name: str, module: str | None, between: tuple[str, str] | None) -> str:
    """``layer/name/where``: the same check across runs (baselines, comparisons)."""
    where = module or ("-".join(between) if between else "node")
    return f"{layer}/{name}/{where}"


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="allow")

    def to_json(self) -> JsonObject:
        """The keys it was made from, no more (defaults are not printed)."""
        return self.model_dump(mode="json", exclude_unset=True)


class Stats(_Record):
    """A benchmark's repeats: count, median, interquartile range, extremes."""

    n: int | None = None
    median: Number | None = None
    iqr: Number | None = None
    min: Number | None = None
    max: Number | None = None


class ModuleTelemetry(_Record):
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


class Evidence(_Record):
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


class CheckRecord(_Record):
    """One judged figure or fact (``layer`` is a validate layer, or ``fleet`` for a fleet run's)."""

    layer: str
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
    reason: str | None = None
    fix: str | None = None
    device: str = "gpu"
    evidence: Evidence = Field(default_factory=Evidence)

    @property
    def key(self) -> str:
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


class ModuleEnvironment(_Record):
    """One module as the run found it."""

    id: str | None = None
    model: str | None = None
    uuid: str | None = None
    bus_id: str | None = None
    power_limit_w: Number | None = None
    ecc: bool | None = None
    sm_clock_mhz: Number | None = None
    mem_clock_mhz: Number | None = None
    pcie: str | None = None


class Environment(_Record):
    """Where and with what a run ran (the logbook's envelope). Runs of other kinds (watch, fleet)
    keep their own keys beside these."""

    tool: str | None = None
    tool_version: str | None = None
    schema_version: int | None = None  # the logbook's schema when the run was written
    json_schema_version: int | None = None  # the run document's
    host: str | None = None
    time_utc: str | None = None
    backend: str | None = None
    simulated: bool | None = None
    node: str | None = None
    node_type: str | None = None
    level: str | None = None
    topology_fingerprint: str | None = None
    driver_version: str | None = None
    cuda_driver_version: str | None = None
    torch_version: str | None = None
    cuda_version: str | None = None
    nccl_version: str | None = None
    modules: list[ModuleEnvironment] = Field(default_factory=list)
    judged_against: str | None = None  # the design the run was judged against

    def flat(self) -> dict[str, JsonValue]:
        """Every key with its value, each module's as ``<id>.<key>`` (time left out: it always differs)."""
        data = self.to_json()
        out = {k: v for k, v in data.items() if k not in ("modules", "time_utc")}
        for m in self.modules:
            for k, v in m.to_json().items():
                if k != "id":
                    out[f"{m.id}.{k}"] = v
        return out


class EventRecord(_Record):
    """Something that happened during a run, in the order it happened."""

    time_utc: str
    kind: str
    message: str


class RootRecord(_Record):
    """A fault that explains checks (validate's root causes, issue 42): the same fields everywhere."""

    key: str
    kind: str
    severity: str
    subject: str
    title: str
    explains: list[str] = Field(default_factory=list)


class RunDocument(_Record):
    """A run: what `validate --json` prints, what the logbook keeps and `log show --json` prints."""

    schema_version: int = DOCUMENT_VERSION
    run_id: str | None = None
    simulated: bool = False
    verdict: Verdict | None = None  # None while running, or when it ended before a verdict
    status: Literal["running", "complete", "aborted"] | None = None  # None: not kept (validate --no-log)
    level: str | None = None
    environment: Environment = Field(default_factory=Environment)
    checks: list[CheckRecord] = Field(default_factory=list)
    events: list[EventRecord] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    roots: list[RootRecord] = Field(default_factory=list)  # the faults that explain the failed checks

    def counts(self) -> dict[Verdict, int]:
        """Checks per verdict, every verdict listed."""
        return {v: sum(c.verdict is v for c in self.checks) for v in Verdict}


def as_document(doc: RunDocument | Mapping[str, object], where: str = "run document") -> RunDocument:
    """A run document from its JSON (a validate --json file), or itself. Raises GpuvetError
    naming the first field that is not as the schema says."""
    if isinstance(doc, RunDocument):
        return doc
    try:
        return RunDocument.model_validate(doc)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "(the document)"
        raise GpuvetError(f"not a gpuvet run document: {field}: {first['msg']}", where=where,
                          fix="give the output of `gpuvet validate --json` (docs/schema/run-document.schema.json "
                              "describes it).") from None


def json_schema() -> JsonObject:
    """The run document's JSON Schema (draft 2020-12), as committed in docs/schema/."""
    schema = RunDocument.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://gpuvet.dev/schema/{SCHEMA_FILE}"
    return schema


def write_schema(folder: Path) -> Path:
    """Write the schema file into ``folder`` (docs/schema): run after changing a model above."""
    path = folder / SCHEMA_FILE
    path.write_text(json.dumps(json_schema(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


if __name__ == "__main__":  # python -m gpuvet.logbook.document [docs/schema]: regenerate the committed file
    import sys

    sys.stdout.write(f"wrote {write_schema(Path(sys.argv[1] if len(sys.argv) > 1 else 'docs/schema'))}\n")
