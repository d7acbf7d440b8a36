"""What an inference runtime or a framework says of the GPUs it could not use (issue 46), and the format that
reads its logs: llama.cpp's ggml (``ggml_cuda_init: failed to initialize CUDA: unknown error``, ``no CUDA devices
found, CUDA will be disabled``, ``cudaMalloc failed: out of memory``), ollama's server log (``no compatible GPUs
were discovered``, ``Unable to load cudart … error="cudart init failure: 999"``, ``amdgpu is not supported``,
``ROCm unsupported integrated GPU detected``), TensorFlow (``Cannot dlopen some GPU libraries``), JAX (``Unable to
initialize backend 'cuda': …``, ``No GPU/TPU found, falling back to CPU``), clinfo (``Number of platforms 0``),
hashcat (``No devices found/left``) and vulkaninfo (``Found no drivers``). Each line becomes an AppError of the
kind its words name; what the kind means is doctor's (capture_errors.KIND_CAUSES). A runtime's "no device" is
dropped where the same backend lists a device in the file, and where a more specific reason (an init error,
a GPU refused, a CPU-only build) is in it: that line is the reason the runtime saw none."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from gpuvet.captures import (
    api_devices,
    app_lines,
    clinfo_forms,
    compute_listing,
    ggml_loads,
    nvidia_stack,
    stack_probes,
    triton_log,
    vllm_log,
)
from gpuvet.captures.app_errors import AppErrorsParse, _kind, _module, printed, reported
from gpuvet.captures.cycles_device import placed
from gpuvet.captures.records import UNNAMED, AppError, ListedModule, ListedParse, SmiTextModule
from gpuvet.captures.runtime_devices import RuntimeDevice, runtime_lines
from gpuvet.captures.runtime_marks import RUNTIME_LINES
from gpuvet.captures.smi_text import SmiText, bus
from gpuvet.captures.text import Line

NO_DEVICE, CPU_BUILD, REFUSED = "runtime_no_device", "runtime_cpu_only_build", "runtime_unsupported_gpu"
_INIT = "cuda_init_unknown"


@dataclass(frozen=True)
class _Rule:
    kind: str  # an app_errors kind, or a function of the match's group 1 (below)
    pattern: re.Pattern[str]
    tool: str
    backend: str = ""  # the API whose 'no device' a device it lists contradicts


def _r(kind: str, pattern: str, tool: str, backend: str = "") -> _Rule:
    return _Rule(kind, re.compile(pattern, re.I), tool, backend)


_BY_CODE = "by code"  # the kind the CUDA error number in group 1 names (_coded)
_BY_WORDS = "by words"  # the kind the message in group 1 names (_worded)
_BY_COUNT = "by count"  # a failed device count: the kind its message names, else CUDA not starting (_counted)
_IGNORED = "ignored"  # read (claimed), no error: JAX's TPU/ROCm/plugin backends, which every machine prints
RULES: tuple[_Rule, ...] = (
    _r(_BY_WORDS, r"ggml_(?:cuda_init|init_cublas): failed to initialize (?:CUDA|ROCm|MUSA|HIP): (.+)", "llama.cpp"),
    _r(NO_DEVICE, r"ggml_(?:cuda_init|init_cublas): no (CUDA|ROCm|MUSA) devices found", "llama.cpp"),
    _r(NO_DEVICE, r"ggml_vulkan: No devices found", "llama.cpp", "Vulkan"),
    _r("out_of_memory", r"(?:cudaMalloc|hipMalloc|musaMalloc) failed: out of memory|failed to allocate (?:CUDA|ROCm|"
       r"Vulkan|MUSA|SYCL)\d+ buffer|ErrorOutOfDeviceMemory|Device memory allocation of size \d+ failed|"
       r"Not enough allocatable device memory|CL_MEM_OBJECT_ALLOCATION_FAILURE|cuMemAlloc\(\): out of memory",
       "llama.cpp"),
    _r(NO_DEVICE, r"no compatible GPUs were discovered|msg=\"?no GPU detected|no nvidia devices detected", "ollama"),
    _r("framework_no_libs", r"amdgpu detected, but no compatible rocm library found", "ollama"),
    _r(_IGNORED, r"gpu VRAM usage didn't recover within timeout", "ollama"),  # a model unloaded slowly: said, not judged
    _r(REFUSED, r"rocBLAS error: Cannot read \S*TensileLibrary\S*.{0,40}for GPU arch ?: ?(gfx\w+)", "rocBLAS"),
    _r(_BY_CODE, r"(?:cudart|cuda driver library|nvcuda|nvml) init failure: (\d+)|cudaSetDevice err: (\d+)", "ollama"),
    _r(_IGNORED, r"unsupported Radeon iGPU|ROCm unsupported integrated GPU", "ollama"),  # an iGPU skipped by design
    _r(REFUSED, r"amdgpu is not supported|amdgpu too old|unsupported (?:AMD )?GPU (?:detected|version)|"
       r"gpu_type=gfx\w+ .*not supported", "ollama"),
    _r(_INIT, r"failed call to cuInit: (?:CUDA_ERROR_UNKNOWN|UNKNOWN ERROR \(\d+\))|cuInit\(\): unknown error",
       "the CUDA runtime"),
    _r("framework_no_libs", r"Cannot dlopen some GPU libraries", "TensorFlow"),
    _r(NO_DEVICE, r"Could not find cuda drivers on your machine, GPU will not be used", "TensorFlow"),
    _r(REFUSED, r"TensorFlow was not built with CUDA kernel binaries compatible with compute capability", "TensorFlow"),
    _r("framework_no_libs", r"CUDA backend failed to initialize: |Jax plugin configuration error", "JAX"),
    _r(NO_DEVICE, r"Num GPUs Available:?\s*0\b", "TensorFlow"),
    _r(_IGNORED, r"Unable to initialize backend '(?:tpu_driver|tpu|rocm|plugin|METAL|mps)'", "JAX"),
    _r(_BY_WORDS, r"Unable to initialize backend '(?:cuda|gpu)': (.+)", "JAX"),
    _r(CPU_BUILD, r"(?:An NVIDIA GPU may be present on this machine, but )?a CUDA-enabled jaxlib is not installed", "JAX"),
    _r(NO_DEVICE, r"No GPU/TPU found, falling back to CPU", "JAX"),
    # (clinfo's count behind a journal's 'prog[pid]: ' or Compose's 'name-1  | ' gutter too: FRW)
    _r(NO_DEVICE, r"(?:^|(?<=\]: )|(?<=\| ))\s*Number of platforms\s+0\s*$"
       r"|clGetPlatformIDs\S*\s*(?:\(-1001\)|:?\s*CL_PLATFORM_NOT_FOUND_KHR)|CL_PLATFORM_NOT_FOUND_KHR", "OpenCL",
       "OpenCL"),
    # clinfo's per-platform count at 0 and clGetDeviceIDs' CL_DEVICE_NOT_FOUND (-1) on a platform: an ICD with no
    # device (a Clover/Mesa platform beside the GPU's own lists one: dropped, _kept); NULL-platform probes are clinfo's
    _r(NO_DEVICE, r"^\s*Number of devices\s+0\s*$|^(?!.*\(NULL)\s*\S*clGetDeviceIDs\b.{0,60}?(?:CL_DEVICE_NOT_FOUND|"
       r"\(-1\)|\s-1\b)", "clinfo", "OpenCL"),
    # vulkaninfo naming a CPU rasteriser (llvmpipe, lavapipe, SwiftShader) as its device: no GPU's Vulkan driver
    # loaded (dropped where vulkaninfo also lists a GPU)
    _r(NO_DEVICE, r"^\s*deviceName\s*=\s*(?:llvmpipe|lavapipe|SwiftShader)\b|^\s*GPU id\s*[:=]\s*\d+ \("
       r"(?:llvmpipe|lavapipe|SwiftShader)\b", "vulkaninfo", "Vulkan"),
    _r(NO_DEVICE, r"No devices found/left|(?:ATTENTION! )?No OpenCL, HIP,? (?:or|and) CUDA compatible platform found"
       r"|No OpenCL or CUDA compatible platform found|No OpenCL-compatible or CUDA-compatible platform found", "hashcat",
       "OpenCL"),
    # a program's own CUDA device detection finding none (NiceHashMiner's 'CudaDevicesDetection found no devices')
    _r(NO_DEVICE, r"\b(?:CUDA|Cuda|NVIDIA|Nvidia|NVML)\w{0,30}\s?found no (?:CUDA )?(?:devices|GPUs)\b",
       "CUDA device detection"),
    # any program counting the CUDA devices and printing the runtime's answer when the count fails ('Cannot get number
    # of CUDA devices: <cudaGetErrorString's words>'); deviceQuery's 'cudaGetDeviceCount returned N' is cuda_samples'
    _r(_BY_COUNT, r"(?:(?:Cannot|Can't|Could not|Couldn't|Unable to|Failed to|Error)\s+)?"
       r"(?:cuDeviceGetCount|(?:get|getting|query|querying|retrieve|determine|read) (?:the )?"
       r"(?:number|count) of (?:CUDA |GPU )?(?:devices|GPUs))(?: failed| returned \d+)?\s*(?::|->|with|failed)\s*"
       r"(?:error:?\s*)?(?:\d+\s*)?[(\[\"']?([A-Za-z][\w '/.-]{3,80})", "CUDA device count"),
    _r(NO_DEVICE, r"vkCreateInstance: Found no drivers|Cannot create Vulkan instance|vkEnumeratePhysicalDevices "
       r"failed|vkCreateInstance failed with ERROR_INCOMPATIBLE_DRIVER", "vulkaninfo", "Vulkan"),
    *(_r(*rule) for rule in app_lines.RULES),  # FRW: TensorFlow, TensorRT, ONNX Runtime, allocators, ollama's slog
)
_ANCHORS = ("ggml_", "alloc", "emory", "GPU", "init failure", "err: ", "amdgpu", "Radeon", "unsupported", "cuInit",
            "dlopen", "backend", "jaxlib", "platform", "devices", "Vulkan", "vkEnumerate", "gfx", "cuda drivers",
            "compute capability", "Jax plugin", "rocBLAS", "DeviceGetCount", "of CUDA devices",
            "PlatformIDs", "Number of devices", "clGetDeviceIDs", "deviceName", "GPU id", *app_lines.MARKS)


def _coded(codes: tuple[str | None, ...]) -> str:
    """The kind a CUDA error number names: 100 no device, 35 a driver older than the runtime, 803/804 the
    compatibility libraries, the rest (999 unknown, 3 not initialised) CUDA not starting."""
    code = next((c for c in codes if c), "")
    return {"100": NO_DEVICE, "35": "driver_too_old", "803": "forward_compat", "804": "forward_compat"}.get(code, _INIT)


def _worded(reason: str) -> str:
    """The kind a runtime's reason for a failed start names."""
    if re.search(r"no \w+-capable device|No visible GPU devices|no supported devices found|no CUDA devices", reason, re.I):
        return NO_DEVICE
    if re.search(r'registered platform with name: "?(?:cuda|gpu)', reason, re.I):
        return CPU_BUILD
    if re.search(r"unknown error|CUDA_ERROR_UNKNOWN|initialization error|not initialized", reason, re.I):
        return _INIT
    return _kind(reason) or "framework_no_libs"


def _counted(reason: str) -> str:
    """The kind a failed count of the CUDA devices names: no device, a driver too old, the compatibility
    libraries; any other of the runtime's messages ('operation not supported', 'initialization error') is the
    runtime not starting, whatever the program calls it."""
    kind = _worded(reason)
    return _INIT if kind == "framework_no_libs" else kind


@dataclass
class RuntimeLog:
    """What one file's runtime lines say: the devices they list and their errors."""

    devices: list[RuntimeDevice] = field(default_factory=list)
    errors: list[tuple[AppError, str]] = field(default_factory=list)  # each with the backend it is of
    claimed: set[int] = field(default_factory=set)
    tools: list[str] = field(default_factory=list)
    specific: set[str] = field(default_factory=set)  # app_errors' kinds on runtime lines (a reason for 'no device')
    read_by: list[str] = field(default_factory=list)  # the tools whose status lines were read, judged or not
    facts: list[tuple[str, list[str]]] = field(default_factory=list)  # FX68D: a server log's facts, by its tool


def _error(rule: _Rule, m: re.Match[str], ln: Line) -> AppError | None:
    """The error ``rule`` read on the line: printed by the runtime, or a poster's report of it (a quote)."""
    kind = (_coded(m.groups()) if rule.kind == _BY_CODE else _worded(m.group(1)) if rule.kind == _BY_WORDS
            else _counted(m.group(1)) if rule.kind == _BY_COUNT else rule.kind)
    if kind in (_IGNORED, app_lines.SAID):
        return None
    quoted = not printed(ln.text, m.start()) and not _LOGFMT.search(ln.text)
    if quoted and not reported(ln.text, m.start(), m.end()):  # a poster's quote counts only as their report
        return None
    gpu = re.search(r"\bgpu=(\d+)\b.*?gpu_type=(gfx\w+)|gpu_type=(gfx\w+)\s+gpu=(\d+)", ln.text)
    module = f"GPU {gpu.group(1) or gpu.group(4)} ({gpu.group(2) or gpu.group(3)})" if gpu else _module(ln.text)
    if module is None and (buffer := re.search(r"\bCUDA(\d{1,3}) buffer", ln.text)) is not None:  # ggml's CUDA0
        module = f"CUDA device {int(buffer.group(1))} (process view)"
    if module is None and kind == REFUSED and (gfx := re.search(r"\bgfx[0-9a-f]{3,4}\b", ln.text)) is not None:
        module = f"AMD GPU ({gfx.group(0)})"
    return AppError(kind, ln.no, ln.text.strip()[:300], module, rule.tool, quoted=quoted)


_LOGFMT = re.compile(r"\blevel=(?:INFO|WARN|WARNING|ERROR|DEBUG|TRACE)\b.*\bmsg=", re.I)  # ollama's own: msg="…" quotes
_BACKEND = re.compile(r"\b(CUDA|ROCm|HIP|MUSA|Vulkan|SYCL)\b")
_SPECIFIC = {_INIT, "driver_too_old", "forward_compat", REFUSED, CPU_BUILD, "framework_no_libs", compute_listing.MISSING}


def _backend_of(tool: str, text: str = "") -> str:
    """The API a device or a 'no device' line is of: llama.cpp's backend, OpenCL for clinfo and hashcat,
    Vulkan for vulkaninfo, else the tool itself."""
    if tool.startswith("llama.cpp"):
        b = _BACKEND.search(tool + " " + text)
        return b.group(1) if b else tool
    return {"clinfo": "OpenCL", "clinfo -l": "OpenCL", "clinfo --raw": "OpenCL", "clinfo --json": "OpenCL",
            "hashcat": "OpenCL", "hashcat -I": "OpenCL",
            "vulkaninfo": "Vulkan", "sycl-ls": "SYCL"}.get(tool, tool)


def _errors(lines: list[Line], log: RuntimeLog) -> None:
    """Every rule's error on the lines (none where app_errors reads the line: its kind is that reader's)."""
    for ln in lines:
        if not any(a in ln.text for a in _ANCHORS):
            continue
        for rule in RULES:
            if (m := rule.pattern.search(ln.text)) is None:
                continue
            if rule.kind == app_lines.SAID and not printed(ln.text, m.start()) and not _LOGFMT.search(ln.text):
                break  # a start-up line a poster quotes is their report's, not the tool's own line (FRW)
            log.claimed.add(ln.no)
            log.read_by.append(rule.tool)
            if (theirs := _kind(ln.text)) is not None:  # app_errors reads it: its reason stands for the runtime's
                log.specific |= {theirs} - {"no_device"}
            elif (e := _error(rule, m, ln)) is not None:  # AGX2: Blender's on the device Cycles activated
                log.errors.append((placed(e, lines), rule.backend or _backend_of(rule.tool, ln.text)))
            break


def _kept(log: RuntimeLog) -> list[AppError]:
    """The errors that stand: a 'no device' where a more specific reason or a device of its backend is in the
    file is dropped (that line says why, or the runtime did find one), and a GPU ollama refused where it lists
    another it runs on (the iGPU it skips beside the card it uses); one of a kind and module, counted."""
    listed = {_backend_of(d.tool) for d in log.devices}
    specific = bool(log.specific) or any(e.kind in _SPECIFIC for e, _ in log.errors)
    seen: dict[tuple[str, str | None], int] = {}
    out: list[AppError] = []
    for e, backend in log.errors:
        if e.kind == NO_DEVICE and (specific or backend in listed) or e.kind == REFUSED and backend in listed:
            continue
        if (key := (e.kind, e.module)) in seen:
            out[seen[key]] = replace(out[seen[key]], times=out[seen[key]].times + 1)
            continue
        seen[key] = len(out)
        out.append(e)
    return out


_READERS = ((runtime_lines, ()), (api_devices.clinfo, ("Number of platforms", "Device Name", "-- Device #")),
            (clinfo_forms.read, clinfo_forms.WORDS),  # R14C: AMD's own clinfo, clinfo --raw and --json
            (api_devices.hashcat, ("Device ID #", "* Device #")), (api_devices.vulkaninfo, ("deviceName", "GPU id")),
            (compute_listing.sycl_ls, ()))  # R3B: it finds its own lines (marks.holding)


_LOGS = ((vllm_log.read, vllm_log.MARKS), (triton_log.read, triton_log.MARKS), (ggml_loads.read, ggml_loads.MARKS))


def _logs(lines: list[Line], log: RuntimeLog) -> None:
    """FX68D: the model servers' logs and llama.cpp's loader: their lines read, their GPUs listed, their facts said."""
    for reader, words in _LOGS:
        if not any(w in ln.text for ln in lines for w in words) or (said := reader(lines)) is None:
            continue
        log.claimed |= said.claimed
        log.read_by.append(said.tool)
        log.facts += [(said.tool, said.facts)] if said.facts else []
        log.devices += [d for d in said.devices if all((d.tool, d.index) != (k.tool, k.index) for k in log.devices)]


def read(lines: list[Line]) -> RuntimeLog:
    """The runtime lines of a file: devices each tool lists (once by tool and index) and the errors. A listing
    tool's reader runs only where a line holds its words (a bug report's million lines are not each matched)."""
    log = RuntimeLog()
    for reader, words in _READERS:
        if words and not any(w in ln.text for ln in lines for w in words):
            continue
        devices, claimed = reader(lines)
        log.claimed |= claimed
        for d in devices:  # once by tool and index: a log repeats its start-up
            if all((d.tool, d.index) != (k.tool, k.index) for k in log.devices):
                log.devices.append(d)
    _logs(lines, log)
    _errors(lines, log)
    gone, read_too = compute_listing.missing(lines, sum(d.tool.startswith(("sycl-ls", "clinfo")) for d in log.devices))
    gone += compute_listing.unbound(lines)  # R3B: nomodeset with no DRM device bound
    log.errors += [(e, "SYCL") for e in gone]
    if log.errors and (one := compute_listing.placed(lines)) is not None:  # R3B: the one GPU the text names
        log.errors = [(replace(e, module=one) if e.module is None and e.kind in (NO_DEVICE, compute_listing.MISSING)
                       else e, b) for e, b in log.errors]
    log.claimed |= read_too | {e.line for e in gone}
    log.read_by += [e.tool or "" for e in gone]
    log.tools = list(dict.fromkeys([d.tool.split(" (")[0] for d in log.devices] + log.read_by))
    return log


KIND = RUNTIME_LINES  # the format's name (formats.py), the kind a file is read as


_last: list[tuple[list[Line], RuntimeLog]] = []  # the walk's lines and their read, for the formats after parse


def _read_once(lines: list[Line], last: bool = False) -> RuntimeLog:
    """read(lines), made once for the three formats of one walk (parse, then listing, then amd_listing, which
    lets it go: the lines are never held past the walk)."""
    log = _last[0][1] if _last and _last[0][0] is lines else read(lines)
    _last[:] = [] if last else [(lines, log)]
    return log


def parse(lines: list[Line]) -> AppErrorsParse:
    """The format's parse: the runtime errors as app_errors' records, every runtime line read claimed (none where
    no tool's line was read: a lone status word is no runtime's log)."""
    log = _read_once(lines)
    out = AppErrorsParse(claimed=log.claimed if log.tools else set())
    out.errors = stack_probes.kept(_kept(log), lines, out.notes)  # AGX1: OpenCL probed beside CUDA
    nvidia_stack.relabel(lines, out)  # R6B: a CUDA init failure after a suspend/resume is the driver's state
    if log.devices:
        by_tool: dict[str, list[str]] = {}
        for d in log.devices:
            by_tool.setdefault(d.tool, []).append(_described(d))
        out.notes += [f"{tool} lists {len(names)} GPU(s): {', '.join(names[:4])}" + (" …" if len(names) > 4 else "")
                      for tool, names in by_tool.items()]
    out.notes += [f"{tool} says: {'; '.join(facts)}" for tool, facts in log.facts]
    out.notes += [f"{KIND}: {', '.join(log.tools)}"] if out.claimed else []
    if out.errors:
        out.notes.append("runtime lines: " + ", ".join(dict.fromkeys(f"{e.kind} ({e.tool})" for e in out.errors)))
    return out


def _described(d: RuntimeDevice) -> str:
    """A device as the note names it: clinfo's rows, else its name with the compute capability and the free memory
    its runtime printed (FX68D); a server that names no GPU model (vLLM) by its index."""
    if not d.name:
        total = f", {d.memory_mib / 1024:.2f} GiB total" if d.memory_mib else ""
        return f"GPU {d.index} (no model named{total})" if d.tool == "vLLM" else f"{d.index} (its name cut)"
    if d.tool.startswith("clinfo"):
        return clinfo_forms.describe(d)
    said = [f"compute capability {d.compute}" if d.compute else None, f"VMM {d.vmm}" if d.vmm else None,
            f"library {d.library}" if d.library else None, _free(d)]
    more = ", ".join(x for x in said if x)
    return f"{d.name} ({more})" if more else d.name


def _free(d: RuntimeDevice) -> str | None:
    """The free memory as its tool says it: ollama's 'available' in GiB, ggml's 'MiB free'."""
    if not d.free_mib:
        return None
    return f"{d.free_mib / 1024:.1f} GiB available" if d.tool == "ollama" else f"{d.free_mib:.0f} MiB free"


def devices(lines: list[Line], last: bool = False) -> list[RuntimeDevice]:
    """Every GPU the runtimes' lines list, the first tool's list where several list the same GPUs (ollama's
    'inference compute' and its runner's ggml lines, hashcat's CUDA and OpenCL views): the longest list wins."""
    by_tool: dict[str, list[RuntimeDevice]] = {}
    for d in _read_once(lines, last).devices:
        by_tool.setdefault(d.tool, []).append(d)
    return max(by_tool.values(), key=len, default=[])


def listing(lines: list[Line]) -> SmiText:
    """The NVIDIA GPUs a runtime lists, as a module list (used where no other list in the file gives one)."""
    found = [d for d in devices(lines) if d.vendor == "NVIDIA"]
    out = SmiText()
    for n, d in enumerate(found, 1):
        fields = {"Product Name": d.name}
        fields |= {"FB Memory Usage/Total": f"{d.memory_mib:.0f} MiB"} if d.memory_mib else {}
        fields |= {"GPU UUID": d.uuid} if d.uuid and d.uuid.startswith("GPU-") else {}
        fields |= {"Compute Capability": d.compute} if d.compute and re.fullmatch(r"\d{1,2}\.\d", d.compute) else {}
        fields |= {"FB Memory Usage/Free": f"{d.free_mib:.0f} MiB"} if d.free_mib else {}
        out.modules.append(SmiTextModule(bus(_full(d.bus_id)) if d.bus_id else f"{UNNAMED} #{n}", d.name, fields))
    if found:
        _versions(out, found[0])
        out.notes.append(f"{found[0].tool}: {len(found)} NVIDIA GPU(s) named by the runtime's own lines "
                         f"({', '.join(d.name or f'GPU {d.index}' for d in found[:4])}); only what they print is known")
    return out


def _full(bus_id: str) -> str:
    """A bus id with its PCI domain (hashcat's and clinfo's AMD topology print '1d:00.0')."""
    return bus_id if bus_id.count(":") == 2 else f"0000:{bus_id}"


def _versions(out: SmiText, d: RuntimeDevice) -> None:
    """The driver a tool names: clinfo's and vulkaninfo's are the driver's own; ollama's is the CUDA version the
    driver supports (cuDriverGetVersion)."""
    if d.tool == "ollama" and d.driver:
        out.cuda = d.driver
    elif d.tool in ("clinfo", "vulkaninfo") and d.driver and (v := re.search(r"\b(\d{3}\.\d+(?:\.\d+)?)\b", d.driver)):
        out.driver = v.group(1)


def amd_listing(lines: list[Line]) -> ListedParse | None:
    """The AMD GPUs a runtime lists, as the AMD tools' modules; None where it lists none."""
    found = [d for d in devices(lines, last=True) if d.vendor == "AMD"]
    if not found:
        return None
    out = ListedParse(modules=[ListedModule(f"GPU {d.index}", d.name or None, _full(d.bus_id).upper() if d.bus_id else None,
                                            d.memory_mib) for d in found], kinds=[f"{found[0].tool} device list"])
    out.notes.append(f"{found[0].tool}: {len(found)} AMD GPU(s) named by the runtime's own lines; only what they "
                     "print is known")
    return out
