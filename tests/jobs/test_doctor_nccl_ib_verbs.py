"""doctor on NCCL's NET/IB verbs failures (issue 46, batch N): a failed ibv_* call names its cause by what it
could not get (a queue pair or completion queue, a memory registration, the device), one verdict for the same
line on every rank whether or not its error-return trace follows, and a line quoted without NCCL's prefix
placed on the one host the rest of the log names. The logs are written in NCCL_DEBUG=INFO's format
(host:pid:tid [dev], misc/ibvwrap.cc); hosts, pids and devices are made up."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.helpers import doctor_capture, found_causes

_HEAD = ("gpu-r7:41200:41200 [0] NCCL INFO Bootstrap : Using eth0:10.20.0.7<0>\n"
         "gpu-r7:41200:41200 [0] NCCL INFO NET/IB : Using [0]mlx5_2:1/RoCE ; OOB eth0:10.20.0.7<0>\n"
         "gpu-r7:41200:41200 [0] NCCL INFO Using network IB\nNCCL version 2.18.5+cuda12.2\n")


def _ranks_create_qp() -> str:
    """Three ranks of one process fail the same call; only rank 1's trace reaches init.cc (the paste is cut
    after the others' WARN)."""
    return _HEAD + "".join(
        f"gpu-r7:41200:4130{dev} [{dev}] misc/ibvwrap.cc:191 NCCL WARN Call to ibv_create_qp failed with error "
        "Cannot allocate memory\n" + ("gpu-r7:41200:41301 [1] NCCL INFO transport/net_ib.cc:668 -> 2\n"
                                       "gpu-r7:41200:41301 [1] NCCL INFO init.cc:1115 -> 2\n" if dev == 1 else "")
        for dev in (1, 2, 3))


def _found(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str) -> tuple[set[tuple[str, str]], dict]:
    code, data = doctor_capture(capsys, tmp_path, text, name="nccl.log")
    assert code == 1
    return set(found_causes(data)), data


def test_same_verbs_failure_one_verdict_on_every_rank(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    found, data = _found(capsys, tmp_path, _ranks_create_qp())
    assert found == {("nccl_ib_resource_failed", "gpu-r7 GPU 1, 2, 3")}  # one node's setup: one finding
    (f,) = data["findings"]
    assert f["severity"] == "critical" and "memlock" in f["fix"] and f["evidence"]["times"] == 3


def test_create_cq_is_the_same_class(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    log = _HEAD + "gpu-r7:41200:41310 [0] misc/ibvwrap.cc:166 NCCL WARN Call to ibv_create_cq failed\n"
    found, data = _found(capsys, tmp_path, log)
    assert found == {("nccl_ib_resource_failed", "gpu-r7 GPU 0")}
    assert data["findings"][0]["evidence"]["hca"] == "mlx5_2:1/RoCE"  # the port NET/IB said it uses


def test_memory_registration_and_device(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    reg = _HEAD + ("gpu-r7:41200:41310 [0] NCCL WARN NET/IB : ibv_reg_mr_iova2 failed with error Bad address "
                   "(errno 14)\n")
    found, data = _found(capsys, tmp_path, reg)
    assert found == {("nccl_ib_memory_registration_failed", "gpu-r7 GPU 0")}
    assert "peermem" in data["findings"][0]["fix"]
    dmabuf = _HEAD + "gpu-r7:41200:41310 [0] misc/ibvwrap.cc:207 NCCL WARN Call to ibv_reg_dmabuf_mr failed\n"
    assert _found(capsys, tmp_path, dmabuf)[0] == {("nccl_ib_memory_registration_failed", "gpu-r7 GPU 0")}
    # a device NCCL could not open while the host lists one it uses (mlx5_2): the job runs on fewer paths, warn
    # (session 65, R10C a9438ad: 'N of M devices failed' is one verdict); with none listed as used it stays critical
    dev = _HEAD + "gpu-r7:41200:41310 [0] misc/ibvwrap.cc:120 NCCL WARN Call to ibv_open_device failed\n"
    found, data = _found(capsys, tmp_path, dev)
    assert found == {("rdma_devices_partly_unusable", "gpu-r7 GPU 0")} and data["findings"][0]["severity"] == "warn"
    assert "/dev/infiniband" in data["findings"][0]["fix"]
    alone = _HEAD.replace("NET/IB : Using [0]mlx5_2:1/RoCE", "NET/IB : No device found.") + (
        "gpu-r7:41200:41310 [0] misc/ibvwrap.cc:120 NCCL WARN Call to ibv_open_device failed\n")
    found, data = _found(capsys, tmp_path, alone)
    assert found == {("nccl_ib_device_failed", "gpu-r7 GPU 0")} and data["findings"][0]["severity"] == "critical"


def test_quoted_line_takes_the_logs_one_host(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The poster's title quotes the WARN without its prefix; every prefixed line names gpu-r7: it is gpu-r7's.
    Where the log names two hosts the quoted line stays unplaced."""
    quoted = '"misc/ibvwrap.cc:191 NCCL WARN Call to ibv_create_qp failed"\n\n' + _HEAD
    assert _found(capsys, tmp_path, quoted)[0] == {("nccl_ib_resource_failed", "gpu-r7")}
    two = quoted + "gpu-r8:5120:5120 [0] NCCL INFO NET/IB : Using [0]mlx5_2:1/RoCE ; OOB eth0:10.20.0.8<0>\n"
    assert _found(capsys, tmp_path, two)[0] == {("nccl_ib_resource_failed", "host and GPU not in the log")}


def test_modify_qp_keeps_its_reading(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """ibv_modify_qp is the connection between the ports (GID index, RoCE version, a port down), judged by the
    step its trace reaches as before: not a resource of this node."""
    log = _HEAD + ("gpu-r7:41200:41310 [0] misc/ibvwrap.cc:284 NCCL WARN Call to ibv_modify_qp failed with error "
                   "Connection timed out\ngpu-r7:41200:41310 [0] NCCL INFO init.cc:1115 -> 2\n")
    found = {c for c, _ in _found(capsys, tmp_path, log)[0]}
    assert found and not found & {"nccl_ib_resource_failed", "nccl_ib_memory_registration_failed",
                                  "nccl_ib_device_failed"}
