"""A tool verdict line naming a module is covered only by a warn/critical finding on that module (issue 46
review): a finding on GPU 0 citing the same file does not hide GPU 3's '| Fail' row; a line naming no module
is still covered by a finding citing its file (or any on the node)."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuvet.captures.tool_failures import ToolFailure
from gpuvet.doctor.model import finding
from gpuvet.doctor.tool_leads import CAUSE, leads

_FILE = "dcgm_diag.txt"


@dataclass
class _Caps:  # the one field leads() reads
    tool_failures: list[tuple[str, ToolFailure]] = field(default_factory=list)


def _gpu0_finding() -> object:
    return finding("thermal_throttling", 0.9, module="GPU 0", file=_FILE)


def test_a_finding_on_another_module_of_the_same_file_hides_no_modules_verdict() -> None:
    caps = _Caps([(_FILE, ToolFailure("dcgmi diag", "GPU 3", 12, "| Memory Bandwidth | Fail - GPU 3 |"))])
    (lead,) = leads(caps, [_gpu0_finding()])  # type: ignore[arg-type]
    assert lead.cause == CAUSE and lead.module == "GPU 3"


def test_a_finding_on_the_same_module_covers_its_verdict() -> None:
    caps = _Caps([(_FILE, ToolFailure("dcgmi diag", "GPU 0", 12, "| Memory Bandwidth | Fail - GPU 0 |"))])
    assert leads(caps, [_gpu0_finding()]) == []  # type: ignore[arg-type]


def test_a_line_naming_no_module_is_covered_by_a_finding_citing_its_file() -> None:
    caps = _Caps([(_FILE, ToolFailure("dcgmi diag", None, 20, "| Diagnostic Result | Fail |"))])
    assert leads(caps, [_gpu0_finding()]) == []  # type: ignore[arg-type]
