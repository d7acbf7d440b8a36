"""Batch X's NCCL rows (issue 46), fixed for their class and tested on lines written here in the library's own
forms: NCCL 2.0-2.2 printed its INFO/WARN lines with the host:pid:tid prefix but no 'NCCL' before the level
('host:pid:tid [0] INFO Using internal Network Socket'); they are the same log as today's, and NET/IB's
'Using interface X for sideband communication' names its out-of-band interface, no IB device in use."""

from __future__ import annotations

from pathlib import Path

from gpuvet.captures import nccl_log
from gpuvet.captures.text import Line
from gpuvet.doctor.collective_expect import Judged, sentence
from tests.support.helpers import capture_json


def _lines(text: str) -> list[Line]:
    return [Line(i, t) for i, t in enumerate(text.splitlines(), 1)]


_OLD = ("trainer7:4410:4502 [1] INFO NET : Using interface ens3:10.0.0.7<0>\n"
        "trainer7:4410:4502 [1] INFO NET/IB : Using interface ens3 for sideband communication\n"
        "trainer7:4410:4502 [1] INFO Using internal Network Socket\n"
        "trainer7:4410:4502 [1] INFO Ring 00 :    0   1\n")


def test_the_2018_format_without_nccl_before_info_is_read_with_its_host_and_socket_transport() -> None:
    log = nccl_log.parse(_lines(_OLD))
    assert log.lines == 4 and log.libs == ["NCCL"] and log.seen_hosts == ["trainer7"]
    assert [(c.host, c.pid, c.transport) for c in log.choices] == [("trainer7", 4410, "Socket")]


def test_a_2018_warn_with_its_source_is_a_failure_and_an_unprefixed_info_word_is_no_log_line() -> None:
    log = nccl_log.parse(_lines("trainer7:4410:4502 [1] misc/socket.cc:120 WARN Connection closed by remote peer\n"))
    assert log.lines == 1 and log.failures and log.failures[0].at.host == "trainer7"
    prose = nccl_log.parse(_lines("[0] INFO the job started\nINFO: Using network Socket as told\n"))
    assert prose.lines == 0  # no host:pid:tid prefix and no 'NCCL': a Python logger's words, not NCCL's


def test_ib_sideband_interface_is_not_ib_in_use() -> None:
    log = nccl_log.parse(_lines("trainer7:4410:4502 [1] NCCL INFO NET/IB : Using interface ens3 for sideband "
                                "communication\n"))
    assert log.choices == []


def test_an_unnamed_collective_and_a_tiny_size_are_said_in_words_and_a_rounded_zero_is_not_a_figure() -> None:
    said = sentence(Judged("unknown", 128, 0.0, None, "the model is not known"))
    assert said.startswith("a collective the log does not name: ") and " at 128 B: " in said
    assert "0 GB/s busbw" not in said and "printed 0.00" in said and "e-05" not in said
    assert sentence(Judged("all_gather", 3 * 2**20, 12.5, None, "x")) == "all_gather 12.5 GB/s busbw at 3 MiB: x"


def test_a_file_of_2018_format_lines_only_is_read_as_the_nccl_log_and_a_peer_close_is_that_family(
        tmp_path: Path) -> None:
    text = _OLD + "trainer7:4410:4502 [1] include/socket.h:361 WARN Connection closed by remote peer\n"
    found = capture_json(tmp_path, text)["findings"]
    assert [(f["cause"], f["evidence"]["kind"]) for f in found] == [  # type: ignore[index]
        ("collective_init_failed", "nccl_peer_closed")]
