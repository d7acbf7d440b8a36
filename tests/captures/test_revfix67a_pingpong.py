"""REV67a #9 (issue 46): rdma-core's verbs example programs (libibverbs/examples/rc_pingpong.c and its uc/ud/srq
siblings) print a failed completion as 'Failed status %s (%d) for wr_id %d' (ibv_wc_status_str and its number): a
completion error like any RDMA program's, its side the knowledge base's; words and number that disagree are no
such line."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.helpers import doctor_text

_PINGPONG = ("  local address:  LID 0x0003, QPN 0x00011a, PSN 0x1c2b3d, GID ::\n"
             "  remote address: LID 0x0004, QPN 0x00011b, PSN 0x2f0e4a, GID ::\n")


@pytest.mark.parametrize(("line", "code", "side"), [
    ("Failed status RNR retry counter exceeded (13) for wr_id 2", 13, "the peer did not post its receive"),
    ("Failed status transport retry counter exceeded (12) for wr_id 2", 12, "the path to the peer"),
])
def test_a_pingpong_completion_error_is_read_with_its_side(tmp_path: Path, line: str, code: int, side: str) -> None:
    for text in (line + "\n", _PINGPONG + line + "\nparse WC failed 1\n"):
        got, data = doctor_text(tmp_path, text)
        (f,) = [f for f in data.get("findings", []) if f["cause"] == "rdma_completion_error"]
        assert got == 1 and f["severity"] == "warn" and str(f["evidence"]["side"]).startswith(side)
        assert f"({code})" in f["evidence"]["log"]


def test_words_and_a_number_that_disagree_are_no_completion(tmp_path: Path) -> None:
    _, data = doctor_text(tmp_path, "Failed status RNR retry counter exceeded (12) for wr_id 2\n")
    assert not [f for f in data.get("findings", []) if f["cause"] == "rdma_completion_error"]
