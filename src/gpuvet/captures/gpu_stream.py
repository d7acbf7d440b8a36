"""Issue 46 (R14E): GPU STREAM outputs, the memory-bandwidth kernels Copy, Scale (Mul), Add, Triad (and Dot,
Nstream) as three tools print them:

- superbench's gpu_stream ('STREAM Benchmark', 'Device 0: "NVIDIA …"  152 SMs(10.0)  Memory: 4000MHz x 8192-bit =
  8192 GB/s PEAK   ECC is ON', then one row per kernel, GPU and block size:
  'STREAM_TRIAD_double_gpu_0_buffer_4294967296_block_256    7414.01 90.50', GB/s and its share of that peak);
- BabelStream (UoB-HPC/BabelStream: 'BabelStream', 'Using CUDA device NVIDIA A100-SXM4-40GB', the table under
  'Function    MBytes/sec  Min (sec)   Max         Average', 'Copy  1392390.880 0.00039 …'; --mibibytes: MiBytes/sec);
- cuda-stream and McCalpin STREAM ('Function      Rate (MB/s)   Avg time(s) …' or 'Best Rate MB/s', 'Copy:  …').

The best rate per kernel and device is said; not judged (gpuvet holds no model of each module's memory bandwidth;
superbench's share of its own computed peak is the tool's words, said with it). A validation the tool failed
(BabelStream's 'Validation failed on a[]', STREAM's 'Failed Validation on array') is tool_failures.py's verdict."""

from __future__ import annotations

import re

from gpuvet.captures.bench_results import BenchResult, BenchResults
from gpuvet.captures.text import Line

TOOL = "GPU STREAM"
_SB_ROW = re.compile(r"^\s*STREAM_(COPY|SCALE|ADD|TRIAD|MUL|DOT)_(\w+?)_gpu_(\d{1,3})_buffer_(\d+)_block_(\d+)\s+"
                     r"(\d+(?:\.\d+)?)(?:\s+(\d+(?:\.\d+)?))?\s*$")
_SB_DEVICE = re.compile(r'^\s*Device (\d{1,3}): "([^"]{1,80})".{0,120}?=\s*(\d+(?:\.\d+)?) GB/s PEAK')
_HEAD = re.compile(r"^\s*Function\s+(?:Best\s+)?(?:Rate\s*\(?(MB|GB|MiB|GiB)/s\)?|(MBytes|GBytes|MiBytes|GiBytes)/sec)",
                   re.I)
_TABLE_ROW = re.compile(r"^\s*(Copy|Scale|Mul|Add|Triad|Dot|Nstream|Read|Write):?\s+(\d+(?:\.\d+)?)(?:\s+\S+){1,4}\s*$")
_DEVICE = re.compile(r"^\s*Using (?:CUDA|HIP|OpenCL|SYCL|Kokkos|OpenMP|RAJA)?\s*device:?\s+(.{2,80}?)\s*$")
_OWN = re.compile(
    r"^\s*(?:STREAM Benchmark|BabelStream\b|Version:|Implementation:|Running (?:kernels|\w+ \d+ times)|Precision:|"
    r"Array size|Total size|Driver:|Buffer size\(bytes\):|Number of (?:warm up runs|loops):|Check data:|"
    r"using \d+ threads per block|Solution Validates|-{20,}\s*$)", re.I)
_PER_GB = {"mb": 1e-3, "mbytes": 1e-3, "gb": 1.0, "gbytes": 1.0, "mib": 1.048576e-3, "mibytes": 1.048576e-3,
           "gib": 1.073741824, "gibytes": 1.073741824}


def parse(lines: list[Line]) -> BenchResults:
    """Each kernel's best rate per device (GB/s) from superbench's rows or a STREAM table, its lines claimed."""
    out = BenchResults()
    best: dict[tuple[str, str], tuple[float, str, int]] = {}  # (device, kernel) -> (GB/s, extra, line)
    devices: dict[str, str] = {}
    unit: float | None = None
    device = "the device"
    for ln in lines:
        text = ln.text
        if (d := _SB_DEVICE.match(text)) is not None:
            devices[d.group(1)] = f"GPU {d.group(1)} ({d.group(2).strip()}, {d.group(3)} GB/s peak as the tool computes it)"
        elif (r := _SB_ROW.match(text)) is not None:
            key = (devices.get(r.group(3), f"GPU {r.group(3)}"), r.group(1).title())
            share = f" ({r.group(7)} % of that peak)" if r.group(7) else ""
            _keep(best, key, float(r.group(6)), share, ln.no)
        elif (h := _HEAD.match(text)) is not None:
            unit = _PER_GB[(h.group(1) or h.group(2)).lower()]
        elif (u := _DEVICE.match(text)) is not None:
            device = u.group(1)
        elif unit is not None and (t := _TABLE_ROW.match(text)) is not None:
            _keep(best, (device, t.group(1).rstrip(":").title()), float(t.group(2)) * unit, "", ln.no)
        elif not _OWN.match(text):  # its own lines, kept only where a row was read
            continue
        out.claimed.add(ln.no)
    if not best:
        return BenchResults()
    for (dev, kernel), (gbs, extra, no) in best.items():
        out.results.append(BenchResult(TOOL, f"{dev} {kernel} {gbs:,.1f} GB/s{extra}", no))
    said: dict[str, list[str]] = {}
    for (dev, kernel), (gbs, extra, _) in best.items():
        said.setdefault(dev, []).append(f"{kernel} {gbs:,.1f} GB/s{extra}")
    out.notes.append("GPU STREAM: best rate per kernel: " + "; ".join(f"{d}: {', '.join(k)}" for d, k in said.items())
                     + " (said, not judged: gpuvet holds no model of these modules' memory bandwidth)")
    return out


def _keep(best: dict[tuple[str, str], tuple[float, str, int]], key: tuple[str, str], gbs: float, extra: str,
          no: int) -> None:
    if key not in best or gbs > best[key][0]:
        best[key] = (gbs, extra, no)
