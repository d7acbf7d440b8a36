"""REV67a #6 (issue 46): inventory says what NCCL's NET/IB printed of each HCA (its host, the port and link layer it
chose: 'NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE ; OOB …', net_ib.cc), and two hosts' HCAs of one name are
two devices, as two hosts' modules are; no port state, rate or bus id is invented."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from tests.support.helpers import capture_json

_TWO = ("node-a:40:140 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB ib0:10.8.0.7<0>\n"
        "node-b:41:141 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE ; OOB eth0:10.8.0.8<0>\n"
        "node-a:40:140 [0] NCCL INFO comm 0x7fd0 rank 0 nranks 16 cudaDev 0 busId 1a000 - Init COMPLETE\n"
        "node-b:41:141 [0] NCCL INFO comm 0x7fd1 rank 8 nranks 16 cudaDev 0 busId 1a000 - Init COMPLETE\n")


def test_two_hosts_hcas_are_kept_apart_and_each_said_as_nccl_printed_it(tmp_path: Path) -> None:
    data = cast("dict[str, Any]", capture_json(tmp_path, _TWO, "inventory"))
    assert [n["device"] for n in data["nics"]] == ["mlx5_0", "mlx5_1", "mlx5_0", "mlx5_1"]
    assert all(n["ports"] == [] and n["bus_id"] is None for n in data["nics"])
    said = [n for n in data["notes"] if "NCCL's NET/IB" in n]
    assert [s.split(": ")[1] for s in said] == ["mlx5_0", "mlx5_1", "mlx5_0", "mlx5_1"], said
    assert "on node-a chose port 1, link layer IB" in said[0] and "on node-b chose port 1, link layer RoCE" in said[2]


def test_one_hosts_processes_naming_the_same_hca_list_it_once(tmp_path: Path) -> None:
    text = "".join(f"node-a:{40 + p}:{140 + p} [{p}] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.8.0.7<0>\n"
                   for p in range(4))
    data = cast("dict[str, Any]", capture_json(tmp_path, text, "inventory"))
    assert [n["device"] for n in data["nics"]] == ["mlx5_0"]
