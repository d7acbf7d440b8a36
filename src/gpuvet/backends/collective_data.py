"""Known data for checking collectives: what each rank sends and, in closed form, what each
rank must hold afterwards. Small integers, so every sum is exact in fp32, fp16 and bf16
(up to 8 ranks for the half types). No rank ever sends zeros: a collective that silently
does nothing cannot pass.

Sizes follow nccl-tests (see ``gpuvet.node.collectives``): ``count`` is the element count of
the buffer the size names.
"""

from __future__ import annotations

import numpy as np

from gpuvet.node.collectives import Collective


def element_count(op: str, size_bytes: int, elem_bytes: int, nranks: int) -> int:
    """Elements in the named buffer, rounded down so it splits evenly across ranks (≥ nranks)."""
    count = max(size_bytes // elem_bytes, 1)
    if Collective(op) in (Collective.ALL_GATHER, Collective.REDUCE_SCATTER, Collective.ALL_TO_ALL):
        count = max(count // nranks, 1) * nranks
    return count


_CYCLE = np.arange(1, 6, dtype=np.float32)


def _ramp(start: int, length: int) -> np.ndarray:
    """1..5 repeating from ``start``: (start + i) % 5 + 1, tiled rather than computed per element."""
    at = start % 5
    return np.tile(_CYCLE, -(-(at + length) // 5))[at:at + length].copy()


def _sum(inputs: list[np.ndarray]) -> np.ndarray:
    """Element-wise sum accumulated in place (``np.sum(list, axis=0)`` first stacks every rank's
    buffer into one more array). Exact either way: the data are small integers."""
    total = inputs[0].copy()
    for x in inputs[1:]:
        total += x
    return total


def rank_input(op: str, rank: int, nranks: int, count: int) -> np.ndarray:
    match Collective(op):
        case Collective.ALL_REDUCE | Collective.REDUCE | Collective.REDUCE_SCATTER:
            return _ramp(0, count) * (rank + 1)
        case Collective.ALL_GATHER:
            chunk = count // nranks
            return _ramp(rank * chunk, chunk) + 10 * rank
        case Collective.ALL_TO_ALL:
            chunk = count // nranks
            return np.repeat(np.arange(nranks, dtype=np.float32) + rank * nranks + 1, chunk)
        case Collective.BROADCAST:
            return _ramp(0, count) if rank == 0 else np.full(count, -1.0, dtype=np.float32)
    raise AssertionError(op)


def expected_output(op: str, rank: int, nranks: int, count: int) -> np.ndarray | None:
    """What ``rank`` must hold afterwards (the output buffer); None when nothing is defined
    (reduce on a non-root rank)."""
    total = nranks * (nranks + 1) // 2
    match Collective(op):
        case Collective.ALL_REDUCE:
            return _ramp(0, count) * total
        case Collective.REDUCE:
            return _ramp(0, count) * total if rank == 0 else None
        case Collective.REDUCE_SCATTER:
            chunk = count // nranks
            return _ramp(rank * chunk, chunk) * total
        case Collective.ALL_GATHER:
            chunk = count // nranks
            return np.concatenate([_ramp(r * chunk, chunk) + 10 * r for r in range(nranks)])
        case Collective.ALL_TO_ALL:
            chunk = count // nranks
            return np.repeat(np.arange(nranks, dtype=np.float32) * nranks + rank + 1, chunk)
        case Collective.BROADCAST:
            return _ramp(0, count)
    raise AssertionError(op)


def reference_collective(op: str, inputs: list[np.ndarray]) -> list[np.ndarray | None]:
    """The collective computed directly from every rank's input (the simulated node's data path)."""
    n = len(inputs)
    match Collective(op):
        case Collective.ALL_REDUCE:
            total = _sum(inputs)
            return [total.copy() for _ in range(n)]
        case Collective.REDUCE:
            return [_sum(inputs)] + [None] * (n - 1)
        case Collective.REDUCE_SCATTER:
            return list(np.split(_sum(inputs), n))
        case Collective.ALL_GATHER:
            gathered = np.concatenate(inputs)
            return [gathered.copy() for _ in range(n)]
        case Collective.ALL_TO_ALL:
            chunks = [np.split(x, n) for x in inputs]
            return [np.concatenate([chunks[src][dst] for src in range(n)]) for dst in range(n)]
        case Collective.BROADCAST:
            return [inputs[0].copy() for _ in range(n)]
    raise AssertionError(op)


# Outputs that are the same on every rank: built once per check, not once per rank.
_SAME_ON_EVERY_RANK = (Collective.ALL_REDUCE, Collective.ALL_GATHER, Collective.BROADCAST)


def outputs_correct(op: str, outputs: list[np.ndarray | None], nranks: int, count: int) -> bool:
    shared = expected_output(op, 0, nranks, count) if Collective(op) in _SAME_ON_EVERY_RANK else None
    for rank, got in enumerate(outputs):
        want = shared if shared is not None else expected_output(op, rank, nranks, count)
        if want is None:
            continue
        if got is None or got.shape != want.shape or not np.array_equal(np.asarray(got, dtype=np.float32), want):
            return False
    return True
