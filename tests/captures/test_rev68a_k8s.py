"""Issue 46 (REV68a on FX68A): kubectl describe nodes of several nodes: each node judged on its own Capacity and
Allocatable (one node's counts never put on another's), a short node's finding on that node; the finding says the
count withheld and leaves the action to the knowledge base. Written from kubectl's describe printer
(describe.go: 'Name:', 'Roles:', 'Capacity:', 'Allocatable:' with two-space indented 'resource:  value')."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import capture_json


def _node(name: str, cap: int, alloc: int) -> str:
    return (f"Name:               {name}\nRoles:              <none>\nCapacity:\n  cpu:                64\n"
            f"  nvidia.com/gpu:     {cap}\n  pods:               110\nAllocatable:\n  cpu:                63\n"
            f"  nvidia.com/gpu:     {alloc}\n  pods:               110\nEvents:              <none>\n\n\n")


def _short(tmp_path: Path, text: str) -> list[dict[str, object]]:
    return [f for f in capture_json(tmp_path, text)["findings"] if f["cause"] == "scheduler_gpus_short"]


def test_each_node_is_judged_on_its_own_counts(tmp_path: Path) -> None:
    found = _short(tmp_path, _node("worker-7", 8, 6) + _node("worker-9", 4, 4))
    assert [(f.get("host"), f["severity"]) for f in found] == [("worker-7", "warn")], found
    assert "allocatable 6 of capacity 8 (2 device(s) withheld" in str(found[0]["evidence"]), found
    assert _short(tmp_path, _node("worker-7", 8, 8) + _node("worker-9", 4, 4)) == []


def test_two_short_nodes_are_two_findings(tmp_path: Path) -> None:
    found = _short(tmp_path, _node("worker-7", 8, 7) + _node("worker-9", 4, 1))
    assert sorted(str(f.get("host")) for f in found) == ["worker-7", "worker-9"], found


def test_the_finding_says_the_count_not_an_action(tmp_path: Path) -> None:
    found = _short(tmp_path, _node("worker-7", 8, 0))
    log = str(found[0]["evidence"])
    assert "8 device(s) withheld" in log and "restart" not in log and "usually after an Xid" not in log, log
