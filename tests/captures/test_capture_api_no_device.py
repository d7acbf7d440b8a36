"""A compute API's own listing tool saying it found no GPU (issue 46, TOOLS): clinfo's per-platform
'Number of devices 0', clGetDeviceIDs' CL_DEVICE_NOT_FOUND (-1), clGetPlatformIDs' -1001 alone on its line, and a
vulkaninfo whose only device is a CPU rasteriser (llvmpipe: no GPU Vulkan driver loaded). Each is read as a
runtime 'no device'; a healthy listing (the GPU's platform beside an empty Clover one, a GPU beside llvmpipe, the
NULL-platform probes) stays clear. Lines written here in the tools' formats."""

from __future__ import annotations

from gpuvet.captures.read import FileCapture, parse_text
from gpuvet.captures.runtime_status import NO_DEVICE


def _read(text: str) -> FileCapture:
    return parse_text(text, "capture.txt")


def _kinds(fc: FileCapture) -> list[str]:
    return [e.kind for e in fc.app_errors.errors]


_PLATFORM = ("Number of platforms                  1\n"
             "  Platform Name                      Example OpenCL Runtime\n"
             "  Platform Vendor                    Example Vendor\n\n"
             "  Platform Name                      Example OpenCL Runtime\n")


def test_clinfo_platform_with_zero_devices_is_no_device() -> None:
    assert _kinds(_read(_PLATFORM + "Number of devices                    0\n")) == [NO_DEVICE]


def test_clinfo_device_not_found_and_bare_1001_are_no_device() -> None:
    found = _read(_PLATFORM + "  clGetDeviceIDs(CL_DEVICE_TYPE_GPU)   -1 (CL_DEVICE_NOT_FOUND)\n")
    assert _kinds(found) == [NO_DEVICE]
    assert _kinds(_read("$ clinfo\nclGetPlatformIDs(-1001)\n")) == [NO_DEVICE]


def test_clinfo_gpu_platform_beside_an_empty_one_and_null_probes_is_clear() -> None:
    fc = _read("Number of platforms                  2\n"
               "  Platform Name                      Vendor GPU Runtime\n"
               "  Platform Name                      Clover\n\n"
               "  Platform Name                      Vendor GPU Runtime\n"
               "Number of devices                    1\n"
               "  Device Name                        NVIDIA RTX A2000\n"
               "  Device Type                        GPU\n\n"
               "  Platform Name                      Clover\n"
               "Number of devices                    0\n\n"
               "NULL platform behavior\n"
               "  clGetDeviceIDs(NULL, CL_DEVICE_TYPE_ALL, ...)   Success [XX]\n"
               "  clCreateContextFromType(NULL, CL_DEVICE_TYPE_CPU)  No devices found in platform\n")
    assert _kinds(fc) == []


def _vk(index: int, kind: str, name: str) -> str:
    return f"GPU{index}:\n\tdeviceType         = PHYSICAL_DEVICE_TYPE_{kind}\n\tdeviceName         = {name}\n"


def test_vulkaninfo_listing_only_a_cpu_rasteriser_is_no_device() -> None:
    fc = _read("Devices:\n========\n" + _vk(0, "CPU", "llvmpipe (LLVM 15.0.7, 128 bits)"))
    assert _kinds(fc) == [NO_DEVICE]
    assert fc.app_errors.errors[0].tool == "vulkaninfo"


def test_vulkaninfo_gpu_beside_llvmpipe_is_clear() -> None:
    fc = _read("Devices:\n========\n" + _vk(0, "DISCRETE_GPU", "AMD Radeon RX 6800 (RADV NAVI21)")
               + _vk(1, "CPU", "llvmpipe (LLVM 15.0.7, 128 bits)"))
    assert _kinds(fc) == []
