"""A kernel excerpt of Moore Threads' MUSA driver (mtgpu, which prints 'MTGPU:') is a GPU driver's lines gpuvet
has no reader for (issue 46, batch P): never 'none from a GPU', the lines counted and the first named. Written in
the driver's log shape (a recovery record, an MMU fault); values made up."""

from __future__ import annotations

import pytest

from gpuvet.captures import fallback
from gpuvet.captures.text import clean
from gpuvet.errors import CaptureError

_LOG = ("[ 7001.100001] MTGPU:  412:     MMU (Core) - FAULT:\n"
        "[ 7001.100002] MTGPU:  412:       * MMU status (0x0000000000000001 | 0x00000011): Fault (Page Table).\n"
        "[ 7001.100003] MTGPU:  412:   Recovery 3: Core = 0, PID = 4242, frame = 0, Guilty Lockup\n")


def test_mtgpu_lines_are_refused_as_a_gpu_drivers_never_judged_clear() -> None:
    with pytest.raises(CaptureError, match=r"3 line\(s\) from a GPU or accelerator driver .*'MTGPU'"):
        fallback.gpuless(clean(_LOG))


def test_the_lowercase_module_name_is_the_same_driver() -> None:
    log = ("[    3.100001] mtgpu: loading out-of-tree module taints kernel.\n"
           "[    3.200002] mtgpu 0000:41:00.0: enabling device\n")
    with pytest.raises(CaptureError, match="'mtgpu'"):
        fallback.gpuless(clean(log))
