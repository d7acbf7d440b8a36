"""Benchmarks on simulated nodes: within physical limits, and faults show where they should."""

import pytest

from gpuvet.backends.sim.backend import SimBackend
from gpuvet.bench.collective import CollectiveOptions
from gpuvet.bench.copy import CopyOptions
from gpuvet.bench.gemm import GemmOptions
from gpuvet.bench.membw import MembwOptions
from gpuvet.bench.model import ModelOptions
from gpuvet.bench.runner import run_benchmark
from gpuvet.bench.timing import QUICK
from gpuvet.errors import GpuvetError
from gpuvet.node.catalog import CATALOG

H200 = CATALOG["H200-SXM"]


def bench(backend, name, options=None):
    return run_benchmark(name, backend, options, plan=QUICK)


def ok(report, metric):
    return [r for r in report.results if r.metric == metric and r.status == "ok"]


@pytest.fixture(scope="module")
def hgx():
    return SimBackend.from_ref("hgx-h200-8")


def test_every_record_says_simulated(hgx):
    rep = bench(hgx, "gemm", GemmOptions(dtypes=("bf16",)))
    assert rep.simulated and rep.notes and all(r.simulated for r in rep.results)
    assert all(t.simulated for r in rep.results for t in r.telemetry.values())


def test_gemm_below_peak_on_every_module_and_dtype(hgx):
    rep = bench(hgx, "gemm")
    tflops = ok(rep, "tflops")
    assert len(tflops) == 8 * 6
    for r in tflops:
        assert 0 < r.value < H200.tflops[r.dtype], r
        assert 50 < r.pct_of_peak < 100
        assert r.stats.n >= 3 and r.stats.min <= r.median <= r.stats.max and r.cv < 0.05
    assert all(r.correct for r in rep.results if r.metric == "check")


def test_membw_below_peak(hgx):
    rep = bench(hgx, "membw")
    for r in ok(rep, "copy") + ok(rep, "triad"):
        assert 0.8 * H200.memory_bw_gbps < r.value < H200.memory_bw_gbps


def test_copy_channels_within_link_limits(hgx):
    rep = bench(hgx, "copy", CopyOptions(tests=("h2d", "d2h", "p2p")))
    for r in ok(rep, "h2d") + ok(rep, "d2h"):
        assert 40 < r.value < 63.1 and r.pct_of_peak < 100  # PCIe Gen5 x16: 63 GB/s per direction
    one_way = ok(rep, "p2p_one_way")
    assert len(one_way) == 56 and all(300 < r.value < 450 for r in one_way)  # NVLink4: 450 GB/s per direction
    two_way = ok(rep, "p2p_two_way")
    assert len(two_way) == 28 and all(600 < r.value < 900 for r in two_way)


def test_degraded_link_lowers_exactly_the_pairs_that_cross_it(faulty, hgx):
    faulty = faulty("hgx-h200-8", [{"kind": "link_degraded", "between": ["gpu1", "nvswitch0"],
                                                      "factor": 0.5}])
    healthy = {r.between: r.value for r in ok(bench(hgx, "copy", CopyOptions(tests=("p2p",))), "p2p_one_way")}
    degraded = {r.between: r.value for r in ok(bench(faulty, "copy", CopyOptions(tests=("p2p",))), "p2p_one_way")}
    for pair, value in degraded.items():
        ratio = value / healthy[pair]
        if "gpu1" in pair:
            assert ratio == pytest.approx(0.5, abs=0.03), pair
        else:
            assert ratio == pytest.approx(1.0, abs=0.03), pair


def _ratio(report, name):
    return next(r for r in report.results if r.metric == "contention_ratio" and r.detail["set"] == name).value


def test_every_pair_at_once_contends_on_pcie_but_not_on_nvswitch(hgx):
    switched = bench(hgx, "copy", CopyOptions(tests=("concurrent",)))
    pcie = bench(SimBackend.from_ref("pcie-8"), "copy", CopyOptions(tests=("concurrent",)))
    assert _ratio(switched, "all_pairs") == pytest.approx(1.0, abs=0.05)
    assert _ratio(pcie, "all_pairs") < 0.6
    aggregate = next(r for r in pcie.results if r.metric == "aggregate" and r.detail["set"] == "all_pairs")
    assert aggregate.value < 0.6 * sum(r.value for r in ok(pcie, "h2d"))


def test_collectives_have_nccl_conventions_and_are_checked(hgx):
    rep = bench(hgx, "collective", CollectiveOptions(max_bytes=2**28, factor=16))
    busbw, algbw = ok(rep, "busbw"), ok(rep, "algbw")
    assert busbw and len(busbw) == len(algbw)
    for b in busbw:
        a = next(x for x in algbw if x.size_bytes == b.size_bytes and x.detail["op"] == b.detail["op"])
        assert b.value == pytest.approx(a.value * b.detail["bus_factor"])
        assert b.correct is True
    largest = max(b.size_bytes for b in busbw)
    big = [b for b in busbw if b.size_bytes == largest]
    ring_ops = [b for b in big if b.detail["algorithm"] == "ring"]
    assert ring_ops and all(b.value < 450 for b in ring_ops)  # a ring cannot beat the per-direction link
    allreduce = next(b for b in big if b.detail["op"] == "all_reduce")
    assert allreduce.detail["algorithm"] == "in_switch"  # NVLink SHARP on an NVSwitch node
    small = min(busbw, key=lambda b: b.size_bytes)
    assert small.value < 1  # latency-bound
    latency = ok(rep, "latency")
    assert len(latency) == 5 and all(1 < r.value < 100 for r in latency)  # microseconds


def test_model_throughput_plausible(hgx):
    rep = bench(hgx, "model", ModelOptions(modules=("gpu0",)))
    images = ok(rep, "images_per_s")[0]
    assert 1000 < images.value < 10000  # H100/H200 class: a few thousand images/s
    mfu = [r for r in ok(rep, "mfu") if r.detail["model"] == "gpt"][0]
    assert 30 < mfu.value < 60


def test_mem_clock_flapping_lowers_and_jitters_membw(faulty):
    sim = faulty("hgx-h200-8", [{"kind": "mem_clock_flapping", "module": "gpu2"}])
    rep = bench(sim, "membw", MembwOptions(modules=("gpu1", "gpu2"), kinds=("copy",)))
    good, bad = ok(rep, "copy")
    assert bad.value < 0.85 * good.value and bad.cv > 3 * good.cv
    telemetry = bad.telemetry["gpu2"]
    assert telemetry.mem_clock_mhz_min < telemetry.mem_clock_mhz_max


def test_power_cap_throttles_gemm_with_the_reason_beside_it(faulty):
    sim = faulty("hgx-h200-8", [{"kind": "power_cap_low", "module": "gpu3", "watts": 350}])
    rep = bench(sim, "gemm", GemmOptions(modules=("gpu2", "gpu3"), dtypes=("bf16",), check=False))
    good, capped = ok(rep, "tflops")
    assert capped.value < 0.8 * good.value
    assert capped.telemetry["gpu3"].throttle_reasons == ("sw_power_cap",)
    assert capped.telemetry["gpu3"].power_limit_w == 350
    assert good.telemetry["gpu2"].throttle_reasons == ()


def test_p2p_disabled_routes_module_traffic_through_the_host(faulty, hgx):
    sim = faulty("hgx-h200-8", [{"kind": "p2p_disabled"}])
    p2p = ok(bench(sim, "copy", CopyOptions(tests=("p2p",), modules=("gpu0", "gpu5"))), "p2p_one_way")
    assert all(r.value < 63 for r in p2p)  # PCIe-bound, not NVLink
    rep = bench(sim, "collective", CollectiveOptions(ops=("all_reduce",), min_bytes=2**20, max_bytes=2**20))
    assert ok(rep, "busbw")[0].detail["algorithm"] != "in_switch"


def test_silent_corruption_is_named_by_the_cross_module_check(faulty):
    sim = faulty("hgx-h200-8", [{"kind": "silent_corruption", "module": "gpu6"}])
    rep = bench(sim, "gemm", GemmOptions(dtypes=("bf16",)))
    checks = {r.module: r for r in rep.results if r.metric == "check"}
    assert checks["gpu6"].correct is False and "different bits" in checks["gpu6"].reason
    assert all(c.correct for m, c in checks.items() if m != "gpu6")
    assert not rep.ok


def test_simulated_collective_check_catches_a_planted_error(hgx):
    session = hgx.engine().collectives(["gpu0", "gpu1", "gpu2", "gpu3"])
    assert session.check("all_reduce", 4096, "fp32")
    assert not session.check("all_reduce", 4096, "fp32", corrupt_rank=2)


def test_unsupported_dtype_is_skipped_with_the_reason():
    sim = SimBackend.from_ref("pcie-8")  # L40S: no published fp64 rate
    model = sim.node().modules[0].model.name
    rep = bench(sim, "gemm", GemmOptions(modules=("gpu0",), dtypes=("fp64", "fp32"), check=False))
    skipped = [r for r in rep.results if r.status == "skipped"]
    if model == "L40S":
        assert skipped and skipped[0].dtype == "fp64" and "fp64" in skipped[0].reason
    assert ok(rep, "tflops")


def test_size_that_does_not_fit_is_skipped(hgx):
    rep = bench(hgx, "gemm", GemmOptions(modules=("gpu0",), dtypes=("fp64",), size=2_000_000, check=False))
    (r,) = rep.results
    assert r.status == "skipped" and "GB" in r.reason and r.value is None


def test_unknown_module_is_a_clear_error(hgx):
    with pytest.raises(GpuvetError) as err:
        bench(hgx, "membw", MembwOptions(modules=("gpu9",)))
    assert "gpu9" in err.value.message and "gpu0" in err.value.message


def test_unknown_benchmark_is_a_clear_error(hgx):
    with pytest.raises(GpuvetError, match="unknown benchmark"):
        bench(hgx, "stream")


def test_same_seed_same_figures():
    a = bench(SimBackend.from_ref("mesh-4"), "membw")
    b = bench(SimBackend.from_ref("mesh-4"), "membw")
    assert [r.value for r in a.results] == [r.value for r in b.results]


def test_a_driver_error_on_one_module_is_a_failed_record_and_the_others_still_measure(hgx):
    from gpuvet.bench.context import BenchContext
    from gpuvet.bench.membw import run as run_membw

    engine = hgx.engine()
    healthy = engine.stream

    def broken(module, kind, nbytes):
        if module == "gpu3":
            raise RuntimeError("CUDA error: an illegal memory access was encountered")
        return healthy(module, kind, nbytes)

    engine.stream = broken
    results = run_membw(BenchContext(engine, QUICK), MembwOptions(modules=("gpu2", "gpu3"), kinds=("copy",)))
    by_module = {r.module: r for r in results}
    assert by_module["gpu3"].status == "failed" and "illegal memory access" in by_module["gpu3"].reason
    assert by_module["gpu2"].status == "ok" and by_module["gpu2"].value > 0
