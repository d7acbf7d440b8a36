"""Issue 46 (FRW): more of the lines applications beyond PyTorch print when they could not use a GPU, as their own
sources print them, read by runtime_status's rules (these are added to its RULES; kept apart so runtime_marks can
name their words without loading a reader): TensorFlow's driver-library mismatch from cuda_diagnostics.cc ('kernel
version 470.82.0 does not match DSO version 535.54.3 -- cannot find working devices in this configuration'), its
refusal of a module below its minimum compute capability (gpu_device.cc 'Ignoring visible gpu device (…) with Cuda
compute capability 3.0. The minimum required Cuda capability is 3.5.'), its allocator's out of memory (bfc_allocator
'ran out of memory trying to allocate', 'ResourceExhaustedError: OOM when allocating tensor'); TensorRT's logger
('[TRT] CUDA initialization failure with error: 35', 'Error Code 1: Cuda Runtime (out of memory)'); ONNX Runtime's
CudaCall ('CUDA failure 2: out of memory ; GPU=0 ; hostname=…'), its CUDA provider library not loading and its
'Specified provider 'CUDAExecutionProvider' is not in available provider names'; PyTorch's caching allocator's
'OutOfMemoryError: Allocation on device 0 would exceed allowed memory' (ComfyUI); and ollama's own slog lines of
no error ('level=INFO source=gpu.go:347 msg="detected GPUs"'), read so a server log of them is never refused. Each
rule: (kind, pattern, tool, backend), the kind an app_errors kind or runtime_status's."""

from __future__ import annotations

# kinds runtime_status names (its NO_DEVICE, CPU_BUILD, REFUSED, _BY_CODE, _IGNORED), spelled here as it spells them
SAID = "said"  # read where the tool printed it (claimed, no error); a poster's sentence quoting it is left to theirs
_NO_DEVICE, _CPU_BUILD, _REFUSED, _BY_CODE, _IGNORED = (
    "runtime_no_device",
    "runtime_cpu_only_build",
    "runtime_unsupported_gpu",
    "by code",
    "ignored",
)
RULES: tuple[tuple[str, str, str, str], ...] = (
    # TensorFlow/XLA cuda_diagnostics.cc: the kernel module's version and libcuda's differ (the driver's own mismatch)
    ("nvml_mismatch", r"kernel version \S+ does not match DSO version \S+ -+ cannot find working devices", "TensorFlow", ""),
    (
        _REFUSED,
        r"Ignoring visible gpu device \(.{0,200}\) with (?:Cuda|CUDA) (?:compute capability|multiprocessor "
        r"count).{0,40}?\. The minimum (?:required Cuda capability|value) is",
        "TensorFlow",
        "TensorFlow, refused",
    ),  # its own backend: the GPU it lists on the same line is the one it refused
    (
        "out_of_memory",
        r"Allocator \(GPU_\d+_bfc\) ran out of memory trying to allocate|ResourceExhaustedError: OOM when "
        r"allocating tensor|\bCUDA failure 2: out of memory\b|Error Code \d+: Cuda Runtime \(out of memory\)"
        r"|OutOfMemoryError: Allocation on device \d+ would exceed allowed memory",
        "an application's allocator",
        "",
    ),
    # TensorRT's logger: the CUDA runtime's error number at its initialisation (35 a driver too old, 100 no device)
    (_BY_CODE, r"\[TRT\].{0,20}CUDA initialization failure with error:? (\d+)", "TensorRT", ""),
    # ONNX Runtime's CudaCall: 'CUDA failure 100: no CUDA-capable device is detected ; GPU=0 ; hostname=…'
    (_BY_CODE, r"\bCUDA failure (100|35|803|804|999|3): [^;]{3,120};\s*GPU=\d+", "ONNX Runtime", ""),
    (
        "framework_no_libs",
        r"Failed to load library libonnxruntime_providers_(?:cuda|tensorrt|rocm|migraphx)\.so with "
        r"error",
        "ONNX Runtime",
        "",
    ),
    (
        _CPU_BUILD,
        r"Specified provider '(?:CUDA|ROCM|TensorRT|MIGraphX)ExecutionProvider' is not in available provider "
        r"names",
        "ONNX Runtime",
        "",
    ),
    ("framework_no_libs", r"unable to verify rocm library, will use cpu", "ollama", ""),
    # XLA's cuDNN check: the cuDNN loaded is older than the one the build was compiled with (an installation's)
    ("framework_no_libs", r"Loaded runtime CuDNN library: \S+ but source was compiled with: \S+", "TensorFlow", ""),
    (
        "out_of_memory",
        r"RESOURCE_EXHAUSTED: Out of memory while trying to allocate \d+ bytes"
        r"|System is out of GPU (?:and shared host )?memory",
        "an application's allocator",
        "",
    ),
    ("cuda_runtime_error", r"Failed to create CUDA context \(\w", "Blender", ""),  # cuda_assert's context failure
    # FX68D: vLLM's memory profile leaving nothing for the KV cache (worker.py, gpu_worker.py raise ValueError), and
    # the KV cache too small for one request of the model's length (kv_cache_utils.py): the GPU's memory ran out
    (
        "out_of_memory",
        r"No available memory for the cache blocks|is larger than the maximum number of tokens that can be stored in "
        r"KV cache|(?:memory is|GiB KV cache is) needed, which is larger than the available KV cache memory",
        "vLLM",
        "",
    ),
    (_CPU_BUILD, r"Torch not compiled with CUDA enabled", "PyTorch", ""),
    # ROCm's libraries finding no GPU, or none they have code for: rocBLAS's Tensile host with no device, and the HIP
    # runtime's log (AMD_LOG_LEVEL) finding no code object for the GPU's ISA in the program's bundle
    (_NO_DEVICE, r"rocBLAS error: Could not initialize Tensile host: No devices found", "rocBLAS", "HIP"),
    (_REFUSED, r"Cannot find CO in the bundle \S+ for ISA: \S*gfx\w+", "HIP", ""),
    # SYCL (llama.cpp's SYCL backend, oneAPI programs): the runtime found no device of the type asked for
    (_NO_DEVICE, r"No device of requested type available\.? .{0,40}(?:PI|UR)_ERROR_DEVICE_NOT_FOUND", "SYCL", "SYCL"),
    # PyTorch's Apple MPS allocator; TensorRT's engine built on another GPU (no kernels for this one)
    ("out_of_memory", r"MPS backend out of memory \(MPS allocated", "PyTorch (MPS)", ""),
    (
        "no_kernel_image",
        r"\[TRT\].{0,30}engine plan file is generated on an incompatible device, expecting compute [\d.]+ got",
        "TensorRT",
        "",
    ),
    # the applications' own start-up lines of no error: read, nothing judged (a paste of them is not refused):
    # TensorFlow's and XLA's INFO and WARNING records ('2026-11-02 10:14:03.112345: I tensorflow/….cc:182] …') and the
    # cuDNN/cuFFT/cuBLAS factory registration every TensorFlow 2.15+ start prints as an error, llama.cpp's loader,
    # the Vulkan loader's own messages, hashcat's kernel-timeout warning
    (
        SAID,
        r"\b\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}: [IW] [\w./-]+\.cc:\d+\] |Unable to register cu(?:DNN|FFT|BLAS) factory: "
        r"Attempting to register factory for plugin",
        "TensorFlow",
        "",
    ),
    (
        SAID,
        r"^\s*(?:load_tensors|llm_load_tensors|llama_kv_cache_init|llama_new_context_with_model|llama_context|"
        r"llama_model_loader|llm_load_print_meta|print_info):",
        "llama.cpp",
        "",
    ),
    # FX68D: ggml's build switches at CUDA init, llama.cpp's build and system lines, llama-server's start
    (
        SAID,
        r"^\s*(?:ggml_cuda_init: GGML_CUDA_\w{1,40}:\s{0,8}(?:yes|no)\s*$|build: \d{1,6} \((?:[0-9a-f]{6,40}|unknown)\) "
        r"with |system[ _]info: n_threads = \d|main: (?:binding port|HTTP server is listening|loading model|model loaded)"
        r"|srv\s{1,8}load_model: loading model)",
        "llama.cpp",
        "",
    ),
    (SAID, r"\[Loader Message\] Code \d+ :", "vulkaninfo", ""),
    (SAID, r"^\s*ggml_sycl_init: ", "llama.cpp", ""),
    (SAID, r"\* Device #\d+: WARNING! Kernel exec timeout is not disabled", "hashcat", ""),
    # ollama's own slog lines of no error (server start, memory, the GPUs it looked for): read, nothing judged; last,
    # so a rule above reads a failure on such a line first; INFO and below only (another Go program's WARN is not read)
    (SAID, r"\blevel=(?:INFO|DEBUG|TRACE)\s+source=[\w./-]+\.go:\d+\s+msg=", "ollama", ""),
)
# the words a line holding one of RULES has (runtime_marks.RUNTIME_MARKS, runtime_status's anchors)
MARKS = (
    "does not match DSO version",
    "Ignoring visible gpu device",
    "_bfc) ran out of memory",
    "OOM when allocating",
    "CUDA failure",
    "Cuda Runtime (out of memory)",
    "would exceed allowed memory",
    "CUDA initialization failure",
    "libonnxruntime_providers_",
    "ExecutionProvider",
    ".go:",
    "unable to verify rocm library",
    "Loaded runtime CuDNN",
    "RESOURCE_EXHAUSTED",
    "out of GPU",
    "Failed to create CUDA context",
    "cache blocks",
    "KV cache",
    "Torch not compiled",
    ".cc:",
    "factory: Attempting",
    "load_tensors",
    "llama_",
    "llm_load",
    "print_info",
    "Loader Message",
    "exec timeout",
    "Tensile host",
    "Cannot find CO",
    "requested type available",
    "MPS backend out of memory",
    "engine plan file",
    "ggml_sycl_init",
    "build: ",
    "system_info",
    "system info",
    "main: ",
    "load_model",
)
