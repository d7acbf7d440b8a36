"""nccl-tests' device lines from builds that print the PCI bus number alone ('device 0 [0x3b]', issue 46: batch L's
nccl426 and nccltests74 as a class): inventory says each rank's bus number, by host, and makes no bus id of it (no
domain, device or function is printed); a build printing the whole address keeps giving the bus id."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import capture_json

_HEAD = "# nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 validation: 1\n#\n"


def _rank(rank: int, host: str, bracket: str) -> str:
    return f"#  Rank {rank:2d} Group  0 Pid {3100 + rank:6d} on {host:>10} device  {rank % 2} [{bracket}] Tesla T4\n"


def test_bus_numbers_alone_are_said_by_rank_and_never_made_bus_ids(tmp_path: Path) -> None:
    text = _HEAD + _rank(0, "node-a", "0x3b") + _rank(1, "node-a", "0xaf") + _rank(2, "node-b", "0x3b")
    data = capture_json(tmp_path, text, "inventory")
    assert [m["bus_id"] for m in data["modules"]] == [None, None, None]  # type: ignore[index,union-attr]
    notes = " ".join(data["notes"])  # type: ignore[arg-type]
    assert "rank 0 on node-a 0x3b, rank 1 on node-a 0xaf, rank 2 on node-b 0x3b" in notes


def test_a_whole_address_stays_the_bus_id(tmp_path: Path) -> None:
    data = capture_json(tmp_path, _HEAD + _rank(0, "node-a", "0000:3b:00"), "inventory")
    assert [m["bus_id"] for m in data["modules"]] == ["0000:3B:00.0"]  # type: ignore[index,union-attr]
    assert "PCI bus numbers" not in " ".join(data["notes"])  # type: ignore[arg-type]
