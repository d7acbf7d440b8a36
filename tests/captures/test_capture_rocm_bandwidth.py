# ruff: noqa: E501  (rocm-bandwidth-test's lines as it prints them)
"""rocm-bandwidth-test's copy matrices pasted without their `Device:` list, and cells no copy reaches
(review 53): constructed in the tool's format (rocm_bandwidth_test 2.6's -a output)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpuvet.cli.app import main

UNI = """          RocmBandwidthTest Version: 2.6.0

          Unidirectional copy peak bandwidth GB/s

          D/D       0           1           2           3

          0         N/A         28.411      28.410      28.402

          1         29.013      1271.223    {c12}      37.512

          2         29.016      37.541      1270.871    37.515

          3         29.019      37.507      37.522      1271.015
"""
BIDIR = """          Bidirectional copy peak bandwidth GB/s

          D/D       0           1           2

          0         N/A         48.226      48.102

          1         48.226      N/A         {c12}

          2         48.102      {c12}       N/A
"""
DEVICES = """          Device: 0,  AMD EPYC 7763 64-Core Processor
          Device: 1,  AMD Instinct MI250X,  GPU-1a2b3c4d5e6f7081,  c1:0.0
          Device: 2,  AMD Instinct MI250X,  GPU-2a2b3c4d5e6f7082,  c6:0.0
          Device: 3,  AMD Instinct MI250X,  GPU-3a2b3c4d5e6f7083,  c9:0.0
"""


def _doctor(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str) -> tuple[int, dict[str, Any]]:
    path = tmp_path / "rbt.txt"
    path.write_text(text)
    code = main(["doctor", "--from", str(path), "--json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    return code, json.loads(out) if out else {}


def _pairs(data: dict[str, Any]) -> set[tuple[str, tuple[str, ...]]]:
    return {(f["cause"], tuple(f.get("between") or ())) for f in data["findings"]}


@pytest.mark.parametrize("listed", [True, False])
def test_a_dead_gpu_pair_is_judged_with_or_without_the_device_list(capsys, tmp_path, listed) -> None:
    text = UNI.format(c12="0.000")
    if listed:
        text = text.replace("2.6.0\n", "2.6.0\n" + DEVICES)
    code, data = _doctor(capsys, tmp_path, text)
    assert code == 1 and ("link_down", ("GPU 0", "GPU 1")) in _pairs(data), data["findings"]
    if not listed:
        assert any("no `Device:` list" in n and "(1, 2, 3)" in n for n in data["notes"]), data["notes"]


def test_a_bidirectional_matrix_alone_without_the_list_is_left_unread_with_a_note(capsys, tmp_path) -> None:
    code, data = _doctor(capsys, tmp_path, BIDIR.format(c12="0.000") + "$ nvidia-smi -L\nGPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-11111111-2222-3333-4444-555555555555)\n")
    assert "link_down" not in {c for c, _ in _pairs(data)}
    assert any("without the `Device:` list" in n for n in data["notes"]), data["notes"]
    assert any("not output gpuvet reads" in n for n in data["notes"]), data["notes"]


def test_a_cell_no_copy_reaches_is_left_unread_and_said(capsys, tmp_path) -> None:
    code, data = _doctor(capsys, tmp_path, UNI.format(c12="9" * 400).replace("2.6.0\n", "2.6.0\n" + DEVICES))
    assert code in (0, 1) and any("the 1 -> 2 copy" in n and "not a finite number" in n for n in data["notes"]), data["notes"]
    assert not any("inf" in json.dumps(f["evidence"]) for f in data["findings"]), data["findings"]
