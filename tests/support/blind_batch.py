"""A blind batch of real captures (issue 46) held as tables, and what gpuvet gets wrong against them.

Batches F and G (tests/captures/test_captures_fresh_f.py, _g.py) write their MANIFEST's "a correct tool
should report" column into a :class:`Batch`; ``Batch.wrong`` compares gpuvet's answer with it (an empty
list: a hit) and benchmarks/score_manifest.py counts the hits. One copy of the comparison, so the batches
are scored alike; each file's doctor, inventory and topo answers are read once per process (cached)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers import run

RANK = {"info": 0, "warn": 1, "critical": 2}
Finding = tuple[str, str | None]  # (cause, module) as doctor --json names them


@dataclass(frozen=True)
class Answer:
    """One gpuvet command's answer on one file: exit code, its --json (None: refused) and stderr."""

    code: int
    data: dict[str, Any] | None
    err: str


@cache
def answer(command: str, path: Path) -> Answer:
    """``gpuvet COMMAND --from PATH --json``, run once per process (the tests and the scorer share it)."""
    code, out, err = run([command, "--from", str(path), "--json"])
    assert "Traceback" not in err, err
    return Answer(code, json.loads(out) if out.strip() else None, err)


@dataclass(frozen=True)
class Nic:
    """A port inventory must list: the device, its HCA type, the port's link layer and rate (Gb/s)."""

    device: str
    hca_type: str
    link_layer: str
    rate_gbps: float


def nic_ports(data: dict[str, Any]) -> list[Nic]:
    return [Nic(n["device"], n.get("hca_type") or "", p.get("link_layer") or "", p.get("rate_gbps") or 0.0)
            for n in data.get("nics") or [] for p in n.get("ports") or []]


def bus(bus_id: object) -> object:
    """A bus id as gpuvet prints one (upper case, domain 0000 where lspci without -D leaves it out)."""
    if not isinstance(bus_id, str):
        return bus_id
    return ("0000:" + bus_id if re.fullmatch(r"[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d", bus_id) else bus_id).upper()


def holds(text: str, word: str) -> bool:
    """``word`` in ``text`` as a word of its own ('IB' in 'NET/IB', not in 'VISIBLE')."""
    return re.search(rf"(?<![A-Za-z]){re.escape(word)}(?![A-Za-z])", text) is not None


def model_wrong(got: list[object], want: list[object]) -> bool:
    """Each wanted name ('A|B': either) within gpuvet's model; None: no model invented (null or 'unknown …')."""
    if len(got) != len(want):
        return True
    return any((w is None and g is not None and not str(g).startswith("unknown")) or
               (w is not None and (g is None or not any(a in str(g) for a in str(w).split("|"))))
               for g, w in zip(got, want, strict=True))


@dataclass(frozen=True)
class Batch:
    """A batch's expectations, each table keyed by file name (see the batch's test module for the words)."""

    folder: Path
    causes: dict[str, set[Finding]]  # what doctor must name; empty: nothing at warn or above
    severity: dict[str, dict[Finding, str]] = field(default_factory=dict)  # where the MANIFEST rates one
    may: dict[str, dict[str, str]] = field(default_factory=dict)  # allowed, not asked for: cause -> highest
    told: dict[str, tuple[str, ...]] = field(default_factory=dict)  # words doctor --json must hold
    modules: dict[str, list[str | None]] = field(default_factory=dict)  # inventory's bus ids, in order
    fields: dict[str, dict[str, list[object]]] = field(default_factory=dict)  # inventory field per module
    said: dict[str, tuple[str, ...]] = field(default_factory=dict)  # words inventory --json must hold
    nics: dict[str, list[Nic]] = field(default_factory=dict)  # inventory's NIC ports
    hosts: dict[str, list[str]] = field(default_factory=dict)  # topo's host side per GPU
    refusal_ok: frozenset[str] = frozenset()  # files a clear refusal (exit 2, 'error: …') answers rightly
    known_misses: dict[str, str] = field(default_factory=dict)  # file -> why gpuvet is still wrong on it

    def cases(self) -> list[Any]:
        """Every file of the tables, a known miss as a strict xfail with its why (a fix shows as a failure)."""
        return [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=self.known_misses[n]))
                if n in self.known_misses else n for n in sorted(self.causes)]

    def files_on_disk(self) -> set[str]:
        return {p.name for p in self.folder.iterdir() if p.suffix in (".txt", ".xml")}

    def table_problems(self) -> list[str]:
        """Tables that name a file the batch lacks, or rate a finding they do not ask for."""
        names = self.files_on_disk()
        problems = [f"CAUSES lacks {sorted(names - set(self.causes))}"] if names - set(self.causes) else []
        for title, table in (("CAUSES", self.causes), ("SEVERITY", self.severity), ("MAY", self.may),
                             ("TOLD", self.told), ("MODULES", self.modules), ("FIELDS", self.fields), ("SAID", self.said),
                             ("NICS", self.nics), ("HOSTS", self.hosts), ("KNOWN_MISSES", self.known_misses),
                             ("REFUSAL_OK", dict.fromkeys(self.refusal_ok))):
            problems += [f"{title} names {n}, not in the batch" for n in set(table) - names]
        problems += [f"SEVERITY of {n} rates {set(r) - self.causes.get(n, set())}, not asked for"
                     for n, r in self.severity.items() if set(r) - self.causes.get(n, set())]
        rated = [(n, s) for n, r in self.severity.items() for s in r.values()]
        return problems + [f"{n}: severity {s} unknown" for n, s in rated + [(n, s) for n, r in self.may.items()
                                                                               for s in r.values()] if s not in RANK]

    def tests(self, files: int) -> tuple[Callable[[], None], Callable[[str], None]]:
        """The batch's two tests, made once here: the tables cover its ``files`` files, and each file gets its
        blind diagnosis (a known miss a strict xfail). A module binds them to its own test_ names."""
        def tables_cover_the_whole_batch() -> None:
            assert len(self.files_on_disk()) == files
            assert self.table_problems() == []

        @pytest.mark.parametrize("name", self.cases())
        def each_capture_gets_its_blind_diagnosis(name: str) -> None:
            assert self.wrong(name) == []

        return tables_cover_the_whole_batch, each_capture_gets_its_blind_diagnosis

    def wrong(self, name: str) -> list[str]:
        """What gpuvet gets wrong on one file against the tables (empty: a hit)."""
        doctor = answer("doctor", self.folder / name)
        if doctor.data is None:
            if name in self.refusal_ok and doctor.code == 2 and doctor.err.startswith("error: "):
                return []
            return [f"refused (exit {doctor.code}): {doctor.err.strip()[:160]}"]
        return self._doctor_wrong(name, doctor) + self._inventory_wrong(name) + self._topo_wrong(name)

    def _doctor_wrong(self, name: str, doctor: Answer) -> list[str]:
        assert doctor.data is not None
        found: dict[Finding, str] = {}
        for f in doctor.data["findings"]:  # a cause named twice on one module: its worst severity
            key = (f["cause"], f.get("module"))
            found[key] = max(found.get(key, "info"), f["severity"], key=RANK.__getitem__)
        may = self.may.get(name, {})
        unwanted = {k: s for k, s in found.items() if k not in self.causes[name] and RANK[s] > RANK["info"]
                    and not (k[0] in may and RANK[s] <= RANK[may[k[0]]])}
        want_code = 1 if any(RANK[s] >= RANK["warn"] for s in found.values()) else 0
        wrong = []
        if self.causes[name] - set(found) or unwanted or doctor.code != want_code:
            wrong.append(f"doctor named {sorted(found.items(), key=str)} (exit {doctor.code}), expected "
                         f"{sorted(self.causes[name], key=str)}" + (f" (may add {may})" if may else ""))
        rated = {k: v for k, v in found.items() if k in self.severity.get(name, {})}
        if name in self.severity and rated != self.severity[name]:
            wrong.append(f"doctor rated {rated}, expected {self.severity[name]}")
        text = json.dumps(doctor.data).replace(Path(name).stem, "")  # doctor's notes name the file: its name says nothing
        return wrong + [f"doctor does not say {w!r}" for w in self.told.get(name, ()) if not holds(text, w)]

    def _inventory_wrong(self, name: str) -> list[str]:
        if not ({name} & (set(self.modules) | set(self.fields) | set(self.said) | set(self.nics))):
            return []
        inventory = answer("inventory", self.folder / name)
        if inventory.data is None:
            return [f"inventory refused (exit {inventory.code})"]
        modules: list[dict[str, Any]] = inventory.data["modules"]
        wrong = []
        if name in self.modules and [bus(m["bus_id"]) for m in modules] != [bus(b) for b in self.modules[name]]:
            wrong.append(f"inventory listed {[m['bus_id'] for m in modules]}, expected {self.modules[name]}")
        for key, want in self.fields.get(name, {}).items():
            got = [m.get(key) for m in modules]
            if model_wrong(got, want) if key == "model" else got != want:
                wrong.append(f"inventory read {key} {got}, expected {want}")
        text = json.dumps(inventory.data).replace(Path(name).stem, "")  # the file's own name says nothing
        wrong += [f"inventory does not say {w!r}" for w in self.said.get(name, ()) if not holds(text, w)]
        if name in self.nics and (ports := nic_ports(inventory.data)) != self.nics[name]:
            wrong.append(f"inventory listed NIC ports {ports}, expected {self.nics[name]}")
        return wrong

    def _topo_wrong(self, name: str) -> list[str]:
        if name not in self.hosts:
            return []
        topo = answer("topo", self.folder / name)
        sides = [p["socket"] for p in (topo.data or {}).get("host_paths", {}).values()]
        return [] if sides == self.hosts[name] else [f"topo drew host sides {sides}, expected {self.hosts[name]}"]
