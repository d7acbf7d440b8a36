"""REV67a #2 (issue 46): perftest's compared-parameter line ('size mismatch: local=65536, remote=2',
perftest_parameters.c / perftest_communication.c compare()) is perftest's only under its header or beside its own
words ('Failed to exchange data between server and clients'): other programs print the same words (an uploader's
Go code: 'size mismatch: local=%d, remote=%d'), and theirs are no RDMA test failure."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.helpers import doctor_text, doctor_triples


@pytest.mark.parametrize("text", [
    "2024-05-01 10:22:13 [sync] WARN artifact model.safetensors size mismatch: local=1048576, remote=1048000\n"
    "2024-05-01 10:22:14 [sync] retrying upload (1/3)\n2024-05-01 10:22:19 [sync] upload ok",
    "[train] resume: iters mismatch: local=1200, remote=1180\n[train] using local checkpoint",
])
def test_another_programs_mismatch_is_no_rdma_test_failure(text: str, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    code, found = doctor_triples(text, tmp_path, capsys)
    assert not [f for f in found if f[0] == "rdma_test_failed"] and code != 1, (code, found)


def test_perftests_mismatch_beside_its_own_words_is_its_failure_line(tmp_path: Path) -> None:
    mismatch, exchange = " size mismatch: local=65536, remote=8388608", " Failed to exchange data between server and clients"
    code, data = doctor_text(tmp_path, f"{mismatch}\n{exchange}\n")
    (f,) = data["findings"]
    assert code == 1 and (f["cause"], f["severity"], f["evidence"]["error"]) == ("rdma_test_failed", "warn",
                                                                                  mismatch.strip())
    code, data = doctor_text(tmp_path, f"{mismatch}\n" + "[sync] upload ok\n" * 8 + f"{exchange}\n")
    (f,) = data["findings"]  # far from perftest's words the mismatch is no line of its: the exchange failure says it
    assert code == 1 and (f["cause"], f["evidence"]["error"]) == ("rdma_test_failed", exchange.strip())
