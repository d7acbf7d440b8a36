"""REV67a #7, #8 (issue 46): one fact, one finding, said in one place. A framework's 'NCCL error in: …' that quotes
the library's failure under it ('Last error:') is that failure's echo whatever its family's cause (an ECC error the
CUDA runtime names, not only the job's configuration): the library's finding says it once. The side a verbs
completion status points at is the knowledge base's (nccl_warns.yaml: completion_sides, an RNR retry's from
ib_status 13), not a sentence in code. Lines in the shapes PyTorch (NCCLUtils.cpp's DistBackendError) and
rdma-core (ibv_wc_status_str) print."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers import doctor_text


def _found(data: dict[str, Any]) -> dict[str, str]:
    return {f["cause"]: f["severity"] for f in data.get("findings", [])}


def _torch(kind: str, last: str) -> str:
    return (f"torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.cpp:94, "
            f"unhandled {kind} error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5\n"
            f"ncclUnhandledCudaError: Call to CUDA function failed.\nLast error:\n{last}\n")


def test_a_frameworks_report_of_an_ecc_error_is_the_ecc_finding_once(tmp_path: Path) -> None:
    code, data = doctor_text(tmp_path, _torch("cuda", "Cuda failure 'uncorrectable ECC error encountered'"))
    assert _found(data) == {"ecc_uncorrectable_since_boot": "critical"} and code == 1


def test_a_frameworks_report_quoting_a_shm_warn_is_still_the_note_once(tmp_path: Path) -> None:
    code, data = doctor_text(tmp_path, _torch("system", "Error while creating shared memory segment "
                                                        "/dev/shm/nccl-cjY8K5 (size 10617216)"))
    assert _found(data) == {"collective_job_config": "info"} and code == 0


def test_a_frameworks_report_with_nothing_quoted_keeps_its_own_finding(tmp_path: Path) -> None:
    code, data = doctor_text(tmp_path, _torch("cuda", "").replace("Last error:\n", ""))
    assert _found(data) == {"collective_runtime_error": "warn"} and code == 1


def test_the_rnr_side_is_what_the_knowledge_base_says_of_status_13(tmp_path: Path) -> None:
    from gpuvet.knowledge import completion_sides, ib_completion_status

    said = str(ib_completion_status(13)).split(": ", 1)[1]
    assert completion_sides()[0] == (("rnr retry",), said)
    code, data = doctor_text(tmp_path, "ibv_poll_cq: completion with status IBV_WC_RNR_RETRY_EXC_ERR (13), "
                             "vendor_err 0x87, wr_id 7\n")
    sides = {f["evidence"].get("side") for f in data.get("findings", []) if f["cause"] == "rdma_completion_error"}
    assert sides == {said}, data


@pytest.mark.parametrize(("status", "side"), [
    ("transport retry counter exceeded", "the path to the peer"),
    ("remote access error", "the peer refused"),
    ("Work Request Flushed Error", "an echo"),
    ("local length error", "the program's own request"),
])
def test_each_side_comes_from_the_knowledge_bases_table(status: str, side: str) -> None:
    from gpuvet.knowledge import completion_sides

    w = status.lower()
    said = next(s for words, s in completion_sides() if any(x in w for x in words))
    assert said.startswith(side)
