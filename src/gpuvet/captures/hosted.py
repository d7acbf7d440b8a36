"""A log of several hosts (pdsh/clush's 'node1: ', syslog's host field) read host by host (issue 46: never
merge without a word). The readers whose records name a module group them by bus id or device as they read
(the kernel's driver messages counted per module, AER's devices, a program's error on 'device 0', the monitors'
Xids once per module): two hosts' modules of one bus id would be one. Each such reader reads again the lines it
claimed, one host's at a time, and what each host's lines gave carries that host. A log of one host, and the
lines no host prefix named, are left as they were read."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol, TypeVar

from gpuvet.captures import aer, app_errors, fabric_manager, kernel
from gpuvet.captures.text import Line

if TYPE_CHECKING:
    from gpuvet.captures.ucx import UcxParse


class _Read(Protocol):
    @property
    def claimed(self) -> set[int]: ...


R = TypeVar("R", bound=_Read)


def by_host(read: tuple[kernel.KernelParse, aer.AerParse, app_errors.AppErrorsParse, fabric_manager.FabricManagerLog],
            lines: list[Line], host_of: dict[int, str], ucx: UcxParse | None = None) -> None:
    """The kernel reader's (and the monitors' Xids), AER's and the programs' error lines' reads (FileCapture's
    fields), each read again one host's lines at a time where a host prefix named a line it claimed; the fabric
    manager's events, which it does not group as it reads (doctor does, host by host), each given its host."""
    _again(read[0], _kernel, _join_kernel, lines, host_of)
    _again(read[1], aer.parse, _join_aer, lines, host_of)
    _again(read[2], _app_errors, _join_errors, lines, host_of, before=1)  # 'False' after its call on its own line
    fm = read[3]
    fm.events = [replace(e, host=host_of[e.line]) if e.line in host_of else e for e in fm.events]
    if ucx is not None:  # R14B: a completion error on its line's host's NIC (a Ray worker's ip=)
        ucx.errors = given(ucx.errors, host_of)


E = TypeVar("E", bound="_Hosted")


class _Hosted(Protocol):
    @property
    def line(self) -> int: ...
    @property
    def host(self) -> str | None: ...


def given(records: list[E], host_of: dict[int, str]) -> list[E]:
    """Records that name no host of their own, each given the host its line's prefix named (R14B: a Ray worker's
    completion error, the node its 'ip=' names)."""
    return [replace(r, host=host_of[r.line]) if r.host is None and r.line in host_of else r  # type: ignore[type-var]
            for r in records]


def _again(whole: R, parse: Callable[[list[Line]], R], join: Callable[[R, dict[str, R], set[int]], None],
           lines: list[Line], host_of: dict[int, str], before: int = 0) -> None:
    """``whole``'s claimed lines read again by ``parse`` host by host (with the ``before`` lines of each); ``join``
    keeps what no host named and adds each host's read, given the lines read again."""
    if not any(no in host_of for no in whole.claimed):
        return
    reads = {host: parse(own) for host, own in _own_lines(lines, whole.claimed, host_of, before)}
    join(whole, reads, set().union(*(r.claimed for r in reads.values())))


def _own_lines(lines: list[Line], claimed: set[int], host_of: dict[int, str],
               before: int) -> list[tuple[str, list[Line]]]:
    """Host -> its lines among ``claimed`` (and the ``before`` lines of its own before each), in order."""
    wanted = claimed | {no - k for no in claimed for k in range(1, before + 1) if host_of.get(no - k) == host_of.get(no)}
    hosts: dict[str, list[Line]] = {}
    for ln in lines:
        if ln.no in wanted and (host := host_of.get(ln.no)) is not None:
            hosts.setdefault(host, []).append(ln)
    return list(hosts.items())


def _kernel(lines: list[Line]) -> kernel.KernelParse:
    """The kernel's own lines and the GPU monitors' Xid lines (one field: both are Xids)."""
    from gpuvet.captures import plugin_xids

    out, more = kernel.parse(lines), plugin_xids.parse(lines)
    out.xids += more.xids
    out.claimed |= more.claimed
    return out


def _join_kernel(whole: kernel.KernelParse, reads: dict[str, kernel.KernelParse], reclaimed: set[int]) -> None:
    whole.xids = [x for x in whole.xids if x.line not in reclaimed] + [
        replace(x, host=host) for host, r in reads.items() for x in r.xids]
    whole.events = [e for e in whole.events if e.line not in reclaimed] + [
        replace(e, host=host) for host, r in reads.items() for e in r.events]


def _join_aer(whole: aer.AerParse, reads: dict[str, aer.AerParse], reclaimed: set[int]) -> None:
    """A host's devices are judged among that host's (a port's sources, the GPU below it): each host's parse
    is kept whole, beside the devices no host named."""
    whole.devices = {b: d for b, d in whole.devices.items() if d.first_line not in reclaimed}
    for host, r in reads.items():
        r.host = host
    whole.hosted = list(reads.values())


def _app_errors(lines: list[Line]) -> app_errors.AppErrorsParse:
    """A program's CUDA/NVML/NCCL/PyTorch error lines and HIP's (one field)."""
    from gpuvet.captures import hip_errors

    out, more = app_errors.parse(lines), hip_errors.parse(lines)
    out.errors += more.errors
    out.claimed |= more.claimed
    return out


def _join_errors(whole: app_errors.AppErrorsParse, reads: dict[str, app_errors.AppErrorsParse],
                 reclaimed: set[int]) -> None:
    whole.errors = [e for e in whole.errors if e.line not in reclaimed] + [
        replace(e, host=host) for host, r in reads.items() for e in r.errors]

