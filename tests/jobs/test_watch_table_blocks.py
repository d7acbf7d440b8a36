"""Issue 43: `watch --speedup max` on a simulated node shows its live table (no --json) and serves
Prometheus from runs of ticks sampled at once, and what the user sees is what feeding every tick
one by one shows: the same event lines in the same order, the same final table and summary, the
same exposition text (gauges of the last tick, slow fields of the last slow tick, the last Xid,
every event counted)."""

from __future__ import annotations

import re

import pytest
from prometheus_client import CollectorRegistry

from gpuvet.cli import render_watch
from gpuvet.logbook.store import Logbook
from gpuvet.watch.loop import WatchConfig, Watcher, event_json
from gpuvet.watch.prometheus import ExportState, WatchCollector, exposition
from gpuvet.watch.sinks import ExportSink

FAULTS = [{"kind": "xid", "module": "gpu5", "code": 79, "at": "3h"},
          {"kind": "ecc_rising", "module": "gpu1", "at": "2h", "per_hour": 40},
          {"kind": "mem_clock_flapping", "module": "gpu3"},
          {"kind": "power_cap_low", "module": "gpu4", "watts": 300},
          {"kind": "module_lost", "module": "gpu6", "at": "5h"},
          {"kind": "module_added", "module": "gpu6", "at": "7h"},
          {"kind": "nic_port_down", "nic": "nic0", "at": "4h"}]
# fast ticks between the slow ones, so a block carries slow fields from some ticks and not others
CONFIG = {"interval_s": 60.0, "slow_every_s": 300.0, "speedup": None}
MEASURED = re.compile(r"sampling cost \d+ µs|gpuvet_sampler_seconds \S+")  # the sampler's own speed: not a result


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUVET_HOME", str(tmp_path / "home"))


def _table_run(faulty, capsys, monkeypatch, by_tick: bool, minutes: int) -> tuple[str, list, int]:
    """The live view's whole output (a file, not a terminal: the event lines, then the final table
    and the summary), the run's events, and how many blocks the table took."""
    blocks = []
    take = render_watch.LiveTable.block
    monkeypatch.setattr(render_watch.LiveTable, "block", lambda view, b: (blocks.append(len(b)), take(view, b)))
    watcher = Watcher(faulty("hgx-h200-8", FAULTS), WatchConfig(duration_s=minutes * 60, **CONFIG))
    capsys.readouterr()
    result = render_watch.live(watcher, None, by_tick=by_tick)
    return MEASURED.sub("", capsys.readouterr().out), result.events, len(blocks)


# ending on a fast tick (the slow fields shown are carried from the last slow one) while gpu6 is
# lost, and after it came back
@pytest.mark.parametrize("minutes", [332, 482])
def test_the_table_fed_in_blocks_shows_what_it_shows_fed_tick_by_tick(faulty, capsys, monkeypatch, minutes):
    text, events, blocks = _table_run(faulty, capsys, monkeypatch, False, minutes)
    tick_text, tick_events, none = _table_run(faulty, capsys, monkeypatch, True, minutes)
    assert blocks and not none  # each path taken as named
    assert text == tick_text
    assert [event_json(e) for e in events] == [event_json(e) for e in tick_events]
    assert {"xid", "module_lost", "nic_port_down"} <= {e.kind for e in events}
    lines = text.splitlines()
    assert sum(" xid " in line and "gpu5" in line for line in lines) == 1  # each event printed once
    assert any(line.startswith("gpuvet watch — t = ") for line in lines)  # the final table
    rows = {line.split()[0]: line.split() for line in lines if re.match(r"gpu\d ", line)}
    assert ("gpu6" in rows) == (minutes > 7 * 60)  # a lost module is not a row; back on the bus it is again
    assert "gpu5" not in rows and int(rows["gpu1"][7]) > 0  # its rising ECC count, read on the last slow tick


def _scrape(faulty, tmp_path, by_tick: bool, minutes: int) -> tuple[str, int]:
    """The exposition (gpuvet's and dcgm-exporter's names) at the end of a run, and how many
    blocks the endpoint's sink took."""
    export = ExportState(names="both", hostname="node1")
    taken = []
    watcher = Watcher(faulty("hgx-h200-8", FAULTS), WatchConfig(duration_s=minutes * 60, **CONFIG),
                      Logbook(tmp_path / f"{by_tick}-{minutes}.db"), export=export,
                      on_tick=(lambda t, s: None) if by_tick else None,
                      on_block=None if by_tick else taken.append)
    watcher.run()
    registry = CollectorRegistry(auto_describe=False)
    registry.register(WatchCollector(export))
    return MEASURED.sub("", exposition(export, registry).decode()), len(taken)


@pytest.mark.parametrize("minutes", [212, 332, 482])  # each on a fast tick: the slow gauges from an earlier one
def test_the_endpoint_fed_in_blocks_serves_what_it_serves_fed_tick_by_tick(faulty, tmp_path, minutes):
    text, blocks = _scrape(faulty, tmp_path, False, minutes)
    tick_text, none = _scrape(faulty, tmp_path, True, minutes)
    assert blocks and not none
    assert text == tick_text
    assert re.search(r'gpuvet_events_total\{[^}]*kind="xid"[^}]*module="gpu5"[^}]*\} 1\.0', text)
    assert re.search(r'DCGM_FI_DEV_XID_ERRORS\{gpu="5"[^}]*\} 79', text)
    assert re.search(r'gpuvet_module_ecc_corrected_errors_total\{[^}]*module="gpu1"[^}]*\} [1-9]', text)


def test_the_endpoint_sink_takes_blocks_and_the_table_hook_only_with_its_block_hook():
    from gpuvet.watch.sinks import CallbackSink

    assert ExportSink.takes_blocks
    assert not CallbackSink(on_tick=lambda t, s: None).takes_blocks
    assert CallbackSink(on_tick=lambda t, s: None, on_block=lambda b: None).takes_blocks
