"""R12C (issue 46): the NVIDIA stack's own words on a node, one verdict each in every framing a paste shows:
nvidia-smi's 'couldn't communicate with the NVIDIA driver' and NVML's init refused with 'Driver Not Loaded' (the
kernel module not loaded, critical; a poster's sentence around it too), NVML's 'Insufficient Permissions' (the
device files' access), the driver's /proc information with its VBIOS unread ('??.??.??.??.??', warn on the bus id
its listing names); nvidia-peermem's 'detected invalid context' (open-gpu-kernel-modules nvidia-peermem.c: a free
callback at teardown) and dcgmi's help legends (DCGM dcgmi's stats footer, nvlink's error description, option rows)
read with no finding."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.helpers import capture_findings, doctor_triples

_SMI = (
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA "
    "driver is installed and running."
)
_PEERMEM = "nvidia-peermem nv_get_p2p_free_callback:127 ERROR detected invalid context, skipping further processing"


def _loud(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, set[tuple[str, str, str]]]:
    code, found = doctor_triples(text, tmp_path, capsys)
    return code, {(cause, sev, module) for cause, sev, module in found if sev in ("warn", "critical")}


@pytest.mark.parametrize(
    "text",
    [
        f"$ nvidia-smi\n{_SMI}\n",
        f"root@gpu-node-3:~# nvidia-smi\n{_SMI}\n",
        f"- **问题**：Centos服务器重启后出现显卡驱动无法使用的情况：{_SMI}\n",
        "$ nvidia-smi\nFailed to initialize NVML: Driver Not Loaded\n",
    ],
)
def test_driver_not_loaded_is_critical(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, loud = _loud(text, tmp_path, capsys)
    assert code != 2
    assert ("no_modules_visible", "critical", "") in loud, loud


def test_nvml_permissions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, loud = _loud("$ nvidia-smi\nFailed to initialize NVML: Insufficient Permissions\n", tmp_path, capsys)
    assert {c for c, _, _ in loud} == {"device_permissions"}, loud


def test_proc_information_vbios_unread(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (
        "$ cat /proc/driver/nvidia/gpus/0000:01:00.0/information\nModel:           NVIDIA GeForce RTX 3060 Laptop GPU\n"
        "IRQ:             106\nGPU UUID:        GPU-dac19efe-d70e-fa2c-86c9-07cad67bf11b\n"
        "Video BIOS:      ??.??.??.??.??\nBus Type:        PCIe\nDMA Size:        47 bits\n"
        "Bus Location:    0000:01:00.0\nDevice Minor:    0\nGPU Excluded:    No\n"
    )
    _, loud = _loud(text, tmp_path, capsys)
    assert loud == {("api_reports_driver_state", "warn", "0000:01:00.0")}, loud
    _, healthy = _loud(text.replace("??.??.??.??.??", "94.06.17.00.4c"), tmp_path, capsys)
    assert not healthy


@pytest.mark.parametrize(
    "text",
    [
        "\n".join(f"6,3973,2279966{i:02d},-;{_PEERMEM}" for i in range(7)),
        f"kern  :err   : 2025-02-10T16:28:06,502716+00:00 {_PEERMEM}\n",
        f"[Thu Sep 19 02:29:46 2024] {_PEERMEM}\n",
        f"{_PEERMEM}\n{_PEERMEM}\n",
    ],
)
def test_peermem_invalid_context_is_benign(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, loud = _loud(text, tmp_path, capsys)
    assert code != 2 and not loud, loud


def test_dcgmi_help_legends_read_clear(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (
        "> dcgmi stats --help\n\n Process Statistics Information:\n\n --  Event Stats --\n"
        " Single Bit ECC Errors - Number of ECC single bit errors that occurred\n"
        " Double Bit ECC Errors - Number of ECC double bit errors that occurred\n"
        " Critical XID Errors   - Number of critical XID Errors\n"
        " XID                   - Time of XID error in since start of process\n\n"
        "> dcgmi nvlink --help\n\n NVLINK Error description\n =========================\n"
        " CRC FLIT Error => Data link receive flow control digit CRC error.\n"
        " Replay Error   => Data link transmit replay error.\n"
        "  -e  --errors                Print NvLink errors for a given gpuId (-g).\n"
    )
    _, loud = _loud(text, tmp_path, capsys)
    assert not loud, loud


def test_peermem_real_fault_still_a_lead(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = "nvidia-peermem nv_dma_map:233 nv_dma_map -- error -22 while calling nvidia_p2p_dma_map_pages()\n"
    _, loud = _loud(text, tmp_path, capsys)
    assert loud, "a peermem mapping error is no teardown line"


def _smi(buses: list[str], rows: list[tuple[int, str]]) -> str:
    head = "".join(f"{b} 3D controller: NVIDIA Corporation Device 2329 (rev a1)\n" for b in buses)
    body = "".join(
        f"|   {i}  NVIDIA H20                     On  | 00000000:{b} Off |                    0 |\n"
        "| N/A   24C    P0              72W / 500W |      0MiB / 97871MiB |      0%      Default |\n"
        "+-----------------------------------------+----------------------+----------------------+\n"
        for i, b in rows
    )
    return (
        head + "| NVIDIA-SMI 535.161.03             Driver Version: 535.161.03   CUDA Version: 12.2     |\n"
        "| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |\n"
        "|=========================================+======================+======================|\n" + body
    )


def test_a_listing_with_rows_left_out_never_makes_a_module_missing(tmp_path: Path) -> None:
    """nvidia-smi numbers the modules it brought up without a gap: '0, 1, 7' is a paste's '...' between rows (or
    two machines' listings in one document), so lspci's C3:00.0 before row 7 is not known missing; where the
    indexes run unbroken, a module lspci lists and the table skips before its last row still is."""
    cut = capture_findings(
        tmp_path, _smi(["04:00.0", "23:00.0", "c3:00.0"], [(0, "04:00.0"), (1, "23:00.0"), (7, "E4:00.0")])
    )
    assert not any(cause == "module_missing" for cause, _ in cut), cut
    gone = capture_findings(tmp_path, _smi(["04:00.0", "23:00.0", "c3:00.0"], [(0, "04:00.0"), (1, "E4:00.0")]))
    assert any(cause == "module_missing" and "0000:23:00.0" in (module or "") for cause, module in gone), gone


@pytest.mark.parametrize(
    "line",
    [
        "Failed to initialize NVML: NVML Shared Library Not Found",
        "pynvml.nvml.NVMLError_LibraryNotFound: NVML Shared Library Not Found",
        "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system.",
    ],
)
def test_nvml_library_not_found_is_one_verdict(line: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """NVML_ERROR_LIBRARY_NOT_FOUND in NVML's words and nvidia-smi's own sentence: the same fact, the same cause."""
    _, loud = _loud(f"$ nvidia-smi\n{line}\n", tmp_path, capsys)
    assert {(c, s) for c, s, _ in loud} == {("nvml_library_not_loadable", "warn")}, loud
