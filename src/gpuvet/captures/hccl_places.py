"""Where an HCCL plog's failures happened, from the plog's own fields (issue 46, R14B). A plog is one process's
and its ``[ERROR] HCCL(pid,proc):time [file.cc:N]`` prefix names no host or device; its messages do:

    |  comm error, device[2]                                (hccl_socket_manager.cc: the device that failed)
    |  192.168.2.199(8)  |  16666  |  192.168.2.197(10)  |  0  |  client  | time out |   (LINK_ERROR_INFO: dest, src)
    [Wait][LinkEstablish]wait socket establish timeout, role[1] rank[10] timeout[130]
    [Wait][P2PConnected]connected p2p timeout, timeout:130 s. local logicDevid:2, remote physic id:1.
    [Create][DestSockets]Wait Enable P2P Failed, src devicePhyId[2], dst devicePhyId[1], ret[16]

Each process's failures are placed on the device, the address and the rank those fields give (the address is the
one the link used: LINK_ERROR_INFO's src_ip, the device's or the host's); a process whose lines give none stays
unplaced (never guessed)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from gpuvet.captures.lazy_re import lazy

if TYPE_CHECKING:
    from gpuvet.captures.nccl_log import LogFailure

_DEVICE = lazy(r"\bcomm error, device\[(?P<a>\d{1,4})\]|\bsrc devicePhyId\[(?P<b>\d{1,4})\]"
               r"|\blocal logicDevid:\s*(?P<c>\d{1,4})\b")
_SRC = lazy(r"^\s*(?:\[\d{1,9}\]\s*)?\|\s*[\d.]{7,15}\(\d{1,6}\)\s*\|\s*\d{1,5}\s*\|\s*(?P<ip>\d{1,3}(?:\.\d{1,3}){3})"
            r"\((?P<rank>\d{1,6})\)\s*\|")
_RANK = lazy(r"\brole\[\d\] rank\[(?P<rank>\d{1,6})\]")


def placed(failures: list[LogFailure]) -> list[LogFailure]:
    """HCCL failures that name no host or device, each given its process's device, address and rank."""
    places: dict[int, str] = {}
    ranks: dict[int, int] = {}
    by_pid: dict[int, list[str]] = {}  # one pass over the failures (REV67a #5: a scan per process was quadratic)
    for f in failures:
        if f.at.lib == "HCCL" and f.at.pid is not None:
            by_pid.setdefault(f.at.pid, []).append(f.at.message)
    for pid, said in by_pid.items():
        device = next((next(g for g in m.groups() if g) for s in said if (m := _DEVICE.search(s))), None)
        src = next((m for s in said if "|" in s and (m := _SRC.match(s)) is not None), None)
        rank = src.group("rank") if src else next((m.group("rank") for s in said if (m := _RANK.search(s))), None)
        if device is None and src is None:
            continue
        where = [src.group("ip")] if src else []
        where += [f"(rank {rank})"] if rank is not None else []
        where += [f"Ascend device {device}"] if device is not None else ["Ascend device not in the log"]
        places[pid] = " ".join(where)
        if rank is not None:
            ranks[pid] = int(rank)
    return [replace(f, at=replace(f.at, host=places[f.at.pid]), rank=f.rank if f.rank is not None else
                    ranks.get(f.at.pid))
            if f.at.lib == "HCCL" and f.at.pid in places and f.at.host is None and f.at.dev is None else f
            for f in failures]
