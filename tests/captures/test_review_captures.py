"""Today's hostile review of the capture readers (issues 41 and 46: never merge, drop or invent): each
input is written here in the tool's own format, with what gpuvet must make of it."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path
from typing import Any

from gpuvet.cli.app import main


def _run(*args: str) -> tuple[int, dict[str, Any] | None, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([*args, "--json"])
    assert "Traceback" not in err.getvalue()
    return code, (json.loads(out.getvalue()) if code != 2 else None), err.getvalue()


def _file(tmp_path: Path, text: str, name: str = "capture.txt") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _causes(tmp_path: Path, text: str) -> set[tuple[str, str | None]]:
    code, data, _ = _run("doctor", "--from", _file(tmp_path, text))
    assert data is not None, code
    return {(f["cause"], f.get("module")) for f in data["findings"]}


def _modules(tmp_path: Path, text: str, name: str = "capture.txt") -> tuple[list[tuple[str, str | None]], list[str]]:
    code, data, _ = _run("inventory", "--from", _file(tmp_path, text, name))
    assert data is not None, code
    return [(m["id"], m["bus_id"]) for m in data["modules"]], data.get("notes", [])


# --- 3: nvidia-smi's 'Unable to determine the device handle' is its own line, not a sentence about it --------

_HANDLE = "Unable to determine the device handle for GPU 0000:3B:00.0: Unknown Error"


def test_prose_that_mentions_the_handle_error_is_no_finding(tmp_path: Path) -> None:
    prose = f"Users sometimes report: {_HANDLE}, but that was fixed by a reboot last year.\n"
    kernel = "[    5.123456] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.104.05  Thu Aug 24 2023\n"
    assert _causes(tmp_path, kernel + prose) == set()


def test_the_handle_error_as_nvidia_smi_prints_it_is_a_finding(tmp_path: Path) -> None:
    for line in (_HANDLE, f"root@node07:~# nvidia-smi\n{_HANDLE}",
                 f"Dec  6 05:16:29 node07 nvidia-smi[4242]: {_HANDLE}",
                 f"the command nvidia-smi outputs the following error: {_HANDLE}."):
        assert ("module_fell_off_bus", "0000:3B:00.0") in _causes(tmp_path, line + "\n"), line


# --- 4: a --query-gpu row is a module only with a bus id or index; nvidia-smi's index is kept ---------------

_QUERY_HEAD = "index, name, pci.bus_id, temperature.gpu\n"


def test_a_query_row_of_the_headers_width_without_bus_id_or_index_is_skipped(tmp_path: Path) -> None:
    text = ("index, name, pci.bus_id, temperature.gpu, power.draw [W]\nfoo, bar, baz, qux, quux\n"
            "0, NVIDIA H100 80GB HBM3, 00000000:18:00.0, 41, 70.5 W\n")
    modules, notes = _modules(tmp_path, text, "q.csv")
    assert modules == [("gpu0", "0000:18:00.0")]
    assert any("line(s) 2" in n and "skipped" in n for n in notes)


def test_a_query_row_whose_index_is_unread_never_takes_a_printed_index(tmp_path: Path) -> None:
    text = _QUERY_HEAD + ("1, NVIDIA H100 80GB HBM3, 00000000:2A:00.0, 45\n"
                          "[Unknown Error], [Unknown Error], 00000000:18:00.0, [Unknown Error]\n")
    modules, notes = _modules(tmp_path, text, "q.csv")
    assert ("gpu1", "0000:2A:00.0") in modules and ("gpu0", "0000:18:00.0") in modules
    assert any("no index" in n and "0000:18:00.0" in n for n in notes)


# --- 5: rocm-smi's default table: a row has the header's cells ------------------------------------------------

def test_a_line_of_prose_under_the_rocm_smi_table_is_no_module(tmp_path: Path) -> None:
    text = ("======================= ROCm System Management Interface =======================\n"
            "================================= Concise Info =================================\n"
            "GPU  Temp (DieEdge)  AvgPwr  SCLK    MCLK     Fan  Perf  PwrCap  VRAM%  GPU%\n"
            "0    35.0c           40.0W   800Mhz  1600Mhz  0%   auto  300.0W    0%   0%\n"
            "1    N/A             N/A     N/A     N/A      0%   auto  N/A       0%   0%\n"
            "2 errors were reported by the driver, see dmesg\n"
            "================================================================================\n")
    modules, _ = _modules(tmp_path, text)
    assert [m for m, _ in modules] == ["gpu0", "gpu1"]


# --- 6: the default table printed twice is one node --------------------------------------------------------------

_TABLE = """\
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 550.54.10              Driver Version: 550.54.10      CUDA Version: 12.4     |
|-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|=========================================+========================+======================|
|   0  NVIDIA GeForce GTX 1660        On  |   00000000:03:00.0 Off |                  N/A |
| 54%   {temp}C    P0             53W /  120W |    2079MiB /   6144MiB |     15%      Default |
+-----------------------------------------+------------------------+----------------------+
"""


def test_two_snapshots_of_the_default_table_are_one_module_with_its_last_row(tmp_path: Path) -> None:
    text = "root@pve:~# nvidia-smi\n" + _TABLE.format(temp=59) + "root@pve:~# nvidia-smi\n" + _TABLE.format(temp=99)
    code, data, _ = _run("inventory", "--from", _file(tmp_path, text))
    assert data is not None, code
    assert [m["bus_id"] for m in data["modules"]] == ["0000:03:00.0"]
    assert any("2 snapshots" in n for n in data["notes"])


# --- 11: a banner or a header with nothing under it is nothing read ------------------------------------------------

def test_a_table_banner_over_garbage_rows_is_refused(tmp_path: Path) -> None:
    text = ("+-----------------------------------------------------------------------------+\n"
            "| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |\n"
            "|-------------------------------+----------------------+----------------------+\n"
            "| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |\n"
            "|===============================+======================+======================|\n"
            "| garbage row here lorem ipsum |  xyz | abc |\n"
            "|  99  H100 80GB  On | zzzz | 0 |\n")
    code, _, err = _run("doctor", "--from", _file(tmp_path, text))
    assert code == 2 and "nothing in it is output gpuvet can read" in err


def test_a_query_header_over_garbage_is_refused_and_a_header_alone_is_read(tmp_path: Path) -> None:
    code, _, err = _run("doctor", "--from", _file(tmp_path, _QUERY_HEAD + "foo, bar, baz, qux\n", "q.csv"))
    assert code == 2 and "nothing in it is output gpuvet can read" in err
    code, data, _ = _run("doctor", "--from", _file(tmp_path, _QUERY_HEAD, "q.csv"))  # issue 46 (batch R): cut after it
    assert code == 0 and data is not None and any("has no row under it" in n for n in data["notes"])


# --- 13: --query-gpu and the table honour the listing readers' module bound ------------------------------------------

def test_the_nvidia_readers_share_the_listing_readers_module_bound() -> None:
    from gpuvet.captures import amd_smi, smi_query, smi_table, text

    assert smi_query.MAX_MODULES == smi_table.MAX_MODULES == amd_smi.MAX_MODULES == text.MAX_MODULES == 4096


def test_a_query_csv_past_the_module_bound_keeps_the_bound_and_says_so(monkeypatch: Any) -> None:
    from gpuvet.captures import smi_query
    from gpuvet.captures.text import Line

    monkeypatch.setattr(smi_query, "MAX_MODULES", 16)
    rows = [f"{i % 8}, NVIDIA H100 80GB HBM3, 00000000:{i:02X}:00.0, 40" for i in range(24)]
    parsed = smi_query.parse([Line(n, t) for n, t in enumerate([_QUERY_HEAD.strip(), *rows], 1)])
    assert len(parsed.modules) == 16
    assert any("24 modules" in n and "16 kept" in n for n in parsed.notes)


def test_the_default_table_past_the_module_bound_keeps_the_bound(monkeypatch: Any) -> None:
    from gpuvet.captures import smi_table
    from gpuvet.captures.text import Line

    monkeypatch.setattr(smi_table, "MAX_MODULES", 16)
    row = ("|   {i}  NVIDIA H100 80GB HBM3        On  |   00000000:{b:02X}:00.0 Off |                    0 |\n"
           "| N/A   40C    P0             70W /  700W |      0MiB /  81559MiB |      0%      Default |\n")
    text = "".join(row.format(i=i % 8, b=i) for i in range(20))
    parsed = smi_table.parse([Line(n, t) for n, t in enumerate(text.splitlines(), 1)])
    assert len(parsed.modules) == 16
    assert any("20 modules" in n and "16 kept" in n for n in parsed.notes)


# --- 12: host<->GPU copies slow on every module are one host-side finding, not eight fabric links ----------------

def _nvb_host(cells: list[float]) -> str:
    return ("Running host_to_device_memcpy_ce.\nmemcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\n"
            + "".join(f"{k:>10}" for k in range(len(cells))) + "\n0 " + "".join(f"{x:>10.2f}" for x in cells) + "\n")


def _interconnect(tmp_path: Path, text: str) -> list[dict[str, Any]]:
    code, data, _ = _run("doctor", "interconnect-slow", "--from", _file(tmp_path, text), "--expect", "hgx-h200-8")
    assert data is not None, code
    return list(data["findings"])


def test_uniformly_slow_host_copies_are_one_host_side_finding(tmp_path: Path) -> None:
    found = _interconnect(tmp_path, _nvb_host([30.1, 30.3, 29.8, 30.0, 30.2, 30.4, 29.9, 30.0]))
    assert [f["cause"] for f in found] == ["host_copy_slow"]
    assert "NUMA" in found[0]["fix"] and "LnkSta" in found[0]["fix"] and "nvlink" not in found[0]["fix"]


def test_one_modules_slow_host_copies_point_at_its_pcie_link(tmp_path: Path) -> None:
    found = _interconnect(tmp_path, _nvb_host([53.1, 53.3, 52.8, 20.0, 53.2, 53.4, 52.9, 53.0]))
    assert [(f["cause"], tuple(f["between"])) for f in found] == [("link_degraded", ("host", "GPU 3"))]
    assert "nvlink" not in found[0]["fix"] and "LnkSta" in found[0]["fix"]


# --- 14: a collective run the model does not price is "can't tell", its figure rounded ---------------------------

def test_a_collective_below_bandwidth_bound_sizes_is_cant_tell_with_a_rounded_figure(tmp_path: Path) -> None:
    rows = [(8192, 700.25, 0.01171), (1048576, 1750.5, 0.59904), (16777216, 1900.75, 8.82669),
            (67108864, 2700.5, 23.4123456)]
    text = ("mpirun -n 8 ./bin/all_reduce_test -b 8K -e 64M -f 2 -d fp32 -o sum -p 8\n"
            "the minbytes is 8192, maxbytes is 67108864, iters is 20, warmup_iters is 5\n"
            "data_size(Bytes): |   aveg_time(us): | alg_bandwidth(GB/s): | check_result:\n"
            + "".join(f"{b:<18}|{t:>12.2f}    |{bw:>17}     | success\n" for b, t, bw in rows))
    code, data, _ = _run("doctor", "--from", _file(tmp_path, text), "--expect", "atlas-800t-a2")
    assert data is not None, code
    step = next(s for s in data["steps"] if s["check"] == "collective_results")
    assert step["status"] == "inconclusive" and "can't tell" in step["summary"]
    assert "bandwidth-bound sizes" not in step["summary"] and "GB/s busbw at 64 MiB" in step["summary"]
    assert re.search(r"\d\.\d{2,} GB/s", step["summary"]) is None and "not bandwidth-bound" in step["summary"]
