"""Review findings on the module ledger (issue 44): link faults doctor finds are kept on the
module end of the link; every critical fault kind of the knowledge base has a ladder."""

from __future__ import annotations

from pathlib import Path

from gpuvet.knowledge import Fault, faults, xids
from gpuvet.ledger.build import build_ledger, find_module
from gpuvet.ledger.ladders import load_ladders
from gpuvet.ledger.packet import packet_files
from gpuvet.logbook.store import Logbook
from tests.test_ledger_steps import AT, CAPTURES, doctor_steps

LINKS = """name: f3
base: hgx-h200-8
faults:
  - {kind: link_degraded, between: [gpu1, nvswitch0], factor: 0.5}
  - {kind: link_down, between: [gpu5, nvswitch0]}
"""


def test_doctor_keeps_a_link_fault_on_the_module_end_of_the_link(tmp_path: Path) -> None:
    node = tmp_path / "f3.yaml"
    node.write_text(LINKS)
    book = Logbook(str(tmp_path / "lb.db"))
    _, actions = doctor_steps(book, str(node), AT, symptom=None)  # type: ignore[arg-type]
    assert sorted((a.slot, a.step.fault) for a in actions) == [("gpu1", "link_degraded"), ("gpu5", "link_down")]
    ledger = build_ledger(book.ledger_rows(), load_ladders(), AT)
    slow, down = find_module(ledger, "f3/gpu1"), find_module(ledger, "f3/gpu5")
    assert slow is not None and [r.fault for r in slow.reports] == ["link_degraded"]
    assert down is not None and [r.fault for r in down.reports] == ["link_down"]
    assert find_module(ledger, "f3/nvswitch0") is None  # a switch end is no module
    book.close()


def _names(f: Fault) -> set[str]:
    return {f.kind, *f.doctor, *f.health, *f.watch, *f.validate}


def test_every_critical_fault_of_the_knowledge_base_has_a_ladder_that_does_not_start_at_watch() -> None:
    ladders = load_ladders()
    critical = [f for f in faults().values() if f.severity == "critical"]
    shared = {n for f in faults().values() if f.severity != "critical" for n in _names(f)}  # health's `nic`: both
    assert len(critical) > 20
    for f in critical:
        for name in _names(f):
            ladder = ladders.ladder(name)
            assert ladder is not ladders.default, f"{f.kind}: {name} falls to the default ladder"
            assert name in shared or ladder.steps[0] != "watch", f"{f.kind}: {name} starts at watch"
            assert ladders.rank(max(ladder.steps, key=ladders.rank)) >= ladders.rank("drain"), f.kind
    for code, entry in xids().items():
        if entry.drains:
            assert ladders.ladder(f"xid:{code}").steps[0] != "watch", f"Xid {code} drains yet starts at watch"


def test_silent_data_corruption_drains_now_and_replaces_on_a_repeat() -> None:
    ladders = load_ladders()
    for name in ("silent_data_corruption", "silent_corruption"):  # doctor's cause, validate's finding
        assert ladders.ladder(name).steps == ("drain", "rma")
    assert ladders.ladder("xid:13").steps[0] == "restart_job"  # an application's Xid keeps its own ladder
    assert ladders.ladder("xid:999").steps == ladders.faults["xid:*"].steps  # an Xid NVIDIA does not list


def test_an_xid_is_not_filed_on_another_board_that_a_listing_puts_on_its_bus(tmp_path: Path) -> None:
    book = Logbook(str(tmp_path / "lb.db"))
    files = [str(CAPTURES / "smi_q_x_h100_8gpu.xml"), str(CAPTURES / "dmesg_xid.txt")]
    run, _ = doctor_steps(book, files, AT, symptom=None)  # type: ignore[arg-type]
    # dmesg_xid.txt: PCI 3a:00 is GPU-5c1e9a70…, serial 1654922019876; the XML's 3A:00.0 is serial …0002
    [note] = [n for n in run.notes if n.startswith("bus 0000:3A:00.0:")]
    assert "GPU-5c1e9a70" in note and "1654922019876" in note and "gpu2" in note
    ladders = load_ladders()
    ledger = build_ledger(book.ledger_rows(), ladders, AT)
    listed = find_module(ledger, "1654220000002")
    assert listed is not None and "xid:48" not in {r.fault for r in listed.reports}  # its power cap stays
    packet = packet_files(listed, ledger, ladders, AT)
    assert "3a:00" not in packet["kernel_lines.txt"].decode().lower()
    lost = find_module(ledger, "1654220000003")  # 5D:00.0: both captures agree, its Xid 79 is its own
    assert lost is not None and lost.step is not None and lost.step.fault == "xid:79"
    book.close()
