"""mlxlink's own verdict (issue 46, TOOLS), on port reports written here: its Troubleshooting Info recommending
anything but 'No issue was observed' on a port that is up is a warn lead (gpu_tool_reported_failure, mlxlink's
fix); the healthy recommendation is nothing."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import capture_json

_PORT = ("$ mlxlink -d mlx5_3\n\nOperational Info\n----------------\nState                 : Active\n"
         "Physical state        : LinkUp\nSpeed                 : IB-NDR\nWidth                 : 4x\n\n"
         "Troubleshooting Info\n--------------------\nStatus Opcode         : {code}\n"
         "Recommendation        : {advice}\n")


def _severe(tmp_path: Path, text: str) -> list[tuple[str, str]]:
    found = capture_json(tmp_path, text)["findings"]
    assert isinstance(found, list)
    return [(f["cause"], f["evidence"].get("tool", "")) for f in found if f["severity"] in ("warn", "critical")]


def test_an_mlxlink_recommendation_on_an_up_port_is_a_lead(tmp_path: Path) -> None:
    text = _PORT.format(code=7, advice="Signal integrity issue, clean or replace the cable and the module")
    assert _severe(tmp_path, text) == [("gpu_tool_reported_failure", "mlxlink")]


def test_mlxlink_saying_no_issue_is_nothing(tmp_path: Path) -> None:
    assert _severe(tmp_path, _PORT.format(code=0, advice="No issue was observed")) == []
