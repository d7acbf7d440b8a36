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
from pathlib import Path
from typing import Literal

from pydantic import Field, JsonValue, ValidationError

from gpuvet.checks.model import Check, JsonObject, Number, Record, Verdict
from gpuvet.errors import GpuvetError

DOCUMENT_VERSION = 1  # the ``schema_version`` a run document carries (validate --json's own)
SCHEMA_FILE = "run-document.schema.json"

__all__ = ["DOCUMENT_VERSION", "SCHEMA_FILE", "CheckRecord", "Environment", "EventRecord", "JsonObject",
           "ModuleEnvironment", "RootRecord", "RunDocument", "Verdict", "as_document", "json_schema", "write_schema"]

CheckRecord = Check  # its name before issue 42, kept for scripts that import it: the one check record is checks.model.Check
_Record = Record


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
    # firmware as the backend read it (absent where it did not; "simulated" on a simulated node), so
    # two runs compared show a VBIOS or InfoROM change beside the driver's (health and doctor keep the
    # same keys and the serial in their runs' modules)
    serial: str | None = None
    vbios_version: str | None = None
    inforom_version: str | None = None
    gsp_firmware: str | None = None


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
    checks: list[Check] = Field(default_factory=list)
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
