# ruff: noqa: E501  (the runtimes' lines as they print them)
"""Error lines of different kinds that name one cause on one module (review 53): doctor keeps one finding per
cause and module, and that finding keeps every kind, line and advice (constructed in HIP's, HSA's and
PyTorch's formats)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuvet.cli.app import main

HIP = """:0:rocdevice.cpp            :2875: 5474838604 us: [pid:12345 tid:0x7f00] Callback: Queue 0x7f0 aborting with error : HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: The agent attempted to access memory beyond the largest legal address. code: 0x29
RuntimeError: HIP error: invalid device function
HIP kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
For debugging consider passing AMD_SERIALIZE_KERNEL=3
"""
CUDA = """RuntimeError: CUDA error: an illegal memory access was encountered
RuntimeError: CUDA error: no kernel image is available for execution on the device
CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
"""


@pytest.mark.parametrize(("text", "said"), [(HIP, "invalid device function"), (CUDA, "no kernel image")])
def test_every_kind_and_line_survives_the_merge_of_one_cause(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                            text: str, said: str) -> None:
    path = tmp_path / "app.log"
    path.write_text(text)
    assert main(["doctor", "--from", str(path), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    [f] = [f for f in data["findings"] if f["cause"].startswith("application_")]
    assert said in json.dumps(f["evidence"]) and len(f["evidence"]["kinds"]) == 2, f["evidence"]
    assert [ln.split(" line ")[1].split(" ")[0] for ln in f["evidence"]["lines"]] == ["1", "2"]
