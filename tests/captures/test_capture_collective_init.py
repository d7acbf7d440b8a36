"""A program's traceback whose error is a collective library's communicator never coming up (issue 46, batch L's
vllmascend5135 as a class): PyTorch's c10d waiting on rank 0's unique id through its store (NCCL, HCCL or RCCL
named), torch_npu's failed HCCL init call, NCCL's and RCCL's init calls failing by name, behind any launcher's
prefix. Each is collective_init_failed on the node (the knowledge base's severity: the job stops before its first
collective), no module named; a traceback that only names the library, or a sentence asking about it, is not."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import capture_findings

INIT = {("collective_init_failed", None): "critical"}


def _traceback(prefix: str, error: str) -> str:
    return "\n".join(prefix + s for s in (
        "Traceback (most recent call last):",
        '  File "/opt/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 2810, in broadcast',
        "    work = group.broadcast([tensor], opts)",
        error)) + "\n"


def test_a_rank_that_cannot_get_the_unique_id_from_rank_0_never_set_its_communicator_up(tmp_path: Path) -> None:
    errors = [
        "torch.distributed.DistBackendError: [3] is setting up NCCL communicator and retrieving ncclUniqueId from [0] "
        "via c10d key-value store by key '0:1', but store->get('0:1') got error: Socket Timeout",
        "RuntimeError: [1] is setting up HCCL communicator and retrieving hcclUniqueId from [0] via c10d key-value "
        "store by key '0', but store->get('0') got error: Connection reset by peer",
        "RuntimeError: create_config:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:102 HCCL function error: "
        "hcclCommInitRootInfoConfig(numRanks, &rootInfo, rank, config, &(comm->hcclComm_)), error code is 7",
        "RuntimeError: ncclCommInitRank failed: unhandled system error",
    ]
    for prefix in ("", "[rank3]: ", "(RayWorkerWrapper pid=4411) ERROR 03-02 10:11:12 [worker.py:88] "):
        for error in errors:
            assert capture_findings(tmp_path, _traceback(prefix, error)) == INIT, (prefix, error)


def test_naming_the_library_is_not_an_init_failure(tmp_path: Path) -> None:
    text = ("INFO 03-02 10:11:12 [parallel_state.py:1004] world_size=2 rank=1 backend=hccl\n"
            "does anyone know why hcclUniqueId retrieval is slow on my cluster?\n"
            "RuntimeError: CUDA error: out of memory\n")
    assert ("collective_init_failed", None) not in capture_findings(tmp_path, text)
