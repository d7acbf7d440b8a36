"""Review 67b (issue 46) F11: one action per fault: Level Zero's configuration class (a metrics run without its
library) is told its fault's own action (faults.yaml's tool_component_unavailable, which names Level Zero's metrics
needs), not a second action written in node/stack_fixes.py."""

from __future__ import annotations

from pathlib import Path

from gpuvet.node.vendor_tools import APP_ERROR_FIX
from tests.captures.test_r14c_level_zero import METRICS
from tests.support.helpers import capture_json


def test_level_zero_configuration_has_its_faults_one_action(tmp_path: Path) -> None:
    assert "ze_api_configuration" not in APP_ERROR_FIX
    found = [f for f in capture_json(tmp_path, METRICS)["findings"]  # type: ignore[attr-defined]
             if f["cause"] == "tool_component_unavailable"]
    assert len(found) == 1
    assert found[0]["fix"].startswith("read the cited line and the options or environment")
    assert "metrics-discovery" in found[0]["fix"]


ROCM_PART = """\
============================================ ROCm System Management Interface ============================================
====================================================== Concise Info ======================================================
Device  Node  IDs              Temp        Power     Partitions          SCLK    MCLK    Fan  Perf  PwrCap  VRAM%  GPU%
              (DID,     GUID)  (Junction)  (Socket)  (Mem, Compute, ID)
==========================================================================================================================
0       2     0x74a1,   28851  35.0°C      140.0W    NPS1, CPX, 0        132Mhz  900Mhz  0%   auto  750.0W  0%     0%
1       3     0x74a1,   52743  N/A         N/A       N/A, N/A, 1         N/A     N/A     0%   auto  N/A     0%     0%
2       4     0x74a1,   12345  N/A         N/A       N/A, N/A, 0         N/A     N/A     0%   auto  N/A     0%     0%
==========================================================================================================================
================================================== End of ROCm SMI Log ===================================================
"""
ROCMINFO_HEAD = """\
ROCk module version 6.8.5 is loaded
=====================
HSA System Attributes
=====================
Runtime Version:         1.14
Runtime Ext Version:     1.6
System Timestamp Freq.:  1000.000000MHz
"""


def test_a_partition_0_row_of_na_is_not_called_a_later_partition(tmp_path: Path) -> None:
    """Review 67b F12."""
    notes = str(capture_json(tmp_path, ROCM_PART)["notes"])
    assert "GPU[2] (partition 0) print N/A for their modes as partition 0" in notes
    assert "GPU[1] (partition 1)" in notes and "GPU[2] (partition 0) print N/A for their modes and" not in notes


def test_rocminfos_head_says_its_runtime_ext_version(tmp_path: Path) -> None:
    """Review 67b F12: commit 5867fdf3 says it names both versions."""
    assert "Runtime Ext Version 1.6" in str(capture_json(tmp_path, ROCMINFO_HEAD)["notes"])
