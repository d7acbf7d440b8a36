"""A watch cut short by a signal says so: scripts reading --json must tell a cut-short run from a whole one."""

from gpuvet.backends.sim.backend import SimBackend
from gpuvet.watch.loop import WatchConfig, Watcher


def _watch(stop_after_blocks: int | None) -> dict:
    watcher = Watcher(SimBackend.from_ref("hgx-h200-8"), WatchConfig(interval_s=1, duration_s=3600, speedup=None))
    seen = {"blocks": 0}

    def on_block(block) -> None:
        seen["blocks"] += 1
        if stop_after_blocks is not None and seen["blocks"] >= stop_after_blocks:
            watcher.stop_requested = True  # what the SIGINT handler of `gpuvet watch` sets

    watcher.on_block = on_block
    return watcher.run().to_json()


def test_a_run_stopped_by_a_signal_says_it_stopped_early():
    out = _watch(stop_after_blocks=1)
    assert out["stopped_by"] == "signal"
    assert out["duration_s"] < 3600
    assert any(n.startswith("stopped early by a signal") and "of the 3,600 s asked for" in n for n in out["notes"])


def test_a_whole_run_says_its_duration_ended_it():
    out = _watch(stop_after_blocks=None)
    assert out["stopped_by"] == "duration"
    assert out["duration_s"] >= 3600 - 1
    assert not any("stopped early" in n for n in out["notes"])


def test_the_live_header_says_how_long_a_watch_takes_and_when_it_ends():
    from gpuvet.cli.render_watch import _until

    now = 1_800_000_000.0
    assert _until(WatchConfig(duration_s=None)) == " until stopped"
    real = _until(WatchConfig(duration_s=72 * 3600, speedup=1.0), now=now)
    assert real.startswith(" for 3.0d (until about ")
    assert "2027-01-" in real  # 72 h after 2027-01-15 is still January, in any time zone
    fast = _until(WatchConfig(duration_s=72 * 3600, speedup=60.0), now=now)
    assert fast.startswith(" for 1.2h (until about ")  # 72 h at 60x
    assert "as fast as it goes" in _until(WatchConfig(duration_s=3600, speedup=None))
