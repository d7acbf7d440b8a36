"""A kernel excerpt of Moore Threads' MUSA driver (mtgpu, which prints 'MTGPU:') is a GPU driver's lines gpuvet
has no reader for (issue 46, batch P): never 'none from a GPU', the lines counted and the first named. GEN1b: read,
no longer refused (these tests pinned the refusal): the lines counted by driver, not judged, its error lines leads.
Written in the driver's log shape (a recovery record, an MMU fault); values made up."""

from __future__ import annotations

from gpuvet.captures import fallback
from gpuvet.captures.text import clean

_LOG = ("[ 7001.100001] MTGPU:  412:     MMU (Core) - FAULT:\n"
        "[ 7001.100002] MTGPU:  412:       * MMU status (0x0000000000000001 | 0x00000011): Fault (Page Table).\n"
        "[ 7001.100003] MTGPU:  412:   Recovery 3: Core = 0, PID = 4242, frame = 0, Guilty Lockup\n")


def test_mtgpu_lines_are_a_gpu_drivers_counted_never_judged_clear() -> None:
    got = fallback.gpuless(clean(_LOG))
    assert isinstance(got, fallback.UnreadDriverLines) and got.drivers == {"mtgpu": 3}
    assert "3 line(s) of mtgpu gpuvet has no rule for: not judged" in got.notes[0]
    assert "'[ 7001.100001] MTGPU:" in got.notes[0]
    assert "none from a GPU" not in got.notes[0]
    assert [lead.line for lead in got.leads] == [1, 2, 3]  # the MMU fault, its status and the recovery's lockup


def test_the_lowercase_module_name_is_the_same_driver() -> None:
    log = ("[    3.100001] mtgpu: loading out-of-tree module taints kernel.\n"
           "[    3.200002] mtgpu 0000:41:00.0: enabling device\n")
    got = fallback.gpuless(clean(log))
    assert isinstance(got, fallback.UnreadDriverLines) and got.drivers == {"mtgpu": 2} and not got.leads
    assert [m.module for m in got.modules] == ["0000:41:00.0"]
