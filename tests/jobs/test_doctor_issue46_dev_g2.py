"""doctor on the classes the second development set (issue 46, dev_g2) works on: newer drivers' -q
T.Limit temperature margins (degrees left to the limit, never temperatures) and a PCIe generation below
its top while the module is busy, from -q or --query-gpu CSV without a link width column. The captures
are written in nvidia-smi's formats; bus ids, UUIDs and figures are made up."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.helpers import doctor_capture, found_causes


def _tlimit_q(current: int, margin: int) -> str:
    """-q's Temperature section as drivers 535+ print it: thresholds as T.Limit margins, no Slowdown Temp."""
    return ("==============NVSMI LOG==============\n\nDriver Version                            : 570.124.06\n\n"
            "Attached GPUs                             : 1\nGPU 00000000:3B:00.0\n"
            "    Product Name                          : NVIDIA L40S\n    Temperature\n"
            f"        GPU Current Temp                  : {current} C\n"
            f"        GPU T.Limit Temp                  : {margin} C\n"
            "        GPU Shutdown T.Limit Temp         : -5 C\n        GPU Slowdown T.Limit Temp         : -2 C\n"
            "        GPU Max Operating T.Limit Temp    : 0 C\n        GPU Target Temperature            : N/A\n"
            "        Memory Current Temp               : N/A\n        Memory Max Operating T.Limit Temp : N/A\n")


def _causes(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, name: str) -> set[str]:
    _, data = doctor_capture(capsys, tmp_path, text, name=name)
    return {c for c, _ in found_causes(data)}


def test_tlimit_margins_are_margins_not_temperatures(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A 40 C module 45 C from its limit is cool, although its 'Slowdown T.Limit Temp' (-2 C) is below
    40 C; one whose margin has reached the slowdown step throttles, one at the max operating step is next."""
    thermal = {"thermal_throttling", "at_max_operating_temp"}
    assert not _causes(capsys, tmp_path, _tlimit_q(40, 45), "cool.txt") & thermal
    code, data = doctor_capture(capsys, tmp_path, _tlimit_q(91, -3), name="hot.txt")
    assert code == 1 and ("thermal_throttling", "0000:3B:00.0") in found_causes(data)
    assert _causes(capsys, tmp_path, _tlimit_q(87, 1), "warm.txt") & thermal == {"at_max_operating_temp"}


def _query_csv(gen: int, util: int) -> str:
    return ("$ nvidia-smi --query-gpu=index,name,pci.bus_id,pcie.link.gen.gpucurrent,pcie.link.gen.max,"
            "utilization.gpu --format=csv\n"
            "index, name, pci.bus_id, pcie.link.gen.gpucurrent, pcie.link.gen.max, utilization.gpu [%]\n"
            f"0, NVIDIA GeForce RTX 4090, 00000000:01:00.0, {gen}, 4, {util} %\n"
            "1, NVIDIA GeForce RTX 4090, 00000000:41:00.0, 4, 4, 97 %\n")


def test_a_busy_module_below_its_top_pcie_generation_is_downgraded(capsys: pytest.CaptureFixture[str],
                                                                   tmp_path: Path) -> None:
    """No width column: the generation alone is judged, only while the module is busy (idle ones downshift)."""
    code, data = doctor_capture(capsys, tmp_path, _query_csv(1, 98), name="busy.csv")
    assert code == 1 and found_causes(data) >= {("pcie_link_downgraded", "0000:01:00.0")}
    assert ("pcie_link_downgraded", "0000:41:00.0") not in found_causes(data)
    assert "pcie_link_downgraded" not in _causes(capsys, tmp_path, _query_csv(1, 0), "idle.csv")
