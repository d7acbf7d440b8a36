"""The literals that gate captures/driver_state.py's two readers (formats.FORMATS' markers): a text holding none of
them is not given to them, and the module with their patterns is not imported (issue 43)."""

# inxi -G's device line, as its pattern reads it ('Device-1:', 'Card-2:'; issue 43: a bug report's 'Device-' alone is
# no marker its byte triples rule out, and its search read the whole text)
INXI = tuple(f"{name}-{d}" for name in ("Device", "Card") for d in range(10))
# what driver_state.parse reads: lspci -k's and lshw's driver lines, inxi -G's device lines, DKMS' status and build
# errors, modprobe's refusals, nvidia-persistenced, the NVIDIA installer, dpkg/akmods, mokutil, modinfo, ubuntu-drivers
STATE = ("Kernel driver in use", "Kernel modules", "*-display", "*-video", *INXI, "dkms", "DKMS",
         "could not insert", "Failed to insert module", "key not available", "Key was rejected", "with unavailable key",
         "unsigned module", "Failed to query NVIDIA devices", "ersistence", "modalias", "Bad return status", "SecureBoot",
         "Secure Boot", "appears to already be loaded", "/sbin/modprobe", "Building kernel modules",
         "build the NVIDIA kernel module", "error processing package", "akmods", "Building and installing",
         "Nouveau kernel driver", "kernel source tree", "nvidia.ko", "amdgpu.ko", "kernel module", "Secure boot")
# what driver_state.listing lists: lshw's display node, ubuntu-drivers' device block, inxi -G's device line
LISTED = ("*-display", "*-video", "modalias", *INXI)

# device_nodes.parse: ls' device nodes (ZX3), and absent_stack's missing /dev/nvidia* files and RDMA providers (R7A)
NODES = ("renderD", "/dev/dri", "by-path", "card0", "nvidiactl", "nvidia0", "/dev/nvidia", "libibverbs", "HCAs found",
         "ibv_dev", "IB devices", "ibpanic")
