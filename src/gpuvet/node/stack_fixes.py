"""What to do for an API error class of the non-NVIDIA stacks (issue 46, R14C): the driver-state, lost and
configuration classes of Level Zero, SYCL's Unified Runtime and PI, ROCm SMI, amd-smi and HLML
(knowledge/api_errors.yaml), each in its own stack's commands. The fault's action (knowledge/faults.yaml) is
written for any stack and names NVIDIA's tools first, which an Intel, AMD or Gaudi host does not have; the cause
and severity stay the fault's, only the fix is the stack's. Merged into vendor_tools.APP_ERROR_FIX. The
configuration class has none here: its fault's action (tool_component_unavailable) names Level Zero's metrics needs
(review 67b F11: one action per fault)."""

OTHER_STACK_FIX = {
    "ze_api_driver": "read the cited line (its ze_result_t names the refusal); check the Intel GPU driver (i915 or xe) "
                     "is loaded and bound (lspci -k, dmesg | grep -iE 'i915|xe ' for GuC or firmware errors), the "
                     "Level Zero loader and the GPU's runtime (level-zero, intel-level-zero-gpu / libze-intel-gpu1) "
                     "are installed at versions that match, and the user can open /dev/dri/renderD* (the render "
                     "group); xpu-smi discovery lists the devices once Level Zero initialises",
    "ze_api_lost": "the Intel GPU was lost (ZE_RESULT_ERROR_DEVICE_LOST): read the kernel log at that time for the "
                   "i915/xe driver's GPU hang, reset or wedged messages naming the device; xpu-smi health -d <id> and "
                   "xpu-smi diag -d <id> -l 2 on it; drain it, and replace it if it is lost again",
    "ur_api_driver": "the SYCL/Unified Runtime adapter was refused by the driver: check the GPU's runtime (Level "
                     "Zero's intel-level-zero-gpu, the OpenCL ICD) and driver are installed and match, and sycl-ls "
                     "lists the GPU; the kernel log (i915/xe) for its errors",
    "pi_api_driver": "the SYCL plugin was refused by the driver: check the GPU's runtime (Level Zero's "
                     "intel-level-zero-gpu, the OpenCL ICD) and driver are installed and match, and sycl-ls lists the "
                     "GPU; the kernel log (i915/xe) for its errors",
    "rsmi_api_driver": "rocm-smi's library was refused by the driver: check amdgpu is loaded (lsmod | grep amdgpu, "
                       "dmesg | grep -i amdgpu for its init failure), the ROCm release matches the driver, and the "
                       "user is in the video and render groups; amd-smi list or rocminfo should list the GPUs",
    "amdsmi_api_driver": "amd-smi's library was refused by the driver: check amdgpu is loaded (lsmod | grep amdgpu, "
                         "dmesg | grep -i amdgpu for its init failure), the ROCm release matches the driver, and the "
                         "user is in the video and render groups; amd-smi list should then list the GPUs",
    "hlml_api_driver": "hl-smi's library (HLML) was refused by the driver: check the habanalabs driver is loaded "
                       "(lsmod | grep habanalabs, dmesg for its errors), its version matches the installed software "
                       "(hl-smi -v), and no other process holds the accelerators",
    "hlml_api_lost": "a Gaudi accelerator stopped answering: read dmesg for the habanalabs driver's messages naming "
                     "it (a reset, a device lost); hl-smi -q on it; drain it and reset it (hl-smi -r), replace it if "
                     "it is lost again",
}
