"""Issue 46 (R3B): the compute runtimes' own device listings read for whether a GPU is usable by compute. sycl-ls
(intel/llvm sycl/tools/sycl-ls: '[level_zero:gpu][level_zero:0] Intel(R) Level-Zero, Intel(R) Arc(TM) A770 …',
'[opencl:cpu:1] Intel(R) OpenCL, …', before 2023 '[opencl:0] GPU : Intel(R) OpenCL HD Graphics 3.0 […]' and
'[host:0] HOST: SYCL host platform') lists its GPUs like clinfo -l; a listing of only CPU and emulated devices
(Intel's 'FPGA Emulation Device', pocl, the SYCL host device) is the GPU's runtime not installed or not found (no
intel-opencl-icd / Level Zero GPU driver, the 'render' node not bound), never a GPU: said once, with the packages
`dpkg -l` beside it shows (which of the Intel GPU runtime's are there). A kernel booted with 'nomodeset' where the
same text shows its effect (no /dev/dri, HDA's 'No i915 binding for Intel HDMI/DP codec') bound no GPU driver: no
compute device can exist, the boot configuration's cause (a 'nomodeset' alone, usual on NVIDIA hosts, says nothing).
Its sycl-ls lines are read by captures/sycl_devices, the one SYCL reader (issue 46)."""

from __future__ import annotations

import re

from gpuvet.captures import sycl_devices
from gpuvet.captures.marks import holding
from gpuvet.captures.records import AppError
from gpuvet.captures.runtime_devices import RuntimeDevice
from gpuvet.captures.text import Line

MISSING, UNBOUND = "gpu_runtime_missing", "gpu_kernel_not_bound"
MARKS = ("[opencl:", "[level_zero:", "[ext_oneapi_", "[host:", "[cuda:", "[hip:", "[native_cpu:")
# the Intel GPU runtime's packages in `dpkg -l`/`rpm -qa`/pacman lists (compute-runtime's, level-zero's)
_PACKAGE = re.compile(
    r"^\s*(?:ii\s+)?(intel-opencl-icd|intel-level-zero-gpu|libze-intel-gpu1|libze1|level-zero|"
    r"intel-compute-runtime|libigc1|intel-igc-core)(?::\w+)?[\s-]+(\d[\w.+~-]*)"
)
_NEEDED = ("intel-opencl-icd", "intel-level-zero-gpu|libze-intel-gpu1|level-zero|intel-compute-runtime")


def sycl_ls(lines: list[Line]) -> tuple[list[RuntimeDevice], set[int]]:
    """sycl-ls's GPUs, one per card as the SYCL device list counts them (captures/sycl_devices, the one reader of
    sycl-ls: a card listed through two backends is one), and every sycl-ls line read."""
    entries = [e for i in holding(lines, MARKS) if (e := sycl_devices.ls_entry(lines[i].text, lines[i].no))]
    out: list[RuntimeDevice] = []
    for group in sycl_devices.cards(entries):
        first = group.entries[0]
        for _ in range(group.count):
            # no vendor: the SYCL device list (accel_tools) makes these cards' modules, never runtime_status again
            out.append(RuntimeDevice("sycl-ls", f"card {len(out)}", group.model or sycl_devices.UNKNOWN, first.no))
    return out, {e.no for e in entries}


_TREE = re.compile(r"^\s*[`+|\\]--\s*Device #\d{1,3}: (.+?)\s*$")


def missing(lines: list[Line], gpus: int) -> tuple[list[AppError], set[int]]:
    """One error where sycl-ls or clinfo -l list devices but none is a GPU (``gpus``: the GPUs the file's listings
    named), with the Intel runtime's packages the file shows; and the package lines read."""
    held = (lines[i] for i in holding(lines, (*MARKS, "-- Device #")))
    listed = [ln for ln in held if sycl_devices.ls_entry(ln.text) or _TREE.match(ln.text)]
    if not listed:
        return [], set()
    held = (lines[i] for i in holding(lines, ("intel-", "level-zero", "libze", "libigc")))
    packages = {ln.no: m for ln in held if (m := _PACKAGE.match(ln.text)) is not None}
    if gpus:
        return [], set(packages)
    names = "; ".join(dict.fromkeys(n for ln in listed if (n := _name(ln.text))))
    said = f"{len(listed)} device(s) listed, no GPU"
    if packages:
        have = [f"{m.group(1)} {m.group(2)}" for m in packages.values()]
        lacking = [p.split("|")[0] for p in _NEEDED if not any(re.fullmatch(p, m.group(1)) for m in packages.values())]
        said += (f"; not installed: {', '.join(lacking)}" if lacking else "") + f"; installed: {', '.join(have)}"
    said += f"; listed: {names}"
    tool = "sycl-ls" if any(sycl_devices.ls_entry(ln.text) for ln in listed if "[" in ln.text) else "clinfo -l"
    return [AppError(MISSING, listed[0].no, said, None, tool)], set(packages)


def _name(text: str) -> str:
    if (t := _TREE.match(text)) is not None:
        return t.group(1)[:48]
    e = sycl_devices.ls_entry(text)
    return f"{e.backend}:{e.kind} {e.name[:48]}" if e else ""


# a kernel command line holding 'nomodeset' (/proc/cmdline, dmesg's 'Command line:'), and what shows its effect
_NOMODESET = re.compile(r"(?:BOOT_IMAGE=|Command line:|\broot=)\S*.*\bnomodeset\b")
_NO_DRI = re.compile(r"cannot access '?/dev/dri'?: No such file|/dev/dri'?: No such file or directory|No i915 binding")


def unbound(lines: list[Line]) -> list[AppError]:
    """One error where the kernel was booted with nomodeset and the text shows no DRM device bound."""
    held = [lines[i] for i in holding(lines, ("nomodeset", "/dev/dri", "No i915 binding"))]
    boot = next((ln for ln in held if _NOMODESET.search(ln.text)), None)
    shown = next((ln for ln in held if _NO_DRI.search(ln.text)), None)
    if boot is None or shown is None:
        return []
    return [
        AppError(UNBOUND, boot.no, f"nomodeset on the kernel command line; {shown.text.strip()[:160]}", None, "the kernel")
    ]


# the one GPU a text names by its DRM path or its driver's bind (an OpenCL/Level Zero 'no device' is about it)
_PLACE = re.compile(
    r"/dev/dri/by-path/pci-([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])-(?:render|card)|"
    r"([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\W{0,3}>\s*/sys/bus/pci/drivers/(?:xe|i915|amdgpu)/bind"
)


def placed(lines: list[Line]) -> str | None:
    """The bus id of the one GPU the text names by its render node's path or its driver's bind; None for none or two."""
    found = {
        (m.group(1) or m.group(2)).lower()
        for i in holding(lines, ("by-path/pci-", "/bind"))
        if (m := _PLACE.search(lines[i].text)) is not None
    }
    return found.pop() if len(found) == 1 else None
