"""Review 67b (issue 46) F6: NHC's check messages are read only inside NHC's framing ('Health check failed:',
node-mark-offline, scontrol's Reason=NHC); check_hw_ib with a rate says it fails on a port up at another rate too;
scontrol's NodeName names the node NHC judged."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import doctor_text

WIKI = """\
# nhc.conf excerpt from our wiki: what each check prints when it fails
#   check_hw_eth:  Ethernet device ib0 not detected.
#   check_hw_ib:  No IB port is ACTIVE (LinkUp 100 Gb/sec).
 * || check_hw_eth ib0
 * || check_hw_ib 100
"""
SCONTROL = """\
$ scontrol show node cn042
NodeName=cn042 Arch=x86_64 CoresPerSocket=32
   State=DOWN+DRAIN ThreadsPerCore=2 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A
   Reason=NHC: check_hw_ib:  No IB port is ACTIVE (LinkUp 100 Gb/sec). [root@2024-03-01T10:22:11]
"""


def test_nhcs_messages_quoted_outside_its_framing_are_not_read(tmp_path: Path) -> None:
    code, data = doctor_text(tmp_path, WIKI)
    assert code == 2 or not [f for f in data["findings"] if f["cause"] in ("nic_missing", "nic_port_down")]


def test_scontrols_nhc_reason_is_on_its_node_and_says_the_rate_may_differ(tmp_path: Path) -> None:
    _, data = doctor_text(tmp_path, SCONTROL)
    assert [(r["subject"], r["kind"]) for r in data["roots"]] == [("cn042", "nic_port_down")]
    assert "up at another rate" in str(data["findings"])


HOST_ROOT = "root@gpu-node01:/# nvidia-smi\nFailed to initialize NVML: Unknown Error\n"


def test_a_host_root_shell_at_slash_is_not_a_container(tmp_path: Path) -> None:
    """Review 67b F10 (beside NHC's: both are a host's text read as something else)."""
    _, data = doctor_text(tmp_path, HOST_ROOT)
    assert "container_gpu_access" not in [f["cause"] for f in data["findings"]]
