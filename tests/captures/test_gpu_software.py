"""Issue 46 (OX1): a GPU software stack's lines no reader reads are read as '<source> lines gpuvet has no reader
for', never refused as unreadable and never judged clear (captures/gpu_software.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuvet.captures.gpu_software import KIND, UnreadGpuText
from gpuvet.captures.read import parse_text
from gpuvet.errors import CaptureError
from tests.support.helpers import run

# written for this test in each tool's own line form (RCCL/NCCL's TRACE topology summary, RDC's daemon log,
# FreeBSD drm-kmod's firmware loader)
_RCCL = "=== System : maxBw 24.0 totalBw 96.0 ===\nCPU/0 (1/1/2)\n+ PCI[24.0] - GPU/C1000 (0)\n==========\n"
_RDC = ("1700000000.101 ERROR RdcMetricFetcherImpl.cc(99): XGMI throughput not supported on GPU 0\n"
        "1700000000.102 INFO RdcRasLib.cc(40): loaded librdc_ras.so\n")
_DRM = ("radeon_sos.bin: could not load binary firmware /boot/firmware/radeon_sos.bin either\n"
        "drmn1: successfully loaded firmware image 'amdgpu/radeon_sos.bin'\n")


@pytest.mark.parametrize(("text", "source", "lines"), [(_RCCL, "RCCL/NCCL", 4), (_RDC, "ROCm RDC", 2),
                                                       (_DRM, "FreeBSD drm-kmod", 2)])
def test_a_gpu_stacks_unread_lines_are_said_with_their_source_and_count(text: str, source: str, lines: int) -> None:
    fc = parse_text(text, "log.txt")
    assert fc.kinds == [KIND]
    assert isinstance(fc.kernel, UnreadGpuText) and (fc.kernel.source, fc.kernel.unread) == (source, lines)
    assert any(f"{source} lines gpuvet has no reader for: {lines} line(s) not understood" in n for n in fc.notes)


@pytest.mark.parametrize("text", ["hello world\nno devices here\n", "backup finished\nrsync: 12 files\n",
                                  "frobd[12]: NVRM frobbed the RCCL ring zz\nmore\n",
                                  "| Field | Value |\n|---|---|\n| `DCGM_FI_DEV_ECC_SBE_VOL_TOTAL` | 12 |\n",
                                  "We plan to move the RCCL ring onto XGMI next week.\nDoes hipMemcpy wait here?\n"])
def test_text_naming_no_gpu_software_or_an_nvrm_line_stays_refused(text: str) -> None:
    with pytest.raises(CaptureError):
        parse_text(text, "none.txt")


def test_doctor_finds_nothing_and_its_kernel_checks_cant_tell_with_the_count(tmp_path: Path) -> None:
    path = tmp_path / "rdc.txt"
    path.write_text(_RDC)
    code, out, err = run(["doctor", "--from", str(path), "--json"])
    assert code == 0, err
    got = json.loads(out)
    assert got["findings"] == []
    said = json.dumps(got)
    assert "2 ROCm RDC line(s) not understood" in said and "no Xid" not in said


def test_beside_a_kernel_excerpt_with_no_gpu_line_the_xid_check_still_cant_tell(tmp_path: Path) -> None:
    """A GPU stack's unread lines beside another file's kernel lines of NICs and disks: never 'no Xid'."""
    kern, rdc = tmp_path / "kern.txt", tmp_path / "rdc.txt"
    kern.write_text("[   12.345678] e1000e 0000:00:1f.6 eno1: NIC Link is Up 1000 Mbps Full Duplex\n"
                    "[   13.100000] EXT4-fs (sda1): mounted filesystem with ordered data mode\n")
    rdc.write_text(_DRM)
    code, out, err = run(["doctor", "--from", str(kern), "--from", str(rdc), "--json", "--verbose"])
    assert code == 0, err
    said = json.dumps(json.loads(out))
    assert "2 FreeBSD drm-kmod line(s) not understood" in said and "no Xid:" not in said


def test_what_the_lines_name_is_said_as_printed_never_judged() -> None:
    rccl = parse_text(_RCCL, "rccl.txt")
    assert any("maxBw 24.0 totalBw 96.0 GB/s; links named: PCI 24.0 GB/s" in n for n in rccl.notes)
    drm = parse_text(_DRM, "drm.txt")
    assert any("1 firmware image(s) loaded (amdgpu/radeon_sos.bin)" in n for n in drm.notes)
