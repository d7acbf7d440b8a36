"""The module ledger's step on watch's Prometheus endpoint (issue 44): gpuvet_module_ladder_step,
from the module's history in the logbook when watch lists it, and after each of its events."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from prometheus_client import CollectorRegistry

from gpuvet.logbook.store import Logbook
from gpuvet.watch.loop import WatchConfig, Watcher
from gpuvet.watch.prometheus import ExportState, LadderStep, WatchCollector, exposition
from tests.jobs.test_ledger import MOVED, XID79, check, spec

GPU5 = "GPU-sim-hgx-h200-8-gpu5"


def scrape(state: ExportState) -> str:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(WatchCollector(state))
    return exposition(state, registry).decode()


def test_the_gauge_names_the_step_and_fault_and_orders_steps_by_value():
    state = ExportState(steps={"GPU-1": LadderStep("SN-1", "xid:79", "rma", 5)})
    text = scrape(state)
    assert "# TYPE gpuvet_module_ladder_step gauge" in text
    assert ('gpuvet_module_ladder_step{bus_id="",fault="xid:79",model="",module="",serial="SN-1",step="rma",'
            'uuid="GPU-1"} 5.0') in text


def test_watch_serves_the_step_after_an_event_of_the_module(faulty, tmp_path):
    book, state = Logbook(tmp_path / "lb.db"), ExportState()
    Watcher(faulty("hgx-h200-8", [{"kind": "xid", "module": "gpu5", "code": 79, "at": "1h"}]),
            WatchConfig(interval_s=60, duration_s=1.5 * 3600, speedup=None), book, export=state).run()
    step = state.steps[GPU5]
    assert (step.step, step.rank) == ("reboot_node", 3) and step.fault in ("xid:79", "module_lost")
    assert set(state.steps) == {GPU5}  # the healthy modules stand on no ladder
    # gpu5 is lost (off the bus): its step is still served, with the labels it had
    assert f'module="gpu5",serial="",step="reboot_node",uuid="{GPU5}"}} 3.0' in scrape(state)
    book.close()


def test_watch_serves_a_module_step_from_its_history_when_it_lists_it(tmp_path: Path):
    """SN-LEMON logged Xid 79 in node07 two days ago and moved to node08: watch on node08 serves
    its step (reboot_node: one occurrence in 30 days) before any event of this watch."""
    book = Logbook(tmp_path / "lb.db")
    two_days_ago = (datetime.now(UTC) - timedelta(days=2)).isoformat(timespec="seconds")
    check(book, spec(tmp_path, "node07", {3: MOVED}, XID79), two_days_ago)
    from gpuvet.backends.select import open_backend

    state = ExportState()
    backend = open_backend(sim=spec(tmp_path, "node08", {5: MOVED}))
    Watcher(backend, WatchConfig(interval_s=60, duration_s=120, speedup=None), book, export=state).run()
    backend.close()
    assert {u: (s.serial, s.fault, s.step) for u, s in state.steps.items()} == {
        MOVED[0]: ("SN-LEMON", "xid:79", "reboot_node")}
    book.close()


def _sink_on_node08(tmp_path: Path, state: ExportState):
    """A watch's logbook sink on node08, where SN-LEMON (Xid 79 two days ago in node07) now sits."""
    from gpuvet.backends.readings import ModuleIdentity
    from gpuvet.watch.sinks import LogbookSink

    book = Logbook(tmp_path / "lb.db")
    two_days_ago = (datetime.now(UTC) - timedelta(days=2)).isoformat(timespec="seconds")
    check(book, spec(tmp_path, "node07", {3: MOVED}, XID79), two_days_ago)
    sink = LogbookSink.begin(book, {"tool": "gpuvet"}, True, "node08", export=state)
    sink.listed({MOVED[0]: ModuleIdentity("gpu5", MOVED[0], None, "H200-SXM")})
    return book, sink


def test_an_expired_step_leaves_the_gauge_without_waiting_for_an_event(tmp_path: Path):
    """Review finding: the step was refreshed only on an event or a new module, so a step whose window
    ran out was served until the next event. The sink reads the steps again (once a minute of wall
    time while samples come in); 31 days on, the one Xid 79 is out of its 30-day window."""
    state = ExportState()
    book, sink = _sink_on_node08(tmp_path, state)
    assert state.steps[MOVED[0]].step == "reboot_node"
    sink.refresh_steps()  # still standing now
    assert set(state.steps) == {MOVED[0]}
    later = (datetime.now(UTC) + timedelta(days=31)).isoformat(timespec="seconds")
    sink.refresh_steps(later)
    assert state.steps == {} and "gpuvet_module_ladder_step{" not in scrape(state)
    book.close()


def test_the_steps_are_read_again_as_samples_come_in_once_a_minute(tmp_path: Path, monkeypatch):
    from gpuvet.watch import sinks

    state = ExportState()
    book, sink = _sink_on_node08(tmp_path, state)
    calls: list[str | None] = []
    monkeypatch.setattr(sink, "refresh_steps", lambda now_utc=None: calls.append(now_utc))
    sink.samples(0.0, [], False, 0.0)
    assert calls == []  # not yet a minute since the last reading
    sink._steps_at -= sinks.STEPS_WALL_S
    sink.samples(0.0, [], False, 0.0)
    assert calls == [None]
    book.close()


def test_modules_without_a_uuid_are_served_by_their_id(tmp_path: Path):
    from gpuvet.ledger.ladders import Step
    from gpuvet.ledger.record import ModuleStep

    state = ExportState()
    book, sink = _sink_on_node08(tmp_path, state)
    step = Step("reboot_node", 3, "xid:79", 1, 30 * 86400.0, "1st Xid 79")
    sink._export([ModuleStep("node08", "gpu1", None, None, step), ModuleStep("node08", "gpu2", "", None, step)])
    assert {"gpu1", "gpu2"} <= set(state.steps) and "" not in state.steps  # no longer one shared key ""
    book.close()
