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


# --- several files given to one doctor --from -----------------------------------------------------------------

_XID = "[ {t}] NVRM: Xid (PCI:0000:3b:00): 79, pid=0, GPU has fallen off the bus.\n"


def _files(tmp_path: Path, capsys: pytest.CaptureFixture[str], **texts: str) -> dict:
    args = []
    for name, text in texts.items():
        (tmp_path / f"{name}.log").write_text(text)
        args += ["--from", str(tmp_path / f"{name}.log")]
    main(["doctor", *args, "--json"])
    return json.loads(capsys.readouterr().out)


def _syslog(host: str) -> str:
    return "".join(f"Dec  6 10:00:0{s} {host} kernel: " + _XID.format(t=f"12{s}.5") for s in (1, 2))


def _lost(data: dict) -> list[tuple[str | None, str]]:
    return sorted(((f.get("host") or ""), f["module"]) for f in data["findings"] if f["cause"] == "module_fell_off_bus")


def test_two_files_of_two_hosts(tmp_path, capsys):
    """Each file's syslog host column names its host: one finding per host, and a note per file."""
    data = _files(tmp_path, capsys, a=_syslog("gpu-node1"), b=_syslog("gpu-node2"))
    assert _lost(data) == [("gpu-node1", "0000:3B:00.0"), ("gpu-node2", "0000:3B:00.0")]
    assert sum("host gpu-node1's (the host the file names" in n for n in data["notes"]) == 1


def test_two_files_naming_no_host_are_kept_apart_by_name(tmp_path, capsys):
    """Two bare dmesg excerpts naming one bus id: each file's name is its place, said in a note."""
    data = _files(tmp_path, capsys, a=_XID.format(t="1.5"), b=_XID.format(t="2.5"))
    assert _lost(data) == [("a.log", "0000:3B:00.0"), ("b.log", "0000:3B:00.0")]
    assert sum("0000:3B:00.0 also named by another file given: kept apart" in n for n in data["notes"]) == 2


def test_two_files_of_one_host_merge(tmp_path, capsys):
    """Both files name the same host: one machine's, one finding, no host key."""
    data = _files(tmp_path, capsys, a=_syslog("gpu-node1"), b=_syslog("gpu-node1"))
    assert _lost(data) == [("", "0000:3B:00.0")]
    assert not any("kept apart" in n for n in data["notes"])


def test_files_naming_other_modules_are_unchanged(tmp_path, capsys):
    """Two files with nothing in common: read as before (no host key, no note)."""
    other = _XID.format(t="3.5").replace("3b:00", "5e:00")
    data = _files(tmp_path, capsys, a=_XID.format(t="1.5"), b=other)
    assert _lost(data) == [("", "0000:3B:00.0"), ("", "0000:5E:00.0")]
    assert not any("kept apart" in n for n in data["notes"])


def test_two_files_of_one_name_are_placed_by_path(tmp_path, capsys):
    """node1/dmesg.txt and node2/dmesg.txt: the same file name, so each is placed by its path."""
    paths = []
    for node in ("node1", "node2"):
        (tmp_path / node).mkdir()
        (tmp_path / node / "dmesg.txt").write_text(_XID.format(t="1.5"))
        paths += ["--from", str(tmp_path / node / "dmesg.txt")]
    main(["doctor", *paths, "--json"])
    hosts = sorted(h for h, _ in _lost(json.loads(capsys.readouterr().out)))
    assert hosts == [str(tmp_path / "node1" / "dmesg.txt"), str(tmp_path / "node2" / "dmesg.txt")]


_REPORT = ("____________________________________________\n\nStart of NVIDIA bug report log file.  Please include this "
           "file, along\nwith a detailed description of your problem.\n\nnvidia-bug-report.sh Version: 35249876\n\n"
           "Date: Sat Dec  5 10:00:00 UTC 2026\nuname: Linux {host} 5.15.0-91-generic #101-Ubuntu SMP x86_64 "
           "GNU/Linux\ncommand line flags:\n\n")


def test_bug_reports_of_two_hosts(tmp_path, capsys):
    """Each bug report's header names its machine (uname -a's node name): each report's Xid is its host's."""
    data = _files(tmp_path, capsys, a=_REPORT.format(host="dgx-a") + _XID.format(t="1.5"),
                  b=_REPORT.format(host="dgx-b") + _XID.format(t="2.5"))
    assert _lost(data) == [("dgx-a", "0000:3B:00.0"), ("dgx-b", "0000:3B:00.0")]


def test_fabric_manager_journal_of_two_hosts(tmp_path, capsys):
    """A central syslog of two hosts' fabric managers, each logging one SXid on its own switch 0000:86:00.0:
    one finding per host (the fabric manager's events are grouped by doctor, host by host)."""
    line = ("Mar 02 08:14:0{s} gpu-node{h} nv-fabricmanager[5183]: detected NVSwitch non-fatal error 12028 on fid 0 "
            "on NVSwitch pci bus id 00000000:86:00.0 physical id 3 port 6{h}\n")
    text = "".join(line.format(s=s, h=h) for s in (1, 2) for h in (1, 2))
    found = _findings(tmp_path, text, capsys, "nvswitch_sxid")
    assert sorted((f["host"], f["module"], f["evidence"]["times"]) for f in found) == [
        ("gpu-node1", "nvswitch 0000:86:00.0 SXid 12028", 2), ("gpu-node2", "nvswitch 0000:86:00.0 SXid 12028", 2)]
    one = _findings(tmp_path, "".join(line.format(s=s, h=1) for s in (1, 2)), capsys, "nvswitch_sxid")
    assert len(one) == 1 and "host" not in one[0]
