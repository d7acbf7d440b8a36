"""The container layer's own error lines, each by what it relays (issue 46, GEN2): nvidia-container-cli prints one
line per failed stage, '<stage> error: <what failed>' (libnvidia-container src/cli/configure.c), and what failed
decides the cause, not the stage: NVML's 'driver not loaded' is the host's driver, 'load library failed:
libnvidia-ml.so.1' its missing user-space, 'insufficient permissions' the device files, 'gpu is lost' a module off
the bus, an RPC to the driver timing out or failing the driver's state, while 'unknown device' (a device asked for
that the host does not list), an image carrying the driver's files ('file creation failed: … file exists'), cgroup
and ldconfig set-up errors are the runtime's configuration. The NVIDIA Container Toolkit's hook run without its
runtime, a runtime named 'nvidia' that containerd or docker does not know, are configuration too.

app_errors reads these as kinds of its own (KINDS, tried before its generic container_no_gpu); what each means is
doctor's (doctor/capture_errors.KIND_CAUSES)."""

from __future__ import annotations

_CLI = r"nvidia-container-cli(?:\.real)?: "
# kind -> pattern (case-insensitive), in the order tried
KINDS: dict[str, str] = {
    "container_cli_no_nvml_lib": _CLI + r"\w+ error: load library failed: libnvidia-ml\.so",
    "container_cli_permissions": _CLI + r"\w+ error: nvml error: insufficient permissions",
    "container_cli_lost": _CLI + r"\w+ error: nvml error: gpu is lost",
    # NVML's other errors ('unknown error', 'timeout', 'gpu requires reset'), the CLI's RPC to its driver process
    # (src/rpc.c: 'driver rpc error: timed out', 'driver error: failed to process request')
    "container_cli_driver": _CLI + r"\w+ error: (?:nvml error: (?!driver not loaded|driver/library)|driver rpc error:|"
                                   r"driver error:)",
    # a device asked for that the host does not list (src/cli/common.c select_devices), the image's own copy of a
    # driver file, the cgroup, ldconfig and capability set-up (configure.c's other stages)
    "container_cli_config": _CLI + r"(?:device error: \S+: unknown device|mount error: (?:file creation failed|"
                                   r"failed to add device rules|mount operation failed)|container error:|"
                                   r"ldcache error:|permission error:|initialization error: open failed: "
                                   r"/proc/sys/kernel/overflow)",
    # the toolkit's hook called without its runtime (cmd/nvidia-container-runtime-hook/hook_config.go), its CLI not
    # installed (main.go), a runtime 'nvidia' the engine was never given (containerd CRI, dockerd)
    "container_runtime_config": r"invoking the NVIDIA Container Runtime Hook directly|couldn't find binary "
                                r"nvidia-container-cli in PATH|no runtime for \\?\"?nvidia\\?\"? is configured|"
                                r"unknown or invalid runtime name: nvidia",
}
# the words app_errors' search finds these lines by (lower case)
KEY_WORDS = ("nvidia-container-cli", "runtime hook directly", "no runtime for", "invalid runtime name")
