"""Issue 46: the nvgpu driver of NVIDIA's integrated GPUs (Jetson TX1/TX2/Xavier/Orin, DRIVE: gk20a, gp10b,
gv11b, ga10b). It prints through ``nvgpu_err`` as 'nvgpu: 17000000.gpu <function>:<line> [ERR]  <message>': the
module is a platform device (17000000.gpu, 57000000.gpu; older L4T names it by the chip, 17000000.gv11b), never a
PCI bus id, and no Xid line is written. Its channel errors reach the application as an error notifier whose codes
are the desktop driver's channel errors, the Xid numbers (nvgpu's UAPI header include/uapi/linux/nvgpu.h, struct
nvgpu_notification: 8 idle timeout, 12/13 graphics engine method/exception, 24 semaphore timeout, 25 illegal
notify, 31 MMU fault, 32 PBDMA error, 37 FECS firmware method, 43 reset channel verification, 80 pushbuffer CRC).

Three kinds are read (kernel_messages.yaml): an MMU fault on a channel (warn: most often the application's or the
driver's), another channel error or timeout the driver recovered (warn), and the driver saying the GPU is halted
or lost (SW quiesce, a failed recovery: critical). Other lines the driver marks '[ERR]' are an unnamed lead on a module
no named kind is about (kernel_unknown.UNNAMED). The probe and railgating lines a healthy boot prints are read as
the module's presence only."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from gpuvet.captures import kernel_failed, kernel_unknown
from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.text import Line

if TYPE_CHECKING:
    from gpuvet.captures.kernel import KernelParse

WORDS = ("nvgpu:",)  # every line this reader reads holds it
# the driver's prefix and its platform device: 'nvgpu: 17000000.gpu', 'nvgpu: 17000000.gv11b', 'nvgpu: gpu.0'
_LINE = lazy(r"\bnvgpu: (?P<dev>[0-9a-fA-F]{6,8}\.[a-z][a-z0-9]{1,7}|gpu\.\d)(?=\s|:)")
# the chip: the device's suffix in older L4T (17000000.gv11b), or the debug dump's '__ga10b__ Channel Status' header
_CHIP = lazy(r"^g[kmpv]\d{2}[ab]$|^ga\d{2}b$")
_DUMP = lazy(r"(?:^|\s)__(g[kmpva]\d{2}[ab])__ Channel Status")
_NOTIFIER = lazy(r"\berror notifier set to (\d{1,3})\b")
MMU_FAULT = "nvgpu_mmu_fault"
CHANNEL_ERROR = "nvgpu_channel_error"
HALTED = "nvgpu_gpu_halted"
KINDS = (MMU_FAULT, CHANNEL_ERROR, HALTED)  # kernel_messages.yaml gives each its cause
# the first kind whose words a line holds; a notifier's code says which of the first two it is
_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # R13D: the GPU's secure boot did not finish (nvgpu's LS falcon bootstrap through the PMU or ACR, the GR
    # falcon's ctxsw ucode, the poweron sequence): the GPU is not initialised, no work runs on it
    (kernel_failed.INIT_FAILED, lazy(
        r"\bLSF Load failed\b|\bUnable to recover GR falcon\b|\bACR (?:boot(?:strap)?|load|init)\w* failed\b|"
        r"\b(?:falcon|pmu|acr) bootstrap failed\b|\bfailed to (?:boot|bootstrap) (?:the )?(?:ACR|PMU|falcon|LS)\b|"
        r"\b(?:nvgpu|gk20a)_finalize_poweron\b[^\n]{0,40}\bfail|\bnvgpu_early_poweron failed\b|"
        r"\bpoweron failed\b", re.I)),
    (HALTED, lazy(r"\bSW quiesce\b|\bquiesce (?:triggered|requested)\b|\bGPU (?:is |has been )?lost\b|"
                  r"\b(?:recovery|reset) failed\b|\bfailed to (?:reset|recover)\b", re.I)),
    (MMU_FAULT, lazy(r"\[MMU FAULT\]|\bmmu fault\b|\bpage fault error\b|\berror notifier set to 31\b", re.I)),
    (CHANNEL_ERROR, lazy(r"\berror notifier set to \d+|\bctxsw timeout\b|\bsemaphore acquire timeout\b|"
                         r"pbdma_intr\b|\bpbdma intr\b|\bidle timeout\b|\bchannel \d+ timed out\b|"
                         r"\bfifo sched error\b|\bgr exception\b|\bsm exception\b|\bwatchdog timeout\b|"
                         r"\bjob (?:on channel \d+ )?timed ?out\b", re.I)),
)
SHOWN = 3  # lines quoted in an event


def kind_of(text: str) -> str | None:
    """The kind an nvgpu line says, or None (a probe, railgating or other informational line)."""
    if (m := _NOTIFIER.search(text)) is not None:
        return MMU_FAULT if m.group(1) == "31" else CHANNEL_ERROR
    return next((kind for kind, pattern in _KINDS if pattern.search(text)), None)


def _chip(lines: list[Line], devices: list[str], marks: Marks | None) -> Callable[[str], str | None]:
    """The chip of each device: its name's suffix, else the one chip a debug dump of the same log names."""
    dumped = {m.group(1) for i in holding(lines, ("Channel Status",), marks) if devices
              and (m := _DUMP.search(lines[i].text)) is not None}
    alone = next(iter(dumped)) if len(dumped) == 1 and len(devices) == 1 else None

    def of(dev: str) -> str | None:
        suffix = dev.rsplit(".", 1)[-1]
        return suffix if _CHIP.match(suffix) else alone
    return of


def read(lines: list[Line], out: KernelParse, marks: Marks | None = None) -> KernelParse:
    """``out`` with nvgpu's modules listed and its faults as events, one per kind and module (the notifier's line
    first where there is one: it names the channel and the process), its lines claimed."""
    from gpuvet.captures.kernel import KernelEvent, KernelModule

    found: dict[tuple[str, str], list[Line]] = {}
    devices: list[str] = []
    for i in holding(lines, WORDS, marks):
        ln = lines[i]
        if (m := _LINE.search(ln.text[:400])) is None:
            continue
        out.claimed.add(ln.no)
        out.nvrm_lines += 1
        devices += [] if m.group("dev") in devices else [m.group("dev")]
        if (kind := kind_of(ln.text)) is not None:
            found.setdefault((kind, m.group("dev")), []).append(ln)
        elif "[ERR]" in ln.text and kernel_unknown.benign(ln.text) is None:  # nvgpu_err's mark, no kind named
            found.setdefault((kernel_unknown.UNNAMED, m.group("dev")), []).append(ln)
    named = {dev for kind, dev in found if kind != kernel_unknown.UNNAMED}
    found = {(kind, dev): said for (kind, dev), said in found.items()  # beside a named fault: its context
             if kind != kernel_unknown.UNNAMED or dev not in named}
    have = {k.module for k in out.modules}
    chip = _chip(lines, devices, marks)
    out.modules += [KernelModule(d, "NVIDIA", chip=chip(d)) for d in devices if d not in have]
    out.notes += [f"{d}: NVIDIA integrated GPU {c} (the nvgpu driver's platform device, no PCI bus id)"
                  for d in devices if (c := chip(d)) is not None]
    for (kind, dev), said in found.items():
        first = next((ln for ln in said if _NOTIFIER.search(ln.text)), said[0])
        shown = [first, *(ln for ln in said if ln is not first)][:SHOWN]
        out.events.append(KernelEvent(kind, dev, first.text.strip()[:240], first.no, count=len(said),
                                      driver="nvgpu", shown=tuple(ln.text.strip()[:240] for ln in shown)))
    return out
