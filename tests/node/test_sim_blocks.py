"""Issue 43: the simulated node sampled a run of ticks at once gives exactly what sampling it tick
by tick gives (each kind of random draw has its own stream; the thermal lag and the throttle steps
are solved over the run), and `watch` fed in blocks raises the same events, in the same order, and
writes the same logbook rows as `watch` fed tick by tick."""

from __future__ import annotations

import numpy as np
import pytest

from gpuvet.backends.sim.ticks import Draws, lagged
from gpuvet.checks.blocks import from_samples
from gpuvet.checks.window import module_blocks
from gpuvet.logbook.store import Logbook
from gpuvet.node.thermal import STEP_BITS
from gpuvet.watch.loop import WatchConfig, Watcher, event_json

FAULTS = [{"kind": "thermal_creep", "module": "gpu2", "c_per_watt_per_day": 0.006, "start": "0h"},
          {"kind": "xid", "module": "gpu5", "code": 79, "at": "3h"},
          {"kind": "ecc_rising", "module": "gpu1", "at": "2h", "per_hour": 40},
          {"kind": "mem_clock_flapping", "module": "gpu3"},
          {"kind": "power_cap_low", "module": "gpu4", "watts": 300},
          {"kind": "module_lost", "module": "gpu6", "at": "5h"},
          {"kind": "module_added", "module": "gpu6", "at": "7h"}]
NICS = [{"kind": "nic_errors", "nic": "nic1", "at": "1h", "per_hour": 400},
        {"kind": "nic_port_down", "nic": "nic0", "at": "4h"}]  # NIC events land inside runs of ticks
HOT = [{"kind": "thermal_creep", "module": "gpu2", "c_per_watt_per_day": 0.5, "start": "0h"}]


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUVET_HOME", str(tmp_path / "home"))


def _ticks(interval: float, n: int) -> tuple[list[float], list[bool]]:
    times, t = [], 0.0
    for _ in range(n):
        times.append(t)
        t += interval
    return times, [i % 5 == 0 for i in range(n)]


def _both(faulty, faults, interval, n, block_ticks=400):
    """The same node's samples tick by tick, and in blocks of up to ``block_ticks``."""
    times, slow = _ticks(interval, n)
    one = faulty("hgx-h200-8", faults).telemetry()
    by_tick = [one.sample(t, s) for t, s in zip(times, slow, strict=True)]
    many = faulty("hgx-h200-8", faults).telemetry()
    blocks, i = [], 0
    while i < n:
        b = many.sample_block(times[i:i + block_ticks], slow[i:i + block_ticks])
        blocks.append(b)
        i += len(b)
    return by_tick, blocks


@pytest.mark.parametrize("interval", [60.0, 0.05])
def test_a_run_of_ticks_is_the_ticks_sampled_one_by_one(faulty, interval):
    by_tick, blocks = _both(faulty, FAULTS, interval, 600 if interval == 60 else 300)
    in_blocks = [b.samples(i) for b in blocks for i in range(len(b))]
    assert in_blocks == by_tick
    assert max(len(b) for b in blocks) > 1  # runs were taken
    if interval == 60:  # and cut where the faults fall
        assert [b.times[0] for b in blocks if len(b) == 1] == [3 * 3600.0]  # the Xid's tick alone
        assert any(s.xids == (79,) for tick in in_blocks for s in tick)


def test_a_throttling_module_steps_inside_a_run_as_it_does_tick_by_tick(faulty):
    by_tick, blocks = _both(faulty, HOT, 60.0, 700, block_ticks=700)
    assert [b.samples(i) for b in blocks for i in range(len(b))] == by_tick
    levels = {int(s.throttle) & int(STEP_BITS[2]) for tick in by_tick for s in tick if s.module == "gpu2"}
    assert {0, int(STEP_BITS[1])} <= levels  # it crossed its slowdown point within a run


def test_a_block_reads_as_the_same_samples_gathered_one_by_one(faulty):
    (blocks,) = [_both(faulty, FAULTS, 60.0, 120)[1]]
    b = blocks[0]
    made = module_blocks(b)
    k = len(b.identities)
    for j, mb in enumerate(made):
        samples = [b.samples(i)[j] for i in range(len(b))]
        want = from_samples(samples, [i * k + j for i in range(len(b))])
        got = {f: getattr(mb, f) for f in want.__dataclass_fields__ if f != "arrays"}
        assert got == {f: getattr(want, f) for f in got}


def test_the_lag_solved_over_a_run_is_the_tick_by_tick_recurrence():
    rng = np.random.default_rng(0)
    target = 60 + rng.normal(0, 1, (50, 3))
    before = np.array([np.nan, 55.0, 70.0])
    for decay in (np.full((50, 3), 1e-6), np.full((50, 3), 0.6)):
        want, prev = np.empty_like(target), before
        for i in range(len(target)):
            want[i] = np.where(np.isnan(prev), target[i], target[i] + (prev - target[i]) * decay[i])
            prev = want[i]
        assert np.array_equal(lagged(target, before, decay), want)


def test_each_kind_of_draw_has_its_own_stream_and_the_seed_sets_them_all():
    a, b, c = Draws.seeded(7), Draws.seeded(7), Draws.seeded(8)
    assert a.demand.normal(size=4).tolist() == b.demand.normal(size=4).tolist()
    assert a.shown.normal(size=4).tolist() != a.demand.normal(size=4).tolist()
    assert b.util.random(4).tolist() != c.util.random(4).tolist()


def _watch(faulty, tmp_path, name, tick_by_tick):
    sim = faulty("hgx-h200-8", FAULTS + NICS)
    book = Logbook(tmp_path / f"{name}.db")
    ticks: list[float] = []
    watcher = Watcher(sim, WatchConfig(interval_s=60, duration_s=8 * 3600, speedup=None), book,
                      on_tick=(lambda t, s: ticks.append(t)) if tick_by_tick else None)
    result = watcher.run()
    rows = book.db.execute("SELECT m.uuid, s.t, s.temp, s.power, s.sm, s.mem, s.util, s.throttle FROM samples s "
                           "JOIN modules m ON m.mkey = s.mkey ORDER BY m.uuid, s.t").fetchall()
    events = book.db.execute("SELECT kind, module, uuid, sim_time, severity, message, data FROM events "
                             "ORDER BY rowid").fetchall()
    return result, rows, events, ticks


def test_watch_fed_in_blocks_is_watch_fed_tick_by_tick(faulty, tmp_path):
    blocks, block_rows, block_events, none = _watch(faulty, tmp_path, "blocks", tick_by_tick=False)
    ticks, tick_rows, tick_events, seen = _watch(faulty, tmp_path, "ticks", tick_by_tick=True)
    assert not none and len(seen) == 8 * 60 + 1  # the live table's hook took the tick-by-tick path
    assert [event_json(e) for e in blocks.events] == [event_json(e) for e in ticks.events]
    assert {e.kind for e in blocks.events} >= {"xid", "module_lost", "module_added", "ecc_rising", "throttle",
                                               "nic_errors", "nic_port_down"}
    assert (blocks.samples, blocks.modules) == (ticks.samples, ticks.modules)
    assert [f.to_json() for f in blocks.forecast] == [f.to_json() for f in ticks.forecast]
    assert block_rows == tick_rows and len(block_rows) == blocks.samples
    assert block_events == tick_events
