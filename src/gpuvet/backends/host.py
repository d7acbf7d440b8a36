"""The host: CPU, sockets, NUMA, memory, OS. Always present, GPU or not."""

from __future__ import annotations

import platform
import socket
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import psutil

from gpuvet import __version__
from gpuvet.backends.base import Backend
from gpuvet.backends.readings import HostInfo, Inventory, ModuleIdentity, Sample, SoftwareInfo, Unavailable
from gpuvet.node.catalog import ModuleModel
from gpuvet.node.model import Endpoint, EndpointKind, Host, Link, LinkKind, Node

if TYPE_CHECKING:
    from gpuvet.backends.engine import BenchEngine
    from gpuvet.backends.telemetry import TelemetrySource


def _cpuinfo() -> list[str]:
    try:
        return Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


def _cpu_model(lines: list[str]) -> str | Unavailable:
    for line in lines:
        if line.lower().startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or Unavailable("no model name in /proc/cpuinfo")


def _sockets(lines: list[str]) -> int | Unavailable:
    ids = {line.split(":", 1)[1].strip() for line in lines if line.startswith("physical id")}
    return len(ids) if ids else Unavailable("no 'physical id' in /proc/cpuinfo")


def _numa_nodes() -> int | Unavailable:
    nodes = list(Path("/sys/devices/system/node").glob("node[0-9]*"))
    return len(nodes) if nodes else Unavailable("no /sys/devices/system/node")


def read_host_info() -> HostInfo:
    lines = _cpuinfo()
    cores = psutil.cpu_count(logical=False)
    threads = psutil.cpu_count(logical=True)
    return HostInfo(
        hostname=socket.gethostname(),
        cpu_model=_cpu_model(lines),
        sockets=_sockets(lines),
        cores_physical=cores if cores else Unavailable("psutil could not count cores"),
        threads_logical=threads if threads else Unavailable("psutil could not count threads"),
        numa_nodes=_numa_nodes(),
        memory_bytes=int(psutil.virtual_memory().total),
        os=f"{platform.system()} {platform.release()}",
        kernel=platform.version(),
        python=sys.version.split()[0],
    )


def host_node(info: HostInfo, modules: tuple = ()) -> Node:  # type: ignore[type-arg]
    count = info.sockets if isinstance(info.sockets, int) else 1
    sockets = tuple(Endpoint(f"cpu{s}", EndpointKind.SOCKET) for s in range(count))
    links = tuple(Link(a.id, b.id, LinkKind.SMP, 1, None)
                  for i, a in enumerate(sockets) for b in sockets[i + 1:])
    host = Host(count, None, info.memory_bytes if isinstance(info.memory_bytes, int) else None,
                info.cpu_model if isinstance(info.cpu_model, str) else None)
    return Node(info.node_name, modules, sockets, links, host)


class HostBackend(Backend):
    """No GPU modules: the host alone, with a note saying why no module was found."""

    name = "host"
    simulated = False

    def __init__(self, why_no_modules: str) -> None:
        self.why_no_modules = why_no_modules
        self._why = why_no_modules
        self._info = read_host_info()

    def inventory(self) -> Inventory:
        software = SoftwareInfo(__version__, Unavailable(self._why), Unavailable(self._why), Unavailable(self._why))
        hint = "Try the simulated supernode: gpuvet inventory --node hgx-h200-8"
        return Inventory(self.name, False, (), self._info, software, (*self.notes(), hint))

    def notes(self) -> tuple[str, ...]:
        """Why the node has no module, for every command that shows it (topo's missing modules included)."""
        return (f"No GPU module found ({self._why}); showing the host only.",)

    def node(self) -> Node:
        return host_node(self._info)

    def telemetry(self) -> TelemetrySource:
        """No module to sample: host metrics only."""
        from gpuvet.backends.telemetry import TelemetrySource

        class HostOnly(TelemetrySource):
            def present(self, t: float) -> list[ModuleIdentity]:
                return []

            def sample(self, t: float, slow: bool) -> list[Sample]:
                return []

            def slowdown_c(self) -> dict[str, float]:
                return {}

        return HostOnly()

    def engine(self) -> BenchEngine:
        """Benchmarks on the CPU through PyTorch: real measurements of the host, with as many
        threads as there are CPUs no other process is using (see ``host_load``)."""
        from gpuvet.backends.host_load import choose_threads, read_host_load
        from gpuvet.backends.torch.engine import TorchEngine

        peak = cpu_peak()
        load = read_host_load()
        threads = choose_threads(load, peak.cores if peak else None)
        return TorchEngine.for_host(host_module_model(self._info, peak), threads=threads, load=load)


# FLOPs per cycle per core of one AMX unit (TDPBF16PS: a 16×16×32 tile product every 16
# cycles = 512 multiply-adds; Intel's optimization manual, "Intel AMX" chapter).
AMX_BF16_FLOPS_PER_CYCLE = 1024


@dataclass(frozen=True)
class CpuPeak:
    """The CPU's theoretical peak: cores × clock × FLOPs per cycle for each instruction set.

    fp64/fp32: SIMD lanes × 2 (FMA) × FMA pipes. bf16/fp16: AMX tiles where the CPU has them,
    else the AVX-512 dot-product or half-precision FMA rate (twice fp32), else the fp32 rate
    (without native instructions the library converts to fp32 and can go no faster).
    """

    cores: int
    ghz: float
    clock_basis: str  # where the clock came from
    vector_bits: int
    fma_pipes: int
    bf16_dot: bool = False  # AVX-512 BF16 dot products (twice the fp32 rate)
    amx_bf16: bool = False  # AMX tiles with bf16 (Sapphire Rapids and newer)
    fp16_fma: bool = False  # AVX-512 FP16 arithmetic (twice the fp32 rate)
    amx_fp16: bool = False  # AMX tiles with fp16 (Granite Rapids)

    def flops_per_cycle(self, dtype: str) -> int | None:
        fp32 = (self.vector_bits // 32) * 2 * self.fma_pipes
        if dtype == "fp64":
            return (self.vector_bits // 64) * 2 * self.fma_pipes
        if dtype == "fp32":
            return fp32
        if dtype == "bf16":
            return AMX_BF16_FLOPS_PER_CYCLE if self.amx_bf16 else 2 * fp32 if self.bf16_dot else fp32
        if dtype == "fp16":
            return AMX_BF16_FLOPS_PER_CYCLE if self.amx_fp16 else 2 * fp32 if self.fp16_fma else fp32
        return None

    def gflops(self, dtype: str) -> float | None:
        per_cycle = self.flops_per_cycle(dtype)
        return None if per_cycle is None else self.cores * self.ghz * per_cycle

    def instruction_set(self, dtype: str) -> str:
        if dtype == "bf16" and self.amx_bf16 or dtype == "fp16" and self.amx_fp16:
            return "AMX tiles"
        if dtype == "bf16" and self.bf16_dot:
            return f"{self.vector_bits}-bit BF16 dot products × {self.fma_pipes} pipes"
        if dtype == "fp16" and self.fp16_fma:
            return f"{self.vector_bits}-bit FP16 FMA × {self.fma_pipes} pipes"
        suffix = " (no native instructions: computed as fp32)" if dtype in ("bf16", "fp16") else ""
        return f"{self.vector_bits}-bit SIMD × FMA × {self.fma_pipes} pipes{suffix}"


def _flags(lines: list[str]) -> set[str]:
    for line in lines:
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def _field(lines: list[str], name: str) -> str | None:
    for line in lines:
        if line.startswith(name):
            return line.split(":", 1)[1].strip()
    return None


def _cores_in_reach() -> int | None:
    """Physical cores among the CPUs this process may run on (SMT siblings share FMA units)."""
    from gpuvet.backends.host_load import affinity_cpus

    physical: int | None = psutil.cpu_count(logical=False)
    logical: int | None = psutil.cpu_count(logical=True)
    if not physical or not logical:
        return None
    return max(1, round(physical * min(affinity_cpus(), logical) / logical))


def cpu_peak(lines: list[str] | None = None, cores: int | None = None,
             freq_mhz: tuple[float, float] | None = None) -> CpuPeak | None:
    """From /proc/cpuinfo and psutil; None when the clock or the SIMD width cannot be read.

    AVX-512 on AMD before Zen 5 (family 0x1a) runs on 256-bit pipes, so it counts as 256.
    Two FMA pipes per core is what every x86 server core since Haswell/Zen has.
    """
    lines = _cpuinfo() if lines is None else lines
    flags = _flags(lines)
    cores = cores or _cores_in_reach()
    if not flags or not cores:
        return None
    vendor = _field(lines, "vendor_id") or ""
    family = int(_field(lines, "cpu family") or 0)
    if "avx512f" in flags:
        bits = 256 if vendor == "AuthenticAMD" and family < 0x1A else 512
    elif "avx2" in flags or "avx" in flags:
        bits = 256
    elif "sse2" in flags or "asimd" in flags:
        bits = 128
    else:
        return None
    pipes = 2 if "fma" in flags or "asimd" in flags else 1
    if freq_mhz is None:
        f = psutil.cpu_freq()
        freq_mhz = (f.max, f.current) if f else (0.0, 0.0)
    max_mhz, current_mhz = freq_mhz
    model = str(_cpu_model(lines))
    if max_mhz > 0:
        ghz, basis = max_mhz / 1000, "maximum frequency (cpufreq)"
    elif "GHz" in model:
        ghz, basis = float(model.rsplit("@", 1)[-1].replace("GHz", "").strip()), "frequency in the model name"
    elif current_mhz > 0:
        ghz, basis = current_mhz / 1000, "current frequency (no maximum exposed, e.g. in a VM)"
    else:
        return None
    return CpuPeak(cores, ghz, basis, bits, pipes, bf16_dot="avx512_bf16" in flags, amx_bf16="amx_bf16" in flags,
                   fp16_fma="avx512_fp16" in flags, amx_fp16="amx_fp16" in flags)


def host_module_model(info: HostInfo, peak: CpuPeak | None) -> ModuleModel:
    """The host CPU described like a module, so benchmarks can report % of its peak."""
    tflops = {}
    sources = {}
    if peak is not None:
        for dtype in ("fp64", "fp32", "bf16", "fp16"):
            g = peak.gflops(dtype)
            if g is not None:
                tflops[dtype] = g / 1000
                sources[f"tflops.{dtype}"] = (
                    f"computed: {peak.cores} cores × {peak.ghz:.2f} GHz ({peak.clock_basis}) × "
                    f"{peak.instruction_set(dtype)}")
    name = info.cpu_model if isinstance(info.cpu_model, str) else "host CPU"
    memory = info.memory_bytes if isinstance(info.memory_bytes, int) else None
    return ModuleModel(name=name, vendor="cpu", memory_bytes=memory, memory_bw_gbps=None, tflops=tflops,
                       fabric=None, fabric_links=None, fabric_lane_gbps=None, pcie_gen=None, pcie_width=None,
                       tdp_w=None, sources=sources)
