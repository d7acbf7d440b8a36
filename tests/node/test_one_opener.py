"""Issue 45: one bounded safe opener (gpuvet/files.py) for every file gpuvet reads. Each family
(captures, telemetry logs, envelopes, specs, rules, events, ladders) refuses a FIFO, a device and
a folder at once through it, naming the file; gzip is unpacked a MiB at a time with one set of
rules (members, zero padding, cut short); the encoding policy is one function."""

from __future__ import annotations

import gzip
import os
import threading
import zlib
from collections.abc import Callable
from io import BytesIO
from pathlib import Path

import pytest

from gpuvet import files
from gpuvet.captures import read as capture_read
from gpuvet.cli.app import main
from gpuvet.errors import GpuvetError
from gpuvet.fleet import fold
from gpuvet.ledger.ladders import load_ladders
from gpuvet.node import spec
from gpuvet.validate import rules
from gpuvet.watch import backtest, readers

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")

FAMILIES: dict[str, Callable[[Path], object]] = {
    "capture": lambda p: capture_read.read_text(str(p)),
    "telemetry log": lambda p: readers.scan(p),
    "envelope": lambda p: fold.read_bounded(p),
    "spec": lambda p: spec._read_spec_file(str(p)),
    "rules": lambda p: rules._read_text(p),
    "events": lambda p: backtest._read_text(p, str(p)),
    "ladders": lambda p: load_ladders(p),
}
RULES = files.Input(not_file=", not a regular file", fix="give a file.", max_bytes=1000,
                    too_big=lambda size, where: GpuvetError(f"{size} bytes", where=where, fix="smaller."))


def _in_time(call: Callable[[], object], timeout: float = 20) -> BaseException | None:
    """``call`` in a thread (a FIFO wait fails the test instead of stopping it): what it raised."""
    caught: list[BaseException | None] = []

    def run() -> None:
        try:
            call()
            caught.append(None)
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            caught.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout)
    assert caught, f"did not return in {timeout} s"
    return caught[0]


@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.parametrize(("plant", "words"), [("fifo", "a named pipe (FIFO)"), ("folder", "a folder"),
                                              ("device", "device")])
def test_every_family_refuses_what_is_not_a_regular_file_at_once_naming_it(tmp_path, family, plant, words):
    path = tmp_path / "given.txt"
    if plant == "fifo":
        os.mkfifo(path)
    elif plant == "folder":
        path.mkdir()
    else:
        path = Path("/dev/null")
    caught = _in_time(lambda: FAMILIES[family](path))
    assert isinstance(caught, GpuvetError), f"{family}: {caught!r}"
    assert words in str(caught) and (str(path) in str(caught) or repr(str(path)) in str(caught))


def test_a_spec_given_as_a_fifo_exits_2_saying_what_it_is(tmp_path, capsys):
    fifo = tmp_path / "node.yaml"
    os.mkfifo(fifo)
    codes: list[int] = []
    assert _in_time(lambda: codes.append(main(["spec", "check", str(fifo)]))) is None
    err = capsys.readouterr().err
    assert codes == [2] and "a named pipe (FIFO), not a regular file" in err and "node.yaml" in err


def test_a_regular_file_past_its_bound_is_refused_by_its_size_before_reading(tmp_path):
    big = tmp_path / "big.yaml"
    big.write_bytes(b"x" * 1001)
    with pytest.raises(GpuvetError, match="1001 bytes") as caught:
        files.read_input(big, str(big), RULES)
    assert caught.value.where == str(big)
    big.write_bytes(b"x" * 1000)
    assert files.read_input(big, str(big), RULES) == b"x" * 1000


def test_an_anonymous_pipe_is_read_to_its_bound_and_a_named_fifo_never(tmp_path):
    rules = files.Input(not_file=", not a file", fix="give a file.", pipes=True, pipe_bytes=100, max_bytes=1000,
                        too_big=lambda size, where: GpuvetError(f"size {size}", where=where))
    for payload, refused in ((b"[1]", False), (b"[" * 5000, True)):
        read_end, write_end = os.pipe()
        writer = threading.Thread(target=lambda p=payload, w=write_end: (os.write(w, p), os.close(w)), daemon=True)
        writer.start()
        try:
            if refused:
                with pytest.raises(GpuvetError, match="size -1"):
                    files.read_input(Path(f"/dev/fd/{read_end}"), "pipe", rules)
            else:
                assert files.read_input(Path(f"/dev/fd/{read_end}"), "pipe", rules) == payload
        finally:
            os.close(read_end)
            writer.join(timeout=10)
    fifo = tmp_path / "named"
    os.mkfifo(fifo)
    caught = _in_time(lambda: files.read_input(fifo, str(fifo), rules))
    assert isinstance(caught, GpuvetError) and "a named pipe (FIFO), not a file" in str(caught)


def test_gzip_members_and_zero_padding_unpack_as_gzip_reads_them():
    a, b = b"first member\n" * 100, b"second\r\n" * 50
    packed = gzip.compress(a) + b"\x00" * 8 + gzip.compress(b) + b"\x00" * 3
    assert b"".join(files.unpacked(BytesIO(packed), True)) == gzip.decompress(packed) == a + b
    assert b"".join(files.unpacked(BytesIO(a), False, chunk=7)) == a


def test_a_gzip_bomb_comes_a_chunk_at_a_time_never_more():
    bomb = gzip.compress(b"\x00" * (16 * 2**20), compresslevel=9)
    assert len(bomb) < 2**16
    pieces = files.unpacked(BytesIO(bomb), True, chunk=2**20)
    sizes = [len(next(pieces)) for _ in range(4)]  # the bound is counted by the reader as they come
    assert max(sizes) <= 2**20


def test_a_cut_or_damaged_gzip_says_so():
    packed = gzip.compress(b"line\n" * 10_000)
    with pytest.raises(EOFError, match="cut short"):
        b"".join(files.unpacked(BytesIO(packed[:-30]), True))
    with pytest.raises(zlib.error):
        b"".join(files.unpacked(BytesIO(packed + b"not gzip at all"), True))


def test_the_encoding_policy_is_one_function():
    raw = "\ufeffa\r\nb\rc\n".encode() + b"\xff"
    assert files.as_text(raw, errors="replace", bom=True) == "a\nb\nc\n\ufffd"
    assert files.as_text(b"a\r\nb", newlines=False) == "a\r\nb"
    with pytest.raises(UnicodeDecodeError):
        files.as_text(b"\xff")
