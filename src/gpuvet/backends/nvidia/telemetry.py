"""Live telemetry from NVIDIA modules through the NVML gateway, in two tiers: fast fields
(temperature, power, clocks, utilisation, throttle reasons) every interval; slow ones (ECC
counters, PCIe link, NVLink state and its CRC/replay/recovery counters) on slow ticks. Modules
are re-enumerated when the number of NVIDIA PCI functions and NVML's count disagree (hot-plug);
identity is the UUID."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from gpuvet.backends.nvidia.gateway import DeviceQuery, Nvml
from gpuvet.backends.nvidia.monitor import NVML_CLOCK_MEM, NVML_CLOCK_SM, NVML_TEMPERATURE_GPU
from gpuvet.backends.nvidia.xids import XidFeed, kernel_log_reader
from gpuvet.backends.readings import ModuleIdentity, Sample, Unavailable
from gpuvet.backends.telemetry import SlowFields, TelemetrySource, designed_fabric_links_of, sample_each
from gpuvet.node.catalog import find_model

if TYPE_CHECKING:
    from gpuvet.backends.nvidia.backend import NvidiaBackend, NvidiaDevice

NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC = 0, 1, 0
NVML_NVLINK_MAX_LINKS = 18
# nvmlNvLinkErrorCounter_t (nvml.h): DL_REPLAY, DL_RECOVERY, DL_CRC_FLIT, DL_CRC_DATA
NVML_NVLINK_ERROR_COUNTERS = (0, 1, 2, 3)


def nvidia_pci_functions(root: Path = Path("/sys/bus/pci/devices")) -> int | None:
    """NVIDIA 3D/display controllers the kernel sees (vendor 0x10de, class 0x03xx)."""
    if not root.is_dir():
        return None
    count = 0
    for dev in root.iterdir():
        try:
            if (dev / "vendor").read_text().strip() == "0x10de" and (dev / "class").read_text().startswith("0x03"):
                count += 1
        except OSError:
            continue
    return count


class NvmlTelemetry(TelemetrySource):
    simulated = False

    def __init__(self, backend: NvidiaBackend) -> None:
        self.backend = backend
        self.nvml: Nvml = backend.nvml
        self._expected_links: dict[str, int] = designed_fabric_links_of(backend)
        self._xids = self._xid_feed()
        self._devices_seen = list(backend._devices)

    def _xid_feed(self) -> XidFeed:
        from gpuvet.backends.kernel_log import KMSG

        return XidFeed(self.nvml, list(self.backend._devices),
                       kernel_log_reader(self.backend.kernel_log or KMSG)).start()

    @property
    def xid_source(self) -> str:
        """Where this node's Xids come from: "nvml events", "kernel log", or why neither."""
        return self._xids.source

    def present(self, t: float) -> list[ModuleIdentity]:
        pci = nvidia_pci_functions()
        if pci is not None and pci != len(self.backend._devices):
            self.backend.rescan()
        return [ModuleIdentity(d.id, d.uuid, d.bus_id, d.name) for d in self.backend._devices]

    def slowdown_c(self) -> dict[str, float]:
        out = {}
        for d in self.backend._devices:
            model = find_model(d.name)
            out[d.id] = (model.slowdown_c if model and model.slowdown_c else 89.0)
        return out

    def sample(self, t: float, slow: bool) -> list[Sample]:
        if self.backend._devices != self._devices_seen:  # re-enumerated: new handles, a new event set
            self._xids.close()
            self._xids, self._devices_seen = self._xid_feed(), list(self.backend._devices)
        xids = self._xids.poll(slow)
        samples = sample_each(self.backend._devices, lambda d: self._sample(d, t, slow, xids.get(d.id, ())))
        answered = {s.module for s in samples}
        # a module lost with its Xid (79: fallen off the bus) reports the Xid once, with no reading
        return samples + [Sample(t, d.id, d.uuid, None, None, None, None, None, xids=xids[d.id])
                          for d in self.backend._devices if d.id in xids and d.id not in answered]

    def _sample(self, d: NvidiaDevice, t: float, slow: bool, xids: tuple[int, ...]) -> Sample:
        q = DeviceQuery(self.nvml, d.handle, d.id).or_none

        power = q("nvmlDeviceGetPowerUsage")
        util = q("nvmlDeviceGetUtilizationRates")
        busy = getattr(util, "gpu", None) if util is not None else None
        reasons = q("nvmlDeviceGetCurrentClocksEventReasons")
        if reasons is None:
            reasons = q("nvmlDeviceGetCurrentClocksThrottleReasons")
        temp = _num(q("nvmlDeviceGetTemperature", NVML_TEMPERATURE_GPU))
        sm, mem = _num(q("nvmlDeviceGetClockInfo", NVML_CLOCK_SM)), _num(q("nvmlDeviceGetClockInfo", NVML_CLOCK_MEM))
        memory = q("nvmlDeviceGetMemoryInfo")
        energy = _int(q("nvmlDeviceGetTotalEnergyConsumption"))
        f = self._slow_fields(d, q) if slow else SlowFields()
        return Sample(t, d.id, d.uuid, temp, power / 1000 if isinstance(power, (int, float)) else None, sm, mem,
                      busy / 100 if isinstance(busy, (int, float)) else None,
                      int(reasons) if isinstance(reasons, int) else 0,
                      **f.sample_fields(),
                      fb_used_bytes=int(memory.used) if memory is not None else None,
                      fb_free_bytes=int(memory.free) if memory is not None else None, energy_mj=energy,
                      xids=xids)

    def _slow_fields(self, d: NvidiaDevice, q: Callable[..., object]) -> SlowFields:
        """ECC counters, PCIe generation and width, NVLink links up (read on slow ticks only)."""
        ecc = (_int(q("nvmlDeviceGetTotalEccErrors", NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC)),
               _int(q("nvmlDeviceGetTotalEccErrors", NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC)))
        pcie = (_int(q("nvmlDeviceGetCurrPcieLinkGeneration")), _int(q("nvmlDeviceGetMaxPcieLinkGeneration")),
                _int(q("nvmlDeviceGetCurrPcieLinkWidth")), _int(q("nvmlDeviceGetMaxPcieLinkWidth")))
        up, errors = 0, None
        for link in range(NVML_NVLINK_MAX_LINKS):
            state = self.nvml.query("nvmlDeviceGetNvLinkState", d.handle, link, module=d.id)
            if isinstance(state, Unavailable):
                if "not supported" in state.reason or "invalid" in state.reason:
                    break
                continue
            up += int(bool(state))
            for counter in NVML_NVLINK_ERROR_COUNTERS if state else ():
                n = self.nvml.query("nvmlDeviceGetNvLinkErrorCounter", d.handle, link, counter, module=d.id)
                if isinstance(n, int) and not isinstance(n, bool) and n >= 0:
                    errors = (errors or 0) + n
        expected = self._expected_links.setdefault(d.id, up)
        return SlowFields(*ecc, *pcie, up if expected else None, expected or None, errors,
                          _int(q("nvmlDeviceGetPcieReplayCounter")))


def _num(v: object) -> float | None:
    return float(v) if isinstance(v, (int, float)) else None


def _int(v: object) -> int | None:
    return int(v) if isinstance(v, (int, float)) else None
