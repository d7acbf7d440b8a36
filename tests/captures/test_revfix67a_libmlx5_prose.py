"""REV67a #10 (issue 46): libmlx5's 'mlx5: <host>: got completion with error:' (rdma-core providers/mlx5/cq.c)
quoted after a sentence's words with no dump under it is the poster's prose ('Our logs used to show …, but after
upgrading the firmware the error is gone'), no print of the provider; with its dump's rows under it, or after a
log's own prefix (a timestamp and logger, Open MPI's '[1,0]<stderr>:'), it is still read."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.helpers import doctor_text

_SAID = "Our logs used to show mlx5: gpu07: got completion with error:\n"
_ROWS = "".join(["00000000 00000000 00000000 00000000\n"] * 3 + ["00000000 00008716 0a001f8e 000027d2\n"])


def _completions(tmp_path: Path, text: str) -> list[str]:
    _, data = doctor_text(tmp_path, text)
    return [f["severity"] for f in data.get("findings", []) if f["cause"] == "rdma_completion_error"]


def test_a_sentence_quoting_the_line_is_no_completion_error(tmp_path: Path) -> None:
    text = _SAID + "but after upgrading the firmware to 28.39 the error is gone and all_reduce_perf runs at 190 GB/s.\n"
    assert _completions(tmp_path, text) == []


@pytest.mark.parametrize("text", [
    _SAID + _ROWS,  # the poster pasted the dump under their words
    "2024-05-02 11:03:12,553 ERROR worker.py:409 -- mlx5: gpu-b07: got completion with error:\n",
    "[1,0]<stderr>:mlx5: gpu-b07: got completion with error:\n" + "".join(f"[1,0]<stderr>:{r}\n" for r in
                                                                         _ROWS.splitlines()),
])
def test_the_providers_print_is_still_read(tmp_path: Path, text: str) -> None:
    assert _completions(tmp_path, text) == ["warn"]
