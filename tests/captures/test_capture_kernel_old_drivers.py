"""Old and plain log wordings (issue 46 dev set): the Xid line older drivers print without 'PCI:' in front of
the bus id, read as the current line is; the fabric manager's own log saying it aborts. Written in the
drivers' and the fabric manager's wording; bus ids and dates made up."""

from __future__ import annotations

from gpuvet.captures import kernel
from gpuvet.captures.text import clean


def test_an_xid_line_without_pci_before_its_bus_id_is_an_xid() -> None:
    log = ("Mar  3 11:02:17 n07 kernel: [912.1] NVRM: Xid (0000:82:00): 48, An uncorrectable double bit error (DBE) "
           "has been detected on GPU in the framebuffer at partition 2, subpartition 1.\n"
           "[77.3] NVRM: Xid (0000:03:00): 13, 0003 00000000 0000a097 00001b0c 00001000 00000080\n"
           "[80.0] NVRM: Xid (PCI:0000:04:00): 31, Ch 00000010, engmask 00000101\n")
    got = kernel.parse(clean(log).lines)
    assert [(x.bus_id, x.code) for x in got.xids] == [("0000:82:00.0", 48), ("0000:03:00.0", 13), ("0000:04:00.0", 31)]


def test_the_fabric_managers_own_log_saying_it_aborts_is_its_failure() -> None:
    """/var/log/fabricmanager.log has no systemd line: its own '…, aborting fabric manager' is the failure."""
    from gpuvet.captures import fabric_manager

    log = ("[Jan 09 2024 08:00:01] [INFO] [tid 901] Fabric Manager version 535.129.03 is running with the following "
           "configuration options\n"
           "[Jan 09 2024 08:00:03] [ERROR] [tid 901] detected number of NVSwitches don't match with any supported "
           "system topology, aborting fabric manager\n")
    got = fabric_manager.parse(clean(log).lines)
    assert got.last_state is not None and (got.last_state.kind, got.last_state.line) == ("failed", 2)
