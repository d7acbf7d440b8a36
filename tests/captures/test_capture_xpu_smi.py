"""Intel's xpu-smi boxes (issue 46 dev set dev_h_other): discovery lists the modules (name, bus id, memory), diag
and health give the tool's own verdicts, judged by what xpu-smi's words mean: a failed test warns, a test that
had no threshold to judge by is not judged, a Critical component is critical. Written in xpu-smi's layout;
device names, bus ids and figures made up."""

from __future__ import annotations

import json
from pathlib import Path

from gpuvet.captures import xpu_smi
from gpuvet.captures.text import clean
from gpuvet.cli.app import main

RULE = "+------------------------------+----------------------------------------------------+\n"
DISCOVERY = (RULE + "| Device ID | Device Information                                            |\n" + RULE +
             "| 0         | Device Type: GPU                                                       |\n"
             "|           | Device Name: Intel(R) Data Center GPU Max 1100                          |\n"
             "|           | PCI BDF Address: 0000:29:00.0                                           |\n"
             "|           | Memory Physical Size: 49152.00 MiB                                      |\n" + RULE +
             "| 1         | Device Type: GPU                                                       |\n"
             "|           | Device Name: Intel(R) Data Center GPU Max 1100                          |\n"
             "|           | PCI BDF Address: 0000:3a:00.0                                           |\n" + RULE)


def _diag(item_result: str, message: str) -> str:
    return ("$ xpu-smi diag -d 1 -l 2\n" + RULE + "| Device ID                    | 1                         |\n" + RULE +
            "| Level                        | 2                         |\n"
            "| Result                       | Fail                      |\n"
            "| Items                        | 4                         |\n" + RULE +
            "| Software Env Variables       | Result: Pass              |\n"
            "|                              | Message: Pass to check environment variables. |\n" + RULE +
            f"| Computation Performance      | Result: {item_result}     |\n"
            f"|                              | Message: {message}        |\n" + RULE)


def _doctor(capsys, tmp_path: Path, text: str) -> list[tuple[str, str, str]]:
    path = tmp_path / "xpu.txt"
    path.write_text(text)
    main(["doctor", "--from", str(path), "--json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    return [(f["cause"], f["module"], f["severity"]) for f in json.loads(out)["findings"]]


def test_discovery_lists_each_device_with_its_name_bus_id_and_memory() -> None:
    got = xpu_smi.parse(clean(DISCOVERY).lines)
    assert got.kinds == ["xpu-smi discovery"]
    assert [(m.label, m.name, m.bus_id, m.memory_mib) for m in got.modules] == [
        ("GPU 0", "Intel(R) Data Center GPU Max 1100", "0000:29:00.0", 49152.0),
        ("GPU 1", "Intel(R) Data Center GPU Max 1100", "0000:3A:00.0", None)]


def test_a_failed_diag_test_warns_on_its_device_and_discovery_names_it(capsys, tmp_path: Path) -> None:
    text = DISCOVERY + _diag("Fail", "Fail to check computation performance. Its fp32 is 8.1 TFLOPS.")
    assert _doctor(capsys, tmp_path, text) == [("module_reported_warning", "GPU 1 (0000:3A:00.0)", "warn")]


def test_a_failed_test_without_a_threshold_is_not_judged(capsys, tmp_path: Path) -> None:
    text = _diag("Fail", "Fail to check computation performance. Unconfigured or invalid threshold.")
    assert _doctor(capsys, tmp_path, text) == []


def test_health_says_critical_and_ok_in_its_own_words(capsys, tmp_path: Path) -> None:
    health = (RULE + "| Device ID                    | 0                           |\n" + RULE +
              "| 1. GPU Core Temperature      | Status: OK                  |\n"
              "|                              | Description: All temperature sensors are healthy. |\n" + RULE +
              "| 4. GPU Memory                | Status: Critical            |\n"
              "|                              | Description: Memory errors are found.              |\n" + RULE)
    assert _doctor(capsys, tmp_path, health) == [("module_reported_critical", "GPU 0", "critical")]
    assert _doctor(capsys, tmp_path, health.replace("Status: Critical", "Status: OK")) == []
