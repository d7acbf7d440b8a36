"""What users paste when the GPU driver is not, or not properly, in place (issue 46): which kernel driver holds
each GPU (``lspci -k``/``-nnk``/``-vv``'s 'Kernel driver in use', ``lshw -C display``'s ``driver=`` or
``UNCLAIMED``), DKMS' state and build errors (``dkms status``, 'Error! Bad return status for module build'),
``modprobe``/``insmod`` refusals (a Secure Boot key, no device), the NVIDIA installer's errors,
nvidia-persistenced's 'Failed to query NVIDIA devices', ``mokutil --sb-state`` and ``ubuntu-drivers devices``.

Each fault is an application-error record of its own kind (records.AppError), judged by doctor as every error
line is (doctor/capture_errors.KIND_CAUSES). A GPU bound to nouveau is a fault only where the capture itself
expects NVIDIA's driver (its 'Kernel modules' line names nvidia, or another line names NVIDIA's software); a GPU
held by vfio-pci is a pass-through set-up, said as such (info), never a fault. An Intel GPU function (i915, xe) is
read from lspci alone (lshw and inxi name the host's integrated GPU too): its module listed and none in use. What
the capture says of the installed state (the bound driver, DKMS versions and kernels, Secure Boot) is said in notes,
which inventory lists; the GPUs lshw and ubuntu-drivers name are listed for inventory by ``listing``."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from gpuvet.captures.app_errors import AppErrorsParse
from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.links import ListedGpu, LspciParse
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.records import AppError
from gpuvet.captures.text import Line

_BUS = r"(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]"
# an lspci device line of a display function (any of -k, -nnk, -vv, -vnn): bus id, class, then its name
_LSPCI_DEV = lazy(r"^\s*(" + _BUS + r")\s+(VGA compatible controller|3D controller|Display controller|"
                  r"Processing accelerators)(?:\s*\[(?:03[0-9a-f]{2}|1200)\])?:\s*(.*?)\s*$", re.I)
_ANY_DEV = lazy(r"^\s*" + _BUS + r"\s+\S")  # any lspci device line (a block ends at the next)
_IN_USE = lazy(r"^\s*Kernel driver in use:\s*(\S+)")
_MODULES = lazy(r"^\s*Kernel modules:\s*(.+?)\s*$")
_NVIDIA = lazy(r"\bNVIDIA\b|\[10de:", re.I)
_AMD = lazy(r"\[AMD/ATI\]|\bAdvanced Micro Devices\b|\bATI Technologies\b|\[1002:")
_INTEL = lazy(r"^Intel Corporation\b|\[8086:")  # lspci's Intel GPU function (i915, xe): its binding only
_NVIDIA_PRODUCT = lazy(r"\[(?:GeForce|Quadro|Tesla|TITAN|NVS)\b|^(?:GeForce|Quadro|Tesla)\b")
_AMD_PRODUCT = lazy(r"\[(?:Radeon|FirePro|Instinct)\b|^(?:Radeon|FirePro)\b")
# pci.ids' vendor words
_VENDOR_WORDS = lazy(r"^.*?(?:NVIDIA Corporation|\[AMD/ATI\]|ATI Technologies Inc\.?|Intel Corporation)\s*")
_NAME_NOISE = lazy(r"\s*\((?:rev \w+|prog-if [^()]*(?:\[[^\]]*\])?)\)|\s*\[[0-9a-f]{4}:[0-9a-f]{4}\]", re.I)
# the drivers that hold a GPU instead of its vendor's compute driver
_OTHER = {"NVIDIA": ("nouveau", "nvidiafb", "rivafb"), "AMD": ("radeon",), "Intel": ()}
_OWN = {"NVIDIA": "nvidia", "AMD": "amdgpu", "Intel": "i915 or xe"}
_OWN_MODULE = {"NVIDIA": lazy(r"^nvidia(?:$|[_-](?!fb))"), "AMD": lazy(r"^amdgpu"),  # not nvidiafb
               "Intel": lazy(r"^(?:i915|xe)$")}
_PASSTHROUGH = ("vfio-pci", "pci-stub", "vfio_pci")
# a line outside lspci's own that names the vendor's driver stack: the capture expects that driver to run
_EXPECTS = {"NVIDIA": lazy(r"nvidia-smi|nvidia-bug-report|nvidia\.ko|\bNVRM\b|nvidia-driver|\bcuda\b|"
                           r"nvidia-persistenced|dkms.*nvidia|nvidia/\d", re.I),
            "AMD": lazy(r"\brocm|rocminfo|amdgpu-install|amdgpu-dkms|rock-dkms|\bhip\b", re.I)}

# lshw's display node ('*-display', '*-display:1 UNCLAIMED') and its fields
_LSHW_NODE = lazy(r"^\s*\*-(display|video)(?::\d+)?(\s+UNCLAIMED)?\s*$")
_LSHW_OTHER = lazy(r"^\s*\*-")
_LSHW_FIELD = lazy(r"^\s*(product|vendor|bus info|configuration):\s*(.*?)\s*$")
_LSHW_DRIVER = lazy(r"\bdriver=(\S+)")

# DKMS: 'nvidia/390.157, 6.4.1-zen1-1-zen, x86_64: installed', 'amdgpu, 2.3-14.el7, 5.0.8, x86_64: installed
# (original_module exists)', 'nvidia/390.157: added' (3.x and 2.x spellings)
_DKMS_STATUS = lazy(r"^\s*([A-Za-z][\w.+-]*)(?:/|,\s*)([\w.+~:-]+?)(?:,\s*([\w.+~-]+),\s*(\w+))?:\s*"
                    r"(added|built|installed(?:-weak)?|broken|unbuilt)\b(.*)$")
_DKMS_FAILED = lazy(r"Error! Bad return status for module build on kernel:\s*(\S+)")
_DKMS_CONSULT = lazy(r"/var/lib/dkms/([\w.+-]+)/([\w.+~-]+)/build/make\.log")
_DKMS_AUTO = lazy(r"dkms autoinstall on (\S+?)/\S+ failed for ([\w.+-]+)")
_DKMS_INSTALL = lazy(r"dkms (?:install|build)\b.*?\s([\w.+-]+)/([\w.+~-]+)(?:\s+-k\s+(\S+))?")
# the GPU driver modules (not bbswitch, vboxhost, nvidia-fs: their failure leaves the GPU driver in place)
_GPU_MODULE = lazy(r"^(?:nvidia(?!-fs\b)[\w.-]*|amdgpu[\w.-]*|rock-dkms|rock)$")
# modprobe/insmod/systemd-modules-load refusing a GPU driver module, and why
_INSERT = lazy(r"(?:could not insert '?|Failed to insert module '|could not insert module \S*?)"
               r"(nvidia[\w-]*|amdgpu)(?:\.ko)?'?:\s*(.+?)\s*$", re.I)
_KEY = lazy(r"Key was rejected by service|Required key not available|with unavailable key is rejected|"
            r"Loading of unsigned module is rejected|unsigned module loading is restricted", re.I)
_UDEV_MODPROBE = lazy(r"Process '/sbin/modprobe (nvidia[\w-]*|amdgpu)' failed with exit code (\d+)")
_PERSISTENCED_UNIT = lazy(r"nvidia-persistenced\.service\b")  # systemctl status' head ('● … - NVIDIA …')
_PERSISTENCED_NONE = lazy(r"Failed to query NVIDIA devices")
_PERSISTENCED_FAILED = lazy(r"nvidia-persistenced\.service: Failed with result|^\s*\u00d7 nvidia-persistenced\.service|"
                            r"Failed to start (?:nvidia-"
                            r"persistenced\.service|NVIDIA Persistence Daemon)")
# the NVIDIA installer's own errors (nvidia-installer.log or its console)
_INSTALLER_BUILD = lazy(r"ERROR: (?:An error occurred while performing the step: \"Building kernel modules\"|"
                        r"Unable to build the NVIDIA kernel module|Unable to find the kernel source tree|"
                        r"Failed to run `?\S*dkms (?:build|install))")
# the installer failing to load what it built: another module than nvidia.ko (ops_layer reads that one), its log's
# 'Kernel module load error' line, and its own Secure Boot explanation
_INSTALLER_LOAD = lazy(r"Unable to load the '(nvidia[\w-]*)' kernel module|Kernel module load error:\s*(.+)$|"
                       r"(Secure boot is enabled on this system, so this is likely because it was not signed)",
                       re.I)
_INSTALLER_LOADED = lazy(r"An NVIDIA kernel module '([\w-]+)' appears to already be loaded|The Nouveau kernel "
                         r"driver is currently in use by your system")
# a package manager failing to set the driver's kernel package up (dpkg runs DKMS' build in its postinst) and
# Fedora's akmods failing to build it
_PACKAGE_FAILED = lazy(r"dpkg: error processing package ((?:nvidia|amdgpu|rock)[\w.+:-]*?(?:dkms|kernel|driver)"
                       r"[\w.+:-]*)|Building and installing (?:nvidia|amdgpu)[\w.-]*\s*\[\s*FAILED|"
                       r"akmods.{0,80}?(?:nvidia|amdgpu)\S*.{0,80}?\bfail", re.I)
# mokutil --sb-state, DKMS' own words, sbctl status ('Secure Boot:  ✓ Enabled'), bootctl ('Secure Boot: enabled')
_SB_STATE = lazy(r"SecureBoot (enabled|disabled)|Secure Boot (not enabled|enabled) on this system|"
                 r"Secure Boot:\s*(?:[^\w\s]\s*)?(enabled|disabled)", re.I)
# inxi -G's device line ('Device-1: NVIDIA GA106 [GeForce RTX 3060] vendor: ASUSTeK driver: nvidia v: 535.129.03
# … bus-ID: 0b:00.0'; older inxi 'Card-1: … bus ID: 01:00.0'); 'driver: N/A' is none bound. Its long lines wrap onto
# indented lines that open with no key of their own
_INXI_DEV = lazy(r"^\s*(?:Graphics:\s+)?(?:Device|Card)-\d+:\s*(.+?)\s+driver:\s*(\S+)(?:\s+v:\s*(\S+))?")
_INXI_BUS = lazy(r"\bbus[- ]ID:\s*(" + _BUS + r")")
_INXI_VENDOR = lazy(r"\s+vendor:\s.*$")
_INXI_KEY = lazy(r"^\s*(?:[A-Z][\w-]*-\d+|Display|API|Info|OpenGL|Vulkan|EGL|Screen|Monitor|Audio|Network|"
                 r"Drives|Sensors|Graphics|Server|Compositor|Machine|System|CPU|Memory)\b[\w-]*:")
# the running kernel: uname -r's answer (the line after the command), uname -a's release
_UNAME_CMD = lazy(r"uname -r\W*$")
_RELEASE = lazy(r"^\s*(\d+\.\d+(?:\.\d+)?[\w.+~-]*)\s*$")
_UNAME_A = lazy(r"^\s*Linux \S+ (\d+\.\d+(?:\.\d+)?[\w.+~-]*) #")
# modinfo nvidia / amdgpu: the module file, its version and the kernel it was built for
_MODINFO_FILE = lazy(r"^\s*filename:\s*\S*/(nvidia|amdgpu)\.ko(?:\.\w+)?\s*$")
_MODINFO_FIELD = lazy(r"^\s*(version|vermagic):\s*(\S+)")
# ubuntu-drivers devices: '== /sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0 ==', then 'key : value' rows
_UD_HEAD = lazy(r"^\s*==\s*/sys/devices/\S*?/(" + _BUS + r")\s*==\s*$")
_UD_FIELD = lazy(r"^\s*(vendor|model|driver)\s*:\s*(.*?)\s*$")


@dataclass
class _Gpu:
    """One GPU function as lspci or lshw shows it, with the driver that holds it."""

    bus: str | None
    vendor: str
    name: str
    line: Line
    tool: str
    in_use: str | None = None
    modules: list[str] = field(default_factory=list)
    unclaimed: bool = False  # lshw's UNCLAIMED: no driver bound
    version: str | None = None  # the driver's version, where the tool says it (inxi's 'v:')
    lines: set[int] = field(default_factory=set)


class _Near:
    """The lines near each line holding one of some literals: one pass over the lines testing the literals the
    text's marks may hold (a literal their byte triples rule out is never searched, and a bug report's
    lines are never joined again): its 200,000 lines are walked once, not once per reader (issue 43)."""

    def __init__(self, lines: list[Line], marks: Marks | None, literals: tuple[str, ...]) -> None:
        self.lines = lines
        present = [w for w in dict.fromkeys(literals) if marks is None or marks.may(w)]
        self.at: dict[str, list[int]] = {w: [] for w in present}
        if not present:
            return
        if len(present) <= 3:  # ``in`` tests of the few words left (a bug report's): a third of a regex a line
            hit = holding(lines, tuple(present))
        else:
            pattern = re.compile("|".join(re.escape(w) for w in present))
            hit = [i for i, ln in enumerate(lines) if pattern.search(ln.text) is not None]
        for i in hit:
            for w in present:
                if w in lines[i].text:
                    self.at[w].append(i)

    def hits(self, literals: tuple[str, ...]) -> list[int]:
        """The indexes of the lines holding one of ``literals`` (each one of those given when made), in order."""
        return sorted({i for w in literals for i in self.at.get(w, ())})

    def windows(self, literals: tuple[str, ...], before: int, after: int) -> list[list[Line]]:
        """Each run of lines from ``before`` lines above a hit to ``after`` below it, overlapping runs joined."""
        runs: list[list[int]] = []
        for i in self.hits(literals):
            lo, hi = max(0, i - before), min(len(self.lines), i + after + 1)
            if runs and lo <= runs[-1][1]:
                runs[-1][1] = max(runs[-1][1], hi)
            else:
                runs.append([lo, hi])
        return [self.lines[lo:hi] for lo, hi in runs]

    def near(self, literals: tuple[str, ...], before: int, after: int) -> list[Line]:
        return [ln for w in self.windows(literals, before, after) for ln in w]


_BINDING = ("Kernel driver in use", "Kernel modules")
_LSHW = ("*-display", "*-video")
_INXI = ("Device-", "Card-")
_UD = ("== /sys/devices",)
_DKMS_WORDS = (": added", ": built", ": installed", ": broken", ": unbuilt", "Bad return status", "autoinstall",
               "Consult", "ERROR:", "already be loaded", "Nouveau kernel driver", "rror processing", "FAILED", "akmods",
               "Unable to load the '", "load error", "Secure boot is enabled")
_LOADING_WORDS = ("insert", "modprobe", "rejected", "restricted", "NVIDIA devices", "ersistence", "Active: failed",
                  "ecure")
# the words of a line that names a vendor's driver stack (then _EXPECTS decides)
_EXPECT_WORDS = {"NVIDIA": ("nvidia-smi", "NVIDIA-SMI", "nvidia-bug-report", "nvidia.ko", "NVRM", "nvidia-driver",
                            "cuda", "CUDA", "Cuda", "nvidia-persistenced", "dkms", "nvidia/"),
                 "AMD": ("rocm", "ROCm", "ROCM", "amdgpu-install", "amdgpu-dkms", "rock-dkms", "hip", "HIP")}

_GPU_WORDS = ("nvidia", "NVIDIA", "amdgpu")
_WORDS = (*_BINDING, *_LSHW, *_INXI, *_UD, *_DKMS_WORDS, *_LOADING_WORDS, "uname -r", "Linux ", "filename:")


def parse(lines: list[Line], marks: Marks | None = None) -> AppErrorsParse:
    """The driver's installed state and its failures in the lines (see the module's docstring)."""
    out = AppErrorsParse()
    near = _Near(lines, marks, _WORDS)
    gpus = [g for w in near.windows(_BINDING, 200, 0) for g in _lspci_gpus(w)] + _listed_gpus(near)
    expects: dict[str, bool] = {}
    for g in gpus:
        _judge_binding(out, g, lambda vendor: expects.setdefault(vendor, _expects(lines, marks, vendor)))
    dkms = near.near(_DKMS_WORDS, 12, 2)
    _dkms(dkms, out)
    _module_loading(near.near(_LOADING_WORDS, 4, 0), out, lambda: bool(_Near(lines, marks, _GPU_WORDS).hits(_GPU_WORDS)))
    for w in near.windows(_UD, 0, 30):
        _ubuntu_drivers(w, out)
    _modinfo(near.near(("filename:",), 0, 12), out)
    if gpus or dkms or out.claimed:  # the running kernel is said beside the driver's state, not alone
        _running_kernel(near.near(("uname -r", "Linux "), 0, 1), dkms, out)
    return out


def _listed_gpus(near: _Near) -> list[_Gpu]:
    """The GPUs lshw's display nodes and inxi's device lines show."""
    return [g for w in near.windows(_LSHW, 0, 20) for g in _lshw_gpus(w)] + \
        [g for w in near.windows(_INXI, 0, 2) for g in _inxi_gpus(w)]


def listing(lines: list[Line], marks: Marks | None = None) -> LspciParse:
    """The NVIDIA and AMD GPUs lshw's display nodes, ubuntu-drivers' device blocks and inxi name, for inventory."""
    out = LspciParse()
    near = _Near(lines, marks, _LSHW + _INXI + _UD)
    for g in _listed_gpus(near) + [g for w in near.windows(_UD, 0, 30) for g in _ud_gpus(w)]:
        if g.bus is None or g.bus in {x.bus_id for x in out.listed}:
            continue
        out.listed.append(ListedGpu(g.bus, g.vendor, g.name, None))
        out.claimed |= g.lines
        if g.vendor == "NVIDIA":
            out.gpus.append((g.bus, g.name))
    return out


def _vendor(words: str) -> str | None:
    """The GPU's vendor from its names: the vendor's own name, else a product line only it sells (an excerpt cut
    before lshw's vendor field)."""
    if _NVIDIA.search(words) or _NVIDIA_PRODUCT.search(words):
        return "NVIDIA"
    return "AMD" if _AMD.search(words) or _AMD_PRODUCT.search(words) else None


def _bus(raw: str) -> str:
    """A bus id as inventory spells it: upper case, the domain kept where given."""
    return raw.upper()


def _lspci_gpus(lines: list[Line]) -> list[_Gpu]:
    """Each NVIDIA or AMD display function an lspci listing shows, with its driver lines (-k) where given."""
    out: list[_Gpu] = []
    cur: _Gpu | None = None
    for ln in lines:
        t = ln.text
        if (m := _LSPCI_DEV.match(t)) is not None:
            vendor = _vendor(m.group(3)) or ("Intel" if _INTEL.search(m.group(3)) else None)
            cur = _Gpu(_bus(m.group(1)), vendor, _VENDOR_WORDS.sub("", _NAME_NOISE.sub("", m.group(3))), ln,
                       "lspci") if vendor else None
            if cur is not None:
                out.append(cur)
            continue
        if _ANY_DEV.match(t):
            cur = None
        elif cur is not None and (u := _IN_USE.match(t)) is not None:
            cur.in_use, cur.lines = u.group(1), cur.lines | {ln.no}
        elif cur is not None and (k := _MODULES.match(t)) is not None:
            cur.modules, cur.lines = [x.strip() for x in k.group(1).split(",")], cur.lines | {ln.no}
    return out


def _lshw_gpus(lines: list[Line]) -> list[_Gpu]:
    """Each NVIDIA or AMD display node of an lshw listing: product, bus info, driver= or UNCLAIMED."""
    out: list[_Gpu] = []
    node: dict[str, str] | None = None
    start: Line | None = None
    unclaimed, seen = False, set[int]()
    for ln in [*lines, None]:
        m = _LSHW_NODE.match(ln.text) if ln is not None else None
        if node is not None and start is not None and (ln is None or m or _LSHW_OTHER.match(ln.text)):
            gpu = _lshw_gpu(node, start, unclaimed, seen)
            out += [gpu] if gpu else []
            node = None
        if ln is None:
            break
        if m is not None:
            node, start, unclaimed, seen = {}, ln, bool(m.group(2)), {ln.no}
        elif node is not None and (f := _LSHW_FIELD.match(ln.text)) is not None:
            node[f.group(1)], seen = f.group(2), seen | {ln.no}
    return out


def _lshw_gpu(node: dict[str, str], start: Line, unclaimed: bool, seen: set[int]) -> _Gpu | None:
    vendor = _vendor(f"{node.get('vendor', '')} {node.get('product', '')}")
    if vendor is None:
        return None
    bus = re.search(r"pci@(" + _BUS + r")", node.get("bus info", ""))
    driver = _LSHW_DRIVER.search(node.get("configuration", ""))
    return _Gpu(_bus(bus.group(1)) if bus else None, vendor, node.get("product", "").strip(), start, "lshw",
                driver.group(1) if driver else None, unclaimed=unclaimed, lines=set(seen))


def _inxi_gpus(lines: list[Line]) -> list[_Gpu]:
    """Each NVIDIA or AMD device of inxi -G's Graphics section, its wrapped continuation lines joined."""
    out: list[_Gpu] = []
    for i, ln in enumerate(lines):
        if "-" not in ln.text or (m := _INXI_DEV.match(ln.text)) is None:
            continue
        tail = [x for x in lines[i + 1:i + 3] if x.text[:1].isspace() and not _INXI_KEY.match(x.text)]
        whole = " ".join([ln.text, *(x.text.strip() for x in tail)])
        name = _INXI_VENDOR.sub("", m.group(1))
        words = re.sub(r"^(?:NVIDIA|AMD|Advanced Micro Devices,? (?:Inc\.)?|\[AMD/ATI\])\s+", "", name)
        words = re.sub(r"^\[AMD/ATI\]\s+", "", words)
        if (vendor := _vendor(name)) is None:
            continue
        bus = _INXI_BUS.search(whole)
        driver = None if m.group(2).upper() == "N/A" else m.group(2)
        version = m.group(3) if m.group(3) and m.group(3)[:1].isdigit() else None  # 'v: kernel' names none
        gpu = _Gpu(_bus(bus.group(1)) if bus else None, vendor, words, ln, "inxi", driver, unclaimed=driver is None,
                   lines={ln.no, *(x.no for x in tail)}, version=version)
        out.append(gpu)
    return out


def _ud_gpus(lines: list[Line]) -> list[_Gpu]:
    """The NVIDIA and AMD devices ubuntu-drivers devices lists (its modalias blocks)."""
    out: list[_Gpu] = []
    cur: dict[str, str] = {}
    head: tuple[str, Line] | None = None
    for ln in [*lines, None]:
        h = _UD_HEAD.match(ln.text) if ln is not None else None
        if head is not None and (ln is None or h):
            vendor = _vendor(cur.get("vendor", ""))
            if vendor:
                out.append(_Gpu(_bus(head[0]), vendor, cur.get("model", ""), head[1], "ubuntu-drivers"))
            head, cur = None, {}
        if h is not None and ln is not None:
            head = (h.group(1), ln)
        elif head is not None and ln is not None and (f := _UD_FIELD.match(ln.text)) and f.group(1) not in cur:
            cur[f.group(1)] = f.group(2)
    return out


def _expects(lines: list[Line], marks: Marks | None, vendor: str) -> bool:
    """Whether a line of the capture that is no lspci/lshw field names the vendor's driver stack (asked only where a
    GPU is bound to another driver)."""
    pattern, words = _EXPECTS[vendor], _EXPECT_WORDS[vendor]
    return any(pattern.search(ln.text) for ln in (lines[i] for i in _Near(lines, marks, words).hits(words))
               if not _MODULES.match(ln.text) and not _LSPCI_DEV.match(ln.text) and "product:" not in ln.text)


def _judge_binding(out: AppErrorsParse, g: _Gpu, expects: Callable[[str], bool]) -> None:
    """The driver holding one GPU function, said; a fault where it is not the one the capture expects."""
    where = g.bus or "bus id not given"
    said = f"{g.tool}: {g.vendor} {g.name} ({where})"
    out.claimed |= g.lines
    if g.in_use in _PASSTHROUGH:
        _add(out, "gpu_passthrough", g, f"{said}: kernel driver in use {g.in_use} (a VM pass-through set-up, "
             "by design)")
    elif g.in_use in _OTHER[g.vendor] and (any(_OWN_MODULE[g.vendor].match(m) for m in g.modules) or
                                           expects(g.vendor)):
        _add(out, "gpu_bound_other_driver", g, f"{said}: kernel driver in use {g.in_use}, not "
             f"{_OWN[g.vendor]}" + (f" (installed: {', '.join(g.modules)})" if g.modules else ""))
    elif g.in_use is not None:
        out.notes.append(f"{said}: kernel driver in use {g.in_use}" + (f" {g.version}" if g.version else "") +
                         ("" if _OWN_MODULE[g.vendor].match(g.in_use) else " (nothing in the capture expects "
                          f"{_OWN[g.vendor]})"))
    elif g.unclaimed or (g.modules and g.tool == "lspci"):
        _add(out, "gpu_no_driver", g, f"{said}: no kernel driver bound" + (" (lshw: UNCLAIMED)" if g.unclaimed
                                                                           else f" (modules: {', '.join(g.modules)})"))


def _add(out: AppErrorsParse, kind: str, g: _Gpu, text: str) -> None:
    out.errors.append(AppError(kind, g.line.no, text[:300], g.bus, g.tool))
    out.claimed.add(g.line.no)


def _error(out: AppErrorsParse, kind: str, ln: Line, tool: str, module: str | None = None) -> None:
    """One error record of ``kind`` for the line, the same kind and text once."""
    text = ln.text.strip()[:300]
    out.claimed.add(ln.no)
    for i, e in enumerate(out.errors):
        if e.kind == kind and e.module == module and e.text == text:
            out.errors[i] = AppError(e.kind, e.line, e.text, e.module, e.tool, e.times + 1)
            return
    out.errors.append(AppError(kind, ln.no, text, module, tool))


def _dkms(lines: list[Line], out: AppErrorsParse) -> None:
    """DKMS' status lines (said) and its build failures of a GPU driver module (a fault each)."""
    failed: set[tuple[str, str]] = set()
    for i, ln in enumerate(lines):
        t = ln.text
        if (s := _DKMS_STATUS.match(t)) is not None and "dkms" not in t.lower():
            _dkms_status(out, ln, s)
        elif "Bad return status" in t and (f := _DKMS_FAILED.search(t)) is not None:
            module = _built_module(lines, i)
            if module is None or _GPU_MODULE.match(module.split("/")[0]):
                failed.add((module or "a module", f.group(1)))
                _error(out, "driver_build_failed", ln, "dkms")
        elif "autoinstall" in t and (a := _DKMS_AUTO.search(t)) is not None and _GPU_MODULE.match(a.group(2)):
            failed.add((a.group(2), a.group(1)))
            _error(out, "driver_build_failed", ln, "dkms")
        elif "Consult" in t and _DKMS_CONSULT.search(t):
            out.claimed.add(ln.no)
        elif "ERROR:" in t and _INSTALLER_BUILD.search(t):
            _error(out, "driver_build_failed", ln, "NVIDIA installer")
        elif ("load" in t or "Secure boot" in t) and (ld := _INSTALLER_LOAD.search(t)) is not None:
            key = ld.group(3) or (ld.group(2) and _KEY.search(ld.group(2)))
            _error(out, "driver_key_rejected" if key else "driver_insert_failed", ln, "NVIDIA installer")
        elif ("already be loaded" in t or "Nouveau kernel driver" in t) and _INSTALLER_LOADED.search(t):
            _error(out, "driver_install_blocked", ln, "NVIDIA installer")
        elif ("rror processing" in t or "FAILED" in t or "akmods" in t) and (p := _PACKAGE_FAILED.search(t)):
            _error(out, "driver_build_failed", ln, "dpkg" if p.group(1) else "akmods")
    for module, kernel in sorted(failed):
        out.notes.append(f"dkms: {module} failed to build for kernel {kernel}")


def _built_module(lines: list[Line], i: int) -> str | None:
    """The module a DKMS build error is about: its 'Consult …/make.log' line after it, else the dkms install or
    build command before it."""
    for ln in lines[i + 1:i + 3]:
        if (c := _DKMS_CONSULT.search(ln.text)) is not None:
            return f"{c.group(1)}/{c.group(2)}"
    for ln in reversed(lines[max(0, i - 12):i]):
        if (d := _DKMS_INSTALL.search(ln.text)) is not None:
            return f"{d.group(1)}/{d.group(2)}"
    return None


def _dkms_status(out: AppErrorsParse, ln: Line, s: re.Match[str]) -> None:
    module, version, kernel, state = s.group(1), s.group(2), s.group(3), s.group(5)
    if not _GPU_MODULE.match(module):
        return
    out.claimed.add(ln.no)
    out.notes.append(f"dkms status: {module} {version} {state}" + (f" for kernel {kernel}" if kernel else ""))
    if state == "added" and kernel is None:
        _error(out, "dkms_not_built", ln, "dkms")


def _running_kernel(lines: list[Line], dkms: list[Line], out: AppErrorsParse) -> None:
    """The kernel the capture says runs, said; where DKMS lists a GPU driver module installed for other kernels
    only, that kernel has none (the driver was not rebuilt after a kernel update)."""
    running = None
    for i, ln in enumerate(lines):
        if (a := _UNAME_A.match(ln.text)) is not None:
            running = a.group(1)
        elif i and _UNAME_CMD.search(lines[i - 1].text) and (r := _RELEASE.match(ln.text)) is not None:
            running = r.group(1)
        if running:
            out.claimed.add(ln.no)
            break
    if running is None:
        return
    out.notes.append(f"running kernel {running}")
    installed = [(m.group(1), m.group(3), ln) for ln in dkms if (m := _DKMS_STATUS.match(ln.text)) is not None
                 and m.group(3) and m.group(5).startswith("installed") and _GPU_MODULE.match(m.group(1))]
    if installed and running not in {k for _, k, _ in installed}:
        kernels = ", ".join(sorted({k for _, k, _ in installed}))
        out.errors.append(AppError("dkms_other_kernel", installed[0][2].no, f"dkms: {installed[0][0]} installed for "
                                   f"{kernels}, not for the running kernel {running}", None, "dkms"))


def _modinfo(lines: list[Line], out: AppErrorsParse) -> None:
    """modinfo's GPU driver module: its version and the kernel it was built for, said."""
    for i, ln in enumerate(lines):
        if "filename:" not in ln.text or (m := _MODINFO_FILE.match(ln.text)) is None:
            continue
        got = {f.group(1): f.group(2) for x in lines[i + 1:i + 12] if (f := _MODINFO_FIELD.match(x.text))}
        out.claimed |= {ln.no}
        if "version" in got:
            out.notes.append(f"modinfo: {m.group(1)} {got['version']}" +
                             (f" built for kernel {got['vermagic']}" if "vermagic" in got else ""))


def _module_loading(lines: list[Line], out: AppErrorsParse, gpu_words: Callable[[], bool]) -> None:
    """modprobe/insmod refusing a GPU driver module, udev's failed modprobe, nvidia-persistenced finding no
    device, and Secure Boot's state."""
    gpu_text = None
    for i, ln in enumerate(lines):
        t = ln.text
        if "insert" in t and (m := _INSERT.search(t)) is not None:
            kind = "driver_key_rejected" if _KEY.search(m.group(2)) else "driver_insert_failed"
            _error(out, kind, ln, "modprobe")
        elif "modprobe" in t and _UDEV_MODPROBE.search(t):
            _error(out, "driver_insert_failed", ln, "udev")
        elif ("rejected" in t or "restricted" in t) and _KEY.search(t):
            gpu_text = gpu_text if gpu_text is not None else gpu_words()
            if gpu_text:
                _error(out, "driver_key_rejected", ln, "kernel")
        elif "NVIDIA devices" in t and _PERSISTENCED_NONE.search(t):
            _error(out, "persistenced_no_devices", ln, "nvidia-persistenced")
        elif "ersistence" in t and _PERSISTENCED_FAILED.search(t):
            _error(out, "persistenced_failed", ln, "nvidia-persistenced")
        elif "Active: failed" in t and any(_PERSISTENCED_UNIT.search(x.text) for x in lines[max(0, i - 4):i]):
            _error(out, "persistenced_failed", ln, "systemctl")
        elif "ecure" in t and (sb := _SB_STATE.search(t)) is not None:
            out.claimed.add(ln.no)
            on = (sb.group(1) or sb.group(2) or sb.group(3) or "").lower() == "enabled"
            out.notes.append(f"Secure Boot {'enabled' if on else 'disabled'} (line {ln.no}): "
                             + ("a kernel module must be signed with an enrolled key to load" if on else
                                "unsigned modules may load"))


def _ubuntu_drivers(lines: list[Line], out: AppErrorsParse) -> None:
    """ubuntu-drivers' recommended package for each GPU it lists: said, never judged."""
    for g in _ud_gpus(lines):
        out.claimed.add(g.line.no)
        start = g.line.no
        block = [ln for ln in lines if start <= ln.no <= start + 30]
        for ln in block[1:]:
            if _UD_HEAD.match(ln.text):
                break
            if (f := _UD_FIELD.match(ln.text)) is not None:
                out.claimed.add(ln.no)
                if f.group(1) == "driver" and "recommended" in f.group(2):
                    out.notes.append(f"ubuntu-drivers: {g.vendor} {g.name} ({g.bus}): recommended "
                                     f"{f.group(2).split()[0]}")
