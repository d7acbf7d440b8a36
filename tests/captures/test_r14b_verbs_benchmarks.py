"""Issue 46, R14B: RDMA/verbs lines and benchmark logs beyond NCCL, read as their classes. Every capture here is
written from the tool's own source or documentation: rdma-core providers/mlx5/cq.c (libmlx5's 'got completion with
error' and dump_cqe), Ray's worker prefix, linux-rdma/perftest (perftest_communication.c, perftest_parameters.c,
perftest_resources.h, write_bw.c's banner), the Neuron NCCOM-TEST user guide, nvidia-smi topo -m, CANN's HCCL plog."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpuvet.cli.app import main
from tests.support.helpers import doctor_triples


def _json(tmp_path: Path, text: str, cmd: str, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    path = tmp_path / "capture.txt"
    path.write_text(text + "\n", encoding="utf-8")
    main([cmd, "--from", str(path), "--json"])
    got: dict[str, Any] = json.loads(capsys.readouterr().out)
    return got


def _findings(tmp_path: Path, text: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[dict[str, object]]]:
    path = tmp_path / "capture.txt"
    path.write_text(text + "\n", encoding="utf-8")
    code = main(["doctor", "--from", str(path), "--json"])
    out = capsys.readouterr().out
    return code, (json.loads(out)["findings"] if out.strip() else [])


# --- libmlx5's completion error (rdma-core providers/mlx5/cq.c), its rows cut or whole -------------------------
ROWS = ("00000000 00000000 00000000 00000000\n00000000 00000000 00000000 00000000\n"
        "00000003 00000000 00000000 00000000\n00000000 00008813 10000166 000047e2")


@pytest.mark.parametrize(
    ("text", "host"),
    [
        ("mlx5: trn-node-3: got completion with error:", "trn-node-3"),  # the rows cut: status not in the capture
        (f"mlx5: trn-node-3: got completion with error:\n{ROWS}", "trn-node-3"),  # whole: remote access (0x13)
        ("mlx5: host_unknown: got completion with error:\n00000000 00000000 00000000 00000000", None),  # gethostname()
        ("(RayWorkerWrapper pid=4411, ip=10.20.0.7) loading weights\n"
         "(RayWorkerWrapper pid=4411, ip=10.20.0.7) mlx5: host_unknown: got completion with error:\n"
         "(RayWorkerWrapper pid=5123, ip=10.20.0.9) broadcast done", "10.20.0.7"),  # Ray's ip= names the node
        ("(pid=77) step 12\n(Trainer pid=78, ip=10.1.1.4) mlx5: host_unknown: got completion with error:\n"
         "(Trainer pid=78, ip=10.1.1.4) Traceback (most recent call last):", "10.1.1.4"),  # a head-node line beside it
    ],
)
def test_libmlx5_completion_error_is_a_warn_on_its_host(text: str, host: str | None, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    code, found = _findings(tmp_path, text, capsys)
    assert code == 1
    got = [f for f in found if f["cause"] == "rdma_completion_error"]
    assert got and got[0]["severity"] == "warn", found
    assert got[0].get("host") == host


def test_libmlx5_rows_cut_says_status_not_in_the_capture(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, found = _findings(tmp_path, "mlx5: gpu07: got completion with error:\n00000000 00000000 00000000 00000000",
                            capsys)
    evidence = json.dumps(found)
    assert code == 1 and "flushed request and a transport retry exceeded" in evidence


def test_libmlx5_rows_set_apart_by_blank_lines_are_decoded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = "\n\n".join(["00000000 00000000 00000000 00000000"] * 3 + ["00000000 00008716 0a001f8e 000027d2"])
    code, found = _findings(tmp_path, f"mlx5: n12-3: got completion with error:\n\n{rows}\n", capsys)
    evidence = json.dumps(found)  # syndrome 0x16 in a requester's error CQE: RNR retry exceeded: ib_status 13
    assert code == 1 and "status 13" in evidence and "syndrome 0x16 vendor 0x87" in evidence
    assert "the peer did not post its receive in time" in evidence and "path to the peer" not in evidence


def test_quoted_words_in_prose_are_no_completion(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = ('I looked at the hex dump following "got completion with error" in my log and cannot decode it.\n'
            "Any idea what the vendor syndrome means?")
    code, found = _findings(tmp_path, text, capsys)
    assert not [f for f in found if f["cause"] == "rdma_completion_error"]
    assert code == 2  # nothing a tool printed: refused, never a finding invented


# --- perftest's own failure lines (linux-rdma/perftest) ----------------------------------------------------------
HEADER = """---------------------------------------------------------------------------------------
                    RDMA_Write BW Test
 Dual-port       : OFF          Device         : mlx5_0
 Number of qps   : 1            Transport type : IB
 Connection type : RC           Using SRQ      : OFF
 PCIe relax order: ON
 TX depth        : 128
 CQ Moderation   : 100
 Mtu             : 1024[B]
 Link type       : Ethernet
 GID index       : 3
 Max inline data : 0[B]
 rdma_cm QPs     : OFF
 Data ex. method : Ethernet
---------------------------------------------------------------------------------------"""
BANNER = """
************************************
* Waiting for client to connect... *
************************************"""


@pytest.mark.parametrize(
    "failure",
    [
        " size mismatch: local=65536, remote=8388608\n Failed to exchange data between server and clients",
        " connection_type mismatch: local=RC, remote=UD\n Failed to exchange data between server and clients",
        " Failed to exchange negotiation parameters between server and client",
        "ethernet_read_keys: Couldn't read remote address",
        " Couldn't post send my QP number 12",
        " Completion with wc_flags mismatch at client",
        " Completion with error at client\n Failed status-transport retry counter exceeded (12): wr_id 0 syndrom 0x81",
        "Couldn't connect to 192.168.10.2:18515",
        " Unable to init the socket connection",
        " Failed to modify QP 0x1a2 to RTR",
    ],
)
@pytest.mark.parametrize("headed", [True, False])
def test_perftest_failures_are_findings(failure: str, headed: bool, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    code, found = doctor_triples((HEADER + "\n" if headed else "") + failure, tmp_path, capsys)
    assert code == 1 and [f for f in found if f[0] == "rdma_test_failed" and f[1] == "warn"], found


@pytest.mark.parametrize("failure", ["Failed to bind socket", "Couldn't listen to port 18515",
                                     " Failed to query device attributes", "Couldn't send local address"])
def test_perftest_generic_words_count_under_its_header_only(failure: str, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    code, found = doctor_triples(HEADER + "\n" + failure, tmp_path, capsys)
    assert [f for f in found if f[0] == "rdma_test_failed"], found
    code, found = doctor_triples(failure, tmp_path, capsys)
    assert not [f for f in found if f[0] == "rdma_test_failed"]  # any program says these: no perftest finding


def test_perftest_server_waiting_is_read_without_a_finding(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, found = doctor_triples(BANNER + "\n" + HEADER, tmp_path, capsys)
    assert code == 0 and not [f for f in found if f[1] in ("warn", "critical")]  # RoCE MTU 1024: an info note
    data = _json(tmp_path, BANNER + "\n" + HEADER, "doctor", capsys)
    assert not [n for n in data.get("notes", []) if "not output gpuvet reads" in str(n)]


def test_perftest_header_inventories_its_device(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = ("\n #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]\n"
            " 65536      5000             96.52              96.48                0.184020\n" + "-" * 87)
    path = tmp_path / "capture.txt"
    path.write_text(HEADER + rows + "\n", encoding="utf-8")
    main(["inventory", "--from", str(path)])
    out = " ".join(capsys.readouterr().out.split())  # the terminal's wrapping undone
    assert "mlx5_0" in out and "link type Ethernet" in out and "connection RC" in out and "MTU 1024 B" in out
    assert "96.48 Gb/s average at 65536 B" in out


# --- AWS Neuron's nccom-test (NCCOM-TEST user guide) -------------------------------------------------------------
NCCOM = """nccom-test -r 32 -b 8 -e 1G -f 4 allg
     size(B)    count(elems)     type    time(us)    algbw(GB/s)    busbw(GB/s)
           8               8    uint8          61           0.00           0.00
        2048            2048    uint8          63           0.03           0.03
     8388608         8388608    uint8         402          20.87          20.22
  1073741824      1073741824    uint8       11620          92.40          89.52
Avg bus bandwidth:      27.4425GB/s"""


def test_nccom_test_rows_are_read_not_judged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _json(tmp_path, NCCOM, "doctor", capsys)
    notes = " ".join(map(str, data.get("notes", [])))
    assert "no expected figure for this hardware" in notes and "4 row(s)" in notes and "89.52" in notes
    assert "header without result rows" not in notes
    assert not [f for f in data["findings"] if f["severity"] in ("warn", "critical")]


# --- nvidia-smi topo -m cut after its first row ------------------------------------------------------------------
TOPO = """\tGPU0\tGPU1\tGPU2\tGPU3\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID
GPU0\t X \tNV4\tNV4\tNV4\tPIX\t0-31\t0\t\tN/A"""


def test_topo_cut_rows_say_what_the_rows_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = _json(tmp_path, TOPO, "topo", capsys)
    notes = " ".join(data["notes"])
    assert "gpu1, gpu2, gpu3: rows cut; read from the rows there: gpu0-gpu1 NV4, gpu0-gpu2 NV4, gpu0-gpu3 NV4" in notes
    assert [m["id"] for m in data["modules"]] == ["gpu0"]  # a module with some of its links read is not drawn
    code, found = doctor_triples(TOPO, tmp_path, capsys)
    assert code == 0 and not [f for f in found if f[1] in ("warn", "critical")]


# --- HCCL plog: the place from its own fields ---------------------------------------------------------------------
_AT = "[ERROR] HCCL(3301,python):2025-01-02-10:00:01.000.00{n} [hccl_socket_manager.cc:{src}] [3310]"
PLOG = "\n".join([
    _AT.format(n=1, src=778) + "[Wait][LinkEstablish]wait socket establish timeout, role[0] rank[5] timeout[120]",
    _AT.format(n=2, src=592) + "   |  comm error, device[5]",
    _AT.format(n=3, src=553) + "   |  10.0.4.12(13)   |  16666  |   10.0.4.5(5)   |  0  |  server  | time out |",
])


@pytest.mark.parametrize("plog", [PLOG, PLOG.replace("device[5]", "device[5] num[1]")])  # the older print's num[]
def test_hccl_plog_failures_name_their_device(plog: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, found = doctor_triples(plog, tmp_path, capsys)
    assert ("collective_link_failed", "warn", "10.0.4.5 (rank 5) Ascend device 5") in found, found


def test_hccl_plog_without_fields_stays_unplaced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = ("[ERROR] HCCL(3301,python):2025-01-02-10:00:01.000.001 [hccl_socket_manager.cc:601] [3310]Wait links "
            "establish completed failed, local role is client. ret[9]")
    code, found = doctor_triples(line, tmp_path, capsys)
    assert found and all("Ascend" not in f[2] for f in found)
