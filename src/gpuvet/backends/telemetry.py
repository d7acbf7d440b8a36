"""What `watch` reads from a backend: who is there, and their telemetry now."""

from __future__ import annotations

from abc import ABC, abstractmethod

from gpuvet.backends.readings import ModuleIdentity, Sample


class TelemetrySource(ABC):
    simulated: bool = False

    @abstractmethod
    def present(self, t: float) -> list[ModuleIdentity]:
        """Modules there now (re-enumerating when the source can)."""

    @abstractmethod
    def sample(self, t: float, slow: bool) -> list[Sample]:
        """One sample per module that answered; slow fields only when ``slow``."""

    @abstractmethod
    def slowdown_c(self) -> dict[str, float]:
        """Each module's first thermal throttle point (°C)."""

    def host(self) -> dict[str, float]:
        """Host metrics: CPU load (0..1) and memory in use (bytes)."""
        import psutil

        return {"cpu_load_ratio": psutil.cpu_percent(interval=None) / 100.0,
                "memory_used_bytes": float(psutil.virtual_memory().used)}
