"""Newcomer run 56 (NBF1): a check never calls clear what another confirmed (the bus loss an Xid 79 reported),
a port's lone fatal AER message is a finding, a repeated Xid says how many times."""

import json
from pathlib import Path

import pytest

from gpuvet.cli.app import main

_XID79 = ("[  812.441215] NVRM: Xid (PCI:0000:9d:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n"
          "[  812.441290] NVRM: GPU 0000:9d:00.0: GPU has fallen off the bus.\n")
_AER_ALONE = "[  812.502117] pcieport 0000:9c:00.0: AER: Uncorrected (Fatal) error received: 0000:9d:00.0\n"
_XID94 = ("gpu-node-014: [Wed Dec  2 09:41:07 2026] NVRM: Xid (PCI:0000:1b:00): 94, pid=221873, name=python3, "
          "Contained: SM (0x1). RST: No, D-RST: No\n")


def _doctor(tmp_path: Path, text: str, capsys: pytest.CaptureFixture[str]) -> dict:
    path = tmp_path / "dmesg.txt"
    path.write_text(text)
    main(["doctor", "--from", str(path), "--json"])
    return json.loads(capsys.readouterr().out)


def _step(data: dict, check: str) -> dict:
    return next(s for s in data["steps"] if s["check"] == check)


def test_kernel_messages_never_clears_the_bus_loss_xid_log_confirmed(tmp_path, capsys):
    data = _doctor(tmp_path, _XID79, capsys)
    assert _step(data, "xid_log")["status"] == "confirmed"
    said = _step(data, "kernel_messages")
    assert said["status"] == "clear"
    assert "bus-loss" not in said["summary"] and "Xid 79: xid_log" in said["summary"]


def test_kernel_messages_without_a_bus_loss_still_rules_it_out(tmp_path, capsys):
    data = _doctor(tmp_path, _XID94.split(": ", 1)[1], capsys)
    assert "bus-loss message" in _step(data, "kernel_messages")["summary"]


def test_a_ports_lone_fatal_aer_message_is_a_finding(tmp_path, capsys):
    found = [f for f in _doctor(tmp_path, _AER_ALONE, capsys)["findings"] if f["cause"] == "pcie_aer_fatal"]
    assert [f["module"] for f in found] == ["0000:9C:00.0"]
    assert found[0]["evidence"]["uncorrectable"] == 1 and "0000:9D:00.0" in found[0]["evidence"]["below"]


def test_a_lone_message_is_not_counted_beside_its_severity_line(tmp_path, capsys):
    text = _AER_ALONE + ("[  812.502200] pcieport 0000:9c:00.0: PCIe Bus Error: severity=Uncorrected (Fatal), "
                         "type=Transaction Layer, (Receiver ID)\n")
    found = [f for f in _doctor(tmp_path, text, capsys)["findings"] if f["cause"] == "pcie_aer_fatal"]
    assert [f["evidence"]["uncorrectable"] for f in found] == [1]


def test_a_repeated_xid_says_how_many_times(tmp_path, capsys):
    data = _doctor(tmp_path, _XID94 * 2, capsys)
    (xid,) = [f for f in data["findings"] if f["evidence"].get("xid") == 94]
    assert xid["evidence"]["times"] == 2
    once = _doctor(tmp_path, _XID94, capsys)
    assert [f["evidence"].get("times") for f in once["findings"] if f["evidence"].get("xid") == 94] == [None]


_MEMLOCK = ("[1733503214.118734] [gpu-node-007:51234:0]       ib_iface.c:1007 UCX  ERROR ibv_create_cq(cqe=4096) failed: "
            "Cannot allocate memory : Please set max locked memory (ulimit -l) to 'unlimited' (current: 64 kbytes)\n")


def test_ucx_memlock_failure_is_the_memlock_limit(tmp_path, capsys):
    data = _doctor(tmp_path, _MEMLOCK, capsys)
    (found,) = [f for f in data["findings"] if f["cause"] == "rdma_memlock_limit"]
    assert found["severity"] == "warn" and "limits.conf" in found["fix"]
    assert (found["evidence"]["call"], found["evidence"]["limit"], found["evidence"]["line"]) == \
        ("ibv_create_cq", "64 kbytes", 1)


def test_ucx_memlock_beside_a_completion_error_keeps_both(tmp_path, capsys):
    text = ("[1733503214.118734] [gpu-node-007:51234:0]       ib_mlx5_log.c:177  UCX  ERROR   Transport retry count "
            "exceeded on mlx5_1:1/IB (synd 0x15 vend 0x81 hw_synd 0/0)\n") + _MEMLOCK
    causes = sorted(f["cause"] for f in _doctor(tmp_path, text, capsys)["findings"])
    assert causes == ["rdma_completion_error", "rdma_memlock_limit"]
