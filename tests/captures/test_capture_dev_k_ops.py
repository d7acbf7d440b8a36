"""Round K's development set of the layer above the node's tools (issue 46, dev_k_ops), each class tested on
lines written here in the tool's own format: Slurm's GPU count below its configuration (scontrol, sinfo -R,
slurmctld), NHC's failed GPU checks, a GPU health agent's node condition, slurmd's gres configuration
errors, Kubernetes' GPU resources (describe, -o yaml, -o json, jsonpath), the device plugin finding nothing,
nv-hostengine failing on NVML, CDI errors, dcgmi nvlink -e's error box; and the runtime's words on their way
through (nvidia-container-cli's NVML mismatch and CUDA requirement, a quote the poster opened, a web address
beside 'kernel'), dcgmi dmon's table read. A healthy node's resources and record never warn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.captures.test_captures_fresh_c import run_json


def _run(tmp_path: Path, command: str, text: str) -> dict[str, Any]:
    path = tmp_path / "capture.txt"
    path.write_text(text)
    _, data = run_json(command, "--from", str(path))
    return data


def _causes(tmp_path: Path, text: str) -> list[tuple[str, str]]:
    return [(f["cause"], f["severity"]) for f in _run(tmp_path, "doctor", text)["findings"]]


def _one_shortage_saying(tmp_path: Path, text: str, words: str) -> None:
    """doctor's one finding on ``text`` is the scheduler short of GPUs (warn), its evidence holding ``words``."""
    data = _run(tmp_path, "doctor", text)
    assert [(f["cause"], f["severity"]) for f in data["findings"]] == [("scheduler_gpus_short", "warn")]
    assert words in str(data["findings"][0]["evidence"])


def test_slurm_gpu_count_below_its_configuration_is_the_scheduler_short_of_gpus(tmp_path: Path) -> None:
    scontrol = ("NodeName=gpu07 Arch=x86_64 CoresPerSocket=32\n"
                "   Gres=gpu:h100:8\n"
                "   State=IDLE+DRAIN ThreadsPerCore=2 TmpDisk=0 Weight=1\n"
                "   CfgTRES=cpu=128,mem=1000G,billing=128,gres/gpu=8\n"
                "   Reason=gres/gpu:h100 count reported lower than configured (7 < 8) [slurm@2025-03-02T08:11:40]\n")
    _one_shortage_saying(tmp_path, scontrol, "node gpu07: Slurm counts 7 GPU(s) of 8 configured")
    older = "[2021-05-04T10:00:01.123] error: Setting node n12 state to DRAIN with reason:gres/gpu count too low (2 < 4)\n"
    assert _causes(tmp_path, older) == [("scheduler_gpus_short", "warn")]
    ctld = ("Jun 01 09:00:00 head slurmctld[811]: slurmctld: _node_config_validate: gres/gpu: Count changed on node "
            "g3 (8 != 6)\n")
    assert _causes(tmp_path, ctld) == [("scheduler_gpus_short", "warn")]


def test_sinfo_reasons_naming_a_gpu_fault_warn_and_others_do_not(tmp_path: Path) -> None:
    sinfo = ("$ sinfo -R\n"
             "REASON               USER      TIMESTAMP           NODELIST\n"
             "GPU 3 Xid 79 fell off root      2025-01-09T10:12:55 dgx014\n"
             "Kill task failed     root      2025-01-09T11:00:02 dgx015\n")
    _one_shortage_saying(tmp_path, sinfo, "dgx014 drained: GPU 3 Xid 79 fell off")


def test_slurmd_gres_configuration_errors_are_a_configuration_mismatch(tmp_path: Path) -> None:
    missing = ("Mar 03 10:00:01 w1 slurmd[900]: slurmd: error: Waiting for gres.conf file /dev/nvidia3\n"
               "Mar 03 10:00:20 w1 slurmd[900]: slurmd: fatal: can't stat gres.conf file /dev/nvidia3: No such file "
               "or directory\n")
    assert _causes(tmp_path, missing) == [("gpu_config_mismatch", "warn")]
    nolib = ("slurmd: fatal: We were configured to autodetect nvml functionality, but we weren't able to find that "
             "lib when Slurm was configured.\n")
    assert _causes(tmp_path, nolib) == [("gpu_config_mismatch", "warn")]


def test_kubernetes_allocatable_below_capacity_in_every_form(tmp_path: Path) -> None:
    describe = ("Capacity:\n  cpu:                96\n  memory:             1056446428Ki\n  nvidia.com/gpu:     8\n"
                "  pods:               110\nAllocatable:\n  cpu:                96\n  memory:             1056344028Ki\n"
                "  nvidia.com/gpu:     6\n  pods:               110\nSystem Info:\n  Machine ID:  abc\n")
    _one_shortage_saying(tmp_path, describe, "allocatable 6 of capacity 8")
    as_json = ('  "status": {\n    "allocatable": {\n      "amd.com/gpu": "3",\n      "cpu": "64"\n    },\n'
               '    "capacity": {\n      "amd.com/gpu": "4",\n      "cpu": "64"\n    }\n  }\n')
    assert _causes(tmp_path, as_json) == [("scheduler_gpus_short", "warn")]
    jsonpath = "status.capacity.nvidia.com/gpu: 0\nstatus.allocatable.nvidia.com/gpu: 0\n"
    assert _causes(tmp_path, jsonpath) == [("scheduler_gpus_short", "warn")]


def test_a_healthy_nodes_gpu_resources_give_no_finding(tmp_path: Path) -> None:
    yaml = ("  status:\n    allocatable:\n      cpu: \"64\"\n      nvidia.com/gpu: \"4\"\n      pods: \"110\"\n"
            "    capacity:\n      cpu: \"64\"\n      nvidia.com/gpu: \"4\"\n      pods: \"110\"\n")
    assert _causes(tmp_path, yaml) == []


def test_the_device_plugin_finding_no_device_and_cdi_errors_are_configuration(tmp_path: Path) -> None:
    plugin = ("I0412 08:00:01.000000       1 main.go:256] Retreiving plugins.\n"
              "I0412 08:00:01.000001       1 factory.go:107] Detected non-NVML platform: could not load NVML library\n"
              "E0412 08:00:01.000002       1 factory.go:115] Incompatible strategy detected auto\n"
              "E0412 08:00:01.000003       1 factory.go:116] If this is a GPU node, did you configure the NVIDIA "
              "Container Toolkit?\n"
              "I0412 08:00:01.000004       1 main.go:287] No devices found. Waiting indefinitely.\n")
    assert _causes(tmp_path, plugin) == [("gpu_config_mismatch", "warn")]
    cdi = "Error: setting up CDI devices: unresolvable CDI devices nvidia.com/gpu=1\n"
    assert _causes(tmp_path, cdi) == [("gpu_config_mismatch", "warn")]


def test_nv_hostengine_failing_on_nvml_is_dcgm_without_nvml(tmp_path: Path) -> None:
    log = ("2024-06-01 10:00:00.100 ERROR [7:7] Cannot initialize the hostengine: Error: Failed to initialize NVML "
           "[/workspaces/dcgm/dcgmlib/src/DcgmHostEngineHandler.cpp:4000] [DcgmHostEngineHandler::Init]\n")
    assert _causes(tmp_path, log) == [("dcgm_no_nvml", "warn")]


def test_the_runtimes_words_relayed_quoted_or_beside_a_web_address(tmp_path: Path) -> None:
    relayed = ("stderr: nvidia-container-cli: initialization error: nvml error: driver/library version mismatch: "
               "unknown\n")
    assert _causes(tmp_path, relayed) == [("driver_library_mismatch", "critical")]
    opened = "\"Failed to copy vector B from host to device (error code system not yet initialized)!\n"
    assert _causes(tmp_path, opened) == [("fabric_manager_failed", "critical")]
    closed = ("GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-0f1e2d3c-0000-1111-2222-333344445555)\n"
              "\"the log said (error code system not yet initialized)\" is what a friend saw\n")
    assert _causes(tmp_path, closed) == []  # a quote closed on its line: someone's words, not the runtime's line
    flat = ("CUDA error: uncorrectable ECC error encountered Search for `cudaErrorECCUncorrectable' in "
            "https://docs.nvidia.com/cuda/cuda-runtime-api/index.html for more information. CUDA kernel errors "
            "might be asynchronously reported at some other API call.\n")
    assert _causes(tmp_path, flat) == [("ecc_uncorrectable_since_boot", "critical")]


def test_dcgmi_dmon_rows_are_read_and_clean_counters_give_no_finding(tmp_path: Path) -> None:
    dmon = ("# dcgmi dmon -e 1201,1205\n"
            "#Entity   NLXMITB            NLRCVE\n"
            "ID\n"
            "GPU 0     1283746            0\n"
            "GPU 1     1190022            0\n")
    data = _run(tmp_path, "doctor", dmon)
    assert data["findings"] == []
    assert any("2 sample(s) of 2 module(s)" in n for n in data["notes"])


def test_gpu_health_agents_conditions_nhc_and_the_schedulers_shortage_warn(tmp_path: Path) -> None:
    conditions = ("Conditions:\n"
                  "  Type                       Status  LastHeartbeatTime                 LastTransitionTime"
                  "                Reason                     Message\n"
                  "  ----                       ------  -----------------                 ------------------"
                  "                ------                     -------\n"
                  "  MemoryPressure             False   Mon, 03 Feb 2025 10:00:00 +0000   Mon, 03 Feb 2025 09:00:00 "
                  "+0000   KubeletHasSufficientMemory kubelet has sufficient memory available\n"
                  "  AcceleratedHardwareReady   False   Mon, 03 Feb 2025 10:00:00 +0000   Mon, 03 Feb 2025 09:58:00 "
                  "+0000   NvidiaXID79Error           XID 79 detected on GPU 2\n")
    assert _causes(tmp_path, conditions) == [("scheduler_gpus_short", "warn")]
    nhc = "ERROR:  nhc:  Health check failed:  check_gpu_count:  GPU count 7 is less than the expected 8\n"
    assert _causes(tmp_path, nhc) == [("scheduler_gpus_short", "warn")]
    event = ("  Warning  FailedScheduling  12s  default-scheduler  0/4 nodes are available: 4 Insufficient "
             "nvidia.com/gpu. preemption: 0/4 nodes are available.\n")
    assert _causes(tmp_path, event) == [("scheduler_gpus_short", "warn")]


def test_the_container_cli_refusing_an_image_for_an_old_driver_is_the_driver_too_old(tmp_path: Path) -> None:
    text = ("docker: Error response from daemon: failed to create task for container: … stderr: Auto-detected mode as "
            "'legacy'\nnvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.4, please update "
            "your driver to a newer version, or use an earlier cuda container: unknown.\n")
    assert _causes(tmp_path, text) == [("driver_runtime_mismatch", "critical")]


_DCGMI_NVLINK_E = """+-----------------------------+------------------------------------------------+
| NVLINK Error Counts                                                          |
| GPU 2                                                                        |
+=============================+================================================+
| Link 0                      | CRC FLIT Error => 0                            |
|                             | CRC Data Error => 0                            |
|                             | Replay Error => {replay}                              |
|                             | Recovery Error => 0                            |
| Link 1                      | CRC FLIT Error => 0                            |
|                             | Recovery Error => 0                            |
+-----------------------------+------------------------------------------------+
"""


def test_dcgmi_nvlink_error_counts_are_judged_as_nvidia_smis(tmp_path: Path) -> None:
    data = _run(tmp_path, "doctor", _DCGMI_NVLINK_E.format(replay=57))
    assert [(f["cause"], f["severity"], f.get("module")) for f in data["findings"]] == \
        [("nvlink_errors", "warn", "GPU 2")]
    assert "link 0 Replay" in str(data["findings"][0]["evidence"])
    assert _causes(tmp_path, _DCGMI_NVLINK_E.format(replay=0)) == []


def test_a_healthy_slurm_node_record_is_read_without_a_finding(tmp_path: Path) -> None:
    record = ("NodeName=gpu-a01 Arch=x86_64 CoresPerSocket=32\n   Gres=gpu:h100:8(S:0-1)\n"
              "   State=IDLE ThreadsPerCore=2 TmpDisk=0 Weight=1\n   CfgTRES=cpu=128,mem=2000000M,gres/gpu=8\n")
    data = _run(tmp_path, "doctor", record)
    assert data["findings"] == []
    assert any("Slurm node gpu-a01: Gres=gpu:h100:8(S:0-1)" in n for n in data["notes"])


def test_dcgmi_without_its_host_engine_is_the_nodes_monitoring_down_not_a_modules_fault(tmp_path: Path) -> None:
    text = "$ dcgmi discovery -l\nError: unable to establish a connection to the specified host: localhost\n" \
           "Error: Unable to connect to host engine. Host engine connection invalid/disconnected.\n"
    assert _causes(tmp_path, text) == [("dcgm_hostengine_down", "warn")]  # KL1: as xpumd not ready (warn)


def test_a_capacity_below_the_gpu_count_feature_discovery_labelled_warns(tmp_path: Path) -> None:
    text = ("Labels:             nvidia.com/gpu.count=8\n                    nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3\n"
            "Capacity:\n  cpu:             192\n  nvidia.com/gpu:  7\nAllocatable:\n  cpu:             192\n"
            "  nvidia.com/gpu:  7\n")
    _one_shortage_saying(tmp_path, text, "capacity 7 of the 8 GPU feature discovery labelled")


def test_node_events_a_driver_container_and_pytorchs_architecture_warning(tmp_path: Path) -> None:
    events = ("Events:\n  Type     Reason            Age   From                       Message\n"
              "  ----     ------            ----  ----                       -------\n"
              "  Warning  NvidiaXID48Error  2m    eks-node-monitoring-agent  XID 48 (double-bit ECC) on GPU 5\n")
    assert _causes(tmp_path, events) == [("scheduler_gpus_short", "warn")]
    driver = ("Installing the NVIDIA driver kernel modules...\n"
              "ERROR: Unable to load the kernel module 'nvidia.ko'.  This happens most frequently when this kernel "
              "module was built against the wrong or improperly configured kernel sources\n")
    assert ("no_modules_visible", "critical") in _causes(tmp_path, driver)
    arch = ("/usr/local/lib/python3.10/dist-packages/torch/cuda/__init__.py:215: UserWarning:\n"
            "NVIDIA B200 with CUDA capability sm_100 is not compatible with the current PyTorch installation.\n"
            "The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.\n")
    assert _causes(tmp_path, arch) == [("application_cuda_error", "warn")]
    told = "I read that a card with CUDA capability sm_120 is not compatible with the current PyTorch build\n"
    assert ("application_cuda_error", "warn") not in _causes(tmp_path, told + "GPU 0: NVIDIA L4 (UUID: GPU-1)\n")


def test_kubelets_admission_error_for_a_gpu_is_the_node_short_of_gpus(tmp_path: Path) -> None:
    text = ("  Warning  UnexpectedAdmissionError  40s  kubelet  Allocate failed due to requested number of devices "
            "unavailable for nvidia.com/gpu. Requested: 1, Available: 0, which is unexpected\n")
    _one_shortage_saying(tmp_path, text, "no free nvidia.com/gpu")
