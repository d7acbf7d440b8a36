"""Batch K's network misses (issue 46), each fixed for its class of input and tested on lines written here in the
tool's own form: a raw-verbs program's completion error (the CQE's ibv_wc_status, as uccl or a transfer engine
prints it) read as UCX's completion errors are; an NCCL line a poster quotes under 'Expected:' is their wish,
never the run's transport."""

from __future__ import annotations

from pathlib import Path

from gpuvet.captures import nccl_log, ucx
from gpuvet.captures.text import Line
from tests.support.helpers import capture_json


def _lines(text: str) -> list[Line]:
    return [Line(i, t) for i, t in enumerate(text.splitlines(), 1)]


def test_a_verbs_completion_status_is_a_completion_error_on_the_nic_it_names(tmp_path: Path) -> None:
    log = "".join(f"CQE ERROR wr_id={w} status=12(transport retry counter exceeded) opcode=0 byte_len=0 "
                  f"vendor_err=0x81 qp_num=0x1a{w}\n" for w in (7, 8, 9))
    data = capture_json(tmp_path, "Running the EP test on two nodes\n```\n" + log + "```\n")
    found = [(f["cause"], f["severity"], f["evidence"]["nic"], f["evidence"]["times"])  # type: ignore[index]
             for f in data["findings"]]  # type: ignore[attr-defined]
    assert found == [("rdma_completion_error", "warn", "a NIC the log does not name", 3)]
    named = ucx.parse(_lines("[rank3] poll_cq: WC error: status 5 (Work Request Flushed Error) dev=bnxt_re0 port=1\n"
                             "completion failed on mlx5_2:1, status: 10\n"))
    assert [(e.device, e.port, e.what) for e in named.errors] == [
        ("bnxt_re0", 1, "Work Request Flushed Error (status 5)"), ("mlx5_2", 1, "Remote access error (status 10)")]
    enum = ucx.parse(_lines("poll_cq: bad wc status IBV_WC_RNR_RETRY_EXC_ERR on hca irdma_1 port 1\n"
                            "wc status IBV_WC_SUCCESS\n"))  # the enum's name; success is no error
    assert [(e.device, e.port, e.what) for e in enum.errors] == [("irdma_1", 1, "RNR retry counter exceeded (status 13)")]


def test_a_status_number_outside_verbs_or_on_a_healthy_line_is_no_completion_error() -> None:
    quiet = ucx.parse(_lines("CQ poll done, status=0 (success) qp_num=0x12\n"
                             "completion status: 12 (timeout waiting for reply)\n"  # another library's words
                             "job completion status 3\n"))  # a bare number on a line that says no failure
    assert not quiet.errors and not quiet.claimed
    nccl = ucx.parse(_lines("NET/IB : Got completion from peer 10.0.0.2<4410> with status=12 opcode=0 len=0\n"))
    assert not nccl.errors  # NCCL's own line: its reader's


def test_an_nccl_line_under_the_posters_expected_label_is_not_the_runs_transport() -> None:
    text = ("The job is slow between nodes. NCCL logs show:\n"
            "node1:2231:2231 [0] NCCL INFO NET/Socket : Using [0]eth2:10.1.0.5<0>\n"
            "**Expected behaviour:**\n"
            "node1:2231:2231 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB eth2:10.1.0.5<0>\n"
            "### Actual\n"
            "node2:1187:1187 [0] NCCL INFO NET/Socket : Using [0]eth2:10.1.0.6<0>\n")
    log = nccl_log.parse(_lines(text))
    assert sorted((c.host, c.transport) for c in log.choices) == [("node1", "Socket"), ("node2", "Socket")]
    assert 4 in log.claimed  # read, and set aside as the poster's wish
    heading = nccl_log.parse(_lines("### Expected behavior\nExpected:\nNCCL INFO NET/IB : Using [0]mlx5_bond:1/RoCE\n"))
    assert heading.choices == []


def test_an_ibdev2netdev_netdev_down_beside_one_of_its_kind_up_is_a_port_down(tmp_path: Path) -> None:
    from gpuvet.captures.nic_tools import parse as nic_parse

    listing = ("mlx5_0 port 1 ==> ibs1f0 (Up)\nmlx5_1 port 1 ==> ibs2f0 (Down)\n"
               "mlx5_2 port 1 ==> enp65s0f1np1 (Down)\nmlx5_3 port 1 ==> enp65s0f0np0 (Up)\n")
    states = {n.device: n.ports[0].state for n in nic_parse(_lines(listing))[0].nics}
    assert states == {"mlx5_0": "unknown", "mlx5_1": "DOWN", "mlx5_2": "unknown", "mlx5_3": "unknown"}  # Eth: unused?
    found = capture_json(tmp_path, "$ ibdev2netdev\n" + listing)["findings"]
    assert [(f["cause"], f["severity"], f["module"]) for f in found] == [  # type: ignore[attr-defined]
        ("nic_port_down_undeclared", "warn", "mlx5_1 port 1")]
    lone = "[root@pod /]# ibdev2netdev\nmlx5_3 port 1 ==> net1 (Down)\n"  # a netdev alone Down: may be IPoIB left off
    assert capture_json(tmp_path, lone)["findings"] == []


def _one_size_run(hosts: tuple[str, str], tail: str) -> str:
    head = ("# nThread 1 nGpus 1 minBytes 8589934592 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20\n"
            "#\n# Using devices\n" + "".join(f"#  Rank  {i} Group  0 Pid  {4100 + i} on {h:>8} device  0 "
                                               f"[0000:1b:00] NVIDIA H100 80GB HBM3\n" for i, h in enumerate(hosts)))
    table = ("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   "
             "busbw #wrong\n#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            "
             "(us)  (GB/s)  (GB/s)\n"
             "  8589934592    2147483648     float     sum      -1   190210   45.16   45.16      0   189870   45.24   "
             "45.24      0\n")
    return head + table + tail


def _step(data: dict[str, object], check: str) -> dict[str, str]:
    return next(s for s in data["steps"] if s["check"] == check)  # type: ignore[attr-defined,no-any-return]


def test_a_one_size_run_between_hosts_says_what_would_price_it(tmp_path: Path) -> None:
    data = capture_json(tmp_path, _one_size_run(("nodeA", "nodeB"), "# Out of bounds values : 0 OK\n"))
    assert data["findings"] == []
    step = _step(data, "collective_results")
    assert step["status"] == "inconclusive" and "2 hosts in one run" in step["summary"]
    assert "ibstat" in step["summary"] and "NET/IB" in step["summary"]  # what would let it judge: the NIC's rate
    assert _step(data, "benchmark_failures")["status"] == "clear"  # 'Out of bounds … OK': every size ran
    assert any("only the average is missing" in n for n in data["notes"])  # type: ignore[attr-defined]
    cut = capture_json(tmp_path, _one_size_run(("nodeA", "nodeB"), ""))  # the paste stops at the row: maybe cut
    assert _step(cut, "benchmark_failures")["status"] == "inconclusive"
    failed = capture_json(tmp_path, _one_size_run(("nodeA", "nodeB"), "# Out of bounds values : 4 FAILED\n"))
    assert _step(failed, "benchmark_failures")["status"] != "clear"
