"""NVRM lines as older drivers print them (issue 46 dev set): the Xid line without 'PCI:' in front of
the bus id, read as the current line is. Written in the drivers' wording; bus ids made up."""

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
