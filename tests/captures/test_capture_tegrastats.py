"""Jetson's tegrastats (issue 46, TOOLS), on sample lines written here in its two spellings (JetPack 5/6's
lower-case sensors, older boards' 'GR3D_FREQ N%@MHz' and 'GPU@…C'): read, never refused, as one integrated GPU with
the last sample's load and temperature; a sensor at tegrastats' no-reading value (-256C) is no temperature; nothing
is judged (tegrastats prints no verdict)."""

from __future__ import annotations

from gpuvet.captures.read import parse_text

_NEW = ("RAM 3012/7620MB (lfb 9x4MB) SWAP 0/3810MB (cached 0MB) CPU [20%@1728,11%@1728,off,off] EMC_FREQ 3% "
        "GR3D_FREQ {load}% cpu@47.1C soc2@44.0C soc0@45.3C gpu@{temp}C tj@{tj}C soc1@44.2C VDD_IN 6100mW/6000mW\n")
_OLD = ("RAM 1800/3964MB (lfb 120x4MB) SWAP 0/1982MB (cached 0MB) CPU [9%@1479,4%@1479,3%@1479,5%@1479] EMC_FREQ 2%@1600 "
        "GR3D_FREQ 61%@921 APE 25 PLL@38C CPU@40.5C PMIC@50C GPU@39.5C AO@47C thermal@40C\n")


def test_tegrastats_orin_samples_are_one_gpu_with_the_last_load_and_temperature() -> None:
    fc = parse_text(_NEW.format(load=12, temp="50.2", tj="51.0") + _NEW.format(load=97, temp="58.4", tj="59.1"),
                    "tegra.txt")
    assert fc.smi is not None and len(fc.smi.modules) == 1
    fields = fc.smi.modules[0].fields
    assert fields["Utilization/Gpu"] == "97 %" and fields["Temperature/GPU Current Temp"] == "58 C"
    assert "Jetson" in fc.smi.modules[0].product and "tegrastats" in fc.kinds
    assert fc.app_errors.errors == []


def test_tegrastats_old_boards_clock_and_a_sensor_off_is_no_temperature() -> None:
    old = parse_text(_OLD, "tegra.txt")
    assert old.smi is not None and old.smi.modules[0].fields["Clocks/Graphics"] == "921 MHz"
    assert old.smi.modules[0].fields["Temperature/GPU Current Temp"] == "40 C"
    off = parse_text(_NEW.format(load=0, temp="-256", tj="45.0"), "tegra.txt")
    assert off.smi is not None and "Temperature/GPU Current Temp" not in off.smi.modules[0].fields
