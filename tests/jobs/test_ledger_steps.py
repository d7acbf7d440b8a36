"""The module ledger's step said by doctor (issue 44), and what the RMA packet keeps of the node's
environment (driver, VBIOS, InfoROM, GSP) and of captured evidence (doctor --from FILES); on
SQLite and PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuvet.backends.nvidia.backend import NvidiaBackend
from gpuvet.backends.nvidia.gateway import Nvml
from gpuvet.backends.readings import Unavailable
from gpuvet.backends.select import open_backend
from gpuvet.cli.app import main
from gpuvet.doctor.captures import Captures, read_captures
from gpuvet.doctor.evidence import Evidence
from gpuvet.doctor.ledger_link import keep
from gpuvet.doctor.run import diagnose
from gpuvet.errors import GpuvetError
from gpuvet.ledger.build import build_ledger, find_module
from gpuvet.ledger.ladders import load_ladders, parse_ladders
from gpuvet.ledger.packet import packet_files
from gpuvet.logbook.store import Logbook
from tests.fakes.fake_nvml import hgx_h200
from tests.jobs.test_ledger import MOVED, XID79, spec, weeks
from tests.support.logbook_fixtures import pg_server, target  # noqa: F401  (fixtures)

CAPTURES = Path(__file__).parent.parent / "data" / "captures"
AT = "2026-12-05T09:00:00+00:00"


def doctor_steps(book: Logbook | None, backend_or_files: str | list[str], at_utc: str, symptom: str = "module-missing"):
    """One doctor run kept in ``book`` at ``at_utc``, as `gpuvet doctor --logbook` keeps it."""
    if isinstance(backend_or_files, str):
        backend, caps = open_backend(sim=backend_or_files), Captures()
    else:
        caps = read_captures(backend_or_files)
        backend = open_backend(from_files=caps.topo_and_xml)
    ev = Evidence(backend, backend.declared if isinstance(backend_or_files, str) else None, caps, window_s=600.0,
                  watch=isinstance(backend_or_files, str))
    try:
        run = diagnose(ev, symptom)
        return run, keep(run, ev, book, load_ladders(), at_utc=at_utc)
    finally:
        backend.close()


def test_doctor_says_the_step_from_the_module_history(target, tmp_path):  # noqa: F811
    book = Logbook(target)
    weeks(book, tmp_path)  # SN-LEMON: Xid 79 on node07/gpu3 on 11-21, re-seated into node08/gpu5
    node08 = spec(tmp_path, "node08", {5: MOVED}, XID79.replace("gpu3", "gpu5"))
    _, actions = doctor_steps(book, node08, AT)
    [action] = [a for a in actions if a.slot == "gpu5"]
    assert (action.node, action.serial, action.step.step, action.step.fault) == ("node08", "SN-LEMON", "rma", "xid:79")
    assert action.step.why == "2nd Xid 79 (fallen off the bus) in 30 days; the first on node07/gpu3 on 2026-11-21"
    # doctor's run is kept: the module's ledger holds its finding beside health's
    lemon = find_module(build_ledger(book.ledger_rows(), load_ladders(), AT), "SN-LEMON")
    assert {r.source for r in lemon.reports} == {"health", "doctor"} and lemon.step.step == "rma"
    book.close()


def test_doctor_without_a_logbook_judges_this_diagnosis_alone(tmp_path):
    node08 = spec(tmp_path, "node08", {5: MOVED}, XID79.replace("gpu3", "gpu5"))
    _, actions = doctor_steps(None, node08, AT)
    assert [(a.slot, a.step.step, a.step.nth) for a in actions] == [("gpu5", "reboot_node", 1)]


def test_doctor_json_and_text_say_the_step(tmp_path, capsys):
    node = spec(tmp_path, "node09", {2: ("GPU-node09-2", "SN-9-2")}, XID79.replace("gpu3", "gpu2"))
    args = ["doctor", "module-missing", "--node", node, "--window", "10m", "--logbook", str(tmp_path / "lb.db")]
    assert main([*args, "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    [action] = out["actions"]
    assert (action["module"], action["serial"], action["step"], action["fault"]) == ("gpu2", "SN-9-2", "reboot_node",
                                                                                      "xid:79")
    stepped = [f for f in out["findings"] if f.get("module") == "gpu2"]
    assert stepped and all(f["step"]["step"] == "reboot_node" for f in stepped)
    assert main(args) == 1
    assert "action gpu2: REBOOT_NODE (1st Xid 79" in " ".join(capsys.readouterr().out.split())
    assert main(["doctor", "module-missing", "--node", node, "--window", "10m", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["actions"] == []  # no logbook: no history to climb


def _xml_with_firmware(tmp_path: Path) -> str:
    """The 8-GPU capture with the firmware fields nvidia-smi -q -x prints (VBIOS, InfoROM image, GSP)."""
    text = (CAPTURES / "smi_q_x_h100_8gpu.xml").read_text()
    text = text.replace("<serial>1654220000003</serial>", "<serial>1654220000003</serial>"
                        "<vbios_version>96.00.99.00.01</vbios_version><inforom_version><img_version>G520.0200.00.05"
                        "</img_version></inforom_version><gsp_firmware_version>570.86.15</gsp_firmware_version>")
    path = tmp_path / "node42.xml"  # a capture named after its host (the captured node takes the name)
    path.write_text(text)
    return str(path)


def test_the_packet_keeps_captured_evidence_and_the_module_firmware(target, tmp_path):  # noqa: F811
    book = Logbook(target)
    files = [_xml_with_firmware(tmp_path), str(CAPTURES / "dmesg_xid.txt")]
    doctor_steps(book, files, AT, symptom="compute-errors")
    ladders = load_ladders()
    ledger = build_ledger(book.ledger_rows(), ladders, AT)
    lost = find_module(ledger, "1654220000003")  # 5D:00.0, the Xid 79 in dmesg_xid.txt
    assert lost is not None and lost.step is not None and lost.step.fault == "xid:79"
    packet = packet_files(lost, ledger, ladders, AT)
    captured = json.loads(packet["captures.json"])
    assert [c["fault"] for c in captured] == ["xid:79"]
    assert [f["file"] for f in captured[0]["files"]] == ["node-1.xml", "dmesg_xid.txt"]  # the host's name replaced
    assert captured[0]["files"][0]["read_as"] == ["nvidia-smi -q -x"]  # a tool's name is no host's
    assert b"node42" not in b"".join(packet.values())
    kept = json.loads(packet_files(lost, ledger, ladders, AT, keep_hostnames=True)["captures.json"])
    assert kept[0]["files"][0]["file"] == "node42.xml"
    assert captured[0]["kernel_lines"] == ["[Tue Nov 25 03:14:09 2026] NVRM: Xid (PCI:0000:5d:00): 79, pid='<unknown>', "
                                           "name=<unknown>, GPU has fallen off the bus."]
    assert "Xid (PCI:0000:5d:00): 79" in packet["kernel_lines.txt"].decode()
    [env] = json.loads(packet["environment.json"])
    assert env["kind"] == "doctor" and env["module"] == {
        "id": env["module"]["id"], "bus_id": "0000:5D:00.0", "model": "NVIDIA H100 80GB HBM3",
        "serial": "1654220000003", "vbios_version": "96.00.99.00.01", "inforom_version": "G520.0200.00.05",
        "gsp_firmware": "570.86.15"}
    summary = packet["summary.txt"].decode()
    assert "VBIOS / InfoROM:   96.00.99.00.01 / G520.0200.00.05" in summary
    lacking = packet["lacking.txt"].decode()
    assert "VBIOS" not in lacking and "InfoROM" not in lacking and "nvidia-bug-report.sh" in lacking
    other = find_module(ledger, "1654220000002")  # 3A:00.0: its power cap (the Xid 48 is another board's)
    assert "VBIOS version: not kept" in packet_files(other, ledger, ladders, AT)["lacking.txt"].decode()
    book.close()


def test_the_live_nvidia_backend_reads_vbios_inforom_and_gsp_firmware():
    fake = hgx_h200(2)
    fake.gpus[1].unsupported = {"nvmlDeviceGetGspFirmwareVersion", "nvmlDeviceGetVbiosVersion"}
    first, second = NvidiaBackend(Nvml(lib=fake)).inventory().modules
    assert (first.vbios_version, first.inforom_version, first.gsp_firmware) == (
        "96.00.74.00.1C", "G520.0200.00.05", "570.86.15")
    assert isinstance(second.vbios_version, Unavailable) and "not supported" in second.vbios_version.reason
    assert isinstance(second.gsp_firmware, Unavailable) and second.inforom_version == "G520.0200.00.05"


def test_same_as_maps_other_commands_names_onto_a_ladder():
    ladders = load_ladders()
    assert ladders.key("module_missing") == "presence" and ladders.ladder("module_missing").name == "a module missing"
    assert ladders.key("xid:79") == "xid:79"
    site = parse_ladders("faults:\n  presence: {ladder: [drain]}\n", "site.yaml")
    assert site.same_as == ladders.same_as  # a site file without same_as keeps gpuvet's names
    with pytest.raises(GpuvetError, match="without a ladder: nowhere") as err:
        parse_ladders("faults:\n  presence: {ladder: [drain]}\nsame_as: {module_missing: nowhere}\n", "site.yaml")
    assert err.value.where == "site.yaml: same_as"
