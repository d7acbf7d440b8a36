"""AMD's and Intel's tools that batch M showed gpuvet had never read (issue 46), each as a class: xpu-smi's -j forms
(discovery list, one device, health, diag; a paste cut mid-document), rocm-smi's set commands (applied, not
supported, not applied: said, never a fault), amdgpu_top's -d dump and --json, rvs's pqt/pebb [RESULT] lines (the
suite's own pass: FALSE judged) and rocm_bandwidth_test's Device Numa Distance matrix. Written in each tool's
layout (xpumanager's JSON keys, rocm_smi.py's log lines, amdgpu_top's dump, rvs's log); figures made up."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuvet.captures import amd_smi, xpu_smi
from gpuvet.captures.text import clean
from gpuvet.cli.app import main


def _run(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, command: str = "doctor") -> tuple[int, dict]:
    path = tmp_path / "capture.txt"
    path.write_text(text)
    code = main([command, "--from", str(path), "--json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    return code, json.loads(out) if code != 2 else {}


def _findings(got: dict) -> list[tuple[str, str, str]]:
    return [(f["cause"], f["module"], f["severity"]) for f in got["findings"]]


def _device(i: int, name: str, bdf: str) -> dict[str, object]:
    return {"device_id": i, "device_name": name, "device_type": "GPU", "pci_bdf_address": bdf,
            "memory_physical_size_byte": str(16 * 2**30), "uuid": f"00000000-0000-0000-0000-00000000000{i}",
            "vendor_name": "Intel(R) Corporation"}


def test_xpu_smi_discovery_json_lists_every_device_whole_or_cut() -> None:
    doc = json.dumps({"device_list": [_device(0, "Intel(R) Data Center GPU Max 1550", "0000:29:00.0"),
                                      _device(1, "Intel(R) Data Center GPU Max 1550", "0000:9a:00.0")]}, indent=4)
    got = xpu_smi.parse(clean("$ xpu-smi discovery -j\n" + doc + "\n").lines)
    assert got.kinds == ["xpu-smi discovery -j"]
    assert [(m.label, m.bus_id, m.memory_mib) for m in got.modules] == [("GPU 0", "0000:29:00.0", 16384.0),
                                                                       ("GPU 1", "0000:9A:00.0", 16384.0)]
    cut = "\n".join(json.dumps(_device(3, "Intel(R) Arc(TM) A770 Graphics", "0000:03:00.0"), indent=4,
                               sort_keys=True).splitlines()[:6])  # the paste stops inside the object
    [m] = xpu_smi.parse(clean(cut + "\n").lines).modules
    assert (m.label, m.name, m.bus_id) == ("GPU 3", "Intel(R) Arc(TM) A770 Graphics", "0000:03:00.0")


def test_xpu_smi_diag_and_health_json_are_judged_as_the_boxes_are(capsys, tmp_path: Path) -> None:
    diag = {"device_id": 0, "level": 1, "result": "Fail", "component_count": 2, "component_list": [
        {"component_type": "XPUM_DIAG_SOFTWARE_LIBRARY", "finished": True, "message": "Pass to check libraries.",
         "result": "Pass"},
        {"component_type": "XPUM_DIAG_HARDWARE_SYSMAN", "finished": True, "message": "Fail to find GPU device.",
         "result": "Fail"}]}
    assert _findings(_run(capsys, tmp_path, json.dumps(diag, indent=4))[1]) == [
        ("module_reported_warning", "GPU 0", "warn")]
    health = {"device_id": 1, "core_temperature": {"status": "OK", "description": "All temperatures are normal."},
              "power": {"status": "OK", "description": "Power is normal."}}
    code, got = _run(capsys, tmp_path, json.dumps(health, indent=4))
    assert code == 0 and _findings(got) == []
    _, inv = _run(capsys, tmp_path, json.dumps(health, indent=4), "inventory")
    assert len(inv["modules"]) == 1


SET = ("$ sudo rocm-smi --setperfdeterminism 1900\n\n\n"
       "============================ ROCm System Management Interface ============================\n"
       "============================== Set performance determinism ===============================\n"
       "GPU[0]\t\t: Successfully enabled performance determinism and set GFX clock frequency to 1900\n"
       "GPU[1]\t\t: Successfully enabled performance determinism and set GFX clock frequency to 1900\n"
       "ERROR: GPU[2]\t: Unable to set performance determinism and clock frequency to 1900\n"
       "GPU[3]\t\t: set_perf_determinism, Not supported on the given system\n"
       "================================== End of ROCm SMI Log ===================================\n")


def test_rocm_smi_set_commands_list_the_modules_and_say_each_outcome_never_a_fault(capsys, tmp_path: Path) -> None:
    got = amd_smi.parse(clean(SET).lines)
    assert [m.label for m in got.modules] == ["GPU[0]", "GPU[1]", "GPU[2]", "GPU[3]"]
    said = " ".join(got.notes)
    assert "GPU[0,1]: applied" in said and "GPU[2]: NOT applied" in said and "GPU[3]: not supported" in said
    code, data = _run(capsys, tmp_path, SET)
    assert code == 0 and _findings(data) == []


TOP_D = ("$ amdgpu_top -d\namdgpu_top v0.8.5\n\n--------\n"
         '#0 DevicePath { render: "/dev/dri/renderD128", card: "/dev/dri/card1", pci: "0000:0b:00.0" }\n'
         "Device Name              : [AMD Radeon RX 7900 XTX]\n"
         "PCI (domain:bus:dev.func): 0000:0b:00.0\n"
         "VRAM              : usage   812 MiB, total 24560 MiB (usable 24514 MiB)\n"
         "Edge Temp.      :  41 C (Current), 100 C (Critical), 105 C (Emergency)\n"
         "Power Cap.          : 327 W (0-402 W)\n")


def test_amdgpu_top_dump_and_json_name_the_module_its_bus_id_and_vram(capsys, tmp_path: Path) -> None:
    [m] = amd_smi.parse(clean(TOP_D).lines).modules
    assert (m.name, m.bus_id, m.memory_mib, m.temperature_c, m.power_limit_w) == (
        "AMD Radeon RX 7900 XTX", "0000:0B:00.0", 24560.0, 41.0, 327.0)
    dump = ('[{"DeviceName":"AMD Radeon Pro W6800","PCI":"0000:43:00.0","Sensors":{"Edge Temperature":{"unit":"C",'
            '"value":38}},"VRAM":{"Total VRAM":{"unit":"MiB","value":30704},"Total VRAM Usage":{"unit":"MiB","value":'
            "12}}},{\"DeviceName\":\"AMD Radeon Pro W6800\",\"PCI\":\"0000:c3:00.0\",\"VRAM\":{\"Total VRAM\":{")
    got = amd_smi.parse(clean(dump + "\n").lines)  # the second device cut inside its VRAM object
    assert [(m.bus_id, m.memory_mib) for m in got.modules] == [("0000:43:00.0", 30704.0), ("0000:C3:00.0", None)]
    code, data = _run(capsys, tmp_path, TOP_D)
    assert code == 0 and _findings(data) == []


RVS = ("[RESULT] [  1203.4121] [action_1] p2p [1/2] 3254 45862 peers:true distance:72 PCIe:72\n"
       "[RESULT] [  1210.0075] [action_1] p2p-bandwidth  [1/2] 3254 45862  bidirectional: true  41.220 GBps  "
       "duration: 0.401 sec\n"
       "[RESULT] [  1210.0081] [action_1] p2p-bandwidth  [2/2] 45862 3254  bidirectional: true  40.981 GBps  "
       "duration: 0.404 sec\n")


def test_rvs_results_name_the_gpus_and_only_the_suites_own_false_warns(capsys, tmp_path: Path) -> None:
    got = amd_smi.parse(clean(RVS).lines)
    assert [m.label for m in got.modules] == ["rvs GPU 3254", "rvs GPU 45862"]
    assert "3254->45862 bidirectional: true 41.220 GB/s" in " ".join(got.notes)
    code, data = _run(capsys, tmp_path, RVS)
    assert code == 0 and _findings(data) == []
    failed = RVS + "[RESULT] [  1211.2] [action_1] pebb pass: FALSE\n"
    assert {f[2] for f in _findings(_run(capsys, tmp_path, failed)[1])} == {"warn"}


def test_the_numa_distance_matrix_is_read_and_said_without_inventing_gpus(capsys, tmp_path: Path) -> None:
    text = ("          Device Numa Distance\n\n          D/D       0         1         2         3\n\n"
            + "".join(f"          {i}         " + "         ".join(str(d) for d in row) + "\n\n"
                      for i, row in enumerate(([0, 32, 11, 32], [32, 0, 32, 11], [11, 32, 0, 32]))))
    got = amd_smi.parse(clean(text).lines)
    assert got.kinds == ["rocm_bandwidth_test topology"] and got.modules == []
    assert "4 device(s) (0..3, 3 of their rows printed)" in " ".join(got.notes)
    code, data = _run(capsys, tmp_path, text)
    assert code == 0 and _findings(data) == []
