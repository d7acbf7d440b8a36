"""What marks a text as holding an inference runtime's or a compute API's lines (issue 46, dev_m_runtime): the
words of their device lines (captures/runtime_devices.py, api_devices.py) and of each status rule
(runtime_status.RULES). Kept apart from the readers so formats.py can name them without importing the readers
(issue 43: a text holding none of them never loads them)."""

from gpuvet.captures.app_lines import MARKS as APP_MARKS  # words only, no reader

# FX68D: the model servers' logs (captures/vllm_log.py, triton_log.py) and llama.cpp's loader (ggml_loads.py); the
# readers take their MARKS from here
VLLM_MARKS = (".py:", "Uvicorn running", "Started server process", "Application startup complete", "instructlab.")
TRITON_MARKS = ("Triton", "tritonserver", "InferenceService", "HTTPService", "Metrics Service", "NVML metrics",
                "memory_manager", "memory pool", "model_repository_manager", "model_lifecycle", "backend_factory")
GGML_LOAD_MARKS = ("offloaded", "buffer size")
RUNTIME_LINES = "runtime and framework device lines"  # the kind a file holding their lines is read as
RUNTIME = "runtime device list"  # the kind a file's GPUs are read as when a runtime's lines are the only list
RUNTIME_MARKS = ("ggml_", "Device: cuda", "Device: rocm", "Device: xpu",  # ComfyUI's device line
                 "Device 0:", "Device ID #", "* Device #", "Device Name", "-- Device #", "Found device",
                 "Created TensorFlow device", "Created device", "inference compute", "MiB free", "deviceName", "GPU id",
                 "compatible GPU", "no GPU detected", "no nvidia devices", "init failure", "cudaSetDevice err",
                 "amdgpu is not supported", "amdgpu too old", "rocm library found", "unsupported integrated GPU",
                 "unsupported Radeon", "unsupported GPU", "TensileLibrary", "cuInit", "failed: out of memory",
                 "failed to allocate", "ErrorOutOfDeviceMemory", "memory allocation of size", "allocatable device memory",
                 "CL_MEM_OBJECT_ALLOCATION_FAILURE", "Cannot dlopen", "Could not find cuda drivers", "CUDA kernel binaries",
                 "CUDA backend failed", "Jax plugin", "Num GPUs Available", "Unable to initialize backend", "jaxlib",
                 "No GPU/TPU found", "Number of platforms", "Number of devices", "clGetPlatformIDs", "clGetDeviceIDs",
                 "CL_PLATFORM_NOT_FOUND_KHR", "[opencl:", "[level_zero:", "[ext_oneapi_", "[host:",  # sycl-ls (R3B)
                 "nomodeset",  # booted so, no DRM device bound (compute_listing.unbound, R3B)
                 "No devices found/left", "compatible platform found", "Found no drivers", "Cannot create Vulkan instance",
                 "vkEnumeratePhysicalDevices", "ERROR_INCOMPATIBLE_DRIVER", "VRAM usage didn't recover",
                 "DeviceGetCount", "of CUDA devices", "number of GPUs",  # a failed count of the devices
                 "found no devices", "found no GPUs", "found no CUDA",  # a program's device detection finding none
                 "+ GPU #", "GB VRAM",  # the miners' device lists (runtime_devices._miner)
                 "Board name:", "Device Topology:", "Max compute units:", "CL_DEVICE_NAME",  # clinfo_forms (R14C)
                 *VLLM_MARKS, *TRITON_MARKS, *GGML_LOAD_MARKS, *APP_MARKS)
# a health check's or smoke test's verdict per node (captures/node_reports.py): a verdict word, a table's host or
# issue column, a roll-up's quoted reason, dshbak's rule
NODE_REPORT_WORDS = ("PASS", "FAIL", "Pass", "Fail", "pass", "fail", "HEALTHY", "ealthy", "ERROR", '":', "----", "Host",
                     "HOST", "Node", "NODE", "ISSUE", "Issue")
# the scheduler's and the container layer's words (captures/ops_layer.py: Slurm, Kubernetes, the device plugin, DCGM's
# host engine, CDI, a driver container; GEN2: Slurm's GRES refusals, kubelet's and the plugin's unhealthy devices,
# the GPU operator's validator)
OPS_MARKS = ("gres/", "gres.conf", "Gres=", "NodeName=", "Reason=", "REASON", "config-only", "autodetect", ".com/gpu",
             "llocatable:", "hostengine", "ost engine", "specified host", "CDI device", "No devices found.",
             "Incompatible strategy", "If this is a GPU node", "Health check failed", "Nvidia", "AcceleratedHardware",
             "load the kernel module", "load NVIDIA", "GRES", "generic resource", "chroot", "validate the driver",
             "driver is not ready", "GPU resource", "pre-installed driver",
             # OPS3 (captures/ops_logs.py, ops_agents.py): sinfo's and kubectl's tables, gpud, dcgm-exporter, the
             # device plugin's config echo, Ray and vLLM, a tool's assertion
             "STATE", "NODELIST", "READY", "Back-off restarting", "fatal:", "\"component\"", "fabric_manager_active",
             "\"caller\"", "| GPU UUID", "dcgm-exporter", "DCGM successfully", "Not collecting", "/metrics",
             "device-plugin", "failOnInitError", "migStrategy", "required GPUs", "placement group", "Ray cluster",
             "GPU available", "resource request", "Assertion `",
             # R4C (captures/cluster_texts.py, its MARKS): kubectl get ds, describe pod, Xid conditions and counts
             "DESIRED", "Init Containers:", "XidCritical", "XID 45", "Xid 45", "interfaces were detected",
             "manage_network_ifs",
             # R14D (captures/scheduler_devices.py, nhc_checks.py; their WORDS): HAMi's registered devices, ray status,
             # NHC's hardware checks and its 'Check … returned' lines
             "nvml registered device", "start working on the devices", "node(s) with resources", "Autoscaler status",
             "Cluster status", "check_hw_", "check_nv_", "node-mark-", "Node Health Check", "Running check:",
             # R9C (captures/health_events.py, its WORDS): NVSentinel's health monitors
             "health-monitor", "\"isHealthy\"", "nvsentinel",
             # R5B (captures/exporter_text.py, its MARKS): a non-GPU exporter's Prometheus text
             "# TYPE ", "# HELP ", "dcgm.service", "hostengine.service", "DCGM service",
             # R3A (captures/job_view.py, its MARKS): pyxis/enroot, cgroup.conf, a cgroup's device filter
             "pyxis", "enroot", "98-nvidia", "Command not found: nvidia-container-cli", "ConstrainCores",
             "ConstrainDevices", "cgroup.conf", "cgroup_device",
             "DeviceAllow", "DevicePolicy", "No devices", "busy or unavailable",
             # R8B (captures/accel_runtime.py): nrtd, tpu-info, kubelet's lines of any vendor's plugin, gpud's fabric
             "nrtd", "NRTD:", "TDRV:", "[hal]", "NRT_", "NRT:", "TPU v", "Libtpu", "ListAndWatch", "unhealthy devices",
             "did not terminate", "fabric state",
             # R12A (captures/fabric_tools.py, its MARKS; slurm_nodes.py): the fabric's test tools, sinfo -o with '|'
             "CCW_BER", "cxibwcheck", "dgnettest", "increased during the run", "Cable High Temperature",
             "Uncorrected codewords", "show chassis", "Hardware inventory:", "must be run on at least", "|STATE",
             "test bandwidth low",
             # R13B (captures/fabric_counters.py, its MARKS): ibdiagnet PM, UFM, cxi errors, quoted NET/IB, journal head
             "Lid=0x", "\", {", "C_EC_", "EE error:", "Got completion with error", "segfault at", "-- Logs begin at",
             "-- Journal begins at", "-- No entries --",
             *NODE_REPORT_WORDS)  # a health check's or smoke test's verdict per node (node_reports.WORDS)
# captures/side_tables.py: show_gids, ethtool's failures, mthreads-gmi, dcgmi dmon -l, and (R11C) dcgmi stats' process
# table and the gddr6 VRAM temperature tool's lines
SIDE_MARKS = ("n_gids_found", "show_gids", "Cannot get ", "Cannot set ", "mthreads-gmi", "Field ID", "_violation",
              "Execution Stats", "Performance Stats", "process info for PID", "VRAM Temps", " GDDR6 (",
              # issue 46 (FX68A): dcgmi modules -l and dcgmproftester (captures/dcgm_tools.py's MARKS, the same)
              "List Modules", "Module ID", "TestField", "dcgmproftester", "CU_DEVICE_ATTRIBUTE_", "All Tests Passed",
              "statistics for job")
