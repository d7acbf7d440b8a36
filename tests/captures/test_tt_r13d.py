"""Issue 46 (R13D): Tenstorrent's tools in their own words, each a verdict on its chip: tt-flash's (luwen's) chip
init status with ARC/CPU/DRAM timeouts and luwen's 'not currently safe to communicate with ARC' (critical: the chip
is not up), tt-umd's 'Unknown board type … old firmware' (warn), tt-metal's ethernet port that never trains (warn,
the port named); a wait whose ports all train is no fault. Lines written here in each tool's form."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.helpers import capture_json

FLASH_INIT = """\
Exception: Chip initialization failed:
   Communication Status: Success
   DRAM Status: Timeout, 4 out of 4 initialized
   CPU Status: Timeout
   ARC Status: Timeout, 0 out of 1 initialized
   Ethernet Status: In Progress, 16 out of 16 initialized
"""
ARC_UNSAFE = """\
$ sudo tt-smi
 Detected Chips: 1
Traceback (most recent call last):
  File "/usr/lib/python3.11/site-packages/tt_smi/tt_smi_backend.py", line 173, in get_smbus_board_info
    telem_struct = pylewen_chip.get_telemetry()
Exception: It is not currently safe to communicate with ARC because,
"""
UMD_OLD_FW = """\
WARNING  | SiliconDriver   - Unknown board type for chip 0. This might happen because chip is running old firmware.
2024-12-06 21:14:27.393 | INFO     | SiliconDriver   - Opened PCI device 0; KMD version: 1.28.0, IOMMU: disabled
"""
ETH_PORT = """\
Waiting for ethernet ports to train on chip [1, 0, 0, 0].
[0; [1, 0, 0, 0]] Still waiting... {0: True, 1: True, 2: True, 13: True, 14: False, 15: True}
[1; [1, 0, 0, 0]] Still waiting... {0: True, 1: True, 2: True, 13: True, 14: False, 15: True}
"""
ETH_TRAINED = """\
Waiting for ethernet ports to train on chip [1, 0, 0, 0].
[0; [1, 0, 0, 0]] Still waiting... {0: True, 1: True, 2: True, 13: True, 14: False, 15: True}
[1; [1, 0, 0, 0]] Still waiting... {0: True, 1: True, 2: True, 13: True, 14: True, 15: True}
"""


def _severe(tmp_path: Path, text: str) -> dict[str | None, str]:
    found = capture_json(tmp_path, text)["findings"]
    assert isinstance(found, list)
    return {f.get("module"): f["severity"] for f in found if f["severity"] in ("warn", "critical")}


@pytest.mark.parametrize(
    ("text", "module", "severity", "said"),
    [
        (FLASH_INIT, "TT device (index not in the log)", "critical", "ARC Timeout (0 of 1)"),
        (ARC_UNSAFE, "TT device (index not in the log)", "critical", "safe to communicate with ARC"),
        (UMD_OLD_FW, "TT device 0", "warn", "old firmware"),
        (ETH_PORT, "TT chip [1, 0, 0, 0]", "warn", "port(s) 14 never trained"),
    ],
)
def test_a_tenstorrent_tools_fault_is_a_verdict_on_its_chip(
    tmp_path: Path, text: str, module: str, severity: str, said: str
) -> None:
    assert _severe(tmp_path, text) == {module: severity}
    assert said in str(capture_json(tmp_path, text)["findings"])


def test_ports_that_trained_at_the_last_poll_are_no_fault(tmp_path: Path) -> None:
    assert _severe(tmp_path, ETH_TRAINED) == {}
