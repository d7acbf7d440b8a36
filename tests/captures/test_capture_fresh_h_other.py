"""Batch H's misses beyond NVIDIA's tools (issue 46), each fixed for its class of input and tested on
lines written here in the tool's own format: a fatal AER error, amdgpu's thermal throttling lines,
lspci's -nn/-nnm/-mm listings, xpu-smi's default table."""

from __future__ import annotations

from pathlib import Path

from tests.captures.test_captures_fresh_c import run_json


def _doctor(tmp_path: Path, text: str) -> dict[tuple[str, str | None], str]:
    path = tmp_path / "capture.txt"
    path.write_text(text)
    _, data = run_json("doctor", "--from", str(path))
    return {(f["cause"], f.get("module")): f["severity"] for f in data["findings"]}


def _fatal(bus: str, name: str, severity: str = "Uncorrected (Fatal)") -> str:
    return (f"pcieport {bus}: AER: Uncorrected ({severity.split('(')[1]} error received: {bus}\n"
            f"pcieport {bus}: PCIe Bus Error: severity={severity}, type=Transaction Layer, (Requester ID)\n"
            f"pcieport {bus}:   device [8086:2030] error status/mask=00000020/00000000\n"
            f"pcieport {bus}:    [ 5] {name}                   (First)\n")


def test_a_fatal_aer_error_is_critical_on_its_port_and_a_non_fatal_one_stays_a_warning(tmp_path: Path) -> None:
    assert _doctor(tmp_path, _fatal("0000:16:02.0", "SDES")) == {("pcie_aer_fatal", "0000:16:02.0"): "critical"}
    recovered = _fatal("0000:16:02.0", "SDES") + "pcieport 0000:16:02.0: AER: device recovery successful\n"
    assert _doctor(tmp_path, recovered) == {("pcie_aer_errors", "0000:16:02.0"): "warn"}  # the link came back
    assert _doctor(tmp_path, _fatal("0000:3a:00.0", "MalfTLP")) == {("pcie_aer_fatal", "0000:3A:00.0"): "critical"}
    nonfatal = _fatal("0000:16:02.0", "CmpltTO", "Uncorrected (Non-Fatal)")
    assert _doctor(tmp_path, nonfatal) == {("pcie_aer_errors", "0000:16:02.0"): "warn"}


def test_amdgpu_throttling_lines_are_the_thermal_throttle_finding_on_their_module(tmp_path: Path) -> None:
    lines = ("[ 8812.402177] amdgpu 0000:c1:00.0: WARN: GPU thermal throttling temperature reached, expect "
             "performance decrease. VR_GFX.",
             "[ 9120.551002] amdgpu 0000:c1:00.0: amdgpu: WARN: GPU is throttled, expect performance decrease. "
             "PPT0, TEMP_HBM.",
             "[ 9130.000410] amdgpu 0000:c1:00.0: amdgpu: ERROR: GPU over temperature range(SW CTF) detected!")
    for line in lines:
        assert _doctor(tmp_path, line + "\n") == {("thermal_throttling", "0000:C1:00.0"): "warn"}, line
    quiet = "[    4.190311] amdgpu 0000:c1:00.0: amdgpu: SMU is initialized successfully!\n"
    assert _doctor(tmp_path, quiet) == {}


def _inventory(tmp_path: Path, text: str) -> list[tuple[str, str]]:
    path = tmp_path / "lspci.txt"
    path.write_text(text)
    _, data = run_json("inventory", "--from", str(path))
    return [(m["bus_id"], m["model"]) for m in data["modules"]]


_NNM = ('c1:00.0 "Processing accelerators [1200]" "Advanced Micro Devices, Inc. [AMD/ATI] [1002]" '
        '"Aqua Vanjaram [Instinct MI300X] [74a1]" "Advanced Micro Devices, Inc. [AMD/ATI] [1002]" '
        '"Device [74a1]"\n'
        'c2:00.0 "Ethernet controller [0200]" "Mellanox Technologies [15b3]" "MT2910 Family [ConnectX-7] [1021]" '
        '"Mellanox Technologies [15b3]" "Device [0023]"\n'
        'd1:00.0 "Processing accelerators [1200]" "Advanced Micro Devices, Inc. [AMD/ATI] [1002]" "Aqua Van')


def test_lspci_one_line_listings_name_the_gpus_and_accelerators_by_bus_id(tmp_path: Path) -> None:
    mi300x = [("C1:00.0", "AMD Instinct MI300X"), ("D1:00.0", "AMD Aqua Van")]
    assert _inventory(tmp_path, "$ lspci -nnm\n" + _NNM + "\n") == mi300x  # the NIC is not a module
    mm = ('0000:3b:00.0 "3D controller" "NVIDIA Corporation" "GH100 [H100 SXM5 80GB]" -ra1 "NVIDIA Corporation" '
          '"Device 16c1"\n')
    assert _inventory(tmp_path, mm) == [("0000:3B:00.0", "NVIDIA H100 SXM5 80GB")]
    nn = ("c1:00.0 Processing accelerators [1200]: Advanced Micro Devices, Inc. [AMD/ATI] Aqua Vanjaram "
          "[Instinct MI300X] [1002:74a1]\n"
          "c2:00.0 Ethernet controller [0200]: Mellanox Technologies MT2910 Family [ConnectX-7] [15b3:1021]\n")
    assert _inventory(tmp_path, nn) == [("C1:00.0", "AMD Instinct MI300X")]


_XPU_TABLE = """+-----------------------------------------------+------------------------------+------------------------+
|            Intel XPU-SMI v2.1    Driver: 25.18.33578.6    Level Zero: 1.21.9                                   |
+-----------------------------------------------+------------------------------+------------------------+
| GPU  Name                     Persistence-M   | Bus-Id             Disp.A    |   Volatile Uncorr. ECC |
| Fan              Temp  Pwr:Usage/Cap          | Memory-Usage                 |   GPU-Util  Compute M. |
+-----------------------------------------------+------------------------------+------------------------+
|   0  Intel(R) Arc(TM) Pro B60 Graphics  On    | 0000:03:00.0       Off       |               Disabled |
|  N/A              47C  35W / 200W             | 110MiB / 24480MiB            |       0%       Default |
+-----------------------------------------------+------------------------------+------------------------+
|   1                          Off              | 0000:83:00.0       Off       |               Disabled |
|  N/A              N/A  N/A / 200W             | 0MiB / 24480MiB              |      N/A       Default |
+-----------------------------------------------+------------------------------+------------------------+
"""


def test_xpu_smi_default_table_lists_each_device_with_its_memory_and_power_cap(tmp_path: Path) -> None:
    path = tmp_path / "xpu.txt"
    path.write_text("$ xpu-smi\n" + _XPU_TABLE)
    code, data = run_json("inventory", "--from", str(path))
    assert code == 0
    got = [(m["bus_id"], m["model"], m["memory_bytes"], m["power_limit_w"]) for m in data["modules"]]
    assert got == [("0000:03:00.0", "Intel(R) Arc(TM) Pro B60 Graphics", 24480 * 2**20, 200.0),
                   ("0000:83:00.0", "Intel GPU (xpu-smi printed no name)", 24480 * 2**20, 200.0)]
    code, _ = run_json("doctor", "--from", str(path))
    assert code == 0


def test_an_aer_excerpt_starting_inside_the_kernels_block_keeps_its_first_error_bit(tmp_path: Path) -> None:
    text = ("...\n"
            "pcieport 0000:00:03.0:    [5 ] SDES        (First)\n"
            "pcieport 0000:00:03.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, (Receiver ID)\n"
            "pcieport 0000:00:03.0:   device [8086:6f08] error status/mask=00000020/00000000\n"
            "...\n")
    path = tmp_path / "aer.txt"
    path.write_text(text)
    _, data = run_json("doctor", "--from", str(path))
    (found,) = data["findings"]
    assert (found["cause"], found["severity"], found["module"]) == ("pcie_aer_fatal", "critical", "0000:00:03.0")
    assert "SDES" in found["evidence"]["errors"]
