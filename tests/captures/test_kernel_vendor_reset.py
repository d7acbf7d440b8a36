"""Issue 46 (batch Z): gnif's vendor-reset resetting an AMD GPU that vfio-pci holds for a virtual machine
('vfio-pci 0000:0b:00.0: AMD_NAVI10: performing reset', a PSP mode 1 reset, 'reset result = 0') is the passthrough
working as designed: one info per module (module_passed_through), the resets counted, no warn. A reset that failed
(a non-zero result, the SMU's error, a timeout) is not called a working passthrough."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuvet.cli.app import main

BDF = "vfio-pci 0000:0b:00.0: AMD_NAVI10:"


def _reset(stamp: int, result: str = "0", mode1: bool = False) -> str:
    """One reset of the module as vendor-reset logs it, its result last."""
    said = ["version 1.1", "performing pre-reset", "performing reset", "bus reset disabled? yes",
            "SMU response reg: 1, sol reg: 0, mp1 intr enabled? no, bl ready? yes"]
    said += ["Clearing scratch regs 6 and 7", "begin psp mode 1 reset", "mode1 reset succeeded"] if mode1 else []
    said += ["performing post-reset", f"reset result = {result}"]
    return "".join(f"[{stamp}.{100000 + n:06d}] {BDF} {s}\n" for n, s in enumerate(said))


def _doctor(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    path = tmp_path / "dmesg.txt"
    path.write_text(text)
    assert main(["doctor", "--from", str(path), "--json"]) != 2
    found: list[dict[str, object]] = json.loads(capsys.readouterr().out)["findings"]
    return found


def test_resets_that_succeed_are_one_info_on_the_passed_through_module(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = _reset(1883) + _reset(1884) + _reset(1959, mode1=True)
    found = _doctor(text, tmp_path, capsys)
    assert [(f["cause"], f["severity"]) for f in found] == [("module_passed_through", "info")], found
    evidence = found[0]["evidence"]
    assert isinstance(evidence, dict)
    assert evidence["message"] == "vendor_reset_passthrough" and evidence["times"] == 3
    assert found[0]["module"] == "0000:0B:00.0"


@pytest.mark.parametrize("failed", [
    _reset(1883) + _reset(1884, result="-110"),
    _reset(1883) + "[1884.000001] vfio-pci 0000:0b:00.0: SMU error 0xfd\n" + _reset(1885),
    _reset(1883) + f"[1884.000001] {BDF} timed out waiting for PSP to reach valid state, but continuing anyway\n",
])
def test_a_failed_reset_is_not_called_a_working_passthrough(
        failed: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    found = _doctor(failed, tmp_path, capsys)
    assert not [f for f in found if f["cause"] == "module_passed_through"], found
