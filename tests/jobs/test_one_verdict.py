"""One fault, one verdict (issue 42): every fault of the simulated fault table through health,
validate, doctor and watch must get one severity for one subject, and every job's severity for a
named fault kind must be the knowledge base's. docs/knowledge.md is generated from both."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from gpuvet import knowledge
from gpuvet.doctor.model import causes
from tests.support import one_verdict

ROOT = Path(__file__).resolve().parents[2]
# Disagreements not resolved yet: none (issue 42 part 2 resolved the four that were listed: a link
# down is critical in watch too; a slowed link and a lowered power cap warn in health and validate).
# The test fails when a new one appears: this stays empty.
KNOWN: dict[str, set[str]] = {}


def test_every_fault_gets_one_severity_from_every_command():
    assert one_verdict.disagreements() == KNOWN


def test_every_command_names_the_faults_subject():
    for name, row in one_verdict.matrix().items():
        subject = next(one_verdict._subject(f) for n, _, f in one_verdict.FAULTS if n == name)
        for command, v in row.items():
            assert v is None or set(v.subjects) <= subject, (name, command, v)


def test_the_xids_take_the_knowledge_base_severity_in_every_command():
    for name, row in one_verdict.matrix().items():
        if name.startswith("xid "):
            level = knowledge.xid(int(name.split()[1])).severity
            assert {v.severity for v in row.values() if v} == {level}, (name, row)


def test_doctor_causes_are_fault_kinds_read_from_the_knowledge_base():
    names = yaml.safe_load((ROOT / "src/gpuvet/doctor/causes.yaml").read_text())["causes"]
    assert isinstance(names, list) and len(names) == len(set(names)), "causes.yaml lists each cause's name once"
    missing = sorted(set(names) - set(knowledge.faults()))
    assert not missing, f"doctor causes with no fault kind in knowledge/faults.yaml: {missing}"
    for name, cause in causes().items():
        fault = knowledge.fault(name)
        assert (cause.title, cause.fix, cause.severity) == (fault.title, fault.action, fault.severity), name


def test_watch_event_kinds_agree_with_the_knowledge_base():
    raised: dict[str, set[str]] = {}
    for path in [*(ROOT / "src/gpuvet/checks").glob("*.py"), *(ROOT / "src/gpuvet/watch").glob("*.py")]:
        for kind, level in re.findall(r'Event\("(\w+)", Severity\.(\w+)', path.read_text()):
            raised.setdefault(kind, set()).add(level.lower())
    assert {"throttle", "clock_flapping", "module_lost", "link_down", "link_degraded"} <= set(raised)
    for kind, levels in raised.items():
        known = knowledge.severity_of_watch_kind(kind)
        if known is not None:
            assert levels == {known}, (kind, levels, known)


def test_the_knowledge_doc_is_current():
    assert (ROOT / "docs/knowledge.md").read_text() == one_verdict.document(), \
        "regenerate: python -m tests.support.one_verdict > docs/knowledge.md"
