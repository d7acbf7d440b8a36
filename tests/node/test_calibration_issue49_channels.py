"""Issue 49, P49h: the channels and threads NCCL gives a ring collective by its size (src/enqueue.cc
topoGetAlgoInfo, v2.25.1-1 through v2.28.9-1), as the harness reproduces it. The rule cuts channels only below
1 MiB on the published NVLink rings, so it cannot reach the last mid-size misses; it is not in the model
(docs/plan.md, "The channel count NCCL gives a collective by its size (P49h)")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
FIGURES = ROOT / "tests" / "data" / "published_collectives_issue49.json"
KiB, MiB = 2**10, 2**20
MAXCHANNELS = 64  # src/include/device.h line 62 at v2.25.1-1


@pytest.fixture(scope="module")
def bench():
    import benchmarks.collective_vs_published as bench

    return bench


@pytest.mark.parametrize(
    ("nbytes", "nranks", "protocol", "channels", "expected"),
    [
        # 4 ranks, 32 channels (a GB200 tray): LL's threshold is 8 x 4 bytes a thread, 512 threads
        (256 * KiB, 4, "ll", 32, (16, 512)),
        (512 * KiB, 4, "ll", 32, (32, 512)),
        (80 * KiB, 4, "ll128", 32, (16, 640)),
        (512 * KiB, 4, "simple", 32, (16, 512)),
        (1 * MiB, 4, "simple", 32, (32, 512)),
        # 8 ranks, 24 channels (an 8-H100 board): one channel left, then the threads halved while a multiple of 128
        (1 * KiB, 8, "ll", 24, (1, 64)),
        (16 * KiB, 8, "simple", 24, (1, 256)),
        (768 * KiB - 1, 8, "ll", 24, (23, 512)),
    ],
)
def test_the_channel_rule_is_nccls_loop(bench, nbytes, nranks, protocol, channels, expected) -> None:
    assert bench.nccl_ring_channels(nbytes, nranks, protocol, channels) == expected


def test_the_channel_counts_are_the_search_rule_doubled_twice(bench) -> None:
    assert bench.NCCL_RING_CHANNELS == {"fabric": 2 * 2 * 6, "nvl_domain": 2 * 2 * 8, "nvlink5_board": 2 * 2 * 8}
    assert bench.NCCL_THREADS == {"ll": (512, 8), "ll128": (640, 8), "simple": (512, 64)}


def test_no_published_nvlink_ring_figure_from_1_mib_runs_on_fewer_channels(bench) -> None:
    """Every figure with a target (1 MiB and above) of the NVLink families runs every channel and thread NCCL has,
    in every protocol: with the derived counts, and from 2 MiB with any count up to MAXCHANNELS."""
    data = json.loads(FIGURES.read_text())
    counts = {"nvswitch": 24, "nvl72": 32, "nvlink5_board": 32}
    points = [(p["size"], e.get("ranks", 8), f) for f in counts for e in data[f] for p in e["points"]]
    targets = [(size, n, f) for size, n, f in points if size >= MiB]
    assert len(targets) > 50
    for size, n, family in targets:
        for protocol, (threads, _) in bench.NCCL_THREADS.items():
            assert bench.nccl_ring_channels(size, n, protocol, counts[family]) == (counts[family], threads)
            if size >= 2 * MiB:
                assert bench.nccl_ring_channels(size, n, protocol, MAXCHANNELS) == (MAXCHANNELS, threads)


def test_pricing_the_rule_moves_no_figure_with_a_target_and_is_not_in_the_model(bench) -> None:
    from gpuvet.node import performance

    plain = performance.choose
    before = [r for data in (bench.DATA, bench.DATA_49) for r in bench.compare(data)]
    with bench.channel_rule():
        assert performance.choose is not plain
        after = [r for data in (bench.DATA, bench.DATA_49) for r in bench.compare(data)]
    assert performance.choose is plain
    moved = [(b, a) for b, a in zip(before, after, strict=True) if abs(a.error - b.error) > 0.0005]
    assert moved and all(b.smallest < MiB and b.point.family == "nvswitch" for b, _ in moved)
    assert all(a.predicted_busbw < b.predicted_busbw for b, a in moved)  # fewer channels: slower, never faster
    assert bench.check_counts(before) == bench.check_counts(after)
