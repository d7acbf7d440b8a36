"""A kernel message continued on the next line without a timestamp (issue 46, batch P): the driver prefix alone
on its line and the message indented below it are one message. Written in amdgpu powerplay's wording (smu7's
'failed to send message %x ret is %d'); timestamps and bus id made up."""

from __future__ import annotations

from gpuvet.captures import kernel
from gpuvet.captures.text import clean


def test_a_wrapped_amdgpu_smu_failure_is_read_with_its_driver() -> None:
    log = ("[  812.004211] amdgpu:\n"
           "                failed to send message 15d ret is 0\n"
           "[  814.118032] amdgpu:\n"
           "                last message was failed ret is 0\n")
    got = kernel.parse(clean(log).lines)
    assert [e.kind for e in got.events] == ["amd_recovery_failed"]
    assert got.events[0].line == 1


def test_a_prefix_with_its_bus_id_joins_its_continuation() -> None:
    log = ("[ 90.1] amdgpu 0000:0b:00.0:\n"
           "        failed to send message 201 ret is 0\n")
    got = kernel.parse(clean(log).lines)
    assert [(e.kind, e.module) for e in got.events] == [("amd_recovery_failed", "0000:0B:00.0")]


def test_an_indented_line_below_a_whole_message_is_not_joined() -> None:
    """A message that ends its own line is not a prefix: the indented line below stays its own (a stack trace)."""
    log = ("[ 90.1] amdgpu 0000:0b:00.0: ring gfx timeout, signaled seq=9\n"
           "        failed to send message 201 ret is 0\n")
    got = kernel.parse(clean(log).lines)
    assert [e.kind for e in got.events] == ["amd_ring_timeout"]
