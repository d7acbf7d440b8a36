"""Issue 46 (R3D): the module an application's CUDA error names goes on that device, not 'node' (ggml's
'current device: N, in function …' on the line after its 'CUDA error: …', ollama's 'device=CUDA0', TensorFlow's
'/device:GPU:1'); Blender Cycles' 'Illegal address in CUDA queue …' is CUDA's illegal address, also set in a
poster's inline code; a monitor's NVML 'NotSupported' (pynvml's NVMLError_NotSupported, nvml-wrapper's
'NVMLError(Error(NotSupported' in rtop) is a query the module does not offer: clear, never a failure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuvet.cli.app import main

_GGML = (
    "ggml_cuda_compute_forward: RMS_NORM failed\nCUDA error: unspecified launch failure\n"
    "  current device: {n}, in function ggml_cuda_compute_forward at ggml/src/ggml-cuda/ggml-cuda.cu:2311\n"
    "  err\nggml/src/ggml-cuda/ggml-cuda.cu:72: CUDA error\n"
)
PLACED = [
    ("ggml.txt", _GGML.format(n=1), "launch_failure", "CUDA device 1"),
    ("ggml0.txt", _GGML.format(n=0), "launch_failure", "CUDA device 0"),
    (
        "ollama.log",
        'time=2025-02-20T10:01:02.000Z level=INFO source=server.go:597 msg="llama runner started"\n'
        "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 512.00 MiB on device=CUDA1: cudaMalloc failed: "
        "an illegal memory access was encountered\n",
        "illegal_address",
        "CUDA device 1",
    ),
    (
        "tf.log",
        "2025-02-20 10:01:02.000: E tensorflow/core/common_runtime/gpu/gpu_util.cc:291] /job:localhost/replica:0/"
        "task:0/device:GPU:1 CUDA error: an illegal memory access was encountered\n",
        "illegal_address",
        "CUDA device 1",
    ),
]


def _findings(name: str, text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    path = tmp_path / name
    path.write_text(text)
    assert main(["doctor", "--from", str(path), "--json"]) != 2
    findings: list[dict[str, object]] = json.loads(capsys.readouterr().out)["findings"]
    return findings


@pytest.mark.parametrize(("name", "text", "kind", "module"), PLACED)
def test_an_application_error_goes_on_the_device_its_lines_name(
    name: str, text: str, kind: str, module: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    findings = _findings(name, text, tmp_path, capsys)
    assert [str(f["module"]).split(" (")[0] for f in findings if f["severity"] == "warn"] == [module], findings
    assert kind in json.dumps(findings)


@pytest.mark.parametrize(
    "line",
    [
        "`Illegal address in CUDA queue copy_from_device (integrator_shade_surface integrator_sorted_paths_array)`",
        "Illegal address in CUDA queue synchronize (integrator_shade_surface)",
        "CUDA error: Illegal address in cuCtxSynchronize(), line 1234",
    ],
)
def test_cycles_illegal_address_is_cuda_illegal_address(
    line: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    findings = _findings("cycles.txt", f"Rendering with GPU (RTX 3080) freezes, then:\n\n{line}\n", tmp_path, capsys)
    assert [f["cause"] for f in findings] == ["application_cuda_error"], findings
    assert "illegal_address" in json.dumps(findings)


@pytest.mark.parametrize(
    "line",
    [
        "error: NVMLError(Error(NotSupported, State { next_error: None, backtrace: InternalBacktrace { backtrace: None } }))",  # noqa: E501 - rtop's line
        "pynvml.nvml.NVMLError_NotSupported: Not Supported",
        "ERROR: nvml.NVMLError_NotSupported while reading fan speed",
    ],
)
def test_a_monitors_nvml_not_supported_is_clear(line: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = f"$ rtop\n{line}\n\nModel: GeForce RTX 2070 with Max-Q Design\nDriver Version: 460.73.01\n"
    assert [f for f in _findings("monitor.txt", text, tmp_path, capsys) if f["severity"] != "info"] == []
