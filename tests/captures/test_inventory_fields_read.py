"""Issue 46 (INV3): inventory --from says the fields a capture prints and it left unread: the links topo -m
prints between GPUs and devices (NV#, PIX, PHB), the chip an amdgpu firmware file or a framework's 'AMD arch'
line names, the versions nvidia-smi's banner prints where the table under it is cut, rocm-smi's device id,
VBIOS, serial and VRAM in MiB, and the compute capability deviceQuery and --query-gpu print. Nothing the file
does not say is added. Lines written here in the tools' formats, not copies of captures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.helpers import call

TOPO = """\
\tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID
GPU0\t X \tNV4\tPIX\t0-15\t0\t\tN/A
GPU1\tNV4\t X \tPHB\t0-15\t0\t\tN/A
NIC0\tPIX\tPHB\t X

NIC Legend:

  NIC0: mlx5_2
"""

FIRMWARE = """\
Mar 02 10:11:12 box kernel: drmn0: could not load firmware image 'amdgpu/dimgrey_cavefish_sos.bin'
Mar 02 10:11:12 box kernel: drmn0: failed to init sos firmware
Mar 02 10:11:12 box kernel: drmn0: amdgpu_device_ip_init failed
Mar 02 10:11:12 box kernel: drmn0: Fatal error during GPU init
"""

IP_FIRMWARE = """\
Mar 02 10:11:12 box kernel: amdgpu 0000:03:00.0: Direct firmware load for amdgpu/psp_13_0_10_sos.bin failed with error -2
Mar 02 10:11:12 box kernel: amdgpu 0000:03:00.0: amdgpu: amdgpu_device_ip_init failed
Mar 02 10:11:12 box kernel: amdgpu 0000:03:00.0: amdgpu: Fatal error during GPU init
"""

NV_BESIDE_AMD_FIRMWARE = """\
Mar 02 10:11:12 box kernel: [drm] Loading DMUB firmware amdgpu/renoir_dmcub.bin
Mar 02 10:11:13 box kernel: NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x22:0x56:667)
"""

ARCH = """\
Memory access fault by GPU node-1 (Agent handle: 0x5611) on address 0x7f00aa000000. Reason: Page not present.
Total VRAM 24560 MB, total RAM 64000 MB
AMD arch: gfx1030
Mar 02 10:11:12 box kernel: amdgpu 0000:2d:00.0: amdgpu: [gfxhub] page fault (src_id:0 ring:24 vmid:3 pasid:32770)
"""

BANNER = """\
Mar 02 10:11:12 box kernel: NVRM: Xid (PCI:0000:41:00): 79, pid=1234, GPU has fallen off the bus.
$ nvidia-smi
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 555.42.06              Driver Version: 555.42.06      CUDA Version: 12.5     |
|-----------------------------------------+------------------------+----------------------+
# [cut]
"""

ROCM_SMI_IDS = """\
========================= ROCm System Management Interface =========================
GPU[0]\t\t: GPU ID: 0x740f
GPU[0]\t\t: VBIOS version: 113-D6730100-X01
GPU[0]\t\t: Serial Number: 692255000417
GPU[1]\t\t: GPU ID: 0xffff
==================================== End of ROCm SMI Log ===================================
"""

ROCM_SMI_JSON = (
    '{"card0": {"Device ID": "0x66a1", "Card Series": "Radeon Instinct MI50", "Serial Number": "RA0412345",'
    ' "VRAM Total Memory (MiB)": "16368", "VRAM Total Used Memory (MiB)": "10"}}\n'
)

DEVICE_QUERY = """\
./deviceQuery Starting...

 CUDA Device Query (Runtime API) version (CUDART static linking)

Detected 1 CUDA Capable device(s)

Device 0: "Tesla T4"
  CUDA Driver Version / Runtime Version          12.2 / 12.1
  CUDA Capability Major/Minor version number:    7.5
  Total amount of global memory:                 14931 MBytes (15655829504 bytes)
  Device PCI Domain ID / Bus ID / location ID:   0 / 59 / 0

deviceQuery, CUDA Driver = CUDART, CUDA Driver Version = 12.2, CUDA Runtime Version = 12.1, NumDevs = 1
Result = PASS
"""

QUERY_CSV = """\
name, pci.bus_id, compute_cap, memory.total [MiB]
Tesla T4, 00000000:3B:00.0, 7.5, 15360 MiB
"""


def _inventory(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, name: str) -> dict[str, object]:
    path = tmp_path / name
    path.write_text(text)
    code, out, _ = call(capsys, "inventory", "--from", str(path), "--json")
    assert code == 0
    data = json.loads(out)
    assert isinstance(data, dict)
    return data


def _models(data: dict[str, object]) -> list[str]:
    modules = data["modules"]
    assert isinstance(modules, list)
    return [m["model"] for m in modules]


def test_inventory_says_the_links_topo_prints(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    notes = " ".join(_inventory(capsys, tmp_path, TOPO, "topo.txt")["notes"])  # type: ignore[arg-type]
    assert "NV4 GPU0-GPU1" in notes
    assert "PIX GPU0-NIC0 (mlx5_2)" in notes
    assert "PHB GPU1-NIC0 (mlx5_2)" in notes


def test_an_amdgpu_firmware_name_gives_the_chip(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert _models(_inventory(capsys, tmp_path, FIRMWARE, "fw.log")) == ["AMD dimgrey_cavefish"]


def test_firmware_named_by_ip_version_names_no_chip(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert _models(_inventory(capsys, tmp_path, IP_FIRMWARE, "ip.log")) == ["unknown AMD module"]


def test_amd_firmware_is_never_an_nvidia_module_s_model(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert "renoir" not in " ".join(_models(_inventory(capsys, tmp_path, NV_BESIDE_AMD_FIRMWARE, "mixed.log")))


def test_a_framework_s_amd_arch_line_names_the_isa(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert _models(_inventory(capsys, tmp_path, ARCH, "arch.log")) == ["AMD gfx1030"]


def test_smi_banner_above_a_cut_table_gives_the_versions(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    software = _inventory(capsys, tmp_path, BANNER, "banner.log")["software"]
    assert isinstance(software, dict)
    assert (software["driver_version"], software["cuda_driver_version"]) == ("555.42.06", "12.5")


def test_rocm_smi_ids_vbios_and_serial_are_read(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data = _inventory(capsys, tmp_path, ROCM_SMI_IDS, "rocmsmi.txt")
    modules = data["modules"]
    assert isinstance(modules, list)
    assert [m["model"] for m in modules] == ["AMD Instinct MI210", "unknown"]  # 0xffff: no name invented
    assert (modules[0]["vbios_version"], modules[0]["serial"]) == ("113-D6730100-X01", "692255000417")
    assert "0xffff" in " ".join(data["notes"])  # type: ignore[arg-type]


def test_rocm_smi_json_vram_in_mib_and_serial(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    modules = _inventory(capsys, tmp_path, ROCM_SMI_JSON, "rocmsmi.json")["modules"]
    assert isinstance(modules, list)
    assert (modules[0]["memory_bytes"], modules[0]["serial"]) == (16368 * 2**20, "RA0412345")


@pytest.mark.parametrize(("text", "name"), [(DEVICE_QUERY, "dq.txt"), (QUERY_CSV, "q.csv")])
def test_compute_capability_is_the_module_s(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str,
                                             name: str) -> None:
    modules = _inventory(capsys, tmp_path, text, name)["modules"]
    assert isinstance(modules, list)
    assert [m["compute_capability"] for m in modules] == ["7.5"]
