"""Live telemetry from AMD modules through the AMD SMI gateway, in NVML telemetry's two tiers:
fast fields (junction temperature, socket power, clocks, activity, throttle reasons, VRAM in
use, the energy counter) every interval; slow ones (RAS error counts, PCIe link, xGMI peers) on slow ticks. No
hot-plug rescan yet: the modules are those found when the backend opened."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuvet.backends.amd.backend import pcie_gen, pcie_gen_max, throttle_mask
from gpuvet.backends.amd.gateway import Amdsmi, ModuleLost, ProcessorQuery, pick, pick_int
from gpuvet.backends.readings import ModuleIdentity, Sample
from gpuvet.backends.telemetry import SlowFields, TelemetrySource, designed_fabric_links_of, sample_each
from gpuvet.node.catalog import ModuleModel

if TYPE_CHECKING:
    from gpuvet.backends.amd.backend import AmdBackend, AmdDevice


class AmdTelemetry(TelemetrySource):
    simulated = False

    def __init__(self, backend: AmdBackend) -> None:
        self.backend = backend
        self.smi: Amdsmi = backend.smi
        self._expected_links: dict[str, int] = designed_fabric_links_of(backend, bonded=False)
        self._models: dict[str, ModuleModel] = {}

    def present(self, t: float) -> list[ModuleIdentity]:
        return [ModuleIdentity(d.id, d.uuid, d.bus_id, d.name) for d in self.backend._devices]

    def slowdown_c(self) -> dict[str, float]:
        """The junction (hotspot) temperature where the firmware starts to slow the module down:
        amd-smi's SLOWDOWN_TEMP_HOTSPOT_LIMIT, the hotspot sensor's CRITICAL metric."""
        sensor = self.smi.enum("AmdSmiTemperatureType", "HOTSPOT")
        critical = self.smi.enum("AmdSmiTemperatureMetric", "CRITICAL")
        out = {}
        for d in self.backend._devices:
            got = self.smi.query("amdsmi_get_temp_metric", d.handle, sensor, critical, module=d.id)
            out[d.id] = float(got) if isinstance(got, (int, float)) and got > 0 else 89.0  # NVML's default
        return out

    def sample(self, t: float, slow: bool) -> list[Sample]:
        return sample_each(self.backend._devices, lambda d: self._sample(d, t, slow))

    def _sample(self, d: AmdDevice, t: float, slow: bool) -> Sample:
        q = ProcessorQuery(self.smi, d.handle, d.id)
        temp = q("amdsmi_get_temp_metric", self.smi.enum("AmdSmiTemperatureType", "HOTSPOT"),
                 self.smi.enum("AmdSmiTemperatureMetric", "CURRENT"))
        power = pick_int(q("amdsmi_get_power_info"), "current_socket_power")  # W
        gfx = pick_int(q("amdsmi_get_clock_info", self.smi.enum("AmdSmiClkType", "GFX")), "clk")
        mem = pick_int(q("amdsmi_get_clock_info", self.smi.enum("AmdSmiClkType", "MEM")), "clk")
        busy = pick_int(q("amdsmi_get_gpu_activity"), "gfx_activity")  # %
        mask = throttle_mask(q("amdsmi_get_violation_status"))
        f = self._slow_fields(d, q) if slow else SlowFields()
        vram = q("amdsmi_get_gpu_vram_usage")  # MB, amd-smi's unit (MiB, as vram_info's size)
        used, total = pick_int(vram, "vram_used"), pick_int(vram, "vram_total")
        return Sample(t, d.id, d.uuid, _num(temp), _num(power), _num(gfx), _num(mem),
                      busy / 100 if isinstance(busy, int) else None, mask if isinstance(mask, int) else 0,
                      **f.sample_fields(),
                      fb_used_bytes=used * 2**20 if isinstance(used, int) else None,
                      fb_free_bytes=(total - used) * 2**20 if isinstance(used, int) and isinstance(total, int)
                      and total >= used else None,
                      energy_mj=_energy_mj(q("amdsmi_get_energy_count")))

    def _slow_fields(self, d: AmdDevice, q: ProcessorQuery) -> SlowFields:
        """RAS error counts, PCIe generation and width, direct xGMI peers and their RAS error
        counts (slow ticks only)."""
        ecc = q("amdsmi_get_gpu_total_ecc_count")
        pcie = q("amdsmi_get_pcie_info")
        # a direct link, as the node counts them (amdsmi's XGMI type alone also covers peers
        # reached through others, so a dead direct link would still count)
        model = self._models.setdefault(d.id, self.backend._model(d))
        up = sum(self._direct(d, other, model) for other in self.backend._devices if other is not d)
        expected = self._expected_links.setdefault(d.id, up)
        return SlowFields(_int(pick_int(ecc, "correctable_count")), _int(pick_int(ecc, "uncorrectable_count")),
                          _int(pcie_gen(pick_int(pcie, "pcie_metric", "pcie_speed"))), _int(pcie_gen_max(pcie)),
                          _int(pick_int(pcie, "pcie_metric", "pcie_width")),
                          _int(pick_int(pcie, "pcie_static", "max_pcie_width")),
                          up if expected else None, expected or None, self._xgmi_errors(q),
                          _int(pick_int(pcie, "pcie_metric", "pcie_replay_count")))

    def _direct(self, d: AmdDevice, other: AmdDevice, model: ModuleModel) -> bool:
        """Whether d's direct xGMI link to ``other`` is up; a peer that no longer answers is its
        own module_lost, not a reason to drop d's sample."""
        try:
            return self.backend._xgmi_link(d, other, model) is not None
        except ModuleLost:
            return False

    def _xgmi_errors(self, q: ProcessorQuery) -> int | None:
        """The xGMI links' RAS error counts (block XGMI_WAFL, amdsmi.h), correctable and not, since
        the driver loaded: the fabric's error counter, as NVLink's CRC/replay counts are."""
        got = q("amdsmi_get_gpu_ecc_count", self.smi.enum("AmdSmiGpuBlock", "XGMI_WAFL"))
        counts = [pick_int(got, k) for k in ("correctable_count", "uncorrectable_count")]
        return sum(c for c in counts if isinstance(c, int)) if any(isinstance(c, int) for c in counts) else None


def _energy_mj(got: object) -> int | None:
    """The energy accumulator in mJ: ticks × the counter's resolution in µJ (amdsmi.h); older
    packages name the ticks 'power'."""
    ticks = pick_int(got, "energy_accumulator")
    if not isinstance(ticks, int):
        ticks = pick_int(got, "power")
    resolution = pick(got, "counter_resolution")
    if not isinstance(ticks, int) or not isinstance(resolution, (int, float)) or resolution <= 0:
        return None
    return int(ticks * resolution / 1000)


def _num(v: object) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _int(v: object) -> int | None:
    return int(v) if isinstance(v, int) and not isinstance(v, bool) else None
