"""Issue 46: error-level strings of the GPU drivers' own sources that no message of kernel.py named, read as a
class (benchmarks/kernel_phrasebook.py reads every such string of amdgpu, amd/pm, amdkfd, i915 and NVIDIA's open
kernel modules): each pattern below is the driver's printf format as its source file prints it, and its kind's
meaning (kernel_messages.yaml) names that file. kernel.py appends these to its drivers' tables, after their own
messages, so a line one of those names keeps its kind; and holds KernelMessage here, its tables' record.

Only error-level strings that say the module is gone, hung or damaged are classed; one a healthy boot prints
('not supported', a firmware file absent, an SMU message that failed once) stays a lead (kernel_unknown)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpuvet.captures import amd_ras_counts, kernel_amd_power, nv_driver_faults


@dataclass(frozen=True)
class KernelMessage:
    """One kind of driver message: what it is called, how it is recognised, whose driver says it."""

    kind: str
    pattern: re.Pattern[str]
    driver: str = "NVRM"  # the word every line of that driver carries: NVRM, amdgpu


AMD: tuple[KernelMessage, ...] = (
    # amdgpu_device.c (amdgpu_device_health_check, before a reset): the device's PCI config space reads all ones
    # (smu_cmn.c's 'SMU: response:0xFFFFFFFF' stays a lead: kernel_unknown quotes it)
    KernelMessage("amd_device_lost", re.compile(r"\bdevice lost from bus\b"), "amdgpu"),
    # smu_cmn.c: a message after the SMU stopped answering (smc_fw_state SMU_FW_HANG): no more are sent until a reset
    KernelMessage("amd_smu_hung", re.compile(r"\bSMU is in hanged state\b"), "amdgpu"),
    # gmc_v9_0.c … gmc_v12_0.c: the memory hub did not acknowledge a TLB flush; amdgpu_gmc.c: the KIQ's fence of one
    KernelMessage("amd_vm_flush_timeout", re.compile(r"\bTimeout waiting for (?:VM flush|sem acquire in VM flush)|"
                                                     r"\btimeout waiting for kiq fence\b", re.I), "amdgpu"),
    # swsmu/smu13/smu_v13_0_5_ppt.c, yellow_carp_ppt.c, smu14/smu_v14_0_0_ppt.c: the SMU's MODE2 reset of an APU failed
    KernelMessage("amd_reset_failed", re.compile(r"\bFailed to mode\d? reset\b"), "amdgpu"),
    # amdgpu_vm.c (amdgpu_vm_handle_fault): a retry fault it could not resolve (gmc_v6_0.c … gmc_v8_0.c's 'VM fault
    # (0x02, vmid 8 …)' line is not one: kernel.py reads the 'GPU fault detected' line printed just before it)
    KernelMessage("amd_page_fault", re.compile(r"\bCan't handle page fault\b"), "amdgpu"),
    # amdgpu_gfx.c (amdgpu_gfx_cp_ecc_error_irq) and gfx_v8_0.c: the command processor's EDC/ECC interrupt
    KernelMessage("amd_cp_ecc_error", re.compile(r"\bCP ECC ERROR IRQ\b|\bCP EDC/ECC error detected\b"), "amdgpu"),
    # R4A: amdgpu_psp.c (psp_cmd_submit_buf): the PSP refused or did not finish a command of the driver's own ('psp gfx
    # command CONFIG_SQ_PERFMON(0x46) failed and response status is (0x100)'; older: 'psp command (0x6) failed …'). A
    # trusted application's (LOAD_TA, UNLOAD_TA, INVOKE_CMD: RAS, HDCP, securedisplay) fails on healthy boots: a lead
    KernelMessage("amd_psp_command_failed", re.compile(r"\bpsp (?:gfx )?command (?!(?:LOAD_TA|UNLOAD_TA|INVOKE_CMD)\b)"
                                                       r"\w*\(0x[0-9a-fA-F]+\) failed\b", re.I), "amdgpu"),
    # R4A: a trusted application's command failing (the TA images are optional: the module works without them)
    KernelMessage("amd_psp_ta_failed", re.compile(r"\bpsp gfx command (?:LOAD_TA|UNLOAD_TA|INVOKE_CMD)\(0x[0-9a-fA-F]+\) "
                                                  r"failed\b", re.I), "amdgpu"),
    # R4A: mes_v11_0.c / mes_v12_0.c: the MES stopped answering and the driver asks for a reset (kernel.py: 'MES failed
    # to respond'); swsmu's smu_v11_0.c … smu_v14_0.c: the SMU's interface version differs, a note the driver goes on past
    KernelMessage("amd_mes_unresponsive", re.compile(r"\bMES might be in unrecoverable state\b"), "amdgpu"),
    KernelMessage("amd_smu_if_mismatch", re.compile(r"\bSMU driver if version not matched\b", re.I), "amdgpu"),
    # R4A: amdgpu_psp.c's other firmware loads ('PSP load sys drv failed!', 'PSP load kdb failed!'), and the PCI core's
    # probe failure as posters shorten it ('amdgpu: probe ... failed with error -5'): the module did not come up
    KernelMessage("amd_init_failed", re.compile(r"\bPSP load (?:\w+ ){1,3}failed\b|"
                                                r"\bamdgpu\S*:? probe \S+ failed with error -\d+"), "amdgpu"),
    # R9D: amdgpu_psp.c's firmware loads in their own words: a ucode the PSP rejected ('failed to load ucode
    # SMC(0x2D)'), psp_get_fw_type's 'Unknown firmware type' (a firmware image newer than the driver), the memory
    # training psp_hw_start runs first; and a poster's 'amdgpu_device_fw_loading failed', the function whose
    # 'hw_init of IP block <psp> failed -22' failed the init: the module did not come up
    KernelMessage("amd_init_failed", re.compile(r"\bfailed to load ucode \w+\(0x[0-9a-fA-F]+\)|\bUnknown firmware type\b|"
                                                r"\bFailed to (?:process|initialize) memory training\b|"
                                                r"\bamdgpu_device_(?:fw_loading|ip_init)(?:\(\))? failed\b"), "amdgpu"),
    # R4A: amdgpu_dev_coredump.c: the reset path (amdgpu_device_gpu_recover, or the job timeout on 6.10 and later) dumped
    # the module's state: a hang and its reset; beside the hang's own lines (a ring timeout, a ring reset) an echo of them
    KernelMessage("amd_reset_dumped", re.compile(r"\bAMDGPU device coredump file has been created\b"), "amdgpu"),
    # R5A: smu_cmn.c / amdgpu_smu.c (smu_hw_init, smu_system_features_control): the SMU did not take the bring-up's
    # messages, and the driver gave the module up ('Failed to setup smc hw!', 'Failed to enable requested dpm features!')
    KernelMessage("amd_smu_setup_failed", re.compile(r"\bFailed to (?:setup smc hw|enable requested dpm features)\b"),
                  "amdgpu"),
    # R5A: smu_cmn.c (smu_cmn_reg_print_error, __smu_cmn_poll_stat) and powerplay's AVFS set-up ('[AVFS] Something is
    # broken. See log!'): a message the SMU did not answer; the module may still run (powerplay's 'failed to send
    # message … ret is 0' stays kernel.py's amd_recovery_failed)
    KernelMessage("amd_smu_no_answer", re.compile(r"\bSMU: (?:No response msg_reg|I'm not done with your previous "
                                                  r"command)|\[AVFS\] Something is broken"), "amdgpu"),
    # R5A: mxgpu_ai.c / mxgpu_nv.c (xgpu_*_mailbox_trans_msg): the driver took the module for an SR-IOV function and
    # waits, again and again, on a host mailbox that never answers (on bare metal: registers read through a BAR the
    # firmware left unassigned, or a module a passthrough left dirty)
    KernelMessage("amd_vf_mailbox_loop", re.compile(r"\btrn=\d+ ACK should not assert\b"), "amdgpu"),
    # R10A: gmc_v9_0.c … gmc_v12_0.c print '[gfxhub0] retry page fault (src_id:0 ring:0 vmid:8 pasid:…)' only after
    # amdgpu_vm_handle_fault (XNACK's recovery: SVM's page tables filled in) could not resolve it; a retry fault
    # it resolved prints nothing: a printed one is a page fault as the no-retry kind is (kernel.py reads that one)
    KernelMessage("amd_page_fault", re.compile(r"\[(?:gfx|mm)hub\d*\]\s+retry page fault\b(?!`)", re.I), "amdgpu"),
    # R10A: powerplay's smu7/ci SMU message that got no answer (response 0) in its other spellings: the 'pre message'
    # and 'last message was failed ret is 0' beside 'failed to send message 16a ret is 0' (kernel.py reads that one):
    # one fact, kernel.py's verdict. smu9/vega's 'Failed to send message: 0x26, ret value: 0x0' stays a lead (warn:
    # a one-off under rocm-smi's polling, batch x's strict table holds driver_error_unnamed); smu7's stays critical
    # (batch p: a module whose every message failed, every two seconds, until a power cycle)
    KernelMessage("amd_recovery_failed", re.compile(r"\bfailed to send pre message [0-9a-fA-F]{1,4} ret is 0\b|"
                                                    r"\blast message was failed ret is 0\b", re.I), "amdgpu"),
) + tuple(KernelMessage(kind, pattern, "amdgpu") for kind, pattern in kernel_amd_power.AMD + amd_ras_counts.AMD)  # R12D
INTEL: tuple[KernelMessage, ...] = (
    # i915 gt/intel_reset.c (intel_wedge_me): a reset that outran its watchdog; the GT is declared wedged
    KernelMessage("intel_reset_timeout", re.compile(r"\btimed out, cancelling all in-flight rendering\b"), "i915"),
    # R7B: i915 before 4.10 (i915_drv.c's i915_reset_and_wakeup, i915_gem.c's i915_context_is_banned), as Linux and
    # FreeBSD's drm port print them: the chip reset after a hang, and a context banned for hanging again and again
    KernelMessage(
        "intel_gpu_hang",
        re.compile(r"\[drm:i915_reset_and_wakeup\] resetting chip\b|\bgpu hanging too fast, banning\b", re.I),
        "i915",
    ),
    # R10A: intel_uncore.c / xe_force_wake.c: the GT did not acknowledge the driver's forcewake ('GT0: gt: timed out
    # waiting for forcewake ack to clear.'; gt_err's 'GT0:' prefix, a backport's '[GT OTHER]' tag): its registers
    # cannot be reached reliably; at the module's bring-up it did not come up cleanly
    KernelMessage("intel_gt_timeout", re.compile(r"\btimed out waiting for forcewake ack\b|"
                                                 r"\*ERROR\* GT\d+:? .{0,40}?\btimed out waiting for\b", re.I), "i915"),
)
NVRM: tuple[KernelMessage, ...] = (
    # src/nvidia/…/bif/arch/maxwell/kernel_bif_gm107.c and hopper/kernel_bif_gh100.c: after an FLR or a GC6 exit
    KernelMessage("nv_not_back_on_bus", re.compile(r"\bTimeout GPU not back on the bus\b")),
    # src/nvidia/…/bif/arch/turing/kernel_bif_tu102.c and hopper/kernel_bif_gh100.c: the VBIOS' boot after a reset
    KernelMessage("nv_vbios_boot_failed", re.compile(r"\bVBIOS boot failed\b")),
    # kernel-open/nvidia/nv-pci.c: the probe could not enable the device or wire the RM to it; nv.c's device start
    KernelMessage("nv_device_start_failed", re.compile(r"\bpci_enable_device failed, aborting\b|"
                                                       r"\brm_init_private_state\(\) failed\b|"
                                                       r"\bDevice start failed for [0-9a-fA-F]{4}:")),
    # kernel-open/nvidia/nv-pci.c (nv_resize_pcie_bars): BAR1 lost while it was resized
    KernelMessage("nv_bar1_lost", re.compile(r"\bFailed to re-allocate BAR1\b")),
) + tuple(KernelMessage(kind, pattern) for kind, pattern in nv_driver_faults.NVRM)  # R9A: GSP RPC stack, NVLink
# a word each NVRM kind's wording holds (lower case): kernel.py searches a line for a kind only where one is
NVRM_WORDS: dict[str, tuple[str, ...]] = {
    "nv_not_back_on_bus": ("not back on the bus",), "nv_vbios_boot_failed": ("vbios boot",),
    "nv_device_start_failed": ("pci_enable_device", "rm_init_private_state", "device start failed"),
    "nv_bar1_lost": ("re-allocate bar1",),
} | nv_driver_faults.WORDS
