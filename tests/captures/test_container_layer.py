"""Issue 46 (GEN2): the layer between the driver and the job, as its tools print it: nvidia-container-cli's stage
errors judged by what they relay (libnvidia-container src/cli/configure.c's '<stage> error: ', NVML's words
lower-cased by its error.c), the toolkit's runtime set-up, go-nvml's error names in the device plugin's klog lines,
kubelet's device manager, the GPU operator's validator and Slurm's GRES errors (benchmarks/data/
container_phrasebook.json names the sources); and the refusal rule (captures/gpu_text.py): a log's lines that name
the container layer's things are read, prose and logs naming no GPU thing stay refused. Lines written in the tools'
formats; the hosts, paths and ids made up."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuvet.captures import gpu_text
from gpuvet.captures.read import parse_text
from gpuvet.cli.app import main
from gpuvet.errors import CaptureError

DOCKER = ("docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI "
          "runtime create failed: runc create failed: unable to start container process: error during container init: "
          "error running hook #0: error running hook: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'\n"
          "nvidia-container-cli: {}: unknown.\n")


def _doctor(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str) -> tuple[int, list[tuple[str, str]]]:
    """(exit code, the (cause, severity) of each finding); exit 2 (refused) has none."""
    path = tmp_path / "capture.txt"
    path.write_text(text, encoding="utf-8")
    code = main(["doctor", "--from", str(path), "--json"])
    out, _ = capsys.readouterr()
    found = [(f["cause"], f["severity"]) for f in json.loads(out)["findings"]] if code != 2 else []
    return code, found


@pytest.mark.parametrize(("stage", "cause", "severity"), [
    ("initialization error: load library failed: libnvidia-ml.so.1: cannot open shared object file: no such file or "
     "directory", "nvml_library_not_loadable", "warn"),
    ("initialization error: nvml error: insufficient permissions", "device_permissions", "warn"),
    ("initialization error: nvml error: unknown error", "container_gpu_unavailable", "critical"),  # FX68F
    ("initialization error: driver error: failed to process request", "container_gpu_unavailable", "critical"),
    ("initialization error: driver rpc error: timed out", "container_gpu_unavailable", "critical"),
    ("detection error: nvml error: gpu is lost", "module_fell_off_bus", "critical"),
    ("device error: GPU-5f7c2a1e-8b3d-4c6e-9a0f-1d2e3f4a5b6c: unknown device", "gpu_config_mismatch", "warn"),
    ("mount error: file creation failed: /var/lib/docker/overlay2/9f1c0e/merged/usr/bin/nvidia-smi: file exists",
     "gpu_config_mismatch", "warn"),
    ("ldcache error: open failed: /sbin/ldconfig.real: no such file or directory", "gpu_config_mismatch", "warn"),
    ("initialization error: open failed: /proc/sys/kernel/overflowuid: permission denied", "gpu_config_mismatch",
     "warn"),
    ("requirement error: unsatisfied condition: driver>=535", "driver_runtime_mismatch", "critical"),
])
def test_a_container_cli_stage_error_is_judged_by_what_it_relays(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                                 stage: str, cause: str, severity: str) -> None:
    """Each relayed error is its own cause, never 'no GPU module is visible' for all of them."""
    code, found = _doctor(capsys, tmp_path, DOCKER.format(stage))
    assert code == 1 and found == [(cause, severity)]


def test_the_driver_not_loaded_stays_no_module_visible(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, found = _doctor(capsys, tmp_path, DOCKER.format("initialization error: nvml error: driver not loaded"))
    assert code == 1 and found == [("no_modules_visible", "critical")]


@pytest.mark.parametrize("text", [
    "  Warning  FailedCreatePodSandBox  9s  kubelet  Failed to create pod sandbox: rpc error: code = Unknown desc = "
    "failed to get sandbox runtime: no runtime for \"nvidia\" is configured\n",
    "docker: Error response from daemon: unknown or invalid runtime name: nvidia.\n",
    "invoking the NVIDIA Container Runtime Hook directly (e.g. specifying the docker --gpus flag) is not supported. "
    "Please use the NVIDIA Container Runtime (e.g. specify the --runtime=nvidia flag) instead\n",
    "[2026-03-04T10:12:01.123] error: _slurm_rpc_node_registration node=gpu01: Invalid generic resource (gres) "
    "specification\n",
    "Mar 04 10:12:01 gpu01 slurmd[2211]: fatal: Invalid GRES record for gpu, count does not match File value\n",
])
def test_a_runtime_or_scheduler_set_up_error_is_its_configuration(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                                  text: str) -> None:
    code, found = _doctor(capsys, tmp_path, text)
    assert code == 1 and found == [("gpu_config_mismatch", "warn")]


@pytest.mark.parametrize(("text", "cause"), [
    ("E0304 10:12:01.123456       1 factory.go:99] Failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND.\n",
     "nvml_library_not_loadable"),
    ("E0304 10:12:01.123456       1 factory.go:99] Failed to initialize NVML: ERROR_UNKNOWN.\n",
     "api_reports_driver_state"),
    ("  Warning  UnexpectedAdmissionError  3m  kubelet  Allocate failed due to no healthy devices present; cannot "
     "allocate unhealthy devices nvidia.com/gpu, which is unexpected\n", "scheduler_gpus_short"),
    ("I0304 10:12:01.123456       1 server.go:279] 'nvidia.com/gpu' device marked unhealthy: "
     "GPU-5f7c2a1e-8b3d-4c6e-9a0f-1d2e3f4a5b6c\n", "scheduler_gpus_short"),
])
def test_the_device_plugins_and_kubelets_words(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str,
                                               cause: str) -> None:
    code, found = _doctor(capsys, tmp_path, text)
    assert code == 1 and found == [(cause, "warn")]


VALIDATOR = ("$ kubectl -n gpu-operator logs nvidia-operator-validator-q7x2m -c driver-validation\n"
             + "running command chroot with args [/run/nvidia/driver nvidia-smi]\n"
               "chroot: failed to run command 'nvidia-smi': No such file or directory\n"
               "command failed, retrying after 5 seconds\n" * 3)


def test_the_operators_driver_validation_retrying_is_a_driver_not_installed(capsys: pytest.CaptureFixture[str],
                                                                             tmp_path: Path) -> None:
    """The validator (gpu-operator validator/main.go) retries chroot /run/nvidia/driver nvidia-smi until the driver
    container installed the driver: critical on the node's driver (FX68F: no GPU workload starts), never a refusal."""
    code, found = _doctor(capsys, tmp_path, VALIDATOR)
    assert code == 1 and found == [("operator_driver_not_ready", "critical")]


@pytest.mark.parametrize("text", [
    # the validator's steps of a healthy node: its command, and no driver on the host where the container has one
    "running command chroot with args [/run/nvidia/driver nvidia-smi]\n",
    'time="2026-03-04T10:12:01Z" level=info msg="No pre-installed driver detected on the host: failed to find an '
    "executable 'nvidia-smi' on the host\"\n",
    # the device plugin's start (klog) and a logfmt record naming the node's GPU resource
    "I0304 10:12:01.123456       1 main.go:279] Starting FS watcher for /var/lib/kubelet/device-plugins\n"
    "I0304 10:12:01.223456       1 server.go:165] Starting GRPC server for 'nvidia.com/gpu'\n"
    "I0304 10:12:01.323456       1 server.go:117] Registered device plugin for 'nvidia.com/gpu' with Kubelet\n",
    'time="2026-03-04T10:12:01Z" level=info msg="Generated CDI spec with version 0.8.0"\n',
])
def test_a_healthy_log_of_the_layer_is_read_not_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                        text: str) -> None:
    code, found = _doctor(capsys, tmp_path, text)
    assert code == 0 and found == []


@pytest.mark.parametrize("text", [
    "Mar 04 10:12:01 web-3 sshd[2211]: Accepted publickey for deploy from 10.0.0.7 port 52144 ssh2\n",
    'time="2026-03-04T10:12:02Z" level=error msg="connection refused" host=db-1 retry=3\n',
    "running command curl with args [-sf http://localhost:8080/health]\ncommand failed, retrying after 5 seconds\n",
    "We moved the service to the new rack and the latency went up a bit, any idea why the job runs slower now\n",
])
def test_a_log_or_prose_naming_no_gpu_thing_is_still_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                             text: str) -> None:
    assert _doctor(capsys, tmp_path, text)[0] == 2


def test_a_components_line_of_plain_words_is_a_tools_a_posters_sentence_is_not() -> None:
    """'three lower-case words in a row' is no poster's sign on a component's own line; a first-person sentence
    naming a device node stays the poster's (refused: nothing a tool printed)."""
    fc = parse_text("slurmd: gres/gpu: loaded the list of devices from the configuration file\n", "slurmd.txt")
    assert fc.kinds == [gpu_text.KIND]
    with pytest.raises(CaptureError):
        parse_text("I checked /dev/nvidia0 and it is missing on this host\n", "post.txt")
