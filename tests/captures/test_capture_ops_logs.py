"""The operational logs of the software that runs GPU nodes (issue 46, OPS3: captures/ops_logs.py, ops_agents.py),
each kind tested on lines written here in the tool's own format: sinfo's state table, scontrol's Gres=(null) beside
a gres.conf, slurmd's gres.conf fatal, kubectl get pods of the GPU operator and kubelet's Back-off event, gpud's
component states and fabric-state box, dcgm-exporter's start-up log and a /metrics query, the device plugin's
config echo, Ray's and vLLM's GPU resource words, a tool's assertion. A healthy log is read, never refused, and
never warns; then the scored rows of batches AC and AD this class answers."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from gpuvet.captures import ops_logs
from gpuvet.captures.runtime_marks import OPS_MARKS
from gpuvet.cli.app import main

CAPTURES = Path(__file__).resolve().parents[1] / "data" / "captures"


def _doctor(tmp_path: Path, text: str) -> tuple[int, dict[str, Any]]:
    path = tmp_path / "capture.txt"
    path.write_text(text, encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["doctor", "--from", str(path), "--json"])
    assert "Traceback" not in err.getvalue()
    return code, json.loads(out.getvalue()) if out.getvalue().strip() else {}


def _loud(data: dict[str, Any]) -> list[tuple[str, str]]:
    return [(f["cause"], f["severity"]) for f in data["findings"] if f["severity"] in ("warn", "critical")]


def _one(tmp_path: Path, text: str, cause: str, words: str) -> None:
    code, data = _doctor(tmp_path, text)
    severity = "critical" if cause == "operator_driver_not_ready" else "warn"  # FX68F: the node has no driver
    assert code == 1 and _loud(data) == [(cause, severity)]
    assert words in str(data["findings"][0]["evidence"])


HEALTHY = {
    "sinfo": "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
    "gpu          up 2-00:00:00      6    mix g[001-006]\n"
    "cpu          up 7-00:00:00      1  fail* c005\n"
    "gpu          up 2-00:00:00      2  maint g[007-008]\n",
    "scontrol": "NodeName=cpu-12 Arch=x86_64 CoresPerSocket=32\n   Gres=(null)\n   State=IDLE ThreadsPerCore=1\n",
    "pods": "NAME                                READY   STATUS             RESTARTS        AGE\n"
    "gpu-operator-657c5b798d-xgvgc       0/1     CrashLoopBackOff   12 (4m24s ago)  67m\n"
    "nvidia-driver-daemonset-m2x8v       1/1     Running            0               13h\n"
    "gpu-feature-discovery-wpj2m         1/1     Running            1 (100m ago)    13h\n",
    "gpud": '{"level":"warn","ts":"2025-10-16T10:34:29.644Z","caller":"fabric-manager/component.go:378",'
    '"msg":"fabric state is not healthy","reason":"GPU GPU-11825: state=Not Supported"}\n'
    "✔ NVIDIA-GB200 checked fabric state\n"
    "| State                   | Not Supported                            |\n"
    "| Status                  | Success                                  |\n",
    "dcgm-exporter": 'time="2025-01-10T08:00:00Z" level=info msg="Starting dcgm-exporter"\n'
    'time="2025-01-10T08:00:00Z" level=info msg="DCGM successfully initialized!"\n'
    'time="2025-01-10T08:00:00Z" level=info msg="Not collecting switch metrics; no switches to monitor"\n'
    'time="2025-01-10T08:00:00Z" level=info msg="Skipping line 19 (\'DCGM_FI_PROF_PCIE_TX_BYTES\'): metric not '
    'enabled"\n',
    "metrics query": "# curl localhost:9400/metrics | grep DCGM_FI_DEV_XID_ERRORS\n"
    "  % Total    % Received % Xferd  Average Speed   Time    Time     Time  Current\n",
    "ray": "2024-05-07 16:12:51,398\tINFO worker.py:1749 -- Connected to Ray cluster.\n"
    "ValueError: The number of required GPUs exceeds the total number of available GPUs in the cluster.\n",
    "profiling module": 'time="2024-04-08T10:37:52Z" level=info msg="Starting dcgm-exporter"\n'
    'time="2024-04-08T10:37:53Z" level=fatal msg="Error watching fields: The third-party Profiling module returned '
    'an unrecoverable error"\n',
    "assertion": "nvtop: /build/nvtop-3.0.0/src/extract_gpuinfo_amdgpu.c:324: initDeviceSysfsPaths: Assertion "
    "`gpu_info->hwmonDevice != NULL' failed.\nAborted (core dumped)\n",
}


@pytest.mark.parametrize("kind", sorted(HEALTHY))
def test_a_healthy_ops_log_is_read_and_never_warns(tmp_path: Path, kind: str) -> None:
    code, data = _doctor(tmp_path, HEALTHY[kind])
    assert code == 0 and data and _loud(data) == []


def test_the_device_plugins_config_echo_is_inventory(tmp_path: Path) -> None:
    text = "".join(
        f"[   10.0{i}] nvidia-device-plugin[4284]: {line}\n"
        for i, line in enumerate(
            [
                "I0207 00:54:34.638748    4284 main.go:154] Starting FS watcher.",
                "Running with config:",
                '    "migStrategy": "none",',
                '    "failOnInitError": true,',
            ]
        )
    )
    code, data = _doctor(tmp_path, text)
    assert code == 0 and _loud(data) == []
    assert "migStrategy none, failOnInitError true" in json.dumps(data)


def test_gpu_partition_nodes_failed_are_the_scheduler_short_with_the_drained_said(tmp_path: Path) -> None:
    text = (
        "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
        "gpu          up 2-00:00:00      2  down* g[003-004]\n"
        "gpu          up 2-00:00:00      3  drng@ g[005-007]\n"
    )
    _one(tmp_path, text, "scheduler_gpus_short", "g[005-007] (draining)")


def test_gres_null_beside_a_gres_conf_of_gpus_is_the_scheduler_short(tmp_path: Path) -> None:
    text = (
        "NodeName=gpu-[01-02] Name=gpu Type=a100 File=/dev/nvidia[0-3]\n\n"
        "NodeName=gpu-01 Arch=x86_64 CoresPerSocket=32\n   Gres=(null)\n   State=IDLE ThreadsPerCore=2\n"
    )
    _one(tmp_path, text, "scheduler_gpus_short", "defines 4 gpu (a100)")


def test_slurmds_gres_conf_fatal_is_the_configuration(tmp_path: Path) -> None:
    text = "Feb 20 18:59:13 node2 slurmd[57977]: fatal: gres.conf duplicate records for gpu\n"
    _one(tmp_path, text, "gpu_config_mismatch", "duplicate records for gpu")


@pytest.mark.parametrize(
    ("pod", "status", "cause"),
    [
        ("nvidia-driver-daemonset-m2x8v", "CrashLoopBackOff", "operator_driver_not_ready"),  # FX68F: critical
        ("nvidia-operator-validator-zz4lp", "Init:CrashLoopBackOff", "gpu_config_mismatch"),
        ("nvidia-device-plugin-daemonset-f7t5x", "CrashLoopBackOff", "scheduler_gpus_short"),
    ],
)
def test_a_gpu_operand_crash_looping_is_judged_by_its_operand(tmp_path: Path, pod: str, status: str, cause: str) -> None:
    text = (
        f"NAME                                   READY   STATUS                  RESTARTS      AGE\n"
        f"{pod:38} 0/1     {status:23} 7 (3m ago)    20m\n"
    )
    _one(tmp_path, text, cause, pod)


def test_kubectl_wide_names_the_node_of_a_failing_driver_pod(tmp_path: Path) -> None:
    text = (
        "NAME                            READY   STATUS             RESTARTS     AGE   IP           NODE     "
        "NOMINATED NODE   READINESS GATES\n"
        "nvidia-driver-daemonset-m2x8v   0/1     CrashLoopBackOff   7 (3m ago)   20m   10.42.0.12   gpu-01   "
        "<none>           <none>\n"
    )
    code, data = _doctor(tmp_path, text)
    assert code == 1 and _loud(data) == [("operator_driver_not_ready", "critical")]  # FX68F: the node has no driver
    assert "gpu-01" in json.dumps(data["findings"][0])


def test_gpuds_unhealthy_fabric_manager_is_its_verdict_cited(tmp_path: Path) -> None:
    text = (
        '    "component": "accelerator-nvidia-fabric-manager",\n'
        '        "health": "Unhealthy",\n'
        '        "reason": "NVIDIA-H100-80GB-HBM3 checked fabric state; fabric manager found but not active",\n'
        '          "data": "{\\"fabric_manager_active\\":false,\\"fabric_state_supported\\":true}"\n'
    )
    _one(tmp_path, text, "node_health_check_failed", "fabric manager found but not active")


def _gb200_state(state: str) -> str:
    gpu = '{\\"gpu_uuid\\":\\"GPU-0\\",\\"clique_id\\":7,\\"state\\":\\"' + state + '\\",\\"status\\":\\"Success\\"}'
    return (
        '    "component": "accelerator-nvidia-fabric-manager",\n'
        '        "health": "Healthy",\n'
        '        "reason": "NVIDIA-GB200 checked fabric state",\n'
        '          "data": "{\\"fabric_manager_active\\":false,\\"fabric_state_supported\\":true,'
        f'\\"fabric_states\\":[{gpu},{gpu}]}}"\n'
    )


def test_an_inactive_fabric_manager_beside_nvmls_completed_fabric_is_the_design(tmp_path: Path) -> None:
    """GB200: the switch trays run the NVLink fabric; NVML says every GPU's fabric Completed/Success."""
    code, data = _doctor(tmp_path, _gb200_state("Completed"))
    assert code == 0 and _loud(data) == []
    code, data = _doctor(tmp_path, _gb200_state("In Progress"))
    assert _loud(data) == [("node_health_check_failed", "warn")]


ROWS = [
    ("fresh_ad/dcgmexp_dcgmexporter646_missing_retired_xid_metrics.txt", []),
    ("fresh_ad/gpud_gpud1108_fabric_state_not_supported_gb200.txt", []),
    ("fresh_ad/gpud_gpud1151_fabricmanager_inactive_h100.txt", [("node_health_check_failed", "warn")]),
    ("fresh_ad/k8s_gpuoperator624_operator_crashloop_pods.txt", []),
    ("fresh_av/gpud_gpud1106_gb200_fabric_state_json.txt", []),
    ("fresh_ad/ray_vllm4655_gpus_exceed_cluster.txt", []),
    ("fresh_ad/slurm_slinky101_gres_null_h100.txt", [("scheduler_gpus_short", "warn")]),
    ("fresh_ac/slurmd_magiccastle27_gres_duplicate_fatal.txt", [("gpu_config_mismatch", "warn")]),
    ("fresh_ac/sinfo_arjuna69_gpu_nodes_fail_drain.txt", [("scheduler_gpus_short", "warn")]),
    ("fresh_ac/k8sdp_bottlerocket3726_plugin_boot_console.txt", []),
    ("fresh_ac/nvtop_nvtop300_mi250_hwmon_assert.txt", []),
]


@pytest.mark.parametrize(("name", "loud"), ROWS)
def test_the_scored_rows_of_the_class(tmp_path: Path, name: str, loud: list[tuple[str, str]]) -> None:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["doctor", "--from", str(CAPTURES / name), "--json"])
    assert code == (1 if loud else 0)
    assert _loud(json.loads(out.getvalue())) == loud


def test_the_readers_marks_are_the_formats_markers() -> None:
    """A text holding none of the format's markers is never read by it (test_format_markers): ops_logs' gate words
    are all among them."""
    assert set(ops_logs.MARKS) <= set(OPS_MARKS)
