"""The identity a kernel log gives each bus id (``NVRM: GPU at PCI:0000:3a:00: GPU-…`` and the
``GPU Board Serial Number:`` line after it), against the module a listing (``-q -x``) names on
that bus: two captures that name different boards on one bus id are not one module, so an Xid of
the kernel log is not filed on the listing's board (docs/ledger.md)."""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from gpuvet.doctor.evidence import Evidence
from gpuvet.errors import CaptureError
from gpuvet.node.bus import bus_key

_AT = re.compile(r"NVRM: GPU at PCI:([0-9A-Fa-f:.]+): (GPU-[0-9A-Fa-f-]+)")
_SERIAL = re.compile(r"NVRM: GPU Board Serial Number: (\S+)")
KERNEL_LOG = "kernel log"  # read_as's kind of a kernel log


@dataclass(frozen=True)
class Conflict:
    """One bus id the kernel log and the listing give different boards."""

    bus_id: str
    kernel_uuid: str
    kernel_serial: str | None
    listed_slot: str
    listed_uuid: str

    def note(self) -> str:
        serial = f", board serial {self.kernel_serial}" if self.kernel_serial else ""
        return (f"bus {self.bus_id}: the kernel log names {self.kernel_uuid}{serial}, the listing names "
                f"{self.listed_slot} ({self.listed_uuid}): different boards, so that bus's kernel lines are "
                "not filed on the listed module (captures of different times or machines?)")


def kernel_identities(text: str) -> dict[str, tuple[str, str | None]]:
    """Bus key -> (UUID, board serial or None) as the driver printed them when it loaded."""
    return _identities(_nvrm_gpu_lines(text))


def _identities(lines: Iterable[str]) -> dict[str, tuple[str, str | None]]:
    """kernel_identities of the lines holding 'NVRM: GPU ' (a serial line before any identity line names no bus)."""
    out: dict[str, tuple[str, str | None]] = {}
    last: str | None = None
    for line in lines:
        at = _AT.search(line)
        if at:
            last = bus_key(at.group(1))
            out[last] = (at.group(2), None)
            continue
        serial = _SERIAL.search(line)
        if serial and last is not None:
            out[last] = (out[last][0], serial.group(1))
            last = None
    return out


def _nvrm_gpu_lines(text: str) -> Iterator[str]:
    """The lines (as str.splitlines cuts them) holding 'NVRM: GPU ', which both patterns begin with, from the
    first identity line on (a serial line before any names no bus): found in the text, not by a test of every line."""
    at = text.find("NVRM: GPU at PCI:")
    while at >= 0:
        start, end = text.rfind("\n", 0, at) + 1, text.find("\n", at)
        end = len(text) if end < 0 else end
        yield from (line for line in text[start:end].splitlines() if "NVRM: GPU " in line)
        at = text.find("NVRM: GPU ", end)


def conflicts(ev: Evidence) -> list[Conflict]:
    """Each bus id whose board the kernel log and the module listing name differently."""
    inv = ev.inventory if ev.backend is not None else None
    listed = {bus_key(m.bus_id): m for m in (inv.modules if inv else ())
              if isinstance(m.bus_id, str) and isinstance(m.uuid, str)}
    if not listed:
        return []
    out = []
    for bus, (uuid, serial) in _from_files(ev).items():
        m = listed.get(bus)
        if m is not None and isinstance(m.uuid, str) and m.uuid.lower() != uuid.lower():
            out.append(Conflict(bus, uuid, serial, m.id, m.uuid))
    return out


def _from_files(ev: Evidence) -> dict[str, tuple[str, str | None]]:
    out: dict[str, tuple[str, str | None]] = {}
    for path in ev.captures.files:
        name = path.replace("\\", "/").rsplit("/", 1)[-1]
        if KERNEL_LOG in ev.captures.read_as.get(name, ()):
            try:
                out |= _identities(_file_lines(path))
            except CaptureError:
                continue  # a file unreadable now names no board: nothing to compare
    return out


_WORD = b"NVRM: GPU "
_CHUNK = 1 << 20  # read a MiB at a time, as read_text does
_FIX = "give the file again as it was read"  # (never shown: a file that cannot be read now names no board)


def _file_lines(path: str) -> list[str]:
    """_nvrm_gpu_lines of a captured file, read a MiB at a time and only the lines holding the word decoded
    (issue 43: the whole text read and decoded again for its few identity lines cost a bug report's read
    time, and its size twice over in memory, after the parse). Binary or past read_text's bound on the text:
    CaptureError, as read_text raises (its line count is not kept: this keeps no more than the identity lines, and
    doctor read the file within it moments before). A line longer than a MiB: the text read whole."""
    from gpuvet.captures.read import MAX_TEXT_BYTES, read_text  # a captured log only: no parser for a live node
    from gpuvet.files import Input, open_input, unpacked

    found: list[str] = []
    try:
        with open_input(path, path, Input(error=CaptureError, not_file=", not a regular file", fix=_FIX)) as fh:
            packed, carry, size = fh.read(2) == b"\x1f\x8b", b"", 0
            fh.seek(0)
            for piece in unpacked(fh, packed, _CHUNK):
                size += len(piece)
                if (size == len(piece) and b"\x00" in piece[:65536]) or size > MAX_TEXT_BYTES:
                    raise CaptureError("not a capture read_text reads", where=path, fix=_FIX)  # binary, or past its bounds
                data = carry + piece
                cut = data.rfind(b"\n") + 1
                found += _holding(data, cut)
                carry = data[cut:]
                if len(carry) > _CHUNK:
                    return list(_nvrm_gpu_lines(read_text(path)))
    except (OSError, EOFError, zlib.error):
        raise CaptureError("cannot read the file", where=path, fix=_FIX) from None
    return found + _holding(carry, len(carry))


def _holding(data: bytes, end: int) -> list[str]:
    """The lines of ``data[:end]`` (whole lines) holding 'NVRM: GPU ', each decoded as the whole text would be
    (a newline never splits a UTF-8 character) and cut as str.splitlines cuts them."""
    out: list[str] = []
    at = data.find(_WORD, 0, end)
    while at >= 0:
        start, stop = data.rfind(b"\n", 0, at) + 1, data.find(b"\n", at, end)
        stop = end if stop < 0 else stop
        out += (line for line in data[start:stop].decode("utf-8", errors="replace").splitlines() if "NVRM: GPU " in line)
        at = data.find(_WORD, stop, end)
    return out
