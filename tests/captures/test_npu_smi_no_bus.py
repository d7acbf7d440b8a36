"""Issue 46: npu-smi info tables whose chips print no bus id ('NA': Atlas 200I A2 / 310B SoC boards, npu-smi 25.x)
are read, each chip keyed by its NPU and chip ids; a Power(W) of 0.0 is kept in the chip's readings and said."""

from __future__ import annotations

from gpuvet.captures import npu_smi
from gpuvet.captures.records import ListedParse
from gpuvet.captures.text import clean

_HEAD = """+------------------------------------------------------------------------------------+
| npu-smi 25.3.0                                   Version: 25.3.0                   |
+-------------------------------+-----------------+----------------------------------+
| NPU     Name                  | Health          | Power(W)     Temp(C)           Hugepages-Usage(page) |
| Chip    Device                | Bus-Id          | AICore(%)    Memory-Usage(MB)                        |
+===============================+=================+==================================+
"""


def _parse(text: str) -> ListedParse:
    return npu_smi.parse(clean(text).lines)


def test_a_chip_without_a_bus_id_is_read_by_its_ids() -> None:
    out = _parse(_HEAD + "| 0       Ascend310B4           | OK              | 8.2           51               0    / 0  |\n"
                 "| 0       0                     | NA              | 3            1200  / 15610               |\n"
                 "+===============================+=================+==================================+\n")
    [chip] = out.modules
    assert (chip.label, chip.name, chip.bus_id, chip.health) == ("NPU 0 chip 0", "Ascend310B4", None, "OK")
    assert chip.memory_mib == 15610 and chip.temperature_c == 51
    assert chip.state is not None and chip.state.power_w == 8.2 and chip.state.busy_pct == 3
    assert out.driver == "25.3.0" and "npu-smi info" in out.kinds


def test_two_chips_without_bus_ids_stay_two() -> None:
    rows = "".join(f"| {n}       xxx                   | OK              | 10.4          66               0 / 0 |\n"
                   f"| 0       {n}                     | N/A             | 0            957   / 10810            |\n"
                   for n in (0, 1))
    out = _parse(_HEAD + rows)
    assert [m.label for m in out.modules] == ["NPU 0 chip 0", "NPU 1 chip 0"]
    assert all(m.bus_id is None for m in out.modules)


def test_zero_power_is_kept_and_said() -> None:
    out = _parse(_HEAD + "| 3 310B1 | Alarm | 0.0 49 15 / 15 |\n| 0 3 | 0000:11:00.0 | 0 600 / 7578 |\n")
    [chip] = out.modules
    assert chip.state is not None and chip.state.power_w == 0.0 and chip.health == "Alarm"
    assert any("0.0 W" in n and "NPU 3 chip 0 (Health Alarm)" in n for n in out.notes)


def test_a_drawing_chip_says_no_zero_power() -> None:
    out = _parse(_HEAD + "| 3 310B1 | OK | 7.5 49 15 / 15 |\n| 0 3 | 0000:11:00.0 | 0 600 / 7578 |\n")
    assert out.modules and not any("0.0 W" in n for n in out.notes)


def test_a_process_row_is_not_a_chip_without_a_bus() -> None:
    out = _parse(_HEAD + "| 0 xxx | OK | 10.4 66 0 / 0 |\n| 0 0 | NA | 0 957 / 10810 |\n"
                 "+---------------------------+-----------------+------------------------------+\n"
                 "| NPU     Chip              | Process id      | Process name             | Process memory(MB)|\n"
                 "| 0       0                 | 2701            | python3                  | 120               |\n")
    assert [m.label for m in out.modules] == ["NPU 0 chip 0"]
