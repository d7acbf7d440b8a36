"""Issue 46 (R3D): the module an application's CUDA error names goes on that device, not 'node' (ggml's
'current device: N, in function …' on the line after its 'CUDA error: …', ollama's 'device=CUDA0', TensorFlow's
'/device:GPU:1'); Blender Cycles' 'Illegal address in CUDA queue …' is CUDA's illegal address, also set in a
poster's inline code; a monitor's NVML 'NotSupported' (pynvml's NVMLError_NotSupported, nvml-wrapper's
'NVMLError(Error(NotSupported' in rtop) is a query the module does not offer: clear, never a failure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuvet.captures import app_errors
from gpuvet.captures.text import Line
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


# the encoder's own words that it does not offer what was asked: ffmpeg's nvenc.c, OBS's NVENC encoders (R3D)
ENCODER = [
    ("tdarr.log", "[hevc_nvenc @ 00000237f36afac0] No NVENC capable devices found\nConversion failed!\n", "absent"),
    (
        "ffmpeg.log",
        "[h264_nvenc @ 0x55d] No capable devices found\nError while opening encoder for output stream\n",
        "absent",
    ),
    (
        "obs.log",
        "04:57:53.502: [NVENC Encoder: 'advanced_video_stream'] Creating NVENC encoder:  h264_nvenc\n"
        "04:57:53.502: [NVENC Encoder: 'advanced_video_stream'] Failed to open NVENC encoder: Invalid argument (-22)\n"
        "04:57:53.502: [NVENC Encoder: 'advanced_video_stream'] Destroying NVENC encoder\n",
        "setting",
    ),
    (
        "obs_jim.log",
        "12:00:01.100: [jim-nvenc: 'simple_h264_stream'] init_encoder: nvEncInitializeEncoder failed: 8 "
        "(NV_ENC_ERR_INVALID_PARAM)\n",
        "setting",
    ),
]


@pytest.mark.parametrize(("name", "text", "kind"), ENCODER)
def test_an_encoder_not_offering_the_request_is_info_never_a_refusal(
    name: str, text: str, kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    findings = _findings(name, text, tmp_path, capsys)
    assert [(f["cause"], f["severity"]) for f in findings] == [("encoder_not_offered", "info")], findings
    assert f"app_nvenc_{kind}" in json.dumps(findings)


def test_obs_nvenc_lines_of_no_refusal_are_read_and_clear(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (
        "04:57:53.502: [NVENC Encoder: 'advanced_video_stream'] Creating NVENC encoder:  h264_nvenc\n"
        "04:57:53.502: [NVENC Encoder: 'advanced_video_stream'] Using preset: balanced\n"
        "04:57:59.000: [NVENC Encoder: 'advanced_video_stream'] Destroying NVENC encoder\n"
    )
    assert _findings("obs_ok.log", text, tmp_path, capsys) == []


def test_a_message_in_a_posters_inline_code_is_the_tools_words_quoted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = "After a freeze either of these shows up: `Illegal address in CUDA queue copy_from_device (prefix_sum)`\n"
    findings = _findings("post.txt", text, tmp_path, capsys)
    assert [f["cause"] for f in findings] == ["application_cuda_error"], findings
    asked = "What does `CUDA error: an illegal memory access was encountered` mean?\n"  # a question, not a report
    assert app_errors.quoted([Line(1, asked)]).errors == []


def test_a_quoted_ggml_error_goes_on_the_device_its_next_line_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (
        "Since the update my box prints 'CUDA error: unspecified launch failure' and stops:\n"
        "  current device: 1, in function ggml_cuda_compute_forward at ggml/src/ggml-cuda/ggml-cuda.cu:2311\n"
    )
    findings = _findings("post.txt", text, tmp_path, capsys)
    assert [str(f["module"]).split(" (")[0] for f in findings] == ["CUDA device 1"], findings
