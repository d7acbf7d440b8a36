"""`dcgmi health -c` (issue 46): DCGM's health report as the tool prints it (dcgmi/Health.cpp and
DcgmiOutputTree: `Overall Health`, the entity group, `-> id`, `-> Errors`, `-> <system>` and the
message wrapped on rows with an empty key), DCGM 1.x's `GPU ID:` rows, `-c -j` JSON, and
`dcgmi discovery -l`. The messages are DCGM's own wording (dcgm_errors.h); the rest is made up."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuvet.captures import dcgm_health
from gpuvet.captures.text import clean
from tests.support.helpers import call, doctor_capture, found_causes

FRAME = "+---------------------------+------------------------------------------------------------+\n"
HEAD = (FRAME + "| Health Monitor Report                                                                  |\n"
        "+===========================+============================================================+\n")


def _row(key: str, value: str = "") -> str:
    return f"| {key:<25} | {value:<58} |\n"


def report(*incidents: tuple[str, str, str, list[str]], overall: str = "Failure") -> str:
    rows = _row("Overall Health", overall)
    if incidents:
        rows += _row("GPU")
    for gpu, system, health, message in incidents:
        rows += _row(f"-> {gpu}", health) + _row("   -> Errors") + _row(f"      -> {system}", health)
        rows += "".join(_row("", part) for part in message)
    return HEAD + rows + FRAME


NVLINK = ("0", "NVLINK system", "Failure", ["GPU 0's NvLink link 0 is currently down Check DCGM",
                                             "and system logs for errors. Reset GPU. Restart DCGM.",
                                             "GPU 0's NvLink link 1 is currently down"])
PCIE = ("2", "PCIe system", "Warning", ["Detected more than 8 PCIe replays per minute for GPU 2",
                                        ": 13 Reconnect PCIe card."])
DBE = ("1", "Memory system", "Failure", ["Detected 2 volatile double-bit ECC error(s) in GPU 1."])


def test_the_box_is_read_per_gpu_and_system() -> None:
    got = dcgm_health.parse(clean(report(PCIE, DBE)).lines)
    assert got.overall == "Failure"
    assert [(i.entity, i.system, i.health) for i in got.incidents] == [("GPU 2", "PCIe system", "Warning"),
                                                                       ("GPU 1", "Memory system", "Failure")]
    assert got.incidents[0].message.startswith("Detected more than 8 PCIe replays") and "Reconnect" in \
        got.incidents[0].message
    assert got.claimed == set(range(1, report(PCIE, DBE).count("\n") + 1))


def test_dcgm_1_rows_and_json_are_read_too() -> None:
    old = (HEAD + "| Overall Health: Warning                                                                |\n"
           + _row("GPU ID: 0", "Warning") + _row("", "PCIe system: Warning - Detected more than 8 PCIe")
           + _row("", "replays per minute for GPU 0: 13") + FRAME)
    got = dcgm_health.parse(clean(old).lines)
    assert got.overall == "Warning" and [(i.entity, i.system) for i in got.incidents] == [("GPU 0", "PCIe system")]
    assert got.incidents[0].message == "Detected more than 8 PCIe replays per minute for GPU 0: 13"
    healthy = ('{\n  "body" : {\n    "Overall Health" : { "value" : "Healthy" }\n  },\n'
               '  "header" : [ "Health Monitor Report" ]\n}\n')
    got = dcgm_health.parse(clean(healthy).lines)
    assert got.overall == "Healthy" and got.incidents == [] and len(got.claimed) == 6


def test_incidents_become_findings_on_their_gpu(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, data = doctor_capture(capsys, tmp_path, report(PCIE, DBE))
    # issue 46 (PHRD): each message's DCGM_FR_ code names its cause (knowledge/dcgm_errors.yaml), at DCGM's weight
    assert code == 1 and found_causes(data) == {("pcie_aer_errors", "GPU 2"), ("ecc_uncorrectable_since_boot", "GPU 1")}
    assert {f["cause"]: f["severity"] for f in data["findings"]}["pcie_aer_errors"] == "warn"
    code, data = doctor_capture(capsys, tmp_path, report(overall="Healthy"))
    assert code == 0 and data["findings"] == []


def test_nvlink_down_is_judged_only_on_a_module_built_into_an_nvlink_fabric(capsys: pytest.CaptureFixture[str],
                                                                             tmp_path: Path) -> None:
    # a PCIe card (or a card the capture does not name) reports every link down without a bridge: no finding
    code, data = doctor_capture(capsys, tmp_path, report(NVLINK))
    assert code == 0 and data["findings"] == []
    pcie = "GPU 0: NVIDIA A100 80GB PCIe (UUID: GPU-11111111-2222-3333-4444-555555555555)\n"
    code, data = doctor_capture(capsys, tmp_path, pcie + report(NVLINK))
    assert code == 0 and data["findings"] == []
    sxm = "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-11111111-2222-3333-4444-555555555555)\n"
    code, data = doctor_capture(capsys, tmp_path, sxm + report(NVLINK))
    assert code == 1 and found_causes(data) == {("nvlink_down", "GPU 0")}


def test_discovery_lists_modules_with_bus_ids(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    frame = "+--------+----------------------------------------------------------------------+\n"
    text = ("2 GPUs found.\n" + frame + "| GPU ID | Device Information                                                   |\n"
            + frame)
    for i, bus in enumerate(("00000000:07:00.0", "00000000:0F:00.0")):
        text += (f"| {i:<6} | {'Name: NVIDIA A100-SXM4-40GB':<68} |\n"
                 f"|        | {'PCI Bus ID: ' + bus:<68} |\n"
                 f"|        | {'Device UUID: GPU-0000000' + str(i) + '-aaaa-bbbb-cccc-dddddddddddd':<68} |\n" + frame)
    got = dcgm_health.parse_discovery(clean(text).lines)
    assert [(m.bus_id, m.product) for m in got.modules] == [("0000:07:00.0", "NVIDIA A100-SXM4-40GB"),
                                                            ("0000:0F:00.0", "NVIDIA A100-SXM4-40GB")]
    path = tmp_path / "d.txt"
    path.write_text(text)
    code, out, _ = call(capsys, "inventory", "--from", str(path), "--json")
    import json

    assert code == 0 and [m["bus_id"] for m in json.loads(out)["modules"]] == ["0000:07:00.0", "0000:0F:00.0"]


def test_json_incidents_name_their_gpu(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import json

    system = {"value": "Warning", "overflow": ["Detected more than 8 PCIe replays per minute for GPU 3 : 20"]}
    body = {"Overall Health": {"value": "Warning"},
            "GPU": {"children": {"3": {"value": "Warning", "children": {"Errors": {"children": {"PCIe system": system}}}}}}}
    text = json.dumps({"body": body, "header": ["Health Monitor Report"]}, indent=8)
    got = dcgm_health.parse(clean(text).lines)
    assert [(i.entity, i.system, i.health) for i in got.incidents] == [("GPU 3", "PCIe system", "Warning")]
    code, data = doctor_capture(capsys, tmp_path, text)
    assert code == 1 and found_causes(data) == {("pcie_aer_errors", "GPU 3")}  # issue 46 (PHRD): its code's cause


def test_a_healthy_json_report_is_cited_not_judged_further(capsys: pytest.CaptureFixture[str]) -> None:
    """NVIDIA/DCGM#263: `dcgmi health -c -j` says Healthy; the report holds no incident to name."""
    path = Path(__file__).parents[1] / "data" / "captures" / "formats_46"
    path = path / "dcgmhealth_dcgm263_json_healthy_gpu_needs_reset.txt"
    code, out, _ = call(capsys, "doctor", "--from", str(path), "--json")
    import json

    data = json.loads(out)
    step = next(s for s in data["steps"] if s["check"] == "dcgm_health")
    assert code == 0 and data["findings"] == [] and step["status"] == "clear"
    assert step["evidence"][0]["value"] == "Healthy"


def test_discovery_null_names_and_announced_modules_past_a_cut(capsys: pytest.CaptureFixture[str],
                                                               tmp_path: Path) -> None:
    """DCGM's <<<NULL>>> is no model; 'N GPUs found.' past the rows shown is a count note, no invented module
    (issue 46 review)."""
    import json

    frame = "+--------+----------------------------------------------------------------------+\n"
    text = ("3 GPUs found.\n" + frame + "| GPU ID | Device Information                                                   |\n"
            + frame + f"| 0      | {'Name: <<<NULL>>>':<68} |\n|        | {'PCI Bus ID: 00000000:1B:00.0':<68} |\n"
            + frame)
    got = dcgm_health.parse_discovery(clean(text).lines)
    assert [(m.bus_id, m.product) for m in got.modules] == [("0000:1B:00.0", "")]
    assert any("3 GPUs found, 1 row(s) shown" in n and "not listed" in n for n in got.notes), got.notes
    path = tmp_path / "d.txt"
    path.write_text(text)
    code, out, _ = call(capsys, "inventory", "--from", str(path), "--json")
    modules = json.loads(out)["modules"]
    assert code == 0 and [m["bus_id"] for m in modules] == ["0000:1B:00.0"]
    assert all(m["model"].startswith("unknown") for m in modules)


# --- issue 46 review: the health word split off a row's value; a non-Healthy report never reads clear -------

BOX = ("+---------------------------+----------------------------------------------------------+\n"
       "| Health Monitor Report                                                                |\n"
       "+===========================+==========================================================+\n"
       "| Overall Health            | Warning                                                  |\n"
       "| GPU                       |                                                          |\n"
       "| -> 0                      | Warning                                                  |\n"
       "|    -> {:<19} | {:<56} |\n"
       "|                           | {:<56} |\n"
       "+---------------------------+----------------------------------------------------------+\n")


def test_a_system_row_whose_value_holds_the_message_keeps_its_health_word(capsys: pytest.CaptureFixture[str],
                                                                         tmp_path: Path) -> None:
    text = BOX.format("PCIe system", "Warning - Detected more than 8 PCIe replays per minute", "for GPU 0: 13")
    (inc,) = dcgm_health.parse(clean(text).lines).incidents
    assert (inc.entity, inc.health) == ("GPU 0", "Warning")
    assert inc.message == "Detected more than 8 PCIe replays per minute for GPU 0: 13"
    code, data = doctor_capture(capsys, tmp_path, text)
    assert code == 1 and found_causes(data) == {("pcie_aer_errors", "GPU 0")}  # issue 46 (PHRD): its code's cause
    dbe = BOX.format("Memory system", "Failure - A DBE error was detected on GPU 0", "")
    code, data = doctor_capture(capsys, tmp_path, dbe)
    assert found_causes(data) == {("ecc_uncorrectable_since_boot", "GPU 0")}


def test_split_health_reads_the_word_alone_or_with_its_message() -> None:
    assert dcgm_health.split_health("Warning") == ("Warning", "")
    assert dcgm_health.split_health("Failure - NvLink link 3 is currently down") == (
        "Failure", "NvLink link 3 is currently down")
    assert dcgm_health.split_health("Healthy") == ("Healthy", "")


def test_a_failing_report_whose_incidents_were_not_read_is_a_finding_never_clear(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    cut = ("+---------------------------+\n| Health Monitor Report     |\n+===========================+\n"
           "| Overall Health: Failure  |\n| GPU                       |\n")
    got = dcgm_health.parse(clean(cut).lines)
    assert got.overall == "Failure" and got.incidents == []
    code, data = doctor_capture(capsys, tmp_path, cut)
    step = next(s for s in data["steps"] if s["check"] == "dcgm_health")
    assert step["status"] == "confirmed" and found_causes(data) == {("dcgm_health_failure", None)}
    # an entity marked Warning with its incident rows cut: the finding names the entity
    entity = BOX.format("PCIe system", "Warning", "").split("|    -> PCIe")[0]
    code, data = doctor_capture(capsys, tmp_path, entity)
    assert found_causes(data) == {("dcgm_health_warning", "GPU 0")}


def test_the_user_guide_layout_overall_under_a_group_key() -> None:
    """DCGM's user guide prints `dcgmi health -g 1 -c` as ``| Group 1 | Overall Health: Warning |``, then
    ``| GPU ID: 0 | Warning |`` and the system's message on the value side (written from that layout)."""
    text = ("Health Monitor Report\n"
            "+----------------------------------------------------------------------------+\n"
            "| Group 1          | Overall Health: Warning                                 |\n"
            "+==================+=========================================================+\n"
            "| GPU ID: 0        | Warning                                                 |\n"
            "|                  | PCIe system: Warning - Detected more than 8 PCIe        |\n"
            "|                  | replays per minute for GPU 0: 13                        |\n"
            "+------------------+---------------------------------------------------------+\n")
    got = dcgm_health.parse(clean(text).lines)
    assert got.overall == "Warning" and got.entities == {"GPU 0": "Warning"}
    assert [(i.entity, i.system, i.health, i.message) for i in got.incidents] == [
        ("GPU 0", "PCIe system", "Warning", "Detected more than 8 PCIe replays per minute for GPU 0: 13")]
