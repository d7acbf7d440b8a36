"""Batch K's misses on AMD, DCGM and topology output (issue 46), each fixed for its class of input and tested on
lines written here in the tool's own form: amdgpu's PSP (the security processor that loads the module's
firmware) failing while the driver loads; nvidia-smi topo -m's NIC rows pasted without the header and GPU rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuvet.cli.app import main
from tests.support.helpers import capture_findings


def _psp_boot(stamp: str, failure: str) -> str:
    return (f"{stamp} amdgpu 0000:2f:00.0: amdgpu: Will use PSP to load VCN firmware\n"
            f"{stamp} [drm:psp_hw_start [amdgpu]] *ERROR* {failure}\n"
            f"{stamp} [drm:psp_v11_0_ring_destroy [amdgpu]] *ERROR* Fail to stop psp ring\n")


def test_amdgpu_psp_failures_on_load_are_a_module_that_did_not_come_up(tmp_path: Path) -> None:
    for stamp in ("[   14.203117]", "[Tue Mar  4 10:12:40 2025]", "Mar  4 10:12:40 mi250-07 kernel: [   14.203117]"):
        for failure in ("PSP create ring failed!", "PSP load kdb failed!", "PSP tmr init failed!",
                        "PSP firmware loading failed"):
            assert capture_findings(tmp_path, _psp_boot(stamp, failure)) == {
                ("module_init_failed", "0000:2F:00.0"): "critical"}, (stamp, failure)


def test_psp_lines_that_are_no_failure_stay_clear(tmp_path: Path) -> None:
    healthy = ("[    5.998506] amdgpu 0000:2f:00.0: amdgpu: Will use PSP to load VCN firmware\n"
               "[    6.008707] amdgpu 0000:2f:00.0: firmware: direct-loading firmware amdgpu/psp_13_0_0_sos.bin\n"
               "[    6.120001] amdgpu 0000:2f:00.0: amdgpu: reserve 0x1300000 from 0x877c000000 for PSP TMR\n"
               "[    6.520334] [drm] Initialized amdgpu 3.54.0 20150101 for 0000:2f:00.0 on minor 1\n")
    assert capture_findings(tmp_path, healthy) == {}


def _nic_rows(sep: str) -> str:
    rows = [["PIX", "SYS", "SYS", "SYS", "X", "PXB"], ["PXB", "SYS", "SYS", "SYS", "PXB", "X"],
            ["SYS", "SYS", "NODE", "PIX"]]  # NIC0, NIC1 of a 4-GPU node, then NIC2 cut before its X
    return "".join(f"NIC{k}{sep}" + sep.join(r) + "\n" for k, r in enumerate(rows))


def test_topo_nic_rows_without_header_or_gpu_rows_are_refused_naming_what_is_missing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for sep in ("\t", "     "):
        path = tmp_path / "nics.txt"
        path.write_text("```text\n" + _nic_rows(sep) + "```\n")
        assert main(["doctor", "--from", str(path)]) == 2
        err = " ".join(capsys.readouterr().err.split())
        assert "rows NIC0 to NIC2 (lines 2-4) without the matrix's header line or any GPU row" in err
        assert "4 GPU columns" in err and "NIC0 PIX to GPU0's column" in err and "NIC2 PIX to GPU3's column" in err
    path = tmp_path / "x.txt"  # NIC rows whose X do not agree on a GPU count are no topo -m rows: the plain refusal
    path.write_text("NIC0  X  PIX\nNIC1  PIX  PIX  PIX  X\n")
    assert main(["doctor", "--from", str(path)]) == 2
    assert "nothing in it is output gpuvet can read" in " ".join(capsys.readouterr().err.split())
