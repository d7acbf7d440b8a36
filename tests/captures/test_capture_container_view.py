"""The GPUs as a container sees them (issue 46, IGC): where the text shows the command ran in a container, NVML's
'Unknown Error', nvidia-smi's lost driver and an nvidia-smi that printed nothing are the container's device access
(warn), not the module; nvidia-container-cli's 'nvml error: driver not loaded' is the host's kernel driver and says
so. Sessions written as shells print them (nvidia-smi's and NVML's strings; libnvidia-container's '<stage> error: '
lines inside moby's daemon error)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuvet.cli.app import main

CAPTURES = Path(__file__).resolve().parents[1] / "data" / "captures"
NVML_UNKNOWN = "Failed to initialize NVML: Unknown Error"
SMI_NO_DRIVER = (
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the "
    "latest NVIDIA driver is installed and running."
)


def _doctor(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str) -> tuple[int, list[dict]]:
    path = tmp_path / "session.txt"
    path.write_text(text)
    code = main(["doctor", "--from", str(path), "--json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    assert code != 2, err
    return code, json.loads(out)["findings"]


def _causes(found: list[dict]) -> list[tuple[str, str]]:
    return [(f["cause"], f["severity"]) for f in found]


@pytest.mark.parametrize(
    "command",
    [
        "$ docker run --rm --gpus all nvidia/cuda:12.4.1-base-ubuntu22.04 nvidia-smi",
        "$ sudo docker exec -it trainer nvidia-smi",
        "$ kubectl exec -it trainer-0 -- nvidia-smi",
        "$ podman run --rm --device nvidia.com/gpu=all ubuntu nvidia-smi",
    ],
)
@pytest.mark.parametrize("said", [NVML_UNKNOWN, SMI_NO_DRIVER])
def test_a_container_that_cannot_reach_the_gpu_is_its_device_access(capsys, tmp_path, command, said) -> None:
    _, found = _doctor(capsys, tmp_path, f"{command}\n{said}\n$ nvidia-smi -L\nGPU 0: NVIDIA A100-PCIE-40GB\n")
    assert ("container_gpu_access", "warn") in _causes(found)
    assert not [c for c in _causes(found) if c[1] == "critical"]


def test_the_same_nvml_error_on_the_host_is_not_called_the_containers(capsys, tmp_path) -> None:
    _, found = _doctor(capsys, tmp_path, f"$ nvidia-smi\n{NVML_UNKNOWN}\n")
    assert "container_gpu_access" not in {c for c, _ in _causes(found)}


def test_an_nvidia_smi_that_printed_nothing_in_a_container(capsys, tmp_path) -> None:
    text = "# docker compose exec app bash\nroot@app:/# nvidia-smi\nroot@app:/#\n"
    _, found = _doctor(capsys, tmp_path, text)
    assert _causes(found) == [("container_gpu_access", "warn")]
    assert found[0]["evidence"]["kind"] == "container_smi_empty"


def test_a_container_whose_nvidia_smi_works_stays_clear(capsys, tmp_path) -> None:
    text = (
        "$ docker run --rm --gpus all ubuntu nvidia-smi -L\nGPU 0: NVIDIA A100-PCIE-40GB (UUID: "
        "GPU-6f1e3b2a-1c2d-4e5f-8a9b-0c1d2e3f4a5b)\n"
    )
    code, found = _doctor(capsys, tmp_path, text)
    assert [f for f in found if f["severity"] != "info"] == [] and code == 0


def test_the_clis_driver_not_loaded_names_the_hosts_driver(capsys, tmp_path) -> None:
    text = (
        "docker: Error response from daemon: failed to create shim task: OCI runtime create failed: runc create "
        "failed: unable to start container process: error during container init: error running hook #0: error "
        "running hook: exit status 1, stdout: , stderr: nvidia-container-cli: initialization error: nvml error: "
        "driver not loaded: unknown.\n"
    )
    _, found = _doctor(capsys, tmp_path, text)
    assert _causes(found) == [("no_modules_visible", "critical")]
    assert "driver not loaded" in found[0]["evidence"]["log"]
    assert "host's NVIDIA kernel driver is not loaded" in found[0]["evidence"]["meaning"]


@pytest.mark.parametrize(
    ("row", "cause", "severity"),
    [
        ("fresh_ad/ctk_nvidiacontainertoolkit115_container_nvml_unknown_a100.txt", "container_gpu_access", "warn"),
        ("fresh_ad/ctk_nvidiadocker1629_nvml_driver_not_loaded.txt", "no_modules_visible", "critical"),
        ("fresh_ac/nvsmi_dockerplex407_empty_in_container.txt", "container_gpu_access", "warn"),
    ],
)
def test_the_batch_rows(capsys, tmp_path, row, cause, severity) -> None:
    _, found = _doctor(capsys, tmp_path, (CAPTURES / row).read_text())
    assert _causes(found) == [(cause, severity)]


@pytest.mark.parametrize("name", ["data_{:05d}.bin", "données_{:05d}.bin"])  # an ASCII text, and one that is not
@pytest.mark.parametrize(
    "command, inside", [("$ sudo Docker exec -it trainer nvidia-smi", True), ("$ sudo nvidia-smi", False)]
)
def test_a_container_shown_far_into_a_long_text(capsys, tmp_path, name, command, inside) -> None:
    # the words that show a container are found a block of lines at a time, in any casing (issue 43): past the first
    # block of a long listing the command still decides
    listing = "\n".join(name.format(i) for i in range(9000))
    _, found = _doctor(capsys, tmp_path, f"$ ls /data\n{listing}\n{command}\n{NVML_UNKNOWN}\n")
    assert ("container_gpu_access" in {c for c, _ in _causes(found)}) is inside
