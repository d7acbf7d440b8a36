# ruff: noqa: E501  (the journal lines are as the tools print them)
"""The fabric manager's journal and perftest's output as doctor reads them (issue 47), on captures
written in the tools' own formats."""

from __future__ import annotations

import json

import pytest

from gpuvet.cli.app import main

NOTHING_TO_DO = """Mar 02 09:12:01 gpu-ws systemd[1]: Starting NVIDIA fabric manager service...
Mar 02 09:12:01 gpu-ws nv-fabricmanager[2211]: request to query NVSwitch device information from NVSwitch driver failed with error:WARNING Nothing to do [NV_WARN_NOTHING_TO_DO]
Mar 02 09:12:01 gpu-ws systemd[1]: nvidia-fabricmanager.service: Control process exited, code=exited, status=1/FAILURE
Mar 02 09:12:01 gpu-ws systemd[1]: Failed to start NVIDIA fabric manager service.
"""
STARTED_THEN_FAILED = """Apr 11 10:00:03 hgx07 nv-fabricmanager[3101]: Connected to 1 node.
Apr 11 10:00:05 hgx07 nv-fabricmanager[3101]: Successfully configured all the available NVSwitches to route GPU NVLink traffic.
Apr 11 10:00:05 hgx07 systemd[1]: Started NVIDIA fabric manager service.
Apr 11 12:40:10 hgx07 nv-fabricmanager[9120]: [Apr 11 2026 12:40:10] [ERROR] [tid 9120] fabric manager version 550.54 does not match the driver version 550.90
Apr 11 12:40:10 hgx07 systemd[1]: nvidia-fabricmanager.service: Control process exited, code=exited, status=1/FAILURE
"""
RUNNING = """● nvidia-fabricmanager.service - NVIDIA fabric manager service
     Loaded: loaded (/lib/systemd/system/nvidia-fabricmanager.service; enabled; vendor preset: enabled)
     Active: active (running) since Mon 2026-04-13 08:00:01 UTC; 2h ago
   Main PID: 2871 (nv-fabricmanage)
"""
WRITE_BW = """---------------------------------------------------------------------------------------
                    RDMA_Write BW Test
 Dual-port       : OFF		Device         : mlx5_0
 Number of qps   : 1		Transport type : IB
 Connection type : RC		Using SRQ      : OFF
 TX depth        : 128
 Mtu             : 4096[B]
 Link type       : IB
 Max inline data : 0[B]
 rdma_cm QPs	 : OFF
 Data ex. method : Ethernet
---------------------------------------------------------------------------------------
 local address: LID 0x0c QPN 0x0123 PSN 0x4c3b1a RKey 0x1fff00 VAddr 0x007f7e2e3f2000
 remote address: LID 0x0d QPN 0x0124 PSN 0x7e1a32 RKey 0x1fff00 VAddr 0x007f6c1e0b0000
---------------------------------------------------------------------------------------
 #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]
 65536      5000             {peak}            {avg}		   0.188505
---------------------------------------------------------------------------------------
"""
IBSTAT_400 = """CA 'mlx5_0'
	CA type: MT4129
	Number of ports: 1
	Port 1:
		State: Active
		Physical state: LinkUp
		Rate: 400
		Link layer: InfiniBand
"""


def _doctor(capsys, tmp_path, *texts: str):
    paths = []
    for i, text in enumerate(texts):
        path = tmp_path / f"capture{i}.txt"
        path.write_text(text)
        paths += ["--from", str(path)]
    code = main(["doctor", "interconnect-slow", "--all", *paths, "--json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    data = json.loads(out)
    return code, data, {s["check"]: s for s in data["steps"]}


def test_nothing_to_do_is_no_nvswitch_here_an_info_not_a_failure(capsys, tmp_path):
    code, data, steps = _doctor(capsys, tmp_path, NOTHING_TO_DO)
    assert code == 0 and [(f["cause"], f["severity"]) for f in data["findings"]] == \
        [("fabric_manager_not_needed", "info")]
    assert steps["fabric_manager"]["status"] == "confirmed"


def test_a_fabric_manager_that_failed_after_a_good_start_is_named_with_its_error(capsys, tmp_path):
    code, data, _ = _doctor(capsys, tmp_path, STARTED_THEN_FAILED)
    [found] = data["findings"]
    assert code == 1 and found["cause"] == "fabric_manager_failed" and found["severity"] == "critical"  # on an NVSwitch board no CUDA work runs without it
    assert "does not match the driver version" in found["evidence"]["errors"][0]


def test_a_running_fabric_manager_is_clear_and_cited(capsys, tmp_path):
    code, data, steps = _doctor(capsys, tmp_path, RUNNING)
    assert code == 0 and data["findings"] == []
    assert steps["fabric_manager"]["status"] == "clear" and steps["fabric_manager"]["evidence"][0]["value"] \
        .startswith("started")


def test_perftest_is_never_read_as_nvidia_smi_modules(capsys, tmp_path):
    path = tmp_path / "bw.txt"
    path.write_text(WRITE_BW.format(peak="390.12", avg="389.70"))
    assert main(["inventory", "--from", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["modules"] == [] and not [n for n in data["notes"] if "skipped" in n], data["notes"]


@pytest.mark.parametrize(("avg", "cause"), [("389.70", None), ("196.40", "rdma_bandwidth_low")])
def test_perftest_is_judged_against_the_ports_rate_given_beside_it(capsys, tmp_path, avg, cause):
    code, data, steps = _doctor(capsys, tmp_path, WRITE_BW.format(peak=avg, avg=avg), IBSTAT_400)
    causes = [f["cause"] for f in data["findings"]]
    if cause is None:
        assert code == 0 and causes == [] and steps["rdma_bandwidth"]["status"] == "clear"
    else:
        assert code == 1 and causes == [cause] and "49% of the port's 400 Gb/s" in data["findings"][0]["evidence"][
            "reading"]


def test_perftest_without_the_ports_rate_or_with_small_messages_cannot_tell(capsys, tmp_path):
    _, data, steps = _doctor(capsys, tmp_path, WRITE_BW.format(peak="196.40", avg="196.40"))
    assert steps["rdma_bandwidth"]["status"] == "inconclusive" and data["findings"] == []
    small = WRITE_BW.format(peak="0.48", avg="0.48").replace(" 65536 ", " 8     ")
    _, data, steps = _doctor(capsys, tmp_path, small, IBSTAT_400)
    assert steps["rdma_bandwidth"]["status"] == "inconclusive" and data["findings"] == []


CURL_REFUSED = """$ curl -fsSL http://10.0.0.5:8080/metrics
curl: (7) Failed to connect to 10.0.0.5 port 8080 after 0 ms: Couldn't connect to server
$ nvidia-smi -L
GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-11111111-2222-3333-4444-555555555555)
"""
SERVER_DOWN = """---------------------------------------------------------------------------------------
                    RDMA_Write BW Test
 Dual-port       : OFF		Device         : mlx5_1
 Link type       : IB
---------------------------------------------------------------------------------------
Couldn't connect to 10.1.0.7:18515
Unable to open file descriptor for socket connection Unable to init the socket connection
"""


@pytest.mark.parametrize("line", ["Couldn't connect to server", "Couldn't connect to AAAA", "Failed to connect"])
def test_another_tools_connect_error_without_perftests_header_is_no_rdma_test(capsys, tmp_path, line):
    text = CURL_REFUSED.replace("Couldn't connect to server", line)
    _, data, steps = _doctor(capsys, tmp_path, text)
    assert "rdma_test_failed" not in [f["cause"] for f in data["findings"]]
    assert steps["rdma_bandwidth"]["status"] == "inconclusive"


def test_a_failed_run_never_hides_another_runs_slow_bandwidth(capsys, tmp_path):
    slow = WRITE_BW.format(peak="196.40", avg="196.40")
    code, data, steps = _doctor(capsys, tmp_path, SERVER_DOWN + slow, IBSTAT_400)
    causes = sorted(f["cause"] for f in data["findings"])
    assert code == 1 and causes == ["rdma_bandwidth_low", "rdma_test_failed"], causes
    assert steps["rdma_bandwidth"]["status"] == "confirmed"
