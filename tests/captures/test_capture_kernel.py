"""Kernel logs alone (issue 46, batch E): the modules their driver lines name are what inventory lists
(by bus id, the vendor said, no model invented; the driver's index where no line names a bus id), and
two failures read as the driver and the kernel print them: the open modules' GSP RPCs failing on a
module named only 'GPUn', and the kernel's AER recovery giving up on a module ('AER: can't recover').
Every log here is written for the test in the kernel's own format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpuvet.cli.app import main


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code = main([*args, "--json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, json.loads(out)


def _write(tmp_path: Path, name: str, lines: list[str]) -> str:
    f = tmp_path / name
    f.write_text("\n".join(lines) + "\n")
    return str(f)


def _modules(capsys: pytest.CaptureFixture[str], path: str) -> list[dict[str, Any]]:
    _, data = _run(capsys, "inventory", "--from", path)
    modules: list[dict[str, Any]] = data["modules"]
    return modules


def _findings(capsys: pytest.CaptureFixture[str], path: str) -> tuple[int, dict[tuple[str, str | None], str]]:
    code, data = _run(capsys, "doctor", "--from", path)
    return code, {(f["cause"], f.get("module")): f["severity"] for f in data["findings"]}


AMDGPU_TWO_CARDS = [
    "[ 812.100201] amdgpu 0001:c3:00.0: amdgpu: ring sdma0 timeout, signaled seq=1201, emitted seq=1204",
    "[ 812.100230] amdgpu 0001:c3:00.0: amdgpu: Process information: process python3 pid 7711 thread python3 pid 7711",
    "[ 812.100310] amdgpu 0001:c3:00.0: amdgpu: GPU reset begin!",
    "[ 812.611842] amdgpu 0001:c3:00.0: amdgpu: MODE1 reset",
    "[ 813.002117] amdgpu 0001:c3:00.0: amdgpu: GPU reset succeeded, trying to resume",
    "[ 813.400912] amdgpu 0000:83:00.0: amdgpu: SMU is resumed successfully!",
]


def test_an_amdgpu_log_lists_each_card_its_lines_name_by_bus_id(capsys, tmp_path) -> None:
    path = _write(tmp_path, "dmesg_amdgpu.txt", AMDGPU_TWO_CARDS)
    modules = _modules(capsys, path)
    assert [m["bus_id"] for m in modules] == ["0000:83:00.0", "0001:C3:00.0"]  # the PCI domain kept
    assert all(m["model"] == "unknown AMD module" for m in modules)  # the vendor said, no model invented
    code, found = _findings(capsys, path)
    assert code == 1 and found.get(("module_hang_recovered", "0001:C3:00.0")) == "warn"  # its reset succeeded
    assert not any(module == "0000:83:00.0" for _, module in found)  # the card that only resumed is named, not judged


def test_an_xid_79_lists_its_module_with_the_uuid_and_board_serial_the_driver_printed(capsys, tmp_path) -> None:
    path = _write(tmp_path, "dmesg_xid79.txt", [
        "[ 5120.331002] NVRM: GPU at PCI:0000:41:00: GPU-0b9f5d2e-7c11-4a3e-9d40-5e8a21c6f0aa",
        "[ 5120.331010] NVRM: GPU Board Serial Number: 1564021009318",
        "[ 5120.331016] NVRM: Xid (PCI:0000:41:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
    ])
    [module] = _modules(capsys, path)
    assert module["bus_id"] == "0000:41:00.0" and module["model"] == "unknown NVIDIA module"
    assert module["serial"] == "1564021009318" and module["uuid"] == "GPU-0b9f5d2e-7c11-4a3e-9d40-5e8a21c6f0aa"


def test_gsp_rpc_failures_on_a_module_named_only_by_index_need_a_reset(capsys, tmp_path) -> None:
    path = _write(tmp_path, "journal_gsp_rpc.txt", [
        "Mar 14 03:12:09 node7 kernel: NVRM: GPU1 _issueRpcAndWait: rpcSendMessage failed with status 0x00000011 "
        "for fn 76 sequence 48211!",
        "Mar 14 03:12:09 node7 kernel: NVRM: GPU1 rpcRmApiControl_GSP: GspRmControl failed: hClient=0xc1d00012; "
        "hObject=0xc1d00012; cmd=0x20800a4c; paramsSize=4; paramsStatus=0x00000000; status=0x00000011",
        "Mar 14 03:12:40 node7 kernel: NVRM: GPU1 _issueRpcAndWait: rpcSendMessage failed with status 0x00000011 "
        "for fn 10 sequence 48212!",
    ])
    code, found = _findings(capsys, path)
    assert code == 1 and found == {("module_needs_reset", "GPU1"): "critical"}
    [module] = _modules(capsys, path)
    assert module["id"] == "gpu1" and module["bus_id"] is None  # the driver's index kept; no bus id invented


def test_a_fatal_aer_the_kernel_cannot_recover_names_the_module_below_the_port(capsys, tmp_path) -> None:
    path = _write(tmp_path, "dmesg_aer_fatal.txt", [
        "[ 9021.004112] pcieport 0000:40:01.1: AER: Uncorrected (Fatal) error received: 0000:41:00.0",
        "[ 9021.004120] pcieport 0000:40:01.1: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, "
        "(Requester ID)",
        "[ 9021.004124] pcieport 0000:40:01.1:   device [1022:1483] error status/mask=00004000/00000000",
        "[ 9021.004130] pcieport 0000:40:01.1:    [14] CmpltTO                (First)",
        "[ 9021.004811] nvidia 0000:41:00.0: AER: can't recover (no error_detected callback)",
        "[ 9022.061733] pcieport 0000:40:01.1: AER: Root Port link has been reset (0)",
        "[ 9022.061790] pcieport 0000:40:01.1: AER: device recovery failed",
    ])
    code, found = _findings(capsys, path)
    assert code == 1 and found[("module_fell_off_bus", "0000:41:00.0")] == "critical"
    assert all(s != "critical" for (cause, module), s in found.items() if module == "0000:40:01.1")
    assert [m["bus_id"] for m in _modules(capsys, path)] == ["0000:41:00.0"]  # the port is not a module


def test_a_module_listing_beside_the_kernel_log_is_the_one_inventory_lists(capsys, tmp_path) -> None:
    log = _write(tmp_path, "dmesg.txt", AMDGPU_TWO_CARDS)
    listing = _write(tmp_path, "rocm_smi.txt", [
        "============================ ROCm System Management Interface ============================",
        "====================================== Product Info ======================================",
        "GPU[0]\t\t: Card series: \t\tAMD Instinct MI210",
        "GPU[0]\t\t: Card model: \t\t0x0c34",
        "==========================================================================================",
    ])
    _, data = _run(capsys, "inventory", "--from", listing, "--from", log)
    assert [m["model"] for m in data["modules"]] == ["AMD Instinct MI210"]  # the tool's list, not the log's buses


def _ring_reset(bus: str, ring: str, second: int, outcome: str) -> list[str]:
    """amdgpu's lines for one ring timeout and the ring reset that follows it (amdgpu_job_timedout)."""
    t = f"[ {second}.100200]"
    return [f"{t} amdgpu {bus}: amdgpu: ring {ring} timeout, signaled seq=45, emitted seq=47",
            f"{t} amdgpu {bus}: amdgpu:  Process python3 pid 5244 thread python3 pid 5244",
            f"{t} amdgpu {bus}: amdgpu: Starting {ring} ring reset",
            f"{t} amdgpu {bus}: amdgpu: Ring {ring} reset {outcome}"]


def test_a_ring_timeout_its_ring_reset_recovered_is_a_warning_on_its_module(capsys, tmp_path) -> None:
    path = _write(tmp_path, "dmesg_ring_back.txt", [
        *_ring_reset("0000:2a:00.0", "comp_1.0.1", 812, "succeeded"),
        "[ 812.100300] amdgpu 0000:2a:00.0: [drm] device wedged, but recovered through reset",
        *_ring_reset("0000:2a:00.0", "gfx_0.0.0", 913, "success"),  # older kernels' wording
    ])
    code, found = _findings(capsys, path)
    assert found == {("module_ring_reset_recovered", "0000:2A:00.0"): "warn"}
    assert [m["bus_id"] for m in _modules(capsys, path)] == ["0000:2A:00.0"]


def test_a_ring_reset_that_failed_or_keeps_coming_back_stays_critical(capsys, tmp_path) -> None:
    failed = _write(tmp_path, "dmesg_ring_failed.txt", [
        *_ring_reset("0000:45:00.0", "gfx_0.0.0", 100, "failed"),
        "[ 101.000000] amdgpu 0000:45:00.0: amdgpu: GPU reset begin!. Source:  1"])
    _, found = _findings(capsys, failed)
    assert found == {("module_hung_reset", "0000:45:00.0"): "critical"}
    again = _write(tmp_path, "dmesg_ring_again.txt", [
        ln for s in (100, 200, 300) for ln in _ring_reset("0000:45:00.0", "gfx_0.0.0", s, "succeeded")])
    _, found = _findings(capsys, again)
    assert found == {("module_hung_reset", "0000:45:00.0"): "critical"}
    other_ring = _write(tmp_path, "dmesg_other_ring.txt", [  # another ring's recovery does not vouch for this one
        "[ 100.000000] amdgpu 0000:45:00.0: amdgpu: ring sdma0 timeout, signaled seq=1, emitted seq=3",
        "[ 100.000100] amdgpu 0000:45:00.0: amdgpu: Ring gfx_0.0.0 reset succeeded"])
    _, found = _findings(capsys, other_ring)
    assert found[("module_hung_reset", "0000:45:00.0")] == "critical"


def _port_error(port: str, layer: str, bit: str, second: int) -> list[str]:
    """The kernel's lines for one corrected AER error a root port logged (drivers/pci/pcie/aer.c)."""
    t = f"[ {second}.499123]"
    return [f"{t} pcieport {port}: AER: Corrected error received: {port}",
            f"{t} pcieport {port}: AER: PCIe Bus Error: severity=Corrected, type={layer}, (Receiver ID)",
            f"{t} pcieport {port}: AER:   device [8086:a29a] error status/mask=00000001/00002000",
            f"{t} pcieport {port}: AER:    [ 0] {bit}                  (First)"]


def test_corrected_receiver_errors_on_a_port_leading_to_no_named_gpu_are_an_info_note(capsys, tmp_path) -> None:
    path = _write(tmp_path, "dmesg_port_rxerr.txt", [
        ln for s in (3, 4, 5) for ln in _port_error("0000:00:1d.0", "Physical Layer", "RxErr", s)])
    code, found = _findings(capsys, path)
    assert code == 0 and found == {("pcie_port_receiver_errors", "0000:00:1D.0"): "info"}


def test_a_burst_of_data_link_errors_on_a_port_stays_a_warning(capsys, tmp_path) -> None:
    path = _write(tmp_path, "dmesg_port_dll.txt", [
        *_port_error("0000:00:03.1", "Data Link Layer", "Timeout", 3),
        *_port_error("0000:00:03.1", "Data Link Layer", "BadTLP", 4),
        *_port_error("0000:00:03.1", "Physical Layer", "RxErr", 5)])
    _, found = _findings(capsys, path)
    assert found == {("pcie_aer_errors", "0000:00:03.1"): "warn"}


def _rpc_row(entry: int, seq: int, polling: str) -> str:
    """A row of the GSP RPC history the open modules dump after an RPC failed, under Talos's kernel prefix."""
    return (f"10.0.0.7: kern: warning: [2026-04-22T21:27:51.2888{seq}Z]: NVRM:     {entry:>2}    76   "
            f"GSP_RM_CONTROL              {seq} 0x0000000020803039 0x00000000000000b0 0x00065013160bb6e0 "
            f"0x0000000000000000   {polling}")


def test_a_gsp_rpc_history_dump_says_an_rpc_failed_on_a_module_the_log_does_not_name(capsys, tmp_path) -> None:
    path = _write(tmp_path, "talos_rpc_history.txt", [_rpc_row(-e, 4127 - e, "y" if e == 0 else "136us")
                                                      for e in range(4)])
    code, found = _findings(capsys, path)
    assert code == 1 and found == {("module_needs_reset", "bus id not in the log"): "critical"}
    healthy = _write(tmp_path, "nvrm_ok.txt", [  # an NVRM line with a register value is no RPC history
        "[ 4.1] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  575.57.08",
        "[ 4.2] NVRM: GPU 0000:06:00.0: RmInitAdapter succeeded, 0x0000000020803039 0x00000000000000b0"])
    assert _findings(capsys, healthy)[1] == {}


def test_another_modules_ring_reset_does_not_vouch_for_a_timeout(capsys, tmp_path) -> None:
    path = _write(tmp_path, "dmesg_two_modules.txt", [
        "[ 100.000000] amdgpu 0000:45:00.0: amdgpu: ring gfx_0.0.0 timeout, signaled seq=1, emitted seq=3",
        "[ 100.000100] amdgpu 0000:46:00.0: amdgpu: Ring gfx_0.0.0 reset succeeded"])
    _, found = _findings(capsys, path)
    assert found == {("module_hung_reset", "0000:45:00.0"): "critical",
                     ("module_ring_reset_recovered", "0000:46:00.0"): "warn"}
