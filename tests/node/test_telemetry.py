"""Telemetry beside a benchmark: NVML through a fake binding, the CPU's computed peak."""

import pytest

from gpuvet.backends.host import cpu_peak
from gpuvet.backends.nvidia.gateway import Nvml
from gpuvet.backends.nvidia.monitor import NvmlMonitor, reason_names
from tests.fakes.fake_nvml import FakeGpu, FakeNvml


def monitor_for(gpus, **kwargs):
    nvml = Nvml(lib=FakeNvml(gpus, **kwargs))
    return NvmlMonitor(nvml, {f"gpu{i}": i for i in range(len(gpus))}, [f"gpu{i}" for i in range(len(gpus))])


def test_power_capped_module_reports_power_cap_reason_and_cap():
    capped = FakeGpu(power_mw=(350_000, 700_000, 200_000, 700_000), power_draw_mw=349_000, clock_event_mask=0x4,
                     clocks={1: 1410, 2: 3201})
    healthy = FakeGpu(clocks={1: 1980, 2: 3201}, clock_event_mask=0x1)
    mon = monitor_for([capped, healthy])
    mon.start()
    summary = mon.stop()
    assert summary["gpu0"].throttle_reasons == ("sw_power_cap",)
    assert summary["gpu0"].power_limit_w == 350 and summary["gpu0"].power_w_max == pytest.approx(349)
    assert summary["gpu0"].core_clock_mhz_median == 1410
    assert summary["gpu1"].throttle_reasons == ()  # idle is not a throttle
    assert summary["gpu1"].temp_c_max == 61 and summary["gpu0"].samples >= 2


def test_unsupported_sensor_is_none_not_zero():
    gpu = FakeGpu(unsupported={"nvmlDeviceGetTemperature", "nvmlDeviceGetPowerUsage"})
    mon = monitor_for([gpu])
    mon.start()
    s = mon.stop()["gpu0"]
    assert s.temp_c_max is None and s.power_w_median is None and s.core_clock_mhz_median == 345


def test_older_driver_falls_back_to_throttle_reasons():
    class OldNvml(FakeNvml):
        def nvmlDeviceGetCurrentClocksThrottleReasons(self, h):
            return 0x40 | 0x8

    nvml = Nvml(lib=OldNvml([FakeGpu()], missing={"nvmlDeviceGetCurrentClocksEventReasons"}))
    mon = NvmlMonitor(nvml, {"gpu0": 0}, ["gpu0"])
    mon.start()
    assert mon.stop()["gpu0"].throttle_reasons == ("hw_slowdown", "hw_thermal_slowdown")


def test_reason_bits():
    assert reason_names(0x4 | 0x20 | 0x1) == ("sw_power_cap", "sw_thermal_slowdown")


INTEL = ["vendor_id\t: GenuineIntel", "cpu family\t: 6", "model name\t: Intel(R) Xeon(R) Platinum 8480+ @ 2.00GHz",
         "flags\t\t: fpu sse2 avx avx2 fma avx512f amx_bf16"]
ZEN4 = ["vendor_id\t: AuthenticAMD", "cpu family\t: 25", "model name\t: AMD EPYC 9654",
        "flags\t\t: sse2 avx avx2 fma avx512f avx512_bf16"]


def test_cpu_peak_intel_avx512_two_fma_pipes():
    peak = cpu_peak(INTEL, cores=56, freq_mhz=(0.0, 0.0))
    assert peak.vector_bits == 512 and peak.ghz == 2.0 and "model name" in peak.clock_basis
    assert peak.gflops("fp64") == 56 * 2.0 * 8 * 2 * 2  # 3584 GFLOPS
    assert peak.gflops("fp32") == 2 * peak.gflops("fp64")
    assert peak.gflops("tf32") is None


def test_cpu_peak_zen4_counts_avx512_as_256_bit():
    peak = cpu_peak(ZEN4, cores=96, freq_mhz=(3700.0, 2400.0))
    assert peak.vector_bits == 256 and peak.ghz == 3.7
    assert peak.gflops("fp64") == pytest.approx(96 * 3.7 * 4 * 2 * 2)
    assert peak.gflops("bf16") == pytest.approx(4 * peak.gflops("fp64"))


def test_cpu_peak_unknown_without_clock():
    assert cpu_peak(ZEN4[:3] + ["flags\t\t: sse2"], cores=4, freq_mhz=(0.0, 0.0)) is None
