"""Issue 46 (PHRD): DCGM's failure messages are the causes their DCGM_FR_ codes name (knowledge/dcgm_errors.yaml,
from NVIDIA/DCGM's dcgm_errors.h), wherever they are printed: dcgmi diag's table (DCGM 2/3 and 4, wrapped at 45
characters mid-word), -j JSON by its error_id, dcgmi health -c's incidents, DCGM's own log lines, another program's
line and a poster's sentence; the fabric manager's own failures too. The lines are written here in the tools'
formats, the messages filled as DCGM fills its formats."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gpuvet.captures import dcgm_messages
from gpuvet.captures.dcgm_health import MESSAGE_MARKS
from gpuvet.doctor.model import causes
from gpuvet.knowledge.dcgm_errors import GENERIC, XID, dcgm_codes
from tests.support.helpers import doctor_capture

_EDGE = "+---------------------------+------------------------------------------------+"


def _row(key: str, value: str) -> str:
    return f"| {key:<25} | {value:<46} |"


def _cells(message: str) -> list[str]:
    return [message[i:i + 45] for i in range(0, len(message), 45)]  # dcgmi's cut, mid-word


def _diag3(test: str, gpu: int, message: str) -> str:
    rows = [_row("Warning" if i == 0 else "", part) for i, part in enumerate(_cells(f"GPU {gpu} {message}"))]
    return "\n".join([_EDGE, _row("Diagnostic", "Result"), _EDGE.replace("-", "="),
                      "|-----  Hardware  ----------+------------------------------------------------|",
                      _row(test, f"Fail - GPU: {gpu}"), *rows, _EDGE]) + "\n"


def _diag4(test: str, gpu: int, message: str) -> str:
    rows = [_row(f"Warning: GPU{gpu}" if i == 0 else "", part) for i, part in enumerate(_cells(message))]
    return "\n".join([_EDGE, _row("Diagnostic", "Result"), _EDGE.replace("-", "="),
                      "|-----  Integration  -------+------------------------------------------------|",
                      _row(test, "Fail"), _row("", "GPU0: Pass"), _row("", f"GPU{gpu}: Fail"), *rows, _EDGE]) + "\n"


def _found(data: dict[str, object]) -> set[tuple[str, str | None, str]]:
    return {(f["cause"], f.get("module"), f["severity"]) for f in data["findings"]}  # type: ignore[attr-defined]


DBE = "Detected 2 volatile double-bit ECC error(s) in GPU 3. Drain the GPU and reset it or reboot the node."
WIDTH = ("GPU 1 is running at PCI link width 8X, which is below the minimum allowed link generation of 16 (parameter "
         "'min_pci_width') Check DCGM and system configuration.")


def test_a_diag_failure_is_the_cause_its_message_names_in_dcgm_2_and_4_tables(capsys: pytest.CaptureFixture[str],
                                                                               tmp_path: Path) -> None:
    code, data = doctor_capture(capsys, tmp_path, _diag3("GPU Memory", 3, DBE))
    assert code == 1 and _found(data) == {("ecc_uncorrectable_since_boot", "GPU3", "critical")}
    code, data = doctor_capture(capsys, tmp_path, _diag4("pcie", 1, WIDTH))
    assert _found(data) == {("pcie_link_downgraded", "GPU1", "warn")}  # DCGM_FR_PCIE_WIDTH: a setting, not a drain
    evidence = data["findings"][0]["evidence"]
    assert evidence["dcgm_code"] == "DCGM_FR_PCIE_WIDTH" and evidence["test"] == "pcie"


def test_a_diag_json_result_is_read_by_its_error_id(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """'Detected %ld %s for GPU %u which is above the threshold %ld' is four codes' format: -j's error_id says 107,
    PCIe replays past DCGM's isolate limit (the text alone says so by its field, pcie_replay_counter)."""
    warning = {"warning": "Detected 212 pcie_replay_counter for GPU 0 which is above the threshold 100 Run a field "
                          "diagnostic on the GPU.", "error_id": 107, "error_category": 13, "error_severity": 2}
    doc = {"DCGM GPU Diagnostic": {"version": "3.3.5", "test_categories": [{"category": "Integration", "tests": [
        {"name": "PCIe", "results": [{"gpu_ids": "0", "status": "FAIL", "warnings": [warning]},
                                     {"gpu_ids": "1", "status": "PASS"}]}]}]}}
    code, data = doctor_capture(capsys, tmp_path, json.dumps(doc, indent=4))
    assert code == 1 and _found(data) == {("pcie_replays_beyond_limit", "GPU0", "critical")}


def test_health_incidents_take_their_codes_cause_at_dcgms_weight(capsys: pytest.CaptureFixture[str],
                                                                   tmp_path: Path) -> None:
    box = "\n".join([_EDGE, "| Health Monitor Report                                                      |", _EDGE,
                     _row("Overall Health", "Failure"), _row("GPU", ""), _row("-> 2", "Failure"),
                     _row("   -> Errors", ""), _row("      -> NVLINK system", "Failure"),
                     *(_row("", p) for p in _cells("Detected 4 nvlink_replay_error_count_total NvLink errors on GPU "
                                                   "2's NVLink (should be 0) Run a field diagnostic on the GPU.")),
                     _row("-> 5", "Warning"), _row("   -> Errors", ""), _row("      -> Memory system", "Warning"),
                     *(_row("", p) for p in _cells("A pending retired page has been detected in GPU 5. Monitor - "
                                                   "this GPU can still perform workload")), _EDGE]) + "\n"
    code, data = doctor_capture(capsys, tmp_path, box)
    assert code == 1 and _found(data) == {("nvlink_errors_beyond_limit", "GPU 2", "critical"),
                                          ("page_retirement_pending", "GPU 5", "warn")}


def test_dcgms_log_lines_and_other_programs_lines_name_their_cause(capsys: pytest.CaptureFixture[str],
                                                                  tmp_path: Path) -> None:
    log = ("2025-03-02 10:14:03.112 ERROR [2231:2240] Detected XID 79 for GPU 2 Please consult the documentation for "
           "details of this XID. [/workspaces/dcgm/nvvs/src/DcgmRecorder.cpp:668] [DcgmRecorder::CheckXIDs]\n")
    code, data = doctor_capture(capsys, tmp_path, log)
    assert code == 1 and _found(data) == {("module_fell_off_bus", "GPU 2", "critical")}
    said = "Mar 02 10:14:03 node7 health-agent[811]: GPU 0 had uncorrectable memory errors and row remapping failed.\n"
    code, data = doctor_capture(capsys, tmp_path, said)
    assert _found(data) == {("row_remap_failure", "GPU 0", "critical")}
    switch = "2025-03-02 10:14:03.112 WARNING [2231:2240] Detected fatal errors on NvSwitch 2 link 17\n"
    code, data = doctor_capture(capsys, tmp_path, switch)
    assert _found(data) == {("nvswitch_sxid_fatal", "NvSwitch 2", "critical")}


def test_a_quoted_message_is_the_posters_lead(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    text = f'dcgmi diag -r 3 fails on node7 with "{DBE}" - is the card dead?\n'
    code, data = doctor_capture(capsys, tmp_path, text)
    assert code == 1 and _found(data) == {("ecc_uncorrectable_since_boot", "GPU 3", "warn")}  # a sentence: a lead
    assert data["findings"][0]["evidence"]["dcgm_code"] == "DCGM_FR_VOLATILE_DBE_DETECTED"


def test_a_clocks_event_is_judged_by_the_reason_dcgm_names(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    brake = ("Clocks event for GPU 4 because of clocks event starting 12.5 seconds into the test. "
             "clocks_event_reason_hw_power_brake_slowdown: the power brake assertion has triggered. Please check the "
             "power supply. Check DCGM and system logs for errors.")
    code, data = doctor_capture(capsys, tmp_path, _diag4("targeted_power", 4, brake))
    assert code == 1 and _found(data) == {("hw_power_brake", "GPU4", "critical")}


def test_dcgms_own_trouble_and_its_settings_stay_its_own_words(capsys: pytest.CaptureFixture[str],
                                                              tmp_path: Path) -> None:
    """A field DCGM could not read is DCGM's trouble: read in its log, judged nowhere; persistence mode off stays
    dcgmi diag's own warning; a corrupt InfoROM (a hardware code DCGM names generically) its health warning."""
    trouble = "2025-03-02 10:14:03.112 ERROR [2231:2240] Could not query field gpu_temp for GPU 0 [/dcgm/x.cpp:1]\n"
    code, data = doctor_capture(capsys, tmp_path, trouble)
    assert code == 0 and data["findings"] == []
    inforom = "2025-03-02 10:14:03.112 ERROR [2231:2240] A corrupt InfoROM has been detected in GPU 1. Flash it.\n"
    code, data = doctor_capture(capsys, tmp_path, inforom)
    assert _found(data) == {("dcgm_health_warning", "GPU 1", "warn")}
    setting = _diag3("Persistence Mode", 0, "Persistence mode for GPU 0 is disabled. Enable persistence mode by "
                                            "running \"nvidia-smi -i <gpuId> -pm 1 \" as root.")
    code, data = doctor_capture(capsys, tmp_path, setting)
    assert {c for c, _, _ in _found(data)} == {"dcgm_diag_failed"}


def test_the_fabric_managers_own_failures(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Its driver version check (gpu-operator #544) fails the start; its multicast team set-up failing is NVLS's;
    DCGM's advice naming it ('Ensure Fabric Manager is running') is DCGM's message, not its log."""
    version = ("Nov 05 13:55:26 node1 nv-fabricmanager[104230]: fabric manager NVIDIA GPU driver interface version "
               "550.127.05 don't match with driver version 550.120. Please update with matching NVIDIA driver package.\n")
    code, data = doctor_capture(capsys, tmp_path, version)
    assert code == 1 and _found(data) == {("fabric_manager_failed", None, "critical")}
    team = ("[Sep 17 2024 06:01:46] [ERROR] [tid 1230079] failed to find the GPU handle 5410063385821516767 in the "
            "multicast team request setup 6130285411925746235.\n")
    code, data = doctor_capture(capsys, tmp_path, team)
    assert _found(data) == {("nvls_setup_failed", None, "critical")}
    advice = ("2025-03-02 10:14:03.112 ERROR [2231:2240] NvSwitch 2 - Only 14 NvLinks are up out of the expected 18 "
              "Ensure Fabric Manager is running. Check system logs, dmesg, and fabric-manager logs for more info.\n")
    code, data = doctor_capture(capsys, tmp_path, advice)
    assert _found(data) == {("nvlink_down", "NvSwitch 2", "critical")}


def test_the_catalogue_holds_together() -> None:
    """Every code's cause is doctor's (or DCGM's generic one, an Xid, none); ids are DCGM's, once each; every format
    becomes a pattern; every format read outside DCGM's output holds one of the words the reader is woken by."""
    codes = dcgm_codes().values()
    assert len({c.id for c in codes}) == len(codes) and max(c.id for c in codes) == 132
    known = set(causes())
    for c in codes:
        for cause in (c.cause, *(f for _, f in c.fields)):
            assert cause in (None, GENERIC, XID) or cause in known, (c.name, cause)
        assert c.cause != XID or c.xid is not None or "XID %u" in " ".join(c.formats), c.name
    for p in dcgm_messages._patterns():
        bare = p.literal >= dcgm_messages.BARE_LITERAL and p.strings <= 1 and p.code.judged
        assert not bare or any(m in p.format for m in MESSAGE_MARKS), p.format
        filled = re.sub(r"%[-+ #0]*\d*(?:\.\d+)?[hlz]*[a-zA-Z]", "7", p.format.replace("%%", "\0")).replace("\0", "%")
        assert p.pattern.search(dcgm_messages.squeezed(filled)), p.format
