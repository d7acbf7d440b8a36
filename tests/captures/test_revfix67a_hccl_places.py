"""REV67a #5 (issue 46): HCCL failures are placed on their processes in time linear in the failures: the work for
16 times the processes grows about 16 times (a scan of every failure per process grew 256 times), measured as a
ratio of two sizes in the same test, never an absolute time. Messages in the shapes HCCL's plog prints
(hccl_socket_manager.cc's 'comm error, device[N]', LINK_ERROR_INFO's row)."""

from __future__ import annotations

import gc
import time

from gpuvet.captures.hccl_places import placed
from gpuvet.captures.nccl_log import LogFailure, LogLine


def _failures(processes: int) -> list[LogFailure]:
    out = []
    for pid in range(1000, 1000 + processes):
        for msg in (f"comm error, device[{pid % 8}]", "|  192.168.2.199(8)  |  16666  |  192.168.2.197(10)  |  0  |"):
            out.append(LogFailure("init", LogLine(len(out) + 1, "HCCL", "ERROR", None, pid, None, "x.cc:1", msg, msg)))
    return out


def _best_of(*sets: list[LogFailure], rounds: int = 5) -> list[float]:
    """The shortest of ``rounds`` runs on each set, the sets taken in turn (a loaded host's drift hits both alike)
    and the collector off (its full passes grow with every object alive)."""
    best = [float("inf")] * len(sets)
    gc.disable()
    try:
        for _ in range(rounds):
            for k, failures in enumerate(sets):
                start = time.process_time()
                placed(failures)
                best[k] = min(best[k], time.process_time() - start)
    finally:
        gc.enable()
    return best


def test_each_process_is_placed_from_its_own_lines() -> None:
    got = placed(_failures(3))
    assert [f.at.host for f in got] == ["192.168.2.197 (rank 10) Ascend device 0"] * 2 + \
        ["192.168.2.197 (rank 10) Ascend device 1"] * 2 + ["192.168.2.197 (rank 10) Ascend device 2"] * 2


def test_placing_grows_with_the_failures_not_their_square() -> None:
    small, large = _best_of(_failures(200), _failures(3200))
    assert large < 80 * small  # about 16-27 linear (CPU time, best of 5), about 256 quadratic
