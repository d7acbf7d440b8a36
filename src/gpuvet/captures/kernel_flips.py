"""R9D (issue 46): a display pipeline whose flips time out, as DRM and the compositor print it, for every
graphics driver alike: DRM's atomic helpers ('[drm:drm_atomic_helper_wait_for_flip_done [drm_kms_helper]]
*ERROR* [CRTC:82:crtc-0] flip_done timed out', '[CRTC:363:crtc-0] commit wait timed out', '[PLANE:360:plane-6]
commit wait timed out', 'hw_done or flip_done timed out'; drivers/gpu/drm/drm_atomic_helper.c) under i915's, xe's
or amdgpu's prefix, and KDE's compositor, KWin ('kwin_wayland_drm: Pageflip timed out! This is a bug in the xe
kernel driver', src/backends/drm/drm_pipeline.cpp), which prints it once per flip that never completed; and
nvidia-drm's 'Flip event timeout on head 0', the same fact on NVIDIA's display path.

One timeout is a modeset or a hotplug the pipeline got past: read, a note. The same pipeline timing out again and
again (REPEATED or more on one module) is a display engine that stopped completing flips: the desktop freezes,
a driver's display bug as the compositor says: a warn on the module, never critical (compute may go on).
A virtual or a BMC's display driver (virtio_gpu, evdi, ast, mgag200 …) is no GPU's: its lines are only noted."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gpuvet.captures import kernel_unknown
from gpuvet.captures.kernel_places import AMD_NO_BUS, INTEL_NO_BUS, NO_BUS
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.text import Line
from gpuvet.node.bus import bus_key

if TYPE_CHECKING:
    from gpuvet.captures.kernel import KernelParse

KIND = "display_flip_timeouts"  # the kind (kernel_messages.yaml) read here
REPEATED = 3  # timeouts on one module that make a pipeline hang, not a modeset's one-off (an assumption)
_HEAD = 400  # characters of a line searched
_DRM_TIMEOUT = re.compile(r"\b(?:hw_done or )?flip_done timed out|\bcommit wait timed out")
_DRM = re.compile(r"\[drm(?::[\w.]+(?: \[\w+\])?)?\]")
_KWIN = re.compile(r"\bPageflip timed out! This is a bug in the ([\w-]{1,24}) kernel driver")
# nvidia-drm's own (kernel-open/nvidia-drm/nvidia-drm-crtc.c, NV_DRM_DEV_LOG_ERR: '[drm:nv_drm_atomic_commit
# [nvidia_drm]] *ERROR* [nvidia-drm] [GPU ID 0x00000100] Flip event timeout on head 0'): a flip's event never came
_NV_FLIP = re.compile(r"\bFlip event timeout on head \d+")
_KWIN_AFTER = re.compile(r"kwin_wayland.{0,40}(?:Please report this at|With the output of 'sudo dmesg')")
_TAG_DRIVER = re.compile(r"\[drm:\w+ \[(amdgpu|i915|xe|nouveau|radeon)\]\]")
_VIRTUAL = frozenset(
    (
        "virtio_gpu",
        "evdi",
        "vmwgfx",
        "qxl",
        "bochs",
        "bochs-drm",
        "simpledrm",
        "udl",
        "vkms",
        "hyperv_drm",
        "cirrus",
        "ast",
        "mgag200",
        "vboxvideo",
        "gm12u320",
        "xlnx",
    )
)
_LABEL = {"amdgpu": AMD_NO_BUS, "radeon": AMD_NO_BUS, "i915": INTEL_NO_BUS, "xe": INTEL_NO_BUS}


def read(lines: list[Line], out: KernelParse, marks: Marks | None = None) -> KernelParse:
    """``out`` with the flip timeouts claimed: an event per module timing out REPEATED times or more, a note for
    the rest (a one-off, a virtual display's)."""
    from gpuvet.captures.kernel import KernelEvent

    seen: dict[str, list[Line]] = {}  # a module's timeout lines
    flips: dict[str, dict[str, int]] = {}  # REVFIX65: a module's timeouts per source (one flip, each source once)
    drivers: dict[str, str] = {}
    noted = 0
    for i in holding(lines, ("timed out", "Flip event timeout"), marks):
        ln = lines[i]
        head = ln.text[:_HEAD]
        driver = _driver(head)
        if driver is None:
            continue
        out.claimed.add(ln.no)
        if driver in _VIRTUAL:
            noted += 1
            continue
        where = _module(head, driver)
        seen.setdefault(where, []).append(ln)
        source = _source(head)
        flips.setdefault(where, {})[source] = flips.get(where, {}).get(source, 0) + 1
        drivers[where] = driver
    for where, own in seen.items():
        if (count := max(flips[where].values())) >= REPEATED:
            out.events.append(
                KernelEvent(
                    KIND,
                    where,
                    own[0].text.strip()[:240],
                    own[0].no,
                    count=count,
                    driver=drivers[where],
                    shown=tuple(x.text.strip()[:240] for x in own[:3]),
                )
            )
        else:
            noted += len(own)
    if seen or noted:
        out.claimed.update(
            lines[i].no for i in holding(lines, ("kwin_wayland",), marks) if _KWIN_AFTER.search(lines[i].text[:_HEAD])
        )
    if noted:
        out.notes.append(
            f"kernel log: {noted} display-path line(s) of a flip that timed out (flip_done, commit wait, KWin's 'Pageflip "
            f"timed out') fewer than {REPEATED} on a module, or of a virtual display: a modeset's "
            "one-off, read, not judged"
        )
    return out


def _driver(head: str) -> str | None:
    """The driver a timeout line is of ('' for DRM's helpers with no driver named), None where it is none."""
    if (k := _KWIN.search(head)) is not None:
        return k.group(1)
    if _NV_FLIP.search(head) is not None:
        return "nvidia-drm"
    if _DRM_TIMEOUT.search(head) is None or _DRM.search(head) is None or "nvidia" in head:
        return None  # nvidia-drm's DRM lines: the NVIDIA readers' (a flip error there is read as can't tell)
    if (t := _TAG_DRIVER.search(head)) is not None:
        return t.group(1)
    return kernel_unknown.driver_of(head) or ""


def _source(head: str) -> str:
    """Who printed the timeout: DRM's helpers (or nvidia-drm) for the kernel, KWin for the compositor. The same flip
    is printed by both, so flips are counted per source (as host_ras counts a record's sources), never summed."""
    return "kwin" if _KWIN.search(head) is not None else "kernel"


def _module(head: str, driver: str) -> str:
    """The bus id the line's prefix gives, else the driver's no-bus label."""
    if (b := kernel_unknown.prefixed_bus(head)) is not None:
        return bus_key(b)
    return _LABEL.get(driver.removesuffix("-drm"), NO_BUS)
