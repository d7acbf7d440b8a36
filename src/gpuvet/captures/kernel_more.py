"""Issue 46: what kernel.parse reads after the driver's own messages, each its own module: a GPU function's PCI
enumeration lines (pci_enum), Xid lines a poster shortened (xid_shorthand), and the driver version the NVIDIA
driver's loading line names ('NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15 …', the open modules'
'… Open Kernel Module for aarch64  565.77 …'; /proc/driver/nvidia/version's 'NVRM version: NVIDIA UNIX …' line
the same): the version loaded, for the inventory where no tool says one."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gpuvet.captures import (
    agent_smi_errors,
    kernel_amd_client,
    kernel_amd_resume,
    kernel_display,
    kernel_driver_oops,
    kernel_driver_resources,
    kernel_edge_accel,
    kernel_guest,
    kernel_host,
    kernel_intel_fault,
    kernel_intel_fw,
    kernel_intel_reset,
    kernel_nouveau,
    kernel_nvgpu,
    kernel_oom,
    kernel_vendor_reset,
    nhc_xids,
    pci_any_bars,
    pci_enum,
    pci_resources,
    ps_states,
    xid_shorthand,
    xorg_init,
)
from gpuvet.captures.lines import seconds
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.text import Line

if TYPE_CHECKING:
    from gpuvet.captures.kernel import KernelParse

# amdgpu's bring-up through DRM's info prints, read as its driver lines (kernel._AMDGPU_LINE; FreeBSD drm-kmod's
# '[drm ERROR :amdgpu_…' before it): '[drm] amdgpu kernel modesetting enabled.', '[drm] amdgpu version: …',
# '[drm] initializing kernel modesetting (VEGA10 0x1002:0x6860 …' (AMD's vendor id), '[drm] add ip block number 0 <…>'
AMD_INIT = (r"\[drm\] (?:amdgpu (?:kernel modesetting|version)|initializing kernel modesetting \(\w+ 0x1002:|"
            r"add ip block number)")
_LOADING = re.compile(r"NVRM(?: version)?:\s+(?:loading )?NVIDIA UNIX (?:Open Kernel Module for \w+|\w+ Kernel Module)"
                      r"\s+(\d{2,4}\.\d{1,3}(?:\.\d{1,3})?)\s")

# the GSP image the NVIDIA driver asks the firmware loader for sits under its own version
# (kernel-open/nvidia/nv-firmware.c: 'nvidia/<NV_VERSION_STRING>/gsp_ga10x.bin'): the version loaded, where the
# loading line is cut away (a log of a failed load often holds only the loader's lines)
_GSP_DIR = re.compile(r"\bnvidia/(\d{2,4}\.\d{1,3}(?:\.\d{1,3})?)/gsp_\w+\.bin\b")


def read(lines: list[Line], out: KernelParse, marks: Marks | None = None,
         worded: list[tuple[int, Line]] | None = None) -> KernelParse:
    """``out`` with the enumeration lines' modules and events, the shortened Xids and the driver version (the
    last loading line's: a log over a driver update names the one loaded last). ``worded``: kernel.parse's lines
    holding 'NVRM' (a loading line's), so that the version costs no pass over a bug report's lines."""
    candidates = _candidates(lines, out, marks)
    out = xid_shorthand.read(lines, pci_enum.read(lines, out, marks, candidates), candidates)
    out = pci_resources.read(lines, out, marks)  # a GPU's function or port gone from the bus; the class's notes
    out = pci_any_bars.read(lines, out, marks)  # R10A: a NIC's BARs, a NIC's or GPU's SR-IOV VF BARs unassigned
    out = xorg_init.read(lines, out, marks)  # Xorg's line that the NVIDIA module failed to bring a GPU up
    out = kernel_host.read(lines, out, marks)  # the IOMMU refusing a GPU's DMA, a task hung in its driver
    out = kernel_nvgpu.read(lines, out, marks)  # Jetson's nvgpu: its platform device's faults
    out = kernel_edge_accel.read(lines, out, marks)  # R13D: Hailo's and Coral's (apex) PCIe drivers
    out = kernel_nouveau.read(lines, out, marks)  # nouveau's channel errors (fifo, gr) and MMU faults
    out = kernel_intel_fault.read(lines, out, marks)  # xe's and i915's page faults; the engine reset after one
    out = kernel_intel_fw.read(lines, out, marks)  # i915's and xe's GuC, HuC, GSC and DMC firmware failures
    out = kernel_vendor_reset.read(lines, out, marks)  # vendor-reset's resets of a GPU passed through to a VM
    out = kernel_guest.started(lines, out)  # FX68F: nvidia-smi's lost handle of a module never started (a VM's)
    out = kernel_driver_resources.read(lines, out, marks)  # NVRM's NV_ERR_NO_MEMORY, the GuC not answering
    out = kernel_intel_reset.read(lines, out, marks)  # an Intel GPU hang whose reset crashed the kernel
    out = kernel_driver_oops.read(lines, out, marks)  # FX68C: any other oops in a GPU driver's code
    out = agent_smi_errors.read(lines, out, marks)  # a monitoring agent's nvidia_smi errors, a lost handle quoted
    out = kernel_amd_client.read(lines, out, marks)  # R5A: an amdgpu page fault of its firmware (MP0, MP1)
    out = kernel_amd_resume.read(lines, out, marks)  # R6C: amdgpu's SMU resumed while the node ran: a note
    out = kernel_display.read(lines, out, marks)  # R7B: a graphics driver's display-path lines: read, a note
    out = ps_states.read(lines, out, marks)  # R14D: ps/top listings: a GPU task in uninterruptible sleep (D)
    out = nhc_xids.read(lines, out, marks)  # R14D: a health check's 'Found XID errors: 63': the Xids it found
    out = kernel_oom.read(lines, out, marks)  # R14E: the OOM killer's lines: the host ran out of memory
    loading = seconds(worded) if worded is not None else [lines[i] for i in holding(lines, ("NVRM", "gsp_"), marks)]
    loaded = [m.group(1) for ln in loading
              if ("NVRM: loading" in ln.text or "NVRM version:" in ln.text) and (m := _LOADING.search(ln.text))]
    imaged = [m.group(1) for ln in loading if "gsp_" in ln.text and (m := _GSP_DIR.search(ln.text[:400]))]
    out.driver = loaded[-1] if loaded else imaged[-1] if imaged else out.driver
    return out


def _candidates(lines: list[Line], out: KernelParse, marks: Marks | None) -> list[int]:
    """Issue 43: the indices of the lines either reader may read, in one pass: a GPU function's line ('[10de:' or
    '[1002:', both held by '[10'; each also holds '] type ' and ' class 0x') and, in a log with a driver Xid line,
    a line holding 'Xid'; a word the whole text lacks is not tested (a bug report's log is mostly other lines)."""
    may = marks.may if marks is not None else (lambda word: True)
    typed = may("] type ") and may(" class 0x")
    vendors = [w for w in ("[10de:", "[1002:") if typed and may(w)]
    xids = may("Xid") and (xid_shorthand.wanted(out) or may(xid_shorthand.CONDENSED_WORD))
    words = (["[10"] if len(vendors) == 2 else vendors) + (["Xid"] if xids else [])
    if not words:
        return []
    if len(words) == 1:
        return holding(lines, (words[0],))
    a, b = words
    return [i for i, ln in enumerate(lines) if a in (s := ln.text) or b in s]
# the NVIDIA driver's GSP boot on Hopper timing out before the GSP released its target mask
# ('kgspBootstrapRiscvOSEarly_GH100: Timeout waiting for GSP target mask release'): the GSP never started
GSP_BOOT = r"\bTimeout waiting for GSP target mask release\b|\bkgspBootstrap\w*: .*\b(?:failed|timed? ?out)\b"
# amdgpu's SMU not answering (smu_v11_0's 'SMC is not ready', 'SMC engine is not correctly up!', 'Failed to disable
# smu features') and a resume (from suspend or runtime power-down) that failed: 'resume of IP block <smu> failed
# -5', then 'amdgpu_device_ip_resume failed (-5).': the module's engines did not come back (amd_recovery_failed)
AMD_NOT_BACK = (r"Failed to disable smu features|\bSMC is not ready\b|\bSMC engine is not correctly up\b|"
                r"\bresume of IP block <\w+> failed\b|\bamdgpu_device_ip_resume failed\b")
# the lines a call trace of amdgpu/amdkfd's recovery path holds: a KFD hardware exception the driver answers with a
# reset (kfd_process_hw_exception calling amdgpu_amdkfd_gpu_reset), the job-timeout path's recovery frames
AMD_RESET_FRAMES = (r"\bkfd_process_hw_exception\b|\bamdgpu_amdkfd_gpu_reset\+0x|\bamdgpu_device_gpu_recover\w*\+0x|"
                    r"\bamdgpu_job_timedout\+0x")
# lines that are amdgpu's without its name at their head: amdkfd's queue eviction timing out, powerplay's tag (its
# hwmgr's SMU message failures, 'Failed to send message: 0x26, ret value: 0x0', a lead kernel_unknown quotes), the
# KFD's hardware-exception work item
AMD_LINE = r"qcm fence wait loop timeout expire|\[powerplay\]|\bkfd_process_hw_exception\b|"
# R9D: amdgpu's PSP words under FreeBSD drm-kmod's address tag ('[drm:0xffffffff82a5c1e0] *ERROR* PSP firmware loading
# failed'), and a poster's 'amdgpu_device_fw_loading failed'
AMD_LINE += (r"\[drm:0x[0-9a-fA-F]{8,16}\] [*_]ERROR[*_] PSP (?:firmware loading|load [\w ]{2,16}?|create ring) failed|"
             r"\bamdgpu_device_(?:fw_loading|ip_init)(?:\(\))? failed")
