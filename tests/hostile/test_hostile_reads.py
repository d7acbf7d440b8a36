"""Issue 36, reading: capture files bounded while they are read (a small .gz that unpacks to
gigabytes, /dev/zero, a FIFO), numbers too long for int() in a capture or a spec, dcgmi JSON of
the wrong shape — each exit 2 with what / where / fix, never a traceback, a hang or gigabytes."""

from __future__ import annotations

import gzip
import os
import resource
import struct
import sys
import threading
import zlib
from pathlib import Path

import pytest

from gpuvet.captures import read as capture_read
from gpuvet.cli.app import main
from gpuvet.errors import CaptureError, SpecError
from gpuvet.node.spec import load_spec

DATA = Path(__file__).parent.parent / "data" / "captures"


def _refused(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code = main(list(args))
    out, err = capsys.readouterr()
    assert code == 2 and "Traceback" not in err + out, err
    return err


def _gz_of_lines(path: Path, line: bytes, total: int) -> Path:
    """A gzip of ``total`` bytes of ``line`` repeated, written in steps (never held whole): one
    member whose deflate stream is one block's compressed bytes again and again (a full flush
    makes each copy stand alone), so it is packed once, not 500 times (1.3 s of CPU)."""
    block = line * (2**20 // len(line))
    deflate = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    packed = deflate.compress(block) + deflate.flush(zlib.Z_FULL_FLUSH)
    crc, size = 0, 0
    with path.open("wb") as f:
        f.write(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff")  # gzip, deflate, no name, no time, best
        for _ in range(total // len(block)):
            f.write(packed)
            crc, size = zlib.crc32(block, crc), size + len(block)
        f.write(zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS).flush())  # the empty last block
        f.write(struct.pack("<II", crc, size % 2**32))
    return path


@pytest.fixture(scope="module")
def short_lines_bomb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Packed once for the three commands (packing 500 MiB takes 1.5 s of CPU; each refusal 0.2 s)."""
    return _gz_of_lines(tmp_path_factory.mktemp("bomb") / "bomb.log.gz", b"a\n", 500 * 2**20)


@pytest.mark.parametrize("command", ["doctor", "topo", "inventory"])
def test_a_small_gz_of_500_mib_of_short_lines_is_refused_at_the_line_bound(capsys, short_lines_bomb, command):
    """It unpacked in full (3 GB of memory, 15 s) before the line count was looked at."""
    bomb = short_lines_bomb
    assert bomb.stat().st_size < 2**20
    err = _refused(capsys, command, "--from", str(bomb))
    assert "bomb.log.gz" in err and f"more than {capture_read.MAX_LINES:,} lines" in err


def test_a_gz_of_long_lines_is_refused_at_the_size_bound_holding_a_bounded_part(tmp_path, monkeypatch):
    monkeypatch.setattr(capture_read, "MAX_TEXT_BYTES", 8 * 2**20)
    monkeypatch.setattr(capture_read, "_KEEP_WHILE", 2 * 2**20)
    bomb = _gz_of_lines(tmp_path / "long.gz", b"x" * 999 + b"\n", 40 * 2**20)
    held = []
    real = capture_read._gunzip

    def watched(fh):
        for piece in real(fh):
            held.append(len(piece))
            yield piece

    monkeypatch.setattr(capture_read, "_gunzip", watched)
    with pytest.raises(CaptureError, match="unpacks to more than 8 MiB"):
        capture_read.read_text(str(bomb))
    assert max(held) <= capture_read._CHUNK and sum(held) <= 9 * 2**20  # stopped at the bound, a MiB at a time


def test_a_text_past_the_keep_bound_is_read_whole_on_a_second_pass(tmp_path, monkeypatch):
    monkeypatch.setattr(capture_read, "_KEEP_WHILE", 1000)
    smi = (DATA / "smi_q_h100_2gpu.txt").read_bytes()
    packed = tmp_path / "smi.txt.gz"
    packed.write_bytes(gzip.compress(smi))
    assert len(smi) > 1000 and capture_read.read_text(str(packed)) == smi.decode()


_MIXED = ("GPU 0: température 45 °C — ok, 末\n".encode() * 3 + b"bad \xff\xfe byte\n\xe2\x82 cut\n"
          + b"\xed\xa0\x80 a surrogate\n" + b"ends mid-character \xf0\x9f")


@pytest.mark.parametrize("packed", [False, True])
@pytest.mark.parametrize("profiled", [False, True])
def test_the_text_decoded_a_piece_at_a_time_is_the_whole_decoded_at_once(tmp_path, monkeypatch, packed, profiled):
    """Issue 43: read_text decodes each piece of the file as it comes (its text never held beside its bytes): a
    character cut between two pieces, bad bytes and a character cut at the end read as one decode of the whole."""
    monkeypatch.setattr(capture_read, "_CHUNK", 5)  # every multi-byte character cut somewhere
    path = tmp_path / ("mixed.log.gz" if packed else "mixed.log")
    path.write_bytes(gzip.compress(_MIXED) if packed else _MIXED)
    was = sys.getprofile()
    if profiled:  # pieces joined once at the end (a growing str is copied each time under a profiler)
        sys.setprofile(lambda *_: None)
    try:
        got = capture_read.read_text(str(path))
    finally:
        sys.setprofile(was)
    assert got == _MIXED.decode("utf-8", errors="replace") and got.endswith("character \ufffd")


def test_gzip_members_one_after_another_and_zero_padding_read_as_gzip_reads_them(tmp_path):
    a, b = (DATA / "smi_q_h100_2gpu.txt").read_bytes(), (DATA / "dmesg_xid.txt").read_bytes()
    two = tmp_path / "two.gz"
    two.write_bytes(gzip.compress(a) + gzip.compress(b) + b"\0" * 64)
    assert capture_read.read_text(str(two)).encode() == gzip.decompress(two.read_bytes()) == a + b
    assert set(capture_read.read(str(two)).kinds) >= {"kernel log", "nvidia-smi -q"}


@pytest.mark.parametrize(("damage", "words"), [
    (lambda packed: packed[:-30], "ends before the end of its compressed stream"),
    (lambda packed: packed[:20] + b"\xff" * 40 + packed[60:], "a damaged gzip file"),
    (lambda packed: packed + b"not gzip at all", "a damaged gzip file"),
])
def test_a_damaged_gz_is_refused_in_words(tmp_path, damage, words):
    path = tmp_path / "cut.gz"
    path.write_bytes(damage(gzip.compress((DATA / "smi_q_h100_2gpu.txt").read_bytes())))
    with pytest.raises(CaptureError, match=words) as err:
        capture_read.read_text(str(path))
    assert err.value.where == str(path) and "copy the .gz again" in (err.value.fix or "")


def test_a_gz_of_zeros_is_refused_as_binary_from_its_first_mebibyte(tmp_path):
    zeros = tmp_path / "zeros.gz"
    with gzip.open(zeros, "wb") as f:
        for _ in range(64):
            f.write(b"\0" * 2**20)
    with pytest.raises(CaptureError, match="a binary file"):
        capture_read.read_text(str(zeros))


def test_dev_zero_is_refused_at_once_naming_what_it_is(capsys):
    """It was read: 3.25 GB in 4 s before anything was said."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    err = _refused(capsys, "doctor", "--from", "/dev/zero")
    assert "/dev/zero: a character device, not a regular file" in err
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 64 * 1024  # KiB: nothing was read


def test_a_fifo_is_refused_at_once_even_with_no_writer(capsys, tmp_path):
    fifo = tmp_path / "smi.txt"
    os.mkfifo(fifo)
    done: list[int] = []
    worker = threading.Thread(target=lambda: done.append(main(["topo", "--from", str(fifo)])), daemon=True)
    worker.start()
    worker.join(timeout=20)
    assert done == [2], "a FIFO with no writer must not be waited on"
    assert "a named pipe (FIFO), not a regular file" in capsys.readouterr().err


def test_a_folder_is_refused_naming_what_it_is(capsys, tmp_path):
    assert "a folder, not a regular file" in _refused(capsys, "doctor", "--from", str(tmp_path))


def test_a_plain_text_past_the_size_bound_is_refused_by_its_size(tmp_path, monkeypatch):
    monkeypatch.setattr(capture_read, "MAX_TEXT_BYTES", 1000)
    path = tmp_path / "big.txt"
    path.write_bytes(b"x" * 1001)
    with pytest.raises(CaptureError, match="more than any capture holds"):
        capture_read.read_text(str(path))


def test_cr_only_line_ends_count_as_lines(tmp_path, monkeypatch):
    """clean() splits at a lone CR too: a file of CRs is as many lines."""
    monkeypatch.setattr(capture_read, "MAX_LINES", 1000)
    path = tmp_path / "cr.txt"
    path.write_bytes(b"a\r" * 1000)
    with pytest.raises(CaptureError, match="more than 1,000 lines"):
        capture_read.read_text(str(path))
    path.write_bytes(b"a\r\n" * 999)  # CRLF is one line end, not two
    assert capture_read.read_text(str(path))


# --- numbers too long for int() -----------------------------------------------------------
def test_an_xid_code_of_5000_digits_is_refused_naming_the_line(capsys, tmp_path):
    path = tmp_path / "dmesg.txt"
    path.write_text("[ 1.0] kernel: booted\n[ 12.3] NVRM: Xid (PCI:0000:18:00): " + "7" * 5000 + ", pid=1\n")
    err = _refused(capsys, "doctor", "--from", str(path))
    assert "line 2: a number of 5,000 digits (at most 1,000)" in err


def test_a_number_of_5000_digits_anywhere_in_a_capture_is_refused():
    text = (DATA / "smi_q_h100_2gpu.txt").read_text().replace("GPU Current Temp                  : ",
                                                              "GPU Current Temp                  : " + "9" * 5000, 1)
    assert "9" * 5000 in text
    with pytest.raises(CaptureError, match="a number of 5,00[0-9] digits"):
        capture_read.parse_text(text, "smi.txt")
    capture_read.parse_text(text.replace("9" * 5000, "9" * 998), "smi.txt")  # 1,000 with the 42 after it: read


def test_a_long_run_across_a_mebibyte_boundary_is_found():
    text = "x" * (2**20 - 500) + "1" * 1500 + "\n"
    with pytest.raises(CaptureError, match="line 1: a number of 1,500 digits"):
        capture_read.parse_text(text, "f")


@pytest.mark.parametrize("number", ["9" * 5000, "0x" + "f" * 5000, "-" + "1_" * 3000])
def test_a_spec_integer_of_thousands_of_digits_is_refused_naming_the_line(write_spec, number):
    """int() raised ValueError (Python's 4,300-digit limit) from inside the YAML loader."""
    path = write_spec(f"name: x\nbase: mesh-4\nfaults:\n  - kind: xid\n    module: gpu0\n    code: {number}\n")
    with pytest.raises(SpecError, match=r"line 6: an integer of [0-9,]+ digits \(at most 100\)"):
        load_spec(path)


def test_a_spec_integer_of_5000_digits_is_exit_2(capsys, write_spec):
    path = write_spec("name: x\nbase: mesh-4\nmodules: {count: " + "9" * 5000 + "}\n")
    assert "an integer of 5,000 digits" in _refused(capsys, "spec", "check", path)


# --- dcgmi JSON of the wrong shape --------------------------------------------------------
@pytest.mark.parametrize("body", [
    '{"DCGM GPU Diagnostic": {"test_categories": 5, "version": "3.1"}}',
    '{"DCGM GPU Diagnostic": {"test_categories": [{"category": "x", "tests": 5}]}}',
    '{"DCGM GPU Diagnostic": {"test_categories": [{"category": "x", "tests": [{"name": "a", "results": 7}]}]}}',
    '{"test_categories": {"a": 1}}',
    '{"test_categories": ' + "[" * 100_000 + "]" * 100_000 + "}",
])
def test_dcgmi_json_of_the_wrong_shape_is_exit_2_not_a_traceback(capsys, tmp_path, body):
    path = tmp_path / "diag.json"
    path.write_text(body)
    assert "nothing in it is output gpuvet can read" in _refused(capsys, "doctor", "--from", str(path))


def test_dcgmi_json_whose_warnings_are_not_a_list_is_read():
    body = ('{"DCGM GPU Diagnostic": {"test_categories": [{"category": "Hardware", "tests": [{"name": "Memory", '
            '"results": [{"status": "Fail", "gpu_id": 0, "warnings": 5}]}]}]}}')
    parsed = capture_read.parse_text(body, "diag.json")
    assert [(r.test, r.status, r.detail) for r in parsed.dcgm.results] == [("Memory", "fail", "5")]


# --- flags that accepted nonsense -------------------------------------------------------------
@pytest.mark.parametrize("timeout", ["0.0000001ms", "0", "0s", "500ms", "2h", "-1", "nan"])
def test_health_timeout_outside_1s_to_1h_is_refused_before_the_check(capsys, timeout):
    """`--timeout 0.0000001ms` reported UNHEALTHY: a prolog typo drained a good node."""
    err = _refused(capsys, "health", "--sim", "mesh-4", "--timeout", timeout)
    assert "--timeout" in err and "from 1.0s to 1.0h" in err


def test_health_timeout_inside_the_range_runs(capsys):
    assert main(["health", "--sim", "mesh-4", "--timeout", "1s", "--format", "json"]) == 0
    capsys.readouterr()


@pytest.mark.parametrize(("flag", "value"), [("--modules", ","), ("--modules", ""), ("--modules", "gpu0,,gpu1"),
                                             ("--modules", " , "), ("--dtypes", "bf16,")])
def test_bench_list_flags_with_an_empty_item_are_refused_not_read_as_all(capsys, flag, value):
    err = _refused(capsys, "bench", "gemm", "--sim", "mesh-4", "--quick", flag, value)
    assert f"{flag}: {value!r} has an empty item" in err


@pytest.mark.parametrize("timeout", ["0", "-5", "nan", "1e9", "1e400", "0.5", "500ms", "8d", "20x", "", "inf"])
def test_fleet_validate_timeout_is_range_checked(capsys, monkeypatch, timeout):
    from gpuvet.fleet import ray_runner

    monkeypatch.setattr(ray_runner, "run_fleet", lambda *a, **k: pytest.fail("Ray reached with a bad --timeout"))
    err = _refused(capsys, "fleet", "validate", "--ray", "auto", "--timeout", timeout)
    assert err.startswith("error: --timeout:") and "from 1.0s to 7.0d" in err, err


@pytest.mark.parametrize(("timeout", "seconds"), [("20s", 20.0), ("10m", 600.0), ("2h", 7200.0), ("7d", 604800.0),
                                                  ("600", 600.0), ("1.5", 1.5), ("1e3", 1000.0), ("600.0", 600.0)])
def test_fleet_validate_timeout_takes_durations_and_plain_seconds(capsys, monkeypatch, timeout, seconds):
    """--help's metavar says DURATION, but '20s' was 'Input should be a valid number'; plain
    numbers of seconds still work. Checked before Ray: run_fleet is where Ray is first touched."""
    from gpuvet.errors import GpuvetError
    from gpuvet.fleet import ray_runner

    seen: list[float] = []

    def run_fleet(address: str, level: str, sims: object, timeout_s: float) -> list[object]:
        seen.append(timeout_s)
        raise GpuvetError("stopped before Ray", where="--ray", fix="none needed: a test.")

    monkeypatch.setattr(ray_runner, "run_fleet", run_fleet)
    assert "stopped before Ray" in _refused(capsys, "fleet", "validate", "--ray", "auto", "--timeout", timeout)
    assert seen == [seconds]
