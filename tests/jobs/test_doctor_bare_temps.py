"""Issue 46: a temperature read on a table whose model publishes no slowdown or shutdown figure (a model the
catalog lacks, a name the table cut) is said once, in the answer's closing line, not a headline naming every
module; a reading beyond every design's limit is a finding whatever the model. nvidia-smi's default table
(the 535 layout) written here; the readings made up."""

from __future__ import annotations

from functools import partial

import pytest

from gpuvet.cli.app import main
from gpuvet.knowledge import threshold
from gpuvet.node.catalog import CATALOG
from tests.support.helpers import doctor_capture, found_causes, smi_table

_doctor = partial(doctor_capture, name="smi.txt")


def _table(name: str, temps: tuple[int, ...]) -> str:
    return smi_table(*((name, t) for t in temps))


def test_uncatalogued_temperatures_are_said_once_in_the_closing_line(capsys: pytest.CaptureFixture[str],
                                                                      tmp_path) -> None:
    path = tmp_path / "smi.txt"
    path.write_text(_table("Tesla P40", (34, 29, 41)), encoding="utf-8")
    code = main(["doctor", "--from", str(path)])
    out = capsys.readouterr().out
    head, tail = (" ".join(part.split()) for part in out.split("\ncan't tell:"))
    assert code == 0 and "°C" not in head and "no cause found:" in head, head
    assert tail.count("temperature(s) read") == 1 and "3 temperature(s) read whose model publishes no" in tail, tail
    _, data = _doctor(capsys, tmp_path, _table("Tesla P40", (34, 29, 41)))
    assert data["cant_tell"]["figures"] == [] and data["cant_tell"]["temperatures"].startswith("3 temperature(s)")
    assert "thermal_state" in data["cant_tell"]["checks"] and not data["findings"]


def test_a_reading_beyond_every_design_s_limit_is_a_finding_whatever_the_model(capsys: pytest.CaptureFixture[str],
                                                                               tmp_path) -> None:
    code, data = _doctor(capsys, tmp_path, _table("Tesla P40", (112, 52)))
    assert code == 1 and found_causes(data) == {("temperature_beyond_design", "0000:19:00.0")}, data["findings"]
    (f,) = data["findings"]
    assert f["severity"] == "warn" and f["evidence"]["beyond_c"] == threshold("temperature_beyond_design_c")
    # no throttle reason was captured: the reading is a sensor fault or a cooling failure, not throttling
    assert "throttles" not in f["title"] and "sensor fault or a cooling failure" in f["evidence"]["note"]


def test_the_beyond_design_threshold_is_above_every_catalogued_limit() -> None:
    """The figure is the design's: above every slowdown and shutdown temperature a catalogued model publishes."""
    limits = [c for m in CATALOG.values() for c in (m.slowdown_c, m.shutdown_c) if c is not None]
    assert limits and threshold("temperature_beyond_design_c") > max(limits)


def test_an_amd_junction_at_its_stated_normal_is_not_a_finding(capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    """AMD states junction (hotspot) readings up to 110 °C are expected under load, and amd-smi reports that sensor
    first: 110 °C on a model without a published limit is not beyond the design."""
    assert threshold("temperature_beyond_design_c") > 110
    code, data = _doctor(capsys, tmp_path, _table("Tesla P40", (110, 52)))
    assert code == 0 and not data["findings"], data["findings"]
