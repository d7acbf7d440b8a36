"""Batch Y's AER and runtime-mismatch rows (issue 46, YX2), fixed for their families on lines written here in each
tool's own format: a GPU's other functions (its HDMI audio) share its PCIe link, so their AER errors are the
module's; every corrected error a port reports is counted ('Multiple …' as two, messages as well as severity
lines) and more than the kernel's own AER rate limit (10 per 5 s) is a flood (warn); NVML's and the NVIDIA
driver's version mismatch in every wording is the driver/library mismatch (critical); CUDA's 'no code for this
GPU' errors in an NCCL WARN are the library's build, never the module."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers import capture_findings, capture_json

BATCH = Path(__file__).resolve().parents[1] / "data" / "captures" / "fresh_y"


def _evidence(tmp_path: Path, text: str, cause: str) -> dict[str, Any]:
    findings: list[dict[str, Any]] = capture_json(tmp_path, text)["findings"]  # type: ignore[assignment]
    return next(f["evidence"] for f in findings if f["cause"] == cause)


def _corrected(dev: str, bus: str, vendor: str, layer: str, bit: str, stamp: str = "") -> str:
    return (f"{stamp}{dev} {bus}: PCIe Bus Error: severity=Correctable, type={layer}, (Receiver ID)\n"
            f"{stamp}{dev} {bus}:   device [{vendor}] error status/mask=00000080/00002000\n"
            f"{stamp}{dev} {bus}:    [ 7] {bit}\n")


def test_an_amd_gpus_audio_function_shares_its_link_so_its_aer_errors_are_the_modules(tmp_path: Path) -> None:
    text = "".join(f"[  31.20{i}000] pcieport 0000:00:01.1: AER: Correctable error message received from 0000:0b:00.1\n"
                   + _corrected("snd_hda_intel", "0000:0b:00.1", "1002:ab28", "Data Link Layer", "BadDLLP",
                                f"[  31.20{i}100] ") for i in range(2))
    assert capture_findings(tmp_path, text) == {("pcie_aer_errors", "0000:0B:00.1"): "warn"}
    assert "snd_hda_intel function" in _evidence(tmp_path, text, "pcie_aer_errors")["below"]


def test_a_function_beside_a_gpu_function_is_the_gpu_and_the_module_is_judged_once(tmp_path: Path) -> None:
    both = (_corrected("nvidia", "0000:41:00.0", "10de:2204", "Physical Layer", "RxErr") * 2
            + _corrected("snd_hda_intel", "0000:41:00.1", "10de:1aef", "Data Link Layer", "BadTLP") * 2)
    assert capture_findings(tmp_path, both) == {("pcie_aer_errors", "0000:41:00.0"): "warn"}
    said = _evidence(tmp_path, both, "pcie_aer_errors")
    assert said["correctable"] == 4 and "Data Link Layer: BadTLP" in said["errors"]
    assert said["functions"] == "0000:41:00.1 (snd_hda_intel): the same link"
    # the audio function's device line cut away: the slot of an amdgpu function still makes it the module's
    cut = "\n".join(ln for ln in _corrected("snd_hda_intel", "0000:0c:00.1", "1002:ab28", "Physical Layer",
                                            "RxErr").splitlines() if "device [" not in ln) + "\n"
    text = _corrected("amdgpu", "0000:0c:00.0", "1002:73bf", "Physical Layer", "RxErr") + cut * 2
    assert capture_findings(tmp_path, text) == {("pcie_aer_errors", "0000:0C:00.0"): "warn"}
    assert _evidence(tmp_path, text, "pcie_aer_errors")["correctable"] == 3


def test_an_ati_vendor_function_on_bus_00_is_a_chipset_function_not_a_gpu(tmp_path: Path) -> None:
    # the old ATI south bridges' own functions (SBx00 Azalia 1002:4383) sit on bus 00, no GPU's
    text = _corrected("snd_hda_intel", "0000:00:14.2", "1002:4383", "Data Link Layer", "BadDLLP") * 2
    assert capture_findings(tmp_path, text) == {}


def _own(n: int, step: float, multiple: bool = False) -> str:
    """A root port's own corrected receiver errors as the kernel prints them: the message, then its error."""
    word = "Multiple Corrected" if multiple else "Corrected"
    return "".join(f"[{100 + i * step:12.6f}] pcieport 0000:00:1c.5: AER: {word} error received: 0000:00:1c.5\n"
                   + _corrected("pcieport", "0000:00:1c.5", "8086:9d15", "Physical Layer", "Receiver Error",
                                f"[{100 + i * step + 0.0001:12.6f}] ") for i in range(n))


def test_every_corrected_error_a_port_reports_is_counted(tmp_path: Path) -> None:
    # an old kernel's 'id=' messages whose source it cannot find print no severity line: each one is an error
    old = (_corrected("pcieport", "0000:00:1c.0", "8086:a115", "Physical Layer", "Receiver Error")
           + "pcieport 0000:00:1c.0: AER: Corrected error received: id=00e0\n"
             "pcieport 0000:00:1c.0: can't find device of ID00e0\n" * 1
           + "pcieport 0000:00:1c.0: AER: Multiple Corrected error received: id=00e0\n"
             "pcieport 0000:00:1c.0: can't find device of ID00e0\n")
    assert capture_findings(tmp_path, old) == {("pcie_port_receiver_errors", "0000:00:1C.0"): "info"}
    assert _evidence(tmp_path, old, "pcie_port_receiver_errors")["correctable"] == 4
    # a message and the severity line after it are one error, not two
    assert _evidence(tmp_path, _own(3, 0.001), "pcie_port_receiver_errors")["correctable"] == 3


def test_corrected_errors_past_the_kernels_rate_limit_are_a_flood_warn(tmp_path: Path) -> None:
    assert capture_findings(tmp_path, _own(10, 0.01)) == {("pcie_port_receiver_errors", "0000:00:1C.5"): "info"}
    flood = _own(6, 0.01, multiple=True)  # 12 errors within 60 ms
    assert capture_findings(tmp_path, flood) == {("pcie_aer_errors", "0000:00:1C.5"): "warn"}
    assert "12 corrected errors within 5 s" in _evidence(tmp_path, flood, "pcie_aer_errors")["flood"]
    # the same twelve a minute apart: a lane's signal the link retries, no flood
    assert capture_findings(tmp_path, _own(6, 60, multiple=True)) == {
        ("pcie_port_receiver_errors", "0000:00:1C.5"): "info"}
    # a journal's lines (their stamps peeled): back to back they are one burst, spread among other output they are not
    undated = [ln.split("] ", 1)[1] for ln in flood.splitlines()]
    assert capture_findings(tmp_path, "\n".join(undated) + "\n") == {("pcie_aer_errors", "0000:00:1C.5"): "warn"}
    other = "".join(f"systemd[1]: Started session {i} of user alice.\n" for i in range(12))
    spread = "".join("\n".join(undated[i:i + 4]) + "\n" + other for i in range(0, len(undated), 4))
    assert capture_findings(tmp_path, spread) == {("pcie_port_receiver_errors", "0000:00:1C.5"): "info"}


@pytest.mark.parametrize("line", [
    "Failed to initialize NVML: Driver/library version mismatch",
    "nvidia-container-cli: initialization error: nvml error: driver/library version mismatch: unknown",
    "pynvml.nvml.NVMLError_LibRmVersionMismatch: RM has detected an NVML/RM version mismatch.",
])
def test_nvmls_version_mismatch_is_the_driver_library_mismatch(tmp_path: Path, line: str) -> None:
    assert capture_findings(tmp_path, f"$ nvidia-smi\n{line}\n") == {("driver_library_mismatch", None): "critical"}


@pytest.mark.parametrize("said", [
    "NVRM: API mismatch: the client has the version 550.54.14, but\nNVRM: this kernel module has the version 545.23.08.",
    "NVRM: API mismatch: the client 'nvidia-smi' (pid 4242) has the version 595.84,\n"
    "NVRM: but this kernel module has the version 595.71.05.",
    "NVRM: API mismatch: client version 570.133.07, kernel module version 570.124.06",
])
def test_the_drivers_api_mismatch_in_every_wording_is_the_driver_library_mismatch(tmp_path: Path, said: str) -> None:
    lines = "".join(f"[ 1865.85597{i}] {part}\n" for i, part in enumerate(said.split("\n")))
    found = capture_findings(tmp_path, lines)
    assert {c: s for (c, _), s in found.items()} == {"driver_library_mismatch": "critical"}


@pytest.mark.parametrize("error", ["named symbol not found", "no kernel image is available for execution on the device",
                                   "invalid device function"])
def test_cudas_no_code_for_this_gpu_in_an_nccl_warn_is_the_librarys_build(tmp_path: Path, error: str) -> None:
    text = "".join(f"node7:41:97 [1] enqueue.cc:{n} NCCL WARN Cuda failure '{error}'\n" for n in (47, 58, 47))
    found = capture_findings(tmp_path, text)
    assert found == {("nccl_build_unsupported", "node7 GPU 1"): "warn"}
    assert _evidence(tmp_path, text, "nccl_build_unsupported")["times"] == 3


@pytest.mark.parametrize(("name", "expected"), [
    ("dmesg_rebaruefi11_aer_baddllp_gpu_audio.txt", {("pcie_aer_errors", "0000:05:00.1"): "warn"}),
    ("smi_wanpihou_nvml_version_mismatch.txt", {("driver_library_mismatch", "bus id not in the log"): "critical"}),
    ("nccl_nccl1528_named_symbol_not_found.txt", {("nccl_build_unsupported", "c76d92cccb6e GPU 0"): "warn"}),
    ("dmesg_hidasus33_aer_receiver_flood.txt", {("pcie_port_receiver_errors", "0000:00:1C.5"): "info"}),
])
def test_batch_ys_link_and_mismatch_rows(tmp_path: Path, name: str, expected: dict[tuple[str, str], str]) -> None:
    text = (BATCH / name).read_text()
    assert capture_findings(tmp_path, text) == expected
    if name.startswith("dmesg_hidasus33"):  # five messages, two of them 'Multiple': seven errors at least
        assert _evidence(tmp_path, text, "pcie_port_receiver_errors")["correctable"] == 7
