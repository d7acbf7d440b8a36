"""Batch Y's refused healthy outputs (issue 46, YX1), fixed for their families on lines written here in each tool's
own format: the first dcgm-exporter's lower-case metrics and omnistat's rocm_* metrics (Prometheus text), the amdgpu
driver's pp_dpm_* files and amdvbflash -i's table, NVML values as a binding prints them (CUDA.jl's named tuples,
pynvml's bitmask), the habanalabs and i915/xe drivers' healthy boot lines, and Intel Gaudi's Synapse status and
HCL check lines. Healthy lines are read, never refused, and judged clear; the faults in the same families are
found (a nonzero uncorrectable RAS count, a hardware slowdown bit, a failed device acquire)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuvet.captures.read import parse_text
from tests.support.helpers import capture_findings

BATCH = Path(__file__).resolve().parents[1] / "data" / "captures" / "fresh_y"


def test_the_first_dcgm_exporters_lower_case_samples_name_their_gpu_and_reading() -> None:
    fc = parse_text('dcgm_gpu_temp{gpu="1",uuid="GPU-aaaa"} 41\ndcgm_power_usage{gpu="1",uuid="GPU-aaaa"} 61.5\n'
                    'dcgm_ecc_dbe_volatile_total{gpu="1",uuid="GPU-aaaa"} 0\n', "m.txt")
    assert fc.smi is not None and [m.fields["Index"] for m in fc.smi.modules] == ["1"]
    fields = fc.smi.modules[0].fields
    assert fields["GPU Power Readings/Power Draw"] == "61.5 W" and fields["GPU UUID"] == "GPU-aaaa"
    assert fields["ECC Errors/Volatile/Double Bit/Total"] == "0"


def test_omnistat_ras_counts_of_zero_are_one_clear_amd_module_and_a_nonzero_uncorrectable_is_a_fault(
        tmp_path: Path) -> None:
    zero = "".join(f'rocm_ras_{b}_{k}_count{{card="0"}} 0.0\n' for b in ("umc", "gfx") for k in ("correctable",
                                                                                                    "uncorrectable"))
    fc = parse_text('rocm_version_info{card="0",driver_ver="6.8.5",vbios="113-D65201-042"} 1.0\n' + zero, "o.txt")
    assert [(m.label, m.ecc_uncorrectable, m.vbios, m.tool) for m in fc.amd.modules] == [
        ("card0", 0, "113-D65201-042", "omnistat")]
    assert not {k: v for k, v in capture_findings(tmp_path, zero).items() if v in ("warn", "critical")}
    bad = capture_findings(tmp_path, zero.replace('rocm_ras_umc_uncorrectable_count{card="0"} 0.0',
                                                  'rocm_ras_umc_uncorrectable_count{card="0"} 3.0'))
    assert any(sev in ("warn", "critical") for sev in bad.values())


def test_pp_dpm_levels_are_said_and_amdvbflash_rows_are_amd_modules() -> None:
    text = ("$ cat /sys/class/drm/card1/device/pp_dpm_sclk\n0: 500Mhz\n1: 1350Mhz *\n2: 1750Mhz\n\n"
            "adapter seg  bn dn dID       asic           flash      romsize test    bios p/n   \n"
            "======= ==== == == ==== =============== ============== ======= ==== ================\n"
            "  0    0000 c3 00 740F MI210           GD25Q80C        100000 pass 113-D67301-063\n")
    fc = parse_text(text.replace("$ cat", "$ cat /sys/class/drm/card1/device/pp_dpm_fclk\n0: 1200Mhz *\n$ cat"), "a.txt")
    assert [(m.name, m.bus_id, m.device_id, m.vbios) for m in fc.amd.modules] == [
        ("AMD MI210", "0000:C3:00.0", "740F", "113-D67301-063")]
    assert any("card1 pp_dpm_sclk: 3 level(s)" in n and "in use 1350Mhz" in n for n in fc.amd.notes)


def test_cuda_jl_clock_event_reasons_are_read_as_qs_and_a_hardware_slowdown_is_found(tmp_path: Path) -> None:
    idle = ("julia> NVML.clock_event_reasons(dev)\n(idle = true, display_setting = false, hw_power_brake = false, "
            "sw_power_cap = false, application_setting = false, hw_slow = false, sync_boost = false, sw_thermal = "
            "false, hw_thermal = false)\n\njulia> NVML.clock_info(dev)\n(sm = 210, graphics = 210, memory = 405, "
            "video = 555)\n")
    fc = parse_text(idle, "n.txt")
    assert fc.smi is not None
    fields = fc.smi.modules[0].fields
    assert fields["Clocks Event Reasons/Idle"] == "Active" and fields["Clocks Event Reasons/HW Slowdown"] == "Not Active"
    assert fields["Clocks/Memory"] == "405 MHz"
    assert not {k: v for k, v in capture_findings(tmp_path, idle).items() if v in ("warn", "critical")}
    hot = capture_findings(tmp_path, idle.replace("hw_thermal = false", "hw_thermal = true"))
    assert any(sev in ("warn", "critical") for sev in hot.values())


def test_pynvmls_bitmask_is_decoded_per_nvml_h() -> None:
    fc = parse_text(">>> pynvml.nvmlDeviceGetCurrentClocksThrottleReasons(handle)\n136\n", "p.txt")
    assert fc.smi is not None
    fields = fc.smi.modules[0].fields
    assert fields["Clocks Event Reasons/HW Power Brake Slowdown"] == "Active"  # 0x80
    assert fields["Clocks Event Reasons/HW Slowdown"] == "Active"  # 0x8
    assert fields["Clocks Event Reasons/SW Power Cap"] == "Not Active"


def test_habanalabs_healthy_boot_lines_list_the_devices_and_the_driver() -> None:
    fc = parse_text("[    2.1] habanalabs 0000:b3:00.0: Habana Labs Gaudi2 device detected\n"
                    "[    2.2] habanalabs 0000:b3:00.0: Driver version: 1.18.0-ee698fb\n", "h.txt")
    assert [(m.name, m.bus_id) for m in fc.accel.modules] == [("Intel Gaudi2", "0000:B3:00.0")]
    assert fc.accel.driver == "1.18.0-ee698fb"


def test_i915_and_xe_boot_lines_are_read_with_the_platform_and_firmware(tmp_path: Path) -> None:
    text = ("[    3.1] i915 0000:00:02.0: [drm] Found ALDERLAKE_P (device ID 46a6) display version 13.00 stepping D0\n"
            "[    3.2] i915 0000:00:02.0: [drm] Finished loading DMC firmware i915/adlp_dmc.bin (v2.20)\n"
            "[    3.3] i915 0000:00:02.0: [drm] GT0: GuC firmware i915/adlp_guc_70.bin version 70.36.0\n"
            "[    3.4] [drm] Initialized i915 1.6.0 20230929 for 0000:00:02.0 on minor 1\n")
    fc = parse_text(text, "i.txt")
    assert [(m.name, m.bus_id, m.device_id) for m in fc.xpu.modules] == [("Intel ALDERLAKE_P", "0000:00:02.0", "46a6")]
    assert any("GuC 70.36.0" in n and "DMC 2.20" in n for n in fc.xpu.notes)
    assert not {k: v for k, v in capture_findings(tmp_path, text).items() if v in ("warn", "critical")}


def test_a_synapse_status_and_a_failed_hcl_check_are_a_set_up_failure() -> None:
    fc = parse_text("hcl_device_control_factory.cpp::71(initDevice): The condition [ false ] failed. Invalid server "
                    "type (4[OCP1]) requested to generate controller.\nHCCL demo error: In function initDevice(): "
                    "synDeviceAcquire(&resources.deviceHandle, nullptr) failed with synapse error: 8\n", "s.txt")
    assert [(f.kind, f.at.source) for f in fc.ascend.failures] == [
        ("init", "hcl_device_control_factory.cpp:71"), ("init", "synDeviceAcquire")]
    assert "synNoDeviceFound" in fc.ascend.failures[1].at.message


@pytest.mark.parametrize("name", ["dcgm_gputools58_discovery_power_usage", "amdvbflash_rocm2844_mi100_mclk_single_level",
                                  "dmesg_vllmfork2222_habanalabs_gaudi2e_detected",
                                  "omnistat_omnistat158_rocm_ras_counters_zero", "nvml_cudajl2194_clock_event_reasons",
                                  "dmesg_i915sriov483_xe_n100_boot"])
def test_batch_ys_healthy_files_are_read_not_refused(tmp_path: Path, name: str) -> None:
    text = (BATCH / f"{name}.txt").read_text(encoding="utf-8")
    assert not {k: v for k, v in capture_findings(tmp_path, text).items() if v in ("warn", "critical")}
    assert parse_text(text, f"{name}.txt").kinds


def test_batch_ys_hccl_demo_is_a_set_up_failure(tmp_path: Path) -> None:
    text = (BATCH / "hccl_hccldemo44_invalid_server_type_aws.txt").read_text(encoding="utf-8")
    assert any(sev in ("warn", "critical") for sev in capture_findings(tmp_path, text).values())
