"""Issue 46 (RDV): what RDMA programs and the kernel's RDMA stack print when a queue pair, a completion or a connection
fails on a NIC, each a finding on the device it names at the severity an engineer gives it, and the class's healthy
lines quiet. Lines written here in the sources' formats (drivers/infiniband/hw/mlx5/qp.c and cq.c; Open MPI's
btl_openib_component.c handle_wc; Mooncake's rdma_endpoint.cpp / worker_pool.cpp / rdma_context.cpp under glog;
NVSHMEM's ibgda.cpp / ibrc.cpp; UCX's ib_device.c; perftest's own line); benchmarks/rdma_verbs_phrasebook.py scores the
whole class."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuvet.cli.app import main

Found = tuple[str, str, str]


def _doctor(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[dict[str, object]]]:
    path = tmp_path / "capture.txt"
    path.write_text(text + "\n", encoding="utf-8")
    code = main(["doctor", "--from", str(path), "--json"])
    out = capsys.readouterr().out
    return code, json.loads(out)["findings"] if out.strip() else []


def _said(found: list[dict[str, object]]) -> list[Found]:
    return [(str(f["cause"]), str(f["severity"]), str(f.get("module") or "")) for f in found]


@pytest.mark.parametrize(
    ("lines", "want"),
    [
        # mlx5_ib qp.c: the QP's error syndrome, the status in the kernel's words, behind dmesg's stamp
        (["[81234.500100] mlx5_2/1: QP 7781 error: transport retry counter exceeded (0x81 0x0 0x0)"],
         [("rdma_completion_error", "warn", "mlx5_2 port 1")]),
        # two bonded devices: one finding each; the flush after the first error is its echo, not a fault of its own
        (["[Mon Dec  7 10:00:00 2026] mlx5_bond_0/1: QP 20517 error: local protection error (0x8e 0x0 0x0)",
          "[Mon Dec  7 10:00:00 2026] mlx5_bond_0/1: QP 20517 error: WR flushed (0xf9 0x0 0x0)",
          "[Mon Dec  7 10:00:01 2026] mlx5_bond_1/1: QP 30011 error: remote access error (0x88 0x0 0x0)"],
         [("rdma_completion_error", "warn", "mlx5_bond_0 port 1"), ("rdma_completion_error", "warn", "mlx5_bond_1 port 1")]),
        # cq.c's error-CQE dump alone (no 'WC error' line beside it)
        (["Dec 07 12:00:00 node7 kernel: mlx5_0:dump_cqe:272:(pid 0): dump error cqe",
          "Dec 07 12:00:00 node7 kernel: 00000000: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"],
         [("rdma_completion_error", "warn", "mlx5_0")]),
        # Open MPI openib: its own status name and number, no device named
        (["[[31705,1],7][btl_openib_component.c:3644:handle_wc] from cn01 to: cn02 error polling LP CQ with status "
          "RETRY EXCEEDED ERROR status number 12 for wr_id 1efd4800 opcode 1  vendor error 129 qp_idx 3"],
         [("rdma_completion_error", "warn", "")]),
        # Mooncake's worker: the slice's local NIC
        (["E1207 12:00:00.123456  4567 worker_pool.cpp:245] Worker: Process failed for slice (opcode: 1, source_addr: "
          "0x7f2c00000000, length: 65536, dest_addr: 0x7f3c00000000, local_nic: mlx5_4, peer_nic: 10.0.0.2:12345@mlx5_4, "
          "dest_rkey: 2097408, retry_cnt: 0): transport retry counter exceeded"],
         [("rdma_completion_error", "warn", "mlx5_4")]),
        # Mooncake's handshake: RTR timed out, the device its context listed named
        (["I1207 09:13:01.000001 31337 rdma_context.cpp:125] RDMA device: mlx5_3, LID: 0, GID: (GID_Index 3) "
          "00:00:00:00:00:00:00:00:00:00:ff:ff:0a:00:00:03",
          "E1207 09:14:02.118200 31344 rdma_endpoint.cpp:385] [Handshake] Failed to modify QP to RTR, check mtu, gid, "
          "peer lid, peer qp num: Connection timed out [110]"],
         [("rdma_setup_failed", "warn", "mlx5_3")]),
        # NVSHMEM IBGDA: the devx INIT2RTR refused, its helper's line the same failure (no device named)
        (["/opt/nvshmem/src/modules/transport/ibgda/ibgda.cpp:1395: non-zero status: 121 ",
          "Error in mlx5dv_devx_obj_modify for INIT2RTR_QP with syndrome 2a4f1c"],
         [("rdma_setup_failed", "warn", "")]),
        # UCX: the device could not be opened
        (["[1733572800.223456] [node7:4242:0]        ib_device.c:1305 UCX  ERROR ibv_open_device(mlx5_2) failed: "
          "Permission denied"],
         [("rdma_setup_failed", "warn", "mlx5_2")]),
        # Open MPI's UCX PML: the endpoint to a peer could not be created
        (["[cn05:12345] pml_ucx.c:424  Error: ucp_ep_create(proc=12) failed: Destination is unreachable"],
         [("rdma_setup_failed", "warn", "")]),
        # Mooncake's device checks: a port not Active, GPU memory it cannot register
        (["W1207 09:13:01.000001 31337 rdma_context.cpp:431] Device mlx5_6 port not active",
          "E1207 09:13:01.000002 31337 rdma_context.cpp:489] DMA BUF supported required for GPU RDMA without "
          "nvidia-peermem on CUDA device 0 mapped to RNIC mlx5_7"],
         [("rdma_setup_failed", "warn", "mlx5_6"), ("rdma_setup_failed", "warn", "mlx5_7")]),
        # perftest's own line stays perftest's
        ([" Failed to modify QP 123 to RTR"], [("rdma_test_failed", "warn", "")]),
    ],
)
def test_class_fault(lines: list[str], want: list[Found], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, found = _doctor("\n".join(lines), tmp_path, capsys)
    assert code == 1
    assert sorted(_said(found)) == sorted(want)


def test_side_and_reason_said(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A local error says it is the program's request; the RTR failure keeps the errno text and the step."""
    _, found = _doctor("[ 81.5] mlx5_1/1: QP 9 error: local length error (0x8e 0x0 0x0)", tmp_path, capsys)
    assert "program's own request" in str(found[0]["evidence"]["side"])  # type: ignore[index]
    _, found = _doctor("E1207 09:14:02.118200 31344 rdma_endpoint.cpp:405] [Handshake] Failed to modify QP to RTS, "
                       "check mtu, gid, peer lid, peer qp num: Invalid argument [22]", tmp_path, capsys)
    evidence = found[0]["evidence"]
    assert (evidence["step"], evidence["reason"]) == ("modify QP to RTS", "Invalid argument [22]")  # type: ignore[index]


@pytest.mark.parametrize(
    "text",
    [
        "node7:4242:4300 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]; OOB eth0:10.0.0.7<0>",
        "#      Transport: rc_mlx5\n#         Device: mlx5_0:1\n#           Type: network",
        "I1207 09:13:01.000001 31337 rdma_context.cpp:426] Find best gid index: 3 on mlx5_3/\n"
        "I1207 09:14:02.118200 31344 rdma_endpoint.cpp:118] Connection has been established",
        "W1207 09:13:01.000001 31337 rdma_context.cpp:530] User-specified GID index 3 on mlx5_0/1 has no associated "
        "network device, may not be optimal for RDMA operations",
        "infiniband mlx5_0: mlx5_ib_test_wc:290:(pid 1): Error -95 while trying to test write-combining support",
    ],
)
def test_healthy_lines_quiet(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, found = _doctor(text, tmp_path, capsys)
    assert code != 2
    assert not [f for f in found if f["severity"] in ("warn", "critical")]
