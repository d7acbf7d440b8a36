"""Review 55: the patterns /tmp/rev55/refuzz*.txt timed as quadratic (x4 work per x2 length, confirmed on this tree
before the fix), each on a long line it must not match, called as its reader calls it; and a line it reads, with the
same groups as before. The answer is asserted; the timeout is a guard only (each is linear now, well under a second)."""

from __future__ import annotations

import re

import pytest

from gpuvet.captures import (
    amd_smi,
    gpu_burn,
    nccl_log,
    nic_tools,
    npu_smi,
    perftest,
    smi_text,
    topo,
    transferbench,
    xpu_smi_table,
)
from gpuvet.captures.app_errors import printed

LONG = 200_000
LINEAR = [
    (amd_smi._ROCM_LINE, "match", "=" * LONG + "x", "====  ROCm System Management Interface ====",
     ("====  ROCm System Management Interface ====",)),
    (smi_text._MARKER, "search", "a" + " " * LONG + "x", "Enabled   <-- look", ()),
    (smi_text._KV, "match", "a" + " " * LONG + "x", "    Bus Id : 0000", ("    ", "Bus Id", "0000")),
    (xpu_smi_table._POWER, "search", "0" * LONG + "x", "45.5 W / 300 W", ("45.5", "300")),
    (xpu_smi_table._MEMORY, "search", "0" * LONG + "x", "1024 MiB / 65536 MiB", ("1024", "65536")),
    (nic_tools._SPEED, "search", "0." * (LONG // 2), "400.0 Gbps (NDR)", ("400.0",)),
    (npu_smi._USAGE, "search", "a" * LONG, "1234 / 32768", ("1234", "32768")),
    (npu_smi._NO_PROCESS, "match", " " * LONG + "x", "| No running processes found in NPU 0 |", ()),
    (gpu_burn._PROGRESS, "match", "10.0%  proc'd: " + " " * LONG + "x",
     "10.0%  proc'd: 1200 (19000 Gflop/s)   errors: 0   temps: 45 C ", ("1200 (19000 Gflop/s)", "0", "45 C ")),
    (gpu_burn._WORK, "search", "0" * LONG, "1200 (19000 Gflop/s)", ("1200",)),
    (gpu_burn._TEMP, "search", "0" * LONG, "45 C", ("45",)),
    (perftest._ROW, "match", " " * LONG + "x", " 65536  5000  11427.51  11425.48  0.181794",
     ("65536", "5000", "11427.51", "11425.48", "0.181794")),
    (perftest._HEADER, "match", " " * LONG + "x", " local address: LID 0x01", ("local address: LID 0x01", None)),
    (topo._P2P_LEGEND, "match", " " * LONG + "x", "  X    = Self", ()),
    (transferbench._META, "match", "=" * LONG + "x", "A=1 ./TransferBench x", ("A=1 ./TransferBench", None, "A=1 ", "./")),
    (nccl_log._LOG, "search", "*" * LONG, "***:12:13 [1] NCCL WARN x", ("***", None, "12", "13", "1", None, None, "NCCL",
                                                                    "WARN", "x")),
]


@pytest.mark.timeout(30)
@pytest.mark.parametrize(("pattern", "how", "long", "line", "groups"), LINEAR, ids=lambda x: getattr(x, "pattern", "")[:20])
def test_a_pattern_fails_a_long_line_in_linear_work(pattern: re.Pattern[str], how: str, long: str, line: str,
                                                     groups: tuple[str | None, ...]) -> None:
    assert getattr(pattern, how)(long + "\u00a7") is None
    assert (m := getattr(pattern, how)(line)) is not None and m.groups() == groups


@pytest.mark.timeout(30)
def test_a_line_before_a_runtime_error_is_judged_in_bounded_work() -> None:
    """app_errors.printed strips a module path before the message (torch.cuda.OutOfMemoryError) from a short tail."""
    assert printed("torch.cuda.OutOfMemoryError: CUDA out of memory", 28)
    assert not printed("a." * LONG + " CUDA error: out of memory", 2 * LONG + 1)
