"""REV67a #12 (issue 46): a worded kernel line with a long run of blanks before its last word is tested for a
driver prefix left alone in time linear in its length (a re.sub of blanks, an optional pane border and blanks
retried every split of the run: 46 s on 3000 blanks), measured as a ratio against a plain line of the same length
in the same test, never an absolute time; a prefix alone inside a tmux pane's border still joins its message."""

from __future__ import annotations

import time

from gpuvet.captures.kernel_wrapped import joined
from gpuvet.captures.text import Line

_HEAD = "mlx5: gpu07: got completion with error:"


def _best_of(text: str, rounds: int = 5) -> float:
    lines = [Line(no, text) for no in range(1, 51)]
    worded = list(enumerate(lines))
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        joined(lines, worded)
        best = min(best, time.perf_counter() - start)
    return best


def test_a_long_run_of_blanks_before_the_last_word_is_tested_as_fast_as_a_plain_line() -> None:
    n = 300  # cubic before REV67a #12: seconds here; linear: the same order as the plain line
    assert _best_of(_HEAD + " " * n + "z") < 25 * _best_of(_HEAD + "m" * n + "z")


def test_a_prefix_alone_in_a_panes_border_joins_the_line_under_it() -> None:
    lines = [Line(1, "[442366.409593] amdgpu:      │  "), Line(2, "    failed to send message 148 ret is 0 │")]
    out, _ = joined(lines, [(0, lines[0])])
    assert out[0].text == "[442366.409593] amdgpu: failed to send message 148 ret is 0"
