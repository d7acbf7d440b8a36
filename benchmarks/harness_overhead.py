"""Does gpuvet's harness cost speed? Each figure measured through gpuvet and by a bare loop
in the same run, on the same device, same sizes; ratio = gpuvet / bare. Target: >= 0.98.

- GEMM: ``gpuvet bench gemm`` vs a plain ``torch.matmul`` loop.
- copy: gpuvet's copy workload vs a plain ``tensor.copy_`` loop (host→module on a GPU,
  host memory on a CPU).
- all_reduce: gpuvet's collective session vs a bare torch.distributed loop in the same ranks
  (gloo on CPU, NCCL on GPUs).

Runs on a GPU when torch sees one, otherwise on the CPU.

    python benchmarks/harness_overhead.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import torch
import torch.multiprocessing as mp

from gpuvet.backends.engine import HOST, BenchModule, Transfer
from gpuvet.backends.host import cpu_peak, host_module_model, read_host_info
from gpuvet.backends.torch.engine import TorchEngine
from gpuvet.bench.records import rate_stats
from gpuvet.bench.timing import TimingPlan, measure

PLAN = TimingPlan(warmup=3, min_samples=10, max_samples=10, min_sample_s=0.05, budget_s=60)


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def bare_rate(fn, work: float, device: torch.device, ops: int, samples: int) -> float:
    """Median work/s of ``samples`` runs of ``ops`` back-to-back calls of ``fn``."""
    for _ in range(3):
        fn()
    rates = []
    for _ in range(samples):
        _sync(device)
        begin = time.perf_counter()
        for _ in range(ops):
            fn()
        _sync(device)
        rates.append(work * ops / (time.perf_counter() - begin))
    return statistics.median(rates)


def engine_and_device() -> tuple[TorchEngine, torch.device, str]:
    model = host_module_model(read_host_info(), cpu_peak())
    if torch.cuda.is_available():
        return TorchEngine([BenchModule("gpu0", model)], {"gpu0": "cuda:0"}), torch.device("cuda:0"), "gpu0"
    return TorchEngine.for_host(model), torch.device("cpu"), "cpu"


def in_order(harness_first: bool, harness, bare) -> tuple[float, float]:
    """Run both, in the given order (alternated across repeats: whatever ran just before —
    spinning OpenMP threads, a warm cache — must not favour one side)."""
    if harness_first:
        h = harness()
        return h, bare(h)
    b = bare(None)
    return harness(), b


def gemm_case(engine: TorchEngine, device: torch.device, module: str, harness_first: bool) -> tuple[float, float]:
    n, dtype = (8192, torch.bfloat16) if device.type == "cuda" else (1024, torch.float32)
    name = "bf16" if device.type == "cuda" else "fp32"
    ops: list[int] = []

    def harness() -> float:
        workload = engine.gemm(module, name, n)
        with engine.monitoring([module]):  # the telemetry sampler runs, as in every real benchmark
            timing = measure(workload, PLAN)
        workload.close()
        ops.append(timing.ops_per_sample)
        return rate_stats(timing, 2 * n**3).median

    def bare(_: object) -> float:
        # the same work as gpuvet's workload: two operand sets alternating (so no product reads
        # the previous one's operands from cache), so the ratio is the harness's cost alone
        sets = [(torch.rand(n, n, device=device, dtype=dtype) + 0.5, torch.rand(n, n, device=device, dtype=dtype) + 0.5)
                for _ in range(2)]
        turn = [0]

        def step() -> None:
            a, b = sets[turn[0] % 2]
            turn[0] += 1
            torch.matmul(a, b)

        return bare_rate(step, 2 * n**3, device, ops[0] if ops else 10, PLAN.min_samples)

    return in_order(harness_first, harness, bare)


def copy_case(engine: TorchEngine, device: torch.device, module: str, harness_first: bool) -> tuple[float, float]:
    size = 256 * 2**20 if device.type == "cuda" else 32 * 2**20
    transfer = Transfer(HOST, module, size) if device.type == "cuda" else Transfer(HOST, HOST, size)
    ops: list[int] = []

    def harness() -> float:
        workload = engine.copy([transfer])
        with engine.monitoring([module] if device.type == "cuda" else ["cpu"]):
            timing = measure(workload, PLAN)
        workload.close()
        ops.append(timing.ops_per_sample)
        return rate_stats(timing, size).median

    def bare(_: object) -> float:
        src = torch.rand(size // 4) + 0.5
        if device.type == "cuda":
            src = src.pin_memory()
        dst = torch.empty(size // 4, device=device)
        return bare_rate(lambda: dst.copy_(src, non_blocking=device.type == "cuda"), size, device,
                         ops[0] if ops else 20, PLAN.min_samples)

    return in_order(harness_first, harness, bare)


def _bare_allreduce(rank: int, world: int, store: str, backend: str, size: int, ops: int, out: object) -> None:
    import torch.distributed as dist

    if backend == "gloo":
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
        torch.set_num_threads(1)
    device = torch.device(f"cuda:{rank}") if backend == "nccl" else torch.device("cpu")
    dist.init_process_group(backend, init_method=f"file://{store}", rank=rank, world_size=world)
    t = torch.rand(size // 4, device=device) + 0.5
    for _ in range(3):
        dist.all_reduce(t)
    rates = []
    for _ in range(PLAN.min_samples):
        dist.barrier()
        _sync(device)
        begin = time.perf_counter()
        for _ in range(ops):
            dist.all_reduce(t)
        _sync(device)
        seconds = torch.tensor([time.perf_counter() - begin], dtype=torch.float64, device=device)
        dist.all_reduce(seconds, op=dist.ReduceOp.MAX)
        rates.append(size * ops / float(seconds.item()))
    if rank == 0:
        out.put(statistics.median(rates))  # type: ignore[attr-defined]
    dist.destroy_process_group()


def allreduce_case(engine: TorchEngine, harness_first: bool) -> tuple[float, float]:
    gpus = torch.cuda.device_count()
    world = gpus if gpus >= 2 else 2
    backend = "nccl" if gpus >= 2 else "gloo"
    size = 64 * 2**20 if backend == "nccl" else 4 * 2**20
    members = [f"gpu{i}" for i in range(world)] if backend == "nccl" else [f"cpu:{r}" for r in range(world)]
    if backend == "nccl":
        model = host_module_model(read_host_info(), None)
        engine = TorchEngine([BenchModule(m, model) for m in members], {m: f"cuda:{i}" for i, m in enumerate(members)})
    ops: list[int] = []

    def harness() -> float:
        session = engine.collectives(members)
        try:
            timing = measure(session.workload("all_reduce", size, "fp32"), PLAN)
        finally:
            session.close()
        ops.append(timing.ops_per_sample)
        return rate_stats(timing, size).median

    def bare(_: object) -> float:
        ctx = mp.get_context("spawn")
        queue = ctx.Queue()
        with tempfile.TemporaryDirectory() as folder:
            store = os.path.join(folder, "store")
            procs = [ctx.Process(target=_bare_allreduce,
                                 args=(r, world, store, backend, size, ops[0] if ops else 20, queue))
                     for r in range(world)]
            for p in procs:
                p.start()
            rate = float(queue.get(timeout=600))
            for p in procs:
                p.join()
        return rate

    return in_order(harness_first, harness, bare)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=7, help="whole comparisons per case (median ratio)")
    args = parser.parse_args()
    engine, device, module = engine_and_device()
    print(f"device: {device} ({torch.cuda.get_device_name(0) if device.type == 'cuda' else 'CPU'}), "
          f"torch {torch.__version__}")
    print(f"{'case':<12}{'gpuvet':>16}{'bare':>16}{'ratio':>8}{'ratio IQR':>18}  target >= 0.98")
    cases = {
        "gemm": (lambda first: gemm_case(engine, device, module, first), 1e12, "TFLOPS"),
        "copy": (lambda first: copy_case(engine, device, module, first), 1e9, "GB/s"),
        "all_reduce": (lambda first: allreduce_case(engine, first), 1e9, "GB/s algbw"),
    }
    worst = float("inf")
    for name, (run, scale, unit) in cases.items():
        pairs = [run(i % 2 == 0) for i in range(args.repeats)]
        ratios = [h / b for h, b in pairs]
        ratio = statistics.median(ratios)
        q1, _, q3 = statistics.quantiles(ratios, n=4, method="inclusive") if len(ratios) > 1 else (ratio, 0, ratio)
        harness = statistics.median(h for h, _ in pairs) / scale
        bare = statistics.median(b for _, b in pairs) / scale
        worst = min(worst, ratio)
        spread = f"{q1:.3f}-{q3:.3f}"
        verdict = "ok" if ratio >= 0.98 else "BELOW"
        print(f"{name:<12}{harness:>12.3f} {unit:<4}{bare:>12.3f}{'':4}{ratio:>8.3f}{spread:>18}  {verdict}")
    print(f"worst ratio {worst:.3f}")


if __name__ == "__main__":
    main()
