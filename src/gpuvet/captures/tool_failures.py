"""Issue 46 (SAFE): a GPU tool's own failure verdict, wherever its line sits. Each blind batch lost rows where a
tool plainly printed that it failed (deviceQuery's 'Result = FAIL', nvidia-smi's 'Unable to determine the device
handle', gpu-burn's 'FAULTY', a dcgmi diag row at 'Fail') and doctor said clear: the line was in a form or a place
no reader parsed. These lines are kept here, beside the readers (none claimed), so doctor can say the tool failed
wherever no finding of a reader already covers them (doctor/tool_leads.py): a lead, never a diagnosis.

The verdicts are the tools' own words, learned from their sources and manuals; a healthy run's words ('Result =
PASS', 'GPU 0: OK', '| Pass', 'pass: TRUE') are never these. Only the lines holding a verdict's literal are
tested (marks.holding): no pass over a long text's other lines. nccl-tests' verdicts are its own reader's; a line
whose verdict follows a sentence, or a poster's sentence quoting it, is the quoted-report rules' (read_quoted)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuvet.captures import stack_probes
from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.marks import Marks, holding
from gpuvet.captures.text import Line


@dataclass(frozen=True)
class Verdict:
    """A tool's failure verdict: the tool, the literal its every such line holds, the line's pattern."""

    tool: str
    word: str
    pattern: re.Pattern[str]
    cause: str | None = None  # the fault the tool's own line states, where it states one (else gpuvet's lead)


# the rows of dcgmi diag's table (DCGM's plugin names, its health watches' for a diag printed beside them): a Fail
# cell in another program's table is not DCGM's
_DCGM_ROWS = ("Denylist", "Blacklist", "NVML Library", "CUDA Main Library", "CUDA Toolkit Libraries?",
              r"Permissions and OS(?:-related)? Blocks", "Persistence Mode", "Environment(?: Variables)?",
              r"Page Retirement(?:/Row Remap)?", "Graphics Processes", "Inforom", "GPU Memory", "Memory",
              "Memory Bandwidth", "Memtest", "Diagnostic", "PCIe", "SM Stress", "Targeted Stress", "Targeted Power",
              "Pulse Test", "EUD", "NVBandwidth", "Context Create", "Software", "Thermal", "Power",
              "NVLink", "NVSwitch", "Driver", "Input Validation")
VERDICTS: tuple[Verdict, ...] = (
    # the CUDA samples' exit line (helper_cuda's checkCudaErrors exits after it) and deviceQuery's device count
    Verdict("CUDA sample", "Result = FAIL", re.compile(r"\bResult = FAIL(?:ED)?\b")),
    Verdict("CUDA sample", "cudaGetDeviceCount returned", re.compile(r"cudaGetDeviceCount returned \d+")),
    # nvidia-smi when NVML cannot open a module or the driver: its own sentences
    Verdict("nvidia-smi", "Unable to determine the device handle",
            re.compile(r"Unable to determine the device handle for \S*")),
    # R12C: nvidia-smi's sentence for NVML_ERROR_DRIVER_NOT_LOADED, and NVML's init refused with that status or
    # NVML_ERROR_NO_PERMISSION (nvmlErrorString's 'Driver Not Loaded', 'Insufficient Permissions'): the facts
    # app_errors names (smi_no_driver: the kernel module not loaded; nvml_permissions), one verdict wherever read
    Verdict("nvidia-smi", "NVIDIA-SMI has failed", re.compile(r"NVIDIA-SMI has failed because it couldn't communicate "
                                                              r"with the NVIDIA driver"), "no_modules_visible"),
    Verdict("nvidia-smi", "NVIDIA-SMI has failed", re.compile(r"NVIDIA-SMI has failed because")),
    Verdict("nvidia-smi", "Failed to initialize NVML", re.compile(r"Failed to initialize NVML: Driver Not Loaded\b"),
            "no_modules_visible"),
    Verdict("nvidia-smi", "Failed to initialize NVML", re.compile(r"Failed to initialize NVML: Insufficient "
                                                                  r"Permissions\b"), "device_permissions"),
    # NVML's own status when the loaded kernel module's version is not its library's (NVML_ERROR_LIB_RM_VERSION_MISMATCH:
    # nvidia-smi's 'Driver/library version mismatch', nvidia-container-cli's 'nvml error: …', pynvml's 'RM has
    # detected an NVML/RM version mismatch'): nothing reaches the modules until the node reboots or reloads the driver
    Verdict("nvidia-smi", "version mismatch", re.compile(r"(?:Failed to initialize NVML|nvml error): Driver/library "
                                                         r"version mismatch|RM has detected an NVML/RM version mismatch",
                                                         re.I), "driver_library_mismatch"),
    Verdict("nvidia-smi", "Failed to initialize NVML", re.compile(r"Failed to initialize NVML")),
    # NVML_ERROR_GPU_IS_LOST in any tool's words: the module is lost (one verdict with Xid 79 and NVML's log line)
    Verdict("nvidia-smi", "GPU is lost", re.compile(r"\bGPU is lost\b"), "module_fell_off_bus"),
    # R12C: the driver's /proc/driver/nvidia/gpus/*/information with the VBIOS version it could not read (nv.c fills
    # '??.??.??.??.??' until RM's BIOS_GET_INFO control answers): the module or its GSP did not answer the driver
    Verdict("nvidia /proc", "??.??.??.??.??", re.compile(r"^\s*Video BIOS:\s*\?\?\.\?\?\.\?\?\.\?\?\.\?\?\s*$"),
            "api_reports_driver_state"),
    # gpu-burn's per-GPU verdict after the run ('GPU 0: OK' on a healthy one)
    Verdict("gpu-burn", "FAULTY", re.compile(r"\bGPU \d+: FAULTY\b")),
    # R14E: a benchmark's own check of its answer failed: HPL's scaled residual ('||Ax-b||_oo/(…)=  3.1e+05 ......
    # FAILED', or its summary's 'N tests completed and failed residual checks' with N over 0), BabelStream's and
    # STREAM's validation of the arrays ('Validation failed on a[]. Average error …', 'Failed Validation on array
    # a[]'): the machine computed a wrong answer (captures/hpl.py, gpu_stream.py read their runs)
    Verdict("HPL", "FAILED", re.compile(r"^\s*\|\|Ax-b\|\|.{0,80}?=\s*\S{1,24}\s*\.{2,}\s*FAILED\b"),
            "silent_data_corruption"),
    Verdict("HPL", "failed residual checks", re.compile(r"^\s*[1-9]\d{0,6} tests? completed and failed residual checks"),
            "silent_data_corruption"),
    Verdict("GPU STREAM", "alidation", re.compile(r"^\s*(?:Validation failed on (?:[a-e]\[\]|sum)|Failed Validation "
                                                  r"on array [a-c]\[\])"), "silent_data_corruption"),
    # dcgmi diag's table row whose result cell reads Fail (dcgmi health's 'Failure' rows are its reader's to judge:
    # DCGM reports NVLink down on a PCIe card without a bridge, dcgm_health.py says when that is no fault)
    Verdict("dcgmi", "| Fail", re.compile(r"^\s*\|\s*(?:" + "|".join(_DCGM_ROWS) + r")\s*\|\s*Fail\b", re.I)),
    # nvbandwidth's assertion (its copy's data check, or a driver call that failed: '[CUDA_ERROR_…] … in expression')
    Verdict("nvbandwidth", "in expression ", re.compile(r"^\s*(?:ASSERT|\[CUDA_ERROR_\w+\]) .{0,200}?\bin expression ")),
    # ROCm Validation Suite's result line ('[RESULT] [ …] pebb … pass: FALSE')
    Verdict("rvs", "FALSE", re.compile(r"\[RESULT\].*\b(?:pass|met)\s*:\s*FALSE\b")),
    # rvs's own failure: a module's 'RVS-PEBB: internal error, … status -1' (the test ran no copy), its [ERROR ]
    # line where a peer test found no GPU pair to test ('p2p-bandwidth No peers found')
    # line where a peer test found no GPU pair to test ('p2p-bandwidth No peers found'); p2p's query of a pair that
    # cannot reach each other ('[RESULT] … p2p 7707 51576 peers:false distance:-1', a GPU with itself is none)
    Verdict("rvs", "internal error", re.compile(r"^\s*RVS-[A-Z0-9]{2,8}: internal error\b"), "copy_test_failed"),
    Verdict("rvs", "No peers found", re.compile(r"^\s*\[ERROR\s*\]\s*\[\s*[\d.]+\s*\].{0,80}\bNo peers found\b"),
            "p2p_unavailable"),
    Verdict("rvs", "peers:false", re.compile(r"^\s*\[RESULT\]\s*\[\s*[\d.]+\s*\]\s*\[?[\w.-]{1,40}\]?\s+p2p\s+"
                                             r"(\d{1,10})\s+(\d{1,10})\s+peers:false\b"), "p2p_unavailable"),
    # rocm-smi's own errors when the driver or every module is missing
    Verdict("rocm-smi", "Driver not initialized", re.compile(r"Driver not initialized \(amdgpu not found")),
    Verdict("rocm-smi", "No AMD GPUs", re.compile(r"\bNo AMD GPUs? (?:specified|found|detected)")),
    # amd-smi's library status when it cannot reach the driver or a module (amdsmi's own status names)
    Verdict("amd-smi", "AMDSMI_STATUS_", re.compile(r"\bAMDSMI_STATUS_(?:DRIVER_NOT_LOADED|"
                                                   r"AMDGPU_RESTART_ERR|DRM_ERROR|FAIL_LOAD_MODULE)\b")),
    # no access to the device files is the fact device_permissions names wherever it is read (/dev/kfd's, NVML's)
    Verdict("amd-smi", "AMDSMI_STATUS_", re.compile(r"\bAMDSMI_STATUS_NO_PERM\b"), "device_permissions"),
    # mlxlink's Troubleshooting Info: any recommendation but its healthy 'No issue was observed' (a cable, signal
    # integrity, a peer or a speed it names for the port it read)
    Verdict("mlxlink", "Recommendation", re.compile(r"^\s*Recommendation\s*:\s*(?!No issue\b|N/?A\b)[A-Z]\w.{4,}")),
    # npu-smi when its DCMI library cannot open the modules ('dcmi model initialized failed, because the device is
    # used. ret is -8020', 'dcmi module initialize failed. ret is -8005'): the driver refused it (AGX1)
    Verdict("npu-smi", "dcmi mod", re.compile(r"dcmi mod(?:el|ule) initiali[sz]ed? failed"), "api_reports_driver_state"),
)
VERDICT_MARKS = tuple(dict.fromkeys(v.word for v in VERDICTS))
_BUS = lazy(r"(?<![0-9A-Fa-f:])([0-9A-Fa-f]{3,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])(?!\w)")
_GPU = lazy(r"\bGPU\s?(\d{1,3})\b(?![:.]?\w|\s*is lost)")  # never a bus id's domain
# before the verdict, words of a sentence ('users sometimes report: …'), a quote or an assignment (a program's string,
# a poster's quotation), or a backtick after a word ('When `…` appears'): the quoted-report rules' (read_quoted)
_PROSE = lazy(r"\b[A-Za-z][a-z]+ [a-z]{2,} [a-z]{2,}\b|[\"'“‘=]|[A-Za-z][^`]*`")
_HEAD = 600  # characters of a line searched: a verdict line is short, a hostile one is not read to its end


@dataclass(frozen=True)
class ToolFailure:
    """One verdict line: the tool, the module it names (bus id or 'GPU N'; None: the node), where, the text."""

    tool: str
    module: str | None
    line: int
    text: str
    cause: str | None = None  # the verdict's own fault (Verdict.cause)


@dataclass
class ToolFailures:
    found: list[ToolFailure] = field(default_factory=list)
    claimed: set[int] = field(default_factory=set)  # none: the readers' paths run as before (read.py reads a file
    # of these lines alone, where it would refuse it)


def parse(lines: list[Line], marks: Marks | None = None) -> ToolFailures:
    """The verdict lines, in log order (a line once, its first verdict)."""
    out = ToolFailures()
    for i in holding(lines, VERDICT_MARKS, marks):
        text = lines[i].text[:_HEAD]
        for v in VERDICTS:
            if v.word in text and (m := v.pattern.search(text)) is not None and not _PROSE.search(text, 0, m.start()):
                if m.re.groups == 2 and m.group(1) == m.group(2):
                    break  # a GPU's peer query with itself
                module = " <-> ".join(sorted(m.groups(), key=int)) if m.re.groups == 2 else _module(text)
                if module is None and v.tool == "nvidia /proc":  # the listing's own 'Bus Location:' row
                    module = next((b.group(1).lower() for ln in lines[max(0, i - 12):i + 12]
                                   if "Bus Location" in ln.text and (b := _BUS.search(ln.text)) is not None), None)
                out.found.append(ToolFailure(v.tool, module, lines[i].no, text.strip(), v.cause))
                break
    if any("amdgpu not found" in f.text for f in out.found) and stack_probes.nvidia_in_use(lines):
        out.found = [f for f in out.found if "amdgpu not found" not in f.text]  # AGX1: Ray's probe of AMD's stack
    return out


def _module(text: str) -> str | None:
    """The module the line names: its bus id (lower case, 8-digit domain kept as printed), else 'GPU N'."""
    if (m := _BUS.search(text)) is not None:
        return m.group(1).lower()
    if (g := _GPU.search(text)) is not None:
        return f"GPU {g.group(1)}"
    return None
