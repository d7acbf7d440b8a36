"""Benchmarks on real hardware through PyTorch: CUDA modules, or the host CPU standing in for
one. Every torch call that runs a benchmark lives here (collectives in ``collectives``).

Timing mechanism (the policy is ``gpuvet.bench.timing``): on CUDA, events recorded on the
stream around the k operations, then the end event is waited for; on the CPU, perf_counter
around them (CPU ops are synchronous). Inputs are random, never zeros; GEMM operands rotate
between two sets so one product's output is never the next one's cached input.

Process-wide torch switches a benchmark needs (TF32 for the ``tf32`` dtype) are set for that
workload only and restored after; device settings (clocks, power, ECC) are never touched.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING

from gpuvet.backends.engine import (
    HOST,
    BenchEngine,
    BenchModule,
    CollectiveSession,
    GemmCheck,
    Monitor,
    NoMonitor,
    PeriodicMonitor,
    StreamKind,
    TrainSpec,
    Transfer,
    Unsupported,
    Workload,
)
from gpuvet.backends.host_load import HostLoad
from gpuvet.backends.readings import TelemetrySummary
from gpuvet.errors import BackendError

if TYPE_CHECKING:  # torch is imported when a benchmark runs, never with this module
    from torch import Tensor
    from torch import device as TorchDevice
    from torch import dtype as TorchDtype
    from torch.cuda import Stream

    from gpuvet.node.catalog import ModuleModel

_ELEM = {"fp64": 8, "fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2, "fp8": 1}


def import_torch() -> ModuleType:
    try:
        import torch
    except ImportError:
        raise BackendError("PyTorch is not installed, and real benchmarks run through it",
                           fix="pip install 'gpuvet[torch]' (or try a simulated node: --node hgx-h200-8).") from None
    return torch


def _torch_dtype(torch: ModuleType, dtype: str) -> TorchDtype | None:
    found: TorchDtype | None = {"fp64": torch.float64, "fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16,
            "bf16": torch.bfloat16, "fp8": getattr(torch, "float8_e4m3fn", None)}[dtype]
    return found


@contextlib.contextmanager
def _tf32(torch: ModuleType, enabled: bool) -> Iterator[None]:
    """TF32 matmuls on for the tf32 dtype only, off for fp32; restored afterwards."""
    saved = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = enabled
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32 = saved


@dataclass
class _Timed:
    """A workload: ``step(i)`` runs operation i; timing synchronised for ``device``."""

    torch: ModuleType
    device: TorchDevice
    step: Callable[[int], None]
    around: Callable[[], contextlib.AbstractContextManager[None]] = contextlib.nullcontext
    keep: object = None  # buffers the workload owns until closed
    counter: int = 0

    def timed(self, repeats: int) -> float:
        torch = self.torch
        with self.around():
            if self.device.type == "cuda":
                torch.cuda.synchronize(self.device)
                stream = torch.cuda.current_stream(self.device)
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record(stream)
                for _ in range(repeats):
                    self.step(self.counter)
                    self.counter += 1
                end.record(stream)
                end.synchronize()
                return float(start.elapsed_time(end)) / 1e3
            begin = time.perf_counter()
            for _ in range(repeats):
                self.step(self.counter)
                self.counter += 1
            return time.perf_counter() - begin

    def close(self) -> None:
        self.keep = None


class TorchEngine(BenchEngine):
    """``devices`` maps module ids to torch devices ("cuda:0", "cpu")."""

    simulated = False

    def __init__(self, modules: Sequence[BenchModule], devices: dict[str, str],
                 monitor_factory: Callable[[Sequence[str]], Monitor] | None = None,
                 driver_version: str | None = None) -> None:
        self.torch = import_torch()
        self._modules = list(modules)
        self._devices: dict[str, TorchDevice] = {m: self.torch.device(d) for m, d in devices.items()}
        self._monitor_factory = monitor_factory
        self._driver_version = driver_version
        cuda = any(d.type == "cuda" for d in self._devices.values())
        self.collective_backend = "nccl" if cuda else "gloo"
        first = self._modules[0] if self._modules else None
        self.device_name = first.model.name if first else "none"
        self._saved_threads: int | None = None

    @classmethod
    def for_host(cls, model: ModuleModel, threads: int | None = None, load: HostLoad | None = None) -> TorchEngine:
        """The CPU as the one module, ``cpu``, running ``threads`` torch threads (restored on
        close); ``load`` is how busy the host was when they were chosen."""
        engine = cls([BenchModule("cpu", model, is_host=True, free_memory_bytes=_available_host_memory())],
                     {"cpu": "cpu"}, monitor_factory=lambda ids: HostMonitor())
        engine.host_load = load
        if threads is not None:
            engine._saved_threads = engine.torch.get_num_threads()
            engine.torch.set_num_threads(threads)
            engine.cpu_threads = threads
        return engine

    def close(self) -> None:
        """Give the process its torch thread count back."""
        if self._saved_threads is not None:
            self.torch.set_num_threads(self._saved_threads)
            self._saved_threads = None

    def versions(self) -> dict[str, str | None]:
        nccl = None
        if self.collective_backend == "nccl":
            try:
                nccl = ".".join(map(str, self.torch.cuda.nccl.version()))
            except (AttributeError, RuntimeError):
                nccl = None
        return {"torch_version": self.torch.__version__, "cuda_version": self.torch.version.cuda,
                "driver_version": self._driver_version, "nccl_version": nccl}

    def modules(self) -> list[BenchModule]:
        return list(self._modules)

    def monitor(self, modules: Sequence[str]) -> Monitor:
        return self._monitor_factory(modules) if self._monitor_factory else NoMonitor()

    def _device(self, module: str) -> TorchDevice:
        if module == HOST:
            cpu: TorchDevice = self.torch.device("cpu")
            return cpu
        if module not in self._devices:
            raise Unsupported(f"no module {module!r} on this machine")
        return self._devices[module]

    def _alloc_check(self, device: TorchDevice, nbytes: int) -> None:
        """Refuse sizes that cannot fit, before the allocator fails halfway."""
        if device.type == "cuda":
            free, _ = self.torch.cuda.mem_get_info(device)
            if nbytes > free * 0.9:
                raise Unsupported(f"needs {nbytes / 1e9:.1f} GB; {device} has {free / 1e9:.1f} GB free")
        else:
            available = _available_host_memory()
            if available and nbytes > available * 0.8:
                raise Unsupported(f"needs {nbytes / 1e9:.1f} GB; the host has {available / 1e9:.1f} GB available")

    def _random(self, shape: tuple[int, ...], dtype: str, device: TorchDevice) -> Tensor:
        """Random data in [0.5, 1.5) — never zeros — in ``dtype`` (fp8 is made in fp32 and cast)."""
        torch = self.torch
        x: Tensor = torch.rand(shape, dtype=torch.float32, device=device) + 0.5
        return x.to(_torch_dtype(torch, dtype))

    # --- compute -----------------------------------------------------------------------
    def _matmul(self, dtype: str, device: TorchDevice) -> Callable[[Tensor, Tensor], Tensor]:
        torch = self.torch
        if dtype == "fp8":
            if device.type != "cuda" or not hasattr(torch, "_scaled_mm"):
                raise Unsupported("fp8 products need a GPU with FP8 tensor cores (Hopper or newer)")
            if torch.cuda.get_device_capability(device) < (8, 9):
                raise Unsupported("fp8 products need compute capability 8.9 or newer")
            one = torch.ones((), device=device, dtype=torch.float32)
            return lambda a, b: torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
        if dtype == "tf32" and device.type != "cuda":
            raise Unsupported("tf32 is a tensor-core format; the CPU has none")
        matmul: Callable[[Tensor, Tensor], Tensor] = torch.matmul
        return matmul

    def gemm(self, module: str, dtype: str, n: int) -> Workload:
        torch = self.torch
        device = self._device(module)
        mm = self._matmul(dtype, device)
        self._alloc_check(device, 5 * n * n * _ELEM[dtype] + n * n * 2)
        operands = [(self._random((n, n), dtype, device), self._random((n, n), dtype, device)) for _ in range(2)]
        out: list[Tensor | None] = [None]

        def step(i: int) -> None:
            a, b = operands[i % 2]
            out[0] = mm(a, b)

        return _Timed(torch, device, step, around=lambda: _tf32(torch, dtype == "tf32"), keep=(operands, out))

    def gemm_check(self, module: str, dtype: str, n: int, seed: int) -> GemmCheck:
        torch = self.torch
        device = self._device(module)
        mm = self._matmul(dtype, device)
        gen = torch.Generator().manual_seed(seed)
        a = torch.randn((n, n), generator=gen, dtype=torch.float32).to(_torch_dtype(torch, dtype))
        b = torch.randn((n, n), generator=gen, dtype=torch.float32).to(_torch_dtype(torch, dtype))
        with _tf32(torch, dtype == "tf32"):
            c = mm(a.to(device), b.to(device)).cpu()
        reference = a.double() @ b.double()
        error = float((c.double() - reference).abs().max() / reference.abs().max())
        raw = c.contiguous().view(torch.uint8).numpy().tobytes()
        return GemmCheck(hashlib.sha256(raw).hexdigest()[:16], error)

    def stream(self, module: str, kind: StreamKind, nbytes: int) -> Workload:
        torch = self.torch
        device = self._device(module)
        count = nbytes // 4
        arrays = 2 if kind == "copy" else 3
        self._alloc_check(device, arrays * nbytes)
        a, b = self._random((count,), "fp32", device), self._random((count,), "fp32", device)
        c = self._random((count,), "fp32", device) if kind == "triad" else None

        def step(i: int) -> None:
            if c is None:
                b.copy_(a)
            else:
                torch.add(b, c, alpha=0.5, out=a)

        return _Timed(torch, device, step, keep=(a, b, c))

    def train(self, module: str, spec: TrainSpec) -> Workload:
        from gpuvet.backends.torch.models import training_step

        device = self._device(module)
        step, keep = training_step(self.torch, device, spec)
        return _Timed(self.torch, device, step, keep=keep)

    # --- transfers ---------------------------------------------------------------------
    def copy(self, transfers: Sequence[Transfer]) -> Workload:
        torch = self.torch
        buffers: list[tuple[Tensor, Tensor]] = []
        for t in transfers:
            src_dev, dst_dev = self._device(t.src), self._device(t.dst)
            for dev in {src_dev, dst_dev}:
                self._alloc_check(dev, t.nbytes)
            pin = t.pinned and torch.cuda.is_available() and "cuda" in (src_dev.type, dst_dev.type)
            src = torch.rand(t.nbytes // 4, device=src_dev) + 0.5
            dst = torch.empty(t.nbytes // 4, device=dst_dev)
            if pin:
                src = src.pin_memory() if src_dev.type == "cpu" else src
                dst = dst.pin_memory() if dst_dev.type == "cpu" else dst
            buffers.append((src, dst))
        if any(d.type == "cuda" for s, d_ in buffers for d in (s.device, d_.device)):
            return _CudaCopies(torch, buffers)
        return _ThreadCopies(buffers)

    def collectives(self, modules: Sequence[str]) -> CollectiveSession:
        from gpuvet.backends.torch.collectives import TorchCollectives

        devices = [str(self._device(m.split(":")[0])) for m in modules]
        return TorchCollectives.start(tuple(modules), devices, self.collective_backend)

    def joined_collectives(self) -> CollectiveSession:
        from gpuvet.backends.torch.collectives import JoinedCollectives

        return JoinedCollectives.join(self.collective_backend)


class _CudaCopies:
    """Each transfer on its own stream of the device that issues it; timed by events on that
    stream. The set's time is the slowest transfer's."""

    def __init__(self, torch: ModuleType, buffers: list[tuple[Tensor, Tensor]]) -> None:
        self.torch = torch
        self.plans: list[tuple[Tensor, Tensor, TorchDevice, Stream]] = []
        for src, dst in buffers:
            device = src.device if src.device.type == "cuda" else dst.device
            self.plans.append((src, dst, device, torch.cuda.Stream(device)))

    def timed(self, repeats: int) -> float:
        torch = self.torch
        for _, _, device, _ in self.plans:
            torch.cuda.synchronize(device)
        events = []
        for src, dst, device, stream in self.plans:
            with torch.cuda.device(device), torch.cuda.stream(stream):
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record(stream)
                for _ in range(repeats):
                    dst.copy_(src, non_blocking=True)
                end.record(stream)
                events.append((start, end))
        for _, end in events:
            end.synchronize()
        return max(float(s.elapsed_time(e)) for s, e in events) / 1e3

    def close(self) -> None:
        self.plans = []


@dataclass
class _ThreadCopies:
    """Host memory copies, one thread each (torch releases the GIL while copying); the set's
    time runs from the common start to the last finish."""

    buffers: list[tuple[Tensor, Tensor]]

    def timed(self, repeats: int) -> float:
        if len(self.buffers) == 1:
            src, dst = self.buffers[0]
            begin = time.perf_counter()
            for _ in range(repeats):
                dst.copy_(src)
            return time.perf_counter() - begin
        barrier = threading.Barrier(len(self.buffers) + 1)
        ends = [0.0] * len(self.buffers)

        def work(i: int, src: Tensor, dst: Tensor) -> None:
            barrier.wait()
            for _ in range(repeats):
                dst.copy_(src)
            ends[i] = time.perf_counter()

        threads = [threading.Thread(target=work, args=(i, s, d)) for i, (s, d) in enumerate(self.buffers)]
        for t in threads:
            t.start()
        barrier.wait()
        begin = time.perf_counter()
        for t in threads:
            t.join()
        return max(ends) - begin

    def close(self) -> None:
        self.buffers = []


def _available_host_memory() -> int | None:
    import psutil

    return int(psutil.virtual_memory().available)


class HostMonitor(PeriodicMonitor):
    """CPU frequency and temperature (where the kernel exposes them), sampled every 0.5 s: on
    a CPU the sampler shares the cores it measures, so it samples rarely and stops asking for
    a reading the kernel does not have."""

    PERIOD_S = 0.5

    def __init__(self) -> None:
        super().__init__()
        self._freqs: list[float] = []
        self._temps: list[float] = []
        self._has_temps: bool | None = None

    def sample(self) -> None:
        import psutil

        f = psutil.cpu_freq()
        if f and f.current:
            self._freqs.append(float(f.current))
        reader = getattr(psutil, "sensors_temperatures", None)
        if reader is None or self._has_temps is False:
            return
        temps = reader()
        values = [t.current for entries in temps.values() for t in entries if t.current]
        self._has_temps = bool(values)
        if values:
            self._temps.append(max(values))

    def summary(self) -> dict[str, TelemetrySummary]:
        from statistics import median

        f = self._freqs
        return {"cpu": TelemetrySummary(
            samples=max(len(f), len(self._temps)),
            core_clock_mhz_median=median(f) if f else None, core_clock_mhz_min=min(f) if f else None,
            core_clock_mhz_max=max(f) if f else None, temp_c_max=max(self._temps) if self._temps else None,
        )}
