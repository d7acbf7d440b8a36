"""Benchmarks measured for real on this machine's CPU through PyTorch (what CI can run)."""

import importlib.util
import math

import pytest

from gpuvet.backends.engine import BenchModule
from gpuvet.backends.host import HostBackend, cpu_peak, host_module_model, read_host_info
from gpuvet.bench.collective import CollectiveOptions
from gpuvet.bench.context import BenchContext
from gpuvet.bench.copy import CopyOptions
from gpuvet.bench.copy import run as run_copy
from gpuvet.bench.gemm import GemmOptions
from gpuvet.bench.gemm import run as run_gemm
from gpuvet.bench.membw import MembwOptions
from gpuvet.bench.model import ModelOptions
from gpuvet.bench.runner import run_benchmark
from gpuvet.bench.timing import QUICK
from tests.support.ports import free_port

# torch is imported by the tests that run, not at collection: the other test worker never loads it
pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None,
                                reason="the torch extra is installed by CI; real CPU measurements need it")


def _torch_engine(modules_and_devices):
    from gpuvet.backends.torch.engine import TorchEngine

    return TorchEngine(*modules_and_devices)


@pytest.fixture(scope="module")
def host():
    return HostBackend("no GPU in the test machine")


def ok(report_or_results, metric):
    """The figures that came out ``ok`` (an ``unreliable`` one is tested where it matters)."""
    results = getattr(report_or_results, "results", report_or_results)
    return [r for r in results if r.metric == metric and r.status == "ok"]


def test_cpu_gemm_is_measured_against_the_computed_peak(host):
    import torch

    rep = run_benchmark("gemm", host, GemmOptions(dtypes=("fp32", "fp64", "tf32"), size=256), plan=QUICK)
    assert not rep.simulated and rep.environment.torch_version == torch.__version__
    fp32, fp64 = measured(rep, "tflops")
    assert all(r.status == "ok" or r.reason and "peak" in r.reason for r in (fp32, fp64))
    assert fp32.unit == "TFLOPS" and fp32.module == "cpu"
    assert math.isfinite(fp32.value) and fp32.value > 0  # a real rate (its size is the machine's business)
    if fp32.peak is not None and fp32.status == "ok":
        assert 0 < fp32.pct_of_peak <= 100  # "ok" is never above the physical bound
    assert rep.environment.cpu_threads >= 1 and rep.environment.host_load
    assert fp32.stats.n >= 3 and fp32.stats.min <= fp32.median <= fp32.stats.max and fp32.cv >= 0
    assert fp32.telemetry["cpu"].samples >= 1
    tf32 = next(r for r in rep.results if r.dtype == "tf32" and r.metric == "tflops")
    assert tf32.status == "skipped" and "tensor-core" in tf32.reason
    checks = [r for r in rep.results if r.metric == "check"]
    assert {c.dtype for c in checks} == {"fp32", "fp64"} and all(c.correct for c in checks)
    assert next(c for c in checks if c.dtype == "fp64").value < 1e-12


def _divergent_engine():
    """Two CPU 'modules'; m1's products are off by one unit in the last place of one element."""
    import torch

    from gpuvet.backends.torch.engine import TorchEngine

    class DivergentEngine(TorchEngine):
        def _matmul(self, dtype, device):
            mm = super()._matmul(dtype, device)
            if not getattr(self, "_diverge", False):
                return mm

            def off(a, b):
                c = mm(a, b)
                c[0, 0] = torch.nextafter(c[0, 0], torch.tensor(float("inf"), dtype=c.dtype))
                return c

            return off

        def gemm_check(self, module, dtype, n, seed):
            self._diverge = module == "m1"
            try:
                return super().gemm_check(module, dtype, n, seed)
            finally:
                self._diverge = False

    return DivergentEngine(*_modules_and_devices())


def test_a_module_computing_different_bits_is_caught():
    engine = _divergent_engine()
    results = run_gemm(BenchContext(engine, QUICK), GemmOptions(dtypes=("fp32",), size=64))
    checks = {r.module: r for r in results if r.metric == "check"}
    # within float tolerance, yet not the same bits as its peer: named, not passed
    assert checks["m1"].value < 1e-3
    assert checks["m0"].detail["digest"] != checks["m1"].detail["digest"]
    flagged = [m for m, c in checks.items() if c.correct is False]
    assert flagged and "different bits" in checks[flagged[0]].reason


def measured(report_or_results, metric):
    results = getattr(report_or_results, "results", report_or_results)
    return [r for r in results if r.metric == metric and r.status in ("ok", "unreliable")]


def _modules_and_devices():
    model = host_module_model(read_host_info(), cpu_peak())
    return [BenchModule("m0", model), BenchModule("m1", model)], {"m0": "cpu", "m1": "cpu"}


def test_cpu_membw_copy_and_triad(host):
    rep = run_benchmark("membw", host, MembwOptions(size_bytes=16 * 2**20), plan=QUICK)
    copy, triad = ok(rep, "copy")[0], ok(rep, "triad")[0]
    for r in (copy, triad):
        assert r.unit == "GB/s" and r.value > 0 and r.size_bytes == 16 * 2**20
    assert copy.detail["bytes_moved_per_op"] == 2 * 16 * 2**20


def test_host_copy_alone_and_all_cores_at_once(host):
    rep = run_benchmark("copy", host, CopyOptions(size_bytes=8 * 2**20), plan=QUICK)
    alone = ok(rep, "host_copy")[0]
    assert alone.value > 0
    (ratio,) = [r for r in rep.results if r.metric == "contention_ratio"]
    assert ratio.detail["set"] == "host_copies"
    if rep.environment.cpu_threads == 1:  # a busy host leaves one CPU: nothing to run at once
        assert ratio.status == "skipped" and "one CPU" in ratio.reason
    elif ratio.status == "ok":
        assert 0 < ratio.value <= 1 + max(0.02, 2 * max(r.cv for r in rep.results if r.cv is not None))
    else:  # beyond the physical bound: flagged with the reason, never "ok"
        assert ratio.status == "unreliable" and ratio.value > 1 and "cannot" in ratio.reason


def test_copy_channels_between_two_modules_run_the_pair_paths():
    engine = _torch_engine(_modules_and_devices())
    results = run_copy(BenchContext(engine, QUICK), CopyOptions(size_bytes=4 * 2**20, tests=("h2d", "p2p", "concurrent")))
    assert {r.metric for r in results} >= {"h2d", "d2h", "p2p_one_way", "p2p_two_way", "aggregate", "contention_ratio"}
    assert all(r.value > 0 for r in results)
    # every figure is ok, or (a busy machine disturbing one of two timings) flagged beyond its bound with the reason
    assert all(r.status == "ok" or r.status == "unreliable" and r.reason for r in results)
    assert {r.between for r in ok(results, "p2p_one_way")} == {("m0", "m1"), ("m1", "m0")}


@pytest.mark.slow
def test_gloo_collectives_are_timed_and_checked(host):
    ops = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast")
    rep = run_benchmark("collective", host, CollectiveOptions(ops=ops, max_bytes=2**16, factor=16, nprocs=2), plan=QUICK)
    busbw = ok(rep, "busbw")
    assert {r.detail["op"] for r in busbw} == set(ops)
    assert all(r.correct is True and r.value > 0 and r.detail["backend"] == "gloo" for r in busbw)
    assert {r.size_bytes for r in busbw} == {8, 128, 2048, 32768}
    fits = [r for r in rep.results if r.metric == "latency"]
    assert len(fits) == len(ops)  # one per collective: fitted, or skipped saying why (tiny sizes can be flat)
    assert all(r.value > 0 if r.status == "ok" else r.reason for r in fits)


@pytest.mark.slow
def test_a_planted_wrong_collective_result_is_caught():
    engine = _torch_engine(_modules_and_devices())
    session = engine.collectives(["m0", "m1", "m0", "m1"])  # four ranks on the CPU
    try:
        assert session.check("all_reduce", 1024, "fp32")
        assert not session.check("all_reduce", 1024, "fp32", corrupt_rank=3)
        assert not session.check("all_gather", 1024, "fp32", corrupt_rank=0)
    finally:
        session.close()


@pytest.mark.slow
def test_training_throughput_on_cpu(host):
    opts = ModelOptions(batch=2, image_size=32, seq_len=16, d_model=64, layers=1, heads=4, vocab=128)
    rep = run_benchmark("model", host, opts, plan=QUICK)
    images = ok(rep, "images_per_s")[0]
    tokens = ok(rep, "tokens_per_s")[0]
    assert images.unit == "images/s" and images.value > 0
    assert tokens.unit == "tokens/s" and tokens.value > 0
    for mfu in ok(rep, "mfu"):
        assert 0 < mfu.value < 100


@pytest.mark.slow
def test_the_same_command_runs_as_ranks_of_a_torchrun_job(tmp_path):
    """Several nodes use torchrun; here two ranks on this machine, the same command line."""
    import json
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", "--master-port", str(free_port()),
           "-m", "gpuvet", "bench", "collective", "--torchrun", "--json", "--quick",
           "--ops", "all_reduce,all_gather", "--max-bytes", "4096", "--factor", "8"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=180, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    data = json.loads(done.stdout)  # one report: only rank 0 prints
    busbw = [r for r in data["results"] if r["metric"] == "busbw"]
    assert {r["detail"]["ranks"] for r in busbw} == {2}
    assert all(r["correct"] is True for r in busbw) and len(busbw) == 2 * 4


def test_torchrun_flag_outside_torchrun_says_how_to_start_it(host, monkeypatch):
    from gpuvet.errors import GpuvetError

    for var in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(GpuvetError, match="torchrun --nproc-per-node"):
        run_benchmark("collective", host, CollectiveOptions(torchrun=True), plan=QUICK)


def test_a_figure_above_a_peak_computed_from_a_vms_current_clock_says_the_peak_is_the_doubt():
    """A VM exposes no maximum clock: the peak rests on the clock it reports now, which a boosting
    CPU exceeds; 'no hardware exceeds it, re-run on a quiet machine' sent the user to the wrong fix."""
    from gpuvet.bench.records import BenchResult, FigureStats

    stats = FigureStats(n=3, median=0.2, q1=0.2, q3=0.2, iqr=0.0, min=0.2, max=0.2, cv=0.0, ops_per_sample=1,
                        seconds_per_op_median=0.01)
    vm = BenchResult.measured("gemm", "tflops", "TFLOPS", stats, simulated=False, peak=0.166,
                              peak_basis="computed: 2 cores × 2.60 GHz (current frequency (no maximum exposed, "
                                         "e.g. in a VM)) × 256-bit SIMD × FMA × 2 pipes")
    assert vm.status == "unreliable" and "runs faster than that" in vm.reason and "quiet" not in vm.reason
    cited = BenchResult.measured("gemm", "tflops", "TFLOPS", stats, simulated=False, peak=0.166,
                                 peak_basis="https://example.invalid/datasheet.pdf")
    assert cited.status == "unreliable" and "quiet machine" in cited.reason and "https" not in cited.reason
