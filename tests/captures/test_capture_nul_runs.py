"""A kernel log preallocated before a crash (newcomer 55): the file system leaves its unwritten tail as a
run of NUL bytes, then the fresh boot writes on. The NUL runs inside an otherwise-text file are dropped and
said (where, how many); the Xids before the crash are kept. A file that is mostly binary is still refused.
The log lines are written in dmesg -T's format; the figures are made up."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuvet.captures import read as capture_read
from gpuvet.errors import CaptureError

LOG = ("[Tue Nov 25 03:12:44 2026] NVRM: Xid (PCI:0000:3a:00): 48, pid=59117, name=python, An uncorrectable "
       "double bit error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0.\n"
       "[Tue Nov 25 03:14:09 2026] NVRM: Xid (PCI:0000:5d:00): 79, pid='<unknown>', name=<unknown>, GPU has "
       "fallen off the bus.\n")
BOOT = "[Tue Nov 25 03:20:01 2026] Linux version 6.8.0-48-generic (buildd@lcy02-amd64-010)\n"


def test_a_nul_run_inside_a_log_is_dropped_and_said(tmp_path: Path) -> None:
    path = tmp_path / "kern.log"
    path.write_bytes(LOG.encode() + b"\x00" * 4096 + BOOT.encode())
    fc = capture_read.read(str(path))
    assert [(x.bus_id, x.code) for x in fc.kernel.xids] == [("0000:3A:00.0", 48), ("0000:5D:00.0", 79)]
    assert any("4,096 NUL byte(s)" in n and "line 3" in n for n in fc.notes), fc.notes


@pytest.mark.parametrize("data", [b"\x00" * 70_000, b"\x00binary", "GPU 0 fine\n".encode("utf-16"),
                                  b"\x7fELF\x02\x01\x01\n" + bytes(range(256)) * 64])
def test_a_mostly_binary_file_is_still_refused(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "blob.bin"
    path.write_bytes(data)
    with pytest.raises(CaptureError, match="a binary file"):
        capture_read.read_text(str(path))
