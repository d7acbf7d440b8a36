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
