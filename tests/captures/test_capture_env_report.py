"""Software-stack environment reports (issue 46, dev set dev_m_env as a class): PyTorch's and vLLM's collect_env,
check_env, the Hugging Face CLIs' env bullets, ds_report, nvcc --version, /proc/driver/nvidia/version with lsmod,
and nvidia-container-cli info are read for the GPUs, the driver and the CUDA/ROCm versions they name."""

from __future__ import annotations

from pathlib import Path

from gpuvet.captures import env_report
from gpuvet.captures.read import parse_text
from gpuvet.captures.text import clean
from tests.support.helpers import capture_json

_COLLECT = """\
Collecting environment information...
PyTorch version: 2.3.1+cu121
Is debug build: False
CUDA used to build PyTorch: 12.1
ROCM used to build PyTorch: N/A

OS: Rocky Linux 9.3 (Blue Onyx) (x86_64)
Python platform: Linux-5.14.0-362.el9.x86_64-x86_64-with-glibc2.34
Is CUDA available: True
CUDA runtime version: 12.4.99
CUDA_MODULE_LOADING set to: LAZY
GPU models and configuration:
GPU 0: NVIDIA L40S
GPU 1: NVIDIA L40S

Nvidia driver version: 550.54.15
cuDNN version: Could not collect
HIP runtime version: N/A

CPU:
Architecture:                    x86_64
Model name:                      Intel(R) Xeon(R) Gold 6430
Model:                           143
"""

_VLLM_SECTIONED = """\
==============================
       PyTorch Info
==============================
PyTorch version              : 2.6.0+cu124
Is debug build               : False
CUDA used to build PyTorch   : 12.4
ROCM used to build PyTorch   : N/A
==============================
       CUDA / GPU Info
==============================
Is CUDA available            : True
CUDA runtime version         : 12.4.131
GPU models and configuration : GPU 0: NVIDIA H100 80GB HBM3
Nvidia driver version        : 560.35.03
==============================
         vLLM Info
==============================
vLLM Version                 : 0.8.4
"""

_LISTING = "I0302 10:11:12.00000{} 811 nvc_info.c:657] listing device /dev/nvidia{} (GPU-0a1b2c3d-{} at 00000000:{}:00.0)\n"
_CONTAINER_CLI = "I0302 10:11:12.000001 811 nvc_info.c:766] requesting device information with ''\n" + \
    _LISTING.format(2, 0, "1111-2222-3333-444455556666", "3b") + \
    _LISTING.format(3, 1, "7777-8888-9999-aaaabbbbcccc", "d8") + """\
NVRM version:   535.129.03
CUDA version:   12.2

Device Index:   0
Device Minor:   0
Model:          Tesla V100-PCIE-32GB
Brand:          Tesla
GPU UUID:       GPU-0a1b2c3d-1111-2222-3333-444455556666
Bus Location:   00000000:3b:00.0
Architecture:   7.0

Device Index:   1
Device Minor:   1
Model:          Tesla V100-PCIE-32GB
Brand:          Tesla
GPU UUID:       GPU-0a1b2c3d-7777-8888-9999-aaaabbbbcccc
"""


def test_collect_env_lists_its_gpus_driver_and_cuda_not_the_cpu_section() -> None:
    fc = parse_text(_COLLECT, "collect_env.txt")
    assert fc.smi is not None and [m.product for m in fc.smi.modules] == ["NVIDIA L40S", "NVIDIA L40S"]
    assert (fc.smi.driver, fc.smi.cuda_runtime) == ("550.54.15", "12.1")
    assert "PyTorch collect_env" in fc.kinds and not fc.app_errors.errors


def test_vllm_sectioned_report_reads_its_aligned_keys() -> None:
    rep = env_report.read(clean(_VLLM_SECTIONED).lines)
    assert [g.name for g in rep.gpus] == ["NVIDIA H100 80GB HBM3"]
    assert rep.values["driver"] == "560.35.03" and rep.values["build_cuda"] == "12.4"
    assert rep.available is not None and rep.available[0] and "vLLM collect_env" in rep.tools


def test_container_cli_info_gives_bus_ids_even_where_a_block_is_cut(tmp_path: Path) -> None:
    data = capture_json(tmp_path, _CONTAINER_CLI, "inventory")
    modules = data["modules"]
    assert [(m["model"], m["bus_id"]) for m in modules] == [  # type: ignore[union-attr]
        ("Tesla V100-PCIE-32GB", "0000:3B:00.0"), ("Tesla V100-PCIE-32GB", "0000:D8:00.0")]
    software = data["software"]
    assert (software["driver_version"], software["cuda_driver_version"]) == ("535.129.03", "12.2")  # type: ignore[index]


def test_a_rocm_build_lists_its_amd_device_without_the_isa_suffix() -> None:
    text = ("PyTorch version: 2.5.1+rocm6.2\nCUDA used to build PyTorch: N/A\nROCM used to build PyTorch: "
            "6.2.41133-dd7f95766\nIs CUDA available: True\nGPU models and configuration: AMD Instinct MI210 "
            "(gfx90a:sramecc+:xnack-)\nNvidia driver version: Could not collect\nHIP runtime version: 6.2.41133\n")
    fc = parse_text(text, "rocm.txt")
    assert [m.name for m in fc.amd.modules] == ["AMD Instinct MI210"]
    assert fc.smi is None or not fc.smi.modules


def test_proc_version_with_lsmod_names_the_open_module_driver(tmp_path: Path) -> None:
    text = ("$ lsmod | grep nvidia\nnvidia_uvm           1892352  0\nnvidia_drm            118784  2\n"
            "nvidia              60518400  3 nvidia_uvm,nvidia_modeset\n$ cat /proc/driver/nvidia/version\n"
            "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  570.86.15  Release Build  "
            "(builder@host)  Tue Jan 21 10:00:00 UTC 2025\nGCC version:  gcc version 12.3.0 (GCC)\n")
    rep = env_report.read(clean(text).lines)
    assert rep.values["driver"] == "570.86.15" and rep.open_module
    assert rep.loaded == ["nvidia_uvm", "nvidia_drm", "nvidia"] and "lsmod" in rep.tools
    assert capture_json(tmp_path, text, "inventory")["software"]["driver_version"] == "570.86.15"  # type: ignore[index]


def test_nvcc_and_a_bare_smi_header_give_toolkit_driver_and_cuda() -> None:
    text = ("nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2024 NVIDIA Corporation\n"
            "Built on Thu_Sep_12_02:18:05_PDT_2024\nCuda compilation tools, release 12.6, V12.6.77\n"
            "Build cuda_12.6.r12.6/compiler.34841621_0\n"
            "NVIDIA-SMI 560.94                 Driver Version: 560.94         CUDA Version: 12.6\n")
    rep = env_report.read(clean(text).lines)
    assert (rep.values["nvcc"], rep.values["driver"], rep.values["driver_cuda"]) == ("12.6.77", "560.94", "12.6")
    assert len(rep.claimed) == 6


def test_check_env_repeats_a_model_line_for_each_index() -> None:
    text = ("sys.platform: linux\nCUDA available: True\nGPU 0,1,2,3: NVIDIA A10G\nCUDA_HOME: /usr/local/cuda\n"
            "NVCC: Cuda compilation tools, release 12.1, V12.1.105\nCUDA Driver Version: 535.183.01\n"
            "PyTorch: 2.2.0+cu121\n")
    rep = env_report.read(clean(text).lines)
    assert [g.name for g in rep.gpus] == ["NVIDIA A10G"] * 4 and rep.values["driver"] == "535.183.01"


def test_another_tools_driver_line_is_no_report() -> None:
    """nvbandwidth's 'CUDA Driver Version: 12080' (an integer) and -q's 'Driver Version' alone are not a report."""
    text = "CUDA Driver Version: 12080\nDriver Version: 570.124.06\n"
    assert env_report.read(clean(text).lines).tools == []


def test_hugging_face_env_bullets_read_the_build_and_its_answer() -> None:
    text = ("- `transformers` version: 4.44.0\n- Platform: Linux-6.5.0-x86_64-with-glibc2.35\n"
            "- PyTorch version (GPU?): 2.4.0+cu118 (True)\n- GPU type: NVIDIA GeForce RTX 4090\n")
    rep = env_report.read(clean(text).lines)
    assert rep.values["build_cuda"] == "11.8" and rep.available is not None and rep.available[0]
    assert [g.name for g in rep.gpus] == ["NVIDIA GeForce RTX 4090"]


def test_the_accelerator_form_in_backticks_names_the_build_driver_and_its_cuda() -> None:
    text = ("* `accelerate` version: `1.10.0`\n* PyTorch version (accelerator?): `2.8.0+cu126 (CUDA)`\n"
            "* GPU type: `NVIDIA L40S`\n* NVIDIA driver version: `560.35.05`\n* CUDA version: `12.6`\n")
    rep = env_report.read(clean(text).lines)
    assert (rep.values["build_cuda"], rep.values["driver"], rep.values["driver_cuda"]) == ("12.6", "560.35.05", "12.6")
    assert rep.available is not None and rep.available[0] and [g.name for g in rep.gpus] == ["NVIDIA L40S"]


def test_detectron2s_table_reads_its_gpu_rows_driver_and_answer() -> None:
    text = ("----------------------  ----------------------------------------------------\nsys.platform            linux\n"
            "PyTorch                 2.1.2+cu118 @/opt/conda/lib/python3.10/site-packages/torch\n"
            "GPU available           Yes\nGPU 0,1                 NVIDIA RTX A4000 (arch=8.6)\n"
            "Driver version          535.154.05\nCUDA_HOME               /usr/local/cuda\n")
    rep = env_report.read(clean(text).lines)
    assert [g.name for g in rep.gpus] == ["NVIDIA RTX A4000"] * 2 and rep.values["driver"] == "535.154.05"
    assert rep.values["build_cuda"] == "11.8" and rep.tools == ["detectron2 collect_env"]


def test_a_rocm_report_beside_rocm_smis_topology_leaves_the_gpus_to_it() -> None:
    """vLLM's collect_env on ROCm prints rocm-smi's tables under 'GPU Topology:': they list every GPU, where
    collect_env names the current device alone."""
    text = ("ROCM used to build PyTorch: 6.2.41133-dd7f95766\nIs CUDA available: True\nGPU models and configuration: "
            "AMD Instinct MI300X (gfx942:sramecc+:xnack-)\nGPU Topology:\n====== ROCm System Management Interface ======\n"
            "====== Weight between two GPUs ======\n       GPU0    GPU1\nGPU0   0       15\nGPU1   15      0\n")
    assert env_report.amd(clean(text).lines) is None


def test_the_banner_line_alone_in_its_old_and_610_wordings() -> None:
    old = env_report.read(clean("NVIDIA-SMI 390.116                Driver Version: 390.116\n").lines)
    new = env_report.read(clean("NVIDIA-SMI 610.21.01   KMD Version: 610.21.01   CUDA UMD Version: 13.2\n").lines)
    assert old.values == {"driver": "390.116"} and new.values == {"driver": "610.21.01", "driver_cuda": "13.2"}
