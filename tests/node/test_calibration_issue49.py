"""Issue 49: the collective model against published figures beyond 8-GPU NVSwitch nodes (xGMI mesh,
NVL72 rack), and validate judging with it: a node at the published speed passes, a node at a third of
its design fails."""

import json
from pathlib import Path

import pytest

from gpuvet.backends.sim.backend import SimBackend
from gpuvet.bench import collective
from gpuvet.bench.context import BenchContext
from gpuvet.bench.records import BenchResult, Status
from gpuvet.bench.timing import QUICK
from gpuvet.checks.expected import Expectations
from gpuvet.checks.measured import collective_checks
from gpuvet.checks.model import Verdict
from gpuvet.cli.app import main
from gpuvet.validate.rules import apply_all, default_rules
from tests.conftest import sim_with_faults

FIGURES = Path(__file__).parent.parent / "data" / "published_collectives_issue49.json"
MiB, GiB = 2**20, 2**30


def _compare():
    from tests.harness.plan_reference import compare

    return compare(FIGURES)


AZURE_TRAY = "https://github.com/Azure/AI-benchmarking-guide/blob/main/Azure_Results/ND_GB200_v6_results.md"
AWS_BOARD = "https://github.com/stas00/ml-engineering/blob/cbbf431700101885572c47d5f7b5b63de0f7fab5/network/README.md"


def _azure_tray():
    """Azure's GB200 tray rows (the nvl72 family also holds P49f's second tray runs)."""
    return [r for r in _compare() if r.point.family == "nvl72" and r.point.source == AZURE_TRAY]


def test_every_new_family_has_figures_with_a_source_and_library_and_a_role():
    data = json.loads(FIGURES.read_text())
    for family in (f for f in data if not f.startswith("_")):  # every family, the later check tables too
        for entry in data[family]:
            assert entry["source"].startswith("https://") and entry["hardware"] and entry["library"]
            assert entry["role"] in ("calibration", "check") and entry["points"]
    roles = {(f, e["role"]) for f in ("xgmi", "nvl72") for e in data[f]}
    assert ("xgmi", "check") in roles and ("xgmi", "calibration") in roles  # fitted on one table, checked on another
    assert ("nvl72", "check") in roles and ("nvl72", "calibration") in roles


def test_mi300x_within_10_percent_bandwidth_bound_and_25_at_mid_sizes_on_a_table_it_was_not_fitted_to():
    check = [r for r in _compare() if r.point.family == "xgmi" and r.point.role == "check"]
    assert len(check) >= 20 and min(r.smallest for r in check) <= 1024 and max(r.smallest for r in check) >= 8 * GiB
    assert all(abs(r.error) <= 0.10 for r in check if r.smallest > 512 * MiB)
    assert all(abs(r.error) <= 0.25 for r in check if MiB <= r.smallest <= 512 * MiB)
    assert all(abs(r.error) <= 0.03 for r in check if r.smallest >= 16 * MiB)  # what it does today


def test_nvl72_rack_matches_the_run_it_was_fitted_to():
    # the only full-rack table found (72 ranks, 512 MiB - 8 GiB): the calibration figures
    rows = [r for r in _compare() if r.point.family == "nvl72" and r.point.role == "calibration"]
    rack = [r for r in rows if r.point.source != AZURE_TRAY]  # Azure's LL rows are another fit's (P49g)
    assert {r.point.ranks for r in rack} == {72} and len(rack) == 5 and len(rows) == 5 + 13
    assert all(abs(r.error) <= 0.05 for r in rack)


def test_nvl72_checked_on_four_gpus_of_a_tray_it_was_not_fitted_to():
    """Azure's ND GB200 v6 table (4 GPUs of one tray, NCCL_ALGO=Ring, 1 KiB - 8 GiB) is priced on the
    rack fabric with 4 ranks. The ring's constants are the 8-GPU NVSwitch fit's carried to NVLink 5 by
    NCCL's per-link figure and a published B200/H200 latency ratio (node/performance.py), not fitted
    to this table: within 10 % from 1 GiB up, optimistic from 2 MiB (docs/plan.md states the one miss). One
    process drove the 4 GPUs (-g 4): up to 1 MiB the one-process launch floor (4 x 5.57 us, fitted on two other
    hosts: P49e, P49j) sets the time, 12 - 31 % slower than this host's calls."""
    check = _azure_tray()
    # P49g moved the rows where NCCL's tuner runs LL (1 KiB - 4 MiB) to calibration for NVLink 5's LL share
    assert {r.point.role for r in check if r.smallest <= 4 * MiB} == {"calibration"}
    assert {r.point.role for r in check if r.smallest > 4 * MiB} == {"check"}
    assert len(check) == 24 and {r.point.ranks for r in check} == {4} and {r.point.algorithm for r in check} == {"ring"}
    assert all(0 < r.error <= 0.10 for r in check if r.smallest > 512 * MiB)
    assert all(0 < r.error <= 0.42 for r in check if r.smallest >= 2 * MiB)
    assert all(-0.32 <= r.error <= -0.19 and r.launch_bound for r in check if r.smallest < MiB)
    one = next(r for r in check if r.smallest == MiB)
    assert one.launch_bound and -0.13 <= one.error <= -0.12
    # validate judges the largest size: a healthy tray at Azure's 8 GiB figure is above 90 % of the model
    eight = next(r for r in check if r.smallest == 8 * GiB)
    assert eight.point.published_busbw / eight.predicted_busbw > 0.9


# Issue 49's verdict on each size of the GB200 tray table (10 % above 512 MiB, 25 % at 1 - 512 MiB, no
# target below 1 MiB); its rows up to 4 MiB are calibration rows since P49g, not counted as checks. A change
# to the model that turns a pass into a miss, or a miss into a pass, must change this table and docs/plan.md
# with it. 4 MiB misses (+41 %): docs/plan.md says why.
GB200_TRAY_VERDICTS = {
    **{2**k: "no target" for k in range(10, 20)},
    MiB: "pass",
    2 * MiB: "pass",
    4 * MiB: "miss",
    8 * MiB: "pass",
    16 * MiB: "pass",
    32 * MiB: "pass",
    64 * MiB: "pass",
    128 * MiB: "pass",
    256 * MiB: "pass",
    512 * MiB: "pass",
    GiB: "pass",
    2 * GiB: "pass",
    4 * GiB: "pass",
    8 * GiB: "pass",
}


def test_the_gb200_tray_check_verdicts_per_size_are_pinned():
    from tests.harness.plan_reference import verdict

    check = _azure_tray()
    assert {r.smallest: verdict(r) for r in check} == GB200_TRAY_VERDICTS
    # below 1 MiB the issue sets no target; the launch floor (4 x 5.57 us since P49j) prices the calls 20 - 31 % slow
    assert all(-0.32 <= r.error <= -0.19 for r in check if r.smallest < MiB)


# Azure ND H200 v5 (8 H200, NCCL_ALGO=NVLS forced, 1 KiB - 8 GiB), added as check figures after the
# model was fitted. First contact: 1 - 8 MiB missed (-63 to -33 %, a SHARP step latency fitted only
# where NCCL picks NVLS by itself). Since NVLink SHARP is priced by NCCL's own latency, chunk rule and
# pipeline, its two free constants refitted on the calibration figures only, 1 - 8 MiB pass (-19 to
# -13 %): moved from miss to pass after the misses were known (docs/plan.md says so). A change to the
# model that moves a verdict must change this table with it.
H200_NVLS_VERDICTS = {
    **{2**k: "no target" for k in range(10, 20)},
    **{2**k * MiB: "pass" for k in range(14)},
}


def test_the_h200_forced_nvls_check_verdicts_per_size_are_pinned():
    from tests.harness.plan_reference import verdict

    check = [
        r
        for r in _compare()
        if r.point.family == "nvswitch" and r.point.role == "check" and r.point.source.endswith("ND_H200_v5_results.md")
    ]
    assert {r.point.algorithm for r in check} == {"in_switch"} and {r.point.ranks for r in check} == {8}
    assert len(check) == 24 and {r.smallest: verdict(r) for r in check} == H200_NVLS_VERDICTS
    assert all(r.error < 0 for r in check if r.smallest <= 64 * MiB)  # pessimistic: a healthy node is not failed
    assert all(abs(r.error) <= 0.05 for r in check if r.smallest >= 128 * MiB)


# Check tables added after every fit (P49 session), scored before any change to the model (first contact,
# docs/plan.md "More check figures"). A change to the model that moves a verdict must change these tables.
H100_NVLS_VERDICTS = {
    **{2**k: "no target" for k in range(10, 20)},
    **{2**k * MiB: "pass" for k in range(14)},
}
# Google's 8-B200 board (yangwhale/gpu-tpu-pedia), priced on an HGX B200 board (tests/data/hgx-b200-8.yaml) with
# the nvlink5_board constants and the run's NCCL_NVLS_CHUNKSIZE (512 KiB). At first contact (on the NVLink 5 rack's
# constants, 8 ranks of nvl72) 8 and 16 GiB missed too (-12 %); they pass since the board took its own NVLink SHARP.
B200_BOARD_VERDICTS = {
    8 * MiB: "miss",
    16 * MiB: "pass",
    32 * MiB: "miss",
    64 * MiB: "miss",
    128 * MiB: "pass",
    256 * MiB: "pass",
    512 * MiB: "pass",
    GiB: "pass",
    2 * GiB: "pass",
    4 * GiB: "pass",
    8 * GiB: "pass",
    16 * GiB: "pass",
}


def test_the_h100_forced_nvls_check_passes_every_target_at_first_contact():
    """Azure's ND H100 v5 table (8 H100, NCCL 2.18.5, NVLS forced): another board than the H200 table the SHARP
    model was changed after, so an independent check of it; within 17 % from 1 MiB, 5 % from 16 MiB."""
    from tests.harness.plan_reference import verdict

    check = [r for r in _compare() if r.point.source.endswith("ND_H100_v5_results.md")]
    assert len(check) == 24 and {(r.point.role, r.point.algorithm, r.point.ranks) for r in check} == {
        ("check", "in_switch", 8)
    }
    assert {r.smallest: verdict(r) for r in check} == H100_NVLS_VERDICTS
    assert all(abs(r.error) <= 0.17 for r in check if r.smallest >= MiB)
    assert all(abs(r.error) <= 0.05 for r in check if r.smallest >= 16 * MiB)


def test_a_forced_ring_on_one_h100_node_matches_the_model_from_8_mib_and_the_fits_table_from_2_mib():
    """Together AI's forced-ring logs of one 8-H100 node (NCCL 2.26.2, NCCL_ALGO=RING NCCL_NVLS_ENABLE=0) and
    NVIDIA/nccl#1047's ring reduce_scatter, scored at first contact (P49c), no constant changed: all_reduce
    within -3 .. +15 % from 2 MiB and 6 % from 4 MiB; reduce_scatter and all_gather pass from 8 MiB (+4 ..
    +20 %) and missed at 1 - 4 MiB, where the logs sit on their 35 - 42 us floor: they pass (+7.5 .. +10.4 %)
    since one process driving 8 GPUs is priced with its launch floor (P49e, fitted on the all_reduce runs,
    these six rows its first-contact check), -6.4 .. -8.9 % since P49j refitted it with a second host's -g 4
    run (the all_reduce 2 MiB rows now on the floor too, -5.6 and +2.3 %). At 2 - 8 MiB the faster forced-ring
    run is within 4 % of the DGX H100 table the ring's LL128 terms were fitted to (both runs within 8 %), so
    those fit rows price a ring as it runs (docs/plan.md: 'A forced ring on one 8-H100 node')."""
    from tests.harness.plan_reference import compare, verdict

    rows = [r for r in _compare() if r.point.source.endswith("_ring.out") or r.point.source.endswith("/1047")]
    assert len(rows) == 103 and {(r.point.family, r.point.role, r.point.algorithm) for r in rows} == {
        ("nvswitch", "check", "ring")
    }
    by_op: dict[str, list] = {}
    for r in rows:
        by_op.setdefault(r.point.op, []).append(r)
    reduce = [r for r in by_op["all_reduce"] if r.smallest >= 2 * MiB]
    assert len(reduce) == 26 and all(-0.06 <= r.error <= 0.15 for r in reduce)
    assert all(abs(r.error) <= 0.06 for r in reduce if r.smallest >= 4 * MiB)
    for op in ("reduce_scatter", "all_gather"):
        assert not [r for r in by_op[op] if verdict(r) == "miss"]
        floor = [r for r in by_op[op] if MiB <= r.smallest <= 4 * MiB]
        assert len(floor) == 3 and all(r.launch_bound and -0.09 <= r.error <= -0.06 for r in floor)
        assert all(0.01 <= r.error <= 0.20 for r in by_op[op] if r.smallest >= 8 * MiB)
    dgx = {
        r.smallest: r.point.published_busbw
        for r in compare(Path(__file__).parents[2] / "benchmarks" / "data" / "published_collectives.yaml")
        if r.point.source.endswith("dgxc-benchmarking/blob/main/nccl/README.md")
    }
    for size in (2 * MiB, 4 * MiB, 8 * MiB):
        ring = [r.point.published_busbw for r in by_op["all_reduce"] if r.smallest == size]
        assert len(ring) == 2 and all(abs(b / dgx[size] - 1) <= 0.08 for b in ring)
        assert abs(max(ring) / dgx[size] - 1) <= 0.04


def _google_board():
    """Google's a4-highgpu-8g rows (yangwhale/gpu-tpu-pedia), by size."""
    return {r.smallest: r for r in _compare() if r.point.source.endswith("/gpu/deepep/README.md")}


def test_the_b200_board_check_is_high_at_mid_sizes_and_within_8_percent_from_128_mib():
    """8 B200 on one HGX board (NCCL defaults under Google's gIB tuner file, NCCL_NVLS_CHUNKSIZE=512 KiB), priced
    on an HGX B200 board with the run's chunk setting: 23 - 33 % high at 8 - 64 MiB, where the model picks the
    ring as it does on the GB200 tray, and within 8 % from 128 MiB (NVLink SHARP, 64 KiB chunks up to 4 GiB
    and 512 KiB from 8 GiB, as NCCL's chunk rule cuts them under that setting)."""
    from tests.harness.plan_reference import verdict

    board = _google_board()
    assert {
        (r.point.role, r.point.ranks, r.point.node_ref.rsplit("/", 1)[-1], r.point.nvls_chunk) for r in board.values()
    } == {("check", 8, "hgx-b200-8.yaml", 512 * 1024)}
    assert {size: verdict(r) for size, r in board.items()} == B200_BOARD_VERDICTS
    assert all(0.2 < r.error < 0.35 for size, r in board.items() if size <= 64 * MiB)
    assert all(0 < r.error <= 0.08 for size, r in board.items() if size >= 128 * MiB)
    assert {r.predicted_algorithm for size, r in board.items() if size >= 128 * MiB} == {"in_switch/simple"}


def test_the_b200_board_family_is_fitted_on_one_cluster_and_checked_on_another():
    """nvlink5_board: the NVLink 5 ring of the rack (not fitted), NVLink SHARP with NCCL's single-node latency
    (25 us) and 24 channels (tuning.cc, nvls.cc at v2.28.9-1), its efficiency fitted to Together AI's forced-NVLS
    runs of one B200 cluster (NCCL 2.28.9) and checked on another (NCCL 2.29.7, -g 1): within 1 %. The rings of
    both clusters, never fitted: 2 - 9 % optimistic. Forced-NVLS all_gather, a multicast store with no
    reduction (NCCL's all_gather.h), is priced at the ring's share of the link in two stages: 2 - 5 %
    pessimistic on both clusters (it missed by ~29 % at all_reduce's NVLS efficiency; docs/plan.md)."""
    from gpuvet.node.collectives import Algorithm, Protocol
    from gpuvet.node.performance import COLLECTIVE_TUNING
    from tests.harness.plan_reference import FIGURES as FILES
    from tests.harness.plan_reference import FITTED

    board = COLLECTIVE_TUNING["nvlink5_board"]
    latency = board.base_s + 2 * board.alpha_s[(Algorithm.IN_SWITCH, Protocol.SIMPLE)]
    assert latency == pytest.approx(25e-6) and board.switch is not None and board.switch.channels == 24
    assert board.efficiency[Algorithm.RING] == COLLECTIVE_TUNING["nvl_domain"].efficiency[Algorithm.RING]
    assert FITTED["nvlink5_board"] == ("nvlink5_board", ("eff:in_switch",))
    assert FILES["nvlink5_board"].endswith("published_collectives_issue49.json")
    together = [r for r in _compare() if "togethercomputer" in r.point.source and r.point.family == "nvlink5_board"]
    fitted = [r for r in together if r.point.role == "calibration"]
    assert len(fitted) == 3 and all(
        "flapping-airplanes" in r.point.source and r.point.algorithm == "in_switch" for r in fitted
    )
    assert all(abs(r.error) <= 0.01 for r in fitted)
    check = [r for r in together if r.point.role == "check"]
    other = [r for r in check if "use3a-ss" in r.point.source]
    assert len(check) == 20 and len(other) == 9
    nvls = [r for r in other if r.point.op == "all_reduce" and r.point.algorithm == "in_switch"]
    assert len(nvls) == 3 and all(abs(r.error) <= 0.01 for r in nvls)
    rings = [r for r in check if r.point.algorithm == "ring"]
    assert len(rings) == 13 and all(0.02 < r.error <= 0.09 for r in rings)
    gathers = [r for r in check if r.point.op == "all_gather" and r.point.algorithm == "in_switch"]
    assert len(gathers) == 4 and all(-0.05 < r.error < -0.02 for r in gathers)


def test_an_nvlink5_board_takes_the_board_family_and_other_boards_keep_theirs():
    """The family follows the modules' design (the catalog's NVLink generation), not the links' state: an HGX
    B200 board is nvlink5_board, an HGX H200 board stays fabric, eight ranks of the rack stay nvl_domain."""
    from gpuvet.backends.sim.backend import SimBackend as Sim
    from gpuvet.plan.collective import CollectiveModel

    def family(ref, ranks=8):
        model = CollectiveModel(Sim.from_ref(ref).declared)
        return model.perf.collectives(model.members(ranks)).family()

    data = Path(__file__).parent.parent / "data"
    assert family(str(data / "hgx-b200-8.yaml")) == "nvlink5_board"
    assert family("hgx-h200-8") == "fabric" and family("nvl72") == "nvl_domain"


def test_nccls_own_ring_estimate_is_as_high_as_the_model_on_the_b200_board():
    """NCCL 2.25.1's own ring cost (tuning.cc, the tray's release; the board's is not printed) on 8 Blackwell
    ranks is 28 - 34 % faster than the board's run at 8 - 64 MiB, as gpuvet is: the mid-size gap is not in
    the library's cost model either, so no constant read from it closes it (docs/plan.md)."""
    bench = _bench()
    blackwell = bench.NCCL_RING_TUNERS["blackwell"]
    board = _google_board()
    for size in (8 * MiB, 16 * MiB, 32 * MiB, 64 * MiB):
        us = min(blackwell.microseconds(8, size).values())
        published_us = size * 1.75 / board[size].point.published_busbw / 1e3
        assert 0.25 < published_us / us - 1 < 0.36


def test_the_b200_boards_nvls_chunk_setting_switches_chunk_size_where_its_busbw_jumps():
    """The board's run set NCCL_NVLS_CHUNKSIZE=512 KiB (its job file). NCCL's NVLS chunk rule (enqueue.cc),
    which the model's SwitchChunking follows, then moves 64 KiB chunks up to 4 GiB and 512 KiB ones from
    8 GiB on 8 ranks with 32 channels (from 6 GiB with a single node's 24, NCCL 2.27 on), where the run's
    busbw jumps from its 739 GB/s plateau to 840; with NCCL's default 128 KiB the switch falls at 2 GiB. The
    check prices the run with its setting (the data file's nvls_chunk_bytes)."""
    from dataclasses import replace

    from gpuvet.node.performance import COLLECTIVE_TUNING

    KiB = 1024
    board = {size: r.point.published_busbw for size, r in _google_board().items()}
    assert abs(board[2 * GiB] / board[4 * GiB] - 1) < 0.01 and board[8 * GiB] / board[4 * GiB] > 1.13
    default = COLLECTIVE_TUNING["nvl_domain"].switch
    assert default is not None and default.channels == 32
    run = replace(default, max_chunk=512 * KiB)
    assert [run.chunk_bytes(s, 8) for s in (4 * GiB, 8 * GiB, 16 * GiB)] == [64 * KiB, 512 * KiB, 512 * KiB]
    node = COLLECTIVE_TUNING["nvlink5_board"].switch
    assert node is not None and node.channels == 24
    assert [replace(node, max_chunk=512 * KiB).chunk_bytes(s, 8) for s in (4 * GiB, 6 * GiB)] == [64 * KiB, 512 * KiB]
    assert [default.chunk_bytes(s, 8) for s in (1 * GiB, 2 * GiB)] == [64 * KiB, 128 * KiB]


def test_one_more_mi300x_row_is_within_10_percent():
    # crickett-hpe/hpc-ai-envs#30: 8 MI300X, 8 MiB, 91.10 us (the one row readable whole)
    (row,) = [r for r in _compare() if r.point.source.endswith("hpc-ai-envs/pull/30")]
    assert row.point.role == "check" and row.smallest == 8 * MiB and 0 < row.error <= 0.10


def test_mi325x_ring_checked_at_bandwidth_bound_sizes_on_the_mi300x_fit():
    # MI325X keeps MI300X's xGMI mesh (7 links of 64 GB/s a direction): the MI300X constants price it
    rows = [r for r in _compare() if r.point.node_ref.endswith("mi325x-8.yaml")]
    assert len(rows) == 3 and {r.point.role for r in rows} == {"check"} and {r.point.algorithm for r in rows} == {"ring"}
    assert all(abs(r.error) <= 0.02 for r in rows)


def test_every_check_figure_of_every_family_keeps_its_verdict():
    """Every check table of issue 22 and issue 49 (8-GPU NVSwitch, PCIe, xGMI, MI325X, GB200, H200 and H100
    with NVLS forced, the 8-B200 boards, one MI300X row): the misses are the GB200 tray's 4 MiB (the
    forced-NVLS H200's 1 - 8 MiB passed once NVLink SHARP was priced from NCCL's source), Google's B200 board
    at 8, 32 and 64 MiB (its 8 and 16 GiB passed once the board took its own NVLink SHARP; the forced-NVLS
    all_gathers of Together AI's B200 boards once NVLS all_gather took the ring's share: docs/plan.md).
    Together AI's forced-ring H100 logs at 1 MiB (all_reduce) and 1 - 4 MiB (reduce_scatter, all_gather), the
    sizes under their 35 - 42 us per-call floor, missed (P49c) until one process driving 8 GPUs was priced
    with its launch floor (P49e). The GB300 tray P49f added as a second tray run misses at first contact at
    1, 4 and 16 MiB (its 4 MiB reproduces Azure's; its 1 and 16 MiB rows disagree with Azure's: docs/plan.md);
    its 1 MiB, on the floor, passes (+13.8 %) since P49j refitted the launch time with a second host's -g 4 run
    (calibration), its 4 and 16 MiB are not launch-bound and still miss.
    A change that breaks any other passing figure, or turns one of these misses into a pass, fails here."""
    from tests.harness.plan_reference import compare, verdict

    rows = compare(FIGURES) + compare(Path(__file__).parents[2] / "benchmarks" / "data" / "published_collectives.yaml")
    misses = {
        (r.point.family, r.point.source.split("/blob/main/")[-1], r.smallest)
        for r in rows
        if r.point.role == "check" and verdict(r) == "miss"
    }
    board = {("nvlink5_board", "gpu/deepep/README.md", size) for size in (8 * MiB, 32 * MiB, 64 * MiB)}
    gb300 = {("nvl72", "gpu/a4x-max/04-nccl-test/README.md", size) for size in (4 * MiB, 16 * MiB)}
    # P49k, at first contact: AWS's p6-b200 board (stas00/ml-engineering, one process per GPU, each call timed alone)
    aws = {("nvlink5_board", AWS_BOARD, size) for size in (*(2**k * MiB for k in range(7)), 2 * GiB, 4 * GiB)}
    assert misses == board | gb300 | aws  # Azure's tray 4 MiB: a calibration row since P49g, no longer counted


def _plan(capsys, *args):
    code = main(["plan", "collective", *args, "--json"])
    out, _ = capsys.readouterr()
    assert code == 0
    return json.loads(out)


def test_plan_collective_prices_every_link_of_a_mesh_and_the_rack_at_its_published_figures(capsys):
    mi300x = _plan(capsys, "--node", "mi300x-8", "--op", "all_reduce", "--bytes", "8GiB")
    assert mi300x["algorithm"] == "ring" and mi300x["busbw"] == pytest.approx(317.96, rel=0.02)  # AMD's table
    # 4 H100 with 6 links to each peer: three peers' links at the NVSwitch node's ring efficiency (0.82)
    assert _plan(capsys, "--node", "mesh-4", "--bytes", "8GiB")["busbw"] == pytest.approx(3 * 150 * 0.82, rel=0.01)
    rack = _plan(capsys, "--node", "nvl72", "--bytes", "8GiB")
    assert rack["busbw"] == pytest.approx(834.57, rel=0.03)  # CoreWeave's full-rack run
    assert _plan(capsys, "--node", "nvl72", "--bytes", "512MiB")["busbw"] == pytest.approx(586.06, rel=0.03)
    # the 8-GPU NVSwitch node keeps its figures (issue 22's fit)
    # (481.7 since NVLink SHARP's constants were refitted with NCCL's chunk rule; 479.0 before; published 480)
    assert _plan(capsys, "--node", "hgx-h200-8", "--bytes", "8GiB")["busbw"] == pytest.approx(481.7, abs=0.1)


def _every_link(node, factor):
    return [{"kind": "link_degraded", "between": [link.a, link.b], "factor": factor} for link in node.fabric_links()]


def _judged(backend, size):
    """The all_reduce_busbw check validate makes of one size, with the default rules."""
    engine = backend.engine()
    ids = backend.declared.module_ids
    results = collective.run(
        BenchContext(engine, QUICK),
        collective.CollectiveOptions(ops=("all_reduce",), min_bytes=size, max_bytes=size, check=False),
    )
    checks = apply_all(default_rules(), collective_checks(results, Expectations(backend.declared), ids, "gpu"))
    return next(c for c in checks if c.name == "all_reduce_busbw")


@pytest.mark.parametrize(("preset", "size", "published"), [("mi300x-8", 8 * GiB, 317.96), ("nvl72", 8 * GiB, 834.57)])
def test_validate_fails_a_collective_at_a_third_of_design_and_passes_the_published_figure(tmp_path, preset, size, published):
    healthy = SimBackend.from_ref(preset)
    check = _judged(healthy, size)
    assert check.verdict is Verdict.PASS and check.value == pytest.approx(published, rel=0.05)
    third = sim_with_faults(tmp_path, preset, _every_link(healthy.declared, 1 / 3))
    slow = _judged(third, size)
    assert slow.verdict is Verdict.FAIL and slow.pct_of_expected == pytest.approx(100 / 3, abs=3)
    # the published figure itself, judged against the design: passes (the old model put the rack's at 77 % of
    # design at 8 GiB, 59 % at 512 MiB: a fail; and a third of MI300X's at 200 %: a pass)
    figure = BenchResult(
        "collective",
        "busbw",
        published,
        "GB/s",
        Status.OK,
        True,
        size_bytes=size,
        detail={"op": "all_reduce", "ranks": len(healthy.declared.module_ids)},
    )
    design = healthy.declared
    (judged,) = [
        c
        for c in apply_all(default_rules(), collective_checks([figure], Expectations(design), design.module_ids, "gpu"))
        if c.name == "all_reduce_busbw"
    ]
    assert judged.verdict is Verdict.PASS and judged.pct_of_expected > 95


def test_one_slow_xgmi_link_slows_every_ring(tmp_path):
    # RCCL gives each ring the same share: the slowest pair sets the pace (AMD's blog: 7 x the slowest link)
    from gpuvet.plan.collective import CollectiveModel

    healthy = CollectiveModel(SimBackend.from_ref("mi300x-8").declared)
    ids = healthy.node.module_ids
    slow = sim_with_faults(
        tmp_path, "mi300x-8", [{"kind": "link_degraded", "between": ["gpu0", "gpu1"], "factor": 0.5}]
    ).node()
    one = CollectiveModel(slow).predict("all_reduce", 8 * GiB, ids).busbw
    assert one / healthy.predict("all_reduce", 8 * GiB, ids).busbw == pytest.approx(0.5, rel=0.01)


def _bench():
    """benchmarks/collective_vs_published.py as a module (benchmarks/ is not a package)."""
    import importlib.util
    import sys

    path = Path(__file__).parents[2] / "benchmarks" / "collective_vs_published.py"
    spec = importlib.util.spec_from_file_location("collective_vs_published", path)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench  # its dataclasses look their module up there
    spec.loader.exec_module(bench)
    return bench


def test_terms_show_why_the_tray_misses_at_4_mib(capsys):
    """benchmarks/collective_vs_published.py --terms prints the model's terms per protocol: at 4 MiB on
    the tray it picks LL128 (NCCL 2.25.1's own tuner picks LL there; docs/plan.md), and LL would still be
    priced faster than the published 43.0 us."""
    _bench()._terms("nvl72:4:ring")
    line = next(x for x in capsys.readouterr().out.splitlines() if x.strip().startswith("4 MiB"))
    assert "*ring/ll128" in line and " ring/ll " in line and "in_switch" not in line
    ll_total = float(line.split(" ring/ll ")[1].split("=")[1].split()[0])
    assert 30 < ll_total < 43.0


def test_nvlink_sharp_takes_nccls_latency_and_chunk_rule_and_fits_only_its_two_free_constants():
    """8-GPU NVLink SHARP: the fixed time and two steps make NCCL 2.20.5's 23 us NVLS latency; 16
    channels, a head per rank; the fit frees only the efficiency and the per-chunk time (docs/plan.md)."""
    from gpuvet.node.collectives import Algorithm, Protocol
    from gpuvet.node.performance import COLLECTIVE_TUNING
    from tests.harness.plan_reference import FITTED

    board = COLLECTIVE_TUNING["fabric"]
    latency = board.base_s + 2 * board.alpha_s[(Algorithm.IN_SWITCH, Protocol.SIMPLE)]
    assert latency == pytest.approx(23e-6) and board.switch is not None and board.switch.channels == 16
    rack = COLLECTIVE_TUNING["nvl_domain"].switch
    assert rack is not None and rack.channels == 32 and rack.chunk_s == board.switch.chunk_s
    assert FITTED["fabric"] == ("nvswitch", ("eff:in_switch", "chunk:in_switch"))
    assert FITTED["nvl_domain"] == ("nvl72", ("in_switch/simple", "eff:in_switch"))


def test_nccls_own_tuner_misses_the_tray_at_4_mib_too():
    """The miss is not gpuvet's alone: NCCL 2.25.1's own cost model (the release Azure ran; constants read
    from its src/graph/tuning.cc, docs/plan.md) picks LL at 4 MiB on 4 Blackwell ranks and believes it
    takes 32.5 us where the run took 43.0 us: 32 % optimistic, outside issue 49's 25 %. It picks LL128
    from 8 MiB and Simple from 32 MiB, and its Hopper ring is the 360 GB/s the 8-GPU runs reach."""
    bench = _bench()
    blackwell = bench.NCCL_RING_TUNERS["blackwell"]
    picks = {}
    for size in (MiB, 4 * MiB, 8 * MiB, 32 * MiB):
        us = blackwell.microseconds(4, size)
        picks[size] = min(us, key=lambda p: us[p])
    assert picks == {MiB: "ll", 4 * MiB: "ll", 8 * MiB: "ll128", 32 * MiB: "simple"}
    four = blackwell.microseconds(4, 4 * MiB)["ll"]
    assert four == pytest.approx(32.5, abs=0.1)
    tray = next(r for r in _azure_tray() if r.smallest == 4 * MiB)
    assert 4 * MiB * 1.5 / four / 1e3 / tray.point.published_busbw - 1 > 0.25
    hopper = bench.NCCL_RING_TUNERS["hopper"].microseconds(8, 8 * GiB)["simple"]
    assert 8 * GiB * 1.75 / hopper / 1e3 == pytest.approx(360, rel=0.005)  # its latency aside


def test_nccl_tuner_refuses_a_case_it_has_no_constants_for(capsys):
    from gpuvet.errors import GpuvetError

    with pytest.raises(GpuvetError, match="ARCH:RANKS"):
        _bench()._nccl_tuner("volta:8")


@pytest.mark.parametrize(
    ("flag", "case"),
    [
        ("_nccl_tuner", "blackwell:²"),
        ("_nccl_tuner", "hopper:٣"),
        ("_nccl_tuner", "blackwell:1"),
        ("_terms", "nvl72:x"),
        ("_terms", "nvl72:³:ring"),
    ],
)
def test_a_rank_count_not_in_ascii_digits_is_a_clear_refusal(flag, case):
    """str.isdigit() takes a superscript or an Arabic-Indic digit that int() then refuses: a GpuvetError (exit 2
    in the script), never a traceback."""
    from gpuvet.errors import GpuvetError

    with pytest.raises(GpuvetError, match="rank count"):
        getattr(_bench(), flag)(case)


def test_every_table_row_of_the_plan_docs_names_a_source_or_an_assumption():
    """Issue 49's last "Done means": every constant in docs/plan.md with its source, or marked as an
    assumption. Every table there with a source (or "from") column fills that cell in every row."""
    lines = (Path(__file__).parents[2] / "docs" / "plan.md").read_text().splitlines()
    tables: list[list[tuple[int, str]]] = [[]]
    for number, line in enumerate(lines, 1):
        if line.startswith("|"):
            tables[-1].append((number, line))
        elif tables[-1]:
            tables.append([])

    def cells(line: str) -> list[str]:
        return [c.strip() for c in line.strip().strip("|").split("|")]

    checked = 0
    for table in (t for t in tables if t):
        header = cells(table[0][1])
        columns = [k for k, c in enumerate(header) if c.lower() in ("source", "from")]
        for number, line in table[2:] if columns else ():
            row = cells(line)
            assert len(row) == len(header), f"docs/plan.md:{number}: {len(row)} cells, the header has {len(header)}"
            assert all(row[k] for k in columns), f"docs/plan.md:{number}: no source: {line[:60]}"
            checked += 1
    assert checked > 40


def test_the_checks_read_to_choose_a_rule_are_marked_and_said_apart():
    # P49b chose NVLS all_gather's pricing after these four check rows had missed: the file marks them, the loader
    # keeps the mark, and the harness says them apart from the independent passes (the review's ask)
    import contextlib
    import io

    from benchmarks.collective_vs_published import _issue49_summary

    from tests.harness.plan_reference import compare, load

    points = load(FIGURES)
    seen = [p for p in points if p.read_to_choose]
    assert len(seen) == 4
    assert {(p.family, p.op, p.algorithm, p.role) for p in seen} == {("nvlink5_board", "all_gather", "in_switch", "check")}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        _issue49_summary([r for r in compare(FIGURES) if r.point.read_to_choose])
    assert "of the passes, 4 are checks read after their first contact to choose a rule" in out.getvalue()
