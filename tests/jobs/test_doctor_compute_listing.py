"""doctor on the compute runtimes' device listings (issue 46, R3B), written here in each tool's own format: sycl-ls
(its 2023+ '[backend:type:N]' lines and the older '[backend:N] TYPE : …' ones, which are no mpirun tag) and clinfo -l
listing only CPU and FPGA-emulation devices is the GPU's runtime missing (warn, naming the Intel packages `dpkg -l`
lacks), a listing with a Level Zero or OpenCL GPU is clear; rocminfo's /dev/kfd open failing ENOMEM and amdgpu's
'kfd not supported on this ASIC' are no usable GPU for ROCm (warn, the latter on the bus id the kernel names)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers import doctor_text

SEES_NONE = [("framework_sees_no_module", "warn")]
_NEW_CPU = (
    "[opencl:acc:0] Intel(R) FPGA Emulation Platform for OpenCL(TM), Intel(R) FPGA Emulation Device OpenCL 1.2  "
    "[2023.16.10.0.17_160000]\n"
    "[opencl:cpu:1] Intel(R) OpenCL, Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz OpenCL 3.0 (Build 0) [2023.16.10.0.17]\n"
)
_OLD_CPU = (
    "[opencl:0] ACC : Intel(R) FPGA Emulation Platform for OpenCL(TM) 1.2 [2021.12.9.0.24_005321]\n"
    "[opencl:0] CPU : Intel(R) OpenCL 3.0 [2021.12.9.0.24_005321]\n"
    "[host:0] HOST: SYCL host platform 1.2 [1.2]\n"
)
_NEW_GPU = "[level_zero:gpu:0] Intel(R) Level-Zero, Intel(R) Arc(TM) A770 Graphics 1.3 [1.3.26241]\n"
_OLD_GPU = "[ext_oneapi_level_zero:0] GPU : Intel(R) Level-Zero 1.3 [1.3.26516]\n"
_DPKG = (
    "ii  intel-opencl-icd     21.37.20939+i620~u20.04   amd64   Intel graphics compute runtime for OpenCL\n"
    "ii  ocl-icd-libopencl1:amd64   2.2.11-1ubuntu1   amd64   Generic OpenCL ICD Loader\n"
)
_TREE_CPU = (
    "Platform #0: Intel(R) FPGA Emulation Platform for OpenCL(TM)\n `-- Device #0: Intel(R) FPGA Emulation Device\n"
    "Platform #1: Intel(R) OpenCL\n `-- Device #0: Intel(R) Core(TM) i9-12900K\n"
)


def _doctor(tmp_path: Path, text: str) -> tuple[int, dict[str, Any]]:
    return doctor_text(tmp_path, text, "listing.txt")


def _found(tmp_path: Path, text: str) -> list[dict[str, Any]]:
    code, data = _doctor(tmp_path, text)
    assert code != 2, text
    return [f for f in data["findings"] if f["severity"] in ("warn", "critical")]


@pytest.mark.parametrize("listing", [_NEW_CPU, _OLD_CPU, "$ sycl-ls\n" + _OLD_CPU, _TREE_CPU, _TREE_CPU + _NEW_CPU])
def test_a_listing_without_a_gpu_is_the_gpu_runtime_missing(tmp_path: Path, listing: str) -> None:
    found = _found(tmp_path, listing)
    assert [(f["cause"], f["severity"]) for f in found] == SEES_NONE, listing
    assert "gpu_runtime_missing" in str(found[0]["evidence"])


def test_the_packages_beside_it_are_named(tmp_path: Path) -> None:
    found = _found(tmp_path, "$ sycl-ls\n" + _OLD_CPU + "\n$ dpkg -l | grep icd\n" + _DPKG)
    said = str(found[0]["evidence"])
    assert "not installed: intel-level-zero-gpu" in said and "intel-opencl-icd 21.37.20939" in said


@pytest.mark.parametrize("listing", [_NEW_CPU + _NEW_GPU, _OLD_CPU + _OLD_GPU, _NEW_GPU])
def test_a_listing_with_a_gpu_is_clear(tmp_path: Path, listing: str) -> None:
    assert _found(tmp_path, listing) == []


def test_an_mpirun_tag_is_still_a_tag(tmp_path: Path) -> None:
    """'[node01:12345] ' stays mpirun's prefix: only sycl-ls's own '[opencl:0] GPU : ' is kept."""
    code, data = _doctor(tmp_path, "[node01:12345] ggml_cuda_init: no CUDA devices found, CUDA will be disabled\n")
    assert code != 2 and [(f["cause"], f["severity"]) for f in data["findings"]] == SEES_NONE


_ENOMEM = (
    "ROCk module is loaded\nUnable to open /dev/kfd read-write: Cannot allocate memory\nroot is member of render group\n"
)
_INIT = (
    "ROCk module is loaded\nhsa api call failure at: /build/rocminfo/rocminfo.cc:1102\nCall returned "
    "HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary resources.\n"
)


def test_kfd_open_failing_enomem_is_no_usable_gpu(tmp_path: Path) -> None:
    found = _found(tmp_path, _ENOMEM)
    assert [(f["cause"], f["severity"]) for f in found] == SEES_NONE
    assert "rocr_kfd_enomem" in str(found[0]["evidence"]) and "ENOMEM" in found[0]["fix"]


@pytest.mark.parametrize(
    "kernel",
    [
        "[    2.721238] amdgpu 0000:02:00.0: kfd not supported on this ASIC\n",
        "[    3.101010] kfd kfd: amdgpu: 0000:05:00.0: GC IP 090400 not supported in kfd\n",
    ],
)
def test_an_asic_the_kfd_refuses_is_named_on_its_bus(tmp_path: Path, kernel: str) -> None:
    found = _found(tmp_path, _INIT + 'openat(AT_FDCWD, "/dev/kfd", O_RDWR|O_CLOEXEC) = -1 ENOMEM\n' + kernel)
    assert [(f["cause"], f["severity"]) for f in found] == SEES_NONE
    assert found[0]["module"] in ("0000:02:00.0", "0000:05:00.0") and "rocr_kfd_unsupported_asic" in str(found[0])


_CMDLINE = "BOOT_IMAGE=(hd0,gpt2)/vmlinuz-6.8.0 root=UUID=4269 ro nomodeset quiet\n"


@pytest.mark.parametrize(
    "shown",
    [
        "ls: cannot access '/dev/dri': No such file or directory\n",
        "[   79.371073] snd_hda_codec_hdmi hdaudioC0D2: No i915 binding for Intel HDMI/DP codec\n",
    ],
)
def test_nomodeset_with_no_drm_device_is_the_boot_configuration(tmp_path: Path, shown: str) -> None:
    found = _found(tmp_path, "$ cat /proc/cmdline\n" + _CMDLINE + shown)
    assert [(f["cause"], f["severity"]) for f in found] == SEES_NONE
    assert "gpu_kernel_not_bound" in str(found[0]["evidence"]) and "nomodeset" in found[0]["fix"]


def test_nomodeset_alone_judges_nothing(tmp_path: Path) -> None:
    """An NVIDIA host's usual 'nomodeset' says nothing of its GPUs."""
    code, data = _doctor(
        tmp_path, "[    0.000000] Command line: " + _CMDLINE + "crw-rw---- 1 root video 226, 0 /dev/dri/card0\n"
    )
    assert not [f for f in data["findings"] if f["severity"] in ("warn", "critical")]


def test_rocminfo_behind_a_test_logger_is_read(tmp_path: Path) -> None:
    """TheRock's CI: rocminfo's lines behind pytest's log prefix are rocminfo's own (no usable GPU, not memory)."""
    log = "ERROR    test_rocm_sanity:test_rocm_sanity.py:34 "
    text = f"{log}hsa api call failure at: /w/rocminfo/rocminfo.cc:1329\n"
    text += f"{log}Call returned HSA_STATUS_ERROR_OUT_OF_RESOURCES: x\n"
    found = _found(tmp_path, text)
    assert [(f["cause"], f["severity"]) for f in found] == SEES_NONE and "rocr_no_agent" in str(found[0]["evidence"])


def test_no_platform_is_placed_on_the_one_gpu_the_text_names(tmp_path: Path) -> None:
    bind = 'echo "0000:0a:00.0" > /sys/bus/pci/drivers/xe/bind\n'
    render = 'openat(AT_FDCWD, "/dev/dri/by-path/pci-0000:0a:00.0-render", O_RDWR|O_CLOEXEC) = 4\n'
    found = _found(tmp_path, bind + "Number of platforms                               0\n" + render)
    assert [(f["cause"], f["severity"], f["module"]) for f in found] == [(*SEES_NONE[0], "0000:0a:00.0")]
    two = render.replace("0a:00.0", "0b:00.0")
    assert _found(tmp_path, render + two + "Number of platforms                               0\n")[0].get("module") is None


def test_an_arc_module_on_a_reduced_bar_is_warned(tmp_path: Path) -> None:
    """i915's own words (intel_region_lmem.c): Arc without Resizable BAR, on the module it names."""
    log = (
        "[    6.388434] i915 0000:04:00.0: [drm] Failed to resize BAR2 to 8192M (-ENOSPC)\n"
        "[    6.388487] i915 0000:04:00.0: [drm] Using a reduced BAR size of 256MiB. Consider enabling "
        "'Resizable BAR' or similar, if available\n"
    )
    for text in (log, log.splitlines()[1] + "\n"):
        found = _found(tmp_path, text)
        assert [(f["cause"], f["severity"], f.get("module")) for f in found] == [
            ("module_bar_reduced_required", "warn", "0000:04:00.0")
        ], text
