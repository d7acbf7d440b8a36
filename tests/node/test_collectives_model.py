"""nccl-tests' conventions, the α–β model, and the known data collectives are checked against."""

import numpy as np
import pytest

from gpuvet.backends.collective_data import (
    element_count,
    expected_output,
    outputs_correct,
    rank_input,
    reference_collective,
)
from gpuvet.node.collectives import (
    COLLECTIVES,
    Algorithm,
    SwitchChunking,
    algbw_gbps,
    bus_factor,
    busbw_gbps,
    collective_cost,
    fit_alpha_beta,
)

# Hand-computed from nccl-tests doc/PERFORMANCE.md: allreduce 2(n-1)/n, allgather/reducescatter/
# alltoall (n-1)/n, broadcast/reduce 1.
HAND = {
    ("all_reduce", 8): 1.75, ("all_reduce", 2): 1.0, ("all_reduce", 4): 1.5,
    ("all_gather", 8): 0.875, ("reduce_scatter", 8): 0.875, ("all_to_all", 8): 0.875,
    ("all_gather", 2): 0.5, ("broadcast", 8): 1.0, ("reduce", 8): 1.0, ("all_reduce", 1): 0.0,
}


@pytest.mark.parametrize(("op", "n"), list(HAND))
def test_bus_factor_matches_nccl_tests(op, n):
    assert bus_factor(op, n) == pytest.approx(HAND[(op, n)])


def test_busbw_from_size_and_time():
    # 1 GiB all_reduce on 8 ranks in 10 ms: algbw 107.37 GB/s, busbw 1.75x that
    assert algbw_gbps(2**30, 0.01) == pytest.approx(107.374, rel=1e-4)
    assert busbw_gbps("all_reduce", 8, 2**30, 0.01) == pytest.approx(187.905, rel=1e-4)


def test_unknown_collective_is_rejected():
    with pytest.raises(ValueError):
        bus_factor("all_scatter", 4)


def test_ring_all_reduce_cost_by_hand():
    # 8 ranks, 1 GB, 100 GB/s per rank, alpha 1 us: 14 steps + 1.75 GB / 100 GB/s
    cost = collective_cost("all_reduce", 8, 10**9, link_gbps=100, alpha_s=1e-6)
    assert cost.seconds == pytest.approx(14e-6 + 0.0175)


def test_in_switch_beats_ring_bandwidth_but_not_every_op():
    ring = collective_cost("all_reduce", 8, 10**9, link_gbps=100, alpha_s=1e-6)
    switch = collective_cost("all_reduce", 8, 10**9, link_gbps=100, alpha_s=1e-6, algorithm=Algorithm.IN_SWITCH)
    assert switch.seconds < ring.seconds
    assert collective_cost("all_to_all", 8, 10**9, link_gbps=100, alpha_s=1e-6, algorithm="in_switch") is None
    # tree: log2(8)=3 steps each way, so small messages are faster than on the ring
    tree = collective_cost("all_reduce", 8, 8, link_gbps=100, alpha_s=1e-6, algorithm="tree")
    assert tree.seconds < collective_cost("all_reduce", 8, 8, link_gbps=100, alpha_s=1e-6).seconds


def test_alpha_beta_fit_recovers_latency_and_bandwidth():
    sizes = [2**k for k in range(3, 28, 2)]
    alpha, beta = 20e-6, 150.0
    rng = np.random.default_rng(0)
    times = [(alpha + s / (beta * 1e9)) * rng.lognormal(0, 0.01) for s in sizes]
    fit = fit_alpha_beta(sizes, times)
    assert fit.alpha_s == pytest.approx(alpha, rel=0.05)
    assert fit.beta_gbps == pytest.approx(beta, rel=0.05)
    assert fit.r_squared > 0.99


def test_alpha_beta_fit_refuses_what_it_cannot_fit():
    assert fit_alpha_beta([1024, 1024], [1e-3, 1e-3]) is None
    assert fit_alpha_beta([8, 1024], [2e-3, 1e-3]) is None  # time falling with size


@pytest.mark.parametrize("op", COLLECTIVES)
@pytest.mark.parametrize("n", [2, 3, 4, 8])
def test_closed_form_matches_the_collective_itself(op, n):
    count = element_count(op, 4 * 1000, 4, n)
    inputs = [rank_input(op, r, n, count) for r in range(n)]
    assert all((x != 0).all() for x in inputs)  # never zeros: a no-op collective cannot pass
    outputs = reference_collective(op, inputs)
    assert outputs_correct(op, outputs, n, count)


@pytest.mark.parametrize("op", COLLECTIVES)
def test_a_wrong_element_on_any_rank_is_caught(op):
    n, count = 4, 64
    outputs = reference_collective(op, [rank_input(op, r, n, count) for r in range(n)])
    for rank in range(n):
        if expected_output(op, rank, n, count) is None:
            continue
        bad = [None if o is None else o.copy() for o in outputs]
        bad[rank][-1] += 1.0
        assert not outputs_correct(op, bad, n, count)


def test_a_collective_that_did_nothing_is_caught():
    n, count = 4, 64
    untouched = [rank_input("all_reduce", r, n, count) for r in range(n)]
    assert not outputs_correct("all_reduce", untouched, n, count)


def test_all_to_all_is_labelled_by_the_algorithm_the_model_runs():
    from gpuvet.node.build import build_node
    from gpuvet.node.memory import PlanError
    from gpuvet.node.spec import load_spec
    from gpuvet.plan.collective import CollectiveModel

    node, pcie = build_node(*load_spec("hgx-h200-8")), build_node(*load_spec("pcie-8"))
    model = CollectiveModel(node)
    for size in (8, 1 << 20, 1 << 30):
        p = model.predict("all_to_all", size, node.module_ids)
        assert p.algorithm == "pairwise"  # every rank to every other: not a ring
    assert model.predict("all_reduce", 1 << 20, node.module_ids).algorithm == "ring"
    with pytest.raises(PlanError, match="ring does not implement all_to_all"):
        model.predict("all_to_all", 1 << 20, node.module_ids, "ring")
    with pytest.raises(PlanError, match="needs modules and a switch"):
        CollectiveModel(pcie).predict("all_reduce", 1 << 20, pcie.module_ids, "in_switch")
    assert collective_cost("all_reduce", 8, 10**6, link_gbps=100, alpha_s=1e-6, algorithm="pairwise") is None


KiB, MiB, GiB = 2**10, 2**20, 2**30


@pytest.mark.parametrize(("size", "chunk"), [
    (1 * KiB, 16 * KiB), (8 * MiB - 1, 16 * KiB), (8 * MiB, 32 * KiB), (64 * MiB - 1, 32 * KiB),
    (64 * MiB, 64 * KiB), (GiB - 1, 64 * KiB), (GiB, 128 * KiB), (16 * GiB, 128 * KiB),
])
def test_nvlink_sharp_chunk_shrinks_with_the_buffer_as_nccl_cuts_it(size, chunk):
    # 16 channels x 8 heads = 128 chunks at once: 128 KiB chunks from 64 of them per operation
    # (1 GiB), 64 KiB from 8 x 128 x 64 KiB (64 MiB), 32 KiB from 2 x 128 x 32 KiB (8 MiB), 16 KiB below
    assert SwitchChunking(channels=16, max_heads=32, chunk_s=1e-6).chunk_bytes(size, 8) == chunk


def test_nvlink_sharp_heads_stop_at_the_arity_and_rounds_count_whole_chunks():
    rack = SwitchChunking(channels=32, max_heads=32, chunk_s=1e-6)
    assert rack.chunk_bytes(512 * MiB, 72) == rack.chunk_bytes(512 * MiB, 32) == 64 * KiB  # 72 ranks, 32 heads
    board = SwitchChunking(channels=16, max_heads=32, chunk_s=1e-6)
    assert board.loops(1 * KiB, 8) == 1 and board.loops(2 * MiB, 8) == 1 and board.loops(4 * MiB, 8) == 2
    assert board.loops(GiB, 8) == 64  # 128 KiB x 128 at once: 16 MiB a round


def test_nvlink_sharp_pays_the_pipeline_fill_and_a_cost_per_round():
    board = SwitchChunking(channels=16, max_heads=32, chunk_s=2e-6)
    # one round (2 MiB of 16 KiB chunks), three stages: 3 x 2 us and two more rounds' bytes at 100 GB/s
    assert board.seconds(2 * MiB, 8, 100.0) == pytest.approx(3 * 2e-6 + 2 * 2 * MiB / 100e9)
    # a small buffer is one partial round: the fill is its own bytes, not a whole round's
    assert board.seconds(1 * KiB, 8, 100.0) == pytest.approx(3 * 2e-6 + 2 * KiB / 100e9)
    # past 1 GiB the fill is fixed while the rounds grow with the buffer
    big, bigger = board.seconds(GiB, 8, 100.0), board.seconds(2 * GiB, 8, 100.0)
    assert bigger - big == pytest.approx(64 * 2e-6)


def test_nvlink_sharp_all_gather_is_a_multicast_store_priced_at_the_rings_share_in_two_stages():
    """NCCL's single-node NVLS all_gather (src/device/all_gather.h, v2.28.9-1) broadcasts through the
    multicast address and gathers out, two warp groups and no reduction in the switch: it takes the ring's
    share of the link and a two-stage pipeline; all_reduce and reduce_scatter keep the fitted in-switch
    efficiency and three stages. Unforced, the model still runs the ring for all_gather at every size, as
    NCCL's tuner does (it prices NVLS all_gather below the ring on one node)."""
    from gpuvet.backends.select import open_backend
    from gpuvet.node.collectives import Protocol
    from gpuvet.node.performance import COLLECTIVE_TUNING
    from gpuvet.plan.collective import CollectiveModel

    for family in ("fabric", "nvl_domain", "nvlink5_board"):
        t = COLLECTIVE_TUNING[family]
        ring, switch = t.efficiency[Algorithm.RING], t.efficiency[Algorithm.IN_SWITCH]
        assert t.bandwidth_share(Algorithm.IN_SWITCH, Protocol.SIMPLE, "all_gather") == ring != switch
        for op in ("all_reduce", "reduce_scatter"):
            assert t.bandwidth_share(Algorithm.IN_SWITCH, Protocol.SIMPLE, op) == switch
        assert t.switch is not None
        assert t.chunk_s(Algorithm.IN_SWITCH, GiB, 8, 100.0, "all_gather") == t.switch.seconds(GiB, 8, 100.0, 2)
        assert t.chunk_s(Algorithm.IN_SWITCH, GiB, 8, 100.0, "all_reduce") == t.switch.seconds(GiB, 8, 100.0, 3)
    backend = open_backend(sim="hgx-h200-8")
    model = CollectiveModel(backend.node())
    members = model.members(8)
    assert {model.predict("all_gather", 2**k, members).algorithm for k in range(10, 35)} == {"ring"}
