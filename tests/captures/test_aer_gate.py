"""The AER reader tests a line for a bit's hint only where a line of the other patterns names a device (issue 43:
a bug report's 'recover' is the NVIDIA driver's Xid 154, and that test of every line was most of its AER time):
the same answer either way."""

from __future__ import annotations

from gpuvet.captures import aer
from gpuvet.captures.formats import FORMATS
from gpuvet.captures.marks import Marks
from gpuvet.captures.text import clean

XID_154 = ("[ 8007.43] NVRM: Xid (PCI:0000:9a:00): 154, GPU recovery action changed from 0x0 (None) to 0x2 "
           "(Node Reboot Required)")
BIT = "[ 9.1] pcieport 0000:00:01.0: AER:   [ 0] RxErr"
NOISE = "[ 1.000000] usb 1-1.3: new high-speed USB device number 7 using xhci_hcd\n" * 1200  # past 64 KiB: triples


def _read(text: str) -> aer.AerParse:
    lines = clean(text).lines
    marks = Marks(lines)
    marks.settle([g for f in FORMATS for g in f.groups()])
    return aer.parse(lines, marks)


def test_a_bit_with_no_device_named_and_a_drivers_recovery_word_read_nothing() -> None:
    got = _read(NOISE + XID_154 + "\n" + BIT + "\n")
    assert (got.devices, got.claimed) == ({}, set())


def test_a_bit_after_its_device_is_read_as_before() -> None:
    text = NOISE + XID_154 + "\n" + ("[ 9.0] pcieport 0000:00:01.0: AER: Corrected error message received from "
                                     "0000:03:00.0\n") + BIT + "\n"
    got = _read(text)
    assert got.devices["0000:00:01.0"].kinds == ["RxErr"]
    assert got == aer.parse(clean(text).lines)  # with no marks: every word tested, the same parse


def test_a_recovery_line_alone_names_its_device() -> None:
    got = _read(NOISE + "[ 9.2] pcieport 0000:00:01.0: AER: device recovery successful\n")
    assert got.devices["0000:00:01.0"].recovered
