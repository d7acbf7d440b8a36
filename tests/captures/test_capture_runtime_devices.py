"""The GPUs inference runtimes and compute APIs list as they start (issue 46, dev_m_runtime), each on lines written
here in the tool's own format: llama.cpp's ggml CUDA, ROCm (2024's nameless and 2025's gfx spelling), Vulkan,
--list-devices and the loader's 'using device'; ollama's 'inference compute' (0.5 and 0.12 spellings, library=cpu
no GPU); TensorFlow's 'Found device' (1.x, 2.x) and 'Created device'; clinfo (long form, -l); hashcat -I (an alias
listed once) and its start-up list; vulkaninfo --summary (a CPU device left out). What each says went wrong is
read as app_errors' records of the runtime kinds."""

from __future__ import annotations

from gpuvet.captures.read import FileCapture, parse_text
from gpuvet.captures.runtime_status import CPU_BUILD, NO_DEVICE, REFUSED


def _read(text: str) -> FileCapture:
    return parse_text(text, "capture.txt")


def _nvidia(fc: FileCapture) -> list[tuple[str, str]]:
    assert fc.smi is not None
    return [(m.product, m.bus_id) for m in fc.smi.modules]


def _kinds(fc: FileCapture) -> list[str]:
    return [e.kind for e in fc.app_errors.errors]


def test_llama_cpp_cuda_devices_are_the_modules_with_nothing_judged() -> None:
    fc = _read("ggml_cuda_init: GGML_CUDA_FORCE_MMQ:    no\n"
               "ggml_cuda_init: found 2 CUDA devices:\n"
               "  Device 0: NVIDIA GeForce RTX 3090, compute capability 8.6, VMM: yes\n"
               "  Device 1: NVIDIA RTX A6000, compute capability 8.6, VMM: yes\n"
               "llm_load_tensors: offloaded 33/33 layers to GPU\n")
    assert [p for p, _ in _nvidia(fc)] == ["NVIDIA GeForce RTX 3090", "NVIDIA RTX A6000"]
    assert _kinds(fc) == [] and "runtime and framework device lines" in fc.kinds


def test_llama_cpp_rocm_devices_are_amd_modules_named_or_not() -> None:
    new = _read("ggml_cuda_init: found 2 ROCm devices:\n"
                "  Device 0: AMD Radeon RX 7900 XTX, gfx1100 (0x1100), VMM: no, Wave Size: 32\n"
                "  Device 1: AMD Radeon Pro W7800, gfx1100 (0x1100), VMM: no, Wave Size: 32\n")
    assert [m.name for m in new.amd.modules] == ["AMD Radeon RX 7900 XTX", "AMD Radeon Pro W7800"]
    old = _read("ggml_init_cublas: found 2 ROCm devices:\n"
                "  Device 0: , compute capability 9.0, VMM: no\n"
                "  Device 1: , compute capability 9.0, VMM: no\n")
    assert len(old.amd.modules) == 2 and old.smi is None


def test_llama_cpp_vulkan_list_devices_and_loader_lines_name_the_gpus() -> None:
    vulkan = _read("ggml_vulkan: Found 1 Vulkan devices:\n"
                   "ggml_vulkan: 0 = NVIDIA GeForce RTX 4070 (NVIDIA) | uma: 0 | fp16: 1 | warp size: 32 | "
                   "shared memory: 49152 | int dot: 1 | matrix cores: NV_coopmat2\n")
    assert [p for p, _ in _nvidia(vulkan)] == ["NVIDIA GeForce RTX 4070"]
    listed = _read("$ ./llama-cli --list-devices\nAvailable devices:\n"
                   "  CUDA0: NVIDIA GeForce RTX 4090 (24080 MiB, 23591 MiB free)\n"
                   "  CUDA1: NVIDIA GeForce RTX 4090 (24080 MiB, 23591 MiB free)\n")
    assert len(_nvidia(listed)) == 2
    assert listed.smi is not None and listed.smi.modules[0].fields["FB Memory Usage/Total"] == "24080 MiB"
    using = _read("llama_model_load_from_file_impl: using device CUDA0 (NVIDIA H100 80GB HBM3) - 80562 MiB free\n")
    assert [p for p, _ in _nvidia(using)] == ["NVIDIA H100 80GB HBM3"]


def test_ollama_inference_compute_lines_list_gpus_and_library_cpu_none() -> None:
    old = _read('time=2025-02-01T10:00:00.000Z level=INFO source=types.go:131 msg="inference compute" '
                'id=GPU-4c1f2a3b-1111-2222-3333-444455556666 library=cuda variant=v12 compute=8.9 driver=12.4 '
                'name="NVIDIA GeForce RTX 4060 Ti" total="15.6 GiB" available="14.9 GiB"\n')
    assert old.smi is not None and old.smi.cuda == "12.4"
    assert old.smi.modules[0].fields["GPU UUID"] == "GPU-4c1f2a3b-1111-2222-3333-444455556666"
    new = _read('time=2025-10-01T10:00:00.000Z level=INFO source=types.go:42 msg="inference compute" '
                'id=GPU-aa id2=x filter_id="" library=CUDA compute=8.6 name=CUDA0 description="NVIDIA GeForce RTX 3090" '
                'libdirs=ollama,cuda_v12 driver=12.8 pci_id=0000:01:00.0 type=discrete total="24.0 GiB" '
                'available="23.2 GiB"\n')
    assert _nvidia(new) == [("NVIDIA GeForce RTX 3090", "0000:01:00.0")]
    cpu = _read('time=2025-02-01T10:00:00.000Z level=INFO source=gpu.go:377 msg="no compatible GPUs were discovered"\n'
                'time=2025-02-01T10:00:00.001Z level=INFO source=types.go:130 msg="inference compute" id=0 library=cpu '
                'variant="" compute="" driver=0.0 name="" total="31.2 GiB" available="28.0 GiB"\n')
    assert cpu.smi is None and _kinds(cpu) == [NO_DEVICE]
    rocm = _read('time=2025-01-05T10:00:00.000Z level=INFO source=types.go:131 msg="inference compute" id=0 '
                 'library=rocm variant="" compute=gfx1100 driver=6.3 name=1002:744c total="24.0 GiB" available="23.9 '
                 'GiB"\n')
    assert [m.name for m in rocm.amd.modules] == ["AMD GPU 1002:744c (gfx1100)"]


def test_tensorflow_device_lines_of_each_version_name_model_and_bus() -> None:
    tf2 = _read("2021-03-01 10:00:00.000000: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1720] Found device 0 "
                "with properties: \npciBusID: 0000:65:00.0 name: GeForce RTX 2080 Ti computeCapability: 7.5\n"
                "coreClock: 1.545GHz coreCount: 68 deviceMemorySize: 10.76GiB deviceMemoryBandwidth: 573.69GiB/s\n")
    assert _nvidia(tf2) == [("GeForce RTX 2080 Ti", "0000:65:00.0")]
    tf1 = _read("2019-05-02 11:00:00.000000: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1433] Found device 0 "
                "with properties: \nname: Tesla V100-SXM2-16GB major: 7 minor: 0 memoryClockRate(GHz): 1.53\n"
                "pciBusID: 0000:00:1e.0\ntotalMemory: 15.78GiB freeMemory: 15.47GiB\n")
    assert _nvidia(tf1) == [("Tesla V100-SXM2-16GB", "0000:00:1E.0")]
    created = _read("I0000 00:00:1700000000.000000  123 gpu_device.cc:2022] Created device "
                    "/job:localhost/replica:0/task:0/device:GPU:0 with 22259 MB memory:  -> device: 0, name: NVIDIA "
                    "A10G, pci bus id: 0000:00:1e.0, compute capability: 8.6\n")
    assert _nvidia(created) == [("NVIDIA A10G", "0000:00:1E.0")]


def test_comfyui_start_up_names_its_device_and_vram() -> None:
    fc = _read("Total VRAM 24564 MB, total RAM 64215 MB\npytorch version: 2.5.1+cu124\nSet vram state to: NORMAL_VRAM\n"
               "Device: cuda:0 NVIDIA GeForce RTX 4090 : cudaMallocAsync\n")
    assert [p for p, _ in _nvidia(fc)] == ["NVIDIA GeForce RTX 4090"]
    rocm = _read("Total VRAM 24560 MB, total RAM 31930 MB\nDevice: cuda:0 AMD Radeon RX 7900 XTX : native\n")
    assert [m.name for m in rocm.amd.modules] == ["AMD Radeon RX 7900 XTX"]


def test_ollama_skipping_an_igpu_beside_the_gpu_it_uses_is_no_error() -> None:
    fc = _read('time=2025-02-01T10:00:00.000Z level=INFO source=amd_linux.go:296 msg="unsupported Radeon iGPU detected '
               'skipping" id=1 total="512.0 MiB"\n'
               'time=2025-02-01T10:00:00.100Z level=INFO source=types.go:131 msg="inference compute" id=0 library=rocm '
               'variant="" compute=gfx1100 driver=6.3 name=1002:744c total="24.0 GiB" available="23.9 GiB"\n')
    assert _kinds(fc) == [] and len(fc.amd.modules) == 1


def test_clinfo_long_form_and_list_name_gpus_not_cpus() -> None:
    long = _read("Number of platforms                               2\n"
                 "  Platform Name                                   NVIDIA CUDA\n"
                 "Number of devices                                 1\n"
                 "  Device Name                                     NVIDIA GeForce RTX 3080\n"
                 "  Device Vendor                                   NVIDIA Corporation\n"
                 "  Driver Version                                  535.154.05\n"
                 "  Device Type                                     GPU\n"
                 "  Device Topology (NV)                            PCI-E, 0000:0a:00.0\n"
                 "  Global memory size                              10487070720 (9.767GiB)\n"
                 "  Platform Name                                   Portable Computing Language\n"
                 "Number of devices                                 1\n"
                 "  Device Name                                     pthread-AMD Ryzen 9 5950X 16-Core Processor\n"
                 "  Device Type                                     CPU\n")
    assert _nvidia(long) == [("NVIDIA GeForce RTX 3080", "0000:0A:00.0")]
    assert long.smi is not None and long.smi.driver == "535.154.05"
    tree = _read("Platform #0: AMD Accelerated Parallel Processing\n `-- Device #0: gfx1030\n"
                 "Platform #1: Portable Computing Language\n `-- Device #0: cpu-haswell-AMD Ryzen 7 5800X\n")
    assert [m.name for m in tree.amd.modules] == ["gfx1030"]
    none = _read("$ clinfo\nNumber of platforms                               0\n")
    assert _kinds(none) == [NO_DEVICE]


def test_hashcat_backend_info_lists_each_gpu_once_and_its_run_list() -> None:
    info = _read("hashcat (v6.2.6) starting in backend information mode\n\nCUDA Info:\n==========\n\n"
                 "CUDA.Version.: 12.2\n\nBackend Device ID #1 (Alias: #2)\n"
                 "  Name...........: NVIDIA GeForce RTX 3060\n  Processor(s)...: 28\n"
                 "  Memory.Total...: 12044 MB\n  PCI.Addr.BDFe..: 0000:2b:00.0\n\n"
                 "OpenCL Info:\n============\n\nOpenCL Platform ID #1\n  Vendor..: NVIDIA Corporation\n\n"
                 "  Backend Device ID #2 (Alias: #1)\n    Type...........: GPU\n"
                 "    Name...........: NVIDIA GeForce RTX 3060\n    PCI.Addr.BDF...: 2b:00.0\n")
    assert _nvidia(info) == [("NVIDIA GeForce RTX 3060", "0000:2B:00.0")]
    run = _read("CUDA API (CUDA 12.2)\n====================\n"
                "* Device #1: NVIDIA GeForce RTX 4090, 23008/24563 MB, 128MCU\n"
                "* Device #2: NVIDIA GeForce RTX 4090, 23008/24563 MB, 128MCU\n\n"
                "OpenCL API (OpenCL 3.0 CUDA 12.2.148) - Platform #1 [NVIDIA Corporation]\n"
                "* Device #3: skipped\n* Device #4: skipped\n")
    assert len(_nvidia(run)) == 2
    assert _kinds(_read("hashcat (v6.2.6) starting\n\nNo devices found/left.\n")) == [NO_DEVICE]


def test_vulkaninfo_summary_lists_gpus_and_leaves_llvmpipe_out() -> None:
    fc = _read("Devices:\n========\nGPU0:\n\tapiVersion         = 1.3.277\n\tdriverVersion      = 550.54.14\n"
               "\tvendorID           = 0x10de\n\tdeviceType         = PHYSICAL_DEVICE_TYPE_DISCRETE_GPU\n"
               "\tdeviceName         = NVIDIA GeForce RTX 3070\n\tdriverName         = NVIDIA\n"
               "GPU1:\n\tapiVersion         = 1.3.267\n\tvendorID           = 0x10005\n"
               "\tdeviceType         = PHYSICAL_DEVICE_TYPE_CPU\n"
               "\tdeviceName         = llvmpipe (LLVM 15.0.7, 256 bits)\n")
    assert [p for p, _ in _nvidia(fc)] == ["NVIDIA GeForce RTX 3070"]
    assert fc.smi is not None and fc.smi.driver == "550.54.14"


def test_runtime_errors_read_as_their_kinds() -> None:
    no_gpu = "ggml_cuda_init: failed to initialize CUDA: no CUDA-capable device is detected\n"
    assert _kinds(_read(no_gpu)) == ["no_device"]  # app_errors' kind: CUDA's own words
    assert _kinds(_read("llama-server-1  | ggml_cuda_init: failed to initialize CUDA: unknown error\n")) == [
        "cuda_init_unknown"]
    assert _kinds(_read('time=2024-06-01T00:00:00Z level=INFO source=gpu.go:300 msg="Unable to load cudart" '
                        'library=/usr/lib/ollama/libcudart.so.12 error="cudart init failure: 35"\n')) == ["driver_too_old"]
    assert _kinds(_read('time=2025-01-01T00:00:00Z level=WARN source=amd_linux.go:61 msg="amdgpu is not supported '
                        '(supported types:[gfx1030 gfx1100])" gpu_type=gfx1032 gpu=0 library=/usr/lib/ollama\n')) == [
        REFUSED]
    jax = _read("I0101 00:00:00.000 1 xla_bridge.py:889] Unable to initialize backend 'rocm': module 'jaxlib' has no "
                "attribute 'rocm'\nW0101 00:00:00.001 1 xla_bridge.py:895] An NVIDIA GPU may be present on this "
                "machine, but a CUDA-enabled jaxlib is not installed. Falling back to cpu.\n")
    assert _kinds(jax) == [CPU_BUILD]
    oom = _read("ggml_backend_cuda_buffer_type_alloc_buffer: allocating 8281.63 MiB on device 0: cudaMalloc failed: "
                "out of memory\n")
    assert [(e.kind, e.module) for e in oom.app_errors.errors] == [("out_of_memory", "CUDA device 0 (process view)")]


def test_a_runtime_seeing_none_where_the_same_backend_lists_one_is_no_error() -> None:
    fc = _read("ggml_vulkan: No devices found.\nggml_vulkan: Found 1 Vulkan devices:\n"
               "ggml_vulkan: 0 = AMD Radeon RX 6800 (RADV NAVI21) (radv) | uma: 0 | fp16: 1 | warp size: 64\n")
    assert _kinds(fc) == [] and [m.name for m in fc.amd.modules] == ["AMD Radeon RX 6800 (RADV NAVI21)"]
