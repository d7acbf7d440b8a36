"""Issue 46 (R14E): benchmark outputs and listings read for their figures and their own checks, on captures written
here in each tool's documented form: HPL (netlib HPL 2.3's HPL_pdtest output, HPL 1.0's three residual lines),
GPU STREAM (superbench's gpu_stream rows, BabelStream's table and its validation message, cuda-stream's STREAM
table), intel_gpu_top (-J samples, the screen's header, -l's columns) and superbench's host/port-GUID listing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers import doctor_text

HPL_HEAD = """\
================================================================================
HPLinpack 2.3  --  High-Performance Linpack benchmark  --   December 2, 2018
Written by A. Petitet and R. Clint Whaley,  Innovative Computing Laboratory, UTK
================================================================================

The following parameter values will be used:

N      :   90000
NB     :     256
PMAP   : Row-major process mapping
P      :       2
Q      :       4

- The matrix A is randomly generated for each test.
- The following scaled residual check will be computed:
      ||Ax-b||_oo / ( eps * ( || x ||_oo * || A ||_oo + || b ||_oo ) * N )
- The relative machine precision (eps) is taken to be               1.110223e-16
- Computational tests pass if scaled residuals are less than                16.0

================================================================================
T/V                N    NB     P     Q               Time                 Gflops
--------------------------------------------------------------------------------
WR11C2R4       90000   256     2     4              41.32             1.1762e+04
HPL_pdgesv() start time Mon Mar  4 10:01:02 2024

HPL_pdgesv() end time   Mon Mar  4 10:01:43 2024

--------------------------------------------------------------------------------
"""
HPL_PASSED = HPL_HEAD + """\
||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N)=   2.31094519e-03 ...... PASSED
================================================================================

Finished      1 tests with the following results:
              1 tests completed and passed residual checks,
              0 tests completed and failed residual checks,
              0 tests skipped because of illegal input values.
--------------------------------------------------------------------------------

End of Tests.
================================================================================
"""
HPL_FAILED = HPL_HEAD + """\
||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N)=   5.82201473e+08 ...... FAILED
================================================================================

Finished      1 tests with the following results:
              0 tests completed and passed residual checks,
              1 tests completed and failed residual checks,
              0 tests skipped because of illegal input values.
--------------------------------------------------------------------------------

End of Tests.
================================================================================
"""
HPL_OLD_FAILED = """\
============================================================================
HPLinpack 1.0a  --  High-Performance Linpack benchmark  --   January 20, 2004
============================================================================
T/V                N    NB     P     Q               Time             Gflops
----------------------------------------------------------------------------
WR00L2L2       29000   232     1     1             183.24          8.875e+01
----------------------------------------------------------------------------
||Ax-b||_oo / ( eps * ||A||_1  * N        ) =        0.0063120 ...... PASSED
||Ax-b||_oo / ( eps * ||A||_1  * ||x||_1  ) =        0.0133452 ...... PASSED
||Ax-b||_oo / ( eps * ||A||_oo * ||x||_oo ) =       91.0027614 ...... FAILED
============================================================================
"""
SUPERBENCH_STREAM = """\
STREAM Benchmark
Buffer size(bytes): 4294967296
Number of warm up runs: 10
Number of loops: 40
Check data: No

Device 0: "NVIDIA H100 80GB HBM3"  132 SMs(9.0)  Memory: 2619MHz x 5120-bit = 3352 GB/s PEAK   ECC is ON
STREAM_COPY_double_gpu_0_buffer_4294967296_block_128    2871.33 85.66
STREAM_SCALE_double_gpu_0_buffer_4294967296_block_128   2866.02 85.50
STREAM_ADD_double_gpu_0_buffer_4294967296_block_128     3011.48 89.84
STREAM_TRIAD_double_gpu_0_buffer_4294967296_block_128   3009.90 89.79
"""
BABELSTREAM = """\
BabelStream
Version: 4.0
Implementation: CUDA
Running kernels 100 times
Precision: double
Array size: 268.4 MB (=0.3 GB)
Total size: 805.3 MB (=0.8 GB)
Using CUDA device NVIDIA A100-SXM4-40GB
Driver: 12020
Function    MBytes/sec  Min (sec)   Max         Average
Copy        1395312.402 0.00038     0.00039     0.00039
Mul         1376016.912 0.00039     0.00040     0.00039
Add         1387901.106 0.00058     0.00059     0.00058
Triad       1389117.845 0.00058     0.00059     0.00058
Dot         1301822.020 0.00041     0.00043     0.00042
"""
BABELSTREAM_FAILED = BABELSTREAM.replace("Driver: 12020\n", "Driver: 12020\nValidation failed on a[]. Average error "
                                         "1.2034e+02\nValidation failed on c[]. Average error 3.1e+01\n")
CUDA_STREAM = """\
 STREAM Benchmark implementation in CUDA
 Array size (double precision) = 1073.74 MB
 using 192 threads per block, 699051 blocks
 Function      Rate (MB/s)   Avg time(s)  Min time(s)  Max time(s)
 Copy:       1469187.2138   0.00146919   0.00146159   0.00147963
 Scale:      1465929.2000   0.00147317   0.00146484   0.00148296
 Add:        1494431.7421   0.00216011   0.00215578   0.00216794
 Triad:      1493920.1254   0.00216097   0.00215651   0.00216699
"""
IGT_JSON = """\
[
{
	"period": {"duration": 1000.210133, "unit": "ms"},
	"frequency": {"requested": 1300.000000, "actual": 1300.000000, "unit": "MHz"},
	"interrupts": {"count": 220.951570, "unit": "irq/s"},
	"rc6": {"value": 12.520000, "unit": "%"},
	"power": {"GPU": 6.812000, "Package": 21.303000, "unit": "W"},
	"imc-bandwidth": {"reads": 2048.118000, "writes": 711.220000, "unit": "MiB/s"},
	"engines": {
		"Render/3D/0": {"busy": 88.100000, "sema": 0.000000, "wait": 0.000000, "unit": "%"},
		"Blitter/0": {"busy": 0.000000, "sema": 0.000000, "wait": 0.000000, "unit": "%"},
		"Video/0": {"busy": 41.020000, "sema": 0.000000, "wait": 0.000000, "unit": "%"},
		"VideoEnhance/0": {"busy": 0.000000, "sema": 0.000000, "wait": 0.000000, "unit": "%"}
	}
},
{
	"period": {"duration": 1000.120000, "unit": "ms"},
	"frequency": {"requested": 1300.000000, "actual": 1250.000000, "unit": "MHz"},
	"interrupts": {"count": 210.000000, "unit": "irq/s"},
	"rc6": {"value": 10.000000, "unit": "%"},
	"power": {"GPU": 6.500000, "Package": 20.900000, "unit": "W"},
	"engines": {
		"Render/3D/0": {"busy": 90.000000, "sema": 0.000000, "wait": 0.000000, "unit": "%"}
	}
}
]
"""
IGT_SCREEN = """\
intel-gpu-top: Intel Alderlake_s (Gen12) @ /dev/dri/card0 -  300/ 300 MHz;  97% RC6;  0.12/ 4.87 W;       8 irqs/s

         ENGINES     BUSY                                                 MI_SEMA MI_WAIT
       Render/3D    0.00% |                                             |      0%      0%
         Blitter    0.00% |                                             |      0%      0%
           Video    0.00% |                                             |      0%      0%
    VideoEnhance    0.00% |                                             |      0%      0%
"""
IGT_LIST = """\
 Freq MHz      IRQ RC6     Power W             RCS/0           BCS/0           VCS/0          VECS/0
 req  act       /s   %   gpu   pkg       %  se  wa       %  se  wa       %  se  wa       %  se  wa
 350  349      112  62  0.52  3.10    5.10   0   0    0.00   0   0    0.00   0   0    0.00   0   0
 350  350       98  64  0.49  3.02    4.80   0   0    0.00   0   0    0.00   0   0    0.00   0   0
"""
GUID_HOSTS = """\
VM_hostname node-a01
0c42a10300b1c2d4
VM_hostname node-a02
0c42a10300b1c2e8
VM_hostname node-a03
0x0c42a10300b1c3f0
"""

HPL_NVIDIA = HPL_PASSED.replace(
    "T/V                N    NB     P     Q               Time                 Gflops\n",
    "T/V                N    NB     P     Q               Time                 Gflops (   per GPU)\n").replace(
    "WR11C2R4       90000   256     2     4              41.32             1.1762e+04",
    "WC0            90000  1024     2     4              14.44              3.945e+05 ( 4.931e+04)")
HEALTHY = {"hpl": HPL_PASSED, "hpl_nvidia": HPL_NVIDIA, "superbench_stream": SUPERBENCH_STREAM, "babelstream": BABELSTREAM,
           "cuda_stream": CUDA_STREAM, "igt_json": IGT_JSON, "igt_screen": IGT_SCREEN, "igt_list": IGT_LIST,
           "guid_hosts": GUID_HOSTS}
KINDS = {"hpl": "HPL", "hpl_nvidia": "HPL",
         "superbench_stream": "GPU STREAM", "babelstream": "GPU STREAM", "cuda_stream": "GPU STREAM",
         "igt_json": "intel_gpu_top", "igt_screen": "intel_gpu_top", "igt_list": "intel_gpu_top",
         "guid_hosts": "host IB port GUID listing"}


def _grave(data: dict[str, Any]) -> list[tuple[str, str]]:
    return [(f["cause"], f["severity"]) for f in data["findings"] if f["severity"] in ("warn", "critical")]


@pytest.mark.parametrize("name", list(HEALTHY))
def test_a_healthy_run_is_read_and_clear(tmp_path: Path, name: str) -> None:
    code, data = doctor_text(tmp_path, HEALTHY[name])
    assert code == 0  # read (never refused) and no finding at warn or above
    assert _grave(data) == []
    assert any(f"read as {KINDS[name]}" in n for n in data["notes"]), data["notes"]


def test_hpl_says_its_runs_figures(tmp_path: Path) -> None:
    _, data = doctor_text(tmp_path, HPL_PASSED)
    said = " ".join(data["notes"])
    assert "WR11C2R4 N=90000 NB=256 P=2 Q=4: 11762 Gflops" in said and "PASSED" in said
    _, data = doctor_text(tmp_path, HPL_NVIDIA)
    assert "WC0 N=90000 NB=1024 P=2 Q=4: 394500 Gflops" in " ".join(data["notes"])


@pytest.mark.parametrize("text", [HPL_FAILED, HPL_OLD_FAILED], ids=["hpl23", "hpl10_three_checks"])
def test_a_failed_residual_is_wrong_results(tmp_path: Path, text: str) -> None:
    code, data = doctor_text(tmp_path, text)
    assert code == 1
    assert _grave(data) == [("silent_data_corruption", "critical")]


def test_babelstream_validation_failed_is_wrong_results(tmp_path: Path) -> None:
    _, data = doctor_text(tmp_path, BABELSTREAM_FAILED)
    assert _grave(data) == [("silent_data_corruption", "critical")]


def test_stream_figures_are_said_not_judged(tmp_path: Path) -> None:
    _, data = doctor_text(tmp_path, SUPERBENCH_STREAM)
    said = " ".join(data["notes"])
    assert "Triad 3,009.9 GB/s" in said and "not judged" in said


def test_intel_gpu_top_json_says_each_engine(tmp_path: Path) -> None:
    _, data = doctor_text(tmp_path, IGT_JSON)
    said = " ".join(data["notes"])
    assert "2 sample(s)" in said and "Render/3D/0 88.1 %" in said and "Video/0 41.0 %" in said


def test_guid_listing_names_each_host(tmp_path: Path) -> None:
    _, data = doctor_text(tmp_path, GUID_HOSTS)
    said = " ".join(data["notes"])
    assert "3 host(s)" in said and "node-a03: 0c42a10300b1c3f0" in said
