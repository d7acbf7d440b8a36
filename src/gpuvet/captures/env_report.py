"""What users paste to say what their machine's software stack has: PyTorch's and vLLM's collect_env (the classic
``Key: value`` lines and vLLM's sectioned ``Key   : value`` ones), the check_env of mmcv/sglang/lmdeploy
(``GPU 0,1: NVIDIA RTX A6000``, ``CUDA Driver Version``), the ``- Key: value`` bullets of transformers-cli,
diffusers-cli and accelerate env, DeepSpeed's ds_report (``torch cuda version ..... 12.1``), ``nvcc --version``,
nvidia-smi's bare header line, /proc/driver/nvidia/version with ``lsmod | grep nvidia``, and
``nvidia-container-cli info`` (its ``NVRM version`` and ``Device Index`` blocks, and its debug ``listing device``
lines, which name every bus id even where the blocks are cut).

Read: the GPUs named (model, bus id and UUID where printed), the driver and the CUDA it supports, the CUDA or ROCm
the framework was built for, and whether the framework says it can use a GPU. That answer is the one judgement:
a GPU build saying CUDA is not available is a finding, named from the report's own lines (a driver too old for
the build's CUDA, no driver and no GPU seen at all, or GPUs listed that the runtime still cannot use). A CPU-only
build (``+cpu``, ``No CUDA``) expects no GPU and is never a finding. A topology section (``GPU Topology:``) is
topo -m's and read by captures/topo.py."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from gpuvet.captures import rbt_agents
from gpuvet.captures.app_errors import AppErrorsParse
from gpuvet.captures.records import UNNAMED, AppError, ListedModule, ListedParse, SmiTextModule
from gpuvet.captures.smi_table import BANNER
from gpuvet.captures.smi_text import SmiText, bus
from gpuvet.captures.text import MAX_MODULES, Line

T = TypeVar("T")

# the report's own keys (lower case, blanks collapsed) -> the field each fills; each is in a line only such
# reports print, so any one of them makes the lines a report (the weaker keys below are read only then)
_STRONG = {
    "is cuda available": "available", "cuda available": "available", "gpu available": "available",
    "cuda used to build pytorch": "build_cuda", "rocm used to build pytorch": "build_rocm",
    "gpu models and configuration": "gpus", "nvidia driver version": "driver", "cuda driver version": "driver",
    "pytorch version (gpu?)": "torch_gpu", "pytorch version (accelerator?)": "torch_gpu", "nvrm version": "nvrm",
    "torch cuda version": "build_cuda", "nvidia-smi version": "",  # nvidia-smi --version (its DRIVER/CUDA: weak keys)
    "hip_platform": "",  # hipconfig --full's (its 'HIP version' line: a weak key)
}
_WEAK = {
    "pytorch version": "torch", "pytorch": "torch", "cuda runtime version": "runtime", "hip runtime version": "hip",
    "nvcc": "nvcc", "nvcc version": "nvcc", "gpu type": "gpus", "driver version": "driver", "torch hip version":
    "build_rocm", "cuda version": "driver_cuda", "vllm version": "", "rocm version": "", "miopen runtime version": "",
    "neuron sdk version": "", "cudnn version": "", "cuda_module_loading set to": "", "cuda_home": "",
    "torch version": "torch", "nvml version": "", "hip version": "hip",
}
_COLLECT, _CHECK, _HF = "PyTorch collect_env", "check_env (mmcv/sglang/lmdeploy)", "transformers/diffusers/accelerate env"
# the keys, as printed, that name the report's tool: each is one of formats.py's markers (a text without one of
# them is no report; the values of the keys above are read in any case once one is there)
_TOOLS = {"Is CUDA available": _COLLECT, "CUDA used to build PyTorch": _COLLECT, "ROCM used to build PyTorch": _COLLECT,
          "GPU models and configuration": _COLLECT, "Nvidia driver version": _COLLECT, "vLLM Version": "vLLM collect_env",
          "CUDA available": _CHECK, "CUDA Driver Version": _CHECK, "PyTorch version (GPU?)": _HF, "GPU type": _HF,
          "PyTorch version (accelerator?)": _HF,
          "torch cuda version": "ds_report", "GPU available": "detectron2 collect_env",
          "NVRM version": "nvidia-container-cli info", "NVIDIA-SMI version": "nvidia-smi --version",
          "HIP_PLATFORM": "hipconfig --full"}
TOOLS = {*_TOOLS.values(), "nvcc --version", "nvidia-smi header line", "/proc/driver/nvidia/version", "lsmod"}
_LISTS = {_COLLECT, _CHECK, "vLLM collect_env", "detectron2 collect_env"}  # the reports that list 'GPU 0: …'
# nvidia-container-cli info's device block: read after its 'Device Index:' line only (a CPU section has 'Model:')
_BLOCK = {"device index": "index", "device minor": "", "model": "name", "brand": "", "gpu uuid": "uuid",
          "bus location": "bus", "architecture": "arch"}
_KEY = re.compile(r"^(?:[-*]\s+)?`?([A-Za-z][\w ()?/.-]{0,48}?)`?\s*(?::|\s\.{3,})\s*(.*)$")
# collect_env's, check_env's ('GPU 0,1: …') and detectron2's ('GPU 0   …') model lines
_GPU_LINE = re.compile(r"^GPU (\d{1,3}(?:,\s?\d{1,3})*)(?:\s*:|\s{2,})\s*(\S.*)$")
_D2 = re.compile(r"^(GPU available|Driver version|PyTorch)\s{2,}(\S.*)$")  # detectron2's table (tabulate, no colons)
_LISTING = re.compile(r"listing device (\S+) \((GPU-[0-9a-fA-F-]{8,}|\(null\)) at ([0-9a-fA-F:.]{7,16}|\(null\))\)")
_NVCC = re.compile(r"Cuda compilation tools, release (\d+\.\d+), V(\d+\.\d+\.\d+)")
_NVCC_OTHER = ("nvcc: NVIDIA (R) Cuda compiler driver", "Copyright (c)", "Built on ", "Build cuda_")
_PROC = re.compile(r"NVIDIA UNIX (Open )?(?:\S+ )?Kernel Module(?: for \S+)?\s+(\d+\.\d+(?:\.\d+)?)")
_LSMOD = re.compile(r"^(nvidia(?:_\w+)?)\s+\d+\s+\d+")
_DRIVER = re.compile(r"^\d{3}\.\d{2,3}(?:\.\d{2})?$")
_VERSION = re.compile(r"^\d+(?:\.\d+)+")
_CLI_INFO = re.compile(r"(?:^|[\s$#>])nvidia-container-cli(?:\s+-{1,2}[\w=-]{1,40}){0,6}\s+info\s*$")
_CAPABILITY = re.compile(r"\d{1,2}\.\d{1,2}")  # a compute capability: major.minor
_WHEEL = re.compile(r"\+(cu|rocm)(\d+(?:\.\d+)*)|\+(cpu)\b")
_AMD = re.compile(r"\b(?:AMD|Radeon|Instinct)\b|\(gfx\w|^Device [0-9a-f]{4}$")
_GFX = re.compile(r"\s*\(gfx\w*(?::[\w+-]*)*\)\s*$")  # a ROCm device name's ISA ('(gfx908:sramecc+:xnack-)')
_AMD_TOOLS = ("System Management Interface", "Weight between", "AMD SMI", "amd-smi", "GPU[")  # their own lines
_TRUE, _FALSE = {"true", "yes"}, {"false", "no"}

# the oldest Linux driver branch that runs each CUDA major (NVIDIA's CUDA compatibility table; a newer minor of
# the same major runs on it by minor-version compatibility from CUDA 11 on)
_MIN_DRIVER = {9: 384, 10: 410, 11: 450, 12: 525, 13: 580}


@dataclass
class Gpu:
    """One GPU the report names: its model, and what a container-cli block adds."""

    name: str
    bus: str | None = None
    uuid: str | None = None
    arch: str | None = None
    minor: str | None = None  # container-cli's 'Device Minor': its /dev/nvidiaN (R5C)


@dataclass
class Report:
    """What one environment report says; None where it says nothing (or 'Could not collect')."""

    tools: list[str] = field(default_factory=list)
    gpus: list[Gpu] = field(default_factory=list)
    values: dict[str, str] = field(default_factory=dict)  # driver, driver_cuda, build_cuda, build_rocm, runtime, …
    available: tuple[bool, Line] | None = None
    loaded: list[str] = field(default_factory=list)  # lsmod's nvidia modules
    open_module: bool = False
    no_module: Line | None = None  # 'cat: /proc/driver/nvidia/version: No such file or directory'
    claimed: set[int] = field(default_factory=set)

    def tool(self, name: str) -> None:
        if name not in self.tools:
            self.tools.append(name)


def read(lines: list[Line]) -> Report:
    """The report in the lines (empty where they hold none of its keys)."""
    out = Report()
    listed: list[tuple[str, str | None, str]] = []  # container-cli's debug lines: (uuid, bus, device node)
    block: Gpu | None = None
    loose: list[tuple[int, list[Gpu]]] = []  # 'GPU 0: …' lines: a collect_env's or check_env's only beside its keys
    agents = rbt_agents.index_lines(lines)  # rocm-bandwidth-test's 'Device Index:' blocks, not container-cli's
    for ln in lines:
        text = ln.text.strip()
        if not text:
            block = None
            continue
        if (g := _GPU_LINE.match(text)) is not None and "(UUID:" not in text:
            loose.append((ln.no, [Gpu(_gpu_name(g.group(2))) for _ in g.group(1).split(",")]))
            continue
        if _special(ln, text, out, listed):
            block = None
            continue
        k = _KEY.match(text)
        if k is None:
            block = None
            continue
        printed, value = " ".join(k.group(1).split()), k.group(2).strip().strip("`").strip()
        key = printed.lower()
        if key in _BLOCK and (block is not None or (printed == "Device Index" and ln.no not in agents)):
            block = _block(key, value, block, out)
            out.claimed.add(ln.no)
            continue
        block = None
        what = _STRONG.get(key, _WEAK.get(key))
        if what is None:
            continue
        out.claimed.add(ln.no)
        if printed in _TOOLS and (printed != "CUDA Driver Version" or _DRIVER.match(value)):
            out.tool(_TOOLS[printed])  # (nvbandwidth's 'CUDA Driver Version: 12080' is no check_env's driver)
        _value(what, value, ln, out)
    if not out.tools:
        return Report()  # weak keys alone (an nvidia-smi -q's 'Driver Version', lsmod's lines) are no report
    if out.loaded:
        out.tool("lsmod")
    if "nvidia-container-cli info" in out.tools:  # issue 46 (BJ): the command line above its answer is read too
        out.claimed |= {ln.no for ln in lines if "container-cli" in ln.text and _CLI_INFO.search(ln.text)}
    if set(out.tools) & _LISTS:
        out.gpus += [g for _, gpus in loose for g in gpus]
        out.claimed |= {no for no, _ in loose}
    _place(listed, out)
    for build in ("cuda", "rocm"):  # the build lines said it; else the wheel's tag
        if f"wheel_{build}" in out.values:
            out.values.setdefault(f"build_{build}", out.values.pop(f"wheel_{build}"))
    out.gpus = out.gpus[:MAX_MODULES]
    return out


def _special(ln: Line, text: str, out: Report, listed: list[tuple[str, str | None, str]]) -> bool:
    """The lines that are no ``Key: value``: nvcc's, nvidia-smi's bare header, /proc's, lsmod's, container-cli's
    debug listing. True where the line was one of them."""
    if (c := _NVCC.search(text)) is not None:
        out.values.setdefault("nvcc", c.group(2))
        out.tool("nvcc --version")
    elif text.startswith(_NVCC_OTHER):  # nvcc's other lines (kept only beside a report's own)
        pass
    elif (h := BANNER.match(text)) is not None:  # nvidia-smi's banner line alone, from its start
        out.values.setdefault("driver", h.group(2))
        if h.group(3) and _VERSION.match(h.group(3)):
            out.values.setdefault("driver_cuda", h.group(3))
        out.tool("nvidia-smi header line")
    elif "NVRM version" in text and (p := _PROC.search(text)) is not None:
        out.values.setdefault("driver", p.group(2))
        out.open_module = bool(p.group(1))
        out.tool("/proc/driver/nvidia/version")
    elif "/proc/driver/nvidia/version" in text and "No such file" in text:  # the file is there while the module is
        out.no_module = out.no_module or ln
        out.tool("/proc/driver/nvidia/version")
    elif text.startswith("GCC version:") and "/proc/driver/nvidia/version" in out.tools:
        pass
    elif (t := _D2.match(text)) is not None:  # detectron2's 'GPU available  No: torch.cuda.is_available() == False'
        if t.group(1) == "GPU available" and t.group(2).startswith(("Yes", "No")):
            out.available = out.available or (t.group(2).startswith("Yes"), ln)
            out.tool("detectron2 collect_env")
        elif t.group(1) == "Driver version" and _VERSION.match(t.group(2)):
            out.values.setdefault("driver", t.group(2).split()[0])
        _wheel(t.group(2), out)
    elif (m := _LSMOD.match(text)) is not None:
        out.loaded.append(m.group(1))
    elif "listing device" in text and (d := _LISTING.search(text)) is not None:
        listed.append((d.group(2), None if d.group(3) == "(null)" else d.group(3), d.group(1)))
        out.tool("nvidia-container-cli info")
    else:
        return False
    out.claimed.add(ln.no)
    return True


def _value(what: str, value: str, ln: Line, out: Report) -> None:
    """One key's value kept."""
    low = value.lower()
    if what == "available":
        if low in _TRUE | _FALSE:
            out.available = out.available or (low in _TRUE, ln)
    elif what == "torch_gpu":  # '1.12.1+cu116 (False)'; newer: '2.9.1+cu128 (CUDA)', '(NA)' where none
        if (a := re.search(r"\((\w+)\)\s*$", value)) is not None:
            out.available = out.available or (a.group(1).lower() not in ("false", "na", "none", "cpu"), ln)
        _wheel(value, out)
    elif what == "torch":
        _wheel(value, out)
    elif what == "nvrm":  # container-cli's, else /proc's line read by _special
        if _VERSION.match(value):
            out.values.setdefault("driver", value)
    elif what == "gpus":
        if value and not low.startswith(("could not", "no cuda", "n/a", "none")):  # one GPU after the colon
            out.gpus.append(Gpu(_gpu_name(g.group(2) if (g := _GPU_LINE.match(value)) else value)))
    elif what == "nvcc" and (c := re.search(r"V(\d+\.\d+\.\d+)|^(\d+\.\d+)", value)) is not None:
        out.values.setdefault("nvcc", c.group(1) or c.group(2))
    elif what and (v := _VERSION.match(value)) is not None:
        out.values.setdefault(what, v.group(0))
    elif what.startswith("build_") and low in ("none", "n/a", "could not collect", "no cuda"):
        out.values.setdefault(what + "_none", value)


def _wheel(value: str, out: Report) -> None:
    """A torch version's local tag: '+cu116' is a CUDA 11.6 build, '+rocm6.3' a ROCm one, '+cpu' none."""
    if (w := _WHEEL.search(value)) is None:
        return
    if w.group(3):
        out.values.setdefault("cpu_build", value)
    elif w.group(1) == "cu" and len(digits := w.group(2)) >= 3 and "." not in digits:
        out.values.setdefault("wheel_cuda", f"{digits[:-1]}.{digits[-1]}")
    elif w.group(1) == "rocm":
        out.values.setdefault("wheel_rocm", w.group(2))


def _block(key: str, value: str, block: Gpu | None, out: Report) -> Gpu | None:
    """A container-cli device block's line: 'Device Index:' opens a GPU, the rest fill it."""
    value = "" if value == "(null)" else value
    if key == "device index":
        out.gpus.append(block := Gpu(""))
        out.tool("nvidia-container-cli info")
        return block
    assert block is not None
    if key == "model":
        block.name = value
    elif key == "gpu uuid":
        block.uuid = value or None
    elif key == "bus location":
        block.bus = value or None
    elif key == "architecture":
        block.arch = value or None
    elif key == "device minor":
        block.minor = value or None
    return block


def _place(listed: list[tuple[str, str | None, str]], out: Report) -> None:
    """container-cli's debug lines give each GPU's bus id: a block cut before its bus takes it by UUID, or before
    its UUID too by its 'Device Minor' (/dev/nvidiaN, R5C), and a GPU whose block was cut away altogether is listed
    by its bus id alone."""
    by_uuid = {u: b for u, b, _ in listed}
    by_node = {node: (u, b) for u, b, node in listed}
    for g in out.gpus:
        g.bus = g.bus or by_uuid.get(g.uuid or "")
        if g.bus is None and g.uuid is None and (hit := by_node.get(f"/dev/nvidia{g.minor}")) is not None:
            g.uuid, g.bus = hit[0] if hit[0].startswith("GPU-") else None, hit[1]
    named = {g.uuid for g in out.gpus} | {g.bus for g in out.gpus}
    out.gpus += [Gpu("", b, u) for u, b, _ in listed if b and u not in named and b not in named]


def _gpu_name(text: str) -> str:
    """collect_env's model as printed, without a trailing '(UUID: …)' (detectron2's '(arch=8.6)')."""
    return re.sub(r"\s*\((?:UUID: |arch=)[^)]*\)\s*$", "", text).strip()


def _amd(out: Report) -> bool:
    return bool(out.gpus) and ("build_rocm" in out.values or all(_AMD.search(g.name) for g in out.gpus))


def listing(lines: list[Line]) -> SmiText:
    """The NVIDIA GPUs the report names, the driver and the CUDA versions it gives, as a module list (used where no
    other list in the file gives one); none for a ROCm build's AMD GPUs (``amd``)."""
    rep = read(lines)
    out = SmiText(driver=rep.values.get("driver"), cuda=rep.values.get("driver_cuda"),
                  cuda_runtime=rep.values.get("build_cuda") or rep.values.get("runtime") or rep.values.get("nvcc"))
    if _amd(rep):
        return out
    for n, g in enumerate(rep.gpus, 1):
        fields = {"Product Name": g.name} if g.name else {}
        fields |= {"GPU UUID": g.uuid} if g.uuid else {}
        # issue 46 (BJ): container-cli's 'Architecture: 6.1' is the compute capability (libnvidia-container's info)
        fields |= {"Compute Capability": g.arch} if g.arch and _CAPABILITY.fullmatch(g.arch) else {}
        out.modules.append(SmiTextModule(bus(g.bus) if g.bus else f"{UNNAMED} #{n}", g.name, fields))
    return out


def amd(lines: list[Line]) -> ListedParse | None:
    """A ROCm build's AMD GPUs, as the AMD tools' modules; None where the report names none."""
    rep = read(lines)
    if not _amd(rep) or any(w in ln.text for ln in lines for w in _AMD_TOOLS):
        return None  # rocm-smi's or amd-smi's output beside it (vLLM's 'GPU Topology:') lists every GPU
    out = ListedParse(modules=[ListedModule(f"GPU {i}", _GFX.sub("", g.name), bus(g.bus) if g.bus else None)
                               for i, g in enumerate(rep.gpus)], kinds=list(rep.tools))
    out.notes.append("a ROCm build's collect_env names the model of the current device only, not how many the node has")
    return out


def _summary(rep: Report) -> str:
    v = rep.values
    said = [f"{len(rep.gpus)} GPU(s) named" if rep.gpus else "no GPU named"]
    said += [f"{label} {v[k]}" for k, label in (("driver", "driver"), ("driver_cuda", "driver's CUDA"),
                                                ("build_cuda", "CUDA build"), ("build_rocm", "ROCm build"),
                                                ("runtime", "CUDA runtime"), ("hip", "HIP runtime"), ("nvcc", "nvcc"))
             if k in v]
    said += ["open kernel module"] if rep.open_module else []
    said += [f"modules loaded: {', '.join(rep.loaded)}"] if rep.loaded else []
    if rep.available is not None:
        said.append(f"GPU usable by the framework: {'yes' if rep.available[0] else 'no'}")
    return f"{' + '.join(rep.tools)}: {'; '.join(said)}"


@dataclass
class EnvFaults(AppErrorsParse):
    """The report's one judgement as an application error line (doctor's capture_errors), and the tools it was."""

    kinds: list[str] = field(default_factory=list)


def faults(lines: list[Line]) -> EnvFaults:
    """A GPU build saying it cannot use a GPU, as one error line; the report's lines claimed, its summary noted."""
    rep = read(lines)
    out = EnvFaults(claimed=set(rep.claimed), kinds=list(rep.tools))
    if not rep.tools:
        return out
    out.notes.append(_summary(rep))
    if rep.no_module is not None and "driver" not in rep.values:
        out.errors.append(AppError("env_no_driver", rep.no_module.no, f"{rep.no_module.text.strip()[:160]} (the NVIDIA "
                                   "kernel module is not loaded: the file exists only while it is)", tool=rep.tools[0]))
    if rep.available is None or rep.available[0]:
        return out
    kind, why = _unusable(rep)
    line = rep.available[1]
    if kind is None:
        out.notes.append(f"{line.text.strip()[:120]}: {why}")
        return out
    out.errors.append(AppError(kind, line.no, f"{line.text.strip()[:160]} ({why})", tool=rep.tools[0]))
    return out


def _unusable(rep: Report) -> tuple[str | None, str]:
    """Why a framework says it cannot use a GPU, from the report's own lines; (None, why) where no GPU is expected."""
    v = rep.values
    build = f"CUDA {v['build_cuda']}" if "build_cuda" in v else f"ROCm {v['build_rocm']}" if "build_rocm" in v else ""
    if not build and ("cpu_build" in v or "build_cuda_none" in v):
        return None, "a CPU-only build: it expects no GPU"
    drv, drv_cuda = v.get("driver"), v.get("driver_cuda")
    if "build_cuda" in v and (old := _too_old(v["build_cuda"], drv, drv_cuda)):
        return "env_driver_too_old", old
    if not build and not rep.gpus and not drv:
        return None, "the report names no GPU build, no GPU and no driver: whether it expects a GPU is not said"
    build = build or "GPU"
    if not rep.gpus and not drv:
        return "env_no_device", (f"a {build} build; the report names no GPU and no driver: no device is visible to "
                                 "the runtime (driver not installed or not loaded, or no GPU passed in)")
    named = f"{len(rep.gpus)} GPU(s)" if rep.gpus else "no GPU"
    return "env_gpus_unusable", (f"a {build} build; the report names {named} and driver {drv or 'not given'}, whose "
                                 "CUDA runs it: the runtime cannot reach them (hidden by CUDA_VISIBLE_DEVICES or a "
                                 "container, or a broken install)")


def _too_old(build: str, driver: str | None, driver_cuda: str | None) -> str | None:
    """Why the driver cannot run the build's CUDA major, where the report's versions say so."""
    major = int(build.split(".")[0])
    if driver_cuda and _VERSION.match(driver_cuda) and int(driver_cuda.split(".")[0]) < major:
        return f"the driver's CUDA {driver_cuda} is older than the build's CUDA {build}: driver/runtime mismatch"
    branch = int(driver.split(".")[0]) if driver and _VERSION.match(driver) else None
    if not driver_cuda and branch is not None and major in _MIN_DRIVER and branch < _MIN_DRIVER[major]:
        return (f"driver {driver} is older than the {_MIN_DRIVER[major]} branch CUDA {major}.x needs (the build's CUDA "
                f"{build}): driver/runtime mismatch")
    return None


def parsed(lines: list[Line], made: Callable[..., T]) -> T:
    """formats.py's parse of the report, made by its ``Parsed``: its tools named, its lines claimed, its judgement
    (None where the lines hold no report)."""
    got = faults(lines)
    return made(got if got.kinds else None, got.claimed, kinds=tuple(got.kinds))


def alone(kinds: list[str], listed: SmiText) -> bool:
    """A report's versions alone are the file's module list only where the report is all the file holds (a
    benchmark's device lines list the modules better)."""
    return bool(listed.driver) and set(kinds) <= TOOLS
