"""NCCL's and RCCL's own WARN messages read as their class (issue 46, PHRN; benchmarks/nccl_phrasebook.py counts every
WARN format string of NCCL 2.18-2.30 and RCCL 6.2 in six framings). Lines written here in the library's own shapes
(debug.cc's 'host:pid:tid [dev] file:line NCCL WARN', 2.26+'s timestamp and '(function)', srun --label's 'N: ',
torchrun's '[rankN]:', PyTorch's DistBackendError quoting NCCL's last WARN), each with the words NCCL prints
(transport/net_ib*.cc, include/checks.h, cudawrap.h, alloc.h, misc/gdrwrap.cc, misc/ipcsocket.cc, init.cc, ras.cc)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest

from gpuvet.knowledge import nccl_warn_family
from tests.support.helpers import capture_json

_P = "gpu-node07:2714903:2715071 [3]"
_INIT = (
    f"{_P} NCCL INFO Bootstrap : Using bond0:10.12.3.17<0>\n"
    f"{_P} NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB bond0:10.12.3.17<0>\n"
)


def _found(tmp_path: Path, text: str) -> list[dict[str, Any]]:
    findings = cast(list[dict[str, Any]], capture_json(tmp_path, text)["findings"])
    return [f for f in findings if f["severity"] in ("warn", "critical")]


def _family(tmp_path: Path, text: str, family: str) -> dict[str, Any]:
    """The one warn/critical finding of ``family`` (its kind), with the family's title and fix."""
    found = [f for f in _found(tmp_path, text) if f["evidence"].get("kind") == family]
    assert len(found) == 1, _found(tmp_path, text)
    entry = nccl_warn_family(family)
    assert found[0]["title"] == entry.title and found[0]["fix"] == entry.action
    return found[0]


@pytest.mark.parametrize(
    "line",
    [
        f"{_P} transport/net_ib.cc:101 NCCL WARN NET/IB : mlx5_0:1 Got async event : port error",  # 2.18-2.21
        f"[2025-06-11 10:14:03] {_P} transport/net_ib/common.cc:124 (ncclIbAsyncThreadMain) NCCL WARN NET/IB : mlx5_0:1 "
        "async fatal event: local catastrophic error",  # 2.27+: a timestamp and the function by default
    ],
)
def test_an_hca_error_event_is_the_nic_not_an_unnamed_warn(tmp_path: Path, line: str) -> None:
    f = _family(tmp_path, _INIT + line + "\n", "nccl_ib_async_event")
    # on the host and HCA the line names (R4C); the HCA's own fatal event is its failure, critical
    fatal = "catastrophic" in line
    assert f["cause"] == ("nic_firmware_fatal" if fatal else "collective_runtime_error")
    assert f["severity"] == ("critical" if fatal else "warn") and f["module"] == "gpu-node07 mlx5_0:1"


def test_a_non_fatal_async_event_of_the_subnet_manager_stays_quiet(tmp_path: Path) -> None:
    assert (
        _found(
            tmp_path,
            _INIT + f"{_P} transport/net_ib/common.cc:179 NCCL WARN NET/IB : mlx5_0:1 Got non-fatal "
            "async event: client reregistration(17)\n",
        )
        == []
    )


@pytest.mark.parametrize(
    ("error", "cause", "severity"),
    [
        ("'uncorrectable ECC error encountered'", "ecc_uncorrectable_since_boot", "critical"),
        ("214 'uncorrectable ECC error encountered'", "ecc_uncorrectable_since_boot", "critical"),  # cudawrap.h's CUresult
        ("'system not yet initialized'", "fabric_manager_failed", "critical"),
        ("'CUDA driver version is insufficient for CUDA runtime version'", "driver_runtime_mismatch", "critical"),
        ("700 'an illegal memory access was encountered'", "application_cuda_error", "warn"),
        ("'unknown error'", "api_reports_driver_state", "warn"),
    ],
)
def test_a_cuda_failure_inside_nccl_takes_the_runtime_s_cause(tmp_path: Path, error: str, cause: str, severity: str) -> None:
    text = _INIT + f"\n{_P} include/checks.h:32 NCCL WARN Cuda failure {error}\n{_P} NCCL INFO init.cc:1720 -> 1\n"
    found = _found(tmp_path, text)
    assert [(f["cause"], f["severity"], f["module"]) for f in found] == [(cause, severity, "gpu-node07 GPU 3")]


def test_shm_s_own_cuda_failure_stays_its_cumem_path(tmp_path: Path) -> None:
    _family(
        tmp_path,
        f"{_P} transport/shm.cc:530 NCCL WARN Cuda failure 'operation not supported'\n"
        f"{_P} NCCL INFO transport/shm.cc:540 -> 1\n",
        "nccl_shm_cuda",
    )


_TORCH = (
    'Traceback (most recent call last):\n  File "/workspace/train.py", line 212, in <module>\n'
    "    dist.barrier()\n"
    "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, "
    "{said}, NCCL version 2.21.5\n{detail}\nLast error:\n{last}\n"
)
_SYSTEM = (
    "unhandled system error (run with NCCL_DEBUG=INFO for details)",
    "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. ",
)


def test_pytorch_s_last_error_is_read_as_nccl_s_warn(tmp_path: Path) -> None:
    text = _TORCH.format(
        said=_SYSTEM[0],
        detail=_SYSTEM[1],
        last="socketStartConnect: Connect to 10.12.3.41<50127> failed : Connection refused",
    )
    f = _family(tmp_path, text, "nccl_socket_connect")
    assert f["evidence"]["peer"] == "10.12.3.41<50127>"


def test_the_last_error_under_torchrun_s_prefix_is_read(tmp_path: Path) -> None:
    text = "".join(
        f"[rank3]: {ln}\n"
        for ln in _TORCH.format(
            said="unhandled cuda error (run with NCCL_DEBUG=INFO for details)",
            detail="ncclUnhandledCudaError: Call to CUDA function failed.",
            last="Cuda failure 'peer access is not supported between these two devices'",
        ).splitlines()
    )
    assert "p2p_unavailable" in {f["cause"] for f in _found(tmp_path, text)}


def test_a_last_error_already_printed_as_a_warn_is_one_failure(tmp_path: Path) -> None:
    warn = "socketProgress: Connection closed by remote peer gpu-node09<50127>"
    text = f"{_P} misc/socket.cc:58 NCCL WARN {warn}\n{_P} NCCL INFO misc/socket.cc:752 -> 6\n" + _TORCH.format(
        said="remote process exited or there was a network error",
        detail="ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
        last=warn,
    )
    named = [f for f in _found(tmp_path, text) if f["evidence"].get("kind") == "nccl_peer_closed"]
    assert len(named) == 1 and named[0]["module"] == "gpu-node07 GPU 3"


@pytest.mark.parametrize(
    ("line", "family"),
    [
        ("transport/net_ib.cc:680 NCCL WARN NET/IB : Unable to open device mlx5_2", "nccl_ib_device"),
        (
            "transport/net_ib.cc:905 NCCL WARN NET/IB : Attempted to connect incompatible devices: [0]mlx5_0:1/IB and "
            "[1]mlx5_2:1/RoCE. Try selecting NICs of only one link type using NCCL_IB_HCA",
            "nccl_ib_link_types",
        ),
        (
            "include/ibvwrap.h:168 NCCL WARN ibv_post_send() failed with error Cannot allocate memory, Bad WR "
            "0x7f3a2c000000, First WR 0x7f3a2c000000",
            "nccl_ib_post",
        ),
        (
            "init.cc:1290 NCCL WARN Mismatched NCCL version detected : rank 3 version 22105 rank 11 version 21903",
            "nccl_version_mismatch",
        ),
        ("misc/gdrwrap.cc:190 NCCL WARN gdr_pin_buffer(addr 7f3a2c000000, size 2097152) failed: -22", "nccl_gdr"),
        ("misc/ipcsocket.cc:209 NCCL WARN UDS: Receiving data over socket nccl-ipc-3 failed : 104", "nccl_socket_io"),
        (
            "transport/net_ib/p2p.cc:512 NCCL WARN NET/IB: Got CQE with error (devIndex=0, req=0x7f3a2c000000, comm="
            "0x7f3a2c100000 (Send), wr_id=42, qp_num=1123)",
            "nccl_ib_completion",
        ),  # NET/IB's p2p.cc, no P2P transport
        (
            "transport/net_ib.cc:1380 NCCL WARN NET/IB : req 3/8 tag 7 peer 10.12.3.41<50127> collective mismatch error, "
            "local size 1048576 remote size 524288",
            "nccl_message_truncated",
        ),
    ],
)
def test_a_warn_names_its_family_without_its_trace(tmp_path: Path, line: str, family: str) -> None:
    _family(tmp_path, f"{_INIT}\n{_P} {line}\n", family)  # NCCL_DEBUG=WARN's run: the WARN alone, no '-> N' trace


def test_a_cuda_allocation_failure_under_srun_is_out_of_memory(tmp_path: Path) -> None:
    text = "".join(
        f"3: {ln}\n"
        for ln in (_INIT + f"{_P} include/alloc.h:131 NCCL WARN Failed to CUDA calloc 4194304 bytes\n").splitlines()
    )
    assert [f["cause"] for f in _found(tmp_path, text)] == ["nccl_cuda_out_of_memory"]
