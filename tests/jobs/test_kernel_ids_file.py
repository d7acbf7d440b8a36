"""doctor's kernel identities of a captured file (issue 43): read a MiB at a time, only the identity lines
decoded, they are the identities of the file's whole text, whatever its line ends, packing or line lengths."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from gpuvet.doctor.kernel_ids import _file_lines, _identities, kernel_identities
from gpuvet.errors import CaptureError

IDENTITY = ["NVRM: GPU Board Serial Number: 99 (before any identity line: no bus)",
            "NVRM: GPU at PCI:0000:3a:00: GPU-ab12", "NVRM: GPU Board Serial Number: 1652023000058 \u00e9",
            "NVRM: GPU at PCI:0000:9a:00.0: GPU-cd34"]


def _log(end: str, filler: int) -> str:
    """The identity lines among ``filler`` ordinary kernel lines each, so they fall on both sides of a MiB's seam."""
    noise = [f"[{i:10.3f}] usb 1-1.{i % 7}: new high-speed USB device number {i}" for i in range(filler)]
    return end.join(noise + IDENTITY[:2] + noise + IDENTITY[2:] + noise + [""])


@pytest.mark.parametrize("end", ["\n", "\r\n", "\r"])
@pytest.mark.parametrize("packed", [False, True])
def test_a_files_identities_are_its_texts(tmp_path: Path, end: str, packed: bool) -> None:
    text = _log(end, 9000)  # about 2 MiB: the lines cross the MiB pieces' seams
    path = tmp_path / ("kern.log.gz" if packed else "kern.log")
    data = text.encode()
    path.write_bytes(gzip.compress(data) if packed else data)
    assert _identities(_file_lines(str(path))) == kernel_identities(text)
    assert kernel_identities(text) == {"0000:3A:00.0": ("GPU-ab12", "1652023000058"), "0000:9A:00.0": ("GPU-cd34", None)}


def test_a_binary_file_names_no_board(tmp_path: Path) -> None:
    path = tmp_path / "core"
    path.write_bytes(b"\x00\x01" + "\n".join(IDENTITY).encode())
    with pytest.raises(CaptureError):
        _file_lines(str(path))
