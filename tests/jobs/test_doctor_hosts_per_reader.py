"""A log of two hosts gives each host's findings apart for every reader that groups by module as it reads
(issue 46: never merge without a word): the kernel's PCIe AER devices, NVSwitch SXids, a program's error on
'device 0', the GPU monitors' Xids (device plugin, gpud). A log of one host reads as it always did (no host key)."""

import json
from pathlib import Path

import pytest

from gpuvet.cli.app import main

_AER = ("[ 100.1] pcieport 0000:00:01.0: AER: Uncorrected (Fatal) error received: 0000:3b:00.0\n"
        "[ 100.2] nvidia 0000:3b:00.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, "
        "(Requester ID)\n"
        "[ 100.3] nvidia 0000:3b:00.0:   device [10de:2330] error status/mask=00004000/00000000\n"
        "[ 100.4] nvidia 0000:3b:00.0:    [14] CmpltTO                (First)\n")
_SXID = "[ 200.1] nvidia-nvswitch3: SXid (PCI:0000:05:00.0): 20034, Fatal, Link 30 LTSSM Fault Up\n"
_APP = "RuntimeError: CUDA error: an illegal memory access was encountered on device 0\n"
_PLUGIN = ("I1206 10:00:00.000 health.go:120] XidCriticalError: Xid=79 on "
           "Device=GPU-3f1c2b4e-aaaa-bbbb-cccc-1234567890ab, the device will go unhealthy.\n")
_GPUD = "XID 79(GPU has fallen off the bus) detected on PCI:0000:ae:00\n"


def _pdsh(text: str, hosts: tuple[int, ...] = (1, 2)) -> str:
    """Each line once per host, pdsh's 'nodeN: ' before it, the hosts' lines interleaved."""
    return "".join(f"node{h}: {line}\n" for line in text.splitlines() for h in hosts)


def _findings(tmp_path: Path, text: str, capsys: pytest.CaptureFixture[str], cause: str) -> list[dict]:
    path = tmp_path / "two_hosts.log"
    path.write_text(text)
    main(["doctor", "--from", str(path), "--json"])
    return [f for f in json.loads(capsys.readouterr().out)["findings"] if f["cause"] == cause]


@pytest.mark.parametrize(("text", "cause", "module"), [
    (_pdsh(_AER), "pcie_aer_fatal", "0000:3B:00.0"),
    (_pdsh(_SXID * 2), "nvswitch_sxid_fatal", "nvswitch3 0000:05:00.0 SXid 20034"),
    (_pdsh(_APP * 2), "application_cuda_error", "CUDA device 0 (process view)"),
    (_pdsh(_PLUGIN * 2), "module_fell_off_bus", "GPU-3f1c2b4e-aaaa-bbbb-cccc-1234567890ab"),
], ids=["aer", "sxid", "app_errors", "device_plugin"])
def test_two_hosts_one_module_each(tmp_path, capsys, text, cause, module):
    """One module named alike on node1 and node2: two findings, each with its host."""
    found = _findings(tmp_path, text, capsys, cause)
    assert sorted((f["host"], f["module"]) for f in found) == [("node1", module), ("node2", module)]


@pytest.mark.parametrize(("text", "cause"), [
    (_AER, "pcie_aer_fatal"), (_SXID * 2, "nvswitch_sxid_fatal"), (_APP * 2, "application_cuda_error"),
    (_PLUGIN * 2, "module_fell_off_bus")], ids=["aer", "sxid", "app_errors", "device_plugin"])
def test_one_host_unchanged(tmp_path, capsys, text, cause):
    """The same lines of one host, bare or under one pdsh host: one finding, no host key."""
    for given in (text, _pdsh(text, (1,))):
        found = _findings(tmp_path, given, capsys, cause)
        assert len(found) == 1 and "host" not in found[0]


def test_gpud_syslog_of_two_hosts(tmp_path, capsys):
    """gpud's Xid event in a central syslog: the host column names each host's module."""
    text = "".join(f"Dec  6 10:00:0{h} gpu-node{h} gpud[12]: {_GPUD}" for h in (1, 2, 1, 2))
    found = _findings(tmp_path, text, capsys, "module_fell_off_bus")
    assert sorted((f["host"], f["module"]) for f in found) == [("gpu-node1", "0000:AE:00.0"),
                                                               ("gpu-node2", "0000:AE:00.0")]


def test_aer_port_and_gpu_judged_per_host(tmp_path, capsys):
    """node1's GPU has AER errors, node2's same bus id none: node2's port reports for a device node2's log does
    not name as a GPU, so only node1's module is a GPU finding (each host's devices judged among its own)."""
    node2 = "[ 100.1] pcieport 0000:00:01.0: AER: Corrected error received: 0000:3b:00.0\n" * 2
    text = "".join(f"node1: {line}\n" for line in _AER.splitlines()) + "".join(f"node2: {line}\n"
                                                                            for line in node2.splitlines())
    found = _findings(tmp_path, text, capsys, "pcie_aer_fatal")
    assert [(f["host"], f["module"]) for f in found] == [("node1", "0000:3B:00.0")]


def test_app_error_counts_per_host(tmp_path, capsys):
    """A traceback's error counted per host: node1's three lines, node2's one."""
    text = "".join(f"node1: {_APP}" for _ in range(3)) + f"node2: {_APP}"
    found = _findings(tmp_path, text, capsys, "application_cuda_error")
    assert sorted((f["host"], f["evidence"]["times"]) for f in found) == [("node1", 3), ("node2", 1)]
