# ruff: noqa: E501  (the tools' lines as they print them)
"""Numbers no hardware reports, in the non-NVIDIA readers (review 53): a PCIe width outside the specification's,
a generation outside 1-6, an infinite rate or count. Each is refused (exit 2: what, where, how to fix) or left
unread with a note, never judged. Constructed in each tool's format: the kernel's link status line
(drivers/pci/pci.c), lshca's table, mlxlink's Operational Info, amd-smi monitor's table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpuvet.cli.app import main

HUGE = "9" * 400  # float() makes it inf
STATUS = "[    5.123456] amdgpu 0000:41:00.0: 63.008 Gb/s available PCIe bandwidth, limited by {rate} GT/s PCIe x{width} link at 0000:40:01.1 (capable of 252.048 Gb/s with 16.0 GT/s PCIe x16 link)\n"
LSHCA = """  PCI_addr   |  RDMA  |  Net  | Numa | IpStat  | Link | Rate | LnkCapWidth | LnkStaWidth | HCA_Type
----------------------------------------------------------------------------------------------------
0000:30:00.0 | mlx5_2 | ens13 |  {numa}   | up_ip46 | Eth  |  100   |   {cap}    |   x16 G4    |  MT4125
"""
MLXLINK = """$ sudo mlxlink -d mlx5_0{port}
Operational Info
----------------
State                           : Active
Physical state                  : LinkUp
Speed                           : {speed}
Width                           : {width}
FEC                             : Standard LL RS-FEC - RS(271,257)
"""
MONITOR = """GPU  POWER  GPU_TEMP  MEM_TEMP  GFX_UTIL  GFX_CLOCK  MEM_UTIL  MEM_CLOCK  VRAM_USED  VRAM_TOTAL  SINGLE_ECC  DOUBLE_ECC  PCIE_REPLAY
  0  125 W     40 °C     35 °C       0 %     133 MHz       0 %    900 MHz     283 MB  196592 MB           0           {ecc}            0
"""


def _run(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str) -> tuple[int, dict[str, Any], str]:
    path = tmp_path / "capture.txt"
    path.write_text(text, encoding="utf-8")
    code = main(["doctor", "--from", str(path), "--json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    return code, json.loads(out) if code != 2 else {}, err


@pytest.mark.parametrize(("rate", "width", "said"), [(HUGE, "8", "GT/s is no PCIe rate"), ("8.0", "99", "x99 is no PCIe link width"),
                                                     ("3.0", "8", "3 GT/s is no PCIe rate")])
def test_a_link_status_line_with_an_impossible_link_is_left_unread_and_said(capsys, tmp_path, rate, width, said) -> None:
    code, data, _ = _run(capsys, tmp_path, STATUS.format(rate=rate, width=width) + STATUS.format(rate="8.0", width="8").replace("41:00", "42:00"))
    assert any(said in n and "0000:41:00.0" in n for n in data["notes"]), data["notes"]
    judged = [f for f in data["findings"] if f["cause"].startswith("pcie")]
    assert judged and all("41:00" not in json.dumps(f) for f in judged), judged  # the sound line still judged


@pytest.mark.parametrize(("numa", "cap", "said"), [("0", "x16 G9", "Gen9 is no PCIe generation"), ("0", "x99 G4", "x99 is no PCIe link width"),
                                                   (HUGE, "x16 G4", "no NUMA node")])
def test_lshca_with_an_impossible_link_or_numa_node_is_refused(capsys, tmp_path, numa, cap, said) -> None:
    code, _, err = _run(capsys, tmp_path, LSHCA.format(numa=numa, cap=cap))
    assert code == 2 and said in err and "line 3" in err and "Fix:" in err, err


@pytest.mark.parametrize(("port", "speed", "width", "said"), [("", f"{HUGE}G", "4x", "no port runs at inf Gb/s"),
                                                              ("", "IB-HDR", "99x", "a port runs on 1, 2, 4, 8 or 12 lanes"),
                                                              (" -p 99", "IB-HDR", "4x", "no adapter has a port 99")])
def test_mlxlink_with_an_impossible_port_speed_or_width_is_refused(capsys, tmp_path, port, speed, width, said) -> None:
    code, _, err = _run(capsys, tmp_path, MLXLINK.format(port=port, speed=speed, width=width))
    assert code == 2 and said in err and "Fix:" in err, err
    code, data, _ = _run(capsys, tmp_path, MLXLINK.format(port="", speed="IB-HDR", width="4x"))
    assert code in (0, 1)


def test_an_amd_smi_monitor_count_no_counter_holds_is_said_not_dropped(capsys, tmp_path) -> None:
    code, data, _ = _run(capsys, tmp_path, MONITOR.format(ecc=HUGE))
    assert any("DOUBLE_ECC" in n and "not a finite number" in n for n in data["notes"]), data["notes"]
    code, data, _ = _run(capsys, tmp_path, MONITOR.format(ecc="3"))
    assert [f["cause"] for f in data["findings"]] == ["module_reported_critical"], data["findings"]  # a sound count judged
