"""A fake of AMD's ``amdsmi`` Python package at its function boundary.

Same function names, argument enums, return shapes and exception classes as the package
(github.com/ROCm/amdsmi py-interface/amdsmi_interface.py and amdsmi_exception.py, snapshot of
2024-10-23; AMD SMI Python API reference, rocm.docs.amd.com/projects/amdsmi/en/docs-6.4.1/
reference/amdsmi-py-api.html). Handles are module indices. Errors are raised as the package
raises them: ``AmdSmiLibraryException`` carrying an ``amdsmi_status_t`` code.

The default is an 8x MI300X OAM board on a full xGMI mesh. Where the values come from:
- market name "AMD Instinct MI300X", device id 0x74a1, gfx942: rocminfo and amd-smi outputs quoted
  in github.com/ROCm/legacy-rocm-build/issues/4750 and /4414;
- vram_size 196,592 (MiB; the package labels it "MB"): KFD's 8 CPX partitions of 25,767,706,624 B
  (legacy-rocm-build/issues/4750), the same figure the catalog holds;
- power cap 750 W (PwrCap 750.0W in rocm-smi on an MI300X, legacy-rocm-build/issues/5231),
  returned in microwatts as amdsmi_get_power_cap_info does;
- PCIe Gen5 x16 OAM: max_pcie_speed 32000 (MT/s: amd-smi's CLI divides it by 1000 to print
  "32 GT/s", amdsmi_cli/amdsmi_commands.py); pcie_interface_version 5;
- link type XGMI (AMDSMI_IOLINK_TYPE_XGMI = 2) and hops 1 between every pair, weight 15 per xGMI
  hop (github.com/ROCm/rocm-systems/pull/7372); bandwidth in MB/s per direct link, as the
  amdgpu driver computes it (lanes x Gb/s x 1000 / 8: 50,000 for MI250X's 25 Gb/s links in
  rocm-systems/issues/5763; MI300X's 16 lanes at 32 Gb/s give 64,000 - assumed, not captured).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import IntEnum
from pathlib import Path
from typing import Any

# amdsmi_status_t values (include/amd_smi/amdsmi.h)
STATUS_INVAL, STATUS_NOT_SUPPORTED, STATUS_NO_PERM = 1, 2, 10
STATUS_NOT_FOUND, STATUS_DRIVER_NOT_LOADED = 31, 34
IOLINK_PCIE, IOLINK_XGMI = 1, 2


class AmdSmiException(Exception):
    """Base exception class, as in amdsmi_exception.py."""


class AmdSmiLibraryException(AmdSmiException):
    def __init__(self, err_code: int) -> None:
        super().__init__(err_code)
        self.err_code = abs(err_code)
        self.err_info = f"AMDSMI status {self.err_code}"

    def get_error_code(self) -> int:
        return self.err_code

    def get_error_info(self) -> str:
        return self.err_info

    def __str__(self) -> str:
        return f"Error code:\n\t{self.err_code} | {self.err_info}"


class AmdSmiParameterException(AmdSmiException):
    pass


class AmdSmiClkType(IntEnum):
    SYS = 0
    GFX = 0
    DF = 1
    DCEF = 2
    SOC = 3
    MEM = 4


class AmdSmiGpuBlock(IntEnum):
    """RAS blocks (amdsmi.h amdsmi_gpu_block_t): the ones gpuvet asks for."""
    UMC = 0x1
    PCIE_BIF = 0x20
    XGMI_WAFL = 0x80


class AmdSmiTemperatureType(IntEnum):
    EDGE = 0
    HOTSPOT = 1
    JUNCTION = 1
    VRAM = 2


class AmdSmiTemperatureMetric(IntEnum):
    CURRENT = 0
    MAX = 1
    CRITICAL = 5


@dataclass
class FakeMi300x:
    bdf: str = "0000:0c:00.0"
    uuid: str = "66ff74a1-0000-1000-80aa-c8d4f5e8a0b1"
    market_name: str = "AMD Instinct MI300X"
    asic_serial: str = "0x6F1F0A2B3C4D5E6F"
    vram_mib: int = 196_592
    pcie_width: int = 16
    pcie_speed_mts: int = 32_000  # current rate; 16,000 and less at idle on real boards
    max_pcie_width: int = 16
    max_pcie_speed_mts: int = 32_000
    pcie_version: int = 5
    power_cap_uw: tuple[int, int, int, int] = (750_000_000, 750_000_000, 0, 750_000_000)  # cap, default, min, max
    ecc_blocks: int = 0x3FFF  # UMC (0x1) and the other RAS blocks enabled
    ecc_uncorrectable: int = 0
    ecc_correctable: int = 0
    xgmi_correctable: int = 0  # RAS counts of the XGMI_WAFL block
    pcie_replays: int = 0  # pcie_metric.pcie_replay_count
    bad_pages: list[int] = field(default_factory=list)  # page status: 0 reserved, 1 pending, 2 unreservable
    numa: int = 0
    hive_id: int = 0x5F1D2A3B4C6E7F80  # one xGMI hive for the board (amdsmi_get_xgmi_info)
    gfx_clock: tuple[int, int, int] = (132, 500, 2100)  # clk, min, max (MHz)
    mem_clock: tuple[int, int, int] = (900, 900, 1300)
    clk_locked: int = 0
    temps_c: dict[str, int] = field(default_factory=lambda: {"EDGE": 0, "HOTSPOT": 41, "VRAM": 35})
    # CRITICAL metric per sensor: amd-smi prints it as SLOWDOWN_TEMP_*_LIMIT (values assumed, not captured)
    critical_c: dict[str, int] = field(default_factory=lambda: {"EDGE": 0, "HOTSPOT": 100, "VRAM": 105})
    socket_power_w: int = 139
    gfx_activity: int = 0
    vram_used_mib: int = 283  # amd-smi monitor's VRAM_USED (MB) of an idle module (assumed, not captured)
    energy_count: int = 0  # the energy accumulator, in ticks of energy_resolution_uj
    energy_resolution_uj: float = 15.259  # amd-smi's counter resolution (µJ a tick); value assumed
    violations: dict[str, bool] = field(default_factory=dict)  # active_* flags set True
    pids: tuple[int, ...] = ()
    lost: bool = False
    unsupported: set[str] = field(default_factory=set)


class FakeAmdsmi:
    """Drop-in for the ``amdsmi`` package in ``Amdsmi(lib=FakeAmdsmi(...))``."""

    AmdSmiException = AmdSmiException
    AmdSmiLibraryException = AmdSmiLibraryException
    AmdSmiParameterException = AmdSmiParameterException
    AmdSmiClkType = AmdSmiClkType
    AmdSmiGpuBlock = AmdSmiGpuBlock
    AmdSmiTemperatureType = AmdSmiTemperatureType
    AmdSmiTemperatureMetric = AmdSmiTemperatureMetric

    def __init__(self, gpus: list[FakeMi300x], links_down: set[frozenset[int]] | None = None,
                 init_error: int | None = None, missing: set[str] | None = None,
                 driver: str = "6.10.5") -> None:
        self.gpus = gpus
        self.links_down = links_down or set()
        # a down pair still typed XGMI, hop count 1, weight of two xGMI hops: reached through another
        # module (github.com/ROCm/rocm-systems/issues/5763 shows hops 1 for routed pairs)
        self.down_routed = False
        self.init_error = init_error
        self.missing = missing or set()
        self.driver = driver
        self.calls: list[str] = []

    def __getattribute__(self, name: str) -> Any:
        if name.startswith("amdsmi_") and name in object.__getattribute__(self, "missing"):
            raise AttributeError(name)
        if name.startswith("amdsmi_"):
            object.__getattribute__(self, "calls").append(name)
        return object.__getattribute__(self, name)

    def _gpu(self, handle: int, fn: str) -> FakeMi300x:
        gpu = self.gpus[handle]
        if gpu.lost:
            raise AmdSmiLibraryException(STATUS_NOT_FOUND)
        if fn in gpu.unsupported:
            raise AmdSmiLibraryException(STATUS_NOT_SUPPORTED)
        return gpu

    # --- library ---------------------------------------------------------------------------
    def amdsmi_init(self, flag: int = 0) -> None:
        if self.init_error is not None:
            raise AmdSmiLibraryException(self.init_error)

    def amdsmi_shut_down(self) -> None:
        return None

    def amdsmi_get_processor_handles(self) -> list[int]:
        return list(range(len(self.gpus)))

    # --- identity --------------------------------------------------------------------------
    def amdsmi_get_gpu_device_bdf(self, h: int) -> str:
        return self._gpu(h, "amdsmi_get_gpu_device_bdf").bdf

    def amdsmi_get_gpu_device_uuid(self, h: int) -> str:
        return self._gpu(h, "amdsmi_get_gpu_device_uuid").uuid

    def amdsmi_get_gpu_asic_info(self, h: int) -> dict[str, Any]:
        g = self._gpu(h, "amdsmi_get_gpu_asic_info")
        return {"market_name": g.market_name, "vendor_id": "0x1002", "vendor_name": "Advanced Micro Devices Inc. [AMD/ATI]",
                "subvendor_id": "0x1002", "device_id": "0x74a1", "rev_id": "0x00", "asic_serial": g.asic_serial,
                "oam_id": h, "num_compute_units": 304, "target_graphics_version": "gfx942"}

    def amdsmi_get_gpu_driver_info(self, h: int) -> dict[str, str]:
        self._gpu(h, "amdsmi_get_gpu_driver_info")
        return {"driver_name": "amdgpu", "driver_version": self.driver, "driver_date": "2015/01/01 00:00"}

    def amdsmi_get_xgmi_info(self, h: int) -> dict[str, int]:
        g = self._gpu(h, "amdsmi_get_xgmi_info")
        return {"xgmi_lanes": 16, "xgmi_hive_id": g.hive_id, "xgmi_node_id": h, "index": h}

    def amdsmi_get_gpu_vram_info(self, h: int) -> dict[str, Any]:
        g = self._gpu(h, "amdsmi_get_gpu_vram_info")
        return {"vram_type": 9, "vram_vendor": 2, "vram_size": g.vram_mib, "vram_bit_width": 8192}

    # --- settings --------------------------------------------------------------------------
    def amdsmi_get_pcie_info(self, h: int) -> dict[str, dict[str, Any]]:
        g = self._gpu(h, "amdsmi_get_pcie_info")
        return {"pcie_static": {"max_pcie_width": g.max_pcie_width, "max_pcie_speed": g.max_pcie_speed_mts,
                                "pcie_interface_version": g.pcie_version, "slot_type": "OAM"},
                "pcie_metric": {"pcie_width": g.pcie_width, "pcie_speed": g.pcie_speed_mts, "pcie_bandwidth": 0,
                                "pcie_replay_count": g.pcie_replays, "pcie_l0_to_recovery_count": 0,
                                "pcie_replay_roll_over_count": 0, "pcie_nak_sent_count": 0,
                                "pcie_nak_received_count": 0, "pcie_lc_perf_other_end_recovery_count": "N/A"}}

    def amdsmi_get_power_cap_info(self, h: int) -> dict[str, int]:
        cap, default, low, high = self._gpu(h, "amdsmi_get_power_cap_info").power_cap_uw
        return {"power_cap": cap, "default_power_cap": default, "dpm_cap": 2100, "min_power_cap": low,
                "max_power_cap": high}

    def amdsmi_get_gpu_ecc_enabled(self, h: int) -> int:
        return self._gpu(h, "amdsmi_get_gpu_ecc_enabled").ecc_blocks

    def amdsmi_get_clock_info(self, h: int, clock_type: AmdSmiClkType) -> dict[str, int]:
        if not isinstance(clock_type, AmdSmiClkType):  # the package refuses a plain int
            raise AmdSmiParameterException(clock_type)
        g = self._gpu(h, "amdsmi_get_clock_info")
        clk, low, high = g.mem_clock if clock_type == AmdSmiClkType.MEM else g.gfx_clock
        return {"clk": clk, "min_clk": low, "max_clk": high, "clk_locked": g.clk_locked, "clk_deep_sleep": 0}

    def amdsmi_topo_get_numa_node_number(self, h: int) -> int:
        return self._gpu(h, "amdsmi_topo_get_numa_node_number").numa

    def amdsmi_get_gpu_process_list(self, h: int) -> list[dict[str, Any]]:
        g = self._gpu(h, "amdsmi_get_gpu_process_list")
        return [{"name": "python3", "pid": p, "mem": 1 << 30, "engine_usage": {"gfx": 0, "enc": 0},
                 "memory_usage": {"gtt_mem": 0, "cpu_mem": 0, "vram_mem": 1 << 30}} for p in g.pids]

    # --- health ----------------------------------------------------------------------------
    def amdsmi_get_gpu_total_ecc_count(self, h: int) -> dict[str, int]:
        g = self._gpu(h, "amdsmi_get_gpu_total_ecc_count")
        return {"correctable_count": g.ecc_correctable, "uncorrectable_count": g.ecc_uncorrectable,
                "deferred_count": 0}

    def amdsmi_get_gpu_ecc_count(self, h: int, block: int) -> dict[str, int]:
        """One RAS block's counts (py-interface's keys); only the xGMI block is modelled."""
        g = self._gpu(h, "amdsmi_get_gpu_ecc_count")
        if block != AmdSmiGpuBlock.XGMI_WAFL:
            return {"correctable_count": 0, "uncorrectable_count": 0, "deferred_count": 0}
        return {"correctable_count": g.xgmi_correctable, "uncorrectable_count": 0, "deferred_count": 0}

    def amdsmi_get_gpu_bad_page_info(self, h: int) -> list[dict[str, int]]:
        g = self._gpu(h, "amdsmi_get_gpu_bad_page_info")
        return [{"value": i, "page_address": 0x1000 * (i + 1), "page_size": 4096, "status": s}
                for i, s in enumerate(g.bad_pages)]

    def amdsmi_get_violation_status(self, h: int) -> dict[str, Any]:
        g = self._gpu(h, "amdsmi_get_violation_status")
        out: dict[str, Any] = {"reference_timestamp": 1, "violation_timestamp": 1, "acc_counter": 0}
        for kind in ("prochot_thrm", "ppt_pwr", "socket_thrm", "vr_thrm", "hbm_thrm"):
            out[f"acc_{kind}"] = 0
            out[f"per_{kind}"] = 0
            out[f"active_{kind}"] = g.violations.get(f"active_{kind}", False)
        return out

    def amdsmi_get_temp_metric(self, h: int, sensor: AmdSmiTemperatureType, metric: AmdSmiTemperatureMetric) -> int:
        if not isinstance(sensor, AmdSmiTemperatureType) or not isinstance(metric, AmdSmiTemperatureMetric):
            raise AmdSmiParameterException(sensor)
        g = self._gpu(h, "amdsmi_get_temp_metric")
        table = g.critical_c if metric == AmdSmiTemperatureMetric.CRITICAL else g.temps_c
        return table[sensor.name]  # JUNCTION is HOTSPOT's alias, as in the package

    def amdsmi_get_power_info(self, h: int) -> dict[str, Any]:
        g = self._gpu(h, "amdsmi_get_power_info")
        return {"current_socket_power": g.socket_power_w, "average_socket_power": "N/A", "gfx_voltage": "N/A",
                "soc_voltage": "N/A", "mem_voltage": "N/A", "power_limit": g.power_cap_uw[0]}

    def amdsmi_get_gpu_vram_usage(self, h: int) -> dict[str, Any]:
        """VRAM in MB (amd-smi monitor's unit), total as vram_info's size: py-interface of ROCm/amdsmi."""
        g = self._gpu(h, "amdsmi_get_gpu_vram_usage")
        return {"vram_total": g.vram_mib, "vram_used": g.vram_used_mib}

    def amdsmi_get_energy_count(self, h: int) -> dict[str, Any]:
        """The accumulator and its resolution in µJ (amdsmi.h); 'power' is the deprecated name of
        the same counter, as py-interface returns it."""
        g = self._gpu(h, "amdsmi_get_energy_count")
        return {"power": g.energy_count, "energy_accumulator": g.energy_count,
                "counter_resolution": g.energy_resolution_uj, "timestamp": 1_700_000_000_000_000}

    def amdsmi_get_gpu_activity(self, h: int) -> dict[str, Any]:
        g = self._gpu(h, "amdsmi_get_gpu_activity")
        return {"gfx_activity": g.gfx_activity, "umc_activity": 0, "mm_activity": "N/A"}

    # --- topology --------------------------------------------------------------------------
    def _pair(self, a: int, b: int, fn: str) -> bool:
        """Whether a and b are joined directly over xGMI (both must answer)."""
        self._gpu(a, fn)
        self._gpu(b, fn)
        return frozenset((a, b)) not in self.links_down

    def _numa_hops(self, a: int, b: int) -> int:
        return 2 if self.gpus[a].numa == self.gpus[b].numa else 3

    def amdsmi_topo_get_link_type(self, a: int, b: int) -> dict[str, int]:
        if self._pair(a, b, "amdsmi_topo_get_link_type") or self.down_routed:
            return {"hops": 1, "type": IOLINK_XGMI}
        return {"hops": self._numa_hops(a, b), "type": IOLINK_PCIE}

    def amdsmi_topo_get_link_weight(self, a: int, b: int) -> int:
        if self._pair(a, b, "amdsmi_topo_get_link_weight"):
            return 15
        return 30 if self.down_routed else 20 * self._numa_hops(a, b)

    def amdsmi_get_minmax_bandwidth_between_processors(self, a: int, b: int) -> dict[str, int]:
        if not self._pair(a, b, "amdsmi_get_minmax_bandwidth_between_processors"):
            raise AmdSmiLibraryException(STATUS_NOT_SUPPORTED)  # the API needs a direct xGMI link
        return {"min_bandwidth": 64_000, "max_bandwidth": 64_000}


# Bus numbers of the eight OAM modules: an assumed layout (0000:05:00.0 is the first module in an
# amd-smi capture quoted in github.com/ROCm/rocm-systems/pull/2987); only their order matters.
MI300X_BUSES = (0x05, 0x26, 0x46, 0x65, 0x85, 0xA6, 0xC6, 0xE5)


def mi300x_8(n: int = 8) -> FakeAmdsmi:
    """An 8x MI300X board as amdsmi reports it: one xGMI link between every pair, four modules
    per NUMA node (socket)."""
    gpus = [FakeMi300x(bdf=f"0000:{MI300X_BUSES[i]:02x}:00.0",
                       uuid=f"{i:02x}ff74a1-0000-1000-80aa-c8d4f5e8a0b1",
                       asic_serial=f"0x6F1F0A2B3C4D5E{i:02X}", numa=i // 4) for i in range(n)]
    return FakeAmdsmi(gpus)


# The kernel log of an AMD node, as /dev/kmsg records (prio,seq,usec,flags;message). Simulated:
# amdgpu's start-up lines of a healthy MI300X, worded as drivers/gpu/drm/amd/amdgpu prints them.
HEALTHY_AMDGPU_LOG = [
    "6,900,5000000,-;[drm] amdgpu kernel modesetting enabled.",
    "6,901,5000100,-;amdgpu 0000:05:00.0: amdgpu: Fetched VBIOS from IFWI",
    "6,902,5000200,-;amdgpu 0000:05:00.0: amdgpu: VRAM: 196592M 0x0000008000000000 - 0x00000B7FFFFFFFFF",
    "6,903,5000300,-;[drm] Initialized amdgpu 3.57.0 20150101 for 0000:05:00.0 on minor 1",
]
_REAL = Path(__file__).parent.parent / "data" / "captures" / "real"
_DMESG_TIME = re.compile(r"^\[\s*[0-9.]+\]\s*")


def real_amdgpu_log(name: str, first_seq: int = 1000) -> list[str]:
    """A dmesg capture of tests/data/captures/real/ (its # header left out) as kmsg records: the
    message without dmesg's timestamp, numbered after the healthy start-up lines."""
    text = [t for t in (_REAL / name).read_text(encoding="utf-8").splitlines() if not t.startswith("#")]
    return [f"3,{first_seq + i},{i},-;{_DMESG_TIME.sub('', t)}" for i, t in enumerate(text)]


def write_kmsg(path: Path, records: list[str]) -> Path:
    path.write_text("\n".join(records) + "\n", encoding="utf-8")
    return path
