"""nvidia-smi's whole answer "No devices were found" (issue 46): the driver answered and lists no module.

Alone it is a finding (no module visible, medium confidence: a container started without its GPUs prints it too);
beside an lspci listing of NVIDIA functions it is the driver not bringing them up; beside a listing of another
vendor's GPUs only, NVIDIA's tool rightly finds none and nothing is said."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.helpers import run

SMI_NONE = "$ nvidia-smi\nNo devices were found\n"
LSPCI_AMD_ONLY = ("0b:00.0 VGA compatible controller: Advanced Micro Devices, Inc. [AMD/ATI] Navi 31 "
                  "[Radeon RX 7900 XT/7900 XTX] (rev c8)\n")
LSPCI_NVIDIA = "41:00.0 3D controller: NVIDIA Corporation GH100 [H100 SXM5 80GB] (rev a1)\n"


def _findings(tmp_path: Path, text: str) -> list[tuple[str, str, str | None]]:
    path = tmp_path / "capture.txt"
    path.write_text(text)
    code, out, err = run(["doctor", "--from", str(path), "--json"])
    assert code in (0, 1), err
    return [(f["cause"], f["severity"], f.get("module")) for f in json.loads(out)["findings"]]


def test_nvidia_smi_finding_no_device_alone_is_no_module_visible(tmp_path: Path) -> None:
    assert _findings(tmp_path, SMI_NONE) == [("no_modules_visible", "critical", None)]


def test_with_nvidia_functions_on_the_bus_the_finding_names_them(tmp_path: Path) -> None:
    assert _findings(tmp_path, LSPCI_NVIDIA + SMI_NONE) == [("no_modules_visible", "critical", "0000:41:00.0")]


def test_beside_only_another_vendors_gpus_nothing_is_said(tmp_path: Path) -> None:
    assert _findings(tmp_path, LSPCI_AMD_ONLY + SMI_NONE) == []
