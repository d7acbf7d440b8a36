"""Batch T's NCCL and bus-count rows (issue 46), fixed for their class and tested on lines written here in the
tools' own forms: NET/IB's completion error cut mid-word behind a terminal UI's border is still the error; the
first collective of a job timing out points at the path between the GPUs (P2P); NCCL's own topology dump lists
the ranks' modules and is said with the transport; lspci listing a GPU the driver's listing skips is a module the
driver did not bring up, and a listing merely cut short is none."""

from __future__ import annotations

from pathlib import Path

from gpuvet.captures import nccl_log
from gpuvet.captures.text import Line
from tests.support.helpers import capture_findings, capture_json


def _lines(text: str) -> list[Line]:
    return [Line(i, t) for i, t in enumerate(text.splitlines(), 1)]


def test_an_ib_completion_warn_cut_mid_word_after_init_is_a_runtime_failure() -> None:
    log = nccl_log.parse(_lines(
        "\u2502 gpu-node-4:210:230 [0] NCCL INFO comm 0x55d0 rank 5 nranks 16 cudaDev 0 busId 1b000 - Init COMPLETE\n"
        "\u2502 gpu-node-4:210:233 [0] transport/net_ib.cc:1034 NCCL WARN NET/IB : Got compl\n"))
    assert [(f.kind, f.at.host, f.at.source) for f in log.failures] == [
        ("runtime", "gpu-node-4", "transport/net_ib.cc:1034")]
    benign = nccl_log.parse(_lines("gpu-node-4:210:233 [0] transport/net_ib.cc:93 NCCL WARN NET/IB : Got async event "
                                   ": client reregistration\n"))
    assert benign.failures == []  # the subnet manager's re-sweep: NET/IB's async events are not all errors
    quiet = nccl_log.parse(_lines("gpu-node-4:210:233 [0] NCCL INFO NET/IB : Using [0]mlx5_2:1/IB ; OOB ib0:10.1.0.4<0>\n"))
    assert quiet.failures == []


_WATCHDOG = ("[E ProcessGroupNCCL.cpp:475] [Rank {r}] Watchdog caught collective operation timeout: "
             "WorkNCCL(SeqNum={n}, OpType=BROADCAST, Timeout(ms)=600000) ran for 600512 milliseconds before timing out.\n")


def test_the_first_collective_timing_out_points_at_p2p_a_later_one_at_a_rank(tmp_path: Path) -> None:
    first = capture_json(tmp_path, _WATCHDOG.format(r=0, n=1) + _WATCHDOG.format(r=1, n=1))["findings"]
    assert [(f["cause"], f["severity"]) for f in first] == [("collective_runtime_error", "warn")]  # type: ignore[index]
    assert "NCCL_P2P_DISABLE=1" in first[0]["fix"] and "p2pBandwidthLatencyTest" in first[0]["fix"]  # type: ignore[index]
    later = capture_json(tmp_path, _WATCHDOG.format(r=0, n=512))["findings"]
    assert "NCCL_P2P_DISABLE" not in later[0]["fix"]  # type: ignore[index]


_TOPO = ("hostq:900:950 [1] NCCL INFO Using network Socket\n"
         "hostq:900:950 [1] NCCL INFO === System : maxBw 24.0 totalBw 24.0 ===\n"
         "hostq:900:950 [1] NCCL INFO CPU/1 (1/1/2)\n"
         "hostq:900:950 [1] NCCL INFO + PCI[24.0] - PCI/41000 (1000c03010001000)\n"
         "hostq:900:950 [1] NCCL INFO               + PCI[24.0] - GPU/43000 (0)\n"
         "hostq:900:950 [1] NCCL INFO               + PCI[24.0] - GPU/44000 (1)\n")


def test_nccls_topology_dump_lists_the_ranks_modules_and_says_their_paths(tmp_path: Path) -> None:
    log = nccl_log.parse(_lines(_TOPO))
    assert nccl_log.listing(log) == [("hostq", "0000:43:00.0"), ("hostq", "0000:44:00.0")]
    said = log.topology["hostq"].said()
    assert "2 GPU(s) (43000, 44000) joined by PCIe only" in said and "PCIe Gen4 x16" in said
    assert "41000 (1000:c030)" in said and "no NVLink" in said
    data = capture_json(tmp_path, _TOPO + "hostq:900:950 [1] NCCL INFO Failed to open libibverbs.so[.1]\n")
    said = " ".join(s["summary"] for s in data["steps"] if s["check"] == "nccl_log")  # type: ignore[attr-defined]
    assert "network transport: Socket" in said and "maxBw 24 GB/s" in said


def _listing(buses: list[str], rows: list[str]) -> str:
    head = "".join(f"{b} 3D controller: NVIDIA Corporation Device 20b5 (rev a1)\n" for b in buses)
    body = "".join(f"|   {i}  NVIDIA A100 80GB PCIe          On  |   00000000:{b} Off |                    0 |\n"
                   "| N/A   33C    P0             44W /  300W |       4MiB /  81920MiB |      0%      Default |\n"
                   "|                                         |                        |             Disabled |\n"
                   "+-----------------------------------------+------------------------+----------------------+\n"
                   for i, b in enumerate(rows))
    return (head + "+-----------------------------------------------------------------------------------------+\n"
            "| NVIDIA-SMI 560.35.03              Driver Version: 560.35.03      CUDA Version: 12.6     |\n"
            "|-----------------------------------------+------------------------+----------------------+\n"
            "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |\n"
            "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |\n"
            "|                                         |                        |               MIG M. |\n"
            "|=========================================+========================+======================|\n" + body)


def test_a_gpu_lspci_lists_that_the_driver_skips_is_missing_a_listing_cut_short_is_not(tmp_path: Path) -> None:
    found = capture_findings(tmp_path, _listing(["21:00.0", "61:00.0", "a1:00.0"], ["21:00.0", "A1:00.0"]))
    assert found == {("module_missing", "0000:61:00.0"): "critical"}
    cut = capture_findings(tmp_path, _listing(["21:00.0", "61:00.0", "a1:00.0"], ["21:00.0", "61:00.0"]))
    assert not any(cause == "module_missing" for cause, _ in cut)  # the tail a paste cut: not known to be gone
