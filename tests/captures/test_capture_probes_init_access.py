"""Issue 46 (AGX1): batch AG's severity classes, on lines written in the tools' own words. A framework's no-GPU
line inside a container is the container's access; another vendor's stack probed on a host of NVIDIA's (Ray's
amdsmi import, OpenCL's ICD loader beside CUDA) is no finding; CUDA's initialization error (3), DCMI's init failure
(npu-smi ret -8005/-8020) and ROCr's out-of-resources at init are warns with their own cause."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import capture_findings, doctor_text

_TORCH = (
    "/usr/lib/python3/site-packages/torch/cuda/__init__.py:52: UserWarning: CUDA initialization: Found no "
    "NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from "
    "http://www.nvidia.com/Download/index.aspx"
)


def test_no_nvidia_driver_inside_a_container_is_the_containers_access(tmp_path: Path) -> None:
    for frame in (
        "$ docker run --rm -it --gpus all pytorch/pytorch python -c 'import torch'\n",
        "The host has the driver; the container does not have access to it:\n",
    ):
        assert capture_findings(tmp_path, frame + _TORCH + "\n") == {("container_gpu_access", None): "warn"}, frame
    assert capture_findings(tmp_path, _TORCH + "\n") == {("no_modules_visible", None): "critical"}


_AMD_ABSENT = "ERROR:root:Driver not initialized (amdgpu not found in modules)\n"
_V100 = "Number of GPUs available: 4\nGPU 0 specifications:\n  Name: Tesla V100-SXM2-16GB\n"
_OPENCL = "I0220 20:04:35.554978     6 opencl_util.cpp:760] Error fetching platforms:CL_PLATFORM_NOT_FOUND_KHR\n"
_CUEW = "I0220 20:04:35.545511     6 device_cuda.cpp:2096] CUEW initialization succeeded\n"


def test_another_vendors_stack_probed_on_an_nvidia_host_is_no_finding(tmp_path: Path) -> None:
    for text in (_AMD_ABSENT + _V100, _CUEW + _OPENCL):
        code, data = doctor_text(tmp_path, text)
        assert code == 0 and not data["findings"], text
        assert any("probing every vendor's stack" in n for n in data["notes"]), text
    # where nothing shows another vendor's GPU in use, the line is judged as before
    assert capture_findings(tmp_path, _AMD_ABSENT) == {("no_modules_visible", None): "critical"}
    assert capture_findings(tmp_path, _OPENCL) == {("framework_sees_no_module", None): "warn"}


def test_init_failures_are_warns_with_their_own_cause(tmp_path: Path) -> None:
    driver_state = {("api_reports_driver_state", None): "warn"}
    assert capture_findings(tmp_path, "cudaGetDeviceCount failed initialization error\n") == driver_state
    assert capture_findings(tmp_path, "cuInit returned CUDA_ERROR_NOT_INITIALIZED\n") == driver_state
    for ret in (
        "model initialized failed, because the device is used. ret is -8020",
        "module initialize failed. ret is -8005",
    ):
        text = f"root@node:/# npu-smi info\nDrvMngGetConsoleLogLevel failed. (g_conLogLevel=3)\ndcmi {ret}\n"
        assert capture_findings(tmp_path, text) == driver_state, ret
    hsa = (
        "ROCk module is loaded\nhsa api call failure at: /src/rocminfo/rocminfo.cc:1143\n"
        "Call returned HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary resources. "
        "This error may also occur when the core runtime library needs to spawn threads or create internal OS-"
        "specific events.\n"
    )
    assert capture_findings(tmp_path, hsa) == {("framework_sees_no_module", None): "warn"}
    denied = "Unable to open /dev/kfd read-write: Permission denied\n" + hsa  # rocminfo's own words for the user
    assert capture_findings(tmp_path, denied) == {("device_permissions", None): "warn"}
