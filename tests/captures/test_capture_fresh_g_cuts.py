"""Batch G's cut and undecorated pastes (issue 46): outputs whose title, header or name line is not
in the paste are read as the tool printed the rest. Inputs are constructed in each tool's own layout."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuvet.captures import amd_smi, nic_tools
from gpuvet.captures.read import parse_text
from gpuvet.captures.text import clean
from gpuvet.errors import CaptureError
from tests.captures.test_captures_fresh_c import run_json

_HEAD = "       GPU0         GPU1         GPU2         GPU3"


def _rows(cell: str) -> list[str]:
    return [f"GPU{r}   " + "   ".join("0" if c == r else cell for c in range(4)) for r in range(4)]


def test_a_showtopo_weight_table_whose_title_was_cut_is_read_as_weight() -> None:
    text = "\n".join([_HEAD, *_rows("15"), "",
                      "================================= Hops between two GPUs ==================================",
                      _HEAD, *_rows("1")])
    fc = parse_text(text, "constructed")
    assert fc.kinds == ["rocm-smi --showtopo"]
    parsed = amd_smi.parse(clean(text).lines)
    assert parsed.fabric is not None
    assert set(parsed.fabric.weight.values()) == {15} and len(parsed.fabric.weight) == 6
    assert set(parsed.fabric.hops.values()) == {1} and len(parsed.fabric.hops) == 6


def test_an_untitled_number_matrix_with_no_rocm_smi_title_after_it_is_not_taken_for_showtopo() -> None:
    parsed = amd_smi.parse(clean("\n".join([_HEAD, *_rows("15")])).lines)
    assert parsed.fabric is None


def test_a_topo_m_matrix_above_a_showtopo_title_is_not_taken_for_weight() -> None:
    topo_rows = [f"GPU{r}   " + "   ".join("X" if c == r else "NV12" for c in range(4)) for r in range(4)]
    text = "\n".join([_HEAD, *topo_rows, "", "======= Hops between two GPUs =======", _HEAD, *_rows("1")])
    parsed = amd_smi.parse(clean(text).lines)
    assert parsed.fabric is not None and not parsed.fabric.weight


def test_nothing_readable_still_refused() -> None:
    with pytest.raises(CaptureError):
        parse_text("GPU0 GPU1\nsome words\n", "constructed")


_ROCM6_ROWS = [
    "3       5     0x74a1,   21947  44.0°C      140.0W    NPS1, SPX, 0        131Mhz  900Mhz  0%   auto  750.0W  0%     0%",
    "4       6     0x74a1,   8212   47.0°C      142.0W    NPS1, SPX, 0        132Mhz  900Mhz  0%   auto  750.0W  0%     0%",
    "5       7     0x74a1,   30881  45.0°C      139.0W    NPS1, SPX, 0        130Mhz  90",
]


def test_rocm_smi_rows_without_their_header_are_read_as_its_default_table() -> None:
    fc = parse_text("\n".join(["$ rocm-smi | tail -3", *_ROCM6_ROWS]), "constructed")
    assert fc.kinds == ["rocm-smi (default table)"]
    parsed = amd_smi.parse(clean("\n".join(_ROCM6_ROWS)).lines)
    assert [m.label for m in parsed.modules] == ["GPU[3]", "GPU[4]", "GPU[5]"]
    assert [m.temperature_c for m in parsed.modules] == [44.0, 47.0, 45.0]
    assert any("without the table's header" in n and "0x74a1" in n for n in parsed.notes)


def test_one_headerless_row_or_rows_without_rocm_smi_cells_are_not_a_table() -> None:
    assert not amd_smi.parse(clean(_ROCM6_ROWS[0]).lines).modules
    other = ["1  fan 44.0C 140.0W", "2  fan 47.0C 142.0W"]  # the shape, but no Mhz clock and no device id
    assert not amd_smi.parse(clean("\n".join(other)).lines).modules


def _topo_paste() -> str:
    """topo -m of 4 GPUs and 4 NICs, tab-separated, after a shell prompt, where the paste lost two tabs."""
    head = "\t" + "\t".join([f"GPU{i}" for i in range(4)] + ["NIC0", "NIC1NIC2", "NIC3"]) \
        + "\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID"
    rows = []
    for g in range(4):
        gpus = ["X" if c == g else "NV12" for c in range(4)]
        nics = ["PXB" if n == g else ("NODE" if n // 2 == g // 2 else "SYS") for n in range(4)]
        joined = "\t".join(gpus[:4]) + "\t" + nics[0] + "\t" + nics[1] + nics[2] + "\t" + nics[3]
        rows.append(f"GPU{g}\t{joined}\t{'0-31' if g < 2 else '32-63'}\t{g // 2}\t\tN/A")
    return "\n".join(["(base) ➜  ~ nvidia-smi topo -m", "", head, *rows])


def test_topo_m_with_columns_run_together_by_a_lost_tab_is_read_cell_by_cell() -> None:
    fc = parse_text(_topo_paste(), "constructed")
    assert fc.topo is not None and fc.kinds == ["nvidia-smi topo -m"]
    assert fc.topo.header == ["GPU0", "GPU1", "GPU2", "GPU3", "NIC0", "NIC1", "NIC2", "NIC3"]
    assert fc.topo.cells[frozenset(("GPU2", "NIC2"))] == "PXB" and fc.topo.cells[frozenset(("GPU0", "NIC2"))] == "SYS"
    assert fc.topo.cells[frozenset(("GPU0", "NIC1"))] == "NODE"
    assert fc.topo.numa == {"GPU0": 0, "GPU1": 0, "GPU2": 1, "GPU3": 1}
    assert any("run together" in n for n in fc.topo.notes)


def test_ibstat_port_lines_without_their_ca_line_are_a_port_of_an_unnamed_adapter() -> None:
    text = "\n".join(["$ ibstat | grep -A6 'Port 1'", "Port 1:", "\tState: Down", "\tPhysical state: Polling",
                      "\tRate: 10", "\tLink layer: InfiniBand"])
    fc = parse_text(text, "constructed")
    assert "ibstat" in fc.kinds
    got, _ = nic_tools.parse(clean(text).lines)
    (nic,) = got.nics
    assert nic.device == nic_tools.UNNAMED_CA
    (port,) = nic.ports
    assert (port.port, port.state, port.phys_state) == (1, "DOWN", "Polling")


def test_a_port_line_without_ibstat_state_keys_is_not_read_as_ibstat() -> None:
    got, claimed = nic_tools.parse(clean("Port 1:\n\tspeed: 10\n").lines)
    assert not got.nics and not claimed


_FATAL = """[ 812.114] pcieport 0000:40:01.1: AER: Uncorrectable (Fatal) error message received from 0000:41:00.0
[ 812.114] pcieport 0000:41:00.0: PCIe Bus Error: severity=Uncorrectable (Fatal), type=Transaction Layer, (Receiver ID)
[ 812.114] pcieport 0000:41:00.0:   device [1000:c010] error status/mask=00000020/00000000
[ 812.114] pcieport 0000:41:00.0:    [ 5] SDES                   (First)
[ 812.115] nvme 0000:43:00.0: AER: can't recover (no error_detected callback)
[ 812.301] pcieport 0000:41:00.0: AER: Downstream Port link has been reset (0)
"""


def _doctor(tmp_path: Path, text: str) -> dict[tuple[str, str | None], str]:
    path = tmp_path / "capture.txt"
    path.write_text(text)
    _, data = run_json("doctor", "--from", str(path))
    return {(f["cause"], f.get("module")): f["severity"] for f in data["findings"]}


def test_a_fatal_aer_error_whose_recovery_failed_is_critical_and_names_the_lost_device(tmp_path: Path) -> None:
    text = _FATAL + "[ 812.301] pcieport 0000:41:00.0: AER: device recovery failed\n"
    assert _doctor(tmp_path, text) == {("pcie_fatal_unrecovered", "0000:41:00.0"): "critical"}
    fc = parse_text(text, "constructed")
    assert fc.aer.devices["0000:43:00.0"].unrecovered and fc.aer.devices["0000:41:00.0"].fatal == 1


def test_a_fatal_aer_error_the_kernel_recovered_stays_a_warning(tmp_path: Path) -> None:
    text = _FATAL + "[ 812.301] pcieport 0000:41:00.0: AER: device recovery successful\n"
    assert _doctor(tmp_path, text) == {("pcie_aer_errors", "0000:41:00.0"): "warn"}


_AMD_FAULT = """[ 5120.331] amdgpu 0000:0c:00.0: amdgpu: [gfxhub0] retry page fault (src_id:0 ring:0 vmid:2 pasid:32771, \
for process blender pid 4411 thread blender pid 4411)
[ 5120.331] amdgpu 0000:0c:00.0: amdgpu:   in page starting at address 0x00007f3a11200000 from client 0x1b (UTCL2)
[ 5120.331] amdgpu 0000:0c:00.0: amdgpu: VM_L2_PROTECTION_FAULT_STATUS:0x00301031
[ 5120.331] amdgpu 0000:0c:00.0: amdgpu: \t PERMISSION_FAULTS: 0x3
[ 5125.502] [drm:amdgpu_dm_atomic_commit_tail [amdgpu]] *ERROR* Waiting for fences timed out!
"""


def test_an_amdgpu_protection_fault_and_a_fence_timeout_are_warnings(tmp_path: Path) -> None:
    found = _doctor(tmp_path, _AMD_FAULT)
    assert found == {("module_page_fault", "0000:0C:00.0"): "warn", ("module_fence_timeout", "0000:0C:00.0"): "warn"}


def test_a_zero_protection_fault_status_is_no_fault(tmp_path: Path) -> None:
    text = "[ 5120.331] amdgpu 0000:0c:00.0: amdgpu: VM_L2_PROTECTION_FAULT_STATUS:0x00000000\n"
    assert _doctor(tmp_path, text) == {}


def test_a_fence_timeout_beside_a_ring_timeout_is_that_hang_not_a_second_finding(tmp_path: Path) -> None:
    text = ("[ 5125.100] [drm:amdgpu_job_timedout [amdgpu]] *ERROR* ring gfx_0.0.0 timeout, signaled seq=1, emitted seq=3\n"
            "[ 5125.502] [drm:amdgpu_dm_atomic_commit_tail [amdgpu]] *ERROR* Waiting for fences timed out!\n"
            "[ 5125.600] amdgpu 0000:0c:00.0: amdgpu: GPU reset begin!\n")
    assert "module_fence_timeout" not in {cause for cause, _ in _doctor(tmp_path, text)}
