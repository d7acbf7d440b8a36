"""The GPUs an inference runtime or a compute API lists as it starts, as users paste them (issue 46): llama.cpp's
ggml backends (``ggml_cuda_init: found 2 CUDA devices:`` then ``Device 0: NVIDIA GeForce RTX 3090, compute
capability 8.6, VMM: yes``; ROCm's ``Device 0: AMD Radeon RX 7900 XTX, gfx1100 (0x1100), VMM: no``; Vulkan's
``ggml_vulkan: 0 = NAME (driver) | uma: 0 | …``; ``--list-devices``' ``CUDA0: NAME (24080 MiB, 23000 MiB free)``
and the loader's ``using device CUDA0 (NAME) - 23040 MiB free``), ollama's ``msg="inference compute"`` key=value
line, TensorFlow's ``Found device 0 with properties`` (1.x and 2.x spellings), ``clinfo`` (long form and ``-l``),
``hashcat -I`` and hashcat's ``* Device #1: NAME, 23336/24259 MB`` list, and ``vulkaninfo`` (``--summary``'s
GPU blocks). Only what a line prints is kept; a CPU device (pocl, llvmpipe, ollama's library=cpu) is not a GPU.
What the runtime says went wrong (no device, a library not loaded) is captures/runtime_status.py's."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from gpuvet.captures.text import MAX_MODULES, Line

_NVIDIA = re.compile(r"\b(?:NVIDIA|Tesla|Quadro|GeForce|TITAN|Titan|RTX)\b")
_AMD = re.compile(r"\b(?:AMD|Radeon|Instinct|FirePro|gfx\d{3,4}|Vega|Navi|Advanced Micro Devices)\b|\bATI\b")
_INTEL = re.compile(r"\b(?:Intel|Arc)\b")
_VENDOR_IDS = {"0x10de": "NVIDIA", "0x1002": "AMD", "0x8086": "Intel", "0x106b": "Apple"}  # PCI vendor ids


@dataclass(frozen=True)
class RuntimeDevice:
    """One GPU as a runtime's own line names it: what it printed, None for the rest."""

    tool: str  # the program that printed it: "llama.cpp (CUDA)", "ollama", "TensorFlow", "clinfo", …
    index: str  # as the tool numbers it ("0", "CUDA0", "#1")
    name: str
    line: int
    vendor: str | None = None  # NVIDIA, AMD, Intel, Apple: from the backend, a vendor id or the name
    bus_id: str | None = None
    memory_mib: float | None = None
    compute: str | None = None  # CUDA compute capability or the AMD gfx target
    driver: str | None = None
    uuid: str | None = None
    compute_units: int | None = None  # R14C: clinfo's 'Max compute units' (AMD CUs, NVIDIA SMs)
    vmm: str | None = None  # FX68D: ggml's 'VMM: yes' (CUDA virtual memory management in use), as printed
    library: str | None = None  # FX68D: ollama's library and variant ('cuda v12'), the runner it will load
    free_mib: float | None = None  # FX68D: what the runtime says is free ('11053 MiB free', ollama's available=)


def vendor_of(name: str, backend: str = "") -> str | None:
    """The vendor a backend (CUDA, ROCm/HIP) or a name says; None where neither does."""
    low = backend.lower()
    if low in ("cuda", "nvidia", "cuda_v11", "cuda_v12", "cuda_v13") or _NVIDIA.search(name):
        return "NVIDIA"
    if low in ("rocm", "hip") or _AMD.search(name):
        return "AMD"
    if "apple" in name.lower():
        return "Apple"
    return "Intel" if _INTEL.search(name) else None


_MEM_UNITS = {"b": 1 / 2**20, "kb": 1 / 1024, "kib": 1 / 1024, "mb": 1.0, "mib": 1.0, "gb": 1024.0, "gib": 1024.0,
              "tb": 2**20, "tib": 2**20}
_MEM = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*([KMGT]i?B|B)\b", re.I)


def mib(text: str | None) -> float | None:
    """A memory size as printed ('23.6 GiB', '24080 MiB', '8176 MB') in MiB; None where none is printed."""
    m = _MEM.search(text or "")
    return round(float(m.group(1)) * _MEM_UNITS[m.group(2).lower()], 1) if m else None


# llama.cpp's ggml backends: the init header, each device's line, the Vulkan list, --list-devices and the loader
_GGML_HEAD = re.compile(r"ggml_(?:cuda_init|init_cublas|cuda_init_impl): found (\d+) (CUDA|ROCm|MUSA) devices")
_GGML_DEV = re.compile(r"(?:^|[|:\]]\s)\s*Device (\d{1,3}): ([^,]*), "
                       r"(?:compute capability (\d+\.\d+)|(gfx\w+)(?: \(0x[0-9a-f]+\))?)"
                       r"(?:, VMM: \w+)?(?:.*?\bVRAM: (\d+) MiB)?(?:.*?\bID: (\S+))?")
_VMM = re.compile(r", VMM: (yes|no)\b")
_GGML_VULKAN = re.compile(r"ggml_vulkan: (\d{1,3}) = (.+?)(?: \(([^()|]*)\))? \| uma: (\d)")
_GGML_LISTED = re.compile(r"(?:^|[|:\]]\s)\s*(CUDA|ROCm|Vulkan|SYCL|MUSA|CANN|HIP)(\d{1,3}): (.+?) "
                          r"\((\d+) MiB, (\d+) MiB free\)")
_GGML_USING = re.compile(r"using device (CUDA|ROCm|Vulkan|SYCL|MUSA|HIP)(\d{1,3}) \((.+?)\)(?: \(([0-9a-fA-F:.]+)\))?"
                         r"(?: - (\d+) MiB free)?")


def _ggml(ln: Line, backend: str) -> RuntimeDevice | None:
    """One ggml device line; ``backend``: the library the last init header named (CUDA, ROCm)."""
    t = ln.text
    if (d := _GGML_DEV.search(t)) is not None:
        name = d.group(2).strip() or f"unnamed {backend or 'GPU'} device"  # ROCm builds of 2024 printed no name
        return RuntimeDevice(f"llama.cpp ({backend or 'CUDA'})", d.group(1), name, ln.no,
                             vendor_of(name, backend or ("ROCm" if d.group(4) else "CUDA")),
                             memory_mib=float(d.group(5)) if d.group(5) else None, compute=d.group(3) or d.group(4),
                             uuid=d.group(6) if d.group(6) and d.group(6).startswith("GPU-") else None,
                             vmm=v.group(1) if (v := _VMM.search(t, d.start())) else None)
    if (v := _GGML_VULKAN.search(t)) is not None:
        return RuntimeDevice("llama.cpp (Vulkan)", v.group(1), v.group(2).strip(), ln.no, vendor_of(v.group(2)),
                             driver=v.group(3))
    if (li := _GGML_LISTED.search(t)) is not None:
        return RuntimeDevice(f"llama.cpp ({li.group(1)})", f"{li.group(1)}{li.group(2)}", li.group(3).strip(), ln.no,
                             vendor_of(li.group(3), li.group(1)), memory_mib=float(li.group(4)),
                             free_mib=float(li.group(5)))
    if (u := _GGML_USING.search(t)) is not None:
        return RuntimeDevice(f"llama.cpp ({u.group(1)})", f"{u.group(1)}{u.group(2)}", u.group(3).strip(), ln.no,
                             vendor_of(u.group(3), u.group(1)), bus_id=u.group(4),
                             free_mib=float(u.group(5)) if u.group(5) else None)
    return None


# ollama's server log: one key=value line per GPU it will run on (library=cpu: none)
_OLLAMA = re.compile(r'msg="?inference compute"?')
_KV = re.compile(r'(\w[\w.]*)=("(?:[^"\\]|\\.)*"|\S+)')


def _ollama(ln: Line) -> RuntimeDevice | None:
    if _OLLAMA.search(ln.text) is None:
        return None
    kv = {k: v.strip('"') for k, v in _KV.findall(ln.text)}
    library = kv.get("library", "")
    name = kv.get("description") or kv.get("name") or ""
    if library.lower() == "cpu" or not name or re.fullmatch(r"(?:CUDA|ROCm|Vulkan)\d+", name) and "description" not in kv:
        return None
    if re.fullmatch(r"[0-9a-f]{4}:[0-9a-f]{4}", name, re.I):  # ollama 0.5 names an AMD GPU by its PCI ids
        name = f"{_VENDOR_IDS.get('0x' + name[:4].lower(), 'GPU')} GPU {name}" + (f" ({kv['compute']})" if kv.get(
            "compute") else "")
    return RuntimeDevice("ollama", kv.get("id", "?"), name, ln.no, vendor_of(name, library), kv.get("pci_id"),
                         mib(kv.get("total")), kv.get("compute") or None, kv.get("driver") or None,
                         kv["id"] if kv.get("id", "").startswith("GPU-") else None, free_mib=mib(kv.get("available")),
                         library=" ".join(kv[k] for k in ("library", "variant") if kv.get(k)) or None)


# TensorFlow's 'Found device N with properties:' (1.x: 'name: … major: 6 minor: 1 …' then 'pciBusID: …'; 2.x:
# 'pciBusID: … name: … computeCapability: 8.9' on the next line)
_TF_FOUND = re.compile(r"Found device (\d{1,3}) with properties")
_TF2 = re.compile(r"pciBusID: ([0-9a-fA-F:.]+) name: (.+?) computeCapability: (\d+\.\d+)")
_TF1 = re.compile(r"\bname: (.+?) major: (\d+) minor: (\d+)")
_TF1_BUS = re.compile(r"pciBusID:? ([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])")


_TF_CREATED = re.compile(r"Created (?:TensorFlow )?device \(?/job:\S+ with (\d+) MB memory\)?:?\s+-> (?:physical GPU \()?"
                         r"device: (\d{1,3}), name: ([^,]+), pci bus id: ([0-9a-fA-F:.]+)"
                         r"(?:, compute capability: (\S+?)\)?$)?")


def _tensorflow(lines: list[Line], i: int) -> RuntimeDevice | None:
    """The device TF's 'Created device' line or 'Found device' block at ``i`` names (a block's properties on
    this line or the next two)."""
    if (c := _TF_CREATED.search(lines[i].text)) is not None:
        return RuntimeDevice("TensorFlow", c.group(2), c.group(3).strip(), lines[i].no, vendor_of(c.group(3)),
                             c.group(4), float(c.group(1)), c.group(5))
    if (f := _TF_FOUND.search(lines[i].text)) is None:
        return None
    near = " ".join(ln.text for ln in lines[i:i + 3])
    if (t2 := _TF2.search(near)) is not None:
        return RuntimeDevice("TensorFlow", f.group(1), t2.group(2).strip(), lines[i].no, vendor_of(t2.group(2)),
                             t2.group(1), compute=t2.group(3))
    if (t1 := _TF1.search(near)) is not None:
        bus = _TF1_BUS.search(near)
        return RuntimeDevice("TensorFlow", f.group(1), t1.group(1).strip(), lines[i].no, vendor_of(t1.group(1)),
                             bus.group(1) if bus else None, compute=f"{t1.group(2)}.{t1.group(3)}")
    return None


_BACKEND_INDEX = re.compile(r"^(?:CUDA|ROCm|Vulkan|SYCL|MUSA|CANN|HIP)(?=\d{1,3}$)")
_FILLED = ("vendor", "bus_id", "memory_mib", "compute", "driver", "uuid", "compute_units", "vmm", "free_mib")


def _same(d: RuntimeDevice) -> tuple[str, str]:
    """The key one device has on every line of its tool: ggml's 'Device 0:' and its loader's 'using device CUDA0'
    are one GPU (FX68D: the backend's number is the init list's), so llama.cpp's backend prefix is dropped."""
    return d.tool, _BACKEND_INDEX.sub("", d.index) if d.tool.startswith("llama.cpp") else d.index


def _named(devices: list[RuntimeDevice]) -> list[RuntimeDevice]:
    """Each device once: by its tool and index (a log repeats its start-up), the first line kept and what a later
    line of the same device adds (the loader's free memory beside the init list's compute capability) filled in."""
    seen: dict[tuple[str, str], RuntimeDevice] = {}
    for d in devices:
        if (first := seen.get(key := _same(d))) is None:
            seen[key] = d
        elif more := {f: getattr(d, f) for f in _FILLED if getattr(first, f) is None and getattr(d, f) is not None}:
            seen[key] = replace(first, **more)
    return list(seen.values())[:MAX_MODULES]


# ComfyUI's start-up ('Total VRAM 24564 MB, total RAM …' then 'Device: cuda:0 NVIDIA GeForce RTX 4090 : cudaMallocAsync')
_COMFY = re.compile(r"^\s*Device: (cuda|rocm|xpu):?(\d{0,3}) (.+?)(?: : \w+)?\s*$")
_COMFY_VRAM = re.compile(r"^\s*Total VRAM (\d+) MB")


def _comfy(lines: list[Line], i: int) -> RuntimeDevice | None:
    """The device ComfyUI says it runs on, with the VRAM its line before gives."""
    if (c := _COMFY.match(lines[i].text)) is None:
        return None
    vram = next((float(v.group(1)) for ln in lines[max(0, i - 3):i] if (v := _COMFY_VRAM.match(ln.text))), None)
    return RuntimeDevice("ComfyUI", c.group(2) or "0", c.group(3).strip(), lines[i].no, vendor_of(c.group(3)),
                         memory_mib=vram)  # by its name: a ROCm build of PyTorch says 'cuda' too


# the mining programs' device lists at start-up: T-Rex's '+ GPU #0: [00:01.0|1f06] MSI GeForce RTX 3060 Ti, 8192 MB'
# (its bus and device id), PhoenixMiner's 'GPU1: NVIDIA GeForce RTX 3060 Ti (pcie 1), CUDA cap. 8.6, 8 GB VRAM, 38 CUs'
_TREX = re.compile(r"\+ GPU #(\d{1,2}): \[([0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])(?:\|[0-9a-fA-F]{4})?\] (.+?), (\d+) MB\b")
_PHOENIX = re.compile(r"\bGPU(\d{1,2}): (.+?) \(pcie \d{1,3}\), (?:CUDA cap\. (\d+\.\d+)|OpenCL [\d.]+), "
                      r"(\d+(?:\.\d+)?) GB VRAM\b")


def _miner(ln: Line) -> RuntimeDevice | None:
    """One card of a miner's start-up list (only what it prints: PhoenixMiner's 'pcie N' is not a full bus id)."""
    if (t := _TREX.search(ln.text)) is not None:
        return RuntimeDevice("T-Rex", f"#{t.group(1)}", t.group(3).strip(), ln.no, vendor_of(t.group(3), "CUDA"),
                             f"0000:{t.group(2)}", float(t.group(4)))
    if (p := _PHOENIX.search(ln.text)) is not None:
        return RuntimeDevice("PhoenixMiner", p.group(1), p.group(2).strip(), ln.no, vendor_of(p.group(2)),
                             memory_mib=float(p.group(4)) * 1024, compute=p.group(3))
    return None


_ANCHORS = ("Device ", "Device:", "ggml_", "MiB free", "inference compute", "with properties", "using device", "Created ",
            "+ GPU #", "GB VRAM")


def runtime_lines(lines: list[Line]) -> tuple[list[RuntimeDevice], set[int]]:
    """The GPUs llama.cpp, ollama and TensorFlow's lines name, once each, and the lines read (the init
    headers and TensorFlow's property lines with them)."""
    found: list[RuntimeDevice] = []
    claimed: set[int] = set()
    backend = ""
    for i, ln in enumerate(lines):
        if not any(a in ln.text for a in _ANCHORS):
            continue
        if (h := _GGML_HEAD.search(ln.text)) is not None:
            backend = h.group(2)
            claimed.add(ln.no)
            continue
        d = _ggml(ln, backend) or _ollama(ln) or _tensorflow(lines, i) or _comfy(lines, i) or _miner(ln)
        if d is not None:
            found.append(d)
            claimed.add(ln.no)
            claimed.update(x.no for x in lines[i + 1:i + 3] if d.tool == "TensorFlow" and "pciBusID" in x.text)
    return _named(found), claimed



@dataclass
class LogFacts:
    """FX68D: what a model server's start-up log says (vLLM, Triton, llama.cpp's loader): the GPUs it names, the
    lines read and its facts as sentences (memory, parallel sizes, ranks, services started), none of them judged."""

    tool: str
    devices: list[RuntimeDevice]
    claimed: set[int]
    facts: list[str]
