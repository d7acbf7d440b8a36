"""Issue 46 (RF4): a reset that failed stays critical unless a later line says that same module's reset worked: a
negated recovery ('cannot be recovered', 'was not recovered') is the failure said again, and another module's
recovery does not bring this one back. Lines written here in vendor-reset's and amdgpu's log shapes; bus ids and
times are made up."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers import capture_json

UNNAMED, RESET = "driver_error_unnamed", "module_needs_reset"
_FAILED = ("vfio-pci 0000:2d:00.0: AMD_NAVI10: performing reset", "vfio-pci 0000:2d:00.0: SMU error 0xfe",
           "vfio-pci 0000:2d:00.0: AMD_NAVI10: mode1 reset failed")


def _log(*lines: str) -> str:
    return "".join(f"[  {14 + i}.{100001 + i:06d}] {ln}\n" for i, ln in enumerate(lines))


def _severity(tmp_path: Path, log: str) -> dict[tuple[str, str | None], str]:
    data: dict[str, Any] = capture_json(tmp_path, log)  # type: ignore[assignment]
    return {(f["cause"], f.get("module")): f["severity"] for f in data["findings"]}


@pytest.mark.parametrize("later", ["vfio-pci 0000:2d:00.0: AMD_NAVI10: GPU cannot be recovered",
                                   "vfio-pci 0000:2d:00.0: AMD_NAVI10: device was not recovered, giving up",
                                   "vfio-pci 0000:2d:00.0: AMD_NAVI10: could not be successfully reset"])
def test_a_negated_recovery_leaves_the_failed_reset_critical(tmp_path: Path, later: str) -> None:
    found = _severity(tmp_path, _log(*_FAILED, later))
    assert found.get((RESET, "0000:2D:00.0")) == "critical", found


def test_another_modules_recovery_does_not_clear_the_failed_reset(tmp_path: Path) -> None:
    other = _log(*_FAILED, "vfio-pci 0000:4d:00.0: AMD_NAVI10: mode1 reset succeeded")
    assert _severity(tmp_path, other).get((RESET, "0000:2D:00.0")) == "critical"
    # the same module's own recovery still clears it (a retried reset that worked)
    same = _log(*_FAILED, "vfio-pci 0000:2d:00.0: AMD_NAVI10: mode1 reset succeeded")
    assert set(_severity(tmp_path, same)) == {(UNNAMED, "0000:2D:00.0")}
