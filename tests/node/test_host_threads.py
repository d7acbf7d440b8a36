"""The CPU path tells the truth: threads chosen from the affinity mask and the load, a peak that
knows the instruction sets, figures beyond a physical bound flagged, a busy host a WARN."""

import json

import pytest

from gpuvet.backends.host import CpuPeak, cpu_peak
from gpuvet.backends.host_load import BusyProcess, HostLoad, choose_threads, read_host_load
from gpuvet.bench.records import BenchResult, FigureStats, Status
from gpuvet.checks.model import Check, Layer, Verdict
from gpuvet.checks.software import host_load_check
from gpuvet.validate.rules import default_rules

SPR_FLAGS = "fpu sse2 avx avx2 fma avx512f avx512_bf16 avx512_fp16 amx_tile amx_bf16 amx_int8"


def cpuinfo(flags, vendor="GenuineIntel", family=6):
    return [f"vendor_id\t: {vendor}", f"cpu family\t: {family}", "model name\t: Test CPU", f"flags\t\t: {flags}"]


def test_threads_leave_the_cpus_other_processes_use():
    quiet, busy = HostLoad(cpus=2, other_cpus=0.1, load_1m=0.2), HostLoad(cpus=2, other_cpus=2.0, load_1m=2.3)
    assert choose_threads(quiet) == 2 and not quiet.busy
    assert choose_threads(busy) == 1 and busy.busy  # never zero threads
    assert choose_threads(HostLoad(cpus=16, other_cpus=3.4, load_1m=None)) == 13
    assert choose_threads(HostLoad(cpus=16, other_cpus=0, load_1m=None), physical_cores=8) == 8  # SMT siblings


def test_a_busy_host_is_seen_and_named(tmp_path):
    import subprocess
    import sys

    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        load = read_host_load(window_s=0.5, top=10_000)
    finally:
        hog.kill()
        hog.wait()
    assert load.other_cpus >= 0.5 and load.busy  # a busy loop uses a whole CPU (more when others run too)
    assert any(p.pid == hog.pid and p.cpus > 0 for p in load.top) and f"pid {hog.pid}" in load.describe()


def test_the_cpu_peak_knows_amx_and_avx512():
    spr = cpu_peak(cpuinfo(SPR_FLAGS), cores=4, freq_mhz=(2000.0, 2000.0))
    assert spr.gflops("fp32") == 4 * 2.0 * 16 * 2 * 2  # 512-bit FMA, 2 pipes
    assert spr.gflops("bf16") == 4 * 2.0 * 1024  # AMX tiles: 1024 FLOPs per cycle per core
    assert "AMX" in spr.instruction_set("bf16")
    zen3 = cpu_peak(cpuinfo("sse2 avx avx2 fma", vendor="AuthenticAMD", family=25), cores=2, freq_mhz=(2500.0, 0))
    assert zen3.gflops("bf16") == zen3.gflops("fp32") == 2 * 2.5 * 8 * 2 * 2  # no native bf16: the fp32 rate
    avx512bf16 = CpuPeak(1, 1.0, "test", 512, 2, bf16_dot=True)
    assert avx512bf16.gflops("bf16") == 2 * avx512bf16.gflops("fp32")


def _stats(median, cv=0.01):
    return FigureStats(5, median, median, median, 0.0, median, median, cv, 1, 1.0)


def test_a_figure_above_its_peak_is_unreliable_not_ok():
    over = BenchResult.measured("gemm", "tflops", "TFLOPS", _stats(1.35), simulated=False, peak=1.0)
    assert over.status is Status.UNRELIABLE and "135 %" in over.reason
    fine = BenchResult.measured("gemm", "tflops", "TFLOPS", _stats(0.7), simulated=False, peak=1.0)
    assert fine.status is Status.OK and fine.reason is None


@pytest.mark.parametrize("ratio,spread,status", [(3.68, 0.05, Status.UNRELIABLE), (1.01, 0.01, Status.OK),
                                                 (0.5, 0.01, Status.OK), (1.2, 0.02, Status.UNRELIABLE)])
def test_a_contention_ratio_above_one_is_unreliable(ratio, spread, status):
    r = BenchResult.ratio_at_most_one("copy", "contention_ratio", ratio, simulated=False, spread=spread)
    assert r.status is status and (r.reason is None) == (status is Status.OK)


def test_a_busy_host_is_a_warn_with_its_reason_and_the_cpu_never_fails_for_speed():
    load = HostLoad(2, 1.9, 2.1, (BusyProcess(4242, "python3", 1.0),))
    check = host_load_check(load, threads=1)
    assert check.verdict is Verdict.WARN and "python3 (pid 4242" in check.reason and "governor" not in check.reason
    slow_cpu = Check(Layer.COMPUTE, "gemm_fp32", Verdict.PASS, value=0.001, pct_of_peak=1.0, device="cpu", cv=0.01)
    judged = default_rules().judge(slow_cpu)
    assert judged.verdict is Verdict.WARN and "host_load" in judged.fix
    assert host_load_check(HostLoad(2, 0.0, 0.1), 2).verdict is Verdict.PASS


def test_validate_on_a_busy_cpu_only_host_warns_and_names_the_load(capsys, tmp_path, monitor_free, monkeypatch):
    from gpuvet.backends import host_load
    from gpuvet.cli.app import main

    busy = HostLoad(2, 2.0, 2.4, (BusyProcess(99, "stress-ng", 2.0),))
    monkeypatch.setattr(host_load, "read_host_load", lambda *a, **k: busy)
    code = main(["validate", "--level", "quick", "--host-only", "--json", "--logbook", str(tmp_path / "lb.db")])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["verdict"] == "warn"
    assert all(c["verdict"] != "fail" for c in data["checks"])
    (load,) = [c for c in data["checks"] if c["name"] == "host_load"]
    assert load["verdict"] == "warn" and "stress-ng" in load["reason"]


@pytest.fixture
def monitor_free():
    pytest.importorskip("torch", reason="real CPU measurements need the torch extra")
