"""Issue 46 (R14E): the record of benchmark and listing outputs gpuvet reads for their figures and their own checks,
not for a module's state: HPL's runs (captures/hpl.py), GPU STREAM's rows (captures/gpu_stream.py), intel_gpu_top's
samples (captures/intel_gpu_top.py) and a hostname-to-port-GUID listing (captures/ib_guid_hosts.py). Their figures
are said literally (gpuvet holds no model of these machines' expected rates to judge them against); a check a tool
failed (HPL's residual, BabelStream's validation) is a verdict line tool_failures.py reads wherever it sits."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class BenchResult:
    """One run or sample as the tool printed it: the tool, its figures in words, the line, its own check."""

    tool: str
    said: str
    line: int
    passed: bool | None = None  # the tool's own check (HPL's residual): True passed, False failed, None: none


@dataclass
class BenchResults:
    results: list[BenchResult] = field(default_factory=list)
    claimed: set[int] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
