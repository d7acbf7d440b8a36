"""What applications, CUDA samples, stress tests and DCGM's health watches printed, judged: each
error line by what it means (a module's memory, the driver, the application itself), gpu-burn's
verdicts per GPU, and dcgmi health's incidents per GPU. An application's own fault (out of memory,
an illegal address) is never called the hardware's: its cause says "check the application".
A dcgmi health NVLink "link down" on a module whose design has no NVLink fabric (a PCIe card
without a bridge, or a model the captures do not name) is not judged a link down: DCGM reports
every link of such a card down (NVIDIA/NVSentinel#1481)."""

from __future__ import annotations

import re
from dataclasses import replace
from statistics import median
from typing import TYPE_CHECKING, NamedTuple

from gpuvet.captures.records import AppError, DcgmHealthIncident
from gpuvet.checks.model import Json
from gpuvet.doctor import dcgm_findings, nccl_followers, p2p_pcie, smi_state
from gpuvet.doctor.capture_failures import BRIDGED_CARDS, as_quoted
from gpuvet.doctor.evidence import Evidence
from gpuvet.doctor.fryer_peers import fryer_findings
from gpuvet.doctor.model import Cited, Finding, finding
from gpuvet.doctor.outcome import HIGH, LOW, MEDIUM, Outcome, clear, confirmed, unknown
from gpuvet.doctor.p2p_gain import not_working
from gpuvet.knowledge import threshold
from gpuvet.node.catalog import find_model
from gpuvet.node.vendor_tools import APP_ERROR_FIX, DCGM_HEALTH_FIX, GIVE, LISTING_TOOLS

if TYPE_CHECKING:  # the parsers load when a file is read (issue 43)
    from gpuvet.captures.dcgm_health import DcgmHealthParse
    from gpuvet.captures.gpu_burn import GpuBurnParse


STAGED_FASTER = threshold("p2p_slower_than_staged")  # of the same copy staged through host memory: the peer path
# is worse


UNSEEN_LISTED = "listed_but_unseen"


class _Meaning(NamedTuple):
    cause: str
    confidence: float


# app_errors kind -> the cause it names (causes.yaml) and how sure the line alone makes it
KIND_CAUSES: dict[str, _Meaning] = {
    "ecc_uncorrectable": _Meaning("ecc_uncorrectable_since_boot", HIGH),
    "illegal_address": _Meaning("application_cuda_error", MEDIUM),
    "launch_failure": _Meaning("application_cuda_error", MEDIUM),
    "cuda_runtime_error": _Meaning("application_cuda_error", MEDIUM),
    "out_of_memory": _Meaning("application_out_of_memory", HIGH),
    "no_device": _Meaning("no_modules_visible", MEDIUM),
    "driver_too_old": _Meaning("driver_runtime_mismatch", HIGH),
    "devices_busy": _Meaning("other_processes", MEDIUM),
    "nvml_mismatch": _Meaning("driver_library_mismatch", HIGH),
    "nvml_unknown": _Meaning("device_permissions", LOW),
    "nvml_unknown_after_update": _Meaning("driver_library_mismatch", MEDIUM),  # a driver package update in the file
    "nvml_init_function_not_found": _Meaning("driver_library_mismatch", MEDIUM),  # R6B: captures/nvidia_stack.py
    "cuda_after_resume": _Meaning("api_reports_driver_state", MEDIUM),  # R6B: a CUDA error after a suspend/resume
    "device_file_io_error": _Meaning("api_reports_driver_state", MEDIUM),  # R6B: /dev/nvidiaN's open gave EIO
    "listed_but_unseen": _Meaning("program_sees_no_listed_module", MEDIUM),  # _UNSEEN where a tool lists modules
    # AX1: NVML's words for a module's state (captures/smi_words.py), and a CUDA error read with the listing beside
    # it (doctor/smi_state.py)
    "nvml_reset_required": _Meaning("module_needs_reset", HIGH),
    "nvml_inforom": _Meaning("module_inforom_corrupted", HIGH),
    "nvml_power": _Meaning("module_power_cables", HIGH),
    "nvml_no_supported_gpus": _Meaning("driver_supports_no_module", HIGH),  # NVML's init: no GPU the driver supports
    smi_state.CUDA_UNUSABLE: _Meaning("cuda_cannot_use_listed_modules", MEDIUM),
    smi_state.EXCLUSIVE: _Meaning("module_compute_exclusive", HIGH),
    "nccl_cuda": _Meaning("collective_runtime_error", MEDIUM),
    "torch_no_cuda": _Meaning("framework_sees_no_module", MEDIUM),
    "smi_no_driver": _Meaning("no_modules_visible", HIGH),
    "amd_smi_no_driver": _Meaning("no_modules_visible", HIGH),
    "nvml_permissions": _Meaning("device_permissions", MEDIUM),
    "system_not_ready": _Meaning("fabric_manager_failed", MEDIUM),
    "forward_compat": _Meaning("driver_runtime_mismatch", MEDIUM),
    "device_assert": _Meaning("application_cuda_error", HIGH),
    "no_kernel_image": _Meaning("application_cuda_error", HIGH),
    "launch_timeout": _Meaning("application_cuda_error", MEDIUM),
    "invalid_ordinal": _Meaning("application_cuda_error", MEDIUM),
    "collective_init": _Meaning("collective_init_failed", MEDIUM),
    "nccl_timeout": _Meaning("collective_runtime_error", MEDIUM),
    "nccl_first_timeout": _Meaning("collective_runtime_error", MEDIUM),
    "nccl_error": _Meaning("collective_runtime_error", MEDIUM),
    "container_no_gpu": _Meaning("container_gpu_unavailable", MEDIUM),  # FX68F: the container's, not no GPU
    # nvidia-container-cli's stage errors by what they relay, the runtime's set-up (captures/container_layer.py)
    "container_cli_host_driver": _Meaning("no_modules_visible", HIGH),  # the host's kernel driver not loaded (IGC)
    "container_nvml_unknown": _Meaning("container_gpu_access", MEDIUM),  # the container's device access (IGC)
    "container_smi_no_driver": _Meaning("container_gpu_access", MEDIUM),
    "container_smi_empty": _Meaning("container_gpu_access", MEDIUM),
    "container_no_device": _Meaning("container_gpu_access", MEDIUM),  # AGX1: a framework's no driver in a container
    "container_rocm_no_device": _Meaning("container_gpu_access", MEDIUM),  # R5A: amd-smi's, HIP's none in one
    "container_cli_no_nvml_lib": _Meaning("nvml_library_not_loadable", MEDIUM),
    "container_cli_permissions": _Meaning("device_permissions", MEDIUM),
    "container_cli_lost": _Meaning("module_fell_off_bus", MEDIUM),
    "container_cli_driver": _Meaning("container_gpu_unavailable", MEDIUM),  # FX68F: the job gets no GPU
    "container_cli_driver_wsl": _Meaning("container_gpu_unavailable", MEDIUM),  # FX68F: the same inside WSL2
    "container_cli_config": _Meaning("gpu_config_mismatch", MEDIUM),
    "container_runtime_config": _Meaning("gpu_config_mismatch", MEDIUM),
    "framework_no_libs": _Meaning("framework_sees_no_module", MEDIUM),
    "cuda_init_unknown": _Meaning("framework_sees_no_module", MEDIUM),
    "cuda_init_error": _Meaning("api_reports_driver_state", MEDIUM),  # AGX1: CUDA's init refused (error 3)
    "nvlink_uncorrectable": _Meaning("nvlink_uncorrectable", HIGH),
    "rdma_no_gids": _Meaning("rdma_no_gid", HIGH),  # R7C: show_gids' n_gids_found=0 (captures/side_tables)
    "nic_netdev_gone": _Meaning("nic_driver_failed", MEDIUM),  # R7C: ethtool's 'Cannot get …: No such device'
    "peer_unsupported": _Meaning("p2p_unavailable", MEDIUM),  # the runtime refused peer access between two modules
    "smi_no_nvml_lib": _Meaning("nvml_library_not_loadable", MEDIUM),  # the runtime's setup, not the modules
    # an inference runtime's or a framework's own lines (captures/runtime_status.py): no GPU it can use
    "runtime_no_device": _Meaning("framework_sees_no_module", MEDIUM),
    "runtime_cpu_only_build": _Meaning("framework_sees_no_module", HIGH),
    "runtime_unsupported_gpu": _Meaning("framework_sees_no_module", MEDIUM),
    # an environment report's 'Is CUDA available: False' for a GPU build, told by its own lines (captures/env_report.py)
    "env_driver_too_old": _Meaning("driver_runtime_mismatch", HIGH),
    "env_no_device": _Meaning("framework_sees_no_module", MEDIUM),
    "env_gpus_unusable": _Meaning("framework_sees_no_module", MEDIUM),
    "env_no_driver": _Meaning("no_modules_visible", MEDIUM),  # no /proc/driver/nvidia/version: the module not loaded
    # the layer above the node's tools (captures/ops_layer.py): the scheduler's counts, its configuration, DCGM
    "slurm_gpu_count_low": _Meaning("scheduler_gpus_short", HIGH),
    "slurm_drained_gpu": _Meaning("scheduler_gpus_short", MEDIUM),
    "k8s_gpus_unhealthy": _Meaning("scheduler_gpus_short", HIGH),
    "dcgm_module_failed": _Meaning("dcgm_module_unavailable", HIGH),  # FX68A: dcgmi modules -l (captures/dcgm_tools)
    "dcgm_proftester_failed": _Meaning("dcgm_proftester_failed", HIGH),  # FX68A: dcgmproftester's FAILED
    "dcgm_job_xid": _Meaning("xid", HIGH),  # REV68a: dcgmi stats -j's 'Critical XID Errors' counted (side_tables)
    "k8s_no_gpu_resource": _Meaning("scheduler_gpus_short", MEDIUM),
    "k8s_gpu_condition": _Meaning("scheduler_gpus_short", MEDIUM),
    "k8s_insufficient_gpu": _Meaning("scheduler_gpus_short", LOW),
    "k8s_device_unhealthy": _Meaning("scheduler_gpus_short", MEDIUM),  # kubelet's or the device plugin's words
    "k8s_stack_not_ready": _Meaning("gpu_stack_pod_not_ready", MEDIUM),  # R4C: a GPU stack daemonset or pod not up
    "accel_no_interfaces": _Meaning("accel_scaleout_nics_absent", MEDIUM),  # R4C: Gaudi's scale-out ports absent
    "nhc_other_design": _Meaning("health_check_expects_other_design", MEDIUM),  # R4C: an SXM check on a PCIe GPU
    "operator_driver_not_ready": _Meaning("operator_driver_not_ready", MEDIUM),  # the GPU operator's driver validation
    "mig_not_permitted": _Meaning("mig_not_permitted", HIGH),  # FX68F: NVML refused a MIG command (captures/mig_ops)
    "mig_no_room": _Meaning("mig_no_room", HIGH),  # FX68F: no room on the GPU for the MIG profile asked for
    "operator_operand_failing": _Meaning("gpu_config_mismatch", MEDIUM),  # a GPU operand pod failing (ops_logs)
    "gpud_unhealthy": _Meaning("node_health_check_failed", MEDIUM),  # gpud's verdict on a GPU component (ops_agents)
    "slurm_gres_no_device": _Meaning("gpu_config_mismatch", MEDIUM),
    "slurm_gres_config": _Meaning("gpu_config_mismatch", MEDIUM),
    "container_cdi": _Meaning("gpu_config_mismatch", MEDIUM),
    "k8s_plugin_no_devices": _Meaning("gpu_config_mismatch", LOW),
    "neuron_init_failed": _Meaning("gpu_config_mismatch", MEDIUM),  # R8B: nrtd could not set its devices up
    "neuron_device_reset": _Meaning("module_firmware_unresponsive", MEDIUM),  # R8B: nrtd's HAL timed out, reset
    "neuron_hw_uncorrectable": _Meaning("module_hardware_error", HIGH),  # R8B: NRT_EXEC_HW_ERR_HBM_UE/NC_UE/DMA_ABORT
    "neuron_hbm_repairable": _Meaning("row_remap_pending", MEDIUM),  # R8B: NRT_EXEC_HW_ERR_REPAIRABLE_HBM_UE
    "neuron_collectives_hw": _Meaning("collective_runtime_error", MEDIUM),  # R8B: NRT_EXEC_HW_ERR_COLLECTIVES
    "neuron_core_busy": _Meaning("other_processes", MEDIUM),  # R8B: NRT_EXEC_NC_BUSY, a core another process holds
    # a job's or container's own device view (captures/job_view.py, R3A): the node's set-up, not its modules
    "container_hook_no_cli": _Meaning("gpu_config_mismatch", HIGH),
    "container_hook_failed": _Meaning("gpu_config_mismatch", MEDIUM),
    "slurm_devices_unconstrained": _Meaning("gpu_config_mismatch", MEDIUM),
    "job_view_no_devices": _Meaning("gpu_config_mismatch", MEDIUM),
    "container_view_no_devices": _Meaning("container_gpu_access", MEDIUM),
    "job_gpu_busy": _Meaning("other_processes", MEDIUM),  # error 46 on the one GPU CUDA_VISIBLE_DEVICES gives a job
    "hostengine_no_nvml": _Meaning("dcgm_no_nvml", MEDIUM),
    "hostengine_unreachable": _Meaning("dcgm_hostengine_down", MEDIUM),
    "driver_load_failed": _Meaning("no_modules_visible", MEDIUM),
    "diag_not_run": _Meaning("dcgm_diag_not_run", MEDIUM),  # dcgmi diag could not run: the modules were not tested
    "nhc_below_threshold": _Meaning("node_health_check_failed", MEDIUM),  # NHC's measurement under its threshold
    "nhc_check_failed": _Meaning("node_health_check_failed", MEDIUM),
    "nhc_ib_port_down": _Meaning("nic_port_down", HIGH),  # R14D: check_hw_ib: no IB port ACTIVE (nhc.conf needs one)
    "nhc_netdev_missing": _Meaning("nic_missing", HIGH),  # R14D: check_hw_eth: a device nhc.conf requires is absent
    # a health check's or smoke test's verdict per node by its reason (captures/node_reports.py)
    "node_gpu_busy": _Meaning("other_processes", MEDIUM),
    "node_corrupt": _Meaning("silent_data_corruption", MEDIUM),
    "node_cuda_init": _Meaning("api_reports_driver_state", MEDIUM),
    "node_alloc_failed": _Meaning("api_reports_driver_state", MEDIUM),
    "node_rdma_completion": _Meaning("rdma_completion_error", MEDIUM),
    "node_gpu_slow": _Meaning("compute_below_peak_unexplained", MEDIUM),
    "node_check_failed": _Meaning("node_health_check_failed", MEDIUM),
    # the fabric's own test tools (captures/fabric_tools.py, R12A): a NIC's BER, a port's counters or cable alarm,
    # a NIC or node a bandwidth test calls low or failed
    "fabric_nic_ber": _Meaning("nic_errors", MEDIUM),
    "fabric_port_counter": _Meaning("nic_errors", MEDIUM),
    "fabric_cable_alarm": _Meaning("nic_hardware_alarm", MEDIUM),
    "fabric_test_failed": _Meaning("node_health_check_failed", MEDIUM),
    # the cxi driver's error classes (captures/fabric_counters.py, R13B)
    "cxi_nic_uncorrectable": _Meaning("nic_uncorrectable_error", MEDIUM),
    "cxi_link_errors": _Meaning("nic_errors", MEDIUM),
    # the driver's installation and binding (captures/driver_state.py)
    "gpu_bound_other_driver": _Meaning("gpu_bound_to_other_driver", MEDIUM),
    "gpu_no_driver": _Meaning("gpu_no_driver_bound", LOW),
    "gpu_no_device_node": _Meaning("gpu_no_driver_bound", MEDIUM),  # captures/device_nodes.py
    "gpu_passthrough": _Meaning("module_passed_through", MEDIUM),
    "driver_build_failed": _Meaning("driver_install_failed", HIGH),
    "vgpu_unlicensed": _Meaning("vgpu_unlicensed", HIGH),  # issue 46 (BJ): captures/vgpu_license.py
    "driver_install_blocked": _Meaning("driver_install_failed", MEDIUM),
    "dkms_not_built": _Meaning("driver_install_failed", LOW),
    "dkms_other_kernel": _Meaning("driver_install_failed", MEDIUM),
    "driver_key_rejected": _Meaning("driver_module_rejected", HIGH),
    "driver_insert_failed": _Meaning("no_modules_visible", MEDIUM),
    "persistenced_no_devices": _Meaning("no_modules_visible", MEDIUM),
    "persistenced_failed": _Meaning("no_modules_visible", LOW),
    # a program on ROCm (captures/hip_errors.py)
    "hip_memory_fault": _Meaning("application_hip_error", MEDIUM),
    "hip_gpu_hang": _Meaning("module_hung_reset", MEDIUM),
    "hip_out_of_memory": _Meaning("application_out_of_memory", HIGH),
    "hip_no_binary": _Meaning("application_hip_error", HIGH),
    "hip_no_binary_for_gpu": _Meaning("application_build_lacks_target", HIGH),  # R5A: captures/hip_isa.py
    "hip_no_device": _Meaning("framework_sees_no_module", MEDIUM),
    "rocm_no_driver": _Meaning("no_modules_visible", HIGH),
    "rocr_no_agent": _Meaning("framework_sees_no_module", MEDIUM),  # hsa_init's OUT_OF_RESOURCES (rocr_status)
    "rocr_user_denied": _Meaning("device_permissions", MEDIUM),
    "rocr_unsupported_gpu": _Meaning("framework_sees_no_module", MEDIUM),
    "rocr_no_kfd": _Meaning("framework_sees_no_module", MEDIUM),  # amdgpu loaded, /dev/kfd absent
    "rocr_kfd_enomem": _Meaning("framework_sees_no_module", MEDIUM),  # R3B
    "rocr_kfd_unsupported_asic": _Meaning("framework_sees_no_module", MEDIUM),
    "rocr_kfd_open_failed": _Meaning("framework_sees_no_module", MEDIUM),  # R7A: /dev/kfd's open, another errno
    "nvidia_device_files_missing": _Meaning("gpu_device_files_missing", MEDIUM),  # R7A: captures/absent_stack
    "rdma_no_usable_device": _Meaning("rdma_no_usable_device", MEDIUM),
    "rdma_device_not_visible": _Meaning("rdma_devices_partly_unusable", MEDIUM),  # R10C: captures/verbs_unseen
    "nvidia_device_files_absent": _Meaning("no_modules_visible", HIGH),  # as smi_no_driver's '/dev/nvidiactl' absent
    "rocr_kfd_no_gpu_node": _Meaning("framework_sees_no_module", MEDIUM),  # R4A: KFD's topology holds the CPU alone
    "gpu_runtime_missing": _Meaning("framework_sees_no_module", MEDIUM),  # sycl-ls/clinfo: CPU, emulation only
    "gpu_kernel_not_bound": _Meaning("framework_sees_no_module", MEDIUM),  # nomodeset, no /dev/dri
    "hip_error": _Meaning("application_hip_error", MEDIUM),
    # the Ascend runtime's return codes by class (captures/ascend_codes.py, knowledge/ascend_codes.yaml)
    "acl_ecc": _Meaning("ecc_uncorrectable_since_boot", HIGH),
    "acl_hardware": _Meaning("api_reports_module_fault", MEDIUM),
    "acl_link": _Meaning("fabric_link_errors", MEDIUM),
    "acl_lost": _Meaning("api_reports_module_fault", MEDIUM),
    "acl_collective": _Meaning("collective_runtime_error", MEDIUM),
    "acl_timeout": _Meaning("npu_runtime_error", MEDIUM),
    "acl_exception": _Meaning("npu_runtime_error", MEDIUM),
    "acl_driver": _Meaning("api_reports_driver_state", MEDIUM),
    "acl_no_device": _Meaning("no_modules_visible", MEDIUM),
    "acl_permission": _Meaning("device_permissions", MEDIUM),
    "acl_resources": _Meaning("application_out_of_memory", HIGH),
    "acl_application": _Meaning("application_api_error", MEDIUM),
    # hccn_tool's NPU RoCE ports (captures/hccn_tool.py)
    "hccn_link_down": _Meaning("nic_port_down", HIGH),
    "hccn_link_down_alone": _Meaning("nic_port_down_undeclared", MEDIUM),
    "hccn_net_unhealthy": _Meaning("npu_network_unhealthy", MEDIUM),
    "hccn_optical_alarm": _Meaning("nic_hardware_alarm", HIGH),
    "hccn_link_flap": _Meaning("nic_errors", MEDIUM),
    "pcie_acs_redirect": _Meaning("pcie_acs_enabled", HIGH),  # R6A: lspci's ACSCtl (captures/pcie_acs.py)
    "pcie_acs_source_valid": _Meaning("pcie_acs_enabled", MEDIUM),
    "pcie_acs_root_port": _Meaning("pcie_acs_root_ports", MEDIUM),
}


def captured_errors(ev: Evidence) -> Outcome:
    """Error lines of applications and CUDA samples, and gpu-burn's verdicts."""
    c = ev.captures
    listed = _listed_by_a_tool(ev)
    found = _after_warn(ev, _error_findings(smi_state.rewritten(ev, c.app_errors, listed), listed))
    unsure: list[str] = []
    cited: list[Cited] = []
    found += _p2p_denied(ev) + p2p_pcie.findings(ev) + _p2p_slower_than_staged(ev) + \
        not_working(c.nvbandwidth, STAGED_FASTER)
    for label, burn in c.gpu_burn:
        found += _burn_findings(label, burn, unsure)
        cited += [Cited(label, f"{burn.tool} GPU {g}", v) for g, v in sorted(burn.verdicts.items()) if v == "OK"]
    if found:
        said = list(dict.fromkeys(f.title.split(":")[0] for f in found))
        return confirmed("the captured program output says: " + "; ".join(said[:4]), *found)
    if unsure:
        return unknown(unsure[0] + (f" (and {len(unsure) - 1} more)" if len(unsure) > 1 else ""))
    cited += [Cited(label, "deviceQuery", "Result = PASS") for label, passed in c.samples_passed if passed]
    if not cited:
        return unknown(f"no application error lines, deviceQuery or gpu-burn output (give {GIVE['app_errors']})")
    return clear("the captured tests passed and no application error line was read", *cited)


# a program's 'no device' (the runtime's, the framework's) where a tool's listing in the captures names modules:
# the driver lists them, so the program's own view hides them (CUDA_VISIBLE_DEVICES, a container, its build)
_UNSEEN = {"no_device", "torch_no_cuda", "hip_no_device", "runtime_no_device"}


def _listed_by_a_tool(ev: Evidence) -> bool:
    """A module list in the captures from a tool that asks the driver (not the kernel's enumeration lines)."""
    inv = ev.inventory
    return bool(inv and inv.modules) and any(k.startswith(LISTING_TOOLS) for kinds in ev.captures.read_as.values()
                                             for k in kinds)


def _error_findings(errors: list[tuple[str, AppError]], listed: bool = False) -> list[Finding]:
    """One finding per cause and module, as doctor merges them; where several kinds of line name the same
    cause on one module ('invalid device function' beside a memory fault), each kind and line stays in the
    evidence and each kind's advice in the fix, so the merge never drops what a line said. ``listed``: a tool
    lists modules, so a program's 'no device' is its own view of them (_UNSEEN)."""
    groups: dict[tuple[str, str | None, str | None], list[tuple[str, AppError]]] = {}
    errors = [(label, replace(e, kind=UNSEEN_LISTED) if listed and e.kind in _UNSEEN else e) for label, e in errors]
    for label, e in errors:  # a log of several hosts: each host's 'device 0' its own (captures/hosted.py)
        groups.setdefault((_meaning(e.kind).cause, e.host, e.module), []).append((label, e))
    return [replace(_error_finding(*group[0]) if len(group) == 1 else _merged(group), host=group[0][1].host)
            for group in groups.values()]


_FRAMEWORK_NCCL = {"nccl_timeout", "nccl_first_timeout", "nccl_error", "nccl_cuda"}
_QUOTING = {"nccl_error", "nccl_cuda"}  # PyTorch's 'NCCL error in: …', the library's 'Last error:' quoted under it


def _after_warn(ev: Evidence, found: list[Finding]) -> list[Finding]:
    """A framework's collective error (a watchdog timeout, 'NCCL error in: …') in a file whose NCCL/RCCL log has a
    failed WARN above it (or quoted right under it: PyTorch's 'Last error:') points at that WARN: the library's first
    failure is the cause the framework only reports; where the framework's line quotes that WARN under itself
    the two are one fact, said once by the library's finding (its family's cause: the job's configuration, an
    ECC error; REV67a #7, #8)."""
    failed = {label: sorted((x.at for x in log.failures), key=lambda at: at.line) for label, log in ev.captures.nccl_logs
              if log.failures and log.libs != ["HCCL"]}
    out = []
    for f in found:
        listed = f.evidence.get("kinds")
        kinds = {str(f.evidence.get("kind")), *(map(str, listed) if isinstance(listed, list) else ())}
        warns = failed.get(str(f.evidence.get("file")), [])
        line = f.evidence.get("line")
        if not warns or not kinds & _FRAMEWORK_NCCL or not isinstance(line, int) or \
                warns[0].line > line + nccl_followers.QUOTED_WITHIN:
            out.append(f)
            continue
        if kinds & _QUOTING and nccl_followers.echoed(line, warns):  # its own 'Last error:' quote, no earlier WARN
            continue
        warn = warns[0]
        out.append(replace(f, evidence={**f.evidence, "first_warn": f"line {warn.line}: {warn.text}",
                                        "read_first": "the library's first WARN above this line names the cause"}))
    return out


def _meaning(kind: str) -> _Meaning:
    """The kind's cause: KIND_CAUSES', else the API error table's class (issue 46: knowledge/api_errors.yaml, read
    only when such a line was read), else a CUDA runtime error's."""
    if kind in KIND_CAUSES:
        return KIND_CAUSES[kind]
    from gpuvet.knowledge.api_errors import api_table  # noqa: PLC0415 - its table read only where a line names one
    cause = api_table().cause(kind)
    return _Meaning(cause, MEDIUM) if cause is not None else KIND_CAUSES["cuda_runtime_error"]


# REVFIX65: a contained error is the process's (CUDA: terminate and relaunch; the driver's RESTART_APP; DCGM's
# contained error a health WARN): one verdict (warn), printed by the runtime or quoted, not the hardware class'
_CONTAINED = re.compile(r"\b(?:CUDA_ERROR_CONTAINED|cudaErrorContained)\b")


def _meaning_of(e: AppError) -> _Meaning:
    if e.kind.endswith("_hardware") and _CONTAINED.search(e.text) is not None:
        return _Meaning("module_contained_error", MEDIUM)
    return _meaning(e.kind)


def _merged(group: list[tuple[str, AppError]]) -> Finding:
    first_label, first = group[0]
    kinds = list(dict.fromkeys(e.kind for _, e in group))
    meaning = max((_meaning_of(e) for _, e in group), key=lambda m: m.confidence)
    fixes = [f for f in dict.fromkeys(APP_ERROR_FIX.get(k) for k in kinds) if f is not None]
    base = _error_finding(first_label, first)
    fix = "; ".join(dict.fromkeys([base.fix, *fixes])) if fixes else base.fix
    lines: list[Json] = [f"{label} line {e.line} ({e.kind}{f', {e.times} times' if e.times > 1 else ''}): "
                         f"{e.text[:240]}" for label, e in group]
    merged = finding(meaning.cause, meaning.confidence, module=first.module, fix=fix, carried=base.evidence,
                     kinds=list(kinds), lines=lines, times=sum(e.times for _, e in group))
    return as_quoted(merged) if all(e.quoted for _, e in group) else merged


def _error_finding(label: str, e: AppError) -> Finding:
    meaning = _meaning_of(e)
    if e.quoted:  # issue 46: a message a poster quoted in a sentence (app_errors.quoted) is a lead (as_quoted)
        return as_quoted(finding(meaning.cause, meaning.confidence, module=e.module, fix=APP_ERROR_FIX.get(e.kind),
                                 kind=e.kind, file=label, line=e.line, log=e.text[:240], times=e.times, meaning=e.meaning))
    return finding(meaning.cause, meaning.confidence, module=e.module, fix=APP_ERROR_FIX.get(e.kind), kind=e.kind,
                   file=label, line=e.line, log=e.text[:240], tool=e.tool, times=e.times, meaning=e.meaning)


def _p2p_denied(ev: Evidence) -> list[Finding]:
    """Pairs p2pBandwidthLatencyTest or `nvidia-smi topo -p2p` says cannot reach each other: a fault where the
    modules are built into an NVLink fabric (their design joins every pair); a PCIe or consumer card without
    peer access is by design."""
    named = [(label, model or product_of(ev, f"GPU {i}") or "", i, j, said)  # a listing in another file names it
             for label, model, i, j, said in ev.captures.p2p_denied]
    return [finding("p2p_unavailable", MEDIUM, between=(f"GPU {i}", f"GPU {j}"), model=model, file=label,
                    detail=f"{said} on modules whose design joins them by NVLink")
            for label, model, i, j, said in named if nvlink_fabric(model)]


def _p2p_slower_than_staged(ev: Evidence) -> list[Finding]:
    """p2pBandwidthLatencyTest's P2P=Enabled copies slower than its P2P=Disabled ones (staged through host
    memory) on most pairs: peer traffic takes a path worse than the host's (PCIe ACS redirecting it to the
    root complex, an IOMMU translating it): one finding for the table, whatever the modules' design."""
    out: list[Finding] = []
    tables = ev.captures.nvbandwidth
    for name, on in tables.items():
        if not name.startswith("p2pBandwidthLatencyTest") or "P2P=Enabled" not in name:
            continue
        off = tables.get(name.split(" P2P=")[0] + " P2P=Disabled")
        pairs = [(a, b) for i, row in enumerate(on) for j, a in enumerate(row) if i != j and a is not None
                 and off is not None and i < len(off) and j < len(off[i]) and (b := off[i][j]) is not None and b > 0]
        slow = [(a, b) for a, b in pairs if a < STAGED_FASTER * b]
        if len(pairs) >= 2 and 2 * len(slow) > len(pairs):
            out.append(finding("p2p_slower_than_host", MEDIUM, test=name, pairs=len(pairs), slower=len(slow),
                               p2p_median_gbps=round(median(a for a, _ in pairs), 2),
                               staged_median_gbps=round(median(b for _, b in pairs), 2),
                               detail="peer copies ran slower than copies staged through host memory"))
    return out


def _burn_findings(label: str, burn: GpuBurnParse, unsure: list[str]) -> list[Finding]:
    """FAULTY (wrong results) is the module computing wrong bits; a worker that died or never ran is
    not a verdict on the module (the kernel log says whether the module went with it). A burn that ran
    on no GPU at all (gpu-burn could not start its test) is one finding, not one per GPU. gpu-fryer's
    summary is judged module by module against the run's peers (doctor/fryer_peers.py, issue 46)."""
    if burn.tool == "gpu-fryer":
        found = fryer_findings(label, burn)
        unsure += [] if burn.verdicts or found else [f"{label}: gpu-fryer's output ends before its verdict"]
        return found
    idle = [g for g in sorted(burn.verdicts) if g in burn.died or (g < len(burn.work) and burn.work[g] <= 0)]
    out: list[Finding] = []
    if burn.init_errors or (idle and len(idle) == len(burn.verdicts) > 1):
        line, text = burn.init_errors[0] if burn.init_errors else (burn.verdict_line, "")
        out.append(finding("application_cuda_error", MEDIUM, fix=APP_ERROR_FIX["gpu_burn_died"],
                           tool=burn.tool, file=label, line=line, log=text[:240] or None, idle=[f"GPU {g}" for g in idle],
                           detail=f"{len(idle)} GPU(s) did no work: their OK says nothing of the modules"))
        idle = [g for g in idle if g in burn.died and len(idle) < len(burn.verdicts)]  # a died worker: its own
    for gpu in idle:
        out.append(finding("application_cuda_error", MEDIUM, module=f"GPU {gpu}", fix=APP_ERROR_FIX["gpu_burn_died"],
                           tool=burn.tool, verdict=burn.verdicts[gpu], file=label, line=burn.verdict_line,
                           work=burn.work[gpu] if gpu < len(burn.work) else None,
                           detail="the GPU's test worker died or never ran: its verdict says nothing of the module"))
    for gpu, verdict in sorted(burn.verdicts.items()):
        if verdict == "FAULTY" and gpu not in burn.died and not (gpu < len(burn.work) and burn.work[gpu] <= 0):
            out.append(_burn_faulty(label, burn, gpu))
    out += _burn_cut(label, burn) + _burn_died_unjudged(label, burn) + _burn_silent(label, burn)
    if not burn.verdicts and not out:
        unsure.append(f"{label}: gpu-burn's output ends before its 'Tested N GPUs' verdict (cut or killed)"
                      if burn.tool == "gpu-burn" else f"{label}: {burn.tool}'s output ends before its verdict")
    return out


def _burn_faulty(label: str, burn: GpuBurnParse, gpu: int) -> Finding:
    """FAULTY in any run is the finding; runs that disagree are said, never resolved by the last one."""
    run = burn.faulty_run(gpu)
    errors = run.errors if run is not None else burn.errors
    count = errors[gpu] if gpu < len(errors) else None
    runs = burn.disagree(gpu)
    return finding("silent_data_corruption", HIGH if count is None or count > 0 else MEDIUM,
                   module=f"GPU {gpu}", tool="gpu-burn", verdict="FAULTY", errors=count, file=label,
                   line=run.line if run is not None else burn.verdict_line, runs=runs or None,
                   detail="gpu-burn compared the GPU's results and found them wrong"
                   + ("" if count is None or count > 0 else f" (its error count reads {count}: gpu-burn's "
                      "counter, not a count; the verdict stands)")
                   + (f"; the {len(runs)} runs disagree ({', '.join(runs)}): a module that fails some runs is "
                      "still faulty" if runs else ""))


def _burn_died_unjudged(label: str, burn: GpuBurnParse) -> list[Finding]:
    """Workers the last progress line marks (DIED!) in a run that printed no verdict (gpu-burn aborts once
    no worker is alive): the test did not run to its end on those GPUs; like a died worker with a verdict,
    it says nothing of the module by itself (the kernel log says whether the module went with it)."""
    if burn.verdicts or not burn.died:
        return []
    gpus = [f"GPU {g}" for g in sorted(burn.died)]
    said = "aborted ('No clients are alive')" if burn.aborted is not None else "cut before its verdict"
    return [finding("application_cuda_error", MEDIUM, module=gpus[0] if len(gpus) == 1 else None,
                    fix=APP_ERROR_FIX["gpu_burn_died"], tool="gpu-burn", file=label, line=burn.aborted,
                    died=gpus, detail=f"{len(gpus)} of {max(len(burn.errors), len(gpus))} gpu-burn worker(s) "
                    f"died; the run {said} with no verdict")]


def _burn_silent(label: str, burn: GpuBurnParse) -> list[Finding]:
    """gpu-burn set its GPUs up and was stopped (killed, ^C) before one progress line: the test never reported
    (a hang in its first kernel or compare), so the run is no pass; what stopped it is not in its output."""
    if not burn.silent:
        return []
    gpus = [f"GPU {g}" for g in sorted(burn.initialized)]
    first = min(line for line, _ in burn.initialized.values())
    return [finding("application_cuda_error", MEDIUM, module=gpus[0] if len(gpus) == 1 else None,
                    fix=APP_ERROR_FIX["gpu_burn_died"], tool="gpu-burn", file=label, line=first, stopped=burn.ended,
                    initialized=[f"{g} ({mb} MB)" for g, (_, mb) in zip(gpus, [burn.initialized[k] for k in sorted(
                        burn.initialized)], strict=True)],
                    detail=f"gpu-burn set up {', '.join(gpus)} and was stopped at line {burn.ended} before its "
                    "first progress line or verdict: the test produced no result (not a pass)")]


def _burn_cut(label: str, burn: GpuBurnParse) -> list[Finding]:
    """A run cut before its verdict whose last progress line counted errors on a worker that did not die."""
    return [finding("silent_data_corruption", MEDIUM, module=f"GPU {gpu}", tool="gpu-burn", errors=count, file=label,
                    detail=f"the run was cut before its verdict; its last progress line counts {count} wrong result(s) "
                    "on the GPU")
            for gpu, count in enumerate(burn.cut_errors) if count > 0 and gpu not in burn.died]


# --- dcgmi health -c ------------------------------------------------------------------------------
_LINK_DOWN = re.compile(r"NvLink link (\d+) is currently down", re.I)
_NVLINK_COUNTERS = re.compile(r"CRC|replay|recovery", re.I)


def dcgm_health(ev: Evidence) -> Outcome:
    """DCGM's health report's incidents, each on its GPU; Healthy is cited."""
    reports = ev.captures.dcgm_health
    if not reports:
        return unknown(f"no DCGM health report (give {GIVE['dcgm_health']})")
    from gpuvet.captures.dcgm_health import DIAG_SETUP, SWITCH_MODULE  # its module: loaded with the report

    found: list[Finding] = []
    unsure: list[str] = []
    for label, report in reports:
        for inc in report.incidents:
            if inc.system == SWITCH_MODULE:  # its ERROR lines: judged by the knowledge base, not by a health word
                found.append(finding("dcgm_nvswitch_unread", MEDIUM, module=inc.entity, file=label,
                                     system=inc.system, health=inc.health, message=inc.message[:300]))
            elif inc.system == DIAG_SETUP:  # nvvs could not set up: the test did not run (knowledge: dcgm_diag_not_run)
                found.append(finding("dcgm_diag_not_run", MEDIUM, module=inc.entity, file=label, message=inc.message))
            elif inc.system.startswith("DCGM_FR_IMEX"):  # the IMEX daemon's state: no GPU's (knowledge: imex_not_ready)
                found.append(finding("imex_not_ready", MEDIUM, module=inc.entity, file=label, code=inc.system,
                                     message=inc.message[:300]))
            elif inc.health.lower() in ("warning", "failure"):
                found += _incident(ev, label, inc, unsure)
        if not any(i.health.lower() in ("warning", "failure") or i.system in (SWITCH_MODULE, DIAG_SETUP)
                   for i in report.incidents):
            found += _health_without_incident(label, report)
    if found:
        return confirmed("DCGM's health watches report incidents", *found)
    if unsure:
        return unknown(unsure[0] + (f" (and {len(unsure) - 1} more)" if len(unsure) > 1 else ""))
    return clear("DCGM's health watches report no incident", *[Cited(label, "Overall Health", r.overall or "not printed")
                                                        for label, r in reports])


def _health_without_incident(label: str, report: DcgmHealthParse) -> list[Finding]:
    """A report that says Warning or Failure but whose incident rows were not read (cut, or a layout
    gpuvet does not know): each entity it marks, else the report as a whole; never a clear."""
    marked = {e: h for e, h in report.entities.items() if h.split(" ")[0].lower() in ("warning", "failure")}
    if not marked and (report.overall or "").split(" ")[0].lower() in ("warning", "failure"):
        marked = {"": report.overall or ""}
    return [finding("dcgm_health_failure" if h.lower().startswith("failure") else "dcgm_health_warning", LOW,
                    module=entity or None, fix=DCGM_HEALTH_FIX, file=label, health=h,
                    detail=("DCGM marks the GPU" if entity else "DCGM's Overall Health reads") + f" {h}, but no "
                    f"incident row was read (the excerpt may be cut): give {GIVE['dcgm_health']}, its whole report")
            for entity, h in marked.items()]


def _incident(ev: Evidence, label: str, inc: DcgmHealthIncident, unsure: list[str]) -> list[Finding]:
    system, failure = inc.system.lower(), inc.health.lower() == "failure"
    said: dict[str, Json] = {"file": label, "system": inc.system, "health": inc.health, "message": inc.message[:300]}
    if coded := dcgm_findings.incident(inc, said):  # a DCGM message naming its own cause (knowledge/dcgm_errors.yaml)
        return coded
    links = [int(k) for k in _LINK_DOWN.findall(inc.message)]
    if (system.startswith("nvlink") or inc.system == dcgm_findings.GPU_LINK_DOWN) and links:
        product = product_of(ev, inc.entity)
        if not nvlink_fabric(product):
            unsure.append(f"{inc.entity}: DCGM's health watch says NVLink link(s) {', '.join(map(str, links))} are "
                          f"down, but {product or 'the captures do not name its model'}"
                          f"{' has no NVLink fabric' if product else ''}: a PCIe card without an NVLink bridge reports "
                          f"every link down (not judged a link down; give {GIVE['module_models']} to name the model)")
            return []
        return [finding("nvlink_down", HIGH, module=inc.entity, links_down=links, model=product, carried=said)]
    if system.startswith("nvlink") and _NVLINK_COUNTERS.search(inc.message):
        return [finding("nvlink_errors", MEDIUM, module=inc.entity, carried=said)]
    if system.startswith("memory") and re.search(r"\bDBE\b|double.bit|uncorrectable", inc.message, re.I):
        return [finding("ecc_uncorrectable_since_boot", HIGH, module=inc.entity, carried=said)]
    if system.startswith("memory") and re.search(r"row remap\w* fail", inc.message, re.I):
        return [finding("row_remap_failure", HIGH, module=inc.entity, carried=said)]
    return [finding("dcgm_health_failure" if failure else "dcgm_health_warning", HIGH if failure else MEDIUM,
                    module=inc.entity, fix=DCGM_HEALTH_FIX, carried=said)]


def product_of(ev: Evidence, entity: str) -> str | None:
    """The model the captures name for DCGM's GPU id (nvidia-smi's index: -L, the table, nvlink -s)."""
    index = entity.rsplit(" ", 1)[-1]
    for m in ev.captures.smi_text:
        if m.fields.get("Index") == index and m.product:
            return m.product
    return ev.captures.nvlink_products.get(f"GPU {index}")


def nvlink_design(ev: Evidence, gpu: str) -> bool:
    """The module the captures name for 'GPU i' is built into an NVLink fabric: peer access denied between two such
    is a fault; on a PCIe or consumer card (or one the captures do not name) it is the design. Every tool's
    'no P2P' (p2pBandwidthLatencyTest, topo -p2p, NCCL's INFO line) is judged by this one rule."""
    return nvlink_fabric(product_of(ev, gpu))


def nvlink_fabric(product: str | None) -> bool:
    """A module built into an NVLink fabric (SXM, on a board), not a card that takes a bridge."""
    if not product:
        return False
    from gpuvet.captures.fabric_manager import without_switches  # a parser's module: loaded only with a capture

    model = find_model(product)
    return (model is not None and model.fabric == "nvlink" and without_switches([product]) is None
            and not any(k in product.lower() for k in BRIDGED_CARDS))
