"""The last check's Xid mark: the boot and the kernel-log sequence number it had read up to, so
``--xid-since last`` reports only what happened after it. A new boot starts from scratch."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from gpuvet.errors import GpuvetError
from gpuvet.files import read_small, write_atomic


@dataclass(frozen=True)
class XidMark:
    boot_id: str
    seq: int


MAX_MARK_BYTES = 4096


def load_mark(path: Path) -> XidMark | None:
    """None when there is no mark yet. Raises GpuvetError for a file that is not a mark (a link
    or special file included: the mark is gpuvet's own regular file)."""
    raw = read_small(path, MAX_MARK_BYTES, str(path))
    if raw is None:
        return None
    try:
        data = json.loads(raw.decode("utf-8"))
    except ValueError as exc:
        raise GpuvetError(f"cannot read the last health check's mark: {exc}", where=str(path),
                          fix="delete the file; the next check then reports Xids since boot.") from None
    if not isinstance(data, dict) or not isinstance(data.get("boot_id"), str) or not isinstance(data.get("seq"), int):
        raise GpuvetError("the last health check's mark is not {boot_id, seq}", where=str(path),
                          fix="delete the file; the next check then reports Xids since boot.")
    return XidMark(data["boot_id"], data["seq"])


def save_mark(path: Path, mark: XidMark, *, create_folder: bool) -> None:
    """Atomic and private, never through a planted link (a killed check leaves the old mark, never
    half a file). ``create_folder`` only for gpuvet's default location, never a typed --state."""
    write_atomic(path, json.dumps({"boot_id": mark.boot_id, "seq": mark.seq}), where=str(path), private=True,
                 create_folder=create_folder)


def since_seq(mark: XidMark | None, boot_id: str) -> int | None:
    return mark.seq if mark is not None and mark.boot_id == boot_id else None
