"""What a backend must offer to be benchmarked: workloads it can run and time, telemetry it
can sample while they run. The benchmarks (``gpuvet.bench``) decide what to run, how often and
what the numbers mean; an engine only runs and times, synchronised as its device requires.

A ``Workload`` has ``timed(k) -> seconds`` (run the operation k times back to back) and
``close()``. Engines: ``TorchEngine`` (NVIDIA GPUs through CUDA, or the host CPU), ``SimEngine``
(the simulated node).
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol

from gpuvet.backends.readings import TelemetrySummary
from gpuvet.node.catalog import ModuleModel
from gpuvet.node.model import HOST as HOST  # re-exported: benchmarks name transfers with them
from gpuvet.node.model import Transfer as Transfer

if TYPE_CHECKING:
    from gpuvet.backends.host_load import HostLoad

StreamKind = Literal["copy", "triad"]
TrainModel = Literal["resnet50", "gpt"]


class Workload(Protocol):
    def timed(self, repeats: int) -> float: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class BenchModule:
    """A module as benchmarks see it. ``is_host``: the CPU itself stands in (host backend)."""

    id: str
    model: ModuleModel
    is_host: bool = False
    free_memory_bytes: int | None = None


@dataclass(frozen=True)
class GemmCheck:
    """A seeded product: the bits it produced (digest) and its error against a float64 reference."""

    digest: str
    max_rel_error: float


@dataclass(frozen=True)
class TrainSpec:
    model: TrainModel
    batch: int
    amp: bool
    flops_per_step: float  # analytic, computed by the benchmark; the simulator derives time from it
    image_size: int = 224
    seq_len: int = 512
    d_model: int = 1024
    layers: int = 4
    heads: int = 16
    vocab: int = 32000


class Unsupported(Exception):
    """The engine cannot run this (dtype on this module, size that does not fit); the message
    says why and becomes a ``skipped`` result."""


class Monitor(ABC):
    """Samples telemetry between ``start`` and ``stop``; ``summary`` per module."""

    @abstractmethod
    def start(self) -> None: ...

    @abstractmethod
    def stop(self) -> dict[str, TelemetrySummary]: ...


class PeriodicMonitor(Monitor):
    """A monitor that calls ``sample()`` every ``PERIOD_S`` on a thread between start and stop,
    once more at each end (so even a short run has two samples), then ``summary()``."""

    PERIOD_S = 0.1

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @abstractmethod
    def sample(self) -> None: ...

    @abstractmethod
    def summary(self) -> dict[str, TelemetrySummary]: ...

    def _loop(self) -> None:
        while not self._stop.wait(self.PERIOD_S):
            self.sample()

    def start(self) -> None:
        self.sample()
        self._thread = threading.Thread(target=self._loop, daemon=True, name=f"gpuvet-{type(self).__name__}")
        self._thread.start()

    def stop(self) -> dict[str, TelemetrySummary]:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.sample()
        return self.summary()


class NoMonitor(Monitor):
    def start(self) -> None:
        pass

    def stop(self) -> dict[str, TelemetrySummary]:
        return {}


@dataclass
class CollectiveSession(ABC):
    """A group of ranks, one per module, that stays up for a whole size sweep."""

    nranks: int
    members: tuple[str, ...] = field(default=())

    @abstractmethod
    def workload(self, op: str, size_bytes: int, dtype: str) -> Workload: ...

    @abstractmethod
    def check(self, op: str, size_bytes: int, dtype: str, corrupt_rank: int | None = None) -> bool:
        """Run ``op`` once on known data and verify every rank's result exactly.
        ``corrupt_rank`` plants a wrong element on that rank first (to test the check)."""

    @property
    def algorithm(self) -> str | None:
        """The algorithm the last workload used, when the engine knows it."""
        return None

    def close(self) -> None:
        pass


class BenchEngine(ABC):
    simulated: bool = False
    device_name: str = "unknown"
    collective_backend: str = "unknown"  # "nccl", "gloo", "simulated"
    cpu_threads: int | None = None  # the threads a CPU engine chose for itself
    host_load: HostLoad | None = None  # how busy the host was when the engine started

    @abstractmethod
    def modules(self) -> list[BenchModule]: ...

    @abstractmethod
    def gemm(self, module: str, dtype: str, n: int) -> Workload: ...

    @abstractmethod
    def gemm_check(self, module: str, dtype: str, n: int, seed: int) -> GemmCheck: ...

    @abstractmethod
    def stream(self, module: str, kind: StreamKind, nbytes: int) -> Workload:
        """``copy``: b = a; ``triad``: a = b + s·c. ``nbytes`` is the size of one array."""

    @abstractmethod
    def copy(self, transfers: Sequence[Transfer]) -> Workload:
        """All ``transfers`` at once, each on its own stream; timed until the last finishes."""

    @abstractmethod
    def collectives(self, modules: Sequence[str]) -> CollectiveSession: ...

    def joined_collectives(self) -> CollectiveSession:
        """This process as one rank of a job ``torchrun`` started (several nodes)."""
        raise Unsupported("this backend cannot join a torchrun job")

    @abstractmethod
    def train(self, module: str, spec: TrainSpec) -> Workload: ...

    def monitor(self, modules: Sequence[str]) -> Monitor:
        return NoMonitor()

    def versions(self) -> dict[str, str | None]:
        """torch_version, cuda_version, driver_version where they apply."""
        return {}

    def close(self) -> None:
        pass

    @contextmanager
    def monitoring(self, modules: Sequence[str]) -> Iterator[dict[str, TelemetrySummary]]:
        """``with engine.monitoring(ids) as telemetry:`` — filled in when the block ends."""
        monitor = self.monitor(modules)
        out: dict[str, TelemetrySummary] = {}
        monitor.start()
        try:
            yield out
        finally:
            out.update(monitor.stop())
