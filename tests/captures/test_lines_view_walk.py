"""Session 67 (review 67b F4): walking a slice of a long text's lines costs its own lines, wherever it sits. The
slice's places were taken with islice, which steps over every place before the slice's first: a reader that walks
each of a long text's objects (dcgm_events on 800,000 lines of intel_gpu_top -J) took 164 s where 7 s do."""

from __future__ import annotations

import time

from gpuvet.captures.lines import TextLines, line_ends

TEXT = "\n".join(f'  "busy": {i}.0,' for i in range(400_000))


def _lines() -> TextLines:
    starts, ends = line_ends(TEXT, 0)
    return TextLines(TEXT, starts, ends, whole=True)


def test_a_slice_holds_its_own_lines_wherever_it_sits() -> None:
    lines = _lines()
    assert [ln.no for ln in lines[399_990:399_993]] == [399_991, 399_992, 399_993]
    assert [ln.text for ln in lines[5:7]] == ['  "busy": 5.0,', '  "busy": 6.0,']


def _walk(lines: TextLines, first: int) -> float:
    spent = []
    for _ in range(3):
        t = time.process_time()
        for k in range(first, first + 20_000, 50):  # 400 slices of 50 lines
            sum(1 for _ in lines[k:k + 50])
        spent.append(time.process_time() - t)
    return min(spent)


def test_walking_slices_at_the_end_costs_as_at_the_start() -> None:
    """A ratio in this run, never a clock's limit: slices at line 380,000 cost about what slices at line 0 do; the
    islice walk made them ~1,000 times dearer."""
    lines = _lines()
    assert _walk(lines, 380_000) < 5 * max(_walk(lines, 0), 1e-4)
