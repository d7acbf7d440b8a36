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


def test_a_garbled_size_or_bus_id_is_left_out_and_said_not_a_traceback() -> None:
    text = DISCOVERY.replace("49152.00 MiB", "1.2.3 MiB   ").replace("0000:3a:00.0", "zz:zz       ")
    got = xpu_smi.parse(clean(text).lines)
    assert [(m.bus_id, m.memory_mib) for m in got.modules] == [("0000:29:00.0", None), (None, None)]
    assert any("'1.2.3 MiB' is not a number" in n for n in got.notes)
    assert any("'zz:zz' is not a PCI bus id" in n for n in got.notes)
    for size in (".", "1e999", "-5", "99999999999"):
        bad = xpu_smi.parse(clean(DISCOVERY.replace("49152.00", size)).lines)
        assert bad.modules[0].memory_mib is None and bad.notes, size


NV_TABLE = ("+-----------------------------------------------------------------------------+\n"
            "| NVIDIA-SMI 535.129.03   Driver Version: 535.129.03   CUDA Version: 12.2     |\n"
            "|-------------------------------+----------------------+----------------------+\n"
            "| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |\n"
            "| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |\n"
            "|===============================+======================+======================|\n"
            "|   0  NVIDIA A100-SXM...  On   | 00000000:07:00.0 Off |                    0 |\n"
            "| N/A   34C    P0    60W / 400W |      0MiB / 81920MiB |      0%      Default |\n"
            "+-------------------------------+----------------------+----------------------+\n")


def test_a_box_ends_where_its_two_cell_rows_end_and_claims_nothing_after() -> None:
    """Another tool's table after the box (with or without a blank line) stays another tool's to read."""
    for gap in ("", "\n", "$ nvidia-smi\n"):
        text = DISCOVERY + gap + NV_TABLE
        got = xpu_smi.parse(clean(text).lines)
        first_nv = text.splitlines().index(NV_TABLE.splitlines()[1]) + 1
        assert [m.label for m in got.modules] == ["GPU 0", "GPU 1"], gap
        assert not any(no >= first_nv for no in got.claimed), (gap, sorted(got.claimed))
