"""nvidia-smi's default table from the 610 drivers on (issue 46, batch L's club1107 as a class): its banner
names the kernel module's version 'KMD Version' and the CUDA driver's 'CUDA UMD Version' where older tables
say 'Driver Version' and 'CUDA Version'; both are the inventory's driver and CUDA versions."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import capture_json

_TABLE = """\
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 610.21.01              KMD Version: 610.21.01     CUDA UMD Version: 13.2     |
+-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|                                         |                        |               MIG M. |
|=========================================+========================+======================|
|   0  NVIDIA RTX PRO 6000 Blackwell...   On |   00000000:41:00.0 Off |                    0 |
| 30%   34C    P8             31W /  600W |       1MiB /  97887MiB |      0%      Default |
|                                         |                        |                  N/A |
+-----------------------------------------+------------------------+----------------------+
"""


def test_the_610_banner_gives_the_driver_and_cuda_versions(tmp_path: Path) -> None:
    data = capture_json(tmp_path, _TABLE, "inventory")
    software = data["software"]
    assert (software["driver_version"], software["cuda_driver_version"]) == ("610.21.01", "13.2")  # type: ignore[index]
    assert [m["bus_id"] for m in data["modules"]] == ["0000:41:00.0"]  # type: ignore[index,union-attr]
