"""Every fault of the simulated fault table (docs/spec.md) through health, doctor, watch and
validate, and what each command calls it: the worst severity it gives the fault's subject and
its title. ``python -m tests.support.one_verdict > docs/knowledge.md`` regenerates the doc; the test in
tests/jobs/test_one_verdict.py fails when it is stale or when two commands disagree."""

from __future__ import annotations

import contextlib
import io
import json
import re
import sys
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

from gpuvet.cli.app import main
from gpuvet.knowledge.table import knowledge_markdown

COMMANDS = ("health", "validate", "doctor", "watch")
RANK = {"info": 0, "warn": 1, "critical": 2}
# (name, base, fault): one of each kind of docs/spec.md's fault table that a command can see
FAULTS: tuple[tuple[str, str, dict[str, object]], ...] = (
    ("missing_module", "hgx-h200-8", {"kind": "missing_module", "module": "gpu3"}),
    ("link_down", "hgx-h200-8", {"kind": "link_down", "between": ["gpu1", "nvswitch0"]}),
    ("link_degraded", "hgx-h200-8", {"kind": "link_degraded", "between": ["gpu1", "nvswitch0"], "factor": 0.33}),
    ("pcie_link_degraded", "pcie-8", {"kind": "link_degraded", "between": ["gpu3", "pcisw1"], "factor": 0.5}),
    ("mem_clock_flapping", "hgx-h200-8", {"kind": "mem_clock_flapping", "module": "gpu1"}),
    ("power_cap_low", "hgx-h200-8", {"kind": "power_cap_low", "module": "gpu6", "watts": 350}),
    ("thermal_creep", "hgx-h200-8", {"kind": "thermal_creep", "module": "gpu2", "c_per_watt_per_day": 0.006}),
    ("module_lost", "hgx-h200-8", {"kind": "module_lost", "module": "gpu2", "at": "1h"}),
    ("ecc_rising", "hgx-h200-8", {"kind": "ecc_rising", "module": "gpu1", "at": "1h", "per_hour": 300}),
    ("xid 13", "hgx-h200-8", {"kind": "xid", "module": "gpu1", "code": 13}),
    ("xid 48", "hgx-h200-8", {"kind": "xid", "module": "gpu1", "code": 48}),
    ("xid 63", "hgx-h200-8", {"kind": "xid", "module": "gpu1", "code": 63}),
    ("xid 79", "hgx-h200-8", {"kind": "xid", "module": "gpu5", "code": 79}),
    ("xid 94", "hgx-h200-8", {"kind": "xid", "module": "gpu1", "code": 94}),
    ("fabric_registration", "nvl72", {"kind": "fabric_registration", "module": "gpu3", "state": "in_progress"}),
    ("p2p_disabled", "hgx-h200-8", {"kind": "p2p_disabled"}),
    ("pcie_p2p_disabled", "pcie-8", {"kind": "p2p_disabled"}),
)
ARGS = {
    "health": ["--json"],
    "validate": ["--level", "quick", "--json"],
    "doctor": ["--json", "--window", "6h"],
    "watch": ["--duration", "6h", "--interval", "60s", "--speedup", "max", "--json", "--no-log"],
}
LIFE = {"module_ready", "module_added", "module_quarantined", "cleared", "overheat_forecast_withdrawn"}


@dataclass(frozen=True)
class Verdict:
    """What one command said of one fault's subject: its worst severity and that item's title."""

    severity: str
    title: str
    subjects: tuple[str, ...]


def _run(command: str, spec: Path) -> dict[str, object]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        main([command, "--sim", str(spec), *ARGS[command]])
    return json.loads(out.getvalue())


def _items(command: str, data: dict[str, object]) -> list[tuple[str, str, str | None]]:
    """(severity, title, subject) of every item the command raised."""
    if command == "health":  # a failure drains (critical); a note names its severity ("gpu1: Xid 94 (…) …: warn, …")
        notes = [(m.group(2), f"note: {n[:60]}", m.group(1)) for n in data.get("notes") or []
                 if (m := re.match(r"(\S+): .*: (warn|info), reported", n))]
        level = {"fail": "critical", "warn": "warn"}  # warn: named, not drained (the node keeps its jobs)
        return [(level[f["status"]], f"{f['check']}: {f['reason']}", f.get("module")) for f in data["findings"]
                if f["status"] in level] + notes
    if command == "doctor":
        return [(f["severity"], f["cause"], f.get("module")) for f in data["findings"]]
    if command == "watch":
        return [(e["severity"], e["kind"], e.get("module")) for e in data["events"] if e["kind"] not in LIFE]
    level = {"fail": "critical", "warn": "warn"}  # validate: the settings it judges (the benchmarks' loss is a consequence)
    checks = [(level[c["verdict"]], f"{c['layer']}: {c['name']}", (c.get("evidence") or {}).get("module"))
              for c in data["checks"] if c["verdict"] in level and c["layer"] in ("inventory", "software", "topology")]
    # a node-wide fact no setting check names (P2P off: only the pairs show it) is validate's root for the node
    return checks + [(r["severity"], f"root: {r['title']}", None) for r in data["roots"] if r["subject"] == "node"]


def _subject(fault: dict[str, object]) -> set[str]:
    named = fault.get("module") or fault.get("between") or []
    return {named} if isinstance(named, str) else set(named)


def verdict(command: str, base: str, fault: dict[str, object]) -> Verdict | None:
    """The worst item the command gave the fault's subject (None: it saw nothing)."""
    with tempfile.TemporaryDirectory() as tmp:
        spec = Path(tmp) / "node.yaml"
        spec.write_text(yaml.safe_dump({"base": base, "faults": [fault]}), encoding="utf-8")
        items = _items(command, _run(command, spec))
    about = _subject(fault)
    mine = [i for i in items if i[2] in about or i[2] is None]
    if not mine:
        return None
    worst = max(mine, key=lambda i: RANK[i[0]])
    return Verdict(worst[0], worst[1], tuple(sorted({i[2] for i in mine if i[2]})))


@cache
def matrix() -> dict[str, dict[str, Verdict | None]]:
    return {name: {c: verdict(c, base, fault) for c in COMMANDS} for name, base, fault in FAULTS}


def disagreements() -> dict[str, set[str]]:
    """fault -> the severities its commands gave it, where more than one."""
    out = {}
    for name, row in matrix().items():
        levels = {v.severity for v in row.values() if v}
        if len(levels) > 1:
            out[name] = levels
    return out


def matrix_markdown() -> str:
    lines = ["## One fault, every command", "",
             "Generated by `python -m tests.support.one_verdict > docs/knowledge.md` (tests/jobs/test_one_verdict.py fails "
             "when it is stale). Each simulated fault of docs/spec.md through each command: the worst severity "
             "the command gives the fault's subject and the item that carries it (health fails = critical, its "
             "warnings warn; "
             "validate: its inventory, software and topology checks, and its root for the node). — : the command "
             "does not see it.", "",
             "| fault | " + " | ".join(COMMANDS) + " | agree |", "|---|" + "---|" * (len(COMMANDS) + 1)]
    for name, row in matrix().items():
        cells = [f"{v.severity}: {v.title[:60]}" if v else "—" for v in row.values()]
        agree = "yes" if len({v.severity for v in row.values() if v}) <= 1 else "**no**"
        lines.append(f"| {name} | " + " | ".join(c.replace("|", "/") for c in cells) + f" | {agree} |")
    return "\n".join(lines) + "\n"


def document() -> str:
    return knowledge_markdown() + "\n" + matrix_markdown()


if __name__ == "__main__":
    sys.stdout.write(document())
