"""doctor on more applications' GPU lines (issue 46, FRW), written here in each tool's own format: TensorFlow's
driver/library mismatch is the driver's (critical), its refusal of a module below its minimum compute capability and
ONNX Runtime's missing CUDA provider are 'the framework sees no module' (warn), allocators running out of memory are
the application's (info), TensorRT's and ONNX Runtime's CUDA error numbers are judged by their code, ollama's own
INFO lines are read (never refused), and ROCr's HSA_STATUS_ERROR_OUT_OF_RESOURCES from hsa_init (rocminfo) is no
usable GPU (the user's permissions, an unsupported gfx8 GPU, or no agent), never an application's out of memory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.captures.test_captures_fresh_c import run_json
from tests.support.helpers import doctor_text

TF = "2026-11-02 10:14:03.112345: "
SEES_NONE = [("framework_sees_no_module", "warn")]
OOM = [("application_out_of_memory", "info")]
_FAILED_INIT = (
    "ROCk module is loaded\nhsa api call failure at: /build/rocminfo/src/rocminfo-rocm-5.3.0/rocminfo.cc:1148\n"
    "Call returned HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary resources. This "
    "error may also occur when the core runtime library needs to spawn threads or create internal OS-specific events.\n"
)


def _doctor(tmp_path: Path, text: str) -> tuple[int, dict[str, Any]]:
    return doctor_text(tmp_path, text, "app.log")


def _causes(tmp_path: Path, text: str) -> list[tuple[str, str]]:
    code, data = _doctor(tmp_path, text)
    assert code != 2, text
    return [(f["cause"], f["severity"]) for f in data["findings"]]


def test_tensorflow_lines_by_their_cause(tmp_path: Path) -> None:
    mismatch = (
        TF + "E tensorflow/stream_executor/cuda/cuda_diagnostics.cc:313] kernel version 470.82.0 does not "
        "match DSO version 535.54.3 -- cannot find working devices in this configuration\n"
    )
    assert _causes(tmp_path, mismatch) == [("driver_library_mismatch", "critical")]
    refused = (
        TF + "I tensorflow/core/common_runtime/gpu/gpu_device.cc:1700] Ignoring visible gpu device (device: 0, "
        "name: Quadro K2000, pci bus id: 0000:01:00.0, compute capability: 3.0) with Cuda compute capability "
        "3.0. The minimum required Cuda capability is 3.5.\n"
    )
    assert _causes(tmp_path, refused) == SEES_NONE
    bfc = (
        TF + "W tensorflow/core/common_runtime/bfc_allocator.cc:479] Allocator (GPU_0_bfc) ran out of memory trying "
        "to allocate 2.00GiB (rounded to 2147483648)requested by op MatMul\n"
    )
    assert _causes(tmp_path, bfc) == OOM
    exhausted = (
        "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with "
        "shape[8192,8192] and type float on /job:localhost/replica:0/task:0/device:GPU:0\n"
    )
    assert _causes(tmp_path, exhausted) == OOM


def test_tensorrt_and_onnxruntime_by_the_code_they_print(tmp_path: Path) -> None:
    trt = "[11/02/2026-10:14:03] [TRT] [W] CUDA initialization failure with error: {}. Please check your CUDA installation\n"
    assert _causes(tmp_path, trt.format(35)) == [("driver_runtime_mismatch", "critical")]
    assert _causes(tmp_path, trt.format(100)) == SEES_NONE
    assert (
        _causes(
            tmp_path,
            "[11/02/2026-10:14:03] [TRT] [E] 1: [defaultAllocator.cpp::allocate::20] Error Code 1: "
            "Cuda Runtime (out of memory)\n",
        )
        == OOM
    )
    ort = (
        "2026-11-02 10:14:03.112 [E:onnxruntime:, sequential_executor.cc:516 ExecuteKernel] Non-zero status code "
        "returned while running MatMul node. Status Message: CUDA failure 2: out of memory ; GPU=0 ; hostname=n1 ; "
        "expr=cudaMalloc((void**)&p, size);\n"
    )
    assert _causes(tmp_path, ort) == OOM
    lib = (
        "2026-11-02 10:14:03.112 [E:onnxruntime:Default, provider_bridge_ort.cc:1744 TryGetProviderInfo_CUDA] "
        "[ONNXRuntimeError] : 1 : FAIL : Failed to load library libonnxruntime_providers_cuda.so with error: "
        "libcublasLt.so.11: cannot open shared object file: No such file or directory\n"
    )
    assert _causes(tmp_path, lib) == SEES_NONE
    cpu = (
        "UserWarning: Specified provider 'CUDAExecutionProvider' is not in available provider names.Available "
        "providers: 'AzureExecutionProvider, CPUExecutionProvider'\n"
    )
    assert _causes(tmp_path, cpu) == SEES_NONE
    comfy = "torch.cuda.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out of memory)\n"
    assert _causes(tmp_path, comfy) == OOM


def test_ollama_info_lines_and_hashcat_attention_are_read(tmp_path: Path) -> None:
    info = (
        'time=2026-11-02T10:14:03.112Z level=INFO source=gpu.go:347 msg="detected GPUs" count=2 '
        "library=/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.14\n"
        'time=2026-11-02T10:14:03.112Z level=INFO source=server.go:105 msg="system memory" total="62.7 GiB"\n'
    )
    assert _causes(tmp_path, info) == []
    hashcat = (
        "clGetPlatformIDs(): CL_PLATFORM_NOT_FOUND_KHR\n\nATTENTION! No OpenCL, HIP or CUDA compatible platform found.\n"
    )
    assert _causes(tmp_path, hashcat) == SEES_NONE


def test_rocr_out_of_resources_from_hsa_init_is_no_usable_gpu(tmp_path: Path) -> None:
    code, data = _doctor(tmp_path, _FAILED_INIT)
    assert [(f["cause"], f["severity"]) for f in data["findings"]] == SEES_NONE and code == 1
    assert "/dev/kfd" in data["findings"][0]["fix"]
    gfx8 = _FAILED_INIT + "My laptop: AMD FX-9830P, AMD Radeon RX560\n"
    _, data = _doctor(tmp_path, gfx8)
    assert [(f["cause"], f["severity"]) for f in data["findings"]] == SEES_NONE
    assert "gfx8" in data["findings"][0]["fix"]
    as_root = (
        "$ rocminfo\n" + _FAILED_INIT + "$ sudo rocminfo\nROCk module is loaded\n=====================\n"
        "HSA System Attributes\n=====================\nRuntime Version:         1.1\n"
    )
    assert _causes(tmp_path, as_root) == [("device_permissions", "warn")]
    denied = (
        "ROCk module version 6.7.0 is loaded\nUnable to open /dev/kfd read-write: Permission denied\n"
        'alice is not member of "render" group, the default DRM access group.\n'
    )
    assert _causes(tmp_path, denied) == [("device_permissions", "warn")]


def test_a_hip_programs_out_of_memory_stays_the_applications(tmp_path: Path) -> None:
    assert _causes(tmp_path, "hipMalloc failed: hipErrorOutOfMemory\n") == OOM
    assert _causes(tmp_path, "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB.\n") == OOM
    assert _causes(tmp_path, "ROCk module version 6.7.0 is loaded\n") == []


def test_the_two_rocminfo_rows_of_batch_ac(tmp_path: Path) -> None:
    folder = Path(__file__).parents[1] / "data" / "captures" / "fresh_ac"
    _, user = run_json("doctor", "--from", str(folder / "rocminfo_rocm1070_vega64_user_vs_sudo.txt"))
    assert [f["cause"] for f in user["findings"]] == ["device_permissions"]
    _, rx560 = run_json("doctor", "--from", str(folder / "rocminfo_rocmarch901_rx560_out_of_resources.txt"))
    assert [(f["cause"], f["severity"]) for f in rx560["findings"]] == SEES_NONE
    assert "gfx8" in rx560["findings"][0]["fix"]


def test_more_failures_by_their_cause_and_start_up_lines_read(tmp_path: Path) -> None:
    rocm = (
        'time=2026-11-02T10:14:03.112Z level=WARN source=amd_linux.go:378 msg="unable to verify rocm library, will '
        'use cpu" error="no suitable rocm found, falling back to CPU"\n'
    )
    assert _causes(tmp_path, rocm) == SEES_NONE
    cudnn = (
        TF + "E tensorflow/compiler/xla/stream_executor/cuda/cuda_dnn.cc:417] Loaded runtime CuDNN library: 8.6.0 but "
        "source was compiled with: 8.9.4.  CuDNN library needs to have matching major version and equal or higher "
        "minor version.\n"
    )
    assert _causes(tmp_path, cudnn) == SEES_NONE
    xla = (
        "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 17179869 bytes.\n"
    )
    assert _causes(tmp_path, xla) == OOM
    assert _causes(tmp_path, "System is out of GPU memory\n") == OOM
    assert _causes(tmp_path, "AssertionError: Torch not compiled with CUDA enabled\n") == SEES_NONE
    start = (
        TF + "I tensorflow/core/platform/cpu_feature_guard.cc:182] This TensorFlow binary is optimized to use available "
        "CPU instructions in performance-critical operations.\n"
        + TF
        + "E external/local_xla/xla/stream_executor/cuda/cuda_dnn.cc:9261] Unable to register cuDNN factory: "
        "Attempting to register factory for plugin cuDNN when one has already been registered\n"
        "load_tensors: offloaded 33/33 layers to GPU\n"
        "WARNING: [Loader Message] Code 0 : terminator_CreateInstance: Failed to CreateInstance in ICD 1.  Skipping ICD.\n"
    )
    assert _causes(tmp_path, start) == []
    # a poster quoting TensorFlow's missing library is still read as their report (the start-up rule leaves it)
    quoted = (
        "Since the update my box prints '"
        + TF
        + "W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library "
        "'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared object file' and nothing uses the GPU.\n"
    )
    assert _causes(tmp_path, quoted) == SEES_NONE


def test_rocm_libraries_and_an_absent_kfd_are_no_usable_gpu(tmp_path: Path) -> None:
    no_kfd = "ROCk module is loaded\nUnable to open /dev/kfd read-write: No such file or directory\n"
    code, data = _doctor(tmp_path, no_kfd)
    assert [(f["cause"], f["severity"]) for f in data["findings"]] == SEES_NONE and "KFD" in data["findings"][0]["fix"]
    _, data = _doctor(tmp_path, no_kfd + _FAILED_INIT.split("\n", 1)[1])
    assert [(f["cause"], f["severity"]) for f in data["findings"]] == SEES_NONE and "KFD" in data["findings"][0]["fix"]
    assert _causes(tmp_path, "rocBLAS error: Could not initialize Tensile host: No devices found\n") == SEES_NONE
    code_object = (
        ":1:hip_code_object.cpp      :616 : 0123456789 us: [pid:1234 tid:0x7f]  Cannot find CO in the bundle "
        "/tmp/kernels.hsaco for ISA: amdgcn-amd-amdhsa--gfx1032\n"
    )
    assert _causes(tmp_path, code_object) == SEES_NONE


def test_clinfos_count_of_no_platform_behind_a_journal_or_compose_gutter(tmp_path: Path) -> None:
    line = "Number of platforms                               0"
    assert _causes(tmp_path, f"Nov 02 10:14:03 node1 clinfo[4242]: {line}\n") == SEES_NONE
    assert _causes(tmp_path, f"clinfo-1  | {line}\n") == SEES_NONE


def test_sycl_mps_and_a_tensorrt_engine_for_another_gpu(tmp_path: Path) -> None:
    sycl = "ggml_sycl_init: GGML_SYCL_FORCE_MMQ:   no\nggml_sycl_init: found 1 SYCL devices:\n"
    assert _causes(tmp_path, sycl) == []
    none = "  what():  No device of requested type available. -1 (PI_ERROR_DEVICE_NOT_FOUND)\n"
    assert _causes(tmp_path, none) == SEES_NONE
    mps = "RuntimeError: MPS backend out of memory (MPS allocated: 17.00 GB, other allocations: 1.50 GB).\n"
    assert _causes(tmp_path, mps) == OOM
    engine = (
        "[11/02/2026-10:14:03] [TRT] [E] 6: The engine plan file is generated on an incompatible device, expecting "
        "compute 8.6 got compute 8.9, please rebuild.\n"
    )
    assert _causes(tmp_path, engine) == [("application_cuda_error", "warn")]
