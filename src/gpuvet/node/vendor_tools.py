"""The vendor's own commands a fix points to, by the catalog's vendor of the modules judged.

A fix that tells an AMD operator to run ``nvidia-smi nvlink -s`` sends them nowhere; checks stay
vendor-free and ask here for the words (vendor words live in the catalog layer, gateways and
capture readers only)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from gpuvet.node.catalog import ModuleModel
from gpuvet.node.container_fixes import CONTAINER_FIX
from gpuvet.node.stack_fixes import OTHER_STACK_FIX


@dataclass(frozen=True)
class VendorTools:
    link_state: str  # shows each fabric link's state
    module_link: str  # one module's own links ({m}: the module)
    list_modules: str  # lists the modules the driver and the bus see
    lost_module_log: str  # what in the kernel log tells a lost module
    visible_env: tuple[str, ...] = ()  # variables that hide modules from the runtime
    device_files: tuple[str, ...] = ()  # what a process must open to use a module
    permissions_fix: str = ""
    driver_check: str = ""  # answers when the driver and its library are usable
    reset_module: str = ""  # resets one idle module (<index>: the module)
    set_power_limit: str = ""  # sets one module's power limit ({watts}; <index>: the module)


TOOLS = {
    "nvidia": VendorTools("nvidia-smi nvlink -s", "nvidia-smi nvlink -s -i <index>",
                          "`nvidia-smi -L`, `lspci | grep -i nvidia`", "the kernel log for Xid 79",
                          ("CUDA_VISIBLE_DEVICES",), ("/dev/nvidiactl",),
                          "add the user to the video group or fix /dev/nvidia* permissions (udev rules)",
                          "`nvidia-smi`", "nvidia-smi -r -i <index>", "nvidia-smi -i <index> -pl {watts}"),
    # ROCm honours all three; ROCR_ filters below HIP_, and HIP also reads CUDA_VISIBLE_DEVICES
    "amd": VendorTools("amd-smi xgmi (or rocm-smi --showtopo)", "amd-smi xgmi and amd-smi metric --ecc for it",
                       "`amd-smi list`, `lspci | grep -i -e amd -e ati`",
                       "the kernel log for amdgpu resets and RAS errors",
                       ("ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"), ("/dev/kfd",),
                       "add the user to the render and video groups (/dev/kfd, /dev/dri/renderD*), or fix their "
                       "udev rules", "`amd-smi list`", "amd-smi reset --gpureset -g <index>",
                       "rocm-smi -d <index> --setpoweroverdrive {watts}"),
}


UNKNOWN_VENDOR = TOOLS["nvidia"]  # a node of unknown modules gets NVIDIA's, as before


def tools_for(models: Iterable[ModuleModel]) -> VendorTools:
    """The one vendor's tools; NVIDIA's for a node of unknown modules (as before); both, joined,
    for a node that mixes vendors."""
    known = sorted({m.vendor for m in models} & set(TOOLS))
    if len(known) <= 1:
        return TOOLS[known[0]] if known else UNKNOWN_VENDOR
    parts = [TOOLS[v] for v in known]

    def joined(name: str) -> str:
        return " / ".join(getattr(t, name) for t in parts)

    return VendorTools(joined("link_state"), joined("module_link"), joined("list_modules"), joined("lost_module_log"),
                       tuple(dict.fromkeys(v for t in parts for v in t.visible_env)),
                       tuple(dict.fromkeys(d for t in parts for d in t.device_files)), joined("permissions_fix"),
                       joined("driver_check"), joined("reset_module"), joined("set_power_limit"))


# A PCIe link's trained width and speed, whoever made the module (the kernel's view of the slot).
PCIE_LINK_STATE = "lspci -vv (LnkSta)"

NO_ACCELERATOR_FIX = ("install the accelerator's driver: NVIDIA's driver with its NVML library (libnvidia-ml.so; "
                      "`nvidia-smi` must list the GPUs), or AMD's ROCm with the amdsmi Python package (`amd-smi "
                      "list`); or give --node PRESET to validate a simulated node, or --host-only to judge this "
                      "machine's CPUs and memory alone")


# Fixes for failures read from another vendor's benchmark (the knowledge base's actions are nccl-tests' and
# nvbandwidth's), keyed by the tool that printed the failure.
# p2p_unavailable read from TransferBench (ROCm): the knowledge base's action names nvidia-smi, the AMD tools instead
P2P_FIX_AMD = ("rocm-smi --showtopo (or amd-smi topology) shows which pairs have P2P and over which link; a PCIe "
               "topology without it is by design; otherwise check the IOMMU (off or iommu=pt on the kernel command "
               "line) and PCIe ACS in the BIOS, large BAR (Above 4G decoding, Resizable BAR), the ROCm environment "
               "(HSA_* variables, HIP_VISIBLE_DEVICES) and that the amdgpu driver and ROCm versions match")
# collective_test_failed read from rccl-tests or HCCL Test: the knowledge base's action is nccl-tests' (NCCL, CUDA, Xids)
COLLECTIVE_FIX = {
    "rccl-tests": "the error rccl-tests printed names the failing call: run again with NCCL_DEBUG=INFO (RCCL reads "
                  "it) to see the transport; check that the amdgpu driver and ROCm versions match, the IOMMU "
                  "(iommu=pt) and PCIe ACS settings, and the kernel log for amdgpu resets or RAS errors at that time",
    "hccl_test": "the error HCCL Test printed names the failing call (retcode 7 in init_hcclComm: hccl_test "
                 "processes left over on a node it talks to; stop them); check npu-smi info for every NPU's "
                 "health, and the HCCL logs (ASCEND_GLOBAL_LOG_LEVEL=1; plog under ~/ascend/log)",
}
CORRUPTION_FIX = {
    "rccl-tests": "a collective returned wrong data: read each module's ECC/RAS counts (amd-smi metric --ecc) and "
                  "the kernel log for amdgpu RAS errors; run again on subsets of the modules to find the one "
                  "(or the xGMI link) that corrupts data",
    "hccl_test": "a collective returned wrong data: read each NPU's health and ECC (npu-smi info) and the device "
                 "logs; run again on subsets of the NPUs to find the one (or the HCCS link) that corrupts data",
}


# The network adapters' own commands (InfiniBand HCAs and RoCE NICs, rdma-core and ethtool), for the
# NIC checks' fixes; {dev} is the RDMA device (mlx5_0), {netdev} its interface.
NIC_PORT_STATE = {"InfiniBand": "ibstat {dev} (or ibv_devinfo -d {dev})",
                  "Ethernet": "ibv_devinfo -d {dev} and ethtool {netdev} (its RoCE netdev: ibdev2netdev names it)"}
NIC_PORT_DOWN_FIX = {"InfiniBand": "check the cable/transceiver and the switch port ({state}); a subnet manager must "
                                   "be running for the port to go ACTIVE (sminfo)",
                     "Ethernet": "check the cable/transceiver and the switch port ({state}): ethtool shows the link "
                                 "and its partner"}
NIC_PCIE_FIX = ("lspci -vv -s {bus} (LnkSta against LnkCap): reseat the card, check the riser and the slot's lanes and "
                "generation in the BIOS; a slot of the card's generation and width gives it its full link")
NIC_RATE_FIX = ("a port trained below its rate: reseat or replace the cable/transceiver, check the switch port's "
                "speed and `mlxlink -d {dev} -p {port}` for its errors")
PEER_MEMORY_FIX = {"nvidia": "modprobe nvidia_peermem (and list it in /etc/modules-load.d/ so it loads at boot); "
                             "without it NCCL moves GPU data through host memory"}
NCCL_IB_HCA_FIX = "name devices this node has (ibv_devices lists them), or unset NCCL_IB_HCA"
NCCL_SOCKET_IFNAME_FIX = "name interfaces this node has (ip -br link lists them), or unset NCCL_SOCKET_IFNAME"

# The NVLink domain's fabric manager (NVSwitch boards and racks), for fabric_state's fix.
FABRIC_STATE_LOOK = "nvidia-smi -q -d FABRIC (State, Status, Health) on the node"
FABRIC_STATE_FIX = ("check the fabric manager: systemctl status nvidia-fabricmanager and its log "
                    "(/var/log/fabricmanager.log); a module stuck before Completed needs the fabric manager "
                    "running and, after a fabric manager restart under running modules, a module reset")

# A copy between two modules below its peers (or at 0) in a captured TransferBench (ROCm) or
# nvbandwidth (CUDA) table: both vendors' link and route tools, as either may have printed it.
PAIR_COPY_FIX = ("run that pair alone again (TransferBench or nvbandwidth, the pair's source and destination); if it "
                 "stays below its peers, check the link between the two (amd-smi xgmi / nvidia-smi nvlink -s -e, lspci "
                 "LnkSta) and the route the runtime takes (amd-smi topology / nvidia-smi topo -m)")
# issue 46: a peer copy over PCIe far below its Gen x width: the usual causes, the cheapest look first
PCIE_PAIR_FIX = ("the pair's copies cross PCIe: check that peer-to-peer is on and routed directly (nvidia-smi topo "
                 "-p2p r; ACS on the switch or root ports, `lspci -vvv | grep ACSCtl`, sends peer traffic up to the "
                 "root complex; an IOMMU in translated mode slows it: iommu=pt), that each link runs at its "
                 "generation and width (lspci LnkSta against LnkCap, nvidia-smi -q 'Link Width/Generation': a "
                 "downtrained link), and what lies between them (a PCIe switch, the CPU's root complex, a socket "
                 "link: nvidia-smi topo -m PIX/PHB/SYS)")
PAIR_COPY_DEAD_FIX = ("the copy between the two moved nothing: run that pair alone again (TransferBench or nvbandwidth); "
                      "if it stays at 0, check the link between them (amd-smi xgmi / nvidia-smi nvlink -s, lspci "
                      "LnkSta), peer access (amd-smi topology / nvidia-smi topo -p2p r) and the kernel log at that time")

# Copies between host memory and every module far below the design (a captured nvbandwidth or TransferBench
# host table): the cause is on the host's side of the PCIe links, not in one module's link nor in the fabric.
HOST_COPY_FIX = ("every module's host copies are slow alike, so look at the host side: run the test bound to each "
                 "module's NUMA node (numactl --cpunodebind=N --membind=N; nvidia-smi topo -m / amd-smi topology "
                 "give the node), check the IOMMU (iommu=pt, or off for the test) and pinned host memory, compare the "
                 "copy-engine (CE) test with the SM one (SM copies to host memory run slower by design), then each "
                 "module's PCIe link (lspci -vv LnkSta vs LnkCap) and the BIOS PCIe settings")

# validate --host-only found no module: where to look, and how to try gpuvet without one
HOST_ONLY_FIX = ("install the accelerator's driver and check that it lists the modules (`nvidia-smi`; on AMD "
                 "`amd-smi list`), or try --node hgx-h200-8")

# What to capture where a question had nothing to read (the formats doctor's and watch's readers
# take), keyed by what is missing.
GIVE = {"module_list": "nvidia-smi -q -x or topo -m for a captured node",
        "pcie_section": "nvidia-smi -q with its PCIe section",
        "ecc_sections": "nvidia-smi -q, whose ECC Mode and ECC Errors sections tell",
        "clock_reasons": "nvidia-smi -q or -q -d PERFORMANCE",
        "memory_state": "nvidia-smi -q or -q -d ROW_REMAPPER,PAGE_RETIREMENT,ECC",
        "link_state": "nvidia-smi nvlink -s / -e, lspci -vvv or nvbandwidth output",
        "dcgm_diag": "`dcgmi diag -r 3` text or -j JSON",
        "fabric_section": "nvidia-smi -q, or -q -d FABRIC, from an NVSwitch node",
        "tool_verdicts": "npu-smi info's Health column, amd-smi static --ras or metric --ecc",
        "nic_listing": "ibstat, ibv_devinfo, ibdev2netdev",
        "nic_ports": "ibstat or ibv_devinfo",
        "nic_rates": "ibstat",
        "smi_q": "`nvidia-smi -q > smi.txt`",
        "timed_log": "nvidia-smi --query-gpu=timestamp,…; dmon -o DT",
        "thermal_log": "an nvidia-smi log with temperature.gpu and power.draw, e.g. nvidia-smi "
                       "--query-gpu=timestamp,index,uuid,name,temperature.gpu,power.draw,utilization.gpu --format=csv "
                       "-l 60",
        "utf8_log": "nvidia-smi -f FILE",
        "slowdown_temp": "nvidia-smi -q shows it as GPU Slowdown Temp",
        "app_errors": "the application's error output (its traceback), deviceQuery or gpu-burn output",
        "dcgm_health": "`dcgmi health -s a` some minutes before, then `dcgmi health -c` (text or -j)",
        "module_models": "nvidia-smi -L or nvidia-smi nvlink -s beside it",
        "bench_hardware": "the log's header with its '#  Rank N … device N [bus] MODEL' lines, or the node's module "
                          "listing beside it (nvidia-smi -L, rocm-smi, npu-smi info), or --expect PRESET",
        "temperature_limits": "nvidia-smi -q -d TEMPERATURE,PERFORMANCE (the module's own slowdown and maximum "
                              "operating temperatures, and whether it throttles)"}

# The captures doctor reads, by what they hold: the kind a capture is known by (captures/ names
# them so) or the label cited where no file is named.
CAPTURED = {"nvlink_state": "nvidia-smi nvlink", "nvlink_errors": "nvidia-smi nvlink -e", "pcie": "lspci -vvv",
            "pcie_tool": "lspci", "dcgm_diag": "dcgmi diag", "dcgm_diag_json": "dcgmi diag -j",
            "smi_q": "nvidia-smi -q", "smi_qx": "nvidia-smi -q -x", "smi_q_label": "captured nvidia-smi -q",
            "smi_table": "nvidia-smi table", "smi_query": "nvidia-smi --query-gpu",  # formats.TABLE, QUERY
            "ecc_mode": "nvidia-smi -q ECC Mode/Current", "nvlinks_listed": "every link nvidia-smi lists"}

# A vendor tool's own verdict on its module (npu-smi's Health, amd-smi's RAS): the capture kinds
# it comes as, and what to read and do next (the cause's own fix is vendor-neutral).
TOOL_VERDICT_KINDS = {"npu-smi info": ("npu-smi info",), "amd-smi": ("amd-smi (static/metric/list)", "amd-smi --json"),
                      "xbutil": ("xbutil validate", "xbutil examine")}  # XRT's verdicts (captures/xrt_tools.py)
TOOL_VERDICT_FIX = {
    "npu-smi info": "read the NPU's alarm codes with `npu-smi info -t health -i <npu> -c <chip>` and look them up in "
                    "Huawei's health-code list; drain the NPU, reset it (`npu-smi set -t reset -i <npu> -c <chip>`) "
                    "and RMA it if the state returns",
    "amd-smi": "drain the module; read `amd-smi metric --ecc --ecc-blocks` and `amd-smi bad-pages` for the block and "
               "the pages; reset it (`amd-smi reset -G -g <gpu>`) so bad pages are retired; RMA it if uncorrectable "
               "errors return",
}

ON_NODE = "a run on the node itself"
# what would let each of doctor's checks judge something, in the words of the --from help
CAPTURE_FOR_CHECK: dict[str, str] = {
    "module_presence": "--expect", "wiring": "--expect with topo -m", "link_state": "nvidia-smi -q",
    "ecc_health": "nvidia-smi -q", "thermal_state": "nvidia-smi -q", "captured_memory": "nvidia-smi -q",
    "captured_clock_events": "nvidia-smi -q", "fabric_registration": "nvidia-smi -q",
    "other_processes": "nvidia-smi -q -x", "power_limit": "nvidia-smi -q -x", "clocks": "nvidia-smi -q -x",
    "p2p_path": "nvbandwidth output", "pair_bandwidth": "nvbandwidth output",
    "collective_results": "nccl-tests output", "benchmark_failures": "nccl-tests output",
    "xid_log": "the kernel log", "kernel_messages": "the kernel log", "hotplug_history": "gpuvet watch",
    "thermal_trend": "gpuvet watch", "clock_stability": "gpuvet watch", "captured_links": "nvlink -s/-e or lspci -vvv",
    "dcgm_diag": "dcgmi diag", "tool_verdicts": "amd-smi or npu-smi info", "nic_ports": "ibstat",
    "fabric_manager": "the fabric manager's journal", "rdma_bandwidth": "perftest output",
    "nccl_log": "an NCCL_DEBUG=INFO log", "captured_errors": "the application's error output, deviceQuery or gpu-burn",
    "dcgm_health": "dcgmi health -c", "nccl_environment": ON_NODE, "host_bottleneck": ON_NODE,
    "visibility": ON_NODE, "driver_runtime": ON_NODE, "gemm_agreement": ON_NODE, "compute_rate": ON_NODE,
}


# What an application's or a CUDA sample's error line asks the operator to do (captures/app_errors.py
# kinds); the cause named (doctor/capture_errors.py) keeps its own meaning, the fix is the runtime's.
# the formats (captures/formats.py names) of tools that list the modules by asking the driver: doctor's sign
# that the driver lists them, whatever a program said (doctor/capture_errors.py)
LISTING_TOOLS = ("nvidia-smi table", "nvidia-smi -q", "nvidia-smi -L", "nvidia-smi --query", "rocm-smi", "amd-smi",
                 "dcgmi discovery", "xpu-smi", "npu-smi")
APP_ERROR_FIX = {
    "hip_out_of_memory": "not a hardware fault: check the application (a smaller batch, model sharding, freeing cached "
                         "memory); amd-smi metric --mem-usage (or rocm-smi --showmeminfo vram) shows what holds memory",
    "hip_no_device": "check the framework's build first (torch.version.hip None is not a ROCm build), then that the "
                     "amdgpu driver and ROCm list the modules (amd-smi list, rocminfo), the user is in the video and "
                     "render groups, and HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES",
    **OTHER_STACK_FIX, **CONTAINER_FIX,  # R14C: the other vendors' API classes in their stack's commands; FX68F: WSL2's
    "rocm_no_driver": "the ROCm tools found no AMD GPU: the amdgpu kernel driver (its KFD) is not loaded or brought no "
                      "module up: lsmod | grep amdgpu and dmesg | grep -i amdgpu for its init failure; install the "
                      "amdgpu-dkms of the ROCm release (or the distribution kernel's amdgpu) and its firmware; in a "
                      "container pass /dev/kfd and /dev/dri",
    "ecc_uncorrectable": "find the module the job ran on (nvidia-smi -q -d ECC,ROW_REMAPPER shows its volatile "
                         "uncorrectable count and pending remaps); drain it, reset it (nvidia-smi -r -i <index>) so "
                         "the remap applies, run dcgmi diag -r 3; RMA it if errors return",
    "illegal_address": "most often the application's own bug: run it under compute-sanitizer, or with "
                       "CUDA_LAUNCH_BLOCKING=1 to name the kernel; read the kernel log at that time (Xid 13, 31 or 43 "
                       "is the application; 48, 63, 64, 79, 94 or 95 the module)",
    "launch_failure": "a kernel faulted: run the application under compute-sanitizer or with CUDA_LAUNCH_BLOCKING=1; "
                      "read the kernel log for an Xid at that time (13/31/43: the application; 48/79/94/95: the module)",
    "cuda_runtime_error": "read the error the program printed: the CUDA runtime names the call that failed; check "
                          "nvidia-smi lists the module and the kernel log for Xids at that time",
    "out_of_memory": "not a hardware fault: check the application (a smaller batch, model sharding, freeing cached "
                     "memory); nvidia-smi shows what else holds memory on the module",
    "no_device": "the runtime found no module: check `nvidia-smi` lists them (driver loaded), CUDA_VISIBLE_DEVICES "
                 "(empty or a wrong index hides them all), /dev/nvidia* inside a container (--gpus all), and the "
                 "kernel log for the driver's errors",
    "driver_too_old": "the driver is older than the CUDA runtime the program was built with: install a driver for "
                      "that CUDA major (nvidia-smi's 'CUDA Version' is the newest the driver takes), or a build of "
                      "the program for the driver's CUDA",
    "devices_busy": "the modules are in Exclusive_Process compute mode and another process holds them, or they are "
                    "prohibited: nvidia-smi -q -d COMPUTE shows the mode; stop the other process or set "
                    "nvidia-smi -c DEFAULT",
    # R3A (captures/job_view.py): a job's or container's own device view
    "job_gpu_busy": "the job's one GPU (CUDA_VISIBLE_DEVICES) is held by another process: nvidia-smi's process table "
                    "names it; a scheduler that gave it to two jobs is not isolating them (Slurm: gres.conf File= per "
                    "GPU or AutoDetect=nvml, cgroup.conf ConstrainDevices=yes), else a process runs outside the "
                    "scheduler; nvidia-smi -q -d COMPUTE shows an Exclusive_Process mode; not a hardware fault",
    "slurm_devices_unconstrained": "set ConstrainDevices=yes in cgroup.conf (gres.conf File= per GPU, or AutoDetect="
                                   "nvml) and restart slurmd: a job's tasks then see only their GPUs' device files, "
                                   "numbered from 0 as their containers see them; not a hardware fault",
    "container_hook_no_cli": "install the NVIDIA container library on the node (libnvidia-container-tools, which "
                             "provides nvidia-container-cli, or the nvidia-container-toolkit packages) so enroot's "
                             "98-nvidia hook can give pyxis/enroot containers their GPUs; nvidia-container-cli info "
                             "on the node checks it; not a hardware fault",
    "nvml_mismatch": "the loaded nvidia kernel module and the driver's user-space libraries are of different "
                     "versions (a driver upgrade without a reboot): reboot, or unload and reload the nvidia kernel "
                     "modules; cat /proc/driver/nvidia/version shows the loaded one",
    "nvml_unknown": "NVML cannot reach the devices: in a container the GPU device nodes were lost (a systemd "
                    "daemon-reload with the cgroup driver revokes them): restart the container, and see the NVIDIA "
                    "Container Toolkit's note on it; on the host check /dev/nvidia* and the kernel log",
    "listed_but_unseen": "the driver lists the modules (the capture's tool output shows them), so the program's own "
                         "view hid them: CUDA_VISIBLE_DEVICES empty or naming an index past the modules listed "
                         "(indices start at 0), a container started without them (--gpus, NVIDIA_VISIBLE_DEVICES), "
                         "or a framework build without CUDA/ROCm",
    "nvml_unknown_after_update": "the driver package was updated while the old nvidia kernel module stayed loaded: "
                                 "NVML cannot start until the module and the libraries match again; reboot, or "
                                 "unload and reload the nvidia kernel modules (cat /proc/driver/nvidia/version shows "
                                 "the loaded one)",
    "nvml_init_function_not_found": "NVML's library is not the loaded driver's version (NVML found no function it "
                                    "needs): ldconfig -p | grep libnvidia-ml and ls -l the libnvidia-ml.so.1 links: "
                                    "each must point at the version cat /proc/driver/nvidia/version shows; remove "
                                    "stale links or libraries left by an update, or reboot into the installed driver",
    "device_file_io_error": "the driver could not bring the GPU up when the program opened it (/dev/nvidiaN gave an "
                            "I/O error): dmesg | grep NVRM for RmInitAdapter failed, an Xid or the GPU fallen off the "
                            "bus at that time; nvidia-smi -q shows whether the module answers; reboot or reseat",
    "cuda_after_resume": "the CUDA context did not survive the suspend or hibernate: restart the program; if it "
                         "still fails, reload the nvidia modules (nvidia_uvm first) or reboot; to keep CUDA working "
                         "across sleep, enable nvidia-suspend.service, nvidia-hibernate.service and "
                         "nvidia-resume.service with NVreg_PreserveVideoMemoryAllocations=1 (the driver README's "
                         "power management chapter)",
    "nccl_cuda": "NCCL reports a CUDA error underneath: run again with NCCL_DEBUG=INFO and CUDA_LAUNCH_BLOCKING=1 to "
                 "see the call, and read the kernel log for Xids at that time",
    "torch_no_cuda": "python -c 'import torch; print(torch.version.cuda)': None is a CPU-only build (install a CUDA "
                     "build of PyTorch); otherwise check nvidia-smi lists the modules, that the driver's CUDA "
                     "Version is at least torch.version.cuda, and CUDA_VISIBLE_DEVICES",
    "smi_no_devices": "nvidia-smi reached the driver and it lists no module: lspci -nn | grep -i nvidia shows "
                      "whether the modules are on the bus; if they are, the kernel log (dmesg | grep -i -e NVRM -e "
                      "nvidia) says why the driver did not bring them up (RmInitAdapter, probe failures); inside a "
                      "container, start it with the modules (--gpus all, NVIDIA_VISIBLE_DEVICES)",
    "smi_no_driver": "the NVIDIA kernel module is not loaded: lsmod | grep nvidia; dkms status (a kernel update "
                     "without the module rebuilt for it); Secure Boot refusing an unsigned module (mokutil "
                     "--sb-state); then the kernel log (dmesg | grep -i nvidia) for why it did not load",
    "amd_smi_no_driver": "the amdgpu kernel module is not loaded (rocm-smi and amd-smi find no "
                         "/sys/module/amdgpu/initstate; clinfo and rocminfo then list no GPU): lsmod | grep amdgpu; "
                         "dkms status (amdgpu-dkms not built for the running kernel); sudo modprobe amdgpu and the "
                         "kernel log (dmesg | grep -i amdgpu) for why it did not load (Secure Boot, a blacklist or "
                         "nomodeset on the kernel command line); under WSL it is expected (ROCm reaches the GPU "
                         "through /dev/dxg): judge the GPU with rocminfo there",
    "nvml_permissions": "the user cannot open the GPU device files: run as a user in the video group, or fix "
                        "/dev/nvidia* permissions (inside a container: the runtime must pass the devices)",
    "system_not_ready": "on an NVSwitch system (HGX, DGX) CUDA waits for the fabric manager: systemctl status "
                        "nvidia-fabricmanager and its log; its version must equal the driver's exactly",
    "forward_compat": "the CUDA forward-compatibility libraries (cuda-compat) are in use on a GPU that does not "
                      "support them (GeForce and workstation GPUs): remove them from LD_LIBRARY_PATH or the "
                      "container image, or install a driver new enough for the program's CUDA",
    "device_assert": "an assert in a kernel failed: the application's own check (most often an index out of range, "
                     "e.g. a label >= the number of classes); CUDA_LAUNCH_BLOCKING=1 names the kernel",
    "no_kernel_image": "the program was not built for this GPU's compute capability: install a build that includes "
                       "it (PyTorch prints the sm_ list it supports), or build with TORCH_CUDA_ARCH_LIST / -gencode "
                       "for it",
    "launch_timeout": "the display watchdog stopped a long kernel (the GPU drives a display; Windows TDR): run on a "
                      "GPU without a display, or raise the watchdog's limit (TdrDelay)",
    "invalid_ordinal": "the program asked for a device index the runtime does not see: CUDA_VISIBLE_DEVICES lists "
                       "fewer modules, or the node has fewer (nvidia-smi -L lists them; one lost from the bus is "
                       "in the kernel log)",
    "nccl_timeout": "a collective waited past the watchdog's limit: one rank stopped (crashed, hung, or its "
                    "network stalled) and the others waited for it; find the first rank that failed (its own error "
                    "and the kernel log for Xids on its node), then run again with NCCL_DEBUG=INFO",
    "nccl_first_timeout": "the job's first collective never completed: the ranks never exchanged any data, so the "
                          "path between their GPUs is broken, not a rank that stopped later; inside a node most often "
                          "GPU-to-GPU P2P (the IOMMU or PCIe ACS redirecting peer traffic, a consumer GPU or a VM "
                          "without working P2P): run again with NCCL_P2P_DISABLE=1 (it completes: P2P is the cause) "
                          "and run cuda-samples' p2pBandwidthLatencyTest; between nodes NCCL_DEBUG=INFO names the "
                          "transport that stalled",
    "nccl_error": "NCCL reports a peer or system failure: the first rank's own error names it (a process that "
                  "exited, a socket or InfiniBand error); run again with NCCL_DEBUG=INFO on every rank",
    "container_no_gpu": "the container runtime cannot give the container the GPUs: check the host first "
                        "(nvidia-smi lists them), then the NVIDIA Container Toolkit (installed, and the runtime "
                        "configured: nvidia-ctk runtime configure) and --gpus all / the device request",
    "container_cli_no_nvml_lib": "nvidia-container-cli found no NVML library on the host (libnvidia-ml.so.1): the "
                                 "driver's user-space is not installed or not in the host's ldcache (ldconfig -p | "
                                 "grep nvidia-ml); with the GPU operator's driver container, the toolkit's root must "
                                 "point at /run/nvidia/driver",
    "container_cli_permissions": "nvidia-container-cli could not open the GPU device files: check /dev/nvidia* "
                                 "permissions on the host and a rootless engine's settings (no-cgroups in "
                                 "/etc/nvidia-container-runtime/config.toml)",
    "container_cli_lost": "NVML reports a GPU lost while the container started: read the host's kernel log for Xid 79 "
                          "or 'fallen off the bus' and run nvidia-smi on the host; drain the node and reset or "
                          "reboot",
    "container_cli_driver": "nvidia-container-cli could not use the host's driver (NVML's error, or its driver "
                            "process timing out or failing): run nvidia-smi on the host (it fails the same way when "
                            "the driver is the cause), read the kernel log for Xids and NVRM errors, check the driver "
                            "root the toolkit uses (the GPU operator's driver container must be ready), reboot after a "
                            "driver update",
    "container_cli_config": "the container runtime's set-up, not the GPUs: 'unknown device' is a GPU index or UUID the "
                            "host does not list (NVIDIA_VISIBLE_DEVICES, --gpus device=, the device plugin's ids); "
                            "'file exists' an image that carries the driver's own files (build it without them); "
                            "cgroup and ldcache errors the toolkit's config.toml (no-cgroups, ldconfig path) or an "
                            "older toolkit on a cgroup v2 host",
    "container_runtime_config": "the NVIDIA Container Runtime is not configured where it is asked for: nvidia-ctk "
                                "runtime configure --runtime=docker or containerd and restart it, so the runtime "
                                "'nvidia' exists (a RuntimeClass nvidia needs it in containerd's config); use "
                                "--runtime=nvidia or --gpus with the toolkit installed, not the hook alone",
    "operator_driver_not_ready": "the GPU operator's driver validation finds no working driver (nvidia-smi absent "
                                 "from the driver container's root, or failing): read the driver daemonset's own log "
                                 "(kubectl -n gpu-operator logs ds/nvidia-driver-daemonset -c nvidia-driver-ctr) for "
                                 "its build or load error (kernel headers missing for the node's kernel, a kernel the "
                                 "driver branch does not support, Secure Boot, nouveau loaded); with a driver "
                                 "installed on the host, set driver.enabled=false",
    "k8s_device_unhealthy": "the device plugin marked the GPU unhealthy (an Xid it watches, or NVML losing the "
                            "device): its log names the Xid and the device; read the node's kernel log and "
                            "nvidia-smi -q for it, drain and reset the GPU, then restart the device plugin pod (an "
                            "unhealthy mark is not cleared by itself)",
    # R8B (captures/accel_runtime.py): AWS Neuron's runtime daemon nrtd
    "neuron_device_reset": "the Neuron runtime's HAL request to the device timed out during its init and the runtime "
                           "reset the device: neuron-ls lists the devices, dmesg | grep -i neuron the driver's view; "
                           "keep aws-neuron-dkms and the runtime of one Neuron SDK release; stop and start the "
                           "instance (it moves to other hardware) if a device keeps timing out",
    "neuron_init_failed": "the Neuron runtime (nrtd) could not set up its devices: give it the devices (docker "
                          "--device=/dev/neuronN, AWS_NEURON_VISIBLE_DEVICES), install aws-neuron-dkms and the runtime "
                          "of one Neuron SDK release on the host (ls /dev/neuron*, lsmod | grep neuron), then restart "
                          "it; not a hardware fault",
    "neuron_hw_uncorrectable": "the Neuron device reported an uncorrectable HBM, NeuronCore or DMA error: its results are "
                               "lost; neuron-top / neuron-monitor show its hardware counters; stop and start the instance "
                               "(it moves to other hardware) and report the instance id to AWS if it returns",
    "neuron_hbm_repairable": "the device's HBM had an uncorrectable error the runtime repairs at the next device reset: "
                             "restart the workload (the runtime resets the device); report it to AWS if it returns",
    "neuron_collectives_hw": "a collective hung on a hardware error on this or another worker: read each worker's "
                             "runtime log for the NRT_EXEC_HW_ERR line that names its device, and stop and start that "
                             "instance",
    "neuron_core_busy": "another process holds the NeuronCore: neuron-top / neuron-ls list the processes on each core; "
                        "stop it or give each process its own cores (NEURON_RT_VISIBLE_CORES)",
    "framework_no_libs": "the framework found no usable CUDA libraries and runs on the CPU: install the CUDA and "
                         "cuDNN versions its build expects (or a build that bundles them), and check "
                         "LD_LIBRARY_PATH",
    "cuda_init_unknown": "CUDA could not start (an unknown error at initialisation): most often the driver's state, "
                         "not the module: nvidia_uvm not loaded or stale after a suspend (modprobe -r nvidia_uvm; "
                         "modprobe nvidia_uvm), /dev/nvidia-uvm missing inside a container, or a driver upgraded "
                         "without a reboot; nvidia-smi and the kernel log (Xid 79, RmInitAdapter) tell a lost module "
                         "apart",
    "rdma_no_gids": "show_gids lists no GID: no port has an RDMA address. In a pod, give it the RoCE netdev (an SR-IOV "
                    "VF, macvlan or host-device network, the RDMA shared device plugin) rather than the CNI's veth; on a "
                    "host, bring the RDMA netdev up with an IP address (ibdev2netdev, ip addr), then show_gids again",
    "nic_netdev_gone": "the netdev ethtool names is gone (No such device): ip link and ibdev2netdev show whether the "
                       "NIC's netdev came back under another name; dmesg | grep mlx5_core (or the NIC's driver) for its "
                       "unload, health or firmware error; a NIC left so usually needs the driver reloaded or the host "
                       "rebooted",
    "peer_unsupported": "the runtime cannot enable peer access (P2P) between the two modules: a PCIe topology without "
                        "P2P (consumer cards, GPUs under different root ports or CPUs), ACS or the IOMMU redirecting "
                        "peer traffic, or a VM: nvidia-smi topo -p2p r shows which pairs lack it; run without the "
                        "runtime's custom all-reduce (vLLM/sglang --disable-custom-all-reduce) and, if NCCL then "
                        "hangs, with NCCL_P2P_DISABLE=1; check ACS/IOMMU settings (iommu=pt) where P2P should work",
    "nvlink_uncorrectable": "the NVLink between modules failed under the job (not the application): the kernel log's "
                            "Xid 74 at that time names the module and link; nvidia-smi nvlink -s/-e shows the link "
                            "down or its error counters; reset the modules, then reseat or replace the bridge or "
                            "baseboard if the same link fails again",
    "smi_no_nvml_lib": "the program (nvidia-smi, the device plugin, DCGM) finds no NVML library (libnvidia-ml.so): "
                       "in a container or pod run it with the NVIDIA runtime (nvidia-ctk runtime configure, the "
                       "device plugin's runtimeClassName: nvidia, docker --gpus all) so the driver's libraries are "
                       "mounted; on the host the driver's user-space is not installed (or not in the loader's path: "
                       "ldconfig -p | grep nvidia-ml)",
    # FRW: ROCr's hsa_init returning OUT_OF_RESOURCES (captures/rocr_status.py): no usable GPU, not memory
    "rocr_no_agent": "ROCr's hsa_init found no GPU it can use (rocminfo's HSA_STATUS_ERROR_OUT_OF_RESOURCES is not "
                     "memory): check the user can open /dev/kfd and /dev/dri/renderD* (ls -l; the render and video "
                     "groups; sudo rocminfo working says it is the permissions), that this ROCm supports the GPU's gfx "
                     "target, and dmesg | grep -i kfd for the driver's KFD node; not a hardware fault",
    "rocr_user_denied": "rocminfo fails as the user but works as root (or cannot open /dev/kfd): the user cannot open "
                        "/dev/kfd or /dev/dri/renderD*: add the user to the render and video groups (sudo usermod -aG "
                        "render,video $USER, then log in again) or fix the device files' udev rule; not a hardware "
                        "fault",
    "rocr_no_kfd": "/dev/kfd is absent: amdgpu is loaded but brought up no KFD (ROCm's compute interface), so ROCr has "
                   "no GPU: dmesg | grep -i kfd says why (a GPU or an APU amdgpu's KFD does not support, a kernel "
                   "without CONFIG_HSA_AMD, amdgpu bound with no KFD node); in a container pass /dev/kfd in; not a "
                   "hardware fault",
    "rocr_unsupported_gpu": "ROCr's hsa_init found no GPU it supports: the capture names a gfx8 GPU (Polaris RX "
                            "460-590, Fiji, Tonga), which current ROCm releases do not support: use a ROCm build that "
                            "still includes gfx803 or the application's Vulkan or OpenCL backend; not a hardware fault",
    # R3B: /dev/kfd's open failing ENOMEM, amdgpu's KFD refusing the ASIC (rocr_status), the Intel GPU runtime missing
    "rocr_kfd_enomem": "/dev/kfd exists but opening it fails with ENOMEM (Cannot allocate memory): amdgpu's KFD could "
                       "not create the process's compute context, not a permission problem and not the GPU's memory: "
                       "dmesg | grep -i kfd says why (no GPU the KFD supports, 'kfd not supported on this ASIC'; an "
                       "IOMMU or HMM set-up failing; the kernel's amdgpu older or newer than the ROCm release); match "
                       "the kernel driver to ROCm (amdgpu-dkms) and reboot; not a hardware fault",
    "rocr_kfd_unsupported_asic": "amdgpu's KFD does not support this GPU ('kfd not supported on this ASIC' / 'not "
                                 "supported in kfd'): graphics work, but ROCm compute (rocminfo, HIP) has no device on "
                                 "it and /dev/kfd's open fails; use a GPU the kernel's KFD and ROCm support, or the "
                                 "OpenCL/Vulkan backend; an unsupported GPU, not a hardware fault",
    # R7A: /dev/kfd there but its open failing with another errno (rocr_status' KFD_OPEN)
    "rocr_kfd_open_failed": "/dev/kfd exists but its open fails (rocminfo's 'Unable to open /dev/kfd read-write: "
                            "<errno>'): amdgpu's KFD refused this process, so ROCm has no GPU although rocm-smi may "
                            "list it: in a container pass /dev/kfd and /dev/dri as devices (--device, not a bind "
                            "mount) and run the host's amdgpu with a KFD this ROCm supports; dmesg | grep -i kfd on "
                            "the host says why; not a hardware fault",
    # R7A: captures/absent_stack.py
    "nvidia_device_files_missing": "the NVIDIA device files are missing where the program runs: with the nvidia "
                                   "module loaded on the host, nvidia-modprobe -c0 -u (as root) creates them and its "
                                   "failure says why (dmesg); in a container, run it with --gpus all (or the NVIDIA "
                                   "runtime, the device plugin's resource) and check nvidia-smi on the host; not a "
                                   "fault of the GPU",
    "nvidia_device_files_absent": "no NVIDIA device files (/dev/nvidia*): the nvidia kernel module is most often "
                                  "not loaded (lsmod | grep nvidia; dkms status; dmesg | grep -i nvidia for why), or "
                                  "a container was not given the GPUs (--gpus all, the NVIDIA runtime)",
    "rdma_no_usable_device": "libibverbs opened no RDMA device: install rdma-core's user-space providers "
                             "(ibverbs-providers, libmlx5) where the program runs, the container image too; ls "
                             "/sys/class/infiniband_verbs and lsmod | grep mlx5_ib on the host; pass /dev/infiniband "
                             "into a container; then ibv_devinfo lists the HCAs",
    # R4A: KFD's sysfs topology with the CPU's node alone (captures/kfd_topology.py)
    "rocr_kfd_no_gpu_node": "KFD's topology (/sys/class/kfd/kfd/topology/nodes) holds the CPU's node alone: amdgpu "
                            "registered no GPU with KFD, so ROCm, HIP and OpenCL see no device although graphics may "
                            "work ('CRAT table not found' / 'Virtual CRAT table created for CPU' is the CPU's node and "
                            "normal), or KFD refused the GPU it found ('NOT added due to errors', 'PCI rejects atomics': "
                            "the slot's PCIe path does not route the atomics an older GPU needs; an APU's IOMMUv2 off): "
                            "dmesg | grep -i kfd for 'added device' or why not ('kfd not supported on this ASIC', a "
                            "kernel without CONFIG_HSA_AMD, amdgpu not bound to the GPU); move the GPU to a slot wired "
                            "to the CPU, enable the IOMMU, or use a GPU this ROCm supports; not a hardware fault",
    "gpu_runtime_missing": "the compute runtime lists only CPU and emulated devices (sycl-ls, clinfo -l: 'FPGA "
                           "Emulation Device', a CPU): the GPU's own runtime is not installed or not found: for Intel "
                           "GPUs install intel-opencl-icd and the Level Zero GPU driver (intel-level-zero-gpu, libze1; "
                           "dpkg -l | grep -e level-zero -e opencl-icd), check the user is in the render group and "
                           "/dev/dri/renderD* exists (i915 or xe bound); not a hardware fault",
    "gpu_kernel_not_bound": "the kernel was booted with 'nomodeset' and no GPU driver bound (no /dev/dri, HDA's 'No "
                            "i915 binding'): no render node, so OpenCL, Level Zero, Vulkan and ROCm see no GPU; remove "
                            "nomodeset from the boot command line (GRUB_CMDLINE_LINUX in /etc/default/grub, then "
                            "update-grub or grub2-mkconfig / grubby --remove-args=nomodeset) and reboot; not a hardware "
                            "fault",
    "runtime_no_device": "the runtime (llama.cpp, ollama, TensorFlow, JAX, OpenCL, Vulkan) found no GPU it can use: "
                         "check the host first (nvidia-smi or amd-smi lists the modules; the kernel log says why one "
                         "did not load), then the runtime's view: a build with the GPU backend (not CPU-only), "
                         "libraries that match the driver, CUDA_VISIBLE_DEVICES or HIP_VISIBLE_DEVICES, and inside a "
                         "container the GPUs passed in (--gpus all, /dev/kfd and /dev/dri)",
    "runtime_cpu_only_build": "the framework or runtime was installed without GPU support (a CPU-only jaxlib or "
                              "wheel): install its CUDA or ROCm build for the driver (pip install -U \"jax[cuda12]\", "
                              "the framework's GPU package); not a fault of the GPU",
    "runtime_unsupported_gpu": "the runtime found the GPU but does not support it (an AMD gfx target its ROCm "
                               "libraries were not built for, an integrated GPU, a compute capability below its "
                               "minimum): use a build or backend that includes it (the runtime's Vulkan backend), or "
                               "on Linux HSA_OVERRIDE_GFX_VERSION set to a supported target of the same family; not a "
                               "fault of the GPU",
    "gpu_burn_died": "gpu-burn's worker for this GPU stopped: read the kernel log for an Xid or 'fallen off the bus' "
                     "at that time and run dcgmi diag -r 3 on the module; a worker that never started (proc'd -1) "
                     "is often the build (compare.ptx for another architecture): rebuild gpu-burn for this GPU",
    "gpu_fryer_idle": "the GPUs ran no matrix multiply under gpu-fryer: read the kernel log for an Xid or 'fallen "
                      "off the bus' at that time and nvidia-smi for the GPUs' state (0 C, ERR!); a reset (nvidia-smi "
                      "-r) or a reboot usually restores them; then rerun gpu-fryer and dcgmi diag -r 3",
    # issue 46 (ASC): the Ascend runtime's return codes by class (captures/ascend_codes.py) and hccn_tool's NPU ports
    "acl_ecc": "drain the NPU the job ran on: npu-smi info -t ecc -i <npu> shows its HBM multi-bit and isolated-page "
               "counts, npu-smi info -t health -i <npu> -c 0 its fault code; reset it (npu-smi set -t reset -i <npu> "
               "-c 0) so the bad rows are isolated, and RMA it if multi-bit errors return",
    "acl_hardware": "drain the NPU: npu-smi info -t health -i <npu> -c 0 for its fault code and -t ecc for its HBM "
                    "errors; collect the device log (msnpureport) and the host's dmesg; reset the NPU and RMA it if "
                    "the error returns",
    "acl_link": "the NPU's HCCS/UB link between chips failed: npu-smi info -t health on both NPUs for their fault "
                "codes, then reset the NPUs (or the node); a link that fails again is the board's: contact the vendor",
    "acl_lost": "the NPU stopped answering the host (its task scheduler's heartbeat, the HDC channel): npu-smi info "
                "for its health, dmesg for the driver's devdrv/hdc lines, msnpureport for the device log; reset the "
                "NPU (npu-smi set -t reset) or reboot, and drain it if it happens again",
    "acl_collective": "the collective's peer failed or its retry ran out: read every rank's log for the earliest "
                      "error (the rank that failed first is the cause), then that node's NPUs (npu-smi info) and RoCE "
                      "ports (hccn_tool -i <npu> -link -g, -net_health -g)",
    "acl_timeout": "a task on the NPU did not finish in time: in a distributed job a rank that stopped (read every "
                   "rank's log for the earliest error, HCCL_EXEC_TIMEOUT); alone, the operator named in the plog "
                   "(ASCEND_GLOBAL_LOG_LEVEL=1, ~/ascend/log) or the NPU's health (npu-smi info)",
    "acl_exception": "a task on the NPU failed (an AI Core/AI CPU/vector core exception): most often the operator "
                     "(its inputs, the CANN and torch_npu versions, which must match); rerun with ASCEND_LAUNCH_BLOCKING=1 "
                     "to name it, and check npu-smi info -t health for the NPU's own fault code",
    "acl_driver": "the driver or runtime refused the device: check the NPU driver, firmware and CANN versions match "
                  "(npu-smi info, cat /usr/local/Ascend/driver/version.info), that no other process or container "
                  "holds the NPU (npu-smi info's process list), and dmesg for devdrv errors",
    "acl_no_device": "no NPU visible to the program: npu-smi info must list the NPUs; in a container pass "
                     "/dev/davinci<N>, /dev/davinci_manager, /dev/devmm_svm and /dev/hisi_hdc and mount the driver",
    "acl_permission": "the NPU's device files are not open to the user: run as a user in the HwHiAiUser group (the "
                      "driver's install user) or pass the devices to the container with their permissions",
    "acl_resources": "not a hardware fault: the NPU's memory or runtime resources ran out (a smaller batch, fewer "
                     "streams, free cached memory); npu-smi info shows each NPU's HBM use and the processes holding it",
    "acl_application": "the caller's own error (an argument, a context, a model file): read the [Error] line the "
                       "runtime printed under the code and the call it names; not the NPU's",
    "hccn_link_down": "the NPU's RoCE port is down while its peers are up: hccn_tool -i <npu> -optical -g (module "
                      "present, Los/LoL flags, power), reseat or replace the cable/optic, check the switch port; "
                      "hccn_tool -i <npu> -link_stat -g shows when it went down",
    "hccn_link_down_alone": "every NPU port read is down: a node that runs jobs across nodes needs them up (cables, "
                            "optics: hccn_tool -i <npu> -optical -g, the switch ports); a single-node host may have "
                            "none cabled",
    "hccn_optical_alarm": "the optical module reports loss of signal or lock, or a power outside its thresholds: "
                          "clean or replace the fibre and the module, check the far end's transmit power and the switch "
                          "port",
    "hccn_link_flap": "the port went down and came back: hccn_tool -i <npu> -link_stat -g for each change, -optical "
                      "-g for the module; reseat or replace the cable/optic, check the switch port's log",
}
# dcgmi health's incidents: where DCGM's message points, by system
DCGM_HEALTH_FIX = ("read DCGM's message for the system named: PCIe replays -> the module's PCIe link (lspci -vv "
                   "LnkSta, reseat); Memory -> nvidia-smi -q -d ECC,ROW_REMAPPER (reset or RMA); Thermal/Power -> "
                   "cooling and power delivery; InfoROM -> update or RMA; then dcgmi diag -r 3 on the module")


# issue 46 (SAFE, doctor/tool_leads.py): what to read and run next after a GPU tool's own failure verdict, by
# tool: its own detail first, then the check that tells the module from the host
TOOL_FAILURE_FIX = {
    "CUDA sample": "read the lines above 'Result = FAIL' for the CUDA call and its error; run deviceQuery and "
                   "nvidia-smi -q on the node; a CUDA error naming no device or driver mismatch is the host's set-up, "
                   "one on a single module is that module's",
    "nvidia-smi": "read dmesg for NVRM/Xid lines of the module at that time (sudo dmesg -T | grep -iE 'NVRM|Xid'); "
                  "run nvidia-smi -q and lspci -d 10de: -vv; reload the driver or reset the module, and drain it if "
                  "the error returns",
    "gpu-burn": "read the run's error counts per GPU and dmesg for Xid lines during it; rerun gpu-burn on the faulty "
                "GPU alone (-i N) and dcgmi diag -r 3; drain the module if errors repeat",
    "dcgmi": "read the failing row's detail (dcgmi diag -r 3 -v or -j; dcgmi health -c -j) for the GPU and the "
             "reason it names; rerun that test alone; drain the module if it fails again",
    "nvbandwidth": "read the lines above the assertion for the copy and the GPUs it ran between; rerun that test alone "
                   "(nvbandwidth -t <name>) and run dcgmi diag -r 2 on those GPUs; a data check that fails again is a "
                   "module or path corrupting copies",
    "amd-smi": "check the amdgpu module is loaded (lsmod | grep amdgpu, dmesg | grep amdgpu) and the user may open "
               "/dev/kfd and /dev/dri (the video and render groups); run amd-smi list again as root",
    "rvs": "read the failing action's lines in the rvs log (its GPU and the value against the target); rerun that "
           "module alone (rvs -c <conf> -d 3); check amd-smi metric and dmesg for amdgpu errors",
    "rocm-smi": "check the amdgpu module is loaded (lsmod | grep amdgpu, dmesg | grep amdgpu) and the user is in the "
                "video and render groups; run amd-smi list",
    "npu-smi": "DCMI could not open the NPUs (ret -8005, -8020: the device is held or not reachable here): on the host, "
               "check no other process or container holds them and the driver is loaded (npu-smi info -l); in a "
               "container, map /dev/davinciN, /dev/davinci_manager, /dev/devmm_svm and /dev/hisi_hdc and mount the "
               "driver (/usr/local/Ascend/driver, /usr/local/dcmi), then source the toolkit's set_env.sh; read "
               "/var/log/npu/slog if it persists",
    "mlxlink": "follow the port's recommendation: reseat or replace the cable or transceiver it names, then clear and "
               "read the counters again (mlxlink -d DEV -c --pc; mlxlink -d DEV -c) and the peer switch port's side",
}
