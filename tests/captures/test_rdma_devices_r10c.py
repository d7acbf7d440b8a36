"""R10C (issue 46): RDMA devices as NCCL and libibverbs report them, one verdict per fact. Lines written in the
tools' own formats: libibverbs' 'couldn't stat' / 'couldn't read ABI version' (rdma-core libibverbs/init.c), NCCL's
'Call to ibv_open_device failed' (misc/ibvwrap.cc), 'NET/IB : Unable to open device' and 'NET/IB : Using …'
(transport/net_ib.cc), its async 'port error' event and completion status 12 (NVIDIA/nccl transport/net_ib.cc)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.helpers import doctor_triples

AR = Path(__file__).parents[1] / "data" / "captures" / "fresh_ar"
_H = "gpu-node-07"


def _loud(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> set[tuple[str, str, str]]:
    code, found = doctor_triples(text, tmp_path, capsys)
    assert code != 2, text
    return {(cause, sev, module) for cause, sev, module in found if sev in ("warn", "critical")}


def _stat(dev: str, prefix: str = "") -> str:
    return f"{prefix}libibverbs: Warning: couldn't stat '/sys/class/infiniband/{dev}'.\n"


@pytest.mark.parametrize(
    "text",
    [
        "".join(_stat(f"mlx5_{n}") for n in range(4, 8)),
        "".join(_stat(f"mlx5_{n}", "[1,2]<stderr>:") for n in range(2, 5)),
        "Dec  7 10:01:02 node1 python[311]: " + _stat("mlx5_3"),
        "libibverbs: Warning: couldn't read ABI version of uverbs2\n",
    ],
)
def test_devices_libibverbs_cannot_reach_are_warn(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    loud = _loud(text, tmp_path, capsys)
    assert {(c, s) for c, s, _ in loud} == {("rdma_devices_partly_unusable", "warn")}


def _nccl(dev: int, msg: str, pid: int = 4100) -> str:
    return f"{_H}:{pid}:{pid} [{dev}] {msg}\n"


def test_some_hcas_unopenable_while_nccl_uses_others_is_warn(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (
        _nccl(0, "misc/ibvwrap.cc:212 NCCL WARN Call to ibv_open_device failed")
        + _nccl(0, "transport/net_ib.cc:149 NCCL WARN NET/IB : Unable to open device mlx5_7")
        + _nccl(0, "NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB eth0:10.1.0.7<0>")
    )
    loud = _loud(text, tmp_path, capsys)
    assert loud and {(c, s) for c, s, _ in loud} == {("rdma_devices_partly_unusable", "warn")}
    assert all(m.startswith(_H) for _, _, m in loud)


def test_no_hca_usable_stays_critical(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = _nccl(0, "misc/ibvwrap.cc:212 NCCL WARN Call to ibv_open_device failed") + _nccl(
        0, "transport/net_ib.cc:149 NCCL WARN NET/IB : Unable to open device mlx5_0"
    )
    loud = _loud(text, tmp_path, capsys)
    assert ("nccl_ib_device_failed", "critical") in {(c, s) for c, s, _ in loud}


def _port_error(pid: int, host: str = _H) -> str:
    return f"{host}:{pid}:{pid + 70} [0] transport/net_ib.cc:93 NCCL WARN NET/IB : Got async event : port error\n"


def test_port_error_then_retry_exceeded_is_the_port_down(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = "".join(_port_error(3400 + r) for r in range(8)) + (
        "gpu-node-09:7307:7318 [4] transport/net_ib.cc:1238 NCCL WARN NET/IB : Got completion from peer "
        "10.0.0.7<37948> with error 12, opcode 2, len 1, vendor err 129 (Recv)\n"
    )
    loud = _loud(text, tmp_path, capsys)
    assert ("nic_port_down", "critical", _H) in loud


def test_port_error_alone_stays_warn(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    loud = _loud(_port_error(3400), tmp_path, capsys)
    assert loud and all(s == "warn" for _, s, _ in loud)


def test_an_elided_host_keeps_its_tail(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    loud = _loud("".join(_port_error(3400 + r, "...-48") for r in range(2)), tmp_path, capsys)
    assert {m for _, _, m in loud} == {"...-48"}


@pytest.mark.parametrize(
    ("name", "cause", "severity"),
    [
        ("nccl_horovod3333_roce_ibverbs_stat_warnings", "rdma_devices_partly_unusable", "warn"),
        ("nccl_imagereward65_ibv_open_device_failed", "rdma_devices_partly_unusable", "warn"),
        ("nccl_litllama380_ib_async_port_error", "nic_port_down", "critical"),
    ],
)
def test_batch_ar_rows(name: str, cause: str, severity: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    loud = _loud((AR / f"{name}.txt").read_text(), tmp_path, capsys)
    assert (cause, severity) in {(c, s) for c, s, _ in loud}
    assert "critical" not in {s for _, s, _ in loud} or severity == "critical"


def _new_event(event: str, pid: int = 3400) -> str:
    """NCCL 2.19+'s shape: 'NET/IB : <dev>:<port> Got async error event: <event>'."""
    return f"{_H}:{pid}:{pid + 70} [0] transport/net_ib.cc:110 NCCL WARN NET/IB : mlx5_0:1 Got async error event: {event}\n"


@pytest.mark.parametrize("event", ["port active", "client reregistration", "GID table change", "LID change", "SM change"])
def test_newer_nccl_benign_events_stay_clear(event: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert not _loud(_new_event(event), tmp_path, capsys)


def test_newer_nccl_port_error_then_retry_exceeded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = "".join(_new_event("port error", 3400 + r) for r in range(4)) + (
        "gpu-node-09:7307:7318 [4] transport/net_ib.cc:1238 NCCL WARN NET/IB : Got completion from peer "
        "10.0.0.7<37948> with error 12, opcode 2, len 1, vendor err 129 (Recv)\n"
    )
    loud = _loud(text, tmp_path, capsys)
    assert ("nic_port_down", "critical", f"{_H} mlx5_0:1") in loud
