"""dcgmi diag's text table (issue 46): a group result ('Fail - All') whose detail names the GPU is that GPU's,
the GPUs its results name are the module list where nothing else lists them, and a Fail whose only evidence is
'NvLink link N is currently down' is DCGM's warning unless the modules read have NvLink by design (DCGM 2.x
reports links down on PCIe boards that have none). The tables are written here in DCGM 2.x's layout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.helpers import call, doctor_capture, found_causes

_TOP = ("+---------------------------+------------------------------------------------+\n"
        "| Diagnostic                | Result                                         |\n"
        "+===========================+================================================+\n"
        "|-----  Deployment  --------+------------------------------------------------|\n"
        "| Blacklist                 | Pass                                           |\n"
        "+-----  Integration  -------+------------------------------------------------+\n")


def _table(detail: list[str]) -> str:
    rows = [f"| {'PCIe':<25} | {'Fail - All':<46} |\n", f"| {'Warning':<25} | {detail[0]:<46} |\n"]
    rows += [f"| {'':<25} | {d:<46} |\n" for d in detail[1:]]
    return _TOP + "".join(rows) + "+---------------------------+------------------------------------------------+\n"


LINKS_DOWN = ["GPU 1GPU 1's NvLink link 0 is currently down", "Run a field diagnostic on the GPU., GPU 1GPU",
              "1's NvLink link 1 is currently down Run a fie", "ld diagnostic on the GPU."]
REPLAYS = ["GPU 1 PCIe replay count 212 exceeds the limit", "of 8 replays"]


def test_links_down_alone_on_modules_of_unknown_design_is_a_warning(capsys: pytest.CaptureFixture[str],
                                                                    tmp_path: Path) -> None:
    code, data = doctor_capture(capsys, tmp_path, _table(LINKS_DOWN))
    assert code == 1 and found_causes(data) == {("dcgm_diag_warning", "GPU1")}
    assert data["findings"][0]["severity"] == "warn"
    path = tmp_path / "capture.txt"
    code, out, _ = call(capsys, "inventory", "--from", str(path), "--json")
    assert code == 0 and [(m["id"], m["bus_id"]) for m in json.loads(out)["modules"]] == [("gpu1", None)]


def test_another_failure_stays_a_failed_diagnostic(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, data = doctor_capture(capsys, tmp_path, _table(REPLAYS))
    assert code == 1 and found_causes(data) == {("dcgm_diag_failed", "GPU1")}


def test_links_down_on_modules_built_with_nvlink_stay_a_failure(capsys: pytest.CaptureFixture[str],
                                                                  tmp_path: Path) -> None:
    listing = "GPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-0b8c5f3e-1111-2222-3333-444455556666)\n"
    code, data = doctor_capture(capsys, tmp_path, listing + _table(LINKS_DOWN))
    # issue 46 (PHRD): DCGM_FR_NVLINK_DOWN's message is its cause (knowledge/dcgm_errors.yaml), still a failure
    assert code == 1 and ("nvlink_down", "GPU1") in found_causes(data)
    assert {f["severity"] for f in data["findings"] if f["module"] == "GPU1"} == {"critical"}
