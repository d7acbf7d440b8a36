"""A fatal AER error whose recovery failed, where the port's error broadcast reached devices with no error
handler (issue 46, batch P): older kernels print 'device has no AER-aware driver' on each (newer ones "can't
recover (no error_detected callback)"); those are the devices below the port, named in the finding. Written in
the kernel's (drivers/pci/pcie/err.c, aer.c) wording; bus ids and timestamps made up."""

from __future__ import annotations

from gpuvet.captures import aer
from gpuvet.captures.text import clean
from gpuvet.doctor.capture_checks import _aer_unrecovered

_LOG = ("[ 51.200001] pcieport 0000:00:03.1: AER: Uncorrected (Fatal) error received: id=0018\n"
        "[ 51.200010] pcieport 0000:00:03.1: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, "
        "id=0018(Receiver ID)\n"
        "[ 51.200020] pcieport 0000:00:03.1:   device [1022:1453] error status/mask=00040000/00000000\n"
        "[ 51.200030] pcieport 0000:00:03.1:    [18] Malformed TLP          (First)\n"
        "[ 51.200040] pcieport 0000:00:03.1: broadcast error_detected message\n"
        "[ 51.200041] snd_hda_intel 0000:0a:00.1: device has no AER-aware driver\n"
        "[ 51.200042] amdgpu 0000:0a:00.0: device has no AER-aware driver\n"
        "[ 52.210000] pcieport 0000:00:03.1: Root Port link has been reset\n"
        "[ 52.210001] pcieport 0000:00:03.1: AER: Device recovery failed\n")


def test_devices_without_an_aer_driver_are_named_below_the_failed_port_gpu_first() -> None:
    parsed = aer.parse(clean(_LOG).lines)
    assert parsed.unhandled == {"0000:0A:00.1": "snd_hda_intel", "0000:0A:00.0": "amdgpu"}
    assert list(parsed.devices) == ["0000:00:03.1"]  # no error counted on the devices themselves
    got = _aer_unrecovered("dmesg.txt", parsed, parsed.devices["0000:00:03.1"])
    assert got.cause == "pcie_fatal_unrecovered"
    assert str(got.evidence["lost"]).startswith("0000:0A:00.0 (amdgpu: no AER-aware driver), 0000:0A:00.1")


def test_without_the_broadcast_lines_the_device_below_stays_unnamed() -> None:
    parsed = aer.parse(clean("".join(ln + "\n" for ln in _LOG.splitlines() if "AER-aware" not in ln)).lines)
    got = _aer_unrecovered("dmesg.txt", parsed, parsed.devices["0000:00:03.1"])
    assert got.evidence["lost"] == "the device below it is not named in the log"
