"""Batch K's misses on AMD, DCGM and topology output (issue 46), each fixed for its class of input and tested on
lines written here in the tool's own form: amdgpu's PSP (the security processor that loads the module's
firmware) failing while the driver loads; nvidia-smi topo -m's NIC rows pasted without the header and GPU rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuvet.cli.app import main
from tests.support.helpers import capture_findings, capture_json


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


def test_a_psp_failure_while_a_reset_resumes_the_module_is_the_failed_resets_not_an_init_failure(
        tmp_path: Path) -> None:
    log = ("[  812.110201] amdgpu 0000:43:00.0: amdgpu: GPU reset begin!\n"
           "[  812.431876] amdgpu 0000:43:00.0: amdgpu: PSP is resuming...\n"
           "[  812.623007] [drm:psp_hw_start [amdgpu]] *ERROR* PSP create ring failed!\n"
           "[  812.623402] amdgpu 0000:43:00.0: amdgpu: GPU reset(2) failed\n")
    found = capture_findings(tmp_path, log)
    assert found[("module_needs_reset", "0000:43:00.0")] == "critical"
    assert ("module_init_failed", "0000:43:00.0") not in found


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


def test_topo_nic_rows_without_header_or_gpu_rows_are_said_naming_what_is_missing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for sep in ("\t", "     "):  # XR1: a GPU tool's own rows are read as can't-tell (exit 0), never refused
        path = tmp_path / "nics.txt"
        path.write_text("```text\n" + _nic_rows(sep) + "```\n")
        assert main(["doctor", "--from", str(path)]) == 0
        got = capsys.readouterr()
        err = " ".join((got.out + got.err).split())
        assert "rows NIC0 to NIC2 (lines 2-4) without the matrix's header line or any GPU row" in err
        assert "4 GPU columns" in err and "NIC0 PIX to GPU0's column" in err and "NIC2 PIX to GPU3's column" in err
    path = tmp_path / "x.txt"  # NIC rows whose X do not agree on a GPU count are no topo -m rows: the plain refusal
    path.write_text("NIC0  X  PIX\nNIC1  PIX  PIX  PIX  X\n")
    assert main(["doctor", "--from", str(path)]) == 2
    assert "nothing in it is output gpuvet can read" in " ".join(capsys.readouterr().err.split())


def test_a_dcgm_failure_reason_code_is_read_and_imex_not_ready_is_no_gpu_fault(tmp_path: Path) -> None:
    condition = ("NodeCondition GpuNvlinkWatch=True\n```\nErrorCode:DCGM_FR_IMEX_UNHEALTHY GPU:3 IMEX daemon status is "
                 "-1 (not READY)\nRecommended Action=CONTACT_SUPPORT;\n```\n")
    assert capture_findings(tmp_path, condition) == {("imex_not_ready", "GPU 3"): "info"}
    logged = "2025-11-02T08:14:07Z ERROR health check: DCGM_FR_PCI_REPLAY_RATE, GPU 5: PCIe replay rate is too high\n"
    # any other code: the cause knowledge/dcgm_errors.yaml names for it (issue 46, PHRD), at DCGM's weight
    assert capture_findings(tmp_path, logged) == {("pcie_aer_errors", "GPU 5"): "warn"}
    assert capture_findings(tmp_path, "DCGM_FR_IMEX_UNHEALTHY: IMEX daemon status is -3\n") == {
        ("imex_not_ready", "GPU (id not in the line)"): "info"}


def _rig(gpu: int, width: int, limit: float, bus_id: str) -> str:
    return (f"- **GPU {gpu}:** NVIDIA RTX A6000 | 49140 MiB | driver 580.95.05 | VBIOS 94.02.5C.00.02 | "
            "persistence=Disabled\n"
            f"  - **Power:** limit={limit:.2f} W (default=300.00 W, max=300.00 W) | current_draw=21.07 W\n"
            f"  - **PCIe:** x{width} lanes negotiated (GPU max x16, Gen up to 4) | bus {bus_id}\n")


def test_a_rig_reports_gpu_bullets_are_read_as_nvidia_smis_fields_and_judged_from_them(tmp_path: Path) -> None:
    head = "# rig report\n\n## GPU hardware\n\n"
    healthy = head + _rig(0, 16, 300, "00000000:41:00.0") + _rig(1, 16, 300, "00000000:C1:00.0")
    assert capture_findings(tmp_path, healthy) == {}
    narrow = head + _rig(0, 16, 300, "00000000:41:00.0") + _rig(1, 8, 300, "00000000:C1:00.0")
    assert capture_findings(tmp_path, narrow) == {("pcie_link_downgraded", "0000:C1:00.0"): "warn"}
    listed = capture_json(tmp_path, healthy, "inventory")["modules"]
    assert [(m["bus_id"], m["pcie_width_current"], m["power_limit_w"]) for m in listed] == [  # type: ignore[index,union-attr]
        ("0000:41:00.0", 16, 300.0), ("0000:C1:00.0", 16, 300.0)]


def test_a_one_line_list_of_gpus_is_no_rig_report_bullet() -> None:
    """An issue template's hardware line ('GPU 0: NAME | GPU 1: NAME') restates no field of the report's."""
    from gpuvet.captures import rig_report
    from gpuvet.captures.text import clean

    lines = clean("GPU 0: NVIDIA GH200 144G HBM3e | GPU 1: NVIDIA GH200 144G HBM3e\n").lines
    got = rig_report.parse(lines)
    assert not got.claimed and not got.modules and not got.notes


def _xmrig(stamp: str, index: int, address: str, fields: str) -> str:
    return f"{stamp}  opencl   #{index} {address}  {fields}\n"


def test_xmrig_opencl_health_lines_list_the_cards_and_a_zero_reading_is_no_fault(tmp_path: Path) -> None:
    stamp = "[2024-06-11 03:22:41.118]"
    log = (_xmrig(stamp, 0, "01:00.0", "131W 61C 2210RPM 1350/1750MHz") +
           _xmrig(stamp, 1, "02:00.0", "  0W  0C    0RPM 0/0MHz") +
           _xmrig(stamp, 2, "05:00.0", "128W 63C 2305RPM 1350/1750MHz"))
    assert capture_findings(tmp_path, log) == {}
    data = capture_json(tmp_path, log, "inventory")
    assert [m["bus_id"] for m in data["modules"]] == ["0000:01:00.0", "0000:02:00.0", "0000:05:00.0"]  # type: ignore
    assert any("line(s) 2 read 0 in every field" in n and "not a card at 0 C" in n for n in data["notes"])  # type: ignore
    plain = log.replace(stamp + "  ", "")  # grep'd without the miner's timestamp
    assert len(capture_json(tmp_path, plain, "inventory")["modules"]) == 3  # type: ignore[arg-type]
