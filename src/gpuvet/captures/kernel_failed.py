"""Issue 46: what failed, where a GPU driver's error lines no message of kernel.py names say it in words every
driver uses. An engineer reads a module that did not initialise (its probe or init failed, its firmware - GSP,
PSP, SMU, FSP - did not boot), did not resume, or whose reset failed to bring it back as a module that is gone
until it is reset or the host reboots: critical, whatever the driver (nouveau, radeon, mtgpu, vendor-reset through
vfio-pci, a line of amdgpu, nvidia, i915 or xe no named message covers). Any other error line stays a lead
(kernel_unknown.UNNAMED). Only the few lines kernel_unknown already grouped are searched: no pass over the log.

Read from the drivers' own wording (amdgpu_device.c's '… of IP block <smu> failed', 'amdgpu_device_ip_resume
failed'; the PCI core's 'probe of … failed with error'; nvkm's '<subdev>: init failed, -110'; the GSP/PSP/SMU
boot and load timeouts); a ring's own reset that failed is the step before a full reset (amdgpu tries one next),
and a reset the log later says succeeded on the same module (its bus id; not negated: 'cannot be
recovered') was recovered (kernel.py's rule for those stays)."""

from __future__ import annotations

import re

from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.marks import holding
from gpuvet.captures.text import Line

INIT_FAILED = "driver_init_failed"  # the kinds (kernel_messages.yaml) of such a group
RESUME_FAILED = "driver_resume_failed"
RESET_FAILED = "driver_reset_failed"
KINDS = (INIT_FAILED, RESUME_FAILED, RESET_FAILED)
_HEAD = 1000  # characters of a line searched
_FIRMWARE = r"(?:GSP(?:-RM)?|PSP|SMU|SMC|FSP|SEC2|MES|RLC|firmware|microcode)"  # not GuC/HuC: i915 runs without them
# the module itself: any driver's probe, init step or self-test failed (radeon's and nouveau's too)
_INIT = lazy(
    r"\bprobe (?:of \S+ )?failed\b|\bprobe with driver \S+ failed\b|\bfailed to probe\b|"
    r"\bFatal error during (?:GPU |device )?init|"
    r"\b(?:device|GPU|adapter|asic|hardware|chip)[ _]init(?:iali[sz]ation)? failed\b|"
    r"\bfailed to init(?:iali[sz]e)? (?:the )?(?:device|GPU|adapter|asic|hardware|chip)\b|"
    r"\b(?:[hs]w|late)_init\b[^.;]{0,40}\bfailed\b|"
    # amdgpu_device_ip_init prints '<step> of IP block <gmc_v9_0>' only when the step failed (its
    # '… failed -16' tail cut off by a paste)
    r"\b(?:[hs]w|late)_init of IP block <\w+>|\b(?:cannot|unable to|failed to) (?:bootstrap|boot)\b|"
    r"\bring \S+ test failed\b|\bIB test failed\b|\bfailed testing IB\b|"
    # nv.c's device start: no interrupt for the module, so it cannot be opened
    r"\bCannot use this GPU\b|\brequest_irq\(\) failed\b",
    re.I,
)
# its firmware did not boot or load (the open nvidia modules' kgspInitRm words it 'Error preparing GSP-RM image');
# not i915's or xe's: they run on without a GuC, HuC or DMC image and say so when they cannot (wedged, probe failed)
_INIT_FIRMWARE = lazy(
    r"\b" + _FIRMWARE + r"\b[\w /-]{0,40}?\b(?:boot(?:strap)?|load(?:ing)?|start(?:up)?|"
    r"init\w*)\b[\w /-]{0,20}?\b(?:failed|timed? ?out|timeout)\b|"
    r"\bfailed to (?:boot|load|start) (?:the )?(?:\w+ )?" + _FIRMWARE + r"\b|"
    r"\bError preparing (?:GSP-RM|boot binary) image\b|\bneed firmware to initiali[sz]e GSP\b",
    re.I,
)
# the NVIDIA driver's GSP image (nvidia/<version>/gsp_ga10x.bin) that the kernel's firmware loader could not read
# ('loading /lib/firmware/nvidia/570.172.08/gsp_ga10x.bin failed with error -4', 'Direct firmware load for … failed
# with error -12', drivers/base/firmware_loader/main.c): the driver cannot boot the GSP, so the module does not
# initialise; -2 (no such file) is said by the driver itself (RmFetchGspRmImages) and is kernel_unknown's BENIGN
_GSP_IMAGE = lazy(r"\b(?:loading|Direct firmware load for) \S*\bgsp_\w+\.bin failed with error -(?!2\b)\d+")
# The loader (fw_get_filesystem_firmware) warns for any error but -ENOENT on one path and goes on to the next one
# (/lib/firmware/updates/…, then /lib/firmware/…): such a line fails the module only where the driver's own failure
# follows it, or no later line says the module came up (nvidia-drm registered it: it opened the GPU)
_GSP_DRIVER_FAILED = (
    "RmFetchGspRmImages",
    "RmInitAdapter failed",
    "rm_init_adapter failed",
    "not initialized",
    "not initialised",
)
_GSP_CAME_UP = "Initialized nvidia-drm"
_INTEL = ("i915", "xe")
# amdgpu asks for some images it runs without (psp_v*_init_microcode's TA - xgmi/RAS/HDCP/DTM - and the SR-IOV CAP:
# 'psp v11.0: Failed to load firmware "amdgpu/vega20_ta.bin"' said with dev_info, the probe goes on); and any
# driver's firmware miss is got past where a later line on the same module says DRM registered it (its card node)
_OPTIONAL_IMAGE = lazy(r"\b[\w/]*_(?:ta|cap)\.bin\b")
_IMAGE_MISS = lazy(r"\bfirmware\b[^.;]{0,60}\.bin\b[^.;]{0,30}\b(?:fail|failed|not found|missing)\b", re.I)
_DRM_UP = lazy(r"\bInitialized (?:amdgpu|radeon|i915|xe|nouveau|nvidia-drm)\b")
_NVKM_INIT = lazy(r"\b(?:pre|one)?init failed(?:,| with)? -?\d+")  # nouveau's nvkm: '<subdev>: init failed, -110'
_RESUME = lazy(
    r"\bresume (?:of IP block <\w+> )?failed\b|\bfail(?:ed|s)? to resume\b|\b\w*_resume\w* failed\b|"
    r"\bresume\b[^.;]{0,40}\b(?:timed? ?out|timeout)\b",
    re.I,
)
_RESET = lazy(
    r"\breset\b[^.;]{0,30}?\b(?:failed|fails)\b|\bfail(?:ed|s)? to reset\b|\brecovery failed\b|"
    r"\bfailed to recover\b|\bwedged\b",
    re.I,
)
_RING_RESET = lazy(r"\bring \S+ reset\b", re.I)  # a ring's own reset: amdgpu tries a full reset next
_RECOVERED = lazy(r"\breset succe(?:eded|ss)|\bsuccessfully (?:reset|recovered)\b|\brecovered\b", re.I)
# the same words negated ('cannot be recovered', 'was not recovered', 'could not be successfully reset'): the
# failure said again, not a retry that worked
_NEGATED = lazy(
    r"\b(?:not|never|cannot|can't|couldn't|unable to|fail(?:ed|s)? to)\s+(?:be(?:en)?\s+)?"
    r"(?:successfully\s+)?(?:reset|recover)|\breset (?:was |has )?not succe",
    re.I,
)
# a module's id on a line: its PCI bus id or an Arm board's platform device (ff9a0000.gpu)
_ID = lazy(
    r"(?<![\w:])(?:PCI:)?((?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]|"
    r"[0-9a-fA-F]{5,8}\.[a-z][\w-]{1,30})(?![\w-])"
)
RECOVERY_SPAN = 40  # lines: a reset that is retried says it succeeded within this many lines


def says_init_failed(text: str, driver: str) -> bool:
    """Whether one line says the module did not initialise: said even beside a named message (a small BAR's notice
    does not explain a module that never came up; a failed queue or ring reset beside a hang is that hang's step)."""
    return _init(text[:_HEAD], driver)


def failed_kind(lines: list[Line], quoted: list[tuple[int, int, str]], driver: str) -> tuple[str, int] | None:
    """The kind of what failed and the index (into ``quoted``) of the line that says it, or None: a failed
    initialisation first, then a resume, then a reset no later line says succeeded."""
    for kind, test in ((INIT_FAILED, _init), (RESUME_FAILED, _resume), (RESET_FAILED, _reset)):
        for k, (i, _, text) in enumerate(quoted):
            if (
                test(text[:_HEAD], driver)
                and (kind != RESET_FAILED or not _recovered(lines, i, driver))
                and (kind != INIT_FAILED or not _gsp_fell_through(lines, i, driver) and not firmware_got_past(lines, i))
            ):
                return kind, k
    return None


def _gsp_fell_through(lines: list[Line], i: int, driver: str) -> bool:
    """Whether line ``i`` is only the loader's miss on one path of the GSP image, which a later line on the same
    module says was got past: it came up, and no failure of the driver's own (no GSP image, RmInitAdapter) follows."""
    text = lines[i].text[:_HEAD]
    if (
        driver != "nvidia"
        or _GSP_IMAGE.search(text) is None
        or _INIT.search(text) is not None
        or _INIT_FIRMWARE.search(text) is not None
    ):
        return False
    ids, came_up = _ids(text), False
    for j in holding(lines, (*_GSP_DRIVER_FAILED, _GSP_CAME_UP)):
        theirs = _ids(later := lines[j].text[:_HEAD]) if j > i else None
        if theirs is None or ids and theirs and not ids & theirs:
            continue  # an earlier line, or another module's
        if _GSP_CAME_UP not in later:
            return False
        came_up = True
    return came_up


def firmware_got_past(lines: list[Line], i: int) -> bool:
    """Whether line ``i`` says only that a firmware image did not load (no probe or init step failed on it) and the
    image is one amdgpu runs without, or a later line on the same module (its bus id) says DRM registered it."""
    text = lines[i].text[:_HEAD]
    if _INIT.search(text) is not None or _INIT_FIRMWARE.search(text) is None and _IMAGE_MISS.search(text) is None:
        return False
    if _OPTIONAL_IMAGE.search(text) is not None:
        return True
    ids = _ids(text)
    return any(_DRM_UP.search(ln.text[:_HEAD]) is not None and (not ids or ids & _ids(ln.text)) for ln in lines[i + 1 :])


def _init(text: str, driver: str) -> bool:
    return (
        _INIT.search(text) is not None
        or driver not in _INTEL
        and _INIT_FIRMWARE.search(text) is not None
        or driver == "nouveau"
        and _NVKM_INIT.search(text) is not None
        or driver == "nvidia"
        and "gsp_" in text
        and _GSP_IMAGE.search(text) is not None
    )


def _resume(text: str, _driver: str) -> bool:
    return _RESUME.search(text) is not None


def _reset(text: str, _driver: str) -> bool:
    return _RESET.search(text) is not None and _RING_RESET.search(text) is None


def _recovered(lines: list[Line], i: int, driver: str) -> bool:
    """Whether a line after a failed reset, within RECOVERY_SPAN, says the same module's reset succeeded (a retry
    that worked): not negated, and naming the failed line's bus id (or, where that line names none, the driver and
    no other module). Another module's recovery does not bring this one back, nor does a success BEFORE the
    failure (REV66b: vendor-reset's 'reset succeeded' then 'failed to reset device' leaves the module unreset, as
    amd_asic_reset's rule reads only the success after)."""
    ids = _ids(lines[i].text)
    for ln in lines[i + 1 : i + 1 + RECOVERY_SPAN]:
        text = ln.text[:_HEAD]
        if _RECOVERED.search(text) is None or _NEGATED.search(text) is not None:
            continue
        theirs = _ids(text)
        if ids & theirs if ids else not theirs and (driver in text.lower() or driver == "nvidia" and "NVRM" in text):
            return True
    return False


def _ids(text: str) -> set[str]:
    """The modules a line names, as lower-case ids without the PCI domain (one line prints '0000:2d:00.0', another
    '2d:00.0')."""
    return {
        m.group(1).lower().split(":", 1)[-1] if m.group(1).count(":") == 2 else m.group(1).lower()
        for m in _ID.finditer(text[:_HEAD])
    }
