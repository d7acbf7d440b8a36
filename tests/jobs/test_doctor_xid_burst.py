"""Issue 46 (batch K): the same application Xid on many modules of one node at once is one fault of the work
that ran on them (doctor/xids.burst), said beside each module's Xid; fewer modules, or a hardware Xid, is not."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import capture_findings

_BUSES = ("18", "3b", "86", "af", "d8")


def _log(code: int, buses: tuple[str, ...]) -> str:
    return "".join(f"[ 6120.{i:06d}] NVRM: Xid (PCI:0000:{b}:00): {code}, pid=9{i:03d}, name=python3, "
                   f"Ch 00000008, intr 10000000. MMU Fault: ENGINE GRAPHICS GPC1 GPCCLIENT_T1_3 faulted\n"
                   for i, b in enumerate(buses))


def test_one_application_xid_on_four_modules_or_more_is_a_node_wide_burst(tmp_path: Path) -> None:
    for buses in (_BUSES[:4], _BUSES):
        got = capture_findings(tmp_path, _log(31, buses))
        assert got.pop(("xid_burst_across_modules", None)) == "critical"
        assert got == {("xid", f"0000:{b.upper()}:00.0"): "warn" for b in buses}


def test_fewer_modules_or_a_hardware_xid_is_no_burst(tmp_path: Path) -> None:
    assert ("xid_burst_across_modules", None) not in capture_findings(tmp_path, _log(31, _BUSES[:3]))
    assert ("xid_burst_across_modules", None) not in capture_findings(tmp_path, _log(79, _BUSES))
