"""Issue 46 (R13D): jtop's stats ('<key>, <value>' rows, rbonghi/jetson_stats) are the Jetson GPU's readings, read
as tegrastats' samples are: never refused, nothing judged (jtop prints no verdict and no limit)."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import capture_json

JTOP = """\
<key>, <value>
time, 2020-09-03 10:28:30.003209
jetson_clocks, OFF
nvp model, MAXN
CPU1, 5
GPU, 0
RAM, 1745160
Temp AO, 44.5
Temp CPU, 46.0
Temp GPU, 46.0
power cur, 4859
"""


def test_jtops_stats_are_read_and_nothing_is_judged(tmp_path: Path) -> None:
    data = capture_json(tmp_path, JTOP)
    findings = data["findings"]
    assert isinstance(findings, list)
    assert [f for f in findings if f["severity"] in ("warn", "critical")] == []
    assert "nvp model MAXN" in str(data)


TEGRASTATS_FULL = (
    "RAM 14700/15692MB (lfb 2x1MB) SWAP 0/7846MB (cached 0MB) CPU [1%@1190,0%@1190] EMC_FREQ 0% GR3D_FREQ 0% "
    "AO@31C GPU@30.5C PMIC@100C\n"
)


def test_tegrastats_ram_nearly_full_is_said_as_an_info(tmp_path: Path) -> None:
    data = capture_json(tmp_path, TEGRASTATS_FULL)
    findings = data["findings"]
    assert isinstance(findings, list)
    assert [f for f in findings if f["severity"] in ("warn", "critical")] == []
    assert "RAM 14700/15692 MB in use (94 %" in str(data)
