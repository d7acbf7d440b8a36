"""gpuvet's one knowledge base (issue 42): every Xid NVIDIA publishes (xids.yaml) and every
fault kind gpuvet names (faults.yaml), each with one severity and one action. Jobs (health,
validate, doctor, watch, fleet) and the Prometheus rules read these; none keeps its own copy.
Pure data and small cached loaders; docs/knowledge.md is generated from them (``table``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Literal, cast

from gpuvet.knowledge.package_yaml import load_package_yaml

Level = Literal["critical", "warn", "info"]
LEVELS: tuple[Level, ...] = ("critical", "warn", "info")
Subject = Literal["module", "link", "node", "nic", "switch", "process"]


@dataclass(frozen=True)
class Xid:
    """One Xid: NVIDIA's resolution bucket and what gpuvet makes of it."""

    code: int
    meaning: str
    bucket: str  # NVIDIA's "Resolution Bucket (Immediate Action)"
    severity: Level
    action: str
    off_bus: bool = False  # the module is gone from the bus after it (no readings until replaced)

    @property
    def drains(self) -> bool:
        """The module (or node) is unfit for the next job until the action is done."""
        return self.severity == "critical"


@dataclass(frozen=True)
class Fault:
    """A fault kind gpuvet names, and the name each job gives it."""

    kind: str
    subject: Subject
    severity: Level
    meaning: str
    action: str
    explains: tuple[str, ...] = ()  # what it explains (slow collectives, lost jobs, ...)
    tool: str | None = None  # a VendorTools field (node/vendor_tools.py) whose command the action points to
    doctor: tuple[str, ...] = ()  # doctor's causes for it
    health: tuple[str, ...] = ()  # health's checks that fail on it
    watch: tuple[str, ...] = ()  # watch's event kinds for it
    validate: tuple[str, ...] = ()  # validate's findings for it
    short: str = ""  # faults.yaml's `title` where the meaning is too long to head a finding

    @property
    def title(self) -> str:
        """What the fault is, in a line a person reads at a glance (the meaning says when and why)."""
        return self.short or self.meaning


@cache
def _read(name: str) -> dict[str, object]:
    """One package data file, parsed once per process (doctor asks for an Xid's severity per log
    line: a flood of 20,000 lines re-parsed xids.yaml 20,000 times). Read-only to every caller."""
    text = resources.files("gpuvet.knowledge").joinpath(name).read_text(encoding="utf-8")
    return cast(dict[str, object], load_package_yaml(text))


@cache
def xid_source() -> str:
    return str(_read("xids.yaml")["source"])


@cache
def xids() -> dict[int, Xid]:
    """Every Xid of NVIDIA's catalog, by code."""
    data = _read("xids.yaml")
    buckets = cast(dict[str, dict[str, str]], data["buckets"])
    out: dict[int, Xid] = {}
    for code, row in cast(dict[int, dict[str, str]], data["xids"]).items():
        bucket = buckets[row["bucket"]]
        out[int(code)] = Xid(int(code), row["meaning"], row["bucket"], cast(Level, bucket["severity"]),
                             row.get("action") or bucket["action"], bool(row.get("off_bus", False)))
    return out


def xid(code: int) -> Xid:
    """The entry for ``code``; a code NVIDIA's catalog lacks gets the file's ``unknown`` entry."""
    known = xids().get(code)
    if known:
        return known
    unknown = _read_unknown()
    return Xid(code, unknown["meaning"], "UNKNOWN", cast(Level, unknown["severity"]), unknown["action"])


_NONFATAL = re.compile(r"\bNon-?fatal\b", re.I)


def xid_severity(code: int, message: str | None) -> Level:
    """The severity of one Xid line: the catalog's, except where the code names its fatality in the
    message (NVLink 5, xids.yaml's nonfatal_in_message) and the message says non-fatal."""
    codes, severity = _nonfatal_rule()
    if message and code in codes and _NONFATAL.search(message):
        return severity
    return xid(code).severity


@cache
def _nonfatal_rule() -> tuple[frozenset[int], Level]:
    """xids.yaml's ``nonfatal_in_message``: the codes whose message may name them non-fatal, and
    the severity they then take (no codes: the rule is absent)."""
    rule = cast(dict[str, object], _read("xids.yaml").get("nonfatal_in_message") or {})
    codes = frozenset(int(c) for c in cast(list[int], rule.get("codes") or []))
    return codes, cast(Level, rule.get("severity", "info"))


@cache
def _read_unknown() -> dict[str, str]:
    return cast(dict[str, str], _read("xids.yaml")["unknown"])


@cache
def fatal_xids() -> frozenset[int]:
    """The Xids that drain: severity critical (watch's critical events, health's failures, the alert rule)."""
    return frozenset(code for code, x in xids().items() if x.drains)


@cache
def off_bus_xids() -> frozenset[int]:
    """The Xids after which the module is off the bus: a simulated node stops reading it, as a
    real one does (watch's module_lost, validate's missing module)."""
    return frozenset(code for code, x in xids().items() if x.off_bus)


def _names(row: dict[str, object], key: str) -> tuple[str, ...]:
    value = row.get(key) or ()
    return (value,) if isinstance(value, str) else tuple(cast(list[str], value))


@cache
def faults() -> dict[str, Fault]:
    """Every fault kind gpuvet names, by kind."""
    out: dict[str, Fault] = {}
    for kind, row in cast(dict[str, dict[str, object]], _read("faults.yaml")["faults"]).items():
        out[kind] = Fault(kind, cast(Subject, row["subject"]), cast(Level, row["severity"]), str(row["meaning"]),
                          str(row["action"]), _names(row, "explains"), cast(str | None, row.get("tool")),
                          _names(row, "doctor") if "doctor" in row else (kind,),
                          _names(row, "health"), _names(row, "watch"), _names(row, "validate"),
                          str(row.get("title") or ""))
    return out


def fault(kind: str) -> Fault:
    return faults()[kind]


@dataclass(frozen=True)
class Threshold:
    """A figure a job judges by, with its unit and why it is there."""

    name: str
    value: float
    unit: str
    meaning: str


@cache
def thresholds() -> dict[str, Threshold]:
    """Every threshold of faults.yaml, by name."""
    rows = cast(dict[str, dict[str, object]], _read("faults.yaml")["thresholds"])
    return {name: Threshold(name, float(cast(float, row["value"])), str(row["unit"]), str(row["meaning"]))
            for name, row in rows.items()}


def threshold(name: str) -> float:
    """The value of one threshold (KeyError for a name faults.yaml lacks: a typo in a job)."""
    return thresholds()[name].value


@cache
def sxid_fatal(code: int) -> bool | None:
    """Whether NVIDIA's guide calls an NVSwitch SXid fatal (True), non-fatal (False), or neither list holds
    it (None): for an SXid line that does not say so itself (faults.yaml, sxids)."""
    lists = cast(dict[str, list[int]], _read("faults.yaml")["sxids"])
    return True if code in lists["fatal"] else False if code in lists["non_fatal"] else None


@cache
def severity_of_watch_kind(kind: str) -> Level | None:
    """The severity faults.yaml gives the fault a watch event kind names (None: not a fault)."""
    found = {f.severity for f in faults().values() if kind in f.watch}
    return found.pop() if len(found) == 1 else None


@dataclass(frozen=True)
class HcclCode:
    """One CANN error code of HCCL (EI) or HCCP (EJ): what it means and what to do (hccl_codes.yaml)."""

    code: str
    meaning: str
    action: str
    known: bool = True


def hccl_code(code: str) -> HcclCode:
    """The entry for ``code`` (EI0006, EJ0001 …); a code the list lacks gets the file's ``unknown`` entry."""
    data = _read("hccl_codes.yaml")
    row = cast(dict[str, dict[str, str]], data["codes"]).get(code.upper())
    if row is not None:
        return HcclCode(code.upper(), row["meaning"], row["action"])
    unknown = cast(dict[str, str], data["unknown"])
    return HcclCode(code.upper(), unknown["meaning"], unknown["action"], known=False)


def cann_runtime_code() -> HcclCode:
    """What an error code of the Ascend runtime (not HCCL's EI/EJ) means and what to do (hccl_codes.yaml)."""
    row = cast(dict[str, str], _read("hccl_codes.yaml")["runtime"])
    return HcclCode("runtime", row["meaning"], row["action"])


@dataclass(frozen=True)
class NcclWarnFamily:
    """A family of NCCL's/RCCL's WARN messages: its own title, meaning and fix (nccl_warns.yaml), and the cause
    (faults.yaml) a finding of it takes where it is no failure of the communicator's own (None: the collective's)."""

    name: str
    title: str
    meaning: str
    action: str
    cause: str | None = None


def nccl_warn_family(name: str) -> NcclWarnFamily:
    """The entry for one family (nccl_socket_connect, nccl_p2p_ipc …)."""
    row = cast(dict[str, dict[str, str]], _read("nccl_warns.yaml")["families"])[name]
    return NcclWarnFamily(name, row["title"], row["meaning"], row["action"], row.get("cause"))


def ib_completion_status(code: int) -> str | None:
    """What an InfiniBand work completion's status (ibv_wc_status, NCCL's 'status=N') means; None: not listed."""
    return cast(dict[int, str], _read("nccl_warns.yaml")["ib_status"]).get(code)


def completion_sides() -> tuple[tuple[tuple[str, ...], str], ...]:
    """(words, side) for each entry of nccl_warns.yaml's completion_sides, in order: the side a completion status
    whose name holds one of the words points at (an entry naming a status says what ib_status says of it)."""
    rows = cast(list[dict[str, object]], _read("nccl_warns.yaml")["completion_sides"])
    return tuple((tuple(cast(list[str], row["words"])), _side(row)) for row in rows)


def _side(row: dict[str, object]) -> str:
    if "status" not in row:
        return str(row["side"])
    said = ib_completion_status(cast(int, row["status"]))
    if said is None:
        raise KeyError(f"nccl_warns.yaml: completion_sides names status {row['status']}, which ib_status lacks")
    return said.split(": ", 1)[-1]
