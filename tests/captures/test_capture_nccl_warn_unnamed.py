"""NCCL's WARN lines are read as a lead whatever their words (issue 46, batch V): a WARN no family names is a finding
quoting the line, never "clear"; 'message truncated' (the two ends disagree on a message's size) and a send or
receive that failed on a connection already made are families of their own; the notes NCCL prints on healthy runs
stay quiet. nccl-tests' 'Out of bounds values : N FAILED' counts wherever a poster quoted it. Lines written here."""

from __future__ import annotations

from pathlib import Path

from gpuvet.knowledge import nccl_warn_family
from tests.support.helpers import capture_json

_RAN = "cn4:7001:7001 [1] NCCL INFO Channel 00 : 1[1] -> 0[0] via NET/Socket/0\n"


def _warns(tmp_path: Path, text: str) -> list[dict[str, object]]:
    found = capture_json(tmp_path, text)["findings"]
    assert isinstance(found, list)
    return [f for f in found if f["severity"] in ("warn", "critical")]


def _kind(f: dict[str, object]) -> object:
    ev = f["evidence"]
    assert isinstance(ev, dict)
    return ev.get("kind")


def test_a_truncated_socket_message_is_a_finding_naming_its_peer(tmp_path: Path) -> None:
    found = _warns(tmp_path, _RAN + "cn4:7001:7040 [1] transport/net_socket.cc:311 NCCL WARN NET/Socket : peer "
                                    "10.4.0.9<40112> message truncated : receiving 262144 bytes instead of 8192\n")
    assert len(found) == 1 and _kind(found[0]) == "nccl_message_truncated"
    f = found[0]
    assert f["cause"] == "collective_runtime_error" and f["module"] == "cn4 GPU 1"
    assert f["title"] == nccl_warn_family("nccl_message_truncated").title
    assert f["evidence"]["peer"] == "10.4.0.9<40112>"  # type: ignore[index]


def test_a_warn_wrapped_after_its_colon_keeps_its_second_line(tmp_path: Path) -> None:
    found = _warns(tmp_path, "cn4:7001:7040 [1] transport/net_socket.cc:311 NCCL WARN NET/Socket : peer "
                             "10.4.0.9<40112> message truncated :\nreceiving 262144 bytes instead of 8192\n")
    assert [_kind(f) for f in found] == ["nccl_message_truncated"]
    assert str(found[0]["evidence"]["log"]).endswith("truncated : receiving 262144 bytes instead of 8192")  # type: ignore[index]


def test_a_warn_no_family_names_is_still_a_lead_quoting_the_line(tmp_path: Path) -> None:
    line = "cn4:7001:7040 [1] enqueue.cc:88 NCCL WARN Widget ring 3 of rank 5 does not loop back"
    found = _warns(tmp_path, _RAN + line + "\n")
    assert len(found) == 1 and _kind(found[0]) == "nccl_warn_unnamed"
    assert found[0]["severity"] == "warn" and found[0]["module"] == "cn4 GPU 1"
    assert found[0]["evidence"]["log"] == line and found[0]["evidence"]["peer_rank"] == 5  # type: ignore[index]


def test_the_notes_a_healthy_run_prints_stay_quiet(tmp_path: Path) -> None:
    notes = ("NET/IB : Got async event : client reregistration", "NET/OFI Only EFA provider is supported",
             "NET/Socket : NCCL_SOCKET_NTHREADS is greater than the maximum allowed, setting to 16")
    text = "".join(f"cn4:7001:7001 [0] NCCL WARN {n}\n" for n in notes)
    assert _warns(tmp_path, text + "cn4:7001:7001 [0] NCCL INFO comm 0x5 rank 0 nranks 2 - Init COMPLETE\n") == []


def test_a_receive_that_timed_out_on_an_open_connection_is_no_failed_connect(tmp_path: Path) -> None:
    found = _warns(tmp_path, _RAN + "cn4:7001:7040 [1] misc/socket.cc:470 NCCL WARN Net : Call to recv from "
                                    "10.4.0.9<40112> failed : Connection timed out\n")
    assert [_kind(f) for f in found] == ["nccl_socket_io"]
    assert found[0]["evidence"]["peer"] == "10.4.0.9<40112>"  # type: ignore[index]


def test_a_failed_count_quoted_in_prose_or_backticks_is_wrong_data(tmp_path: Path) -> None:
    for said in ('-np 2 ./all_reduce_perf -g 4 ends with "Out of bounds values : 12 FAILED", then exits',
                 "` Out of bounds values : 12 FAILED` "):
        found = _warns(tmp_path, "# nThread 1 nGpus 4 minBytes 8 maxBytes 1024 step: 2(factor)\n" + said + "\n")
        assert [(f["cause"], f["severity"]) for f in found] == [("data_corruption_in_transfer", "critical")], said
        assert "12 wrong values" in str(found[0]["evidence"])
    ok = "# nThread 1 nGpus 4 minBytes 8 maxBytes 1024 step: 2(factor)\n` Out of bounds values : 0 OK`\n"
    assert _warns(tmp_path, ok) == []
