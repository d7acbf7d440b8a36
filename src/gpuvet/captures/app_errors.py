"""Error lines applications and runtimes print, as operators paste them: PyTorch's ``RuntimeError:
CUDA error: …``, the CUDA runtime's and driver API's error names (cudaErrorECCUncorrectable,
CUDA_ERROR_NO_DEVICE), NVML's ``Failed to initialize NVML: …``, PyTorch's NCCL errors, and
``torch.cuda.is_available()`` answering False. Only lines shaped as a runtime prints them count
(``printed``): a grep hit on source code, a comment, a string literal or a sentence quoting an error
is not one. Where nothing in a file is a tool's own line, a sentence quoting a message is read as the poster's
report (``quoted``, issue 46), never code. Each line is kept with its kind; what each kind
means (a module's hardware, the driver, or the application itself) is doctor's to say
(capture_checks.captured_errors), never decided here."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from gpuvet.captures import api_errors, app_devices, container_layer, mgmt_status, nvidia_stack, smi_words, stack_probes
from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.lines import block
from gpuvet.captures.marks import Marks, may_hold
from gpuvet.captures.p2p_pair import pair as peer_pair
from gpuvet.captures.records import AppError
from gpuvet.captures.text import Line

# kind -> the words that name it: the runtime's message, the runtime API's enum, the driver API's enum
KINDS: dict[str, re.Pattern[str]] = {k: lazy(mgmt_status.widen(k, v), re.I) for k, v in {  # MGL: numbers, bindings
    "ecc_uncorrectable": r"uncorrectable ECC error encountered|cudaErrorECCUncorrectable|CUDA_ERROR_ECC_UNCORRECTABLE",
    "illegal_address": r"an illegal memory access was encountered|cudaErrorIllegalAddress|CUDA_ERROR_ILLEGAL_ADDRESS"
                       r"|an illegal instruction was encountered|misaligned address"
                       # Blender Cycles: cuewErrorString's name, then 'in CUDA queue <op>' or 'in cuCall()' (R3D)
                       r"|\bIllegal address in (?:CUDA queue|cu[A-Z]\w{2,40}\()",
    "launch_failure": r"unspecified launch failure|cudaErrorLaunchFailure|CUDA_ERROR_LAUNCH_FAILED"
                      r"|\bLaunch failed in (?:CUDA queue|cu[A-Z]\w{2,40}\()",
    "out_of_memory": r"CUDA out of memory|CUDA error: out of memory|cudaErrorMemoryAllocation|CUDA_ERROR_OUT_OF_MEMORY"
                     r"|OutOfMemoryError: CUDA",
    "no_device": r"no CUDA-capable device is detected|CUDA_ERROR_NO_DEVICE|cudaErrorNoDevice"
                 r"|There (?:are|is) no available device\(s\) that support CUDA"
                 r"|Found no NVIDIA driver on your system|No CUDA GPUs are available"
                 r"|^\s*No CUDA devices\s*$"  # gpu-burn's own line (wilicc/gpu-burn initCuda, launch)
                 # R8C: LAMMPS' Geryon (lib/gpu/geryon/nvd_macros.h) prints the driver API's CUresult by number
                 r"|\bCuda driver error 100 in call\b",
    "driver_too_old": r"CUDA driver version is insufficient for CUDA runtime version|cudaErrorInsufficientDriver"
                      r"|The NVIDIA driver on your system is too old"  # the driver API has no such name (cuda.h)
                      # a PTX newer than the driver's JIT (cudaErrorUnsupportedPtxVersion): the driver is too old
                      r"|the provided PTX was compiled with an unsupported toolchain|cudaErrorUnsupportedPtxVersion"
                      r"|CUDA_ERROR_UNSUPPORTED_PTX_VERSION"
                      # nvidia-container-cli refusing an image whose CUDA the driver is too old for
                      r"|requirement error: unsatisfied condition: (?:cuda|driver)\s*[<>=]{1,2}\s*[\d.]+",
    "devices_busy": r"(?:all )?CUDA-capable device(?:s|\(s\) is/are) (?:are )?busy or unavailable"
                    r"|cudaErrorDevicesUnavailable",  # the runtime's name only: cuda.h defines no driver-API twin
    # NVML's words, as nvidia-smi prints them and as nvidia-container-cli relays them ('nvml error: …')
    "nvml_mismatch": r"(?:Failed to initialize NVML|nvml error|(?<=Error: )nvml): Driver/library version mismatch"
                     r"|failed to initiali[sz]e NVML: ERROR_LIB_RM_VERSION_MISMATCH",  # go-nvml's name (the device plugin)
    "nvml_unknown": r"Failed to initialize NVML: Unknown Error",
    "nccl_cuda": r"NCCL error.{0,200}unhandled cuda error|ncclUnhandledCudaError",
    "smi_no_driver": r"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver"
                     # R6B: the driver's client library and Xorg's NVIDIA driver finding no kernel module
                     r"|could not open the device file /dev/nvidiactl \(No such file or directory\)"
                     r"|\(EE\) NVIDIA(?:\(\w+\))?: Failed to initiali[sz]e the NVIDIA kernel module",
    "device_file_io_error": r"could not open the device file /dev/nvidia\d+ \(Input/output error\)",  # R6B
    # issue 46: rocm-smi's and amd-smi's words for the same: /sys/module/amdgpu/initstate absent (amdgpu not loaded)
    "amd_smi_no_driver": r"[Dd]river not initialized \(amdgpu not found in modules\)",
    "nvml_permissions": r"Failed to initialize NVML: Insufficient Permissions"
                        r"|could not open the device file /dev/nvidia\w+ \((?:Operation not permitted|Permission denied)\)",
    "system_not_ready": r"system not yet initialized|cudaErrorSystemNotReady|CUDA_ERROR_SYSTEM_NOT_READY",
    "forward_compat": r"forward compatibility was attempted on non supported HW|cudaErrorCompatNotSupportedOnDevice"
                      r"|CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"
                      # error 803, cudaErrorSystemDriverMismatch: compat libraries of another driver than the kernel's
                      r"|system has unsupported display driver / cuda driver combination"
                      r"|cudaErrorSystemDriverMismatch|CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"
                      r"|\bCuda driver error 80[34] in call\b",  # R8C: Geryon's CUresult numbers (above)
    "device_assert": r"device-side assert(?:ion)? triggered|cudaErrorAssert\b|CUDA_ERROR_ASSERT",
    "no_kernel_image": r"no kernel image is available for execution on the device|cudaErrorNoKernelImageForDevice"
                       r"|CUDA_ERROR_NO_BINARY_FOR_GPU"
                       # PyTorch's warning at init that its build has no kernels for the module's architecture
                       r"|^\s*(?:NVIDIA|Tesla|Quadro|GeForce|TITAN|Titan|RTX|GRID)\b(?: \S+){0,6} with CUDA capability"
                       r" sm_\d+ is not compatible with the current PyTorch"
                       r"|^\s*PyTorch no longer supports this GPU because it is too old",
    "launch_timeout": r"the launch timed out and was terminated|cudaErrorLaunchTimeout|CUDA_ERROR_LAUNCH_TIMEOUT",
    "invalid_ordinal": r"invalid device ordinal|cudaErrorInvalidDevice\b|CUDA_ERROR_INVALID_DEVICE\b",
    # a collective library's communicator never came up (the job stops before its first collective): PyTorch's c10d
    # waiting on rank 0's unique id through its key-value store ('[1] is setting up HCCL communicator and retrieving
    # hcclUniqueId from [0] via c10d key-value store …'), torch_npu's failed HCCL init call ('HCCL function error:
    # hcclCommInitRootInfoConfig(…), error code is 5'), NCCL's and RCCL's init calls failing by name
    "collective_init": r"is setting up (?:NCCL|HCCL|RCCL) communicator and retrieving \w{0,8}UniqueId"
                       r"|HCCL function error: \s*(?:hccl|Hccl)(?:CommInit\w*|GetRootInfo)\b"
                       r"|\b(?:nccl|rccl)CommInit(?:Rank|All|RankConfig|RankScalable)\w* failed",
    # the job's very first collective (SeqNum 1) timed out: the ranks never exchanged any data (issue 46, batch T)
    "nccl_first_timeout": r"Watchdog caught collective operation timeout: Work(?:NCCL|RCCL)?\(SeqNum=1\b",
    "nccl_timeout": r"Watchdog caught collective operation timeout|ran for \d+ milliseconds before timing out"
                    # ProcessGroupNCCL's watchdog itself blocked (a NCCL/CUDA call hung), and its heartbeat monitor
                    # killing the process for it (issue 46, PyTorch's own messages)
                    r"|ProcessGroupNCCL's watchdog got stuck for \d+ seconds|Heartbeat monitor timed out!",
    "nccl_error": r"NCCL error in: .{0,300}(?:ncclRemoteError|ncclSystemError|ncclInternalError|remote process "
                  r"exited|unhandled system error|internal error)",
    **container_layer.KINDS,  # nvidia-container-cli's stages by what they relay, the runtime's set-up (GEN2)
    **smi_words.NVML_KINDS,  # NVML's words for a module's own state: a reset needed, its infoROM, its power (AX1)
    "container_no_gpu": r"could not select device driver .{0,20} with capabilities: \[\[gpu\]\]"
                        # the toolkit's binary is nvidia-container-cli.real where a wrapper script calls it
                        r"|nvidia-container-cli(?:\.real)?: (?:initialization|mount|device|detection) error",
    # PyTorch's words for cudaErrorUnknown at init ('CUDA initialization: CUDA unknown error - this may be due to
    # an incorrectly set up environment …') and for cuInit failing: the runtime could not start, the module unnamed
    "cuda_init_unknown": r"CUDA unknown error|CUDA driver initialization failed"
                         # cuInit's own unknown error as XLA (JAX, TensorFlow) logs it (issue 46, dev_m_runtime)
                         r"|failed call to cuInit: CUDA_ERROR_UNKNOWN",
    # AGX1: a CUDA init call's cudaErrorInitializationError (3) / CUDA_ERROR_NOT_INITIALIZED as a program prints it
    # (not a CSM epilog's 'Failed during <call>: …', node_reports' under its host)
    "cuda_init_error": r"(?<!during )\b(?:cudaGetDeviceCount|cudaSetDevice|cudaGetDevice|cudaFree|cudaMalloc|cuInit)\b"
                       r"[^\n]{0,80}?\b(?:initialization error|CUDA_ERROR_NOT_INITIALIZED|cudaErrorInitializationError)\b"
                       r"|\bcudaErrorInitializationError\b",
    # cudaErrorNvlinkUncorrectable: the NVLink between modules failed under the job (Xid 74 names the link)
    "nvlink_uncorrectable": r"uncorrectable NVLink error|cudaErrorNvlinkUncorrectable|CUDA_ERROR_NVLINK_UNCORRECTABLE",
    # a program without the driver's NVML library: a container started without the NVIDIA runtime, or no driver
    # user-space; go-nvml's words in the device plugin and the GPU operator: 'could not load NVML library: <dlerror>'
    "smi_no_nvml_lib": r"NVIDIA-SMI couldn't find libnvidia-ml\.so|libnvidia-ml\.so\.1: cannot open shared object"
                       r"|could not load NVML library: \S{0,200}libnvidia-ml\.so"
                       r"|(?:failed to initiali[sz]e NVML|nvml init failed):? ERROR_LIBRARY_NOT_FOUND",  # go-nvml's name
    "framework_no_libs": r"Skipping registering GPU devices|Could not load dynamic library 'lib(?:cudart|cublas|cudnn"
                         r"|cufft|curand|cusolver|cusparse)[^']*'",
    # issue 46: dcgmi diag's own words for a diagnostic that could not run its tests (the modules were not tested):
    # 'Error: Unable to complete diagnostic for group N. Return: (-40) …'; the reason is the rest of the line
    "diag_not_run": r"Unable to complete diagnostic for group \d+",
    # issue 46 (batch U): the runtime's words for cudaErrorPeerAccessUnsupported (a custom all-reduce's P2P setup):
    # no peer access between the two modules, the topology's or the platform's, not the application's error
    "peer_unsupported": r"peer access is not supported between these two devices|cudaErrorPeerAccessUnsupported"
                        r"|CUDA_ERROR_PEER_ACCESS_UNSUPPORTED|hipErrorPeerAccessUnsupported"
                        r"|\((?!cudaErrorPeerAccessAlreadyEnabled)(cudaError\w+)\)\s*\"cudaDeviceEnablePeerAccess\(",  # R7C
    # issue 46: every other name the GPU APIs return (knowledge/api_errors.yaml), by its meaning class
    **api_errors.kinds(),
    # any other error the runtime names, last: the application's call failed, the line says which
    "cuda_runtime_error": r"CUDA error: \w|\bcudaError[A-Z]\w+|\bCUDA_ERROR_[A-Z_]+"
                          # vLLM's and SGLang's CUDACHECK: "Failed: Cuda error file.cuh:307 '<the runtime's text>'"
                          r"|\bCuda error [\w./-]+:\d+ '\w",
    mgmt_status.NONE_KIND: "",  # a management library's code of class none (Not Supported, success): read, no error
}.items()}
# KINDS in order, each API kind with the words a line must hold for it (api_errors.words_of)
_ORDER = [(kind, pattern, api_errors.words_of(kind)) for kind, pattern in KINDS.items()]
# words one of KINDS needs (lower case): a line holding none is no error line, told by one search (a bug
# report has millions of lines; trying every kind on each would take seconds). "ecc error encountered", not
# "ecc": every nvidia-smi -q names ECC, and the kind's other words hold "cudaerror" or "cuda_error"
_KEY_WORDS = (
    "ecc error encountered", "cudaerror", "cuda_error", "illegal", "misaligned", "launch failure", "out of memory",
    "outofmemory",
    "cuda-capable", "support cuda", "nvidia driver", "insufficient for cuda", "nvml", "unhandled cuda", "no cuda devices",
    "couldn't communicate", "amdgpu not found in modules", "could not open the device file", "nvidia kernel module",
    "not yet initialized", "forward compatibility", "device-side assert", "no kernel image", "launch timed out",
    "invalid device", "cuda error: ", "uniqueid", "hccl function error", "comminit",
    "watchdog caught", "before timing out", "watchdog got stuck", "heartbeat monitor timed out", "nccl error", "[[gpu]]",
    "nvidia-container-cli", "skipping registering gpu", "could not load dynamic library", "no cuda gpus",
    "cuda unknown error", "cuda driver initialization", "nvlink error", "libnvidia-ml", "unsupported toolchain",
    "unsupported display driver", "unsatisfied condition", "current pytorch", "no longer supports this gpu",
    "unable to complete diagnostic", "peer access is not supported", "initialization error", *api_errors.KEY_WORDS,
    *container_layer.KEY_WORDS, "cuda driver error ")
_KEYS = lazy("|".join(re.escape(k) for k in _KEY_WORDS))
# issue 43: fewer words, one in each of _KEY_WORDS, each looked for once in the whole text ("cuda" stands for
# seven of them); the lines holding one are the only lines _kind can read
_ANCHORS = ("cuda", *api_errors.KEY_WORDS,  # (before "error": each its own anchor, never "error"'s)
            "error", "illegal", "misaligned", "launch", "memory", "nvidia driver", "nvml", "couldn't communicate",
            "amdgpu not found in modules",
            "not yet initialized", "forward compatibility", "device-side assert", "no kernel image", "invalid device",
            "watchdog caught", "before timing out", "watchdog got stuck", "heartbeat monitor timed out", "[[gpu]]",
            "uniqueid", "comminit", "nvidia-container-cli", "skipping registering gpu",
            "could not load dynamic library", "libnvidia-ml", "unsupported toolchain", "unsupported display driver",
            "unsatisfied condition", "current pytorch", "no longer supports this gpu", "unable to complete diagnostic",
            "peer access", "device file", "nvidia kernel module", *container_layer.KEY_WORDS)
_BLOCK = 8192  # lines lowered and searched at a time
_TORCH_CALL = lazy(r"torch\.cuda\.is_available\(\)")
_TORCH_FALSE_SAME = lazy(r"torch\.cuda\.is_available\(\)\W{0,6}(?:returns?|is|gives|->|=|:)?\s*`?False\b", re.I)
_BUS_ID = lazy(r"\b[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]\b")
_UUID = lazy(r"\b(?:GPU|MIG)-[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
# ggml/ollama name a backend device CUDA0 ("device=CUDA0", "CUDA0 buffer"), TensorFlow "/device:GPU:1" (R3D)
_DEVICE = lazy(r"(?:device[ =:]+(?:CUDA|ROCm)?|device:GPU:|cuda:|GPU\s?|\bCUDA(?=\d{1,3} buffer))(\d{1,3})\b", re.I)


@dataclass
class AppErrorsParse:
    errors: list[AppError] = field(default_factory=list)
    claimed: set[int] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)


def parse(lines: list[Line], marks: Marks | None = None) -> AppErrorsParse:
    """Every application or runtime error line in the lines; the same kind on the same module once,
    counted (a traceback prints its error two or three times). ``marks``: the whole text's, whose words
    no casing of which is in it are not searched."""
    out = AppErrorsParse()
    seen: dict[tuple[str, str | None], int] = {}
    for i in _candidates(lines, marks):
        ln = lines[i]
        kind = _kind(ln.text) or _torch_false(lines, i)
        if kind is None:
            continue
        out.claimed.add(ln.no)
        if kind in (_TORCH_SEES, mgmt_status.NONE_KIND):  # PyTorch sees its GPUs, a library's none: read, no error
            continue
        peers = peer_pair(lines, i) if kind == "peer_unsupported" else None  # R7C: the pair enabling P2P
        module = api_errors.module(kind, _module(ln.text) or peers or app_devices.after(lines, i))
        key = (kind, module)
        if key in seen:
            first = seen[key]
            out.errors[first] = replace(out.errors[first], times=out.errors[first].times + 1)
            continue
        seen[key] = len(out.errors)
        out.errors.append(AppError(kind, ln.no, container_layer.excerpt(kind, ln.text), module, _tool(ln.text),
                                   meaning=container_layer.MEANING.get(kind)))
    nvidia_stack.relabel(lines, out)  # R6B: NVML's init words, CUDA after a resume, NVML after an update
    container_layer.framed(out, lines, out.claimed, marks)  # IGC: NVML's and nvidia-smi's words in a container
    _one_module(lines, out)
    out.errors = mgmt_status.echoes(stack_probes.kept(out.errors, lines, out.notes))  # AGX1; R14C: xpumd's echo
    if out.errors:
        kinds = ", ".join(dict.fromkeys(e.kind for e in out.errors))
        out.notes.append(f"application/runtime error lines: {len(out.claimed)} read ({kinds})")
    return out


def _candidates(lines: list[Line], marks: Marks | None = None) -> list[int]:
    """The indexes of the lines ``_kind`` or ``_torch_false`` can read (issue 43): those holding one of
    _ANCHORS, or 'is_available' (and the line after it), each word found by one C-speed search of
    the lowered text a block of lines at a time (a copy of the whole text would add its size to the
    peak), not a regex a line. Every other line is none of theirs. A word the whole text's ``marks`` say
    no casing of is in it is not searched (else each block's byte triples are counted for that)."""
    found: set[int] = set()
    keys = _keys(marks)
    for first in range(0, len(lines), _BLOCK) if keys else ():
        low = block(lines, first, min(first + _BLOCK, len(lines))).lower()  # a long text's: a slice of it (issue 43)
        hits: list[tuple[int, bool]] = []
        maybe = may_hold(low) if marks is None else None  # most words are in no block: their search skipped
        for key in keys:
            at = low.find(key) if maybe is None or maybe(key) else -1
            while at != -1:
                hits.append((at, key == "is_available"))
                at = low.find(key, at + 1)
        line, counted = first, 0
        for at, torch in sorted(hits):
            line, counted = line + low.count("\n", counted, at), at  # lower() adds no newline: the same lines
            found.update((line, line + 1) if torch else (line,))
    return sorted(i for i in found if i < len(lines))


# each of _KEY_WORDS under the first of _ANCHORS it holds (the anchor it is found by)
_UNDER = {anchor: tuple(k for k in _KEY_WORDS if next(a for a in _ANCHORS if a in k) == anchor) for anchor in _ANCHORS}


def _keys(marks: Marks | None) -> list[str]:
    """The words _candidates searches: each anchor some casing of which the text may hold, or, where the text may
    hold only one of the key words it stands for (or none), that word alone (a bug report's 'error' is in no key
    word there: its every block's search of it found lines no kind reads); 'is_available' for _torch_false."""
    if marks is None:
        return [*_ANCHORS, "is_available"]
    keys: list[str] = []
    for anchor in _ANCHORS:
        if marks.any_case(anchor):
            words = [k for k in _UNDER[anchor] if marks.any_case(k)]
            keys += words if len(words) <= 1 else [anchor]
    return keys + (["is_available"] if marks.any_case("is_available") else [])


def _kind(text: str) -> str | None:
    if not _KEYS.search(low := text.lower()):
        return None
    named: set[str] | None = None  # the API words the line holds, found once (most lines hold none)
    for kind, pattern, words in _ORDER:
        if words is not None:
            named = {w for w in api_errors.API_WORDS if w in low} if named is None else named
            if named.isdisjoint(words):
                continue
        m = pattern.search(text)
        if m is not None and (printed(text, m.start()) or (m.re.groups > 0 and m.start(1) >= 0
                                                          and printed(text, m.start(1)))):
            return kind  # the API's context, or its printed words (group 1) after it, shaped as a tool prints them
    return None


# what may stand before a runtime's message on its line: a grep/compiler hit's path:NN: (judged on what
# follows), a label ending in ':' ']' '>' '|' '(' or '->', an error label anywhere, an earlier sentence
# after a label, or nothing but timestamps and punctuation
_GREP_HIT = lazy(r"^\s*[\w./~+-]+:\d+:(?:\d+:)?")
_SOURCE_HIT = lazy(r"^\s*[\w./~+-]+\.(?:py|pyx|c|cc|cpp|cu|cuh|h|hpp|go|rs|js|ts|java|sh|rb|lua):\d+:")
_COMMENT = lazy(r"^\s*(?:#(?!\s(?:\[\w+\]:?\s)?[A-Z]\w*(?:Error|Exception): )|//|/\*)")  # R11A: a title heading
# Python's warnings module prints 'file.py:LINE: CategoryWarning: message' (torch's 'The NVIDIA driver on your
# system is too old'): the runtime's own line, not a grep hit in a source file
_PY_WARNING = lazy(r"^\s*[\w./~+-]+\.py:\d+: \w*Warning: ")
_LABEL = lazy(r"(?:Error|error|ERROR|Exception|Warning|warning|WARN|failed|Failed|FAILED)\S*\s*:")
_ENDS_AS_LABEL = lazy(r"(?:[:\]>|(]|->|\(error code)$")  # the CUDA samples: '… (error code %s)!'
_DOTTED = lazy(r"(?:[A-Za-z_]\w*\.)+$")  # torch.cuda.OutOfMemoryError: the module path before the name
# a label, then an earlier sentence of the same message ("…gpu_device.cc:1960] Cannot dlopen some GPU
# libraries. Skipping registering GPU devices...")
_EARLIER_SENTENCE = lazy(r"[:\]>]\s+[^:\]>'\"]*[.!;,]$")
# a source line (a traceback prints the line that raised): a statement keyword or a call before the message
_CODE = lazy(r"^\s*(?:(?:if|elif|while|for|assert|raise|return|except|throw|catch|case|def|class|import|from|"
             r"print|printf|fprintf|puts|echo)\b|[\w.:]+\s*\(|\w+\s*=[^=])")
# vLLM's and sglang's CUDACHECK: "Failed: Cuda error file.cuh:307 '…'"
# R7A: Rust's panic before 1.73 quotes its message ("thread 'main' panicked at 'Failed to initialize nvml: …', src/…"),
# a Python log its subprocess's stderr as bytes ("… return with error (code 9): b\"NVIDIA-SMI has failed …\"")
_TOOL_QUOTES = lazy(r"(?:\b(?:CUDA|NCCL|Cuda|cuda|nccl)\b.*\b(?:failure|error|failed)|Error\b)[^'\"]*$"
                    r"|\bthread '[^']{1,60}' panicked at\s*$|\b(?i:error)\b[^'\"]*:\s*b$")  # a Python bytes repr
_QUOTE = lazy(r"\"|(?<![A-Za-z])'|'(?![A-Za-z])")  # a quote, not an apostrophe (couldn't)


# issue 46: a logfmt record (Go agents such as dcgm-exporter, the device plugin: 'time="…" level=error msg="…"'): its
# message and error fields are the program's own words, whatever they quote
_LOGFMT = lazy(r"(?:^|\s)(?:time|ts|level)=(?:\"[^\"]*\"|\S+)(?:\s+\w+=(?:\"[^\"]*\"|\S+))*?\s+"
               r"(?:msg|message|err|error|reason)=\"?"
               # MGL: a JSON log line's message field (zap, logrus, structlog): {"level":"error",…,"msg":"…"}
               r"|^\s*\{\s*\"\w{1,20}\"\s*:[^\n]{0,400}?\"(?:msg|message|err|error|reason)\"\s*:\s*\"")
# a JSON message that is a question ('"msg": "What does … mean?"'): a poster's, not the program's words (review 56)
_ASKED_IN_JSON = lazy(r'[^"\n]*\?\s*"')

# a quote opening the line before its first word, and the quote that would close it (a poster quoting a pasted line)
_OPENS_QUOTE = lazy(r"^\s*([\"“'])(?=\S)")
_CLOSES = {'"': '"', "“": "”", "'": "'"}
# C++'s terminate handler prints an uncaught exception's message after 'what():' (libstdc++), often behind
# the tool's own 'Error (file.cpp:298):' location: a printed label, never a call in source code
_THROWN = lazy(r"^\s*what\(\):\s+(?:\w+ \([\w./-]{1,80}:\d+\):\s*)?")


def printed(text: str, at: int) -> bool:
    """The message at ``at`` is shaped as a runtime prints it, not quoted by someone: not in a source
    file's grep hit, a comment, a string literal or code, nor inside a sentence ("I once saw '…'")."""
    if (opened := _OPENS_QUOTE.match(text)) is not None and _CLOSES[opened.group(1)] not in text[opened.end():]:
        text, at = text[opened.end():], at - opened.end()  # a pasted line the poster opened a quote on, never closed
    if (record := _LOGFMT.search(text, 0, at)) is not None and record.end() <= at:
        if not (text.lstrip().startswith("{") and _ASKED_IN_JSON.match(text, record.end())):
            return True
    thrown = (m := _THROWN.match(text)) is not None and m.end() <= at
    if m is not None and thrown:  # R8C: what() is the program's message, its call words too
        text, at = text[m.end():], at - m.end()  # (Kokkos: 'cudaGetDeviceCount(&n) error( cudaError…)')
    if (_SOURCE_HIT.match(text) and not _PY_WARNING.match(text)) or _COMMENT.match(text):
        return False
    if (hit := _GREP_HIT.match(text)) is not None and hit.end() <= at:
        text, at = text[hit.end():], at - hit.end()
        if _COMMENT.match(text):
            return False
    before = text[:at]
    if _CODE.match(before) and not thrown:
        return False
    quotes = list(_QUOTE.finditer(before))
    if len(quotes) % 2:  # inside a quoted string: only a tool's own quoting ("Test CUDA failure common.cu:986 '…'")
        return bool(_TOOL_QUOTES.search(before[:quotes[-1].start()]))
    head = before.rstrip()  # less the module path before the name (a short one: searched in the last 200 characters)
    if (path := _DOTTED.search(head, max(0, len(head) - 200))) is not None:
        head = head[:path.start()]
    return (not re.search(r"[A-Za-z]", head) or bool(_ENDS_AS_LABEL.search(head)) or bool(_LABEL.search(head))
            or bool(_EARLIER_SENTENCE.search(before.rstrip())))


# issue 46, the one rule for every quoted reader (reported): a poster's words are a lead, and only a REPORT counts,
# a line saying the poster's own system showed, printed or logged the message. The words that make one:
# a verb of showing (_SHOWN), said of the poster's system (_THEIRS: first person, a named GPU, node, host, rank or
# bus id, the machine's own log, or a when: 'since Monday', 'every time'); and none of _NOT_A_REPORT.
_SHOWN = lazy(r"\b(?:says?|said|saying|shows?|showed|shown|showing|prints?|printed|printing|logs?|logged|logging|"
              r"reports?|reported|reporting|gets?|got|getting|gives?|gave|throws?|threw|thrown|throwing|"
              r"raised?|hits?|hitting|fails?|failed|failing|die|dies|died|dying|crash(?:es|ed|ing)?|returns?|"
              r"returned|returning|sees?|saw|seen|seeing|tells?|told|telling|full of|keeps?|kept|spams?|"
              r"spammed|complains?|complained|errors? out|errored|abort(?:s|ed)?|emits?|emitted|outputs?|"
              r"displays?|displayed|appeared|popped up|came up|ended with|stopped with|receiv(?:e|es|ed|ing)|"
              r"r[au]n(?:ning)? into|encounter(?:s|ed|ing)?|occurred|happened)\b", re.I)
_THEIRS = lazy(r"\b(?:I|I'm|I've|me|my|we|we're|we've|us|our)\b|\b(?:GPU|node|host|rank|server|worker|card|device)\s*"
               r"#?[\w.-]*\d|[0-9a-fA-F]{2,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}|\b(?:this|that|the|one|every|each|all)\s+"
               r"(?:node|host|box|machine|server|cluster|system|card|GPU|worker)s?\b|\b(?:dmesg|journal|journalctl|"
               r"syslog|kernel log|the logs?|the job|the container)\b|\b(?:since|after the|today|yesterday|"
               r"suddenly|again|every time|this morning|last night|keeps?|kept)\b", re.I)
_NOT_A_REPORT = lazy(
    # denied, or behind the poster
    r"\b(?:not|never|no longer|used to|before the fix|fixed|solved|resolved|anymore|is gone|went away|disappeared|"
    r"(?:do|does|did|is|was|were|are|wo|has|have|had)n[’']t)\b"
    # a question of meaning, or how to keep it away
    r"|\b(?:mean|means|meaning|meant|stand for|definition of|prevent|avoid|reproduce|simulate|inject)\b"
    # a conditional or a runbook: 'if you see', 'if a node logs', 'when … appears'
    r"|\b(?:if|whenever|in case|unless|should)\s+(?:you|one|a|an|any|the|your|some|there|it|this|that)\b"
    r"|\bwhen\s+you\b|\bwhen\b[^.?!]{0,200}\b(?:appears?|shows up|occurs?|is (?:logged|printed|shown|reported))\b"
    # a hypothetical or a plan: 'might', 'would', 'before I upgrade', 'we should add'
    r"|\b(?:might|could|would|(?-i:may)|maybe|perhaps|suppose|imagine|hypothetically|will|going to|plan(?:ning)? to|"
    r"about to|should|shall)\b"
    r"|\bbefore (?:I|we) (?:upgrade|update|install|reinstall|switch|move|migrate|deploy|try|roll|buy|order|go)\b"
    # documentation quoted: 'the docs say', 'our runbook', 'FAQ'
    r"|\b(?:docs?|documentation|manual|runbooks?|playbooks?|FAQ|wiki|knowledge ?base|release notes|readme|"
    r"man page|according to)\b"
    # review 55: called harmless or a false alarm ('which was a false positive', 'but the GPUs are fine')
    r"|\bfalse (?:positive|alarm|alert)s?\b|\b(?:the|all|our|my)\s+(?:GPUs|cards|nodes|devices|modules)\s+(?:are|seem|"
    r"look|work|run)\s+(?:fine|ok|okay|healthy|normal)\b|\beverything (?:is|was|seems|looks|works) (?:fine|ok|okay)\b",
    re.I)
# review 55: in the message's own sentence, words that make it no report of the poster's system: a question to
# others ('has anyone seen'), of its nature ('is it normal', 'which is expected', 'the difference between'), a
# course or tutorial, or a monitor's rule or alert ('our monitoring alerts when', 'the BMC web page', Grafana)
_NOT_THEIR_SENTENCE = lazy(
    r"\b(?:has|have|did|does|do|is|can|could)\s+(?:anyone|anybody|someone|somebody|any of you|others)\b"
    r"|\b(?:anyone|anybody)\s+(?:else\s+)?(?:seen|seeing|get|got|getting|know|had|having|experienced?)\b"
    r"|\b(?:is|was|are|it's|that's)\s+(?:(?:it|this|that)\s+)?(?:normal|expected|common|usual)\b"
    r"|\bdifference between\b|\bcurious\b|\b(?:tutorials?|(?<!of )courses?|lectures?|workshops?|webinars?|textbooks?|"
    r"slides|homework|exams?|quiz)\b"
    r"|\b(?:alerts?|alerting|alarms?|monitoring|dashboards?|grafana|prometheus|nagios|zabbix|datadog|BMC|IPMI|"
    r"web (?:page|ui))\b", re.I)
# review 55: the message as the subject of a definition ('Xid 79 shows that …', '… is what the driver prints')
_EXPLAINED = lazy(r"^\W{0,3}\s?(?:shows? that|means?|indicates?|signals?|signifies|refers to|stands for|"
                  r"is (?:what|when|how|why)|(?:happens|occurs) when)\b", re.I)
_REACH = 300  # the characters either side of a message that judge it (its evidence is cut at 300): bounded work
# a quoted span in the poster's sentence (the message's own words): never read as theirs
_QUOTED_SPAN = lazy(r"`[^`]*`|\"[^\"]*\"|“[^”]*”|(?<![A-Za-z])'[^']*'(?![A-Za-z])")


QUOTED = "error messages quoted in a poster's words"  # the kind read.py names when these are all a file holds


def quoted(lines: list[Line]) -> AppErrorsParse:
    """The messages of KINDS a poster's sentence or quote holds ("nvidia-smi says '…'"): read only where
    nothing in the file is a tool's own line (captures/read.py), each marked ``quoted`` so doctor says
    whose words they are. Never in code (a source or grep hit, a comment, a statement or a literal in
    one), only where its line reports it (reported)."""
    out = AppErrorsParse()
    seen: set[tuple[str, str | None]] = set()
    for i, ln in enumerate(lines):
        for kind in _quoted_kinds(ln.text) if _KEYS.search(low := ln.text.lower()) or _rocm_words(low) else ():
            out.claimed.add(ln.no)
            if (kind, module := _module(ln.text) or app_devices.after(lines, i)) not in seen:  # R3D: ggml's next line
                seen.add((kind, module))
                out.errors.append(AppError(kind, ln.no, ln.text.strip()[:300], module, _tool(ln.text), quoted=True))
    _one_module(lines, out)
    nvidia_stack.relabel(lines, out)  # R6B: the same facts, the same verdicts, in a poster's words
    from gpuvet.captures import ascend_codes  # noqa: PLC0415 - ASC: it imports this module; Ascend's codes, labels

    acl = ascend_codes.quoted(lines)
    out.errors, out.claimed = out.errors + acl.errors, out.claimed | acl.claimed
    if out.errors:
        kinds = ", ".join(dict.fromkeys(e.kind for e in out.errors))
        out.notes.append(f"error messages quoted in the poster's words: {len(out.claimed)} line(s) ({kinds}); "
                         "no tool's own line was read")
    return out


SAID_PER_LINE = 16  # the messages of one pattern judged on a line: a poster's sentence names a few (bounded work)


def said(pattern: re.Pattern[str], text: str) -> list[re.Match[str]]:
    """The first SAID_PER_LINE places ``pattern`` names a message on the line."""
    found: list[re.Match[str]] = []
    for m in pattern.finditer(text):
        found.append(m)
        if len(found) == SAID_PER_LINE:
            break
    return found


def _quoted_kinds(text: str) -> list[str]:
    """Every kind a poster's line reports (review 55: not only the first), in KINDS' order; a place an earlier
    kind named (reported or not) is not read again by a later, wider one (cuda_runtime_error)."""
    kinds: list[str] = []
    taken: list[tuple[int, int]] = []
    for kind, pattern in (*KINDS.items(), *_rocm_kinds(text)):
        for m in said(pattern, text):
            if any(m.start() < b and a < m.end() for a, b in taken):
                continue
            taken.append(m.span())
            if (kind and kind != mgmt_status.NONE_KIND and not _CODE.match(text[:min(m.start(), _REACH)].lstrip(" `>*"))
                    and reported(text, m.start(), m.end()) and kind not in kinds):
                kinds.append(kind)
    return kinds


def _rocm_words(low: str) -> bool:
    """A lowered line holds a word of ROCm's error lines (hip_errors.KEYS): only then are its kinds tried."""
    from gpuvet.captures import hip_errors  # noqa: PLC0415 - hip_errors imports this module
    return any(k in low for k in hip_errors.KEYS)


def _rocm_kinds(text: str) -> list[tuple[str, re.Pattern[str]]]:
    """issue 46: ROCm's kinds (captures/hip_errors.py) for a line holding their words, a poster quoting HIP's or
    HSA's messages as CUDA's; each by its API class ('' for a status that is no fault: never a finding)."""
    from gpuvet.captures import hip_errors  # noqa: PLC0415 - hip_errors imports this module
    if not _rocm_words(text.lower()):
        return []
    return [(hip_errors.by_class(kind, text) or "", pattern) for kind, pattern in hip_errors.KINDS.items()]


def reported(text: str, start: int, end: int) -> bool:
    """The message at text[start:end] is a poster's report of it (issue 46, for every quoted reader): the line
    is no source or grep hit, comment or statement, and its own words (the quotes in it left out) say the
    poster's system showed it (_SHOWN, _THEIRS), never ask what it means, deny it, put it behind them, cite
    documentation, or set it in a condition, a hypothetical or a plan (_NOT_A_REPORT)."""
    if _SOURCE_HIT.match(text) or _GREP_HIT.match(text) or _COMMENT.match(text):
        return False
    if _CODE.match(text[:min(start, _REACH)].lstrip(" `>*")):
        return False
    before, after = _outside_quote(text[max(0, start - _REACH):start], text[end:end + _REACH])
    before, after = _QUOTED_SPAN.sub(" ", before), _QUOTED_SPAN.sub(" ", after)
    words = before + " … " + after
    in_code = text[:start].count("`") % 2 == 1  # R3D: set in inline code, the tool's words as the poster quotes them
    if not (_SHOWN.search(words) and (in_code or _THEIRS.search(words))) or _NOT_A_REPORT.search(words):
        return False
    ends = [m.end() for m in _SENTENCE_END.finditer(before)]
    after_end = _SENTENCE_END.search(after)
    sentence = before[ends[-1] if ends else 0:] + " … " + after[:after_end.end() if after_end else len(after)]
    return not _NOT_THEIR_SENTENCE.search(sentence) and not _EXPLAINED.match(after)


_SENTENCE_END = lazy(r"[.?!](?=\s|$)")
_CLOSER = {"`": "`", '"': '"', "“": "”"}


def _outside_quote(before: str, after: str) -> tuple[str, str]:
    """The words either side of a message less the quote it stands in ('… printing 'CUDA initialization: … that might
    have … Error 804: …' and the job dies'): the message's own words ('might', 'may') are not the poster's."""
    if not in_quotes(before):
        return before, after
    opens = [(before.rfind(q), q) for q in _CLOSER] + [(m.start(), "'") for m in _QUOTE.finditer(before) if m.group() == "'"]
    at, opener = max(opens)
    if at < 0:
        return before, after
    close = _QUOTE.search(after) if opener == "'" else re.search(re.escape(_CLOSER[opener]), after)
    return before[:at], after[close.end():] if close is not None else after


def in_quotes(before: str) -> bool:
    """The text after ``before`` is inside a quote it opened (backticks, double or typographic quotes, a quote
    that is no apostrophe)."""
    return (before.count("`") % 2 == 1 or before.count('"') % 2 == 1 or before.rfind("“") > before.rfind("”")
            or len(_QUOTE.findall(before.replace('"', ""))) % 2 == 1)


def _torch_false(lines: list[Line], i: int) -> str | None:
    """``torch.cuda.is_available()`` answering False: on its own line, or on the next line (an
    interactive session: ``>>> torch.cuda.is_available()`` then ``False``)."""
    text = lines[i].text
    if "is_available" not in text and text.strip() != "False":
        return _torch_printed(lines[i - 1].text, text) if i > 0 and "print(" in lines[i - 1].text else None
    if _TORCH_FALSE_SAME.search(text):
        return "torch_no_cuda"
    if text.strip() == "False" and i > 0 and _TORCH_CALL.search(lines[i - 1].text):
        return "torch_no_cuda"
    return None


def _torch_printed(command: str, output: str) -> str | None:
    """A one-liner printing several values (``python -c "import torch; print(torch.__version__,
    torch.cuda.is_available(), torch.cuda.device_count())"``) answered on the next line ``2.3.0+cu121 False 0``:
    the value in is_available()'s place False, or device_count()'s 0, is PyTorch seeing no CUDA device. Read
    only where the line holds one word a printed value (a value with spaces leaves the places unknown)."""
    call = re.search(r"print\((.*?)\)\s*(?:;|[\"']|$)", command)
    if call is None or not _TORCH_CALL.search(call.group(1)):
        return None
    values, depth, start = [], 0, 0
    for at, ch in enumerate(call.group(1) + ","):
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            values.append(call.group(1)[start:at])
            start = at + 1
    words = output.split()
    if len(values) < 2 or len(words) != len(values):
        return None
    for value, word in zip(values, words, strict=True):
        if "is_available()" in value and word == "False" or "device_count()" in value and word == "0":
            return "torch_no_cuda"
    return _TORCH_SEES if any("is_available()" in v and w == "True" for v, w in zip(values, words, strict=True)) else None


# a module's hardware fault whose line names no module: the file's one GPU bus id is where it happened
_HARDWARE_KINDS = frozenset({"ecc_uncorrectable", "nvlink_uncorrectable", "hip_gpu_hang"})
_GPU_WORD = lazy(r"\bGPU\b|NVIDIA|Tesla|Bus[- ]?Id", re.I)


def _one_module(lines: list[Line], out: AppErrorsParse) -> None:
    """A hardware error the line does not place ('uncorrectable ECC error encountered') lands on the module the
    same file names, where it names exactly one GPU by bus id (nvidia-smi's 'GPU 0000:03:00.0', a Bus-Id
    column): a file of one module, never 'node'; two or more named, it stays unplaced."""
    if not any(e.module is None and e.kind in _HARDWARE_KINDS for e in out.errors):
        return
    buses = {f"{int(b.split(':')[0], 16):04x}{b[b.index(':'):].lower()}" for ln in lines
             if _GPU_WORD.search(ln.text) for b in _BUS_ID.findall(ln.text)}
    if len(buses) == 1:
        bus = next(iter(buses))
        out.errors = [replace(e, module=bus) if e.module is None and e.kind in _HARDWARE_KINDS else e
                      for e in out.errors]


_TORCH_SEES = "torch sees its GPUs"  # no kind: the line is claimed as read, no error made of it


_ON_HOST = lazy(r"\)\s+on\s+([A-Za-z][\w.-]{0,62})\s+at\s+\([\w./-]{1,120}:\d+\)")


def _module(text: str) -> str | None:
    """The module a line names: its bus id where it prints one (the only name that joins it to a listed
    module); else the CUDA device number it names ('device 1', 'cuda:1', PyTorch's 'GPU 1'), said as
    the process's view: CUDA numbers the devices the process sees (CUDA_VISIBLE_DEVICES,
    CUDA_DEVICE_ORDER), not nvidia-smi's indices. None where it names neither."""
    if (bus := _BUS_ID.search(text)) is not None:
        return bus.group(0)
    if (uuid := _UUID.search(text)) is not None:  # NVML's and DCGM's other name for a module (issue 46)
        return uuid.group(0)
    if (host := _ON_HOST.search(text)) is not None:  # HPL's '… = 700 (…) on gpu46 at (file:line)': a host
        return f"{host.group(1)} (host; GPU not in the line)"
    m = _DEVICE.search(text)
    return f"CUDA device {int(m.group(1))} (process view)" if m else None


def _tool(text: str) -> str | None:
    if "RuntimeError" in text or "torch" in text or "OutOfMemoryError" in text:
        return "PyTorch"
    if "NVML" in text:
        return "nvidia-smi/NVML"
    return None
