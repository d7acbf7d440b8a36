"""Issue 41, replay part: `watch --replay FILE… [--backtest EVENTS.csv]` never merges, drops or
invents data. Logs of one name in per-node folders are two nodes (they were one, half the samples
gone); files that would still be one node are refused unless they are one node's consecutive logs;
one UUID on two indices is said; a byte-order mark, CR or CR LF line ends read as plain LF text in
every format (a BOM hid the timestamp column: 3 days replayed on an invented 1-second clock);
events a backtest cannot place on the telemetry (no clock, or outside its span) and rows no events
file holds are refused naming the file and line. All input here is made up by the test."""

from __future__ import annotations

import gzip
import json
import time
from pathlib import Path

import pytest

from gpuvet.cli.app import main
from gpuvet.errors import GpuvetError
from gpuvet.watch import backtest, bounds
from gpuvet.watch.read_prom import parse_json
from gpuvet.watch.readers import read_file, read_files
from tests.support.helpers import refused, run

START = 1_768_003_200.0  # 2026-01-10 00:00 UTC
HEADER = "timestamp, index, uuid, name, temperature.gpu, power.draw [W], utilization.gpu [%]"



def replayed(*argv: str) -> dict[str, object]:
    code, out, err = run(["watch", "--replay", *argv, "--json", "--no-log"])
    assert code == 0, err
    doc: dict[str, object] = json.loads(out)
    return doc



def stamp(t: float) -> str:
    return time.strftime("%Y/%m/%d %H:%M:%S", time.gmtime(t)) + ".000"


def query_log(path: Path, uuids: tuple[str, ...], minutes: int = 5, start: float = START, step_s: float = 60.0,
              header: str = HEADER) -> Path:
    """An H100 node's --query-gpu log: one row a module every ``step_s`` for ``minutes`` steps."""
    rows = [header]
    for k in range(minutes):
        for i, uuid in enumerate(uuids):
            rows.append(f"{stamp(start + k * step_s)}, {i}, {uuid}, NVIDIA H100 80GB HBM3, {40 + i + k % 3}, "
                        f"{300 + i}.00 W, 90 %")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(rows) + "\n")
    return path


def modules_of(doc: dict[str, object]) -> dict[str, str]:
    """module -> node, from the JSON's module list."""
    return {m["module"]: m["node"] for m in doc["modules"]}  # type: ignore[index, union-attr]


# --- 1. logs of one name in different folders -----------------------------------------------
def test_logs_of_one_name_in_per_node_folders_are_two_nodes_named_after_their_folders(tmp_path):
    a = query_log(tmp_path / "node01" / "gpu.csv", ("GPU-a0", "GPU-a1"))
    b = query_log(tmp_path / "node02" / "gpu.csv", ("GPU-b0", "GPU-b1"))
    doc = replayed(str(a), str(b))
    assert doc["samples"] == 20  # 10 were dropped as the same module's readings at the same times
    assert modules_of(doc) == {"node01/gpu0": "node01", "node01/gpu1": "node01", "node02/gpu0": "node02",
                               "node02/gpu1": "node02"}
    uuids = {m["module"]: m["uuid"] for m in doc["modules"]}  # type: ignore[index, union-attr]
    assert uuids["node02/gpu1"] == "GPU-b1"
    note = next(n for n in doc["notes"] if "named 'gpu'" in n)  # type: ignore[union-attr]
    assert f"{a} → node01" in note and f"{b} → node02" in note
    # deeper layouts: the nearest folder that tells them apart (the day folder is the same)
    c = query_log(tmp_path / "rack1" / "day1" / "gpu.csv", ("GPU-c0",))
    d = query_log(tmp_path / "rack2" / "day1" / "gpu.csv", ("GPU-d0",))
    assert set(modules_of(replayed(str(c), str(d))).values()) == {"rack1", "rack2"}


def test_logs_that_would_still_be_one_node_are_refused_never_merged(tmp_path):
    a = query_log(tmp_path / "node01" / "gpu.csv", ("GPU-a0",))
    b = query_log(tmp_path / "node02" / "gpu.csv", ("GPU-b0",))
    c = query_log(tmp_path / "node01.csv", ("GPU-c0",))  # a node01 of its own name beside the folder node01
    err = refused(["watch", "--replay", str(a), str(b), str(c), "--no-log"], "node01/gpu0", "GPU-a0", "GPU-c0",
                  "two runs")
    assert str(a) in err and str(c) in err
    # one folder, one name, no UUID, overlapping times: two machines' logs, not a rotated one
    (tmp_path / "x").mkdir()
    for name, temp in (("gpu.csv", 45), ("gpu.csv.1", 55)):
        (tmp_path / "x" / name).write_text("timestamp, index, temperature.gpu, power.draw [W]\n" + "".join(
            f"{stamp(START + 60 * k)}, 0, {temp}, 300 W\n" for k in range(5)))
    refused(["watch", "--replay", str(tmp_path / "x" / "gpu.csv"), str(tmp_path / "x" / "gpu.csv.1"), "--no-log"],
            "overlapping times", "gpu/gpu0")
    # logs without timestamps both start at 0: never one node's
    for name in ("n.csv", "n.csv.1"):
        (tmp_path / "y").mkdir(exist_ok=True)
        (tmp_path / "y" / name).write_text("index, temperature.gpu, power.draw [W]\n0, 40, 300 W\n0, 41, 301 W\n")
    refused(["watch", "--replay", str(tmp_path / "y" / "n.csv"), str(tmp_path / "y" / "n.csv.1"), "--no-log"],
            "overlapping times", "without timestamps")
    refused(["watch", "--replay", str(a), str(tmp_path / "node01" / ".." / "node01" / "gpu.csv"), "--no-log"],
            "the same file, given twice")


def test_a_rotated_log_in_one_folder_is_one_node_and_the_join_is_said(tmp_path):
    old = query_log(tmp_path / "gpu.csv.1", ("GPU-a0", "GPU-a1"), minutes=5)
    new = query_log(tmp_path / "gpu.csv", ("GPU-a0", "GPU-a1"), minutes=5, start=START + 300)
    packed = tmp_path / "gpu.csv.1.gz"
    packed.write_bytes(gzip.compress(old.read_bytes()))
    old.unlink()
    oldest = query_log(tmp_path / "gpu.csv.2", ("GPU-a0", "GPU-a1"), minutes=5, start=START - 600)
    doc = replayed(str(packed), str(new), str(oldest))  # in any order: each pair of files is compared
    assert doc["samples"] == 30 and set(modules_of(doc)) == {"gpu/gpu0", "gpu/gpu1"}
    assert any("joined on one time line" in n and str(packed) in n and str(new) in n
               for n in doc["notes"])  # type: ignore[union-attr]


# --- 2. one UUID on two indices ---------------------------------------------------------------
def test_two_indices_with_one_uuid_are_kept_apart_and_said(tmp_path):
    log = query_log(tmp_path / "dup.csv", ("GPU-same", "GPU-same"))
    doc = replayed(str(log))
    assert set(modules_of(doc)) == {"dup/gpu0", "dup/gpu1"} and doc["samples"] == 10
    note = next(n for n in doc["notes"] if "GPU-same" in n)  # type: ignore[union-attr]
    assert "indices 0 and 1" in note and "kept apart" in note
    assert not any("UUID" in n for n in replayed(str(query_log(tmp_path / "ok.csv", ("GPU-1", "GPU-2"))))["notes"])


# --- 3. byte-order mark, CR, CR LF in every format --------------------------------------------
def _three_days(path: Path, encoding: str = "utf-8", newline: str = "\n", timed: bool = True) -> Path:
    rows = [HEADER if timed else HEADER.removeprefix("timestamp, ")]
    for k in range(0, 3 * 24 * 6):
        t = START + k * 600
        cells = f"0, GPU-x, NVIDIA H100 80GB HBM3, {50 + (k % 7)}, 300.00 W, 90 %"
        rows.append(f"{stamp(t)}, {cells}" if timed else cells)
    with path.open("w", encoding=encoding, newline=newline) as f:
        f.write("\n".join(rows) + "\n")
    return path


def test_a_bom_keeps_the_timestamp_column_and_three_days_replay_as_three_days(tmp_path):
    doc = replayed(str(_three_days(tmp_path / "bom.csv", "utf-8-sig")))  # Out-File -Encoding utf8
    assert doc["relative_time"] is False
    assert doc["first"] == "2026-01-10T00:00:00+00:00" and doc["last"] == "2026-01-12T23:50:00+00:00"
    assert not any("timestamp" in n for n in doc["notes"])  # type: ignore[union-attr]
    # two such logs joined with cat: the second header's BOM hides nothing either
    joined = tmp_path / "cat.csv"
    first = _three_days(tmp_path / "a.csv", "utf-8-sig").read_bytes()
    joined.write_bytes(first + first.replace(b"2026/01/1", b"2026/02/1"))
    assert replayed(str(joined))["last"] == "2026-02-12T23:50:00+00:00"


def test_a_backtest_refuses_events_against_a_log_without_a_clock(tmp_path):
    log = _three_days(tmp_path / "rel.csv", timed=False)
    doc = replayed(str(log))
    assert doc["relative_time"] and any("no clock" in n for n in doc["notes"])  # type: ignore[union-attr]
    events = tmp_path / "events.csv"
    events.write_text("module,time,kind\nrel/gpu0,2026-01-11T00:00Z,throttled\n")
    refused(["watch", "--replay", str(log), "--backtest", str(events), "--no-log"], "has no clock", str(events),
            "count from its start")


TABLE = """{stamp}
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 570.86.10              Driver Version: 570.86.10      CUDA Version: 12.8     |
|-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|=========================================+========================+======================|
|   0  NVIDIA H100 80GB HBM3          On  |   00000000:18:00.0 Off |                    0 |
| N/A   {temp}C    P0            {power}W /  700W |   14502MiB /  81559MiB |     89%      Default |
+-----------------------------------------+------------------------+----------------------+
"""


def _formats() -> dict[str, str]:
    """One small log of each replay format, as the tools write them (LF, no BOM)."""
    t = [START + 60 * k for k in range(6)]
    dmon = "#Date       Time        gpu   pwr gtemp   sm  mclk  pclk\n#YYYYMMDD   HH:MM:SS    Idx     W     C    %   " \
           "MHz   MHz\n" + "".join(time.strftime("%Y%m%d   %H:%M:%S", time.gmtime(x)) + f"      0   {300 + k}    "
                                    f"{50 + k}   90  1593  1980\n" for k, x in enumerate(t))
    prom = "# HELP DCGM_FI_DEV_GPU_TEMP GPU temperature.\n" + "".join(
        f'DCGM_FI_DEV_GPU_TEMP{{gpu="0",UUID="GPU-1",Hostname="n1"}} {50 + k} {int(x * 1000)}\n'
        f'DCGM_FI_DEV_POWER_USAGE{{gpu="0",UUID="GPU-1",Hostname="n1"}} {300 + k} {int(x * 1000)}\n'
        for k, x in enumerate(t))
    doc = {"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": {"__name__": "DCGM_FI_DEV_GPU_TEMP", "gpu": "0", "Hostname": "n1"},
         "values": [[x, str(50 + k)] for k, x in enumerate(t)]}]}}
    table = "".join(TABLE.format(stamp=time.strftime("%a %b %e %H:%M:%S %Y", time.gmtime(x)), temp=50 + k,
                                 power=300 + k) for k, x in enumerate(t))
    return {"query.csv": _query_text(t), "dmon.log": dmon,
            "prom.txt": prom, "range.json": json.dumps(doc, indent=1), "table.log": table}


def _query_text(times: list[float]) -> str:
    return HEADER + "\n" + "".join(f"{stamp(x)}, 0, GPU-1, NVIDIA H100 80GB HBM3, {50 + k}, {300 + k}.00 W, 90 %\n"
                                   for k, x in enumerate(times))


def _readings(path: Path, fields: tuple[str, ...] = ()) -> list[tuple[float, str, float | None]]:
    rec = read_file(path, 1.0, fields)
    assert not rec.relative_time
    return sorted((s.t, s.module.partition("/")[2], s.temp_c) for s in rec.samples)


@pytest.mark.parametrize("fmt", ["query.csv", "dmon.log", "prom.txt", "range.json", "table.log"])
@pytest.mark.parametrize("variant", ["bom", "cr", "crlf", "bom+crlf"])
def test_every_format_reads_a_bom_cr_and_crlf_as_it_reads_plain_lf(tmp_path, fmt, variant):
    text = _formats()[fmt]
    plain = tmp_path / f"plain-{fmt}"
    plain.write_text(text)
    other = tmp_path / f"{variant}-{fmt}"
    data = text.replace("\n", "\r" if variant == "cr" else "\r\n" if "crlf" in variant else "\n").encode()
    other.write_bytes((b"\xef\xbb\xbf" if "bom" in variant else b"") + data)
    want = _readings(plain)
    assert len(want) >= 6 and _readings(other) == want


def test_a_header_less_log_with_a_bom_and_a_long_cr_only_log_are_read(tmp_path):
    fields = ("timestamp", "index", "uuid", "name", "temperature.gpu", "power.draw", "utilization.gpu")
    rows = _query_text([START + 60 * k for k in range(3)]).split("\n", 1)[1]
    noheader = tmp_path / "nh.csv"
    noheader.write_bytes(b"\xef\xbb\xbf" + rows.encode())
    assert [r[2] for r in _readings(noheader, fields)] == [50, 51, 52]
    many = tmp_path / "cr.csv"  # 200 KB of CR-ended lines: one 'line' of 200 KB to a reader of LF alone
    many.write_bytes(_query_text([START + 60 * k for k in range(3000)]).replace("\n", "\r").encode())
    assert many.stat().st_size > 3 * bounds.MAX_LINE_CHARS and len(read_file(many, 1.0).samples) == 3000


def test_utf16_text_is_refused_naming_powershell(tmp_path):
    log = tmp_path / "ps.csv"
    log.write_bytes(_query_text([START]).encode("utf-16"))
    refused(["watch", "--replay", str(log), "--no-log"], "ps.csv", "UTF-16", "PowerShell", "iconv")


def test_a_bom_before_query_range_json_from_a_server_is_no_error():
    doc = parse_json(b'\xef\xbb\xbf{"status": "success"}', "answer")
    assert doc == {"status": "success"}


# --- 4. events outside the telemetry's span -------------------------------------------------
@pytest.fixture
def three_days(tmp_path: Path) -> Path:
    return _three_days(tmp_path / "n1.csv")


@pytest.mark.parametrize("when", ["9999-01-11T00:00Z", "1971-01-01T00:00Z", "2096-01-01T00:00Z", "86400",
                                  "2026-01-16T00:00Z"])
def test_events_outside_the_telemetrys_span_are_refused_naming_file_and_line(tmp_path, three_days, when):
    events = tmp_path / "events.csv"
    events.write_text(f"module,time,kind\nn1/gpu0,2026-01-11T00:00Z,throttled\nn1/gpu0,{when},replaced\n")
    err = refused(["watch", "--replay", str(three_days), "--backtest", str(events), "--no-log"],
                  f"{events}:3", "outside the telemetry's span", "2026-01-10 00:00 → 2026-01-12 23:50", "72 h")
    assert when[:4] in err or when == "86400"


def test_events_within_the_horizon_of_the_span_are_scored(tmp_path, three_days):
    events = tmp_path / "events.csv"
    events.write_text("module,time,kind\nn1/gpu0,2026-01-14T23:00Z,throttled\nn1/gpu0,2026-01-07T01:00Z,"
                      "replaced\n")  # 47 h after the end, 71 h before the start
    doc = replayed(str(three_days), "--backtest", str(events))
    results = sorted(v["result"] for v in doc["backtest"]["verdicts"])  # type: ignore[index]
    assert results == ["maintenance without a warning", "missed"]
    events.write_text("module,time,kind\nn1/gpu0,2026-01-14T23:00Z,throttled\n")
    with pytest.raises(GpuvetError, match="outside the telemetry's span"):  # a shorter horizon, a tighter margin
        backtest.check_outcomes(backtest.read_outcomes(events), read_files([three_days], 60.0), 24 * 3600.0)


# --- 5. the events file's rows --------------------------------------------------------------
def test_an_events_cell_over_128_kib_is_refused_naming_file_and_line(tmp_path):
    events = tmp_path / "events.csv"
    events.write_text("module,time,kind,note\nn1/gpu0,2026-01-11T00:00Z,throttled," + "x" * 140_000 + "\n")
    refused(["watch", "--replay", str(tmp_path / "none.csv"), "--backtest", str(events), "--no-log"],
            f"{events}:2", "longer than 65,536 characters")
    # a quote never closed: lines of 60 KB each, one cell of 180 KB to the csv module
    events.write_text("module,time,kind,note\nn1/gpu0,2026-01-11T00:00Z,throttled,\"" + ("y" * 60_000 + "\n") * 3)
    with pytest.raises(GpuvetError, match="row longer than 65,536") as exc:
        backtest.read_outcomes(events)
    assert f"{events}:" in str(exc.value.where)


@pytest.mark.parametrize("end", ["\r", "\r\n", "\n"])
def test_an_events_file_with_cr_crlf_or_a_bom_is_read(tmp_path, end):
    events = tmp_path / "events.csv"
    text = end.join(["module,time,kind", "n1/gpu0,2026-01-11T00:00Z,throttled", "n1/gpu1,1768089600,replaced", ""])
    events.write_bytes(b"\xef\xbb\xbf" + text.encode())
    got = backtest.read_outcomes(events)
    assert [(o.module, o.kind, o.line) for o in got] == [("n1/gpu0", "throttled", 2), ("n1/gpu1", "replaced", 3)]
    # a spreadsheet's quoted note over two lines is still one event, named by its last line
    events.write_text('module,time,kind,note\nn1/gpu0,2026-01-11T00:00Z,throttled,"two\nlines"\n')
    assert [(o.module, o.line) for o in backtest.read_outcomes(events)] == [("n1/gpu0", 3)]


# --- 6. a stray quote in an nvidia-smi log --------------------------------------------------
def test_a_stray_quote_in_a_query_log_swallows_no_row_and_grows_no_cell(tmp_path):
    head = "timestamp, index, temperature.gpu, power.draw [W]\n"
    rows = "".join(f"{stamp(START + 60 * k)}, 0, {50 + k}, 300 W\n" for k in range(1, 4))
    quoted = tmp_path / "q.csv"
    quoted.write_text(head + f'{stamp(START)}, 0, 50, "300 W\n' + rows)
    assert sorted(s.temp_c for s in read_file(quoted, 1.0).samples) == [50, 51, 52, 53]  # 3 rows were one cell
    long = tmp_path / "long.csv"
    long.write_text(head + f'{stamp(START)}, 0, 50, "300 W\n' + ("x" * 60_000 + "\n") * 3 + rows)
    assert sorted(s.temp_c for s in read_file(long, 1.0).samples) == [50, 51, 52, 53]  # was _csv.Error


def test_rows_appended_twice_are_read_once_and_said(tmp_path, capsys):
    """A log appended to itself repeats every row: each module and time is read once, with a note."""
    import json


    head = "timestamp, index, name, temperature.gpu, power.draw [W]\n"
    rows = "".join(f"2026/01/15 10:{m:02d}:00.000, {i}, NVIDIA H100 80GB HBM3, {40 + i}, 300.00 W\n"
                   for m in range(10) for i in range(2))
    log = tmp_path / "node07.csv"
    log.write_text(head + rows + rows)
    assert main(["watch", "--replay", str(log), "--no-log", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["samples"] == 20
    assert any("20 row(s) repeat a module at a time it already had" in n and "(20 the same, 0 differing)" in n
               for n in data["notes"]), data["notes"]
