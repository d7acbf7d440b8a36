"""NCCL prints a module's busId as hex without its leading zeros (issue 46, batch R): a module on bus 01 is
'1000', one on bus 00 of a VM '50'. Its channel and init lines name the modules by those ids, short or long.
Lines written in NCCL_DEBUG=INFO's layout; the ids made up."""

from __future__ import annotations

from gpuvet.captures import nccl_log
from gpuvet.captures.text import clean

CHANNELS = ("node7:811:811 [0] NCCL INFO Channel 00/0 : 0[1000] -> 1[41000] via P2P/direct pointer\n"
            "node7:811:811 [1] NCCL INFO Channel 00/0 : 1[41000] -> 0[1000] via P2P/direct pointer\n")


def test_short_bus_ids_on_channel_lines_name_the_modules():
    got = nccl_log.parse(clean(CHANNELS).lines)
    assert nccl_log.listing(got) == [("node7", "0000:01:00.0"), ("node7", "0000:41:00.0")]


def test_a_vm_module_on_bus_00_is_named_too():
    text = "vm1:90:90 [0] NCCL INFO Channel 00 : 0[50] -> 1[60] via SHM/direct/direct\n"
    got = nccl_log.parse(clean(text).lines)
    assert [bus for _, bus in nccl_log.listing(got)] == ["0000:00:05.0", "0000:00:06.0"]
