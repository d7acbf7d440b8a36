"""Issue 46: a captured node is judged as a live one is. Each case is a capture written in the
tool's own format (the driver's, nvidia-smi's, nccl-tests', rccl-tests') and what doctor says of it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpuvet.cli.app import main


def _doctor(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, *more: str,
            name: str = "capture.txt") -> tuple[int, dict[str, Any]]:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    code = main(["doctor", "--from", str(path), "--json", *more])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, json.loads(out)


def _found(data: dict[str, Any]) -> set[tuple[str, str | None]]:
    return {(f["cause"], f.get("module")) for f in data["findings"]}


# --- kernel: the open kernel modules' NV_DEV_PRINTF lines, probe failures, amdgpu without bus ids ---------
def test_nv_dev_printf_fallen_off_the_bus_without_an_xid_is_a_module_lost(capsys, tmp_path):
    log = ("[ 8812.403912] NVRM: GPU 0000:c1:00.0: GPU has fallen off the bus.\n"
           "[ 8812.403931] NVRM: GPU 0000:c1:00.0: GPU has fallen off the bus.\n")
    code, data = _doctor(capsys, tmp_path, log)
    assert code == 1 and ("module_fell_off_bus", "0000:C1:00.0") in _found(data), _found(data)
    assert sum(f["cause"] == "module_fell_off_bus" for f in data["findings"]) == 1  # one event, said twice


def test_the_open_modules_refusing_a_module_without_gsp_is_a_module_not_initialised(capsys, tmp_path):
    log = ("[  301.220871] NVRM: The NVIDIA GPU 0000:3b:00.0 (PCI ID: 10de:1db4)\n"
           "               NVRM: installed in this system is not supported by open\n"
           "               NVRM: nvidia.ko because it does not include the required GPU\n"
           "               NVRM: System Processor (GSP).\n"
           "[  301.221502] nvidia: probe of 0000:3b:00.0 failed with error -1\n"
           "[  301.221544] NVRM: The NVIDIA probe routine failed for 1 device(s).\n"
           "[  301.221546] NVRM: None of the NVIDIA devices were initialized.\n")
    code, data = _doctor(capsys, tmp_path, log)
    assert code == 1 and ("module_init_failed", "0000:3B:00.0") in _found(data), _found(data)
    (step,) = {json.dumps(s) for s in data["steps"] if s["check"] == "kernel_messages"
               and s["playbook"] == "module-missing"}
    assert "refused the module" in step


def test_a_gfw_boot_wait_cut_mid_word_is_still_a_firmware_boot_failure(capsys, tmp_path):
    log = "[ 1225.021550] NVRM kgspWaitForGfwBootOk_TU102: failed to wait for GFW_\n"
    _, data = _doctor(capsys, tmp_path, log)
    assert ("module_firmware_boot_failed", "bus id not in the log") in _found(data)


def test_amdgpu_ring_timeout_and_mode1_reset_with_the_bus_ids_stripped(capsys, tmp_path):
    log = ("[ 8122.137463] [drm:amdgpu_job_timedout [amdgpu]] *ERROR* ring gfx_0.0.0 timeout, signaled "
           "seq=2191380, emitted seq=2191382\n"
           "[ 8122.137760] amdgpu: GPU reset begin!\n"
           "[ 8122.402113] amdgpu: MODE1 reset\n"
           "[ 8122.921433] amdgpu: GPU reset succeeded, trying to resume\n")
    code, data = _doctor(capsys, tmp_path, log)
    assert code == 1 and _found(data) == {("module_hung_reset", "an AMD module, bus id not in the log")}
    assert any("an AMD module, bus id not in the log" in n for n in data["notes"])


def test_freebsd_drm_kmod_amdgpu_lines_are_read(capsys, tmp_path):
    log = ("[drm ERROR :amdgpu_job_timedout] ring gfx_0.0.0 timeout, signaled seq=12174921, emitted seq=12174923\n"
           "drmn0: GPU reset begin!\n"
           "[drm ERROR :mes_v11_0_submit_pkt_and_poll_completion] MES failed to response msg=3\n")
    code, data = _doctor(capsys, tmp_path, log)
    assert code == 1 and _found(data) == {("module_hung_reset", "an AMD module, bus id not in the log")}
