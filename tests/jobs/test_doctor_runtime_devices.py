"""doctor on inference-runtime and framework logs (issue 46, dev_m_runtime), on lines written here in each tool's
format: a healthy start-up listing its GPUs is no finding; a runtime that sees no GPU, cannot start CUDA, refuses
the GPU it found or was built without GPU support is 'the framework sees no module' (warn, the runtime's own
advice), never a hardware fault; llama.cpp running out of GPU memory is the application's (info); a runtime's
'no GPU' beside nvidia-smi listing the modules is the program's own view (info)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.captures.test_captures_fresh_c import run_json


def _doctor(tmp_path: Path, text: str) -> tuple[int, dict[str, Any]]:
    path = tmp_path / "runtime.log"
    path.write_text(text)
    return run_json("doctor", "--from", str(path))


def _causes(tmp_path: Path, text: str) -> list[tuple[str, str]]:
    return [(f["cause"], f["severity"]) for f in _doctor(tmp_path, text)[1]["findings"]]


SEES_NONE = [("framework_sees_no_module", "warn")]


def test_a_healthy_start_up_is_no_finding_and_its_gpus_are_the_inventory(tmp_path: Path) -> None:
    text = ("Jan 10 09:00:00 box ollama[811]: ggml_cuda_init: found 1 CUDA devices:\n"
            "Jan 10 09:00:00 box ollama[811]:   Device 0: NVIDIA GeForce RTX 3090, compute capability 8.6, VMM: yes\n"
            "Jan 10 09:00:01 box ollama[811]: llm_load_tensors: offloaded 33/33 layers to GPU\n")
    code, data = _doctor(tmp_path, text)
    assert data["findings"] == [] and code == 0
    path = tmp_path / "runtime.log"
    _, inv = run_json("inventory", "--from", str(path))
    assert [m["model"] for m in inv["modules"]] == ["NVIDIA GeForce RTX 3090"]


def test_each_runtime_seeing_no_gpu_it_can_use_warns_with_its_own_advice(tmp_path: Path) -> None:
    ollama = ('time=2025-03-01T10:00:00.000Z level=INFO source=gpu.go:217 msg="looking for compatible GPUs"\n'
              'time=2025-03-01T10:00:00.100Z level=INFO source=gpu.go:377 msg="no compatible GPUs were discovered"\n')
    assert _causes(tmp_path, ollama) == SEES_NONE
    jax = ("W0301 10:00:00.000000 140000 xla_bridge.py:909] No GPU/TPU found, falling back to CPU. (Set "
           "TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)\n")
    assert _causes(tmp_path, jax) == SEES_NONE
    hashcat = "hashcat (v6.2.6) starting\n\nclGetPlatformIDs(): CL_PLATFORM_NOT_FOUND_KHR\n\nNo devices found/left.\n"
    assert _causes(tmp_path, hashcat) == SEES_NONE
    vulkan = "ERROR: [Loader Message] Code 0 : vkCreateInstance: Found no drivers!\nCannot create Vulkan instance.\n"
    assert _causes(tmp_path, vulkan) == SEES_NONE


def test_the_reason_a_runtime_gives_is_the_finding_not_its_no_gpu_line(tmp_path: Path) -> None:
    after_sleep = ('time=2024-09-05T09:20:35.624+08:00 level=DEBUG source=gpu.go:533 msg="Unable to load cudart" '
                   'library=/usr/lib/ollama/libcudart.so.12 error="cudart init failure: 999"\n'
                   'time=2024-09-05T09:20:35.700+08:00 level=INFO source=gpu.go:377 msg="no compatible GPUs were '
                   'discovered"\n')
    _, data = _doctor(tmp_path, after_sleep)
    assert [(f["cause"], f["severity"]) for f in data["findings"]] == SEES_NONE
    assert "cuda_init_unknown" in str(data["findings"][0]["evidence"]) and "nvidia_uvm" in data["findings"][0]["fix"]
    refused = ('time=2025-01-01T00:00:00Z level=WARN source=amd_linux.go:61 msg="amdgpu is not supported (supported '
               'types:[gfx1030 gfx1100])" gpu_type=gfx1032 gpu=0 library=/usr/lib/ollama\n'
               'time=2025-01-01T00:00:01Z level=INFO source=gpu.go:377 msg="no compatible GPUs were discovered"\n')
    _, data = _doctor(tmp_path, refused)
    assert [(f["cause"], f["module"]) for f in data["findings"]] == [("framework_sees_no_module", "GPU 0 (gfx1032)")]
    assert "HSA_OVERRIDE_GFX_VERSION" in data["findings"][0]["fix"]
    cpu_jaxlib = ("I0301 10:00:00.000 1 xla_bridge.py:212] Unable to initialize backend 'gpu': Not found: Could not "
                  'find registered platform with name: "cuda". Available platform names are: Interpreter Host\n'
                  "W0301 10:00:00.001 1 xla_bridge.py:215] No GPU/TPU found, falling back to CPU.\n")
    _, data = _doctor(tmp_path, cpu_jaxlib)
    assert [(f["cause"], f["severity"]) for f in data["findings"]] == SEES_NONE
    assert "jax[cuda12]" in data["findings"][0]["fix"]


def test_llama_cpp_out_of_gpu_memory_is_the_applications_never_the_hardware(tmp_path: Path) -> None:
    text = ("ggml_cuda_init: found 1 CUDA devices:\n"
            "  Device 0: NVIDIA GeForce RTX 4060 Laptop GPU, compute capability 8.9, VMM: yes\n"
            "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 8281.63 MiB on device 0: cudaMalloc failed: out "
            "of memory\n"
            "ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size 8683921920\n")
    assert _causes(tmp_path, text) == [("application_out_of_memory", "info")]


def test_a_runtimes_no_gpu_beside_nvidia_smi_listing_them_is_its_own_view(tmp_path: Path) -> None:
    text = ("$ nvidia-smi -L\nGPU 0: NVIDIA GeForce RTX 3090 (UUID: GPU-0b7e6c1e-7a0a-4e6a-9d11-6f1c2d3e4f50)\n"
            "$ ./llama-cli --list-devices\n"
            "ggml_cuda_init: no CUDA devices found, CUDA will be disabled\n")
    assert _causes(tmp_path, text) == [("program_sees_no_listed_module", "info")]
