"""An NCCL_DEBUG log whose every 'host:pid:tid [dev]' prefix names one host is that host's file (issue 46, batch N):
inventory names it; a log of two hosts or of masked names names none. Lines written in NCCL's INFO format; hosts
and pids made up."""

from __future__ import annotations

from pathlib import Path

from gpuvet.captures.read import read

_ONE = ("gpu-r7:41200:41200 [0] NCCL INFO Bootstrap : Using eth0:10.20.0.7<0>\n"
        "gpu-r7:41200:41200 [0] NCCL INFO NET/IB : Using [0]mlx5_2:1/RoCE ; OOB eth0:10.20.0.7<0>\n"
        "gpu-r7:41202:41202 [1] NCCL INFO Using network IB\n")


def _host(tmp_path: Path, text: str) -> str | None:
    path = tmp_path / "nccl.log"
    path.write_text(text)
    return read(str(path)).host


def test_one_host_log_names_its_host(tmp_path: Path) -> None:
    assert _host(tmp_path, _ONE) == "gpu-r7"


def test_two_hosts_or_masked_names_name_none(tmp_path: Path) -> None:
    assert _host(tmp_path, _ONE + "gpu-r8:5120:5120 [0] NCCL INFO Using network IB\n") is None
    assert _host(tmp_path, _ONE.replace("gpu-r7", "<hostname>")) is None
    assert _host(tmp_path, _ONE.replace("gpu-r7", "host")) is None  # a word standing for any host


def test_a_multi_host_logs_real_short_names_are_kept_and_placeholders_dropped() -> None:
    """node1, host2, server3 are real hosts a cluster names; only words standing for any host are masked."""
    from gpuvet.backends.capture.backend import _MASKED

    assert not any(_MASKED.match(h) for h in ("node1", "host2", "server3", "gpu-r7"))
    assert all(_MASKED.match(h) for h in ("host", "hostname", "localhost", "<host>", "<hostname>", "xxx", "XXXX", "***"))
