"""REV67a's findings on R14A's NCCL log reader, mended (issue 46): a hostile line reads in time linear in its
length (#1: 'NET/IB: [0] ' and a run of blanks backtracked cubically), measured as a ratio against a plain line
of the same length in the same test, never an absolute time; #11: RCCL's advice said whole words."""

from __future__ import annotations

import time
from pathlib import Path

from gpuvet.captures.nccl_log import parse
from gpuvet.captures.text import Line
from tests.support.helpers import doctor_text

_HEAD = "gpu-a01:40:140 [0] NCCL INFO NET/IB: [0] "
_RCCL_SRC = "init.cc:120"


def _best_of(text: str, rounds: int = 3) -> float:
    lines = [Line(no, text) for no in range(1, 21)]
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        parse(lines)
        best = min(best, time.perf_counter() - start)
    return best


def test_a_long_run_of_blanks_after_a_device_index_reads_as_fast_as_a_plain_line() -> None:
    n = 400  # cubic before REV67a #1: seconds here; linear: the same order as the plain line
    hostile = _HEAD + " " * n + "x"
    plain = _HEAD + "m" * n + "x"
    assert _best_of(hostile) < 25 * _best_of(plain)  # about 4 linear, thousands cubic


def test_the_device_lines_still_name_their_devices_without_the_oob_tail() -> None:
    log = parse([Line(1, "gpu-a01:40:140 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE ; "
                         "OOB eth0:10.0.0.7<0>   "),
                 Line(2, "gpu-a01:41:141 [1] NCCL INFO NET/IB: [2] mlx5_2:1/IB   ")])
    assert sorted(d for c in log.choices for d in c.devices) == ["mlx5_0:1/IB", "mlx5_1:1/RoCE", "mlx5_2:1/IB"]


def test_rccls_advice_is_cut_between_words_and_marked(tmp_path: Path) -> None:
    """REV67a #11: an advisory longer than the summary keeps is cut between words, the cut marked (RCCL's init.cc
    NUMA balancing advice), never mid-token ('kernel.numa_b')."""
    advice = ('NUMA auto balancing enabled which can lead to variability in the RCCL performance! Disable by "sudo '
              'sysctl kernel.numa_balancing=0"')
    text = (f"mi-n12:77:177 [0] {_RCCL_SRC} NCCL WARN {advice}\n"
            "mi-n12:77:177 [0] NCCL INFO comm 0x55d1 rank 0 nranks 8 cudaDev 0 busId 29000 - Init COMPLETE\n")
    code, data = doctor_text(tmp_path, text)
    said = " ".join(s["summary"] for s in data["steps"] if s["check"] == "nccl_log")
    assert code == 0 and 'Disable by "sudo sysctl …' in said and "kernel.numa_b" not in said
