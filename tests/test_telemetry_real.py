"""Public telemetry of healthy GPUs (tests/data/telemetry/real/, each with a NAME.source.md naming
where it came from and why it is believed healthy): `watch --replay` reads each one the reader
knows without an overheating forecast, and refuses the shapes it does not know in one paragraph
with exit 2, never a traceback. The refused ones are kept: they are what people really log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuvet.cli.app import main

REAL = Path(__file__).parent / "data" / "telemetry" / "real"
FILES = sorted(p.name for p in REAL.iterdir() if not p.name.endswith(".source.md"))

# Shapes the replay does not read today (the reader is not this test's to change): why, per file.
REFUSED = {
    "gpu20gb_idle_2h40m_noheader.csv": "--format=csv,noheader log: no header line to name the columns",
    "rtx4060_gtx1070_chess_2days_noheader.csv": "--format=csv,noheader,nounits log: no header line",
    "rtx5080_laptop_15h_table.txt": "the default nvidia-smi table printed in a loop, not a replay format",
}


def _replay(capsys: pytest.CaptureFixture[str], name: str) -> tuple[int, str, str]:
    code = main(["watch", "--replay", str(REAL / name), "--json", "--no-log"])
    out, err = capsys.readouterr()
    return code, out, err


def test_every_file_names_its_source() -> None:
    assert len(FILES) >= 3
    for name in FILES:
        side = REAL / f"{name}.source.md"
        assert side.is_file(), f"{name} has no {side.name}"
        text = side.read_text(encoding="utf-8")
        assert "https://github.com/" in text and "healthy" in text, side.name


@pytest.mark.parametrize("name", FILES)
def test_healthy_log_loads_without_a_forecast(capsys: pytest.CaptureFixture[str], name: str) -> None:
    if name in REFUSED:
        pytest.skip(f"the replay reader refuses it: {REFUSED[name]}")
    code, out, err = _replay(capsys, name)
    assert code in (0, 1), err
    doc = json.loads(out)
    assert doc["samples"] > 0
    kinds = [e["kind"] for e in doc["events"]]
    assert "overheat_forecast" not in kinds, f"{name}: a healthy module got a forecast"


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_shape_is_one_paragraph_exit_2(capsys: pytest.CaptureFixture[str], name: str) -> None:
    code, out, err = _replay(capsys, name)
    assert code == 2
    assert err.startswith("error:") and name in err
    assert "Traceback" not in err and out == ""
