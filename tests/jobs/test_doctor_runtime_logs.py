"""Issue 46: the runtimes' own logs (NCCL_DEBUG=INFO/WARN, RCCL's, HCCL's plog), nccl-tests runs that
are not one job, rocm-bandwidth-test's validation and rccl-tests under srun --label. Each capture is
written here in the tool's own format; the expected diagnosis follows from the design."""

from __future__ import annotations

from functools import partial
from typing import Any

from gpuvet.captures import nccl_log
from gpuvet.captures.read import parse_text
from gpuvet.captures.text import clean
from tests.support.helpers import doctor_capture, found_causes

_doctor = partial(doctor_capture, name="job.log")
_found = found_causes


def _step(data: dict[str, Any], check: str, book: str = "interconnect-slow") -> dict[str, Any]:
    (step,) = [s for s in data["steps"] if s["check"] == check and s["playbook"] == book]
    return step


def _ib(host: str, pid: int, dev: int) -> str:
    return (f"{host}:{pid}:{pid} [{dev}] NCCL INFO Bootstrap : Using ib0:10.20.0.{dev + 10}<0>\n"
            f"{host}:{pid}:{pid} [{dev}] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_2:1/IB ; OOB ib0:10.20.0.11<0>\n"
            f"{host}:{pid}:{pid} [{dev}] NCCL INFO Using network IB\n")


def _socket(host: str, pid: int, dev: int) -> str:
    return (f"{host}:{pid}:{pid} [{dev}] NCCL INFO NET/IB : No device found.\n"
            f"{host}:{pid}:{pid} [{dev}] NCCL INFO NET/Socket : Using [0]eth0:192.168.1.12<0>\n"
            f"{host}:{pid}:{pid} [{dev}] NCCL INFO Using network Socket\n")


# --- the transport NCCL chose ---------------------------------------------------------------------
def test_one_node_on_sockets_while_the_other_uses_infiniband_is_a_mismatch(capsys, tmp_path):
    log = "NCCL version 2.18.3+cuda12.2\n" + _ib("gpu-b01", 2201, 0) + _ib("gpu-b01", 2202, 1) + \
        _socket("gpu-b02", 3301, 0) + _socket("gpu-b02", 3302, 1)
    code, data = _doctor(capsys, tmp_path, log)
    assert code == 1 and _found(data) == {("nccl_transport_mismatch", "gpu-b02")}
    ev = data["findings"][0]["evidence"]
    assert ev["file"] == "job.log" and ev["line"] == 8  # NCCL's own 'No device found' on gpu-b02
    assert "gpu-b02: Socket (eth0:192.168.1.12<0>) by 2 process(es)" in ev["on_socket"][0]
    assert "gpu-b01: IB (mlx5_0:1/IB, mlx5_2:1/IB)" in ev["on_other"][0]
    assert any(n == "job.log: read as NCCL debug log" for n in data["notes"])


def test_every_node_on_sockets_is_a_fallback_at_a_fraction_of_the_nics_speed(capsys, tmp_path):
    log = _socket("gpu-b01", 2201, 0) + _socket("gpu-b02", 3301, 0) + \
        "gpu-b01:2201:2260 [0] NCCL INFO comm 0x5581e0 rank 0 nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0\n"
    code, data = _doctor(capsys, tmp_path, log)
    assert code == 1 and _found(data) == {("nccl_socket_fallback", "gpu-b01, gpu-b02")}
    assert data["findings"][0]["severity"] == "warn" and data["findings"][0]["evidence"]["nodes"] == 2


def test_infiniband_on_every_node_is_clear_and_cites_each_host(capsys, tmp_path):
    log = _ib("gpu-b01", 2201, 0) + _ib("gpu-b02", 3301, 0) + \
        "gpu-b01:2201:2201 [0] NCCL INFO NET/Socket : Using [0]eth0:192.168.1.11<0>\n"  # NCCL <= 2.4's bootstrap
    code, data = _doctor(capsys, tmp_path, log, "interconnect-slow")
    step = _step(data, "nccl_log")
    assert code == 0 and step["status"] == "clear" and "gpu-b01, gpu-b02" in step["summary"]
    assert {e["where"] for e in step["evidence"]} == {"gpu-b01", "gpu-b02"}


def test_a_2_4_log_whose_one_socket_line_comes_before_no_ib_device_is_a_fallback(capsys, tmp_path):
    """NCCL before 2.5 opens NET/Socket once: its 'NET/Socket : Using' line, printed for the bootstrap before
    'NET/IB : No device found.', is also the transport the process falls back to (issue 46 batch G)."""
    def proc(host: str, pid: int, ip: str) -> str:
        return (f"{host}:{pid}:{pid} [0] NCCL INFO NET/Socket : Using [0]ens5:{ip}<0>\n"
                f"{host}:{pid}:{pid} [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so).\n"
                f"{host}:{pid}:{pid} [0] NCCL INFO NET/IB : No device found.\n")
    log = "NCCL version 2.4.7+cuda10.0\n" + proc("node-x1", 700, "10.2.0.4") + proc("node-x2", 801, "10.2.0.9")
    code, data = _doctor(capsys, tmp_path, log)
    assert code == 1 and _found(data) == {("nccl_socket_fallback", "node-x1, node-x2")}
    assert data["findings"][0]["severity"] == "warn"
    alone = log + "node-x3:902:902 [0] NCCL INFO NET/IB : No device found.\n"  # its Socket line not in the excerpt
    code, data = _doctor(capsys, tmp_path, alone)
    assert code == 1 and _found(data) == {("nccl_socket_fallback", "node-x1, node-x2, node-x3")}
    newer = alone.replace("2.4.7", "2.18.3")  # from 2.5 on a lone 'No device found' chooses nothing
    assert not any(c.host == "node-x3" for c in nccl_log.parse(clean(newer).lines).choices)


def test_a_2_4_socket_line_with_infiniband_found_stays_the_bootstrap(capsys, tmp_path):
    log = "NCCL version 2.4.7+cuda10.0\n" + "".join(
        f"{h}:{p}:{p} [0] NCCL INFO NET/Socket : Using [0]ib0:10.3.0.{p % 100}<0>\n"
        f"{h}:{p}:{p} [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.3.0.{p % 100}<0>\n"
        for h, p in (("node-y1", 901), ("node-y2", 902)))
    code, data = _doctor(capsys, tmp_path, log)
    assert code == 0 and data["findings"] == []


def test_sockets_on_one_host_alone_say_nothing_about_a_job_across_nodes(capsys, tmp_path):
    code, data = _doctor(capsys, tmp_path, _socket("ws-01", 501, 0) + _socket("ws-01", 502, 1))
    assert code == 0 and data["findings"] == []
    assert _step(data, "nccl_log")["status"] == "inconclusive"


def test_a_2_4_log_of_one_node_whose_test_ranks_name_two_is_a_fallback(capsys, tmp_path):
    """NCCL 2.4 names its bootstrap 'Bootstrap : Using'; the NET/Socket line after 'NET/IB : No device found.'
    is the transport. nccl-tests' rank lines name the job's hosts though only one host's NCCL lines are shown."""
    head = ("# Using devices\n#   Rank  0 Pid   4101 on   node-a device  0 [0x00] Tesla V100-SXM2-16GB\n"
            "#   Rank  1 Pid   5202 on   node-b device  0 [0x00] Tesla V100-SXM2-16GB\n")
    log = head + ("node-a:4101:4101 [0] NCCL INFO Bootstrap : Using [0]eth0:10.1.0.5<0>\n"
                  "node-a:4101:4101 [0] NCCL INFO NET/IB : No device found.\n"
                  "node-a:4101:4101 [0] NCCL INFO NET/Socket : Using [0]eth0:10.1.0.5<0>\nNCCL version 2.4.8+cuda10.1\n")
    code, data = _doctor(capsys, tmp_path, log)
    assert code == 1 and _found(data) == {("nccl_socket_fallback", "node-a")}
    bootstrap = log.replace("NET/IB : No device found.", "NET/IB : Using [0]mlx5_0:1/IB ; OOB eth0:10.1.0.5<0>")
    code, data = _doctor(capsys, tmp_path, bootstrap)
    assert code == 0 and data["findings"] == []


def test_peer_access_refused_on_a_p2p_channel_names_the_pair_and_lists_its_modules(capsys, tmp_path):
    """NCCL's P2P transport set up between two modules whose peer access the CUDA runtime refuses (217): the
    pair its 'via P2P' channel joined (NCCL's busId hex) is named, and both modules are listed by bus id."""
    log = ("gpu-w3:7001:7050 [0] NCCL INFO Channel 00 : 0[41000] -> 1[c1000] via P2P/IPC\n"
           "gpu-w3:7001:7050 [0] NCCL INFO Channel 01 : 0[41000] -> 1[c1000] via P2P/IPC\n"
           "gpu-w3:7001:7050 [0] transport/p2p.cc:238 NCCL WARN failed to open CUDA IPC handle : 217 peer access "
           "is not supported between these two devices\n"
           "gpu-w3:7001:7050 [0] NCCL INFO transport.cc:68 -> 1\n")
    code, data = _doctor(capsys, tmp_path, log)
    assert code == 1 and ("p2p_unavailable", "0000:41:00.0 <-> 0000:C1:00.0") in _found(data)
    (path,) = tmp_path.glob("job.log")
    inventory = parse_text(path.read_text(), str(path))
    assert inventory.smi is not None and [m.bus_id for m in inventory.smi.modules] == ["0000:41:00.0", "0000:C1:00.0"]
    assert nccl_log.bus_of("11b000") == "0001:1B:00.0"  # a domain beyond 0 keeps its digits


# --- what stopped a communicator -------------------------------------------------------------------
def test_a_bootstrap_socket_failure_names_the_host_gpu_and_rank_with_its_line(capsys, tmp_path):
    log = (_ib("gpu-b01", 2201, 0) + _ib("gpu-b02", 3301, 2) +
           "gpu-b02:3301:3350 [2] NCCL INFO comm 0x7f1120 rank 10 nRanks 16 nNodes 2 localRanks 8 localRank 2\n"
           "gpu-b02:3301:3350 [2] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.20.0.11<43117> "
           "failed : Connection refused\n"
           "gpu-b02:3301:3350 [2] NCCL INFO misc/socket.cc:565 -> 6\n"
           "gpu-b02:3301:3350 [2] NCCL INFO bootstrap.cc:274 -> 6\n"
           "gpu-b02:3301:3350 [2] init.cc:1527 NCCL WARN commInitRankFunc: rank 10 init failed\n")
    code, data = _doctor(capsys, tmp_path, log, "compute-errors")
    assert code == 1 and _found(data) == {("collective_init_failed", "gpu-b02 GPU 2")}
    ev = data["findings"][0]["evidence"]
    assert ev["line"] == 8 and ev["at"] == "misc/socket.cc:484" and ev["lines"] == [8, 11] and ev["ranks"] == [10]
    assert "Connection refused" in ev["log"] and data["findings"][0]["severity"] == "critical"


def test_an_nvls_cuda_failure_behind_a_pod_prefix_names_the_pod_and_gpu(capsys, tmp_path):
    w0, w1 = "trainer-worker-0", "trainer-worker-1"
    log = (f"{w0}: {w0}:4280:5850 [5] NCCL INFO NVLS multicast support is not available on dev 5\n"
           f"{w0}: {w0}:4276:5851 [1] NCCL INFO NVLS multicast support is not available on dev 1\n"
           f"{w1}: {w1}:3911:5302 [4] transport/nvls.cc:245 NCCL WARN Cuda failure 'initialization error'\n"
           f"{w1}: {w1}:3911:5302 [4] NCCL INFO init.cc:1120 -> 1\n"
           f"{w1}: {w1}:3911:5302 [4] NCCL INFO group.cc:64 -> 1 [Async thread]\n")
    code, data = _doctor(capsys, tmp_path, log)
    assert code == 1 and _found(data) == {("nvls_setup_failed", f"{w1} GPU 4")}  # not available: info, no finding
    assert "NCCL_NVLS_ENABLE=0" in data["findings"][0]["fix"] and "FABRIC" in data["findings"][0]["fix"]
    assert data["findings"][0]["evidence"]["line"] == 3


def test_a_warn_whose_source_names_its_function_behind_a_timestamp_keeps_host_and_gpu(capsys, tmp_path):
    """Issue 46 batch G: a collector's '[date time] ' before the line, and the function NCCL names after
    file:line ('transport/nvls.cc:379 (nvlsAllocateMem) NCCL WARN'): the host:pid:tid [dev] prefix still
    places the failure."""
    log = ("[2026-03-02 08:11:40] train-pod-7q2xk:512:530 [3] transport/nvls.cc:379 (nvlsAllocateMem) NCCL WARN "
           "Failed to bind NVLink SHARP (NVLS) Multicast memory of size 2097152 : CUDA error 401 "
           "'the operation cannot be performed in the present state'.\n")
    code, data = _doctor(capsys, tmp_path, log)
    assert code == 1 and _found(data) == {("nvls_setup_failed", "train-pod-7q2xk GPU 3")}


def test_nvls_not_available_alone_is_said_and_found_nothing(capsys, tmp_path):
    log = _ib("dgx-07", 77, 0) + "dgx-07:77:77 [0] NCCL INFO NVLS multicast support is not available on dev 0\n"
    code, data = _doctor(capsys, tmp_path, log, "interconnect-slow")
    assert code == 0 and data["findings"] == []
    assert "NVLS multicast not available on dgx-07 GPU 0 (info" in _step(data, "nccl_log")["summary"]


def test_a_bare_nvls_warn_chain_without_host_prefixes(capsys, tmp_path):
    log = ("transport/nvls.cc:251 NCCL WARN Cuda failure 1 'invalid argument'\n"
           "NCCL INFO transport/nvls.cc:361 -> 1\n")
    code, data = _doctor(capsys, tmp_path, log)
    assert code == 1 and _found(data) == {("nvls_setup_failed", "host and GPU not in the log")}


def test_a_warn_that_falls_back_is_not_a_failure(capsys, tmp_path):
    log = _ib("gpu-b01", 1, 0) + \
        "gpu-b01:1:9 [0] graph/search.cc:890 NCCL WARN Could not find a path for pattern 4, falling back to simple order\n"
    code, data = _doctor(capsys, tmp_path, log)
    assert code == 0 and data["findings"] == []


def test_rccl_lines_read_like_nccls(capsys, tmp_path):
    log = ("mi300-01:900:900 [0] RCCL INFO NET/IB : No device found.\n"
           "mi300-01:900:900 [0] RCCL INFO NET/Socket : Using [0]ens5:10.1.0.4<0>\n"
           "mi300-02:901:901 [0] RCCL INFO NET/IB : Using [0]rdma0:1/RoCE ; OOB ens5:10.1.0.5<0>\n"
           "mi300-02:901:930 [0] misc/socket.cc:484 RCCL WARN socketStartConnect: Connect to 10.1.0.4<5113> failed : "
           "No route to host\n")
    code, data = _doctor(capsys, tmp_path, log)
    assert code == 1 and _found(data) == {("nccl_transport_mismatch", "mi300-01"),
                                          ("collective_init_failed", "mi300-02 GPU 0")}
    assert any(n == "job.log: read as RCCL debug log" for n in data["notes"])


def test_an_hccl_plog_error_at_init_is_a_communicator_that_did_not_come_up(capsys, tmp_path):
    log = ("[INFO] HCCL(21877,python3):2025-05-13-02:25:57.901.112 [op_base.cc:211][21877]HcclCommInitRootInfo start\n"
           "[ERROR] HCCL(21877,python3):2025-05-13-02:25:58.068.817 [op_base.cc:974][21901][Init][CommRootInfoConfig]"
           "errNo[0x0000000005000002]HcclCommInitRootInfo failed.\n")
    code, data = _doctor(capsys, tmp_path, log)
    assert code == 1 and {c for c, _ in _found(data)} == {"collective_init_failed"}
    assert data["findings"][0]["evidence"]["library"] == "HCCL" and data["findings"][0]["evidence"]["line"] == 2


def test_log_lines_are_never_read_as_nvidia_smi_fields():
    fc = parse_text(_ib("gpu-b01", 1, 0) + "gpu-b01:1:1 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to ib0\n",
                    "job.log")
    assert fc.kinds == ["NCCL debug log"] and fc.smi is None


# --- nccl-tests runs that are not one job -----------------------------------------------------------
_ROWS = ("#\n#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   "
         "busbw #wrong\n     1048576        262144     float     sum      -1    12.10    0.00    0.00      0    12.0"
         "    0.00    0.00      0\n# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0 \n#\n")


def test_processes_that_each_ran_alone_as_rank_0_are_an_nccl_tests_without_mpi(capsys, tmp_path):
    lines = ["mpirun -np 4 -N 2 --host node-a:2,node-b:2 ./build/all_reduce_perf -b 8 -e 1G -f 2 -g 1", "Using devices"]
    lines += [f"  Rank  0 Group  0 Pid {700 + i} on {'node-a' if i < 2 else 'node-b'} device  0 [0x1b] NVIDIA A100-SXM4-80GB"
              for i in range(4)]
    code, data = _doctor(capsys, tmp_path, "\n".join(lines) + "\n")
    assert code == 1 and _found(data) == {("nccl_tests_without_mpi", None)}
    ev = data["findings"][0]["evidence"]
    assert "4 processes on node-a, node-b each ran alone (rank 0 of 1)" in ev["error"] and ev["line"] == 3
    assert "MPI=1" in data["findings"][0]["fix"]


def test_one_header_and_summary_per_process_are_separate_runs(capsys, tmp_path):
    runs = [f"# nThread 1 nGpus 1 minBytes 1048576 maxBytes 1048576 step: 2(factor) warmup iters: 5 iters: 20 "
            f"agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n#  Rank  0 Group  0 Pid {800 + i} on node-a "
            f"device  {i} [0x1b] NVIDIA A100-SXM4-80GB\n" + _ROWS for i in range(2)]
    fc = parse_text("".join(runs), "two.txt")
    assert len(fc.nccl.results) == 2 and all(r.ranks == 1 for r in fc.nccl.results)
    assert any("2 runs in one file" in n for n in fc.notes)
    code, data = _doctor(capsys, tmp_path, "".join(runs))
    assert code == 1 and _found(data) == {("nccl_tests_without_mpi", None)}


# --- rocm-bandwidth-test -v, rccl-tests under srun --label ------------------------------------------
_PAD = " " * 10  # the tool indents and pads every cell to its column width
_RBT = "\n".join([
    "", f"{_PAD}RocmBandwidthTest Version: 2.6.0", "", f"{_PAD}Launch Command is: rocm-bandwidth-test -v -s 0,1,2 -d 0,1,2",
    "", "", f"{_PAD}Device: 0,  AMD EPYC 7763 64-Core Processor",
    f"{_PAD}Device: 1,  AMD Instinct MI250X,  GPU-7d4e2b8a1c3f5e60,  c1:0.0",
    f"{_PAD}Device: 2,  AMD Instinct MI250X,  GPU-3a9f0c1d2e4b6a78,  c6:0.0", "", "",
    f"{_PAD}Data Path Validation", "", f"{_PAD}D/D       0           1           2           ", "",
    f"{_PAD}0         N/A         {{a}}        PASS        ", "",
    f"{_PAD}1         {{b}}        N/A         PASS        ", "",
    f"{_PAD}2         PASS        PASS        N/A         ", "", ""])


def test_rocm_bandwidth_test_validation_fails_are_copies_that_corrupt_data(capsys, tmp_path):
    code, data = _doctor(capsys, tmp_path, _RBT.format(a="FAIL", b="FAIL"), "interconnect-slow")
    assert code == 1 and [f["cause"] for f in data["findings"]] == ["host_copy_validation_failed"]
    f = data["findings"][0]
    assert f["between"] == ["Device 0 (CPU: AMD EPYC 7763 64-Core Processor)", "Device 1 (AMD Instinct MI250X, c1:0.0)"]
    assert len(f["evidence"]["failed"]) == 2 and f["evidence"]["line"] == 16  # both directions, the first line


def test_rocm_bandwidth_test_validation_all_pass_is_clear(capsys, tmp_path):
    code, data = _doctor(capsys, tmp_path, _RBT.format(a="PASS", b="PASS"), "interconnect-slow", "--all")
    step = _step(data, "captured_links")
    assert code == 0 and step["status"] == "clear"
    assert any(e["field"] == "rocm-bandwidth-test -v copies PASS" and e["value"] == "6" for e in step["evidence"])


def test_rccl_tests_under_srun_label_read_like_nccl_tests(tmp_path):
    body = ["# nThread 1 nGpus 1 minBytes 1048576 maxBytes 4194304 step: 2(factor) warmup iters: 5 iters: 20 agg "
            "iters: 1 validation: 1 graph: 0", "#", "rccl-tests: Version develop:7bf4a85", "# Using devices"]
    body += [f"#  Rank {r:2d} Group  0 Pid {4100 + r:6d} on   mi300-0{1 + r // 8} device  {r % 8} [0000:{5 + r % 8:02x}:00] "
             "AMD Instinct MI300X" for r in range(16)]
    body += ["#", "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw"
             "   busbw #wrong"]
    body += [f"     {s:>7d}  {s // 4:>12d}     float     sum      -1    40.00   26.21   49.15      0    40.00   26.21"
             "   49.15      0" for s in (1048576, 2097152, 4194304)]
    body += ["# Out of bounds values : 0 OK", "# Avg bus bandwidth    : 49.15 ", "#"]
    plain = parse_text("\n".join(body) + "\n", "plain.txt")
    labelled = parse_text("\n".join(f"{i % 16:2d}: {ln}" for i, ln in enumerate(body)) + "\n", "label.txt")
    assert labelled.kinds == plain.kinds == ["nccl-tests"]
    assert [r.rows for r in labelled.nccl.results] == [r.rows for r in plain.nccl.results]
    assert labelled.nccl.results[0].ranks == 16 and labelled.nccl.results[0].nodes == ("mi300-01", "mi300-02")
    assert any("srun --label" in n for n in labelled.notes)
