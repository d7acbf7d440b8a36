"""A module nvidia-smi cannot read (issue 46): its row of the default table prints ERR! where the fan,
temperature and performance state go, or its -q fields read 'Unknown Error'. NVML got an error from the
module; doctor names it (module_unreadable), and only it. The captures are written here in the tools'
formats (driver 550 table frame, -q key/value layout)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.helpers import doctor_capture, found_causes

_FRAME = "+-----------------------------------------+------------------------+----------------------+\n"
_HEAD = ("+-----------------------------------------------------------------------------------------+\n"
         "| NVIDIA-SMI 550.54.15              Driver Version: 550.54.15      CUDA Version: 12.4     |\n"
         "|-----------------------------------------+------------------------+----------------------+\n"
         "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |\n"
         "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |\n"
         "|                                         |                        |               MIG M. |\n"
         "|=========================================+========================+======================|\n")


def _module(index: int, bus: str, state: str) -> str:
    return (f"|   {index}  NVIDIA L4                      On  |   00000000:{bus}.0 Off |                    0 |\n"
            f"| {state:<39} |       0MiB /  23034MiB |      0%      Default |\n"
            "|                                         |                        |                  N/A |\n" + _FRAME)


def test_an_err_row_names_that_module(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    table = _HEAD + _module(0, "3B:00", "ERR!  ERR! ERR!              N/A /  N/A") + _module(1, "5E:00", "N/A   "
                                                                                              "33C    P8     16W /  72W")
    code, data = doctor_capture(capsys, tmp_path, table)
    assert code == 1 and found_causes(data) == {("module_unreadable", "0000:3B:00.0")}
    fields = next(f["evidence"]["fields"] for f in data["findings"])
    assert "Fan Speed" in fields and "Temperature/GPU Current Temp" in fields


@pytest.mark.parametrize("state", ["N/A   31C    P8     16W /  72W",
                                   "N/A   31C    P0    ERR! /  72W"])  # one sensor's ERR!: a transient, no fault
def test_a_readable_module_names_nothing(capsys: pytest.CaptureFixture[str], tmp_path: Path, state: str) -> None:
    code, data = doctor_capture(capsys, tmp_path, _HEAD + _module(0, "3B:00", state))
    assert code == 0 and data["findings"] == []


def test_unknown_error_fields_in_q(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    q = ("==============NVSMI LOG==============\n\nTimestamp                                 : Mon Jun  3 10:00:00 2024\n"
         "Driver Version                            : 550.54.15\nCUDA Version                              : 12.4\n\n"
         "Attached GPUs                             : 1\nGPU 00000000:3B:00.0\n"
         "    Product Name                          : NVIDIA L4\n    Product Brand                         : {brand}\n"
         "    Product Architecture                  : Ada Lovelace\n")
    code, data = doctor_capture(capsys, tmp_path, q.format(brand="Unknown Error"))
    assert code == 1 and found_causes(data) == {("module_unreadable", "0000:3B:00.0")}
    code, data = doctor_capture(capsys, tmp_path, q.format(brand="NVIDIA"))
    assert code == 0 and data["findings"] == []
