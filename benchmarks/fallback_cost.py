"""Cost of the fallback reader's search of a refused text (captures/fallback.py, issue 46; review 56 moved
these ratios out of tests/captures/test_capture_fallback.py, where they depended on the machine's load).
Each figure is the best of 3 runs of fallback.surrounded + fallback.gpuless over lines built here; the
reference is the same pass over fewer or shorter lines measured in the same run, so each figure is a ratio:

- growth: 16,000 near-miss lines against 2,000 (8x the lines; linear work gives about 8, quadratic 64);
- long lines: 10 MB in 200 lines against 200 short lines (bounded per line: about what the heads cost).

    python -m benchmarks.fallback_cost
"""

from __future__ import annotations

import time

from gpuvet.captures import fallback
from gpuvet.captures.text import Cleaned, Line

NEAR = ("E1201 10:00:01.123456 4411 x.go:88] Xid (PCI: SXid amdgpu NCCL WARNX HCCL(EI00 interface return errs "
        "device handle PCIe Bus Errors (PID: (EIxx ")  # every word a known message holds, never its shape


def _cost(lines: list[str]) -> float:
    """The best of 3 passes over ``lines``, in seconds."""
    cleaned = Cleaned([Line(n, s) for n, s in enumerate(lines, 1)])
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        assert fallback.surrounded(cleaned.lines) is None and fallback.gpuless(cleaned) is None
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    fallback.known()  # made once, outside the timing
    short = NEAR + "E" * 40
    few, many = _cost([short] * 2000), _cost([short] * 16000)
    print(f"growth: 2,000 lines {few * 1e3:.1f} ms, 16,000 lines {many * 1e3:.1f} ms: ratio {many / few:.1f} "
          "(8x the lines; linear about 8)")
    long = NEAR + "E" * (10 * 2**20 // 200)
    heads, big = _cost([short] * 200), _cost([long] * 200)
    print(f"long lines: 200 short {heads * 1e3:.2f} ms, 200 lines of 10 MB in all {big * 1e3:.2f} ms: "
          f"ratio {big / heads:.1f}")


if __name__ == "__main__":
    main()
