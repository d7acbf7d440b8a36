"""Xids from the kernel log (``/dev/kmsg``): the driver writes ``NVRM: Xid (PCI:0000:18:00): 79,
…`` there, and the ring keeps them since boot (until it wraps). Each record carries a sequence
number, which is what lets a check ask only for Xids after the last one it saw.

The amdgpu driver logs no Xids; its lines (ring timeouts, resets, RAS errors, named by bus id
``amdgpu 0000:1c:00.0: …``) are read from the same device for the AMD backend (``amdgpu_log``).

Reading needs CAP_SYSLOG where ``kernel.dmesg_restrict=1`` (most distributions): Slurm's
health check and prolog run as root; a user without it gets an ``Unavailable`` saying so."""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path

from gpuvet.backends.readings import KernelLine, Unavailable, XidRecord
from gpuvet.node.bus import bus_key

KMSG = Path("/dev/kmsg")
BOOT_ID = Path("/proc/sys/kernel/random/boot_id")
MAX_RECORDS = 200_000  # a full ring is far smaller; bounds the read whatever the device returns
MAX_LINE = 1000  # characters of a driver line kept: the messages read are far shorter
# every spelling of the driver's Xid line: 'PCI:' or not before the bus, older drivers' spaced colons
_XID = re.compile(r"NVRM:? ?Xid \((?:PCI:)?([0-9a-fA-F:.]+)\) ?: ?(\d+) ?,?(.*)")


def parse_kmsg_record(record: str) -> tuple[int, str] | None:
    """``prio,seq,usec,flags;message`` -> (seq, message); None for anything else."""
    head, sep, message = record.partition(";")
    fields = head.split(",")
    if not sep or len(fields) < 3 or not fields[1].isdigit():
        return None
    return int(fields[1]), message.rstrip("\n")


def xids_from_records(records: Iterable[tuple[int, str]], module_of: Callable[[str], str | None]
                      ) -> tuple[XidRecord, ...]:
    out = []
    for seq, message in records:
        m = _XID.search(message)
        if m:
            bus = bus_key(m.group(1))  # one spelling of the module (node.bus): 0000:18:00 is 0000:18:00.0
            out.append(XidRecord(seq, bus, module_of(bus), int(m.group(2)), message[:300]))
    return tuple(out)


def _read_kmsg(path: Path) -> list[tuple[int, str]] | Unavailable:
    """One record per read from the device; a regular file (a saved copy) line by line."""
    if path.is_file():
        try:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()[:MAX_RECORDS]
        except OSError as exc:
            return Unavailable(f"cannot read {path}: {exc.strerror}")
        return [r for r in map(parse_kmsg_record, lines) if r is not None]
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except PermissionError:
        return Unavailable(f"no permission to read the kernel log ({path}): run as root or with CAP_SYSLOG")
    except OSError as exc:
        return Unavailable(f"cannot open the kernel log ({path}): {exc.strerror}")
    records: list[tuple[int, str]] = []
    try:
        while len(records) < MAX_RECORDS:
            try:
                chunk = os.read(fd, 8192)
            except BlockingIOError:
                break  # the end of the ring
            except OSError as exc:
                if exc.errno == errno.EPIPE:  # overwritten while reading: carry on from the next record
                    continue
                return Unavailable(f"reading the kernel log failed: {exc.strerror}")
            if not chunk:
                break
            parsed = parse_kmsg_record(chunk.decode("utf-8", "replace"))
            if parsed:
                records.append(parsed)
    finally:
        os.close(fd)
    return records


# the other lines captures/kernel.py weighs the driver's against (kernel_echoes.passed_through): vfio-pci given an
# NVIDIA function (10de:…, a GPU passed through to a VM on purpose) and a framebuffer driver owning one
_WEIGHED = re.compile(r"vfio.{0,80}10de:|\b(?:nouveau|rivafb|rivatv) [0-9a-fA-F]{4}:", re.I)


def driver_lines(records: Iterable[tuple[int, str]]) -> tuple[KernelLine, ...]:
    """The NVIDIA driver's lines (NVRM, and the nvidia module's own), which name its modules'
    failures without an Xid, and the lines the reader weighs them against: captures/kernel.py reads
    them, for captured logs and live ones alike, so one log is one verdict in doctor and health."""
    return tuple(KernelLine(seq, message[:MAX_LINE]) for seq, message in records
                 if "NVRM" in message or "nvidia" in message or _WEIGHED.search(message))


def kernel_log(module_of: Callable[[str], str | None], path: Path = KMSG
               ) -> tuple[tuple[XidRecord, ...] | Unavailable, tuple[KernelLine, ...] | Unavailable]:
    """The Xids and the driver's lines the kernel log still holds, oldest first, from one read."""
    records = _read_kmsg(path)
    if isinstance(records, Unavailable):
        return records, records
    return xids_from_records(records, module_of), driver_lines(records)


def amdgpu_lines(records: Iterable[tuple[int, str]]) -> tuple[KernelLine, ...]:
    """The amdgpu driver's lines (``amdgpu 0000:…``, ``[drm:amdgpu_…]``); captures/kernel.py
    picks the driver's own lines out of them and reads each message's kind and module."""
    return tuple(KernelLine(seq, message[:MAX_LINE]) for seq, message in records if "amdgpu" in message)


def amdgpu_log(path: Path = KMSG) -> tuple[KernelLine, ...] | Unavailable:
    """The amdgpu lines the kernel log still holds, oldest first, from one read."""
    records = _read_kmsg(path)
    return records if isinstance(records, Unavailable) else amdgpu_lines(records)


def boot_id(path: Path = BOOT_ID) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return "unknown-boot"
