"""Issue 46 (R11A): nvidia-smi -q's ECC Errors and Remapped Rows in each driver's spelling (Double Bit / Device
Memory and Total before R510, SRAM/DRAM Uncorrectable from R510, SRAM Uncorrectable Parity / SEC-DED from R550).
An uncorrectable error in the module's life (Aggregate, Remapped Rows' Uncorrectable Error) with none since boot
and no remap pending or failed is a warn (ecc_uncorrectable_history), never 'clear'; one since boot stays
critical. Blocks written in -q's layout (figures and bus ids made up); the batch AW row is read as one check."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.helpers import capture_findings

CAPS = Path(__file__).parents[1] / "data" / "captures"
BUS = "0000:3B:00.0"

_HEAD = """==============NVSMI LOG==============

Timestamp                                 : Mon Dec  7 10:00:00 2026
Driver Version                            : {driver}
CUDA Version                              : 12.4

Attached GPUs                             : 1
GPU 00000000:3B:00.0
    Product Name                          : NVIDIA A100-SXM4-80GB
    ECC Mode
        Current                           : Enabled
        Pending                           : Enabled
    ECC Errors
"""

_R550 = """        Volatile
            SRAM Correctable              : 0
            SRAM Uncorrectable Parity     : 0
            SRAM Uncorrectable SEC-DED    : 0
            DRAM Correctable              : 0
            DRAM Uncorrectable            : {vol}
        Aggregate
            SRAM Correctable              : 0
            SRAM Uncorrectable Parity     : 0
            SRAM Uncorrectable SEC-DED    : 0
            DRAM Correctable              : 12
            DRAM Uncorrectable            : {agg}
"""

_R510 = """        Volatile
            SRAM Correctable              : 0
            SRAM Uncorrectable            : 0
            DRAM Correctable              : 0
            DRAM Uncorrectable            : {vol}
        Aggregate
            SRAM Correctable              : 0
            SRAM Uncorrectable            : 0
            DRAM Correctable              : 3
            DRAM Uncorrectable            : {agg}
"""

_R470 = """        Volatile
            Single Bit
                Device Memory             : 0
                Register File             : 0
                Total                     : 0
            Double Bit
                Device Memory             : {vol}
                Register File             : 0
                Total                     : {vol}
        Aggregate
            Single Bit
                Device Memory             : 5
                Register File             : 0
                Total                     : 5
            Double Bit
                Device Memory             : {agg}
                Register File             : 0
                Total                     : {agg}
"""

_REMAP = """    Remapped Rows
        Correctable Error                 : 0
        Uncorrectable Error               : {rows}
        Pending                           : No
        Remapping Failure Occurred        : No
        Bank Remap Availability Histogram
            Max                           : 639 bank(s)
            High                          : 1 bank(s)
            Partial                       : 0 bank(s)
            Low                           : 0 bank(s)
            None                          : 0 bank(s)
    Temperature
        GPU Current Temp                  : 33 C
"""

_SPELLINGS = {"550.127.05": _R550, "515.65.01": _R510, "470.182.03": _R470}


def _q(driver: str, vol: int, agg: int, rows: int) -> str:
    return _HEAD.format(driver=driver) + _SPELLINGS[driver].format(vol=vol, agg=agg) + _REMAP.format(rows=rows)


@pytest.mark.parametrize("driver", sorted(_SPELLINGS))
def test_an_aggregate_uncorrectable_error_repaired_is_a_warn(tmp_path: Path, driver: str) -> None:
    found = capture_findings(tmp_path, _q(driver, vol=0, agg=1, rows=1))
    assert found.get(("ecc_uncorrectable_history", BUS)) == "warn"
    assert ("ecc_uncorrectable_since_boot", BUS) not in found


def test_an_uncorrectable_remapped_row_alone_is_a_warn(tmp_path: Path) -> None:
    found = capture_findings(tmp_path, _q("550.127.05", vol=0, agg=0, rows=2))
    assert found.get(("ecc_uncorrectable_history", BUS)) == "warn"


@pytest.mark.parametrize("driver", sorted(_SPELLINGS))
def test_one_since_boot_stays_critical_and_is_named_once(tmp_path: Path, driver: str) -> None:
    found = capture_findings(tmp_path, _q(driver, vol=1, agg=1, rows=1))
    assert found.get(("ecc_uncorrectable_since_boot", BUS)) == "critical"
    assert ("ecc_uncorrectable_history", BUS) not in found


@pytest.mark.parametrize("driver", sorted(_SPELLINGS))
def test_zero_counters_stay_clear(tmp_path: Path, driver: str) -> None:
    found = capture_findings(tmp_path, _q(driver, vol=0, agg=0, rows=0))
    assert not [k for k, sev in found.items() if sev in ("warn", "critical")]


def test_batch_aw_gh200_row(tmp_path: Path) -> None:
    text = (CAPS / "fresh_aw" / "nvidia-smi_thamadagls_gh200_table_q.txt").read_text()
    found = capture_findings(tmp_path, text)
    assert found.get(("ecc_uncorrectable_history", "0000:DD:00.0")) == "warn"


_IDLE = """GPU 00000000:08:00.0
    Product Name                          : NVIDIA A10
    Performance State                     : P8
    Clocks Event Reasons
        Idle                              : Not Active
        SW Power Cap                      : Active
        HW Slowdown                       : Not Active
    Utilization
        Gpu                               : {util} %
        Memory                            : 0 %
    Clocks
        Graphics                          : 0 MHz
        SM                                : 0 MHz
    Max Clocks
        Graphics                          : 1695 MHz
        SM                                : 1695 MHz
"""


def test_an_idle_module_at_p8_with_sw_power_cap_is_no_clock_fault(tmp_path: Path) -> None:
    """Drivers report SW Power Cap active on an idle A10 at P8 (Idle itself 'Not Active'): at 0 % utilization the
    SM clock says nothing; the same clock on a busy module stays a warn."""
    idle = capture_findings(tmp_path, _IDLE.format(util=0))
    assert ("clocks_held_low", "0000:08:00.0") not in idle
    busy = capture_findings(tmp_path, _IDLE.format(util=97))
    assert busy.get(("clocks_held_low", "0000:08:00.0")) == "warn"


def test_batch_aw_a10_row_is_healthy(tmp_path: Path) -> None:
    text = (CAPS / "fresh_aw" / "nvidia-smi_thamadagls_a10_table_q.txt").read_text()
    assert not [k for k, sev in capture_findings(tmp_path, text).items() if sev in ("warn", "critical")]


@pytest.mark.parametrize(
    "title",
    [
        "# [Usage]: RuntimeError: CUDA error: uncorrectable ECC error encountered",
        "# RuntimeError: CUDA error: uncorrectable ECC error encountered",
    ],
)
def test_an_issue_titles_heading_quoting_the_runtime_error_is_read(tmp_path: Path, title: str) -> None:
    """An issue's title as a markdown heading ('# [Usage]: RuntimeError: …', vllm#5222) is the runtime's line the
    poster got (cudaErrorECCUncorrectable's text), not a code comment."""
    found = capture_findings(tmp_path, title + "\n\nThe job stops after a few minutes.\n")
    assert found.get(("ecc_uncorrectable_since_boot", None)) == "critical"


def test_batch_aw_vllm5222_row(tmp_path: Path) -> None:
    text = (CAPS / "fresh_aw" / "pytorch-collect-env_vllm5222_uncorrectable_ecc_a100.txt").read_text()
    assert capture_findings(tmp_path, text).get(("ecc_uncorrectable_since_boot", None)) == "critical"
