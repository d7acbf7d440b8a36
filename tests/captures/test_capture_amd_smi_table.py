"""amd-smi's default table (amd-smi 24.7 and later, no command): two rows per GPU under a boxed header,
read by the header's names. Written in the tool's layout; bus ids and figures are made up."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuvet.captures.read import read
from tests.support.helpers import doctor_capture, found_causes

TABLE = """$ amd-smi
+------------------------------------------------------------------------------+
| AMD-SMI 25.3.0+ede62f2       amdgpu version: 6.12.12  ROCm version: 6.4.0    |
| Platform: Linux Baremetal                                                    |
|-------------------------------------+----------------------------------------|
| BDF                        GPU-Name | Mem-Uti   Temp   UEC       Power-Usage |
| GPU  HIP-ID  OAM-ID  Partition-Mode | GFX-Uti    Fan               Mem-Usage |
|=====================================+========================================|
| 0000:0c:00.0    AMD Instinct MI300X | 0 %      41 °C   {uec}           152/750 W |
|   0       0       5        SPX/NPS1 | 0 %        N/A          283/196592 MB |
|-------------------------------------+----------------------------------------|
| 0000:22:00.0    AMD Instinct MI300X | 0 %      39 °C   0           149/750 W |
|   1       1       4        SPX/NPS1 | 0 %        N/A          283/196592 MB |
+-------------------------------------+----------------------------------------+
"""


def test_each_gpu_of_the_default_table_is_listed(tmp_path: Path) -> None:
    path = tmp_path / "amdsmi.txt"
    path.write_text(TABLE.format(uec=0))
    listed = read(str(path)).amd
    assert listed is not None
    got = [(m.label, m.name, m.bus_id, m.memory_mib, m.temperature_c, m.ecc_uncorrectable) for m in listed.modules]
    assert got == [("GPU 0", "AMD Instinct MI300X", "0000:0C:00.0", 196592.0, 41.0, 0),
                   ("GPU 1", "AMD Instinct MI300X", "0000:22:00.0", 196592.0, 39.0, 0)]


def test_uncorrectable_ecc_in_the_table_is_judged(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, data = doctor_capture(capsys, tmp_path, TABLE.format(uec=3), name="uec.txt")
    assert code == 1 and any("0000:0C:00.0" in str(module) for _, module in found_causes(data))
    code, data = doctor_capture(capsys, tmp_path, TABLE.format(uec=0), name="ok.txt")
    assert code == 0
