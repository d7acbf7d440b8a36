"""Collectives through torch.distributed, one process per rank, started by gpuvet itself
(the spawn start method; a file store, so no port is needed). The ranks stay up for a whole
sweep; the parent sends each command to every rank and waits for all answers.

Timing in each rank: barrier, synchronise, k collectives back to back, synchronise; the
collective's time is the slowest rank's (it is done when the last rank is done).
Correctness: a fresh run on known data (``collective_data``), every element of every rank's
output compared exactly.

Several nodes: the same benchmark runs under ``torchrun`` (see docs/benchmarks.md).
"""

from __future__ import annotations

import os
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

from gpuvet.backends.collective_data import element_count, expected_output, rank_input
from gpuvet.backends.engine import CollectiveSession, Unsupported, Workload

REPLY_TIMEOUT_S = 600.0
ELEM_BYTES = {"fp32": 4, "fp16": 2, "bf16": 2}


def _buffers(torch: Any, op: str, count: int, n: int, rank: int, dtype: Any, device: Any) -> tuple[Any, Any]:
    """(input, output) of ``op`` filled with the rank's known data."""
    data = torch.from_numpy(rank_input(op, rank, n, count)).to(device=device, dtype=dtype)
    if op in ("all_reduce", "broadcast", "reduce"):
        return data, data
    out_count = count // n if op == "reduce_scatter" else count
    return data, torch.full((out_count,), -1.0, device=device, dtype=dtype)


def _run_op(dist: Any, op: str, inp: Any, out: Any) -> None:
    if op == "all_reduce":
        dist.all_reduce(inp)
    elif op == "all_gather":  # the *_single names replace *_tensor in newer torch
        getattr(dist, "all_gather_single", dist.all_gather_into_tensor)(out, inp)
    elif op == "reduce_scatter":
        getattr(dist, "reduce_scatter_single", dist.reduce_scatter_tensor)(out, inp)
    elif op == "all_to_all":
        dist.all_to_all_single(out, inp)
    elif op == "broadcast":
        dist.broadcast(inp, src=0)
    elif op == "reduce":
        dist.reduce(inp, dst=0)
    else:
        raise ValueError(op)


def _worker(rank: int, world: int, store_path: str, device_name: str, backend: str, conn: Any) -> None:
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo") if backend == "gloo" else None
    import torch
    import torch.distributed as dist

    if backend == "gloo":
        torch.set_num_threads(1)
    device = torch.device(device_name)
    if device.type == "cuda":
        torch.cuda.set_device(device)
    dtypes = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}

    def sync() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    try:
        dist.init_process_group(backend, init_method=f"file://{store_path}", rank=rank, world_size=world)
        conn.send(("ready", None))
    except Exception as exc:
        conn.send(("error", f"rank {rank} could not join: {exc}"))
        return
    cache: dict[tuple[str, int, str], tuple[Any, Any]] = {}
    while True:
        cmd = conn.recv()
        if cmd[0] == "stop":
            break
        try:
            if cmd[0] == "time":
                _, op, size, dtype, repeats = cmd
                key = (op, size, dtype)
                if key not in cache:
                    cache.clear()
                    count = element_count(op, size, ELEM_BYTES[dtype], world)
                    cache[key] = _buffers(torch, op, count, world, rank, dtypes[dtype], device)
                inp, out = cache[key]
                dist.barrier()
                sync()
                begin = time.perf_counter()
                for _ in range(repeats):
                    _run_op(dist, op, inp, out)
                sync()
                conn.send(("ok", time.perf_counter() - begin))
            elif cmd[0] == "check":
                _, op, size, dtype, corrupt = cmd
                count = element_count(op, size, ELEM_BYTES[dtype], world)
                inp, out = _buffers(torch, op, count, world, rank, dtypes[dtype], device)
                _run_op(dist, op, inp, out)
                sync()
                got = out.float().cpu().numpy()
                if corrupt == rank:
                    got[0] += 1.0  # planted by a test: the check must catch it
                want = expected_output(op, rank, world, count)
                conn.send(("ok", want is None or (got.shape == want.shape and bool((got == want).all()))))
        except RuntimeError as exc:
            unsupported = "not supported" in str(exc).lower() or "does not support" in str(exc).lower()
            conn.send(("unsupported" if unsupported else "error", f"rank {rank}: {exc}"))
        except Exception:
            conn.send(("error", f"rank {rank}: {traceback.format_exc(limit=3)}"))
    dist.destroy_process_group()


@dataclass
class _CollectiveWorkload:
    session: TorchCollectives
    op: str
    size: int
    dtype: str

    def timed(self, repeats: int) -> float:
        return float(max(self.session.ask(("time", self.op, self.size, self.dtype, repeats))))

    def close(self) -> None:
        pass


@dataclass
class TorchCollectives(CollectiveSession):
    processes: list[Any] = field(default_factory=list)
    conns: list[Any] = field(default_factory=list)
    store_dir: Any = None

    @classmethod
    def start(cls, members: tuple[str, ...], devices: list[str], backend: str) -> TorchCollectives:
        import torch.multiprocessing as mp

        ctx = mp.get_context("spawn")
        store_dir = tempfile.TemporaryDirectory(prefix="gpuvet-dist-")
        store = os.path.join(store_dir.name, "store")
        session = cls(len(members), members, store_dir=store_dir)
        for rank, device in enumerate(devices):
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_worker, args=(rank, len(members), store, device, backend, child), daemon=True)
            proc.start()
            session.processes.append(proc)
            session.conns.append(parent)
        try:
            session._collect()
        except Exception:
            session.close()
            raise
        return session

    def _collect(self) -> list[Any]:
        answers, errors, unsupported = [], [], []
        deadline = time.monotonic() + REPLY_TIMEOUT_S
        for rank, conn in enumerate(self.conns):
            if not conn.poll(max(deadline - time.monotonic(), 0.1)):
                raise RuntimeError(f"rank {rank} did not answer within {REPLY_TIMEOUT_S:.0f} s")
            try:
                kind, value = conn.recv()
            except EOFError:
                code = self.processes[rank].exitcode if rank < len(self.processes) else None
                raise RuntimeError(f"rank {rank} exited before answering (exit code {code})") from None
            if kind == "error":
                errors.append(value)
            elif kind == "unsupported":
                unsupported.append(value)
            answers.append(value)
        if unsupported:
            raise Unsupported(f"{unsupported[0]}")
        if errors:
            raise RuntimeError("; ".join(errors))
        return answers

    def ask(self, command: tuple[Any, ...]) -> list[Any]:
        for conn in self.conns:
            conn.send(command)
        return self._collect()

    def workload(self, op: str, size_bytes: int, dtype: str) -> Workload:
        return _CollectiveWorkload(self, op, size_bytes, dtype)

    def check(self, op: str, size_bytes: int, dtype: str, corrupt_rank: int | None = None) -> bool:
        return all(self.ask(("check", op, size_bytes, dtype, corrupt_rank)))

    def close(self) -> None:
        for conn in self.conns:
            try:
                conn.send(("stop",))
            except (OSError, BrokenPipeError):
                pass
        for proc in self.processes:
            proc.join(timeout=10)
            if proc.is_alive():
                proc.kill()
        self.processes, self.conns = [], []
        if self.store_dir is not None:
            self.store_dir.cleanup()
            self.store_dir = None
