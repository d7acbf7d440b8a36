"""xpu-smi's telemetry (issue 46 dev set dev_i_other; leftover of batch G/H): ``stats -d N`` (its box of metric
rows, a multi-tile device's ``Tile 0: v; Tile 1: v`` cells, a fragment pasted without its Device ID row) and
``dump -m …`` (CSV, N/A where a metric is not read) are read: each device listed, its core temperature kept, and
its own counters judged by what they mean (an uncorrectable error critical, a reset a warning, correctable errors
said but not judged: no bound from a source). Written in xpu-smi's layout; figures made up."""

from __future__ import annotations

import json
from pathlib import Path

from gpuvet.captures import xpu_smi
from gpuvet.captures.text import clean
from gpuvet.cli.app import main

RULE = "+-----------------------------+--------------------------------------------------+\n"


def _stats(device: str = "0", counters: dict[str, str] | None = None, temperature: str = "47") -> str:
    rows = {"Reset": "0", "Programming Errors": "0", "Driver Errors": "0", "Cache Errors Correctable": "0",
            "Cache Errors Uncorrectable": "0", "Mem Errors Correctable": "0", "Mem Errors Uncorrectable": "0"}
    rows.update(counters or {})
    return (f"$ xpu-smi stats -d {device}\n" + RULE + f"| Device ID                   | {device:<48} |\n" + RULE +
            "| GPU Utilization (%)         | 12                                               |\n"
            "| EU Array Active (%)         |                                                  |\n"
            "| Compute Engine Util (%)     | 9; Engine 0: 9                                   |\n" + RULE +
            "".join(f"| {k:<27} | {v:<48} |\n" for k, v in rows.items()) + RULE +
            "| GPU Power (W)               | 118                                              |\n"
            f"| GPU Core Temperature (C)    | {temperature:<48} |\n"
            "| GPU Memory Temperature (C)  |                                                  |\n"
            "| GPU Memory Used (MiB)       | 2210                                             |\n" + RULE)


def _doctor(capsys, tmp_path: Path, text: str) -> tuple[list[tuple[str, str, str]], dict]:
    path = tmp_path / "xpu.txt"
    path.write_text(text)
    main(["doctor", "--from", str(path), "--json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    got = json.loads(out)
    return [(f["cause"], f["module"], f["severity"]) for f in got["findings"]], got


def test_stats_lists_the_device_with_its_temperature_and_counters() -> None:
    got = xpu_smi.parse(clean(_stats()).lines)
    assert got.kinds == ["xpu-smi stats"]
    [m] = got.modules
    assert (m.label, m.temperature_c, m.tool) == ("GPU 0", 47.0, "xpu-smi stats")
    assert ("xpu-smi stats: Cache Errors Uncorrectable", "0") in m.ras and ("xpu-smi stats: Reset", "0") in m.ras


def test_an_uncorrectable_error_is_critical_a_reset_warns_and_zeros_are_clear(capsys, tmp_path: Path) -> None:
    bad = _stats("1", {"Mem Errors Uncorrectable": "2"})
    assert _doctor(capsys, tmp_path, bad)[0] == [("module_reported_critical", "GPU 1", "critical")]
    assert _doctor(capsys, tmp_path, _stats("1", {"Reset": "3"}))[0] == [("module_reported_warning", "GPU 1", "warn")]
    assert _doctor(capsys, tmp_path, _stats("1"))[0] == []


def test_correctable_errors_alone_are_said_and_not_judged(capsys, tmp_path: Path) -> None:
    findings, got = _doctor(capsys, tmp_path, _stats("0", {"Cache Errors Correctable": "14"}))
    assert findings == []
    said = [s for s in got["steps"] if s.get("check") == "tool_verdicts"]
    assert said and "Cache Errors Correctable '14'" in json.dumps(said) and "not judged" in json.dumps(said)


def test_a_multi_tile_cell_is_read_tile_by_tile() -> None:
    text = _stats("0", {"Reset": "Tile 0: 0; Tile 1: 2"}, temperature="Tile 0: 51; Tile 1: 63")
    [m] = xpu_smi.parse(clean(text).lines).modules
    assert m.temperature_c == 63.0 and ("xpu-smi stats: Reset", "2") in m.ras


def test_a_fragment_without_its_device_row_takes_the_device_from_the_command_line() -> None:
    rows = ("| GPU Frequency (MHz)         | 0                                                |\n"
            "| GPU Core Temperature (C)    | 38                                               |\n")
    [m] = xpu_smi.parse(clean("```\nxpu-smi stats -d 2\n\n" + rows + "```\n").lines).modules
    assert (m.label, m.temperature_c) == ("GPU 2", 38.0)
    assert xpu_smi.parse(clean(rows).lines).modules == []  # no command line: whose rows they are is not known


DUMP = ("$ xpu-smi dump -d 0,1 -m 1,3,12,30,35\n"
        "Timestamp, DeviceId, GPU Power (W), GPU Core Temperature (Celsius Degree), Reset Counter, "
        "GPU Memory Errors Uncorrectable, Throttle reason\n"
        "09:41:02.112,    0, 301.50, 61.00,    0,    0, Not Throttled\n"
        "09:41:02.112,    1,  N/A,  N/A,  N/A,  N/A, N/A\n"
        "09:41:03.112,    0, 305.75, 64.50,    0, {ue}, Not Throttled\n"
        "09:41:03.112,    1, 122.10, 44.00,    0,    0, {reason}\n"
        "09:41:04.112,")


def test_dump_lists_each_device_and_na_is_no_reading() -> None:
    got = xpu_smi.parse(clean(DUMP.format(ue="0", reason="Not Throttled")).lines)
    assert got.kinds == ["xpu-smi dump"]
    assert [(m.label, m.temperature_c) for m in got.modules] == [("GPU 0", 64.5), ("GPU 1", 44.0)]
    assert dict(got.modules[1].ras)["xpu-smi dump: Reset"] == "0"  # the later sample's 0, not N/A


def test_dump_judges_an_uncorrectable_count_and_a_thermal_throttle(capsys, tmp_path: Path) -> None:
    text = DUMP.format(ue="1", reason="Thermal Excursion")
    assert sorted(_doctor(capsys, tmp_path, text)[0]) == [("module_reported_critical", "GPU 0", "critical"),
                                                          ("module_reported_warning", "GPU 1", "warn")]
    assert _doctor(capsys, tmp_path, DUMP.format(ue="0", reason="Not Throttled"))[0] == []


STATS_JSON = """$ xpu-smi stats -d 1 -j
{
    "device_id": 1,
    "device_level": [
        {"metrics_type": "XPUM_STATS_POWER", "value": 231.5},
        {"metrics_type": "XPUM_STATS_GPU_CORE_TEMPERATURE", "value": 58.0},
        {"metrics_type": "XPUM_STATS_RAS_ERROR_CAT_RESET", "value": 0},
        {"metrics_type": "XPUM_STATS_RAS_ERROR_CAT_CACHE_ERRORS_UNCORRECTABLE", "value": 0}
    ],
    "tile_level": [
        {"tile_id": 0, "data_list": [
            {"metrics_type": "XPUM_STATS_GPU_CORE_TEMPERATURE", "value": 61.5},
            {"metrics_type": "XPUM_STATS_RAS_ERROR_CAT_NON_COMPUTE_ERRORS_UNCORRECTABLE", "value": {ue}}
        ]}
    ]
}
"""


def test_stats_json_is_read_per_device_and_tile(capsys, tmp_path: Path) -> None:
    [m] = xpu_smi.parse(clean(STATS_JSON.replace("{ue}", "0")).lines).modules
    assert (m.label, m.temperature_c) == ("GPU 1", 61.5)
    assert dict(m.ras)["xpu-smi stats: Memory Errors Uncorrectable"] == "0"
    assert _doctor(capsys, tmp_path, STATS_JSON.replace("{ue}", "4"))[0] == [("module_reported_critical", "GPU 1",
                                                                             "critical")]
