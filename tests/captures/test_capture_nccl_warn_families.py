"""NCCL's WARN lines name their cause by family (issue 46, NCCLW): a socket connect that failed, a peer that closed
its connection, no usable interface, the bootstrap, P2P/IPC, /dev/shm, a NET/IB completion error with its status,
a queue pair that would not connect, GPUDirect RDMA, the proxy (the step under it cited). Each finding keeps its
cause (the communicator did not come up, or failed while running) and takes the family's title and fix from
knowledge/nccl_warns.yaml, citing the log's lines and what they name. Lines written here in NCCL's own shapes."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuvet.knowledge import nccl_warn_family
from tests.support.helpers import capture_json

_INIT = "gn07:4100:4100 [0] NCCL INFO Bootstrap : Using eth0:10.8.0.7<0>\n"


def _one(tmp_path: Path, text: str) -> dict[str, object]:
    found = [f for f in capture_json(tmp_path, text)["findings"]  # type: ignore[union-attr]
             if f["cause"] in ("collective_init_failed", "collective_runtime_error", "collective_job_config",
                               "collective_link_failed")]  # R14A: a config family's and the fabric's own causes  # type: ignore[index]
    assert len(found) == 1, found
    return found[0]  # type: ignore[no-any-return]


def _is(f: dict[str, object], family: str) -> dict[str, object]:
    ev = f["evidence"]
    assert isinstance(ev, dict) and ev["kind"] == family, ev
    entry = nccl_warn_family(family)
    assert f["title"] == entry.title and f["fix"] == entry.action
    return ev


def test_a_socket_connect_that_ran_out_of_retries_names_the_address(tmp_path: Path) -> None:
    f = _one(tmp_path, _INIT +
             "gn07:4100:4100 [0] NCCL INFO Call to connect returned Connection refused, retrying\n"
             "gn07:4100:4100 [0] NCCL INFO Call to connect returned Connection refused, retrying\n"
             "gn07:4100:4100 [0] misc/socket.cc:560 NCCL WARN socketPollConnect: connect to 10.8.0.3<40417> returned "
             "Connection refused, exceeded error retry count after 35 attempts\n"
             "gn07:4100:4100 [0] NCCL INFO misc/socket.cc:640 -> 6\n")
    ev = _is(f, "nccl_socket_connect")
    assert f["cause"] == "collective_init_failed" and f["module"] == "gn07 GPU 0"
    assert ev["peer"] == "10.8.0.3<40417>" and str(ev["retries"]).startswith("2 line(s) 'Call to connect returned")
    assert ev["interface"] == "line 1: Bootstrap : Using eth0:10.8.0.7<0>"  # the interface NCCL chose


def test_a_connect_warn_cut_mid_word_is_still_the_failed_connect(tmp_path: Path) -> None:
    f = _one(tmp_path, _INIT + "gn07:4100:4188 [0] NCCL INFO Call to connect returned Connection timed out, retrying\n"
                               "gn07:4100:4188 [0] include/socket.h:410 NCCL WARN Connect to 10.8\n")
    ev = _is(f, "nccl_socket_connect")
    assert ev["retries"] == "1 line(s) 'Call to connect returned Connection timed out, retrying' (line(s) 2)"


def test_a_connection_closed_by_the_peer_names_the_peer(tmp_path: Path) -> None:
    f = _one(tmp_path, "gn07:4100:4190 [3] misc/socket.cc:50 NCCL WARN socketProgress: Connection closed by remote peer "
                       "gn09.cluster<52011>\n"
                       "gn07:4100:4190 [3] NCCL INFO misc/socket.cc:58 -> 6\n")
    assert _is(f, "nccl_peer_closed")["peer"] == "gn09.cluster<52011>"


def test_no_socket_interface_then_its_error_trace_is_the_interface(tmp_path: Path) -> None:
    f = _one(tmp_path, "gn07:4100:4100 [0] bootstrap.cc:90 NCCL WARN Bootstrap : no socket interface found\n"
                       "gn07:4100:4100 [0] NCCL INFO init.cc:1400 -> 3\n")
    _is(f, "nccl_socket_interface")
    assert f["cause"] == "collective_job_config"  # R14A: the job's setting, info (was collective_init_failed)


def test_a_bootstrap_message_of_another_size_is_the_bootstrap(tmp_path: Path) -> None:
    f = _one(tmp_path, "gn07:4100:4100 [1] bootstrap.cc:140 NCCL WARN Bootstrap : Message truncated : received 4096 "
                       "bytes instead of 2048\n"
                       "gn07:4100:4100 [1] NCCL INFO bootstrap.cc:160 -> 3\n")
    _is(f, "nccl_bootstrap")


def test_a_p2p_ipc_failure_is_p2p_unavailable_on_the_pair_its_channel_joined(tmp_path: Path) -> None:
    found = capture_json(tmp_path, "gn07:4100:4150 [1] NCCL INFO Channel 00/0 : 1[3b000] -> 0[18000] via P2P/IPC\n"
                                   "gn07:4100:4150 [1] transport/p2p.cc:275 NCCL WARN Cuda failure 'invalid argument' "
                                   "while opening a CUDA IPC handle\n")["findings"]
    assert [(f["cause"], f["module"], f["severity"]) for f in found] == [  # type: ignore[index,union-attr]
        ("p2p_unavailable", "0000:18:00.0 <-> 0000:3B:00.0", "warn")]
    ev = found[0]["evidence"]  # type: ignore[index]
    assert ev["kind"] == "nccl_p2p_ipc" and ev["process"] == "gn07 GPU 1" and "via P2P/IPC" in ev["channel"]
    assert "NCCL_P2P_DISABLE=1" in found[0]["fix"]  # type: ignore[index]


def test_peer_mapping_resources_exhausted_is_no_pair_fault(tmp_path: Path) -> None:
    f = _one(tmp_path, "gn07:4100:4150 [1] NCCL INFO Channel 00/0 : 1[3b000] -> 0[18000] via P2P/IPC\n"
                       "gn07:4100:4150 [1] transport/p2p.cc:275 NCCL WARN Cuda failure 'peer mapping resources "
                       "exhausted'\n")
    _is(f, "nccl_p2p_mappings_exhausted")  # a family of its own, read from the record: no pair's fault


def test_a_dev_shm_too_small_is_the_shared_memory(tmp_path: Path) -> None:
    f = _one(tmp_path, "c0ffee12:55:55 [2] misc/shmutils.cc:70 NCCL WARN Error: failed to extend /dev/shm/nccl-Ab12Cd "
                       "to 9437188 bytes\n"
                       "c0ffee12:55:55 [2] misc/shmutils.cc:110 NCCL WARN Error while creating shared memory segment "
                       "/dev/shm/nccl-Ab12Cd (size 9437184)\n"
                       "c0ffee12:55:55 [2] NCCL INFO transport/shm.cc:120 -> 2\n")
    ev = _is(f, "nccl_shm")
    assert f["evidence"]["times"] == 2 and len(ev["also"]) == 1  # type: ignore[index]
    assert "--shm-size" in str(f["fix"])


def test_an_ib_completion_error_says_what_its_status_means(tmp_path: Path) -> None:
    f = _one(tmp_path, "gn07:4100:4100 [0] NCCL INFO comm 0x5a rank 4 nranks 16 cudaDev 0 busId 18000 - Init COMPLETE\n"
                       "gn07:4100:4211 [0] transport/net_ib.cc:1100 NCCL WARN NET/IB : Got completion from peer "
                       "10.9.0.12<33125> with status=12 opcode=0 len=0 vendor err 129 (Recv)\n")
    ev = _is(f, "nccl_ib_completion")
    assert f["cause"] == "collective_runtime_error" and ev["peer"] == "10.9.0.12<33125>"
    assert str(ev["status"]).startswith("12 (transport retry counter exceeded")


def test_a_queue_pair_that_would_not_connect_is_the_qp(tmp_path: Path) -> None:
    f = _one(tmp_path, "gn07:4100:4160 [5] misc/ibvwrap.cc:290 NCCL WARN Call to ibv_modify_qp failed with error "
                       "Connection timed out, errno 110\n"
                       "gn07:4100:4160 [5] NCCL INFO transport/net_ib.cc:800 -> 2\n")
    _is(f, "nccl_ib_qp")


def test_gpudirect_rdma_missing_on_a_failed_registration_is_gdr(tmp_path: Path) -> None:
    f = _one(tmp_path, "gn07:4100:4160 [2] transport/net_ib.cc:520 NCCL WARN NET/IB : GPU Direct RDMA registration "
                       "failed: nvidia-peermem not loaded\n")
    _is(f, "nccl_gdr")


def test_a_proxy_failure_cites_the_first_warn_and_names_the_step_under_it(tmp_path: Path) -> None:
    f = _one(tmp_path, "gn07:4100:4170 [6] misc/socket.cc:50 NCCL WARN socketProgress: Connection reset by peer "
                       "10.8.0.9<41000>\n"
                       "gn07:4100:4170 [6] proxy.cc:1050 NCCL WARN [Proxy Service 6] Failed to execute operation Connect "
                       "from rank 14, retcode 6\n"
                       "gn07:4100:4170 [6] NCCL INFO proxy.cc:1060 -> 6\n")
    ev = _is(f, "nccl_peer_closed")
    assert f["evidence"]["line"] == 1 and ev["peer"] == "10.8.0.9<41000>"  # type: ignore[index]


@pytest.mark.parametrize("prefix", ["\u2502 ", "[1,3]<stderr>:", "  "])
def test_a_cut_completion_behind_a_launcher_or_box_prefix_is_read(tmp_path: Path, prefix: str) -> None:
    f = _one(tmp_path, f"{prefix}gn07:4100:4100 [0] NCCL INFO comm 0x5a rank 4 nranks 16 cudaDev 0 busId 18000 - "
                       "Init COMPLETE\n"
                       f"{prefix}gn07:4100:4211 [0] transport/net_ib.cc:1100 NCCL WARN NET/IB : Got compl\n")
    assert str(_is(f, "nccl_ib_completion")["status"]).startswith("not in the line")


def test_a_healthy_init_log_gives_no_warn(tmp_path: Path) -> None:
    text = "".join(
        f"gn07:41{r}0:41{r}0 [{r}] NCCL INFO {m}\n" for r in range(2) for m in (
            "Bootstrap : Using eth0:10.8.0.7<0>", "NET/Plugin : No plugin found (libnccl-net.so)",
            "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB eth0:10.8.0.7<0>", "Using network IB",
            f"Channel 00/0 : {r}[{'18000' if r == 0 else '3b000'}] -> {1 - r}[{'3b000' if r == 0 else '18000'}] "
            "via P2P/CUMEM/read", "Connected all rings", "Connected all trees",
            f"comm 0x5a rank {r} nranks 2 cudaDev {r} busId {'18000' if r == 0 else '3b000'} - Init COMPLETE"))
    data = capture_json(tmp_path, text)
    assert [f for f in data["findings"] if f["severity"] != "info"] == []  # type: ignore[union-attr,index]
    assert data["exit_code"] == 0 if "exit_code" in data else True


def test_a_watchdog_timeout_below_a_warn_points_at_the_warn(tmp_path: Path) -> None:
    data = capture_json(tmp_path, "gn07:4100:4211 [0] transport/net_ib.cc:1100 NCCL WARN NET/IB : Got completion from "
                                  "peer 10.9.0.12<33125> with status=12 opcode=0 len=0 vendor err 129 (Recv)\n"
                                  "[E ProcessGroupNCCL.cpp:475] [Rank 4] Watchdog caught collective operation timeout: "
                                  "WorkNCCL(SeqNum=90, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600100 milliseconds "
                                  "before timing out.\n")
    watchdog = [f for f in data["findings"] if f["evidence"].get("kind") == "nccl_timeout"]  # type: ignore[union-attr,index]
    assert len(watchdog) == 1 and str(watchdog[0]["evidence"]["first_warn"]).startswith("line 1: ")  # type: ignore[index]


def test_rccl_hip_ipc_failure_is_the_same_family(tmp_path: Path) -> None:
    f = _one(tmp_path, "mi-n3:880:900 [2] transport/p2p.cc:310 NCCL WARN hipIpcOpenMemHandle failed : invalid argument\n"
                       "mi-n3:880:900 [2] NCCL INFO transport/p2p.cc:330 -> 1\n")
    _is(f, "nccl_p2p_ipc")
