"""hipBusBandwidth (MX1, issue 46): its summary rows read as bandwidthTest's host copies, priced against the design
of the device its line names. Written for this test in the sample's own layout (device line, 'test atts units
median mean stddev min max' header, tab-separated rows; ROCm's hipBusBandwidth); the figures are made up."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuvet.captures import cuda_samples
from gpuvet.captures.text import clean
from tests.support.helpers import doctor_capture, found_causes

_ROWS = "".join(f"   {t}_Bandwidth_pinned\t{size}\tGB/sec\t{{{k}}}\t{{{k}}}\t0.0100\t{{{k}}}\t{{{k}}}\t\n"
                for t, k in (("H2D", "h2d"), ("D2H", "d2h")) for size in ("+064By", "4kB", "524288kB"))
_TIMES = "        H2D_Time_pinned\t      1kB\t      ms\t0.0216\t0.0219\t0.0008\t0.0209\t0.0236\t\n"
HIP_BUS = ("Device:{name} Mem=192.0GB #CUs=304 Freq=2100Mhz  MallocMode=pinned\n"
           "                   test\t       atts\t       units\tmedian\tmean\tstddev\tmin\tmax\n" + _ROWS + _TIMES)


def test_its_largest_transfers_median_is_each_directions_figure() -> None:
    got = cuda_samples.parse(clean(HIP_BUS.format(name="AMD Instinct MI300X", h2d=50.5, d2h=51.0)).lines)
    assert got.matrices["hipBusBandwidth host_to_device (pinned)"] == [[50.5]]
    assert got.matrices["hipBusBandwidth device_to_host (pinned)"] == [[51.0]]
    assert got.kinds == ["hipBusBandwidth"] and [d.name for d in got.devices] == ["AMD Instinct MI300X"]


def test_a_slow_host_copy_is_judged_against_the_named_modules_link(capsys: pytest.CaptureFixture[str],
                                                                  tmp_path: Path) -> None:
    code, data = doctor_capture(capsys, tmp_path, HIP_BUS.format(name="AMD Instinct MI300X", h2d=50.5, d2h=51.0))
    assert code == 0 and data["findings"] == []
    code, data = doctor_capture(capsys, tmp_path, HIP_BUS.format(name="AMD Instinct MI300X", h2d=6.2, d2h=51.0))
    assert ("link_degraded", None) in found_causes(data)


def test_an_excerpt_without_its_device_line_is_read_and_not_priced(capsys: pytest.CaptureFixture[str],
                                                                  tmp_path: Path) -> None:
    text = "\n".join(HIP_BUS.format(name="x", h2d=6.2, d2h=6.1).splitlines()[2:]) + "\n"
    code, data = doctor_capture(capsys, tmp_path, text)
    assert code == 0 and data["findings"] == []
