"""Issue 46: a GPU driver's error lines that no message of kernel.py names. A driver prints many failures in
words no catalogue lists (amdgpu's SMU not answering, a vendor driver gpuvet has no table for: Moore Threads'
mtgpu, nouveau, radeon, Ascend's devdrv; habanalabs' lines are accel_tools'); read as "clear" they hide the
fault the log holds. Each such line at error level (the kernel's own marks: ``*ERROR*``, ``[ERROR]``, ``<3>``,
``BUG:``, a call trace's RIP in the module; or a failure word) is kept, one event per driver and module, the
lines quoted: a lead to read, never a diagnosis - save where its lines say the module did not initialise, resume
or come back from a reset (kernel_failed.py): that is a module gone, whatever the driver. Lines a healthy boot
prints in such words are named in BENIGN, each with why; lines beside a named message are that message's context,
not another fault.

Only the lines kernel.parse already holds (its ``worded``) are tested: no pass over a bug report's other lines.
An NVSwitch's lines are not a GPU module's: its faults are its SXids (kernel_sxid.py), read as such."""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpuvet.captures import gpu_modules, kernel_failed, kernel_intel_fw, stack_benign
from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.text import Line

UNNAMED = "driver_error_unnamed"  # the kind (kernel_messages.yaml) of such an event
FAILED = kernel_failed.KINDS  # the kinds of a group that says the module is gone: said even beside a named message
CONTEXT = 8  # lines: an error line this close to a named message of the same log is that message's context
SHOWN = 3  # lines quoted in the event
_HEAD = 1000  # characters of a line searched: a driver line is short, a hostile one is not read to its end
# the driver a kernel line is from: its dev_printk or pr_* prefix ('mtgpu 0000:05:00.0:', 'nouveau:', 'NVRM:'),
# DRM's function tag with the module in brackets ('[drm:nouveau_bo_move [nouveau]]'), or a call trace's frame
# in the module ('RIP: 0010:foo+0x1/0x2 [mtgpu]'); a bus id after the prefix is the module's; GCC's split-off
# cold part of a function keeps the module's tag ('[drm:amdgpu_device_init.cold.33 [amdgpu]]')
# the integrated GPUs of Arm boards, whose compute (OpenCL, Vulkan) an operator may run: Mali (panfrost, panthor,
# lima), Adreno (msm, its display unit msm_dpu), Vivante (etnaviv), VideoCore (v3d); each prints under its platform
# device ('panfrost ff9a0000.gpu:'), no PCI bus id
ARM_DRIVERS = gpu_modules.ARM  # one list of GPU modules: captures/gpu_modules.py
_PLATFORM = r"[0-9a-fA-F]{5,8}\.[a-z][\w-]{1,30}"  # a platform device: ff9a0000.gpu, ae01000.display-controller
_LEAD = r"(?:^\s*(?:<\d>)?(?:\[[^\]]{1,40}\]\s*)*|\bkernel:\s+(?:\[[^\]]{1,40}\]\s*)*)"  # the message's start
_PREFIXED = lazy(
    _LEAD + r"(?P<drv>NVRM|nvidia(?:-modeset|-nvlink|-uvm|_uvm|-drm|_drm)?|"
    r"amdgpu|i915|xe|mtgpu|MTGPU|nouveau|radeon|devdrv\w*|" + ARM_DRIVERS + r")"
    r"(?: (?:PCI:)?[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?| " + _PLATFORM + r")?:"
)
# a frame's or a drm line's bracketed module; powerplay's lines as some logs space them ('amdgpu : [powerplay] …')
_BRACKETED = lazy(
    r"(?:\[drm:\w+(?:\.\w+)* |\+0x[0-9a-f]+/0x[0-9a-f]+ )\[(?P<drv>" + gpu_modules.MODULES + r")\]|"
    r"^\s*(?:\[[^\]]{1,40}\]\s*)?\[(?P<tag>ascend)\]|\b(?P<pp>amdgpu)\s?:\s?\[powerplay\]"
)
_NVRM_BARE = lazy(_LEAD + r"NVRM \w+:")  # 'NVRM kgspBootstrap_TU102:': the driver's, no colon after NVRM
# gnif's vendor-reset resets an AMD GPU passed through to a VM and prints through vfio-pci's device: its lines carry
# the ASIC's tag ('vfio-pci 0000:0c:00.0: AMD_NAVI14: …') or its SMU's answer ('… SMU error 0xfd'), its own module's
# 'vendor-reset-drm:': the GPU's lines, not those of the VFIO driver that holds it
_VENDOR_RESET = lazy(
    _LEAD + r"(?:vfio-pci [0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]: "
    r"(?:AMD_[A-Z0-9]+: |SMU error)|vendor-reset(?:-\w+)?:)"
)
_CANONICAL = {
    "NVRM": "nvidia",
    "MTGPU": "mtgpu",
    "nvidia_uvm": "nvidia-uvm",
    "nvidia_modeset": "nvidia-modeset",
    "etnaviv-gpu": "etnaviv",  # the GPU core's own device (etnaviv-gpu 38000000.gpu), beside DRM's 'etnaviv'
    "nvidia_drm": "nvidia-drm",
}
# the drivers gpuvet has messages for (kernel.py): a log of only the others is read, and can't be called clear
KNOWN_DRIVERS = ("nvidia", "amdgpu", "i915", "xe")


def known(driver: str) -> bool:
    """Whether kernel.py has messages for the driver (nvidia-modeset, nvidia-uvm: the NVIDIA driver's)."""
    return driver.split("-")[0] in KNOWN_DRIVERS


VENDOR = {
    "nvidia": "NVIDIA",
    "nouveau": "NVIDIA",
    "amdgpu": "AMD",
    "radeon": "AMD",
    "i915": "Intel",
    "xe": "Intel",
    "mtgpu": "Moore Threads",
    "ascend": "Huawei",
    "devdrv": "Huawei",
    "vendor-reset": "AMD",
    "panfrost": "Arm",
    "panthor": "Arm",
    "lima": "Arm",
    "msm": "Qualcomm",
    "msm_dpu": "Qualcomm",
    "adreno": "Qualcomm",
    "etnaviv": "Vivante",
    "v3d": "Broadcom",
    "hailo": "Hailo",  # R11C: the Hailo-8/8L accelerator's hailo_pci driver
}
_ERROR = lazy(
    r"\*ERROR\*|\[ERROR\]|^\s*<[0-3]>|\bBUG:|\bRIP: \w+:\S+ \[|response:\s*0x[fF]{8}\b|"
    r"\b(?:fail(?:ed|ure|s)?|errors?|fault(?:s|ed)?|time ?out|timed ?out|hangs?|hung|lost|fatal|"
    r"unable|cannot|can't|not responding|lockup)\b|(?-i:_(?:ERROR|TIMEOUT|FAULT)\b|\b(?:ERROR|TIMEOUT|"
    r"FAULT)_)",
    re.I,
)  # nouveau's 'SCHED_ERROR', 'CTXSW_TIMEOUT': upper case only
# a user-space program's line naming the driver as its device (udev running modprobe for it): not the driver's own
_USER_SPACE = lazy(r"\(udev-worker\)|systemd-udevd\[|\bProcess '/")
# the PCIe AER lines the driver's device prints are captures/aer.py's to read and judge
# (an error bit's own line too: 'amdgpu 0000:03:00.0:    [12] Timeout', the replay timer's bit, not a GPU timeout)
_AER = lazy(
    r"\bAER\b|PCIe Bus Error|error status/mask|\(First\)|\bdevice \[[0-9a-f]{4}:[0-9a-f]{4}\] error"
    r"|:\s{2,}\[\s?\d{1,2}\]\s+[A-Z]\w"
)
_BUS = lazy(r"(?<![\w:])((?:PCI:)?[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?)(?!\w)")
_STAMP = lazy(
    r"^\s*(?:<\d>)?\[\s*(?:\d+\.\d+|[A-Z][a-z]{2} )|^\s*[A-Z][a-z]{2}\s+\d{1,2}\s+\d\d:|"
    r"^\s*\d{4}-\d\d-\d\d[T ]\d"
)
_SENTENCE = lazy(r"[A-Z][a-z]+ ")  # a line opening with a capitalised word: prose, not a wrapped message
NEARBY = 6  # lines: an error line without a bus id takes the one its driver's nearest line names


@dataclass(frozen=True)
class Benign:
    """An error-worded line a healthy boot prints: what it is, why it is no fault."""

    name: str
    pattern: re.Pattern[str]
    why: str


BENIGN: tuple[Benign, ...] = (
    Benign(
        "taint",
        lazy(r"taints? kernel|tainting kernel|due to kernel taint|module verification failed", re.I),
        "the kernel marks an out-of-tree or unsigned module (every DKMS-built driver): a licence mark, no fault",
    ),
    Benign(
        "firmware_file",
        lazy(
            r"Direct firmware load for \S+ failed with error -2|firmware: failed to load "
            r"\S+ \(-2\)",
            re.I,
        ),
        "the firmware loader found no such file; a driver that needs it says so itself (that line is read), "
        "one with a fallback goes on",
    ),
    Benign(
        "optional_firmware",
        lazy(
            r"\b(?:Failed to load|failed to load|Direct firmware load for) (?:firmware )?"
            r"\"?\S*_(?:ta|cap)\.bin\b",
            re.I,
        ),
        "amdgpu's optional PSP images (the TA - XGMI/RAS/HDCP/DTM trusted applications - and the SR-IOV CAP): "
        "psp_v*_init_microcode notes the miss and the driver initialises the module without them",
    ),
    Benign(
        "intel_firmware",
        kernel_intel_fw.PATTERN,
        "i915's and xe's GuC, HuC, GSC and DMC firmware lines: kernel_intel_fw judges each by what the GPU loses",
    ),
    Benign(
        "peermem_invalid_context",
        stack_benign.PEERMEM_INVALID,
        "nvidia-peermem's free callback for GPU memory whose peer context was already released (a process's "
        "teardown): the module skips it by design (R12C, captures/stack_benign.py)",
    ),
    Benign(
        "debugfs",
        lazy(r"debugfs|\bsysfs (?:entry|file|group)|\bprocfs\b", re.I),
        "a debugging or statistics file was not created: the module works without it",
    ),
    Benign(
        "display",
        lazy(
            r"EDID|DPCD|\bconnector|\bHDMI|\bDP\b|\baux\b|link training|FIFO underrun|vblank|"
            r"hotplug|\bDSC\b|dm_helpers|\bDMUB|\bCRTC|backlight|\bpanel\b|\bpipe [A-Z]\b|"
            r"\bflip\b|\bmodeset\b|\bdisplay\b|\bDC: |\bcreate_links?\b|\bprime\b|"
            # R7B: DisplayPort's repeaters and link features (amdgpu dc's LTTPR capability read: 'LTTPR count is
            # nonzero but invalid lane count reported', 'lttpr_caps phy_repeater_cnt is 0x0'; HDCP, PSR, USB4 DPIA)
            r"\bLTTPR|phy_repeater|\bHDCP|\bPSR\b|\bDPIA\b|\bdc_link|\bDMCUB|_link_train|\bflip_done\b",
            re.I,
        ),
        "a display output's message (monitor, cable, link training, vblank; amdgpu's Display Core, PRIME's "
        "render offload between two GPUs): the screen's path, not the module's compute or health",
    ),
    Benign(
        "cs_context_cancelled",
        lazy(r"\bFailed to initiali[sz]e parser -(?:125|512)\b"),
        "amdgpu_cs_ioctl refused a process's command submission (R7B; drivers/gpu/drm/amd/amdgpu/amdgpu_cs.c): "
        "-125 (ECANCELED) for a context the driver marked guilty of a GPU hang or reset, -512 (ERESTARTSYS) for "
        "one a signal interrupted; that process must make a new context, and the hang or fault before it is "
        "judged from its own lines",
    ),
    Benign(
        "xe_eu_attention",
        lazy(r"\bunable to handle eu attention\b|\btrying reset from attention_scan_fn\b", re.I),
        "xe's EU debugger (eudebug, drivers/gpu/drm/xe/xe_eudebug.c): a thread stopped at a breakpoint raised EU "
        "attention with no debugger attached to take it (ret=-107, -ENOTCONN), so the driver resets the GT to "
        "release it: a debug session's, or a test's (IGT xe_eudebug_online) own doing, not a fault",
    ),
    Benign(
        "chipset_setup",
        lazy(r"Chipset Setup Function Error"),
        "the NVIDIA driver does not know the host's PCIe chipset and goes on with defaults (printed on healthy "
        "laptops: NVIDIA/open-gpu-kernel-modules#489)",
    ),
    Benign(
        "secure_display",
        lazy(r"Secure ?display", re.I),
        "amdgpu's secure-display trusted application, absent from most parts: printed on healthy boots (PSP's "
        "'SECUREDISPLAY: query securedisplay TA failed. ret 0x0': the query's own return code is 0; the TA "
        "serves the display's protected regions, never compute)",
    ),
    Benign(
        "opp_optional_supply",
        lazy(
            r"\berror -ENODEV: \w*opp_set_regulators: no regulator \(\w+\) found|"
            r"\bopp_set_regulators: no regulator \(\w+\) found: -19\b"
        ),
        "the OPP core found no regulator for a supply the board does not wire (sram, mali; dev_err_probe words "
        "-ENODEV as an error): panfrost's, panthor's and lima's devfreq_init go on without it (drivers/gpu/drm/"
        "*/..._devfreq.c: 'Continue if the optional regulator is missing'); any other error stops the probe "
        "and the driver says so ('Couldn't set OPP regulators')",
    ),
    Benign(
        "cooling_device",
        lazy(r"\b(?:Failed to|Couldn't) register (?:GPU )?cooling device\b"),
        "the devfreq cooling hook was not registered (a kernel without devfreq thermal support, no energy "
        "model): panfrost, panthor and lima print it at info level, msm_devfreq_init as an error, and all go "
        "on with the GPU running, only without the thermal zone's devfreq throttling: no fault of the module",
    ),
    Benign(
        "acpi",
        lazy(r"\bACPI\b|_DSM\b|\bATPX\b|\bATIF\b|\bATCS\b|\bVFCT\b", re.I),
        "an ACPI method the platform does not provide: the driver takes its defaults",
    ),
    Benign(
        "pci_core",
        lazy(
            r"can't derive routing for PCI INT|\bPCI INT [A-D]:? (?:no GSI|not connected)|"
            r"\bBAR \d+(?: \[[^\]]*\])?: (?:no space for|failed to assign|can't assign|releasing)\b|"
            r"\bno compatible bridge window\b"
        ),
        "the PCI core's or ACPI's notice under the driver's device prefix while it enables the module, not the "
        "driver's own line (drivers/acpi/pci_irq.c: the legacy INTx routing falls back to an ISA IRQ, the module "
        "uses MSI; drivers/pci/setup-res.c: a BAR placed again on a retry); a BAR left without a window is judged "
        "from the kernel's 'pci' lines (pci_enum), and a driver that cannot go on says so itself",
    ),
    Benign(
        "bar_size",
        lazy(r"\bBAR\b.*\b(?:resiz|large|rebar)|resizable BAR", re.I),
        "the memory window left at its default size: a slower host path at most, judged from lspci",
    ),
    Benign(
        "zero_count", lazy(r"\b0 (?:errors?|faults?)\b|\bno errors?\b|errors?\s*[:=]\s*0\b", re.I), "a counter read as zero"
    ),
    Benign(
        "ras_eeprom",
        lazy(
            r"I2C_NAK_(?:7B_ADDR|TXDATA)_NOACK|\b(?:Write|Read)I2CData\(\) - I2C error "
            r"occurred|Failed to read EEPROM table header"
        ),
        "amdgpu could not reach the board's RAS EEPROM over the SMU's I2C bus (smu_v11_0_i2c's NAK, then "
        "amdgpu_ras_eeprom_init): a board or slot without that bus wired (Radeon VII, an MI50 in a desktop or on "
        "a riser) keeps no table of retired pages, and the module works without it",
    ),
    Benign(
        "gpu_usb_c",
        lazy(r"\bnvidia-gpu \S+: i2c timeout error\b|\bucsi_ccg\b.{0,40}\b(?:i2c_transfer failed|ucsi_ccg_init failed)"),
        "the USB-C (VirtualLink) controller on a GeForce card's .3 function: the nvidia-gpu I2C driver "
        "(drivers/i2c/busses/i2c-nvidia-gpu.c) timed out reaching its Cypress CCG chip, so ucsi_ccg registers no "
        "port; the card's USB-C port only, never its compute (R6B)",
    ),
    Benign(
        "intel_preempt_timeout",
        lazy(r"\bBumping pre-emption timeout from \d+ to \d+ on \S+ to allow slow compute pre"),
        "i915 lengthens an engine's pre-emption timeout on parts with compute engines (gt/intel_engine_cs.c, "
        "drm_info at every boot): a setting, no fault (R10A)",
    ),
    Benign(
        "smu_message_unsupported",
        lazy(r"\bFailed to send message:? ?0x[0-9a-fA-F]{1,4} ?, ret value ?: ?0x0*fe\b|\bmessage \w+ was not supported\b",
             re.I),
        "powerplay's SMU answered a message with 0xFE, 'not supported' (smu9_smumgr.c, smu7_smumgr.c): the firmware "
        "lacks that optional message and the driver goes on; an unanswered one (0) is amd_recovery_failed (R10A)",
    ),
    Benign(
        "warning_level",
        lazy(r"^\s*(?:\[[^\]]{1,40}\]\s*)?\S+:\s+WARNING:|\bWARN(?:ING)?:\s+GPU:\d", re.I),
        "a line the driver itself marks as a warning (nvidia-modeset's 'WARNING: GPU:0: …'), not an error",
    ),
)


@dataclass
class Unnamed:
    """Error lines of one driver's module, in log order: (index in the lines, line number, text)."""

    driver: str
    module: str
    lines: list[tuple[int, int, str]]
    kind: str = UNNAMED  # LOAD_OOPS where the lines are a crash of the driver while it loaded, or what failed
    # (kernel_failed.KINDS: its initialisation, resume or reset)


def driver_of(text: str) -> str | None:
    """The GPU or accelerator driver a kernel line is from (its canonical name), or None."""
    head = text[:_HEAD]
    if _USER_SPACE.search(head) or _AER.search(head):
        return None
    m = _PREFIXED.search(head) or _BRACKETED.search(head)
    if m is None and ("vfio-pci" in head or "vendor-reset" in head) and _VENDOR_RESET.search(head):
        return "vendor-reset"
    if m is None:
        return "nvidia" if "NVRM " in head and _NVRM_BARE.search(head) else None
    name = m.group("drv") or m.group("tag") or m.group("pp")
    name = _CANONICAL.get(name, name)
    return "devdrv" if name.startswith("devdrv") else name


def error_worded(text: str) -> bool:
    """Whether a line holds one of a driver's failure words or marks (_ERROR): other drivers' readers ask too."""
    return _ERROR.search(text[:_HEAD]) is not None


def benign(text: str) -> Benign | None:
    """The BENIGN entry a line is, or None."""
    return next((b for b in BENIGN if b.pattern.search(text)), None)


def error_lines(
    lines: list[Line], worded: list[tuple[int, Line]], named: set[int], others: bool = True
) -> tuple[list[Unnamed], dict[str, int]]:
    """The GPU drivers' error lines no named message covers, grouped by (driver, module); and the lines of the
    drivers kernel.py has no messages for, counted by driver. ``named``: the lines of the messages it named;
    ``others``: False where the text holds none of those drivers' words (OTHER_WORDS; the marks tell)."""
    seen: dict[str, int] = {}
    at: list[int] = []  # the indices of the named messages' lines
    maybe: list[tuple[int, Line]] = []
    for i, ln in worded:  # one pass: a long text's worded lines are made as they are read (captures/lines.py)
        s = ln.text
        if others and any(w in s for w in OTHER_WORDS) and (d := driver_of(s)) is not None:  # their lines counted
            seen[d] = seen.get(d, 0) + 1
        if ln.no in named:
            at.append(i)
        elif "nvswitch" not in s and _maybe(s) or len(s) >= WRAPS and i + 1 < len(lines) and _maybe(lines[i + 1].text):
            maybe.append((i, ln))  # issue 43: one literal scan a line; the patterns only where a failure's word may be
    near = _context(lines, at)
    groups: dict[tuple[str, str], Unnamed] = {}
    for i, ln in maybe:
        driver = _family(d) if (d := driver_of(ln.text)) is not None else None
        if driver is None:
            continue
        text = _with_continuation(lines, i)
        if _ERROR.search(text[:_HEAD]) is None or benign(_PLATFORM_PREFIX.sub("", text, 1)) is not None:
            continue
        if kernel_failed.firmware_got_past(lines, i):
            continue  # an image the driver went on without: the module came up
        module = _module_of(lines, i, driver)
        if (
            i in near
            and (_UNPLACED in near[i] or module in near[i] or _unplaced(module))
            and not kernel_failed.says_init_failed(text, driver)
        ):
            continue  # that message's context (its module's line, or one no line places), unless it did not start
        groups.setdefault((driver, module), Unnamed(driver, module, [])).lines.append((i, ln.no, text))
    return [_failed(lines, _at_load(lines, g)) for g in groups.values()], seen


_UNPLACED = ""  # a named message no line places: every error line near it is its context


def _context(lines: list[Line], at: list[int]) -> dict[int, set[str]]:
    """The lines within CONTEXT of a named message, each with the modules of the messages it is near: an error
    line of another module beside it (two modules failing together) is that module's own."""
    near: dict[int, set[str]] = {}
    for i in at:
        module = _module_of(lines, i, _family(driver_of(lines[i].text) or ""))
        for j in range(i - CONTEXT, i + CONTEXT + 1):
            near.setdefault(j, set()).add(_UNPLACED if _unplaced(module) else module)
    return near


def _unplaced(module: str) -> bool:
    return module.startswith("a module of ")


def _failed(lines: list[Line], group: Unnamed) -> Unnamed:
    """A group whose lines say the module did not initialise, resume or come back from a reset
    (captures/kernel_failed.py): read as that kind, the line saying it quoted first."""
    if group.kind != UNNAMED or (found := kernel_failed.failed_kind(lines, group.lines, group.driver)) is None:
        return group
    kind, k = found
    return Unnamed(group.driver, group.module, [group.lines[k], *group.lines[:k], *group.lines[k + 1 :]], kind)


LOAD_OOPS = "driver_load_oops"  # the kind (kernel_messages.yaml) of a kernel oops in a GPU driver while it loaded
_RIP = lazy(r"\bRIP: \w+:\S+ \[")
_OOPS_HEAD = lazy(r"\bBUG: |\bOops: |\bgeneral protection fault\b|\bunable to handle (?:page fault|kernel)")
# the task that oopsed loads modules (modprobe, insmod, udev loading one for a device), or the trace runs through
# the kernel's module init: the driver crashed inside its own load
_LOADING = lazy(
    r"\bComm: (?:modprobe|insmod|systemd-udevd|udevd|kmod)\b|\b(?:do_init_module|load_module|"
    r"do_one_initcall)\+0x"
)
OOPS_SPAN = 30  # lines: an oops prints its header, its task and its RIP within this many lines


def _at_load(lines: list[Line], group: Unnamed) -> Unnamed:
    """A driver's error line that is a call trace's RIP in the driver, under the kernel's oops header (BUG:, Oops:),
    the task a module loader (or the module init in the trace): the driver crashed while it loaded, so it drives
    no module until the host reboots; the group read as LOAD_OOPS, the oops' header quoted first. A WARNING's
    trace (no oops header) or an oops in a running driver stays an unnamed lead."""
    for i, _, text in group.lines:
        if "RIP:" not in text or _RIP.search(text) is None:
            continue
        head = next((j for j in range(max(0, i - OOPS_SPAN), i) if _OOPS_HEAD.search(lines[j].text[:_HEAD])), None)
        if head is not None and any(_LOADING.search(ln.text[:_HEAD]) for ln in lines[head : i + OOPS_SPAN]):
            top = (head, lines[head].no, lines[head].text.strip())
            return Unnamed(group.driver, group.module, [top, *group.lines], LOAD_OOPS)
    return group


# a literal each of _ERROR's forms holds (either case where the driver prints both): a line without any is not
# searched; and the words of the drivers kernel.py has no messages for, whose every line is counted
_ERROR_LITERALS = (
    "ail",
    "AIL",
    "rror",
    "RROR",
    "ault",
    "AULT",
    "ime",
    "IME",
    "ang",
    "ANG",
    "ung",
    "UNG",
    "ost",
    "OST",
    "atal",
    "ATAL",
    "nable",
    "NABLE",
    "annot",
    "ANNOT",
    "an't",
    "BUG:",
    "RIP:",
    "FFFFFFFF",
    "ffffffff",
    "ockup",
    "OCKUP",
    "esponding",
    "<0>",
    "<1>",
    "<2>",
    "<3>",
)
OTHER_WORDS = (
    "mtgpu",
    "MTGPU",
    "nouveau",
    "radeon",
    "ascend",
    "devdrv",
    "vfio-pci",
    "vendor-reset",
    "panfrost",
    "panthor",
    "lima",
    "msm",
    "adreno",
    "etnaviv",
    "v3d",
)
WRAPS = 72  # characters a line holds at least for the next line to be read as its wrapped tail (a terminal's width)


_MAYBE = lazy("|".join(re.escape(w) for w in _ERROR_LITERALS))  # literals only: one scan of the line


def _maybe(text: str) -> bool:
    """Whether a line may hold one of _ERROR's forms."""
    return _MAYBE.search(text) is not None


def _with_continuation(lines: list[Line], i: int) -> str:
    """The line, and the next one where the copy wrapped it: a stamped line followed by one with no stamp and no
    driver prefix of its own (a terminal's or a forum's wrap of a long message) is one message."""
    text = lines[i].text.strip()
    if i + 1 >= len(lines) or not _STAMP.match(lines[i].text):
        return text
    raw = lines[i + 1].text
    nxt = raw.strip()
    if (
        not nxt
        or _STAMP.match(raw)
        or driver_of(nxt) is not None
        or len(nxt) > 120
        or not raw[:1].isspace()
        and _SENTENCE.match(raw)
    ):  # a poster's sentence below the line is not its tail
        return text
    return f"{text} {nxt}"


def _family(driver: str) -> str:
    """NVIDIA's kernel modules (nvidia, nvidia-drm, nvidia-modeset, nvidia-uvm) are one driver's: one lead a module."""
    return "nvidia" if driver.startswith("nvidia") else driver


def _module_of(lines: list[Line], i: int, driver: str) -> str:
    """The bus id the line gives, else the one the nearest line of the same driver gives; else said as unknown."""
    for d in range(NEARBY):
        for j in (i + d, i - d):
            if (
                0 <= j < len(lines)
                and (b := _BUS.search(lines[j].text[:_HEAD])) is not None
                and (d == 0 or _family(driver_of(lines[j].text) or "") == driver)
            ):
                return b.group(1).removeprefix("PCI:")
    if (p := _PLATFORM_PREFIX.search(lines[i].text[:_HEAD])) is not None:  # an Arm board's GPU: its platform device
        return p.group(1)
    return f"a module of {driver}, bus id not in the log"


_PLATFORM_PREFIX = lazy(r"\b(?:" + ARM_DRIVERS + r") (" + _PLATFORM + r"):")


_PREFIX_BUS = lazy(r"(?:^|[\s\]>:])[\w-]{2,20} (?:PCI:)?([0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]):")


def prefixed_bus(text: str) -> str | None:
    """The bus id of a dev_printk prefix ('mtgpu 0000:05:00.0: …'), or None."""
    m = _PREFIX_BUS.search(text[:_HEAD])
    return m.group(1) if m is not None else None
