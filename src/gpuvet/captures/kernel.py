"""Kernel log lines from the NVIDIA driver: Xid errors, a GPU that fell off the bus without one
(newer drivers print that as a multi-line NVRM message), and the NVRM messages that say a module
did not come up or needs a reset without any Xid (MESSAGES below: what each one is, read as data).

A message names its module by bus id (``GPU 0000:a1:00.0:``) or only by the driver's index
(``GPU6 _kgspBootGspRm``); the index is resolved to the bus id the nearest ``RmInitAdapter
failed`` line of the same index or a nearby line names, or left as printed (noted).

The amdgpu driver's messages are read the same way (AMD_MESSAGES): a ring that timed out, a GPU reset, a reset
that failed, an uncorrectable RAS error or poison, xGMI errors; a line names its module as ``amdgpu 0000:28:00.0:``,
or a nearby amdgpu line does (``[drm:amdgpu_job_timedout]`` lines carry none).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from gpuvet.captures import drm_kmod, host_errors, kernel_amd_place, kernel_more, kernel_unknown, kernel_wrapped
from gpuvet.captures import kernel_phrases as _phrases  # issue 46: the drivers' other error strings, as classes
from gpuvet.captures.kernel_echoes import handle_kind, passed_through, recovered, without_echoes
from gpuvet.captures.kernel_phrases import KernelMessage as KernelMessage  # its record: tables here and there
from gpuvet.captures.kernel_places import AMD_BUS as _AMD_BUS
from gpuvet.captures.kernel_places import AMD_NO_BUS as AMD_NO_BUS  # re-exported: the labels readers share
from gpuvet.captures.kernel_places import INTEL_NO_BUS as INTEL_NO_BUS
from gpuvet.captures.kernel_places import NEARBY as NEARBY
from gpuvet.captures.kernel_places import NO_BUS as NO_BUS
from gpuvet.captures.kernel_places import amd_module_of, index_buses, intel_module_of, module_of
from gpuvet.captures.kernel_sxid import SXID, sxid_kind
from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.lines import pairs, seconds, unless
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.records import XidLine
from gpuvet.captures.text import Line
from gpuvet.captures.xid_shorthand import asked
from gpuvet.node.bus import bus_key

_BUS = r"([0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})"
_XID = lazy(r"NVRM:? ?Xid \((?:PCI:)?" + _BUS + r"(?:\.\d)?\) ?: ?(\d+) ?,")  # older: no 'PCI:', 'NVRM Xid (…) : 32,'
_XID_MASKED = lazy(r"NVRM:? ?Xid \((?:PCI:)?[^)\d]{0,20}\) ?: ?(\d+) ?,")  # a poster's 'PCI:...' or 'PCI:xxxx'
_FALLEN = lazy(r"NVRM: The NVIDIA GPU " + _BUS)
# nvidia-smi's own answer for a module NVML cannot open: 'Unknown Error', 'GPU is lost', 'No data' …
# read as nvidia-smi's own line: at the line's start, after a dmesg/syslog/journal prefix or a shell prompt
# (and the nvidia-smi command typed after it), or pasted whole into a sentence that says it is the tool's
# output ('… outputs the following error: Unable to …') and ends with it; prose that mentions it is not read
_SMI_LEAD = (r"^\s*(?:\[[^\]]{1,40}\]\s*)?"
             r"(?:(?:[A-Z][a-z]{2}\s+\d{1,2}\s+\d\d:\d\d:\d\d|\d{4}-\d\d-\d\d[T ][\d:.,]+(?:Z|[+-]\d\d:?\d\d)?)"
             r"\s+(?:[\w.-]+\s+)?(?:[\w./-]+(?:\[\d+\])?:\s+)?)?"
             r"(?:[\w.@:~/\\-]*[$#>]\s*(?:\S*nvidia-smi\S*(?:\s+-{1,2}\S+)*\s+)?)?")
# the bus id as the poster left it: a domain shortened or mistyped ('000:BA:80.0'), or none ('0B:00.0')
# nvidia-smi.exe on Windows words it 'Unable to detect the device handle for GPU0000:B1:00.0: …'
_NO_HANDLE_HEAD = (r"Unable to (?:determine|detect) the device handle for (?:[Gg][Pp][Uu]\s*(?:\d{1,3}:\s+)?)?(?:PCI:)?"
                   r"((?:[0-9a-fA-F]{1,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2})(?:\.\d)?:\s*")
_NO_HANDLE_WORDS = _NO_HANDLE_HEAD + r"(\S.{0,80}"
_NO_HANDLE = lazy(_SMI_LEAD + _NO_HANDLE_WORDS + ")")
# the whole line quoted anywhere in a sentence or markdown ('it shows "Unable to … Unknown Error". Can …',
# '**"Unable to … GPU is lost …"**'): the quotes that open and close it mark it as the tool's output
_NO_HANDLE_ENCLOSED = lazy(r"[\"\u201c`]" + _NO_HANDLE_HEAD + r"([^\"\u201d`]{1,120})[\"\u201d`]")
_NO_HANDLE_QUOTED = lazy(r"\b(?:errors?|output|outputs|message|prints?|printed|returns?|returned|shows?|"
                         r"showed|says?|said|gives?|gave|gets?|got)\b[^:]{0,40}:\s*[\"'`]?" +
                         _NO_HANDLE_WORDS + r"?)[\"'`.]*\s*$", re.I)
# the line glued into prose of another script (CJK, Cyrillic: no space, '：' or '。' around it) is the tool's words
_OTHER_SCRIPT = r"[^\x00-\u024f\s]"
_NO_HANDLE_IN_SCRIPT = lazy(_OTHER_SCRIPT + r"\s?[\"'`\u201c\u300c]?" + _NO_HANDLE_HEAD +
                            r"([A-Za-z][A-Za-z .'-]{0,60}?)[\"'`\u201d\u300d.]?\s*(?:$|" + _OTHER_SCRIPT + ")")
# no web address (docs.nvidia.com), nor the container toolkit's programs (nvidia-container-cli's 'open failed:
# /proc/sys/kernel/overflowuid' is the runtime's set-up, captures/container_layer.py)
_NVIDIA_MODULE = lazy(r"(?<![\w.])nvidia\b(?!\.com|-container-|-ctk\b|-cdi-).*(kernel|module|probe)")
# a module lost from the bus in the words other than the Xid line: NV_DEV_PRINTF's one line of the open
# kernel modules (``NVRM: GPU 0000:c1:00.0: GPU has fallen off the bus.``) and the old one-line wording
# (``NVRM: GPU at 0000:01:00.0 has fallen off the bus.``, ``GPU at PCI:0000:01:00``)
_FALLEN_ONE_LINE = lazy(r"NVRM: GPU (?:at )?(?:PCI:)?" + _BUS + r"(?:\.\d)?:? .*fallen off the bus")
_SXID = SXID  # the NVSwitch driver's SXid line (captures/kernel_sxid.py; read by captures/fallback.py too)
_LINE_HEAD = 1000  # characters of an amdgpu line searched for a message
_BUS_KEY = lazy(r"[0-9A-F]{4,8}:[0-9A-F]{2}:[0-9A-F]{2}\.[0-7]")  # a bus id as node.bus spells it


# The driver's own words (open-gpu-kernel-modules prints them as shown); the meaning, cause and
# fix of each kind is data beside them (captures/kernel_messages.yaml), read by doctor and health.
NVRM_MESSAGES: tuple[KernelMessage, ...] = (
    KernelMessage("gfw_boot_failed", lazy(r"failed to wait for GFW(?:[_ ]boot|_?$)|GFW boot did not complete|"
                                          r"WaitForGfwBoot\w*: failed", re.I)),
    KernelMessage("fsp_boot_failed", lazy(r"kfsp\w*: (?:Timed? ?out|timeout|failed)|FSP (?:secure )?boot "
                                          r"(?:failed|timed out)|kfspSendBootCommands\w*\(", re.I)),
    KernelMessage("needs_reset", lazy(r"may need to be reset|needs? (?:to be )?reset|"
                                      r"\[NV_ERR_RESET_REQUIRED\]|WPR2 already up", re.I)),
    KernelMessage("gsp_failed", lazy(r"Cannot initialize GSP firmware RM|GSP boot failed|"
                                                r"GSP RM heartbeat timed out|" + kernel_more.GSP_BOOT, re.I)),
    # the open modules' RPCs to the GSP failing or timing out (kernel_rpc.c, kernel_gsp.c): the driver can no
    # longer talk to the module's firmware; what follows is a reset, or a module that stays unusable
    KernelMessage("gsp_rpc_failed", lazy(r"\brpc(?:SendMessage|RecvPoll)\w* (?:failed|timed ?out)|"
                                         r"_issueRpcAndWait: .*\b(?:failed|timed ?out)\b|"
                                         r"Timeout (?:after [\d.]+\s*m?s )?(?:of )?waiting for RPC|"
                                         r"\bGspRm\w+ failed|GSP Timeout\b|\bkflcnCoreDump\w*|GSP core dump|"
                                         # the RPC history the driver dumps only after an RPC failed or
                                         # timed out (its header, or its newest row: entry 0)
                                         r"\bGSP RPC (?:buffer )?history\b|"
                                         r"NVRM:\s+\W?0\s+\d+\s+[A-Z][A-Z0-9_]+\s+\d+\s+0x[0-9a-f]{16}\s", re.I)),
    KernelMessage("cannot_attach", lazy(r"Cannot attach gpu|osInitNvMapping failed|"
                                        r"API_GPU_ATTACHED_SANITY_CHECK failed", re.I)),
    KernelMessage("gpu_lost", lazy(r"\[NV_ERR_GPU_IS_LOST\]|GPU lost from the bus", re.I)),
    KernelMessage("power_cables", lazy(r"does not have the necessary power cables connected", re.I)),
    KernelMessage("init_failed", lazy(r"RmInitAdapter failed|rm_init_adapter failed", re.I)),
    KernelMessage("api_mismatch", lazy(r"\bAPI mismatch: (?:the )?client\b", re.I)),  # newer: the client 'x' (pid N)
    # the kernel's AER recovery gave up on the module after an uncorrectable error (pci/pcie/err.c: the driver
    # has no error_detected callback, or the reset failed): it is unreachable until the slot is reset
    KernelMessage("aer_unrecovered", lazy(r"\bAER: can't recover\b", re.I)),
    # nv-pci.c: a module the driver will not drive (the open nvidia.ko needs a GSP; a legacy GPU past its
    # release), then the kernel's and the driver's own word that the probe failed
    KernelMessage("unsupported_by_driver", lazy(r"is not supported by (?:open$|open nvidia\.ko|the NVIDIA)|"
                                                r"installed in this system is not supported|"
                                                # the kernel wraps it: '… installed' / 'NVRM: in this system is
                                                # not supported by the 280.13 NVIDIA Linux'; a legacy GPU's
                                                # newer wording '… is supported through the NVIDIA 390.xx'
                                                r"\bis not supported by the [\d.]+ NVIDIA\b|"
                                                r"\bsupported through the NVIDIA [\d.x]+|"  # kgspInitRm's:
                                                r"\bmissing \w+ engine, cannot initiali[sz]e GSP-RM", re.I)),
    # nv-pci.c: another driver (nouveau, vfio-pci ...) owns the devices; the NVIDIA probe is never called for them
    KernelMessage("probe_not_called", lazy(r"NVIDIA probe routine was not called for \d+ device|"
                                           r"obtained ownership of the NVIDIA device", re.I)),
    # nv.c: the driver loaded and no NVIDIA device answered its probe (the GPU powered off or absent)
    KernelMessage("no_adapter", lazy(r"No NVIDIA graphics adapter found", re.I)),
    KernelMessage("probe_failed", lazy(r"\bprobe of \S+ failed with error|NVIDIA probe routine failed|"
                                       r"None of the NVIDIA devices were initiali[sz]ed|"
                                       r"No NVIDIA (?:GPU|devices?) (?:found|probed)", re.I)),
) + _phrases.NVRM  # the other error strings of its source
# The amdgpu driver's own words (drivers/gpu/drm/amd/amdgpu in Linux prints them as shown).
AMD_MESSAGES: tuple[KernelMessage, ...] = (
    KernelMessage("amd_reset_failed", lazy(r"GPU reset\(\d+\) failed|GPU Recovery Failed|"
                                           r"(?<!Ring )(?<!ring )\bGPU reset failed|ASIC reset failed", re.I),
                  "amdgpu"),
    # the driver could not bring the module up (amdgpu_device_init: an IP block's sw_init/hw_init failed, then
    # 'Fatal error during GPU init'; the PCI core's probe failure; amdgpu_psp.c: the PSP ring or firmware)
    KernelMessage("amd_init_failed", lazy(r"Fatal error during GPU init|amdgpu_device_ip_init failed|"
                                          r"\b[hs]w_init of IP block <\w+> failed|\bPSP (?:create ring|"
                                          r"load \w+|tmr init|firmware loading) failed|Fail to stop psp ring|"
                                          r"probe with driver amdgpu failed|\bprobe of \S+ failed with error|"
                                          r"\batombios stuck (?:in loop|executing)\b", re.I), "amdgpu"),
    # the engines did not come back after a reset or a resume: the KIQ ring's test times out (-110), the compute/graphics
    # queues cannot be disabled (amdgpu_ring_test_helper, gfx_v*_hw_fini), the SMU's words (kernel_more.AMD_NOT_BACK)
    KernelMessage("amd_recovery_failed", lazy(r"\bring kiq\S* test failed|\bK[GC]Q disable failed|"
                                              r"\bfailed to send message \w+ ret is 0\b|" + kernel_more.AMD_NOT_BACK,
                                              re.I), "amdgpu"),
    # an engine failed the driver's own self-test while the module was brought up or resumed (amdgpu_ib.c's
    # 'IB test failed on vpe (-110).', amdgpu_device.c's 'ib ring test failed (-110).', amdgpu_ring.c's 'ring
    # sdma0 test failed (-110)', older drivers' 'amdgpu: failed testing IB on ring 0' / 'IB test timed out', and
    # the compute queues that would not map: 'KCQ enable failed'): any IP block - gfx, sdma, vcn, jpeg, vpe, mes
    KernelMessage("amd_ring_test_failed", lazy(r"\bIB test (?:failed|timed out)\b|\bib ring test failed\b|"
                                               r"\bring \S+ test failed\b|\bfailed testing IB\b|"
                                               r"\bK[GC]Q enable failed\b", re.I), "amdgpu"),
    KernelMessage("amd_ras_uncorrectable", lazy(r"uncorrectable hardware error|\d+ uncorrectable hardware "
                                                r"errors? detected|RAS:? .*\buncorrectable", re.I), "amdgpu"),
    KernelMessage("amd_poison", lazy(r"\bpoison (?:consumption|consumed|creation)|poison interrupt", re.I),
                  "amdgpu"),
    KernelMessage("amd_xgmi_error", lazy(r"\bxgmi\b.*\b(?:error|fail(?:ed|ure)?)\b", re.I), "amdgpu"),
    # a ring reset brought the ring back ('Ring %s reset succeeded', older 'reset success'): the job was lost
    KernelMessage("amd_ring_recovered", lazy(r"\bRing \S+ reset succe(?:eded|ss)\b", re.I), "amdgpu"),
    KernelMessage("amd_ring_timeout", lazy(r"\bring \S+ timeout\b", re.I), "amdgpu"),
    KernelMessage("amd_gpu_reset", lazy(r"\bGPU reset begin\b|" + kernel_more.AMD_RESET_FRAMES, re.I), "amdgpu"),
    KernelMessage("amd_reset_resumed", lazy(r"\bGPU reset succeeded, trying to resume\b", re.I), "amdgpu"),
    KernelMessage("amd_mes_unresponsive", lazy(r"\bMES failed to respon", re.I), "amdgpu"),
    # a GPU page (VM) fault the driver reports ('[gfxhub0] no-retry page fault (src_id:0 ring:24 vmid:8 pasid:…,
    # for process python3 …)'); a printed 'retry page fault' is one XNACK could not resolve (kernel_phrases, R10A)
    # older drivers word it '[mmhub] VMC page fault (src_id:0 ring:153 vm_id:0 pas_id:0)' (gmc_v9, 2018) or, on
    # GCN parts before Vega (gmc_v6/7/8), 'GPU fault detected: 146 0x0000480c' before the VM_CONTEXT1 registers
    KernelMessage("amd_page_fault", lazy(r"\[(?:gfx|mm)hub\d*\]\s+(?:no-retry\s+|VMC\s+)?page fault\b(?!`)|"
                                         r"\bGPU fault detected: \d+", re.I), "amdgpu"),
    KernelMessage("amd_aer_unrecovered", lazy(r"\bAER: can't recover\b", re.I), "amdgpu"),
    # the fault's own status register, printed under any page fault line: a non-zero status is a fault the
    # memory management unit could not resolve (PERMISSION_FAULTS, MAPPING_ERROR …), a retry fault's too
    KernelMessage("amd_vm_protection_fault", lazy(r"\bVM_L2_PROTECTION_FAULT_STATUS:\s*0x0*[1-9a-fA-F]"),
                  "amdgpu"),
    # amdgpu_dm's commit waited for the module's rendering fences and gave up: its work stopped completing
    KernelMessage("amd_fence_timeout", lazy(r"\bWaiting for fences timed out\b", re.I), "amdgpu"),
    # a kernel WARNING/BUG in amdgpu's own code: the trace's 'RIP: 0010:amdgpu_irq_put+0x68/0x90 [amdgpu]', the
    # 'WARNING: CPU: 5 PID: 1 at drivers/gpu/drm/amd/amdgpu/amdgpu_irq.c:631 …' header of the same trace, or where
    # only its frames are shown, one of an IP block's teardown ('gmc_v9_0_sw_fini+0x11b/0x180 [amdgpu]')
    KernelMessage("amd_driver_warning", lazy(r"\bRIP: [0-9a-fA-F]{4}:\S+ \[amdgpu\]|"
                                             r"\bWARNING: CPU: \d+ PID: \d+ at \S*drivers/gpu/drm/amd/|"
                                             r"^\s*(?:\[[^\]]{1,40}\]\s*)?(?:\w+_v\d+_\d+_sw_fini|"
                                             r"amdgpu_device_fini\w*)\+0x[0-9a-f]+/0x[0-9a-f]+ \[amdgpu\]"),
                  "amdgpu"),
    KernelMessage("amd_queue_fence_timeout", lazy(r"qcm fence wait loop timeout|Queue preemption time out"), "amdgpu"),
    # '[drm] Fence fallback timer expired on ring gfx_0.0.0' (amdgpu_fence.c; drm-kmod alike): no interrupt came
    KernelMessage("amd_fence_fallback", lazy(r"\bFence fallback timer expired on ring\b", re.I), "amdgpu"),
    # the SMU throttled on a limit (GPU, HBM, VR temperature; PPT) or crossed it (over temperature range, SW/HW CTF)
    KernelMessage("amd_thermal_throttle", lazy(r"\bthermal throttling temperature reached|over temperature range|"
                  r"\bGPU is throttled, expect performance|\b[SH]W CTF\b|Critical Temperature Fault", re.I), "amdgpu"),
) + _phrases.AMD
# Intel's i915 and xe drivers (drivers/gpu/drm/i915 and drm/xe in Linux print them as shown; FreeBSD's drm-kmod
# port prints the same words after '[drm]', without a bus id): a device the driver gave up on (wedged), an engine reset
# that failed (then the whole chip's), a GPU hang a reset recovered, a device lost (its registers read 0xFFFFFFFF)
INTEL_MESSAGES: tuple[KernelMessage, ...] = (
    KernelMessage("intel_wedged", lazy(r"\bdeclared device \S+ as wedged|\bhanging too fast, declaring wedged|"
                                       r"\bFailed to reset chip|\b(?:GPU|device) (?:is |has been )?wedged\b", re.I),
                  "i915"),
    KernelMessage("intel_engine_reset_failed", lazy(r"\bEngine reset failed|\bfailed to reset engine|"
                                                    r"\b\w+cs\d reset request timed out", re.I), "i915"),
    # the driver could not bring the module up: its probe failed (the PCI core's line, or i915's own)
    KernelMessage("intel_init_failed", lazy(r"\bprobe (?:of \S+|with driver (?:i915|xe)) failed with error|"
                                            r"\bDevice initiali[sz]ation failed\b", re.I), "i915"),
    # xe words a hang as a job that timed out on the GuC and the engine reset that follows
    KernelMessage("intel_gpu_hang", lazy(r"\bGPU HANG: ecode\b|\bResetting (?:\w+|chip) (?:for|after) "
                                         r"(?:gpu )?hang\b|\bTimedout job: seqno=|\bEngine reset: engine_class=",
                                         re.I), "i915"),
    KernelMessage("intel_gpu_lost", lazy(r"\bMMIO unreliable\b|\b(?:Unclaimed|MMIO)\b.{0,80}\b0xffffffff\b|"
                                         r"\bdevice is inaccessible\b|\bGPU is lost\b", re.I), "i915"),
) + _phrases.INTEL
# A word every wording of a kind holds (lower case): a line without any is not searched for that kind. Eight
# case-insensitive searches of every NVRM line were the parse's largest cost (a 10 MB sample: 1.4 s of 3.4 s).
_WORDS: dict[str, tuple[str, ...]] = {
    "gfw_boot_failed": ("gfw",), "fsp_boot_failed": ("fsp",), "needs_reset": ("reset", "wpr2"),
    "gsp_failed": ("gsp",), "gsp_rpc_failed": ("rpc", "gsp", "0x0000", "coredump"), "aer_unrecovered": ("recover",),
    "cannot_attach": ("attach", "nvmapping"), "gpu_lost": ("lost",), "probe_not_called": ("not called", "ownership"),
    "power_cables": ("power cables",), "init_failed": ("initadapter", "init_adapter"),
    "unsupported_by_driver": ("not supported", "supported through", "gsp-rm"), "api_mismatch": ("api mismatch",),
    "probe_failed": ("probe", "initiali", "no nvidia"), "no_adapter": ("graphics adapter",),
} | _phrases.NVRM_WORDS
# nvidia-smi's own words for a module it cannot open (read wherever they stand, with the kernel's lines)
SMI_MESSAGES: tuple[KernelMessage, ...] = (KernelMessage("smi_no_handle", _NO_HANDLE, "nvidia-smi"),)
# the NVSwitch driver's SXid summary lines, by the fatality they name (read by _sxid_line)
SWITCH_MESSAGES: tuple[KernelMessage, ...] = (
    KernelMessage("nvswitch_sxid", lazy(_SXID.pattern.replace(r"(.*)", r"Non-?fatal\b", 1), re.I),
                  "nvidia-nvswitch"),
    KernelMessage("nvswitch_sxid_fatal", lazy(_SXID.pattern.replace(r"(.*)", r"Fatal\b", 1)),
                  "nvidia-nvswitch"))
# every kind: kernel_messages.yaml gives each its cause and action
MESSAGES = NVRM_MESSAGES + AMD_MESSAGES + INTEL_MESSAGES + SMI_MESSAGES + SWITCH_MESSAGES
_AMD_KINDS = frozenset(k.kind for k in AMD_MESSAGES) | kernel_amd_place.HANG_KINDS  # AGX1: amd_hang_outcome's
_INTEL_KINDS = frozenset(k.kind for k in INTEL_MESSAGES)
# an i915/xe line: the driver's dev_printk prefix ('i915 0000:00:02.0:', 'xe 0000:03:00.0:'), its function names
# ('[drm:i915_…', 'drm/i915:') or the hang report FreeBSD's port prints after '[drm]' without either
_INTEL_LINE = lazy(r"\b(?:i915|xe)(?:: probe of)? [0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:|\[drm:(?:i915|intel|xe)_|"
                   r"\bdrm/i915\b|GPU HANG: ecode|\bgpu hanging too fast, banning\b")
_AMDGPU_LINE = lazy(r"\bamdgpu(?: [0-9a-fA-F]{4,8}:|:|\])|\[drm:amdgpu_|"  # the driver's lines, not the word
                    r"Fence fallback timer expired on ring|" + kernel_more.AMD_LINE + "|"
                    r"\[drm (?:ERROR|WARN\w*|INFO) :(?:amdgpu|mes_v\d+|gfx_v\d+|sdma_v\d+)_|" + kernel_more.AMD_INIT)
_DRMN = lazy(r"^\s*(?:\[[^\]]*\]\s*|\w{3} [ \d]\d [\d:]{8} \S+ kernel: )?drmn\d+: ")  # FreeBSD: drmn0, no bus id


@dataclass(frozen=True)
class KernelEvent:
    """An NVRM message of one kind about one module: the first line saying it, and how often it was said."""

    kind: str
    module: str  # bus id (upper case, as Xid lines give it) or the driver's index ("GPU6") when no line names the bus
    text: str  # the first line saying it, as logged
    line: int  # its line number in the file
    count: int = 1
    quoted: bool = False  # issue 46: a poster's sentence naming the message (captures/quoted.py)
    host: str | None = None  # the launcher's host, where the log names two or more (captures/hosted.py)
    driver: str = ""  # issue 46: the driver whose unnamed error lines these are (kernel_unknown.UNNAMED)
    shown: tuple[str, ...] = ()  # the first of those lines, quoted


@dataclass(frozen=True)
class KernelModule:
    """A module the kernel log names, by bus id or (where no line names one) the driver's index, with what
    the driver printed of it; the model only where a line prints one (a kernel log seldom does)."""

    module: str  # bus id as node.bus spells it, or the driver's index ("GPU0")
    vendor: str  # NVIDIA, AMD: whose driver named it
    serial: str | None = None  # 'NVRM: GPU Board Serial Number:'
    uuid: str | None = None  # 'NVRM: GPU at PCI:0000:02:00: GPU-…'
    chip: str | None = None  # the chip a driver names it by (nvgpu's ga10b: captures/kernel_nvgpu.py)


@dataclass
class KernelParse:
    xids: list[XidLine] = field(default_factory=list)
    events: list[KernelEvent] = field(default_factory=list)
    modules: list[KernelModule] = field(default_factory=list)  # every module a driver line names, in bus order
    nvrm_lines: int = 0  # how many driver lines were read: a log with none says nothing either way
    claimed: set[int] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)
    sxid_details: list[KernelEvent] = field(default_factory=list)  # read where the excerpt lacks their summary
    driver: str | None = None  # the version the NVIDIA driver's loading line names (captures/kernel_more.py)
    unknown_drivers: dict[str, int] = field(default_factory=dict)  # issue 46: lines of drivers kernel.py has no
    # messages for (mtgpu, nouveau …), by driver: a log of only these is read, and never called clear


def bus(text: str) -> str:
    """The module's bus id as every reader spells it (node.bus): 0000:2a:00 is 0000:2A:00.0."""
    return bus_key(text)


def parse(lines: list[Line], marks: Marks | None = None) -> KernelParse:
    """``marks``: the whole text's (formats' run), which tell the words it lacks without a search."""
    out = KernelParse()
    seen: list[KernelModule] = []  # modules named by the driver's own dev_printk prefix
    fallen: str | None = None
    hits: list[tuple[int, str, Line]] = []
    handles: list[KernelEvent] = []
    lines, worded = kernel_wrapped.joined(lines, _worded(lines, marks))
    for i, ln in worded:
        s = ln.text
        if _other_vendor_line(out, hits, i, ln):
            continue
        if "device handle" in s and (m := _NO_HANDLE.match(s) or _NO_HANDLE_QUOTED.search(s)
                                              or _NO_HANDLE_ENCLOSED.search(s)
                                              or _NO_HANDLE_IN_SCRIPT.search(s)) is not None:
            out.claimed.add(ln.no)
            out.nvrm_lines += 1
            handles.append(KernelEvent(handle_kind(s), bus(m.group(1)), s.strip()[:240], ln.no))
            continue
        if "NVRM" not in s and "nvidia" not in s or asked(s, _XID):
            continue
        if "SXid" in s and (m := _SXID.search(s)) is not None:
            _sxid_line(out, handles, m, ln)
            continue
        if "Xid" in s and (m := _XID.search(s)) is not None:
            out.xids.append(XidLine(bus(m.group(1)), int(m.group(2)), s.strip(), line=ln.no))
            out.claimed.add(ln.no)
        elif "Xid" in s and (m := _XID_MASKED.search(s)) is not None:  # the Xid stands; its module is unnamed
            out.xids.append(XidLine(NO_BUS, int(m.group(1)), s.strip(), line=ln.no))
            out.claimed.add(ln.no)
            out.notes += [] if any("masked" in n for n in out.notes) else [
                f"line {ln.no}: an Xid whose PCI id is masked in the copy ({s.strip()[:80]!r}): read with its "
                f"module as '{NO_BUS}'"]
        elif "The NVIDIA GPU" in s and (m := _FALLEN.search(s)) is not None:
            fallen = m.group(1)
            out.claimed.add(ln.no)
        elif "nvidia " in s and (dev := _NVIDIA_DEV.search(s)) is not None:  # the driver's dev_printk line
            out.claimed.add(ln.no)
            out.nvrm_lines += 1
            seen.append(KernelModule(bus(dev.group(1)), "NVIDIA"))
        elif "NVRM:" in s or ("kernel" in s or "module" in s or "probe" in s) and _NVIDIA_MODULE.search(s):
            out.claimed.add(ln.no)
            if fallen and "fallen off the bus" in s:
                _fell_off(out, fallen, f"GPU {fallen} has fallen off the bus (no Xid line)", ln.no)
                fallen = None
            elif "fallen off the bus" in s and (m := _FALLEN_ONE_LINE.search(s)) is not None:
                _fell_off(out, m.group(1), s.strip(), ln.no)
        if "NVRM" in s or "RpcRecvPoll+" in s or (ln.no in out.claimed and ("probe" in s or "AER" in s)):
            out.nvrm_lines += "NVRM" in s and "NVRM version:" not in s  # /proc/driver/nvidia/version: no log line
            kind = _nvrm_kind(s)
            if kind is not None:  # 'NVRM kgsp…:' (no colon after NVRM) is the driver's too
                out.claimed.add(ln.no)
                hits.append((i, kind, ln))
    return _finish(lines, worded, out, (hits, handles, seen), marks)


def _finish(lines: list[Line], worded: list[tuple[int, Line]], out: KernelParse,
            found: tuple[list[tuple[int, str, Line]], list[KernelEvent], list[KernelModule]],
            marks: Marks | None) -> KernelParse:
    """The messages found (``hits``, nvidia-smi's lost handles, the modules dev_printk named) made events, one
    per kind and module; the modules listed; then what the other readers of a kernel log add."""
    hits, handles, seen = found
    devices = drm_kmod.devices(lines, worded)
    out.events = _repeated_rings(_events(lines, _rings_back(recovered(lines, hits)), out.notes, devices)) + \
        _once(handles + [e for e in out.sxid_details if e.module not in {h.module for h in handles}])
    out.events = passed_through(out.events, (ln.text for ln in lines))
    _host_errors(seconds(worded), out)
    out.modules = _listed(lines, worded, out, seen) + _freebsd_listed(out.events, devices)
    out = kernel_more.read(lines, out, marks, worded)  # PCI enumeration, shortened Xids, the driver version
    others = marks is None or any(marks.may(w) for w in kernel_unknown.OTHER_WORDS)
    return _unnamed(lines, worded, out, {ln.no for _, _, ln in hits} | {e.line for e in handles}, others)


def _unnamed(lines: list[Line], worded: list[tuple[int, Line]], out: KernelParse, hit: set[int],
             others: bool) -> KernelParse:
    """Issue 46: a GPU driver's error lines no message here names, one event per driver and module (their count,
    the first lines quoted), on a module no named message is about (there they are its context: its finding
    already says to read the log); the lines of a driver with no messages here claimed, counted, modules listed."""
    named = hit | {e.line for e in out.events} | {x.line for x in out.xids}
    judged = {e.module for e in out.events} | {x.bus_id for x in out.xids}
    found, seen = kernel_unknown.error_lines(lines, worded, named, others)
    for u in found:
        module = _no_bus_label(u.driver) if u.module.startswith("a module of") else bus(u.module)
        if module in judged and u.kind not in kernel_unknown.FAILED:  # its module gone: said beside any other
            continue
        out.events.append(KernelEvent(u.kind, module, u.lines[0][2][:240], u.lines[0][1],
                                      count=len(u.lines), driver=u.driver,
                                      shown=tuple(t[:240] for _, _, t in u.lines[:kernel_unknown.SHOWN])))
        out.claimed |= {no for _, no, _ in u.lines}
    other = {d: n for d, n in seen.items() if not kernel_unknown.known(d)}
    if other:
        out.unknown_drivers = other
        out.claimed |= {ln.no for _, ln in worded if kernel_unknown.driver_of(ln.text) in other}
        out.modules += _other_modules(worded, other, out.modules)
    return replace(out, events=without_echoes(out.events))  # nvidia-smi's lost handle of a module not started


def _no_bus_label(driver: str) -> str:
    """A module no line places: the vendor's label where kernel.py has one, else the driver's."""
    return {"amdgpu": AMD_NO_BUS, "i915": INTEL_NO_BUS, "xe": INTEL_NO_BUS}.get(
        driver, f"a module of {driver}, {NO_BUS}")


def _other_modules(worded: list[tuple[int, Line]], drivers: dict[str, int],
                   listed: list[KernelModule]) -> list[KernelModule]:
    """The bus ids the lines of drivers with no messages here name (dev_printk's prefix), each once."""
    have = {k.module for k in listed}
    found: dict[str, KernelModule] = {}
    for _, ln in worded:
        if (d := kernel_unknown.driver_of(ln.text)) in drivers and d is not None and \
                (m := kernel_unknown.prefixed_bus(ln.text)) is not None and bus(m) not in have:
            found.setdefault(bus(m), KernelModule(bus(m), kernel_unknown.VENDOR.get(d, d)))
    return list(found.values())


def _worded(lines: list[Line], marks: Marks | None = None) -> list[tuple[int, Line]]:
    """The lines (with their index) holding a word some reader here needs: a driver's name, nvidia-smi's 'device
    handle', a host error's; a bug report's kernel log is mostly other lines, passed over in one test each. Less
    nvswitch's notice of a switch opened (_OPENED: no reader here reads one; a DGX report's 27k made 0.08 s)."""
    at = holding(lines, ("NVRM", "nvidia", "amdgpu", "drm", "device handle", "EDAC", "rror", "mce", "i915", "xe ",
                         "GPU HANG", "qcm fence", "Check:", "MCGSTATUS", " BANK ", *kernel_unknown.OTHER_WORDS), marks)
    return pairs(lines, unless(lines, at, _OPENED) if marks is None or marks.may("-nvswitch") else at)
    # 'HANG' alone: read beside '[drm:xe_' only; 'qcm fence': amdkfd's; a word the text lacks: untested (marks)


_OPENED = lazy(r"(?:\[[\d. ]{1,24}\] )?nvidia-nvswitch\d{1,3}: open \(major=\d{1,6}\)")  # < 72: none wrapped


_NVIDIA_DEV = lazy(r"(?:^|[\s\]:])nvidia (" + _BUS + r"\.[0-7]): ")
_GPU_AT = lazy(r"NVRM: GPU at (?:PCI:)?" + _BUS + r"(?:\.\d)?:\s+(GPU-[0-9a-fA-F-]{36})")
_BOARD_SERIAL = lazy(r"NVRM: GPU Board Serial Number:\s*(\S{1,64})")


def _listed(lines: list[Line], worded: list[tuple[int, Line]], out: KernelParse,
            seen: list[KernelModule]) -> list[KernelModule]:
    """The modules the driver lines name: Xids, the messages' modules, dev_printk prefixes, amdgpu's bus ids,
    each once in bus order (a driver index where no line places it, after them); an NVSwitch is not a module.
    The UUID and board serial the NVIDIA driver prints after an Xid 79 ('GPU at PCI:…') are kept with it."""
    found = [KernelModule(x.bus_id, "NVIDIA") for x in out.xids if x.bus_id != NO_BUS] + seen
    found += [KernelModule(e.module, "AMD" if e.kind in _AMD_KINDS else "Intel" if e.kind in _INTEL_KINDS
                           else "NVIDIA") for e in out.events
              if not e.module.startswith(("nvswitch", "host ", NO_BUS, AMD_NO_BUS, INTEL_NO_BUS)) and e.module != "node"]
    found += [KernelModule(bus(m.group(1)), "AMD") for _, ln in worded if "amdgpu" in ln.text
              and (m := _AMD_BUS.search(ln.text[:_LINE_HEAD])) is not None]
    ids: dict[str, tuple[str, str | None]] = {}  # bus -> (UUID, board serial)
    for i, ln in worded:  # a 'GPU at' line is an NVRM line
        if "GPU at" in ln.text and (m := _GPU_AT.search(ln.text)) is not None:
            serial = next((sn.group(1) for other in lines[i + 1:i + NEARBY]
                           if (sn := _BOARD_SERIAL.search(other.text)) is not None), None)
            ids.setdefault(bus(m.group(1)), (m.group(2), serial))
    by_key: dict[str, KernelModule] = {}
    for k in found:
        uuid, serial = ids.get(k.module, (None, None))
        by_key.setdefault(k.module, replace(k, uuid=uuid, serial=serial))
    return sorted(by_key.values(), key=lambda k: (not _BUS_KEY.fullmatch(k.module), k.module))


def _host_errors(lines: list[Line], out: KernelParse) -> None:
    """The host's own hardware error reports: a note, and a host DIMM's own findings (captures/host_errors.py)."""
    claimed, said, dimms = host_errors.read(lines)
    out.claimed, out.notes = out.claimed | claimed, out.notes + ([said] if said else [])
    out.events += [KernelEvent(d.kind, d.place, d.text, d.line, count=d.reports) for d in dimms]


_RING_NAME = lazy(r"\bring (\S+) (?:timeout|reset succe)", re.I)
RING_WINDOW = 8  # lines: amdgpu prints the process, the reset's start and its outcome just after the timeout
RING_RESETS_REPEATED = 3  # recovered ring resets on one module from which on they are a hang, not one bad job


def _rings_back(hits: list[tuple[int, str, Line]]) -> list[tuple[int, str, Line]]:
    """A ring timeout whose own ring (same module, same ring) reports 'reset succeeded' a few lines on is one
    recovered event (read from the timeout's line); a ring that did not come back stays a timeout (critical)."""
    ring = {i: _ring_key(ln.text) for i, kind, ln in hits if kind in ("amd_ring_timeout", "amd_ring_recovered")}
    back_at = {i for i, kind, _ in hits if kind == "amd_ring_recovered" and ring[i] is not None}
    paired: set[int] = set()
    out: list[tuple[int, str, Line]] = []
    for i, kind, ln in hits:
        if kind == "amd_ring_timeout" and ring[i] is not None:
            back = next((j for j in range(i + 1, i + RING_WINDOW + 1)
                         if j in back_at and j not in paired and ring[j] == ring[i]), None)
            if back is not None:
                paired.add(back)
                kind = "amd_ring_recovered"
        out.append((i, kind, ln))
    return [h for h in out if h[0] not in paired]  # a paired 'reset succeeded' is its timeout's event


def _ring_key(text: str) -> tuple[str | None, str] | None:
    """(the bus id the line names, the ring's name): a ring is another module's when the bus ids differ."""
    m = _RING_NAME.search(text)
    if m is None:
        return None
    b = _AMD_BUS.search(text)
    return (b.group(0) if b else None, m.group(1))


def _repeated_rings(events: list[KernelEvent]) -> list[KernelEvent]:
    """Ring resets that recover again and again on one module are a hang that keeps coming back: read as
    ring timeouts (critical) from RING_RESETS_REPEATED on."""
    return [replace(e, kind="amd_ring_timeout") if e.kind == "amd_ring_recovered"
            and e.count >= RING_RESETS_REPEATED else e for e in events]


def _once(events: list[KernelEvent]) -> list[KernelEvent]:
    """One event per (kind, module): the first line kept, the repeats counted."""
    found: dict[tuple[str, str], KernelEvent] = {}
    for e in events:
        seen = found.get((e.kind, e.module))
        found[(e.kind, e.module)] = e if seen is None else replace(seen, count=seen.count + 1)
    return list(found.values())


def _sxid_line(out: KernelParse, events: list[KernelEvent], m: re.Match[str], ln: Line) -> None:
    """An NVSwitch SXid line: one event on the switch (named by the driver's device and its bus id, never as
    a GPU module); a detail line counts only where no summary line of the same SXid is read."""
    out.claimed.add(ln.no)
    out.nvrm_lines += 1
    kind, stated = sxid_kind(m.group(3), m.group(4))
    switch = m.group(1).removeprefix("nvidia-")
    event = KernelEvent(kind, f"{switch} {bus(m.group(2))} SXid {m.group(3)}", ln.text.strip()[:240], ln.no)
    (events if stated else out.sxid_details).append(event)


def _fell_off(out: KernelParse, where: str, text: str, no: int = 0) -> None:
    """A module lost from the bus without an Xid line: read as Xid 79, once per module (a driver that
    says it again, or beside its own Xid 79 line, is the same event)."""
    key = bus(where)
    if any(x.bus_id == key and x.code == 79 for x in out.xids):
        return
    out.xids.append(XidLine(key, 79, text, line=no))
    out.notes.append(f"GPU {where} 'fallen off the bus' without an Xid line: read as Xid 79")


def _nvrm_kind(s: str) -> str | None:
    """The first NVRM message kind the line says, searched only where one of its words is."""
    low = s.lower()
    return next((k.kind for k in NVRM_MESSAGES if any(w in low for w in _WORDS[k.kind]) and k.pattern.search(s)),
                None)


def _amdgpu_line(out: KernelParse, hits: list[tuple[int, str, Line]], i: int, ln: Line) -> None:
    """An amdgpu driver line: claimed and counted as a driver line; the first kind it says, kept."""
    out.claimed.add(ln.no)
    out.nvrm_lines += 1
    head = ln.text[:_LINE_HEAD]  # a driver line is short; a hostile one is not searched to its end
    kind = next((k.kind for k in AMD_MESSAGES if k.pattern.search(head)), None)
    if kind is not None:
        hits.append((i, kind, ln))


def _other_vendor_line(out: KernelParse, hits: list[tuple[int, str, Line]], i: int, ln: Line) -> bool:
    """An amdgpu line (Linux's prefix or function names, FreeBSD's drmn0 with one of its messages), or an
    i915/xe line: read by its driver's messages; False for any other line."""
    s = ln.text
    if ("amdgpu" in s or "drm" in s or "Fence fallback" in s or "qcm fence" in s) and _AMDGPU_LINE.search(s) or \
            "drmn" in s and _DRMN.match(s) and any(k.pattern.search(s[:_LINE_HEAD]) for k in AMD_MESSAGES):
        _amdgpu_line(out, hits, i, ln)
        return True
    if ("i915" in s or "xe " in s or "intel" in s or "GPU HANG" in s or "banning" in s or "HANG" in s and "[drm:xe_" in s) \
            and _INTEL_LINE.search(s):  # what each of _INTEL_LINE's forms holds ('HANG' alone: NETDEV_CHANGE)
        _intel_line(out, hits, i, ln)
        return True
    return False


def _intel_line(out: KernelParse, hits: list[tuple[int, str, Line]], i: int, ln: Line) -> None:
    """An i915/xe line saying one of INTEL_MESSAGES: claimed, counted and kept (its other lines: other readers')."""
    if (kind := next((k.kind for k in INTEL_MESSAGES if k.pattern.search(ln.text[:_LINE_HEAD])), None)) is not None:
        out.claimed.add(ln.no)
        out.nvrm_lines += 1
        hits.append((i, kind, ln))


def _freebsd_listed(events: list[KernelEvent], devices: dict[str, str]) -> list[KernelModule]:
    """The drm-kmod devices amdgpu's messages come from whose bus id no line gives (drmn0): AMD modules."""
    said = [e.text for e in events if e.kind in _AMD_KINDS and e.module == AMD_NO_BUS]
    return [KernelModule(d, "AMD") for d in drm_kmod.unplaced(said, devices)] if said and devices else []


def _events(lines: list[Line], hits: list[tuple[int, str, Line]], notes: list[str],
            devices: dict[str, str]) -> list[KernelEvent]:
    """One event per (kind, module), the first line kept as evidence and the repeats counted."""
    if not hits:
        return []
    index_bus = index_buses(lines)
    found: dict[tuple[str, str], KernelEvent] = {}
    unresolved: set[str] = set()
    for i, kind, ln in hits:
        module = "node" if kind == "no_adapter" else amd_module_of(lines, i) if kind in _AMD_KINDS else \
            intel_module_of(lines, i) if kind in _INTEL_KINDS else module_of(lines, i, index_bus)
        if module == AMD_NO_BUS and devices:
            module = drm_kmod.placed(ln.text, devices) or AMD_NO_BUS
        if not _BUS_KEY.fullmatch(module) and module != "node":  # no_adapter: the driver's word for the node
            unresolved.add(module)
        key = (kind, module)
        seen = found.get(key)
        found[key] = KernelEvent(kind, module, ln.text.strip(), ln.no) if seen is None else \
            KernelEvent(seen.kind, seen.module, seen.text, seen.line, seen.count + 1)
    if unresolved:
        _note_unresolved(unresolved, notes)
    return without_echoes(kernel_amd_place.settled(lines, list(found.values()), notes))


def _note_unresolved(unresolved: set[str], notes: list[str]) -> None:
    """Say which modules are named without a bus id, and how: a driver index, or nothing at all."""
    indexes = sorted(m for m in unresolved if m not in (NO_BUS, AMD_NO_BUS, INTEL_NO_BUS))
    if indexes:
        notes.append(f"kernel log: no line names the bus id of the driver's {', '.join(indexes)}: "
                     "named as the driver printed it")
    for name in (n for n in (NO_BUS, AMD_NO_BUS, INTEL_NO_BUS) if n in unresolved):
        notes.append(f"kernel log: a message names no module and no driver line near it names a bus id: "
                     f"its module is shown as '{name}' (the whole log, from boot, usually names it)")


