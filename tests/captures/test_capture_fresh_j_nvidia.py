"""Batch J's misses on NVIDIA output (issue 46), each fixed for its class of input and tested on lines written
here in the tool's own form: the driver's word that it found no adapter, an NVSwitch SXid whose summary line
the excerpt lacks, NCCL lines behind a per-rank logger's prefix, a watchdog timeout after collectives ran."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import capture_findings, capture_json, run


def _causes(tmp_path: Path, text: str) -> dict[str, str]:
    return {cause: severity for (cause, _), severity in capture_findings(tmp_path, text).items()}


# --- the driver loaded and found no adapter -----------------------------------------------------------------
_NO_ADAPTER = ("Jan  9 07:02:11 lap-7 kernel: [    3.118201] nvidia: module license 'NVIDIA' taints kernel.\n"
               "Jan  9 07:02:11 lap-7 kernel: [    3.121904] NVRM: No NVIDIA graphics adapter found!\n"
               "Jan  9 07:02:13 lap-7 kernel: [    5.640021] NVRM: No NVIDIA graphics adapter found!\n")


def test_no_adapter_found_is_one_warn_on_the_node_not_a_failed_module(tmp_path: Path) -> None:
    assert capture_findings(tmp_path, _NO_ADAPTER) == {("driver_found_no_module", "node"): "warn"}
    assert capture_json(tmp_path, _NO_ADAPTER, "inventory")["modules"] == []


def test_no_adapter_after_a_failed_probe_is_its_echo(tmp_path: Path) -> None:
    text = ("[   31.118431] nvidia: probe of 0000:02:00.0 failed with error -1\n"
            "[   31.118462] NVRM: The NVIDIA probe routine failed for 1 device(s).\n"
            "[   31.118470] NVRM: No NVIDIA graphics adapter found!\n")
    assert _causes(tmp_path, text) == {"module_init_failed": "critical"}


# --- an NVSwitch SXid whose summary line (Fatal / Non-fatal) the excerpt lacks ---------------------------------
def test_an_sxid_detail_line_alone_takes_its_fatality_from_nvidias_lists(tmp_path: Path) -> None:
    fatal = ("kern  :err   : 2026-03-02T04:11:09,220114+00:00 nvidia-nvswitch5: SXid (PCI:0000:c7:00.0): 20034, "
             "Severity 1 Engine instance 12 Sub-engine instance 00\n")
    non_fatal = "[ 9012.003311] nvidia-nvswitch2: SXid (PCI:0000:05:00.0): 19084, Data {0x00000001, 0x00000000}\n"
    unlisted = "[ 9012.003311] nvidia-nvswitch2: SXid (PCI:0000:05:00.0): 31999, Data {0x00000001}\n"
    assert capture_findings(tmp_path, fatal) == {("nvswitch_sxid_fatal", "nvswitch5 0000:C7:00.0 SXid 20034"): "critical"}
    assert capture_findings(tmp_path, non_fatal) == {("nvswitch_sxid", "nvswitch2 0000:05:00.0 SXid 19084"): "warn"}
    assert capture_findings(tmp_path, unlisted) == {("nvswitch_sxid", "nvswitch2 0000:05:00.0 SXid 31999"): "warn"}


def test_an_sxid_summary_line_keeps_its_own_word_over_its_detail_lines(tmp_path: Path) -> None:
    text = ("[ 77.1] nvidia-nvswitch0: SXid (PCI:0000:89:00.0): 12028, Non-fatal, Link 8 egress non-posted PRIV "
            "error (First)\n"
            "[ 77.1] nvidia-nvswitch0: SXid (PCI:0000:89:00.0): 12028, Severity 0 Engine instance 8 Sub-engine "
            "instance 00\n"
            "[ 77.1] nvidia-nvswitch0: SXid (PCI:0000:89:00.0): 12028, Data {0x00000000, 0x00000010}\n")
    assert capture_findings(tmp_path, text) == {("nvswitch_sxid", "nvswitch0 0000:89:00.0 SXid 12028"): "warn"}


# --- NCCL lines behind a per-rank logger's prefix; a socket connect that never completed ----------------------
def test_nccl_lines_behind_a_per_rank_loggers_prefix_name_their_host_and_ranks(tmp_path: Path) -> None:
    text = ("job-81/rank_12.gpu-a17.77120.log:[0012/0064][2026-05-01 09:14:02,118] [misc/socket.cc:586] "
            "[gpu-a17:pid=77120] NCCL WARN socketPollConnect poll() returned 1, no POLLOUT events\n"
            "job-81/rank_13.gpu-a17.77121.log:[0013/0064][2026-05-01 09:14:02,120] [misc/socket.cc:586] "
            "[gpu-a17:pid=77121] NCCL WARN socketPollConnect poll() returned 1, no POLLOUT events\n")
    found = capture_json(tmp_path, text)["findings"]
    assert [(f["cause"], f["module"], f["evidence"]["ranks"]) for f in found] == [  # type: ignore[index]
        ("collective_init_failed", "gpu-a17", [12, 13])]


def test_nccl_lines_behind_torchruns_and_sruns_rank_labels_keep_their_host_and_gpu(tmp_path: Path) -> None:
    text = ("[rank5]:gpu-d1:4410:4502 [5] misc/socket.cc:586 NCCL WARN socketPollConnect poll() returned 1, no "
            "POLLOUT events\n"
            "3: gpu-d2:991:1030 [1] misc/socket.cc:586 NCCL WARN socketPollConnect poll() returned 1, no POLLOUT "
            "events\n")
    assert capture_findings(tmp_path, text) == {("collective_init_failed", "gpu-d1 GPU 5"): "critical",
                                         ("collective_init_failed", "gpu-d2 GPU 1"): "critical"}


def test_a_connect_without_pollout_in_nccls_own_prefix_is_a_bootstrap_failure(tmp_path: Path) -> None:
    text = "gpu-b02:5521:5600 [3] misc/socket.cc:586 NCCL WARN socketPollConnect poll() returned 1, no POLLOUT events\n"
    assert capture_findings(tmp_path, text) == {("collective_init_failed", "gpu-b02 GPU 3"): "critical"}


# --- a watchdog timeout after collectives ran: the WARNs before it are no set-up failure ---------------------
_PROXY = ("gpu-c4:911:1204 [2] proxy.cc:1458 NCCL WARN [Service thread] Accept failed Resource temporarily "
          "unavailable\n")


def test_proxy_warns_before_a_watchdog_timeout_past_the_first_collective_are_runtime_errors(tmp_path: Path) -> None:
    watchdog = ("[rank2]:[E0501 10:02:11.004118 ProcessGroupNCCL.cpp:632] [Rank 2] Watchdog caught collective "
                "operation timeout: WorkNCCL(SeqNum=412, OpType=BROADCAST, NumelIn=1, NumelOut=1, "
                "Timeout(ms)=600000) ran for 600012 milliseconds before timing out.\n")
    got = _causes(tmp_path, _PROXY + watchdog)
    assert got == {"collective_runtime_error": "warn"}, got


def test_a_watchdog_timeout_on_the_first_collective_leaves_the_set_up_failure(tmp_path: Path) -> None:
    watchdog = ("[rank2]:[E0501 10:02:11.004118 ProcessGroupNCCL.cpp:632] [Rank 2] Watchdog caught collective "
                "operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
                "Timeout(ms)=600000) ran for 600012 milliseconds before timing out.\n")
    assert _causes(tmp_path, _PROXY + watchdog)["collective_init_failed"] == "critical"


# --- a one-name --query-gpu under noheader: the command line names the one column ----------------------------
def test_a_one_name_query_reads_one_value_a_line_until_the_next_prompt(tmp_path: Path) -> None:
    text = ("gpu@n4:~$ nvidia-smi --query-gpu=name --format=csv,noheader\nNVIDIA L40S\nNVIDIA L40S\n"
            "gpu@n4:~$ echo done\ndone\n")
    modules = capture_json(tmp_path, text, "inventory")["modules"]
    assert [m["model"] for m in modules] == ["NVIDIA L40S", "NVIDIA L40S"]  # type: ignore[index,union-attr]


def test_a_one_name_query_the_tool_cannot_read_is_no_fault(tmp_path: Path) -> None:
    text = "[admin@r7 ~]# nvidia-smi --query-gpu=fan.speed --format=csv,noheader,nounits -i 1\n[Not Supported]\n"
    data = capture_json(tmp_path, text)
    assert data["findings"] == [] and any("Not Supported" in n for n in data["notes"])  # type: ignore[union-attr]
    assert len(capture_json(tmp_path, text, "inventory")["modules"]) == 1  # type: ignore[arg-type]


# --- a copy kernel's GPU-by-GPU matrices ('Measured bandwidth in GB/s of size …'), judged against peers --------
_KERNEL = ("memcpyKernel Read 64b stride 256 threads/SM:\n\nMeasured bandwidth in GB/s of size 256 MiB:\n"
           "            0      1      2      3\n--------------------------------------\n"
           "     0   0.00 151.20 150.90 151.05\n     1 151.10   0.00 150.80 {slow}\n"
           "     2 150.95 151.00   0.00 151.15\n     3 151.02 150.70 151.08   0.00\n")


def test_a_copy_kernels_uniform_matrix_is_healthy_and_its_diagonal_no_pair(tmp_path: Path) -> None:
    assert capture_json(tmp_path, _KERNEL.format(slow="150.99"))["findings"] == []


def test_a_copy_kernels_pair_far_below_its_peers_is_named(tmp_path: Path) -> None:
    found = capture_json(tmp_path, _KERNEL.format(slow=" 38.40"))["findings"]
    assert [(f["cause"], f["severity"], f["between"]) for f in found] == [  # type: ignore[index]
        ("link_degraded", "warn", ["GPU 1", "GPU 3"])]


# --- nv-hostengine's log: its NvSwitch module cannot read the switches -------------------------------------------
def test_dcgms_nvswitch_module_errors_are_one_warning_counted(tmp_path: Path) -> None:
    line = ("2026-02-11 03:{m}:07.511 ERROR [1880:1921] [[NvSwitch]] ReadNvSwitchStatusAllSwitches() returned "
            "Host engine is not ready [/builds/dcgm-rel_dcgm_3_3/modules/nvswitch/DcgmModuleNvSwitch.cpp:412] "
            "[DcgmNs::DcgmModuleNvSwitch::RunOnce]\n")
    data = capture_json(tmp_path, "".join(line.format(m=m) for m in ("10", "11", "12")))
    found = data["findings"]
    assert [(f["cause"], f["severity"], f["module"]) for f in found] == [  # type: ignore[index]
        ("dcgm_nvswitch_unread", "warn", "NVSwitch (DCGM's NvSwitch module)")]  # review 56 LOW 12: its own cause
    message = found[0]["evidence"]["message"]  # type: ignore[index]
    assert "ReadNvSwitchStatusAllSwitches() returned Host engine is not ready" in message and "3 line(s)" in message


# --- a monitor's log of DCGM field values by field tag ---------------------------------------------------------
_FIELDS = ("2026-03-09 14:02:11.300 DEBUG [gpumon] GPU 0 serial_number (STR), value: 1652922004811\n"
           "2026-03-09 14:02:11.301 DEBUG [gpumon] GPU 0 power_usage (FP64), value: 61.5\n"
           "2026-03-09 14:02:11.301 DEBUG [gpumon] GPU 0 gpu_temp (INT64), value: 34\n"
           "2026-03-09 14:02:11.302 DEBUG [gpumon] GPU 1 power_usage (FP64), value: 58.25\n"
           "2026-03-09 14:02:11.302 DEBUG [gpumon] GPU 1 gpu_temp (INT64), value: 33\n"
           "2026-03-09 14:02:11.303 WARN  [gpumon] GPU 1 nvlink_bandwidth_total unexpected case!\n"
           "2026-03-09 14:02:11.303 WARN  [gpumon] GPU 1 nvlink_bandwidth_total version = 16781336 fieldId = 449 "
           "fieldType = 105 status = -6\n")


def test_dcgm_field_values_by_tag_are_each_gpus_readings_and_the_clients_warnings_no_fault(tmp_path: Path) -> None:
    data = capture_json(tmp_path, _FIELDS)
    assert data["findings"] == []
    assert any("could not decode" in n for n in data["notes"])  # type: ignore[union-attr]
    assert len(capture_json(tmp_path, _FIELDS, "inventory")["modules"]) == 2  # type: ignore[arg-type]


def test_a_value_whose_type_is_no_dcgm_field_type_is_not_read(tmp_path: Path) -> None:
    path = tmp_path / "capture.txt"
    path.write_text("fanctl: set GPU 0 fan_speed (manual), value: 70\n")
    assert run(["doctor", "--from", str(path)])[0] == 2
