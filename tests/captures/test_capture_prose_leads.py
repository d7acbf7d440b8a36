"""Issue 46 (AX2): a poster's narration of a tool's output ('but if i try to run xpumd directly, … you can find some
warnings & errors', 'When I tried …, I got this error output') is their account, never a tool's failure line: no
lead. A tool's own failure line beside it (a glog 'E' line, a bracketed level) stays one. Batch AA's xpumd row (an
Intel Arc A770 whose missing telemetry capabilities are a tool limitation) is checked as pasted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuvet.captures.text import Line
from gpuvet.captures.unread_leads import leads
from gpuvet.cli.app import main

AA = Path(__file__).resolve().parents[1] / "data" / "captures" / "fresh_aa"


@pytest.mark.parametrize(
    "said",
    [
        "but if i try to run the daemon directly, the GPU service is not killed, but you can find some errors",
        "When I tried to run the tests for building rccl, I got this error output",
        "we keep getting NCCL errors on node 3 after the driver update",
        "my GPU fails after two hours of training, then nvidia-smi hangs",
    ],
)
def test_a_posters_narration_is_no_lead(said):
    assert leads([Line(1, said)], set()) == []


@pytest.mark.parametrize(
    "tool",
    [
        "E0205 07:14:11.566 1234] GPU 0 failed to allocate the workspace",
        "[2024-02-05 07:14:11.566] [E] [15258-15273] GPU 0: failed to read the engine utilization",
    ],
)
def test_a_tools_own_failure_line_stays_a_lead(tool):
    assert len(leads([Line(1, tool)], set())) == 1


def test_batch_aa_xpumd_capabilities_read_quiet(capsys):
    code = main(["doctor", "--from", str(AA / "xpumd_xpumanager72_arc_a770_capabilities.txt"), "--json"])
    found = json.loads(capsys.readouterr().out)["findings"]
    assert code != 2 and not [f for f in found if f["severity"] in ("warn", "critical")]
