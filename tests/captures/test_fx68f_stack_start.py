"""FX68F (issue 46): a node whose GPU stack cannot start is critical for its GPU use, said as what failed: NVML's
init with a status nvidia-smi cannot name ('N/A', WSL2's), the GPU operator's driver validation that never passes,
the container runtime's GPU set-up (docker's 'could not select device driver', nvidia-container-cli's driver error,
WSL2 named where the text shows it) - the container's, not 'no GPU' where the same file lists the GPU - and
nvidia-smi's lost handle of a GPU the driver never started in a VM guest (not a module off the bus). Inputs written
in the tools' own forms (libnvidia-container's and docker's messages, nvidia-smi's, the operator validator's
logrus lines, the driver's /proc information page), bus ids and hosts made up."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from gpuvet.captures import kernel, kernel_guest
from gpuvet.captures.text import clean
from gpuvet.cli.app import main


def _doctor(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str) -> list[tuple[str, str, str]]:
    path = tmp_path / "paste.txt"
    path.write_text(text)
    main(["doctor", "--from", str(path), "--json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    return [(f["cause"], str(f.get("module")), f["severity"]) for f in json.loads(out)["findings"]] if out.strip() else []


def _kinds(text: str) -> list[tuple[str, str]]:
    return [(e.kind, e.module) for e in kernel.parse(clean(text).lines).events]


def test_nvml_init_with_no_status_name_is_no_gpu_usable_critical_and_names_wsl2(capsys, tmp_path) -> None:
    text = "user@box:~$ nvidia-smi\nFailed to initialize NVML: N/A\nFailed to properly shut down NVML: N/A\n"
    found = _doctor(capsys, tmp_path, text)
    assert [(c, s) for c, _, s in found] == [("no_modules_visible", "critical")]
    from gpuvet.captures.kernel_messages import kernel_message_catalog

    assert "WSL" in kernel_message_catalog()["wsl_nvml_na"].action
    # NVML's other init failures keep their own readings
    assert ("wsl_nvml_na", ) not in [(k,) for k, _ in _kinds("Failed to initialize NVML: Unknown Error\n")]


def test_the_operator_validator_retrying_the_driver_is_critical(capsys, tmp_path) -> None:
    text = ('time="2024-03-02T10:00:00Z" level=info msg="version: 1a2b3c-amd64, commit: 1a2b3c"\n'
            "WARN[0010] failed to validate the driver, retrying after 5 seconds\n"
            "WARN[0015] failed to validate the driver, retrying after 5 seconds\n")
    assert _doctor(capsys, tmp_path, text) == [("operator_driver_not_ready", "None", "critical")]


def test_docker_without_a_gpu_driver_beside_a_listed_gpu_is_the_containers_not_no_gpu(capsys, tmp_path) -> None:
    table = """+-----------------------------------------------------------------------------+
| NVIDIA-SMI 525.85.12    Driver Version: 525.85.12    CUDA Version: 12.0     |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|                               |                      |               MIG M. |
|===============================+======================+======================|
|   0  Tesla T4            On   | 00000000:3B:00.0 Off |                    0 |
| N/A   31C    P8     9W /  70W |      2MiB / 15360MiB |      0%      Default |
|                               |                      |                  N/A |
+-------------------------------+----------------------+----------------------+
"""
    err = 'docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].\n'
    found = _doctor(capsys, tmp_path, err + "\n$ nvidia-smi\n" + table)
    assert ("container_gpu_unavailable", "None", "critical") in found
    assert not any(c == "no_modules_visible" for c, _, _ in found)


CLI = ("docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI "
       "runtime create failed: runc create failed: unable to start container process: error during container init: "
       "error running hook #0: error running hook: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'\n"
       "nvidia-container-cli: initialization error: driver error: failed to process request: unknown.\n")


def test_the_clis_driver_error_is_critical_and_names_wsl2_only_where_the_text_shows_it(capsys, tmp_path) -> None:
    assert _doctor(capsys, tmp_path, CLI) == [("container_gpu_unavailable", "None", "critical")]
    path = tmp_path / "wsl.txt"
    path.write_text("me@DESKTOP-Q7RT2ZX:~$ docker run --rm --gpus all ubuntu nvidia-smi\n" + CLI)
    main(["doctor", "--from", str(path), "--json"])
    (f,) = json.loads(capsys.readouterr()[0])["findings"]
    assert (f["cause"], f["severity"]) == ("container_gpu_unavailable", "critical")
    assert "WSL" in json.dumps(f)


LOST = "Unable to determine the device handle for GPU {}: Unknown Error\n"


def test_a_lost_handle_in_a_vm_guest_is_a_gpu_not_started_not_one_off_the_bus() -> None:
    assert _kinds(LOST.format("0000:00:05.0")) == [("guest_gpu_not_started", "0000:00:05.0")]  # a VMM's root bus
    assert _kinds(LOST.format("0000:3B:00.0")) == [("smi_no_handle", "0000:3B:00.0")]  # a host's: lost
    guest = "[    0.000000] Hypervisor detected: KVM\n" + LOST.format("0000:3B:00.0")
    assert _kinds(guest) == [("guest_gpu_not_started", "0000:3B:00.0")]


def test_model_unknown_on_the_drivers_page_is_a_module_never_started_and_its_lines_are_read() -> None:
    text = (LOST.format("0000:3B:00.0") + "$ cat /proc/driver/nvidia/gpus/0000:3b:00.0/information\n"
            "Model: \t\t Unknown\nIRQ:   \t\t 88\nGPU UUID: \t GPU-????????-????-????-????-????????????\n")
    out = kernel.parse(clean(text).lines)
    assert [(e.kind, e.module) for e in out.events] == [("smi_handle_not_found", "0000:3B:00.0")]
    assert {2, 3, 4, 5} <= out.claimed


def test_the_guest_doctor_finding_is_init_failed_with_the_passthrough_fix(capsys, tmp_path) -> None:
    text = "# nvidia-smi\n" + LOST.format("0000:00:07.0")
    path = tmp_path / "g.txt"
    path.write_text(text)
    main(["doctor", "--from", str(path), "--json"])
    (f,) = json.loads(capsys.readouterr()[0])["findings"]
    assert (f["cause"], f["severity"]) == ("module_init_failed", "critical")
    assert "vfio-pci" in json.dumps(f) and "RMA" not in json.dumps(f)


def _cpu(text: str) -> float:
    """The guest reader's own cost on ``text`` (the kernel reader around it has its own growth tests)."""
    lines = clean(text).lines
    start = time.process_time()
    kernel_guest.started(lines, kernel.KernelParse(events=[kernel.KernelEvent("smi_no_handle", "0000:3B:00.0", "", 1)]))
    return time.process_time() - start


def test_hostile_input_costs_linear_time() -> None:
    """A file of 160,000 lines against one a sixteenth its size (linear: ~16x; quadratic: ~256x), a 100 KB line
    against a 10 KB one: CPU time ratios of the same run, never the machine's speed."""
    unit = "/proc/driver/nvidia/gpus/0000:00:05.0/information\nModel: Unknown\nIRQ: 9\nQEMU virtio kata x\n"
    small, big = unit * 2_500, unit * 40_000
    assert _cpu(big) < 60 * max(_cpu(small), 1e-3)
    line = "Model: " + "x " * 2_000 + "/information kata" * 300
    assert _cpu(line * 10 + "\n") < 30 * max(_cpu(line + "\n"), 1e-3)
