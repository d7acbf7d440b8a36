"""Collectives through torch.distributed, one process per rank, started by gpuvet itself
(a fork server that has imported torch once, so each rank starts in a fraction of a second where
a fresh interpreter takes seconds on a busy host; spawn where there is no fork server; a file
store, so no port is needed). The ranks stay up for a whole
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
from types import ModuleType
from typing import TYPE_CHECKING

from gpuvet.backends.collective_data import element_count, expected_output, rank_input
from gpuvet.backends.engine import CollectiveSession, Unsupported, Workload

if TYPE_CHECKING:  # torch is imported in the ranks, never with this module
    from multiprocessing.connection import Connection
    from multiprocessing.context import ForkServerContext, SpawnContext
    from multiprocessing.process import BaseProcess

    from torch import Tensor
    from torch import device as TorchDevice
    from torch import dtype as TorchDtype

REPLY_TIMEOUT_S = 600.0
ELEM_BYTES = {"fp32": 4, "fp16": 2, "bf16": 2}
Command = tuple[str | int | None, ...]  # ("time" | "check" | "stop", arguments of _Rank.time / _Rank.check)


def _buffers(torch: ModuleType, op: str, count: int, n: int, rank: int, dtype: TorchDtype,
             device: TorchDevice) -> tuple[Tensor, Tensor]:
    """(input, output) of ``op`` filled with the rank's known data."""
    data = torch.from_numpy(rank_input(op, rank, n, count)).to(device=device, dtype=dtype)
    if op in ("all_reduce", "broadcast", "reduce"):
        return data, data
    out_count = count // n if op == "reduce_scatter" else count
    return data, torch.full((out_count,), -1.0, device=device, dtype=dtype)


def _run_op(dist: ModuleType, op: str, inp: Tensor, out: Tensor) -> None:
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


class _Rank:
    """What one rank does, whoever started it: time k collectives, check one on known data."""

    def __init__(self, torch: ModuleType, dist: ModuleType, device: TorchDevice, rank: int, world: int) -> None:
        self.torch, self.dist, self.device, self.rank, self.world = torch, dist, device, rank, world
        self.dtypes: dict[str, TorchDtype] = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
        self.cache: dict[tuple[str, int, str], tuple[Tensor, Tensor]] = {}

    def sync(self) -> None:
        if self.device.type == "cuda":
            self.torch.cuda.synchronize(self.device)

    def time(self, op: str, size: int, dtype: str, repeats: int) -> float:
        """Seconds this rank took for ``repeats`` back-to-back collectives, from a common start.
        Timing data may grow (repeated sums) — the cost does not depend on the values, and
        correctness is checked separately on fresh data."""
        key = (op, size, dtype)
        if key not in self.cache:
            self.cache.clear()
            count = element_count(op, size, ELEM_BYTES[dtype], self.world)
            self.cache[key] = _buffers(self.torch, op, count, self.world, self.rank, self.dtypes[dtype], self.device)
        inp, out = self.cache[key]
        self.dist.barrier()
        self.sync()
        begin = time.perf_counter()
        for _ in range(repeats):
            _run_op(self.dist, op, inp, out)
        self.sync()
        return time.perf_counter() - begin

    def check(self, op: str, size: int, dtype: str, corrupt_rank: int | None) -> bool:
        count = element_count(op, size, ELEM_BYTES[dtype], self.world)
        inp, out = _buffers(self.torch, op, count, self.world, self.rank, self.dtypes[dtype], self.device)
        _run_op(self.dist, op, inp, out)
        self.sync()
        got = out.float().cpu().numpy()
        if corrupt_rank == self.rank:
            got[0] += 1.0  # planted by a test: the check must catch it
        want = expected_output(op, self.rank, self.world, count)
        return want is None or (got.shape == want.shape and bool((got == want).all()))


def _is_unsupported(exc: Exception) -> bool:
    text = str(exc).lower()
    return "not supported" in text or "does not support" in text


def _worker(rank: int, world: int, store_path: str, device_name: str, backend: str, conn: Connection) -> None:
    if backend == "gloo":
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")  # every rank is on this machine
    import torch
    import torch.distributed as dist

    if backend == "gloo":
        torch.set_num_threads(1)
    device = torch.device(device_name)
    if device.type == "cuda":
        torch.cuda.set_device(device)
    try:
        dist.init_process_group(backend, init_method=f"file://{store_path}", rank=rank, world_size=world)
        conn.send(("ready", None))
    except Exception as exc:
        conn.send(("error", f"rank {rank} could not join: {exc}"))
        return
    me = _Rank(torch, dist, device, rank, world)
    while True:
        cmd = conn.recv()
        if cmd[0] == "stop":
            break
        try:
            if cmd[0] == "time":
                conn.send(("ok", me.time(*cmd[1:])))
            elif cmd[0] == "check":
                conn.send(("ok", me.check(*cmd[1:])))
        except RuntimeError as exc:
            conn.send(("unsupported" if _is_unsupported(exc) else "error", f"rank {rank}: {exc}"))
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
        return max(_seconds(v) for v in self.session.ask(("time", self.op, self.size, self.dtype, repeats)))

    def close(self) -> None:
        pass


def _seconds(value: object) -> float:
    """A rank's answer to "time": its seconds."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RuntimeError(f"a rank answered {value!r} where seconds were due")
    return float(value)


def _start_context() -> SpawnContext | ForkServerContext:
    """The fork server imports torch and this module once; the CUDA runtime is never touched
    there, so its forked ranks may use a GPU. The environment is the one at its first start."""
    import multiprocessing

    import torch.multiprocessing as mp

    if "forkserver" not in multiprocessing.get_all_start_methods():
        return mp.get_context("spawn")
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(["torch", "torch.distributed", __name__])
    return ctx


@dataclass
class TorchCollectives(CollectiveSession):
    processes: list[BaseProcess] = field(default_factory=list)
    conns: list[Connection] = field(default_factory=list)
    store_dir: tempfile.TemporaryDirectory[str] | None = None

    @classmethod
    def start(cls, members: tuple[str, ...], devices: list[str], backend: str) -> TorchCollectives:
        ctx = _start_context()
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

    def _collect(self) -> list[object]:
        answers: list[object] = []
        errors: list[str] = []
        unsupported: list[str] = []
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

    def ask(self, command: Command) -> list[object]:
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


@dataclass
class _JoinedWorkload:
    session: JoinedCollectives
    op: str
    size: int
    dtype: str

    def timed(self, repeats: int) -> float:
        return self.session.slowest(self.session.me.time(self.op, self.size, self.dtype, repeats))

    def close(self) -> None:
        pass


@dataclass
class JoinedCollectives(CollectiveSession):
    """This process is one rank of a job ``torchrun`` started (``env://`` rendezvous), on one
    node or many. Every rank runs the same sweep; the reduced times are identical everywhere,
    so every rank's timing loop takes the same decisions."""

    me: _Rank = field(kw_only=True)

    @classmethod
    def join(cls, backend: str) -> JoinedCollectives:
        import torch
        import torch.distributed as dist

        missing = [v for v in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR") if v not in os.environ]
        if missing:
            raise Unsupported(f"--torchrun needs the variables torchrun sets ({', '.join(missing)} missing); "
                              "start it as: torchrun --nproc-per-node=N -m gpuvet bench collective --torchrun")
        rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
        device = torch.device(f"cuda:{os.environ['LOCAL_RANK']}") if backend == "nccl" else torch.device("cpu")
        if device.type == "cuda":
            torch.cuda.set_device(device)
        dist.init_process_group(backend, init_method="env://")
        return cls(world, tuple(f"rank{r}" for r in range(world)), me=_Rank(torch, dist, device, rank, world))

    @property
    def rank(self) -> int:
        return self.me.rank

    def slowest(self, seconds: float) -> float:
        t = self.me.torch.tensor([seconds], dtype=self.me.torch.float64, device=self.me.device)
        self.me.dist.all_reduce(t, op=self.me.dist.ReduceOp.MAX)
        return float(t.item())

    def workload(self, op: str, size_bytes: int, dtype: str) -> Workload:
        return _JoinedWorkload(self, op, size_bytes, dtype)

    def check(self, op: str, size_bytes: int, dtype: str, corrupt_rank: int | None = None) -> bool:
        local = 1.0 if self.me.check(op, size_bytes, dtype, corrupt_rank) else 0.0
        flag = self.me.torch.tensor([local], device=self.me.device)
        self.me.dist.all_reduce(flag, op=self.me.dist.ReduceOp.MIN)
        return bool(flag.item() == 1.0)

    def close(self) -> None:
        if self.me is not None and self.me.dist.is_initialized():
            self.me.dist.destroy_process_group()
