"""Issue 36, replay and Prometheus readers: hostile files and answers are refused in one paragraph
(exit 2, the file and line or series named) within the bounds of watch/bounds.py, never with a
traceback, a hang or gigabytes of memory; readings out of their physical range are dropped and
counted. All input here is made up by the test (none of it is a real capture)."""

from __future__ import annotations

import gzip
import http.server
import json
import os
import socketserver
import threading
import time
import tracemalloc
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuvet.errors import GpuvetError
from gpuvet.logbook.store import Logbook
from gpuvet.watch import bounds, prom_history
from gpuvet.watch.read_prom import SeriesSink, add_range_json
from gpuvet.watch.readers import read_file, read_files
from tests.support.helpers import refused, run

CSV_HEADER = "timestamp, index, temperature.gpu, power.draw [W], clocks_event_reasons.active\n"
ROW = "2024/01/16 14:44:16.981, 0, 45, 310.12 W, 0x0000000000000000\n"
LABELS = 'gpu="0",UUID="GPU-1",Hostname="n1"'




def peak_mib(fn: Callable[[], object]) -> tuple[float, BaseException | None]:
    """Peak Python memory (tracemalloc) while ``fn`` runs, and what it raised."""
    tracemalloc.start()
    caught = None
    try:
        fn()
    except GpuvetError as exc:
        caught = exc
    finally:
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    return peak, caught


def range_doc(series: list[object]) -> dict[str, object]:
    return {"status": "success", "data": {"resultType": "matrix", "result": series}}


def temp_series(values: object, metric: object = None) -> dict[str, object]:
    return {"metric": metric if metric is not None else {"__name__": "DCGM_FI_DEV_GPU_TEMP", "gpu": "0",
                                                           "Hostname": "n1"}, "values": values}


# --- sizes, lines, special files -------------------------------------------------------------------
def test_a_gzip_bomb_of_short_lines_is_refused_while_unpacking_with_little_memory(tmp_path):
    block = ROW.encode() * (2**20 // len(ROW))  # 1 MiB of rows; 500 gzip members of it: 500 MiB unpacked
    member = gzip.compress(block, 9)
    path = tmp_path / "bomb.csv.gz"
    path.write_bytes(gzip.compress(CSV_HEADER.encode()) + member * 500)
    assert path.stat().st_size < 2 * 2**20
    peak, exc = peak_mib(lambda: read_file(path, 1.0))
    assert exc is not None and f"more than {bounds.MAX_FILE_LINES:,} lines unpacked" in str(exc)
    assert peak < 64, f"{peak:.0f} MiB"
    refused(["watch", "--replay", str(path), "--no-log"], "bomb.csv.gz", "lines unpacked", "Fix:")


def test_a_gzip_log_replays_like_the_plain_one_and_a_damaged_one_is_named(tmp_path):
    text = CSV_HEADER + ROW + ROW.replace("14:44:16", "14:45:16").replace(" 45,", " 46,")
    plain, packed = tmp_path / "n.csv", tmp_path / "n.csv.gz"
    plain.write_text(text)
    packed.write_bytes(gzip.compress(text.encode()))
    a, b = read_file(plain, 1.0), read_file(packed, 1.0)
    assert [(s.t, s.temp_c) for s in a.samples] == [(s.t, s.temp_c) for s in b.samples] and len(a.samples) == 2
    cut = tmp_path / "cut.csv.gz"
    cut.write_bytes(gzip.compress((CSV_HEADER + ROW * 5000).encode())[:-40])
    refused(["watch", "--replay", str(cut), "--no-log"], "cut.csv.gz", "damaged gzip")


def test_a_line_without_end_and_a_file_over_the_size_are_refused_before_parsing(tmp_path):
    long = tmp_path / "long.csv"
    long.write_text(CSV_HEADER + "2024/01/16 14:44:16.981, 0, " + "4" * (3 * bounds.MAX_LINE_CHARS))
    peak, exc = peak_mib(lambda: read_file(long, 1.0))
    assert exc is not None and "long.csv:2" in str(exc) and "line longer than" in str(exc) and peak < 16
    big = tmp_path / "big.csv"
    with big.open("w") as f:  # sparse: the size alone refuses it
        f.write(CSV_HEADER)
        f.truncate(bounds.MAX_TEXT_BYTES + 1)
    refused(["watch", "--replay", str(big), "--no-log"], "big.csv", f"more than {bounds.MAX_TEXT_BYTES // 2**20} MiB")


def test_replay_lines_are_counted_over_all_files_before_any_is_parsed(tmp_path, monkeypatch):
    monkeypatch.setattr(bounds, "MAX_REPLAY_LINES", 5)
    paths = []
    for n in range(2):
        paths.append(tmp_path / f"n{n}.csv")
        paths[-1].write_text(CSV_HEADER + ROW * 3)
    with pytest.raises(GpuvetError, match="more than 5 lines in 2 files"):
        read_files(paths, 1.0)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_fifo_and_a_device_are_refused_not_read_forever(tmp_path):
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    refused(["watch", "--replay", str(fifo), "--no-log"], "pipe.csv", "named pipe (FIFO)")
    if Path("/dev/zero").exists():
        refused(["watch", "--replay", "/dev/zero", "--no-log"], "/dev/zero", "character device")
    refused(["watch", "--replay", str(tmp_path), "--no-log"], "a folder")


# --- Prometheus text: series, modules, labels ------------------------------------------------------
def test_a_dump_of_300000_modules_is_refused_at_the_module_bound(tmp_path):
    path = tmp_path / "many.prom"
    with path.open("w") as f:
        f.writelines(f'DCGM_FI_DEV_GPU_TEMP{{gpu="{i}",Hostname="n{i}"}} 50 1700000000000\n' for i in range(300_000))
    peak, exc = peak_mib(lambda: read_file(path, 1.0))
    assert exc is not None and f"more than {bounds.MAX_MODULES:,} modules" in str(exc)
    assert "many.prom:" in str(exc) and peak < 64, f"{peak:.0f} MiB"


def test_labels_that_change_per_line_are_refused_at_the_series_bound(tmp_path):
    path = tmp_path / "jobs.prom"
    with path.open("w") as f:
        f.writelines(f'DCGM_FI_DEV_GPU_TEMP{{{LABELS},job="{i}"}} 50 {1700000000000 + i}\n'
                     for i in range(bounds.MAX_SERIES + 10))
    with pytest.raises(GpuvetError, match=rf"jobs.prom:{bounds.MAX_SERIES + 1}: more than {bounds.MAX_SERIES:,} series"):
        read_file(path, 1.0)


@pytest.mark.parametrize(("labels", "words"), [
    (",".join(f'l{i}="x"' for i in range(bounds.MAX_LABELS + 1)), "labels on one series"),
    (f'gpu="0",Hostname="{"h" * (bounds.MAX_LABEL_CHARS + 1)}"', "a label name or value of"),
])
def test_label_count_and_length_are_bounded(tmp_path, labels, words):
    path = tmp_path / "l.prom"
    path.write_text(f"DCGM_FI_DEV_GPU_TEMP{{gpu=\"0\",{labels}}} 50 1700000000000\n")
    refused(["watch", "--replay", str(path), "--no-log"], "l.prom:1", words)


# --- times and numbers -----------------------------------------------------------------------------
@pytest.mark.parametrize(("line", "words"), [
    (f"DCGM_FI_DEV_GPU_TEMP{{{LABELS}}} 50 NaN", "time nan"),
    (f"DCGM_FI_DEV_GPU_TEMP{{{LABELS}}} 50 1e400", "time 1e400 or more"),
    (f"DCGM_FI_DEV_GPU_TEMP{{{LABELS}}} 50 -5", "time -5.0"),
    (f"DCGM_FI_DEV_GPU_TEMP{{{LABELS}}} {'9' * 400} 1700000000", "a number of 400 characters"),
])
def test_exposition_times_and_numbers(tmp_path, line, words):
    path = tmp_path / "d.prom"
    path.write_text(f"DCGM_FI_DEV_GPU_TEMP{{{LABELS}}} 50 1700000000\n{line}\n")
    refused(["watch", "--replay", str(path), "--no-log"], "d.prom:2", words, "Fix:")


@pytest.mark.parametrize(("doc", "words"), [
    ("[" * 100_000 + "]" * 100_000, "nested deeper"),
    (json.dumps(range_doc([temp_series(None)])), "data.result[0]: 'values' is null"),
    (json.dumps(range_doc([{"metric": None, "values": []}])), "data.result[0]: 'metric' is null"),
    (json.dumps(range_doc([temp_series([[1700000000, "50"], 7])])), "point 1 is a number"),
    (json.dumps(range_doc([temp_series([[1700000000, "50", 1]])])), "point 0 is a list"),
    (json.dumps(range_doc([temp_series([[float("nan"), "50"]])])), "values[0]: time nan"),
    ('{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"DCGM_FI_DEV_GPU_TEMP",'
     '"gpu":"0"},"values":[[1700000000,"50"],[1e400,"51"]]}]}}', "values[1]: time 1e400"),
    (json.dumps(range_doc([temp_series([[-5, "50"]])])), "time -5.0"),
    (json.dumps(range_doc([temp_series([[1700000000, "9" * 400]])])), "a number of 400 characters"),
    (json.dumps(range_doc([temp_series([[int("1" * 400), "50"]])])), "an integer of 1,326 bits"),
    (json.dumps(range_doc([temp_series([[1700000000, "50"]])])).replace("1700000000", "1" * 5000), "not JSON a reader"),
    (json.dumps(range_doc([temp_series([[True, "50"]])])), "true/false where a number belongs"),
    (json.dumps(range_doc([temp_series([], {"__name__": "DCGM_FI_DEV_GPU_TEMP", "gpu": 0})])), "not a string"),
    (json.dumps({"status": "success", "data": None}), "not a Prometheus range-query answer"),
])
def test_range_json_that_is_not_an_answer_is_refused_naming_the_series(tmp_path, doc, words):
    path = tmp_path / "q.json"
    path.write_text(doc)
    refused(["watch", "--replay", str(path), "--no-log"], "q.json", words)


def test_a_nan_time_leaves_no_half_written_run_in_the_logbook(tmp_path):
    good = [[1700000000 + 60 * i, "50"] for i in range(50)]
    path = tmp_path / "q.json"
    path.write_text(json.dumps(range_doc([temp_series(good + [[float("nan"), "51"]])])))
    book = tmp_path / "book.db"
    refused(["watch", "--replay", str(path), "--logbook", str(book)], "time nan")
    if book.exists():
        lb = Logbook(book)
        try:
            assert lb.runs() == []
        finally:
            lb.close()


@pytest.mark.parametrize(("text", "words"), [
    (CSV_HEADER + ROW.replace("0x0000000000000000", "0x" + "f" * 400), "n.csv:2: a number of 402 characters"),
    (CSV_HEADER + ROW.replace("2024/01/16", "0001/01/16"), "n.csv:2: time -62"),
    (CSV_HEADER + ROW + "index, temperature.gpu, power.draw\n0, 40, 100\n", "n.csv:3: a header with a timestamp"),
    ("#Date Time gpu pwr gtemp\n 20240104 13:54:35 0 612 71\n# gpu pwr gtemp\n 0 600 70\n",
     "n.csv:4: rows with Date/Time (line 2) and rows without"),
    ("# gpu pwr gtemp\n 0 " + "6" * 400 + " 70\n", "n.csv:2: a number of 400"),
])
def test_smi_logs_numbers_times_and_mixed_clocks(tmp_path, text, words):
    path = tmp_path / "n.csv"
    path.write_text(text)
    refused(["watch", "--replay", str(path), "--no-log"], words)


def test_relative_and_absolute_times_in_one_replay_are_refused(tmp_path):
    timed, untimed = tmp_path / "a.csv", tmp_path / "b.csv"
    timed.write_text(CSV_HEADER + ROW)
    untimed.write_text("index, temperature.gpu, power.draw\n0, 40, 100\n0, 41, 101\n")
    refused(["watch", "--replay", str(timed), str(untimed), "--no-log"], "b.csv has no timestamps", "a.csv")


def test_negative_and_impossible_watts_and_degrees_are_dropped_and_counted(tmp_path):
    path = tmp_path / "n.csv"
    path.write_text(CSV_HEADER + ROW.replace(" 45,", " -40,") + ROW.replace("14:44", "14:45").replace("310.12", "-300")
                    + ROW.replace("14:44", "14:46").replace(" 45,", " 4294967295,") + ROW.replace("14:44", "14:47"))
    rec = read_file(path, 1.0)
    assert [(s.temp_c, s.power_w) for s in rec.samples] == [(None, 310.12), (45.0, None), (None, 310.12),
                                                            (45.0, 310.12)]
    assert any("3 reading(s) outside" in n and "first: line 2 (temp_c -40)" in n for n in rec.notes)
    dmon = tmp_path / "d.log"
    dmon.write_text("# gpu pwr gtemp\n 0 -5 70\n 0 600 -1\n 0 600 70\n")
    assert [(s.power_w, s.temp_c) for s in read_file(dmon, 1.0).samples] == [(None, 70), (600, None), (600, 70)]
    prom = tmp_path / "p.prom"
    prom.write_text(f"DCGM_FI_DEV_GPU_TEMP{{{LABELS}}} -3 1700000000\nDCGM_FI_DEV_POWER_USAGE{{{LABELS}}} -9 1700000000\n"
                    f"DCGM_FI_DEV_GPU_TEMP{{{LABELS}}} 50 1700000060\n")
    rec = read_file(prom, 1.0)
    assert [(s.temp_c, s.power_w) for s in rec.samples] == [(50.0, None)]
    assert any("2 reading(s) outside" in n and "p.prom:1" in n for n in rec.notes)


def test_nan_inf_and_1e400_readings_are_dropped_and_counted_like_out_of_range_ones(tmp_path):
    """A non-finite cell is no reading: dropped (the rest of the row kept) and named in the note,
    as a 300 °C one is, in the temperature, power and any other numeric column."""
    path = tmp_path / "h.csv"
    head = "timestamp, index, name, temperature.gpu, power.draw [W], utilization.gpu [%]\n"
    rows = ["2024/01/16 14:44:16.981, 0, NVIDIA H100, 1e400, 300.5 W, 50 %",
            "2024/01/16 14:44:17.981, 0, NVIDIA H100, inf, 300.5 W, 50 %",
            "2024/01/16 14:44:18.981, 0, NVIDIA H100, 60, nan W, 50 %",
            "2024/01/16 14:44:19.981, 0, NVIDIA H100, 60, 300.5 W, -inf %",
            "2024/01/16 14:44:20.981, 0, NVIDIA H100, 61, 301 W, 51 %"]
    path.write_text(head + "\n".join(rows) + "\n")
    rec = read_file(path, 1.0)
    assert [(s.temp_c, s.power_w, s.util) for s in rec.samples] == [
        (None, 300.5, 0.5), (None, 300.5, 0.5), (60.0, None, 0.5), (60.0, 300.5, None), (61.0, 301.0, 0.51)]
    assert any("4 reading(s) outside" in n and "not a finite number" in n and "first: line 2 (temp_c 1e400)" in n
               for n in rec.notes), rec.notes
    code, out, _ = run(["watch", "--replay", str(path), "--json", "--no-log"])
    assert code == 0 and any("4 reading(s)" in n for n in json.loads(out)["notes"])
    dmon = tmp_path / "d.log"
    dmon.write_text("# gpu pwr gtemp sm\n 0 nan 70 5\n 0 600 inf 5\n 0 600 70 5\n")
    rec = read_file(dmon, 1.0)
    assert [(s.power_w, s.temp_c) for s in rec.samples] == [(None, 70), (600, None), (600, 70)]
    assert any("2 reading(s)" in n and "first: line 2 (power_w nan)" in n for n in rec.notes), rec.notes


@pytest.mark.parametrize("index", ["-1", "9" * 60, "4096", "1.5", "gpu7"])
def test_a_gpu_index_that_is_negative_huge_or_no_number_is_skipped_with_a_note(tmp_path, index):
    """nvidia-smi's index is 0 … a few thousand (bounds.MAX_INDEX = 4,095): a row with another is
    skipped and named, never read as module 'gpu-1' or 'gpu999…'; a log of only such rows is refused."""
    path = tmp_path / "idx.csv"
    bad = ROW.replace(", 0, ", f", {index}, ")
    path.write_text(CSV_HEADER + bad + ROW.replace("14:44", "14:45") + ROW.replace("14:44", "14:46").replace(", 0, ",
                                                                                                        ", 4095, "))
    rec = read_file(path, 1.0)
    assert sorted(rec.modules) == ["idx/gpu0", "idx/gpu4095"]
    assert any("1 row(s)" in n and "no GPU index" in n and "0-4,095" in n and "first: line 2 (index" in n
               for n in rec.notes), rec.notes
    only = tmp_path / "only.csv"
    only.write_text(CSV_HEADER + bad)
    refused(["watch", "--replay", str(only), "--no-log"], "only.csv", "no row has a GPU index", "line 2")
    dmon = tmp_path / "d.log"
    dmon.write_text(f"# gpu pwr gtemp\n {index} 60 70\n 0 60 70\n")
    rec = read_file(dmon, 1.0)
    assert list(rec.modules) == ["d/gpu0"] and any("gpu cell is no GPU index" in n for n in rec.notes)


# --- flags -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(("flag", "value", "words"), [
    ("--step", "1ms", "allowed is from 1.0s to 1.0d"), ("--step", "0", "out of range"),
    ("--since", "0", "allowed is from 1.0m"), ("--interval", "0", "allowed is from 10ms"),
    ("--horizon", "0", "allowed is from 1.0m"), ("--slowdown-c", "nan", "out of range"),
])
def test_replay_flags_refuse_zero_and_out_of_range_values(flag, value, words):
    refused(["watch", "--prometheus-url", "http://127.0.0.1:9", flag, value, "--no-log"], flag, words)


def test_a_step_that_cuts_the_span_into_millions_of_points_is_refused():
    refused(["watch", "--prometheus-url", "http://127.0.0.1:9", "--since", "3650d", "--step", "1s", "--no-log"],
            "points per series", "a step of at least 316 s")


# --- a hostile Prometheus server on the loopback ---------------------------------------------------
class _Hostile(http.server.BaseHTTPRequestHandler):
    mode = "ok"

    def log_message(self, *args: object) -> None:  # quiet
        pass

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        mode = self.server.mode  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        try:
            if mode == "says-huge":
                self.send_header("Content-Length", str(2**40))
                self.end_headers()
            elif mode == "huge":  # no length: streams until the client hangs up (at most 80 MiB)
                self.end_headers()
                self.wfile.write(b'{"status":"success","data":{"resultType":"matrix","result":[' )
                for _ in range(80):
                    self.wfile.write(b" " * 2**20)
            elif mode == "drip":
                self.end_headers()
                for _ in range(100):  # 1 byte every 0.1 s, at most 10 s
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(0.1)
            else:
                body = {"wrong": json.dumps(range_doc([{"metric": None, "values": None}])).encode(),
                        "nested": b"[" * 50_000 + b"]" * 50_000,
                        "html": b"<html>login</html>"}[mode]
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass


@pytest.fixture
def hostile() -> Iterator[socketserver.TCPServer]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hostile)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.mark.parametrize(("mode", "words"), [
    ("says-huge", "more than 64 MiB of answer (it says 1,048,576 MiB)"),
    ("huge", "more than 64 MiB of answer"),
    ("drip", "the answer took more than 1.5 s"),
    ("wrong", "'metric' is null"),
    ("nested", "nests deeper"),
    ("html", "the answer is not JSON"),
])
def test_a_hostile_prometheus_answer_is_refused_within_the_timeout(hostile, monkeypatch, mode, words):
    hostile.mode = mode  # type: ignore[attr-defined]
    monkeypatch.setattr(prom_history, "TIMEOUT_S", 1.5 if mode == "drip" else 15.0)  # 64 MiB may take a while
    monkeypatch.setattr(prom_history, "READ_TIMEOUT_S", 1.0)
    host, port = hostile.server_address[:2]
    assert host == "127.0.0.1"
    start = time.monotonic()
    refused(["watch", "--prometheus-url", f"http://127.0.0.1:{port}", "--since", "1h", "--no-log"], words)
    assert time.monotonic() - start < 25  # a hang guard, not a speed target: the drip alone would last 10 s


# --- hypothesis: every format, random and hostile text ---------------------------------------------
FUZZ = settings(max_examples=int(os.environ.get("GPUVET_FUZZ_EXAMPLES", "25")), deadline=None, database=None,
                derandomize=os.environ.get("GPUVET_FUZZ_RANDOM") != "1",
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])
HEADS = {
    "query-csv": CSV_HEADER,
    "dmon": "#Date Time gpu pwr gtemp sm mclk pclk pviol tviol\n",
    "pmon": "# gpu pid type sm mem command\n",
    "exposition": "# TYPE DCGM_FI_DEV_GPU_TEMP gauge\n",
}
TOKENS = ["NaN", "-1e400", "1e400", "-5", "0x" + "f" * 60, "9" * 60, "[N/A]", "", ",", '"', "{", "}", "=", "\\",
          "\x00", "\x1b[2J", "é", "20240104", "13:54:35", "2024/01/16 14:44:16.981", "0", "1700000000000",
          'DCGM_FI_DEV_GPU_TEMP{gpu="0"}', 'DCGM_FI_DEV_POWER_USAGE{gpu="1",Hostname="h"}', "gpu", "#"]
line = st.lists(st.one_of(st.sampled_from(TOKENS), st.text(max_size=8)), max_size=8).map(" ".join)
body = st.lists(st.one_of(line, line.map(lambda s: s.replace(" ", ","))), min_size=1, max_size=12).map("\n".join)


def _no_crash(tmp_path: Path, name: str, data: bytes) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    code, out, err = run(["watch", "--replay", str(path), "--json", "--no-log"])
    assert code in (0, 1, 2) and "Traceback" not in err, err
    if code == 2:
        assert err.startswith("error: ") and "Fix:" in err, err
    else:
        assert json.loads(out)["replay"] is True


@pytest.mark.parametrize("kind", sorted(HEADS))
@FUZZ
@given(text=body, packed=st.booleans())
def test_fuzz_text_formats_end_in_a_result_or_a_refusal(tmp_path, kind, text, packed):
    data = (HEADS[kind] + text + "\n").encode("utf-8", errors="surrogatepass")
    _no_crash(tmp_path, f"f-{kind}.log", gzip.compress(data) if packed else data)


cell = st.one_of(st.sampled_from(TOKENS), st.text(max_size=6))
noheader_row = st.tuples(st.one_of(st.just("2024/01/16 14:44:16.981"), cell), st.one_of(st.just("0"), cell),
                         st.one_of(st.just("45"), cell), st.one_of(st.just("300.50 W"), cell)).map(", ".join)
noheader = st.one_of(body, st.lists(noheader_row, min_size=1, max_size=12).map("\n".join))


@FUZZ
@given(text=noheader, packed=st.booleans())
def test_fuzz_a_headerless_csv_read_with_fields_ends_in_a_result_or_a_refusal(tmp_path, text, packed):
    """A --format=csv,noheader log: no header to decide anything, the --fields list names the columns."""
    data = (text + "\n").encode("utf-8", errors="surrogatepass")
    path = tmp_path / "noheader.csv"
    path.write_bytes(gzip.compress(data) if packed else data)
    code, out, err = run(["watch", "--replay", str(path), "--fields", "timestamp,index,temperature.gpu,power.draw",
                          "--json", "--no-log"])
    assert code in (0, 1, 2) and "Traceback" not in err, err
    if code == 2:
        assert err.startswith("error: ") and "Fix:" in err, err
    else:
        assert json.loads(out)["replay"] is True


json_leaf = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(10**500), max_value=10**500),
                      st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=6),
                      st.sampled_from(["DCGM_FI_DEV_GPU_TEMP", "50", "NaN", "1700000000", "gpu", "__name__"]))
json_any = st.recursive(json_leaf, lambda c: st.one_of(st.lists(c, max_size=4),
                                                        st.dictionaries(st.sampled_from(
                                                            ["metric", "values", "__name__", "gpu", "data",
                                                             "result", "resultType", "Hostname"]), c, max_size=4)),
                        max_leaves=20)
series = st.fixed_dictionaries({"metric": st.one_of(json_any, st.fixed_dictionaries(
    {"__name__": st.sampled_from(["DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE"]), "gpu": st.text(max_size=3)})),
    "values": st.one_of(json_any, st.lists(st.lists(json_leaf, min_size=2, max_size=2), max_size=5))})


@FUZZ
@given(result=st.one_of(json_any, st.lists(series, max_size=4)))
def test_fuzz_range_json_ends_in_a_result_or_a_refusal(tmp_path, result):
    doc = {"status": "success", "data": {"resultType": "matrix", "result": result}}
    text = json.dumps(doc, allow_nan=True)
    _no_crash(tmp_path, "f.json", text.encode())
    sink = SeriesSink("answer", "http://127.0.0.1:1")  # the --prometheus-url path: parsed JSON, no file
    try:
        add_range_json(sink, doc, "http://127.0.0.1:1")
        sink.finish()
    except GpuvetError as exc:
        assert exc.where and exc.fix


def test_zlib_bomb_member_is_what_the_test_says():
    """The bomb above is 500 members of one compressed megabyte: check one unpacks to 1 MiB."""
    member = gzip.compress(ROW.encode() * (2**20 // len(ROW)), 9)
    assert len(zlib.decompress(member, wbits=31)) > 2**20 - len(ROW)
