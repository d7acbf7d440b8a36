"""Batch L's condensed Xid records (issue 46): a user's summary of kern.log's Xid lines, each kept as its stamp,
'Xid 31', the engine and the MMU's fault type (FAULT_PDE …) with no bus id and no 'NVRM:', read as the Xid on
a module the log does not name; a line without the fault type, or a poster's question, is not such a record (a
poster's sentence naming an Xid is read_quoted's, said as such)."""

from __future__ import annotations

from pathlib import Path

from gpuvet.captures.kernel import NO_BUS
from gpuvet.cli.app import main
from tests.support.helpers import capture_findings


def _condensed(stamp: str) -> str:
    return (f"{stamp} Xid 31 GPC0 GPCCLIENT_T1_3  @ 0x7f21_40a00000  FAULT_PTE ACCESS_TYPE_VIRT_WRITE\n"
            f"{stamp} Xid 31 GPC2 GPCCLIENT_T1_11 @ 0x7f21_40b00000  FAULT_PDE ACCESS_TYPE_VIRT_READ\n")


def test_condensed_xid_records_with_the_mmus_fault_type_are_xid_31_on_an_unnamed_module(tmp_path: Path) -> None:
    for stamp in ("09-12 02:14:55", "2025-09-12T02:14:55", "[ 8812.004411]"):
        text = "```\n" + _condensed(stamp) + "```\n"
        assert capture_findings(tmp_path, text) == {("xid", NO_BUS): "warn"}, stamp


def test_an_xid_named_without_the_fault_type_or_asked_about_is_not_read_as_one(tmp_path: Path) -> None:
    path = tmp_path / "xids.txt"
    path.write_text("09-12 02:14:55 Xid 31 GPC0 GPCCLIENT_T1_3 @ 0x7f21_40a00000 ACCESS_TYPE_VIRT_WRITE\n"
                    "09-12 02:15:01 Xid 31 with FAULT_PDE again, is this the driver?\n")
    assert main(["doctor", "--from", str(path), "--json"]) == 2  # nothing in it read: refused, never an Xid
