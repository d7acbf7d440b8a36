"""Newcomer 56 (NBF1): MEDIUM 6 (topo --expect on a file that lists no module: the modules are can't-tell,
never missing; the exit code follows what was judged) and the refusal of an unreadable file (short, and
under --json as every command's error: stderr, exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

from gpuvet.cli.app import main

_PORT = ("CA '{ca}'\n\tCA type: MT4129\n\tNumber of ports: 1\n\tFirmware version: 28.39.1002\n\tPort 1:\n"
         "\t\tState: {state}\n\t\tPhysical state: {phys}\n\t\tRate: {rate}\n\t\tLink layer: InfiniBand\n")


def _ibstat(tmp_path: Path, down: bool) -> str:
    path = tmp_path / "ibstat.txt"
    path.write_text(_PORT.format(ca="mlx5_0", state="Active", phys="LinkUp", rate=400)
                    + _PORT.format(ca="mlx5_1", state="Down" if down else "Active",
                                   phys="Disabled" if down else "LinkUp", rate=10 if down else 400))
    return str(path)


def test_topo_expect_on_a_file_without_modules_judges_no_module(tmp_path, capsys) -> None:
    assert main(["topo", "--from", _ibstat(tmp_path, down=True), "--expect", "hgx-h200-8", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert not [d for d in data["differences"] if d["kind"] == "missing_module"]
    assert data["compared"]["modules_unlisted"] == [f"gpu{i}" for i in range(8)]
    assert any(d["kind"] == "nic_port_down" for d in data["nic_differences"])


def test_topo_expect_text_says_cant_tell_for_the_modules(tmp_path, capsys) -> None:
    main(["topo", "--from", _ibstat(tmp_path, down=True), "--expect", "hgx-h200-8"])
    out = capsys.readouterr().out
    assert "missing_module" not in out and "can't tell the 8 declared module(s)" in out


def test_refusal_is_short_and_json_keeps_stdout_empty_as_other_errors(tmp_path, capsys) -> None:
    path = tmp_path / "ucx.txt"
    path.write_text("[1.0] [host:1:0]  ib_iface.c:1007 UCX  ERROR something UCX says that gpuvet does not read\n")
    assert main(["doctor", "--from", str(path), "--json"]) == 2
    refused = capsys.readouterr()
    assert refused.out == "" and "ucx.txt" in refused.err and "docs/doctor.md" in refused.err
    assert len(refused.err.splitlines()[-1]) < 500
    assert main(["inventory", "--from", str(tmp_path / "missing.txt"), "--json"]) == 2
    assert capsys.readouterr().out == ""


_TABLE = "Sun Dec  6 17:05:11 2026       \n" + """\
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 550.127.05             Driver Version: 550.127.05     CUDA Version: 12.4     |
|-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|                                         |                        |               MIG M. |
|=========================================+========================+======================|
|   0  NVIDIA H100 80GB HBM3          On  |   00000000:18:00.0 Off |                    0 |
| N/A   31C    P0             71W /  700W |       1MiB /  81559MiB |      0%      Default |
|                                         |                        |             Disabled |
+-----------------------------------------+------------------------+----------------------+
|   1  NVIDIA H100 80GB HBM3          On  |   00000000:2A:00.0 Off |                  N/A |
| N/A   30C    P0             70W /  700W |       1MiB /  81559MiB |      0%      Default |
|                                         |                        |             Disabled |
+-----------------------------------------+------------------------+----------------------+
"""


def test_smi_table_ecc_count_is_ecc_on_and_its_date_line_is_read(tmp_path, capsys) -> None:
    path = tmp_path / "smi.txt"
    path.write_text(_TABLE)
    assert main(["inventory", "--from", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [m["ecc_enabled"] for m in data["modules"]] == [True, None]
    assert not [n for n in data["notes"] if "not output gpuvet reads" in n]
