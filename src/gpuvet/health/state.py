"""The last check's Xid mark: the boot and the kernel-log sequence number it had read up to, so
``--xid-since last`` reports only what happened after it. A new boot starts from scratch."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from gpuvet.errors import GpuvetError


@dataclass(frozen=True)
class XidMark:
    boot_id: str
    seq: int


def load_mark(path: Path) -> XidMark | None:
    """None when there is no mark yet. Raises GpuvetError for a file that is not a mark."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise GpuvetError(f"cannot read the last health check's mark: {exc}", where=str(path),
                          fix="delete the file; the next check then reports Xids since boot.") from None
    if not isinstance(data, dict) or not isinstance(data.get("boot_id"), str) or not isinstance(data.get("seq"), int):
        raise GpuvetError("the last health check's mark is not {boot_id, seq}", where=str(path),
                          fix="delete the file; the next check then reports Xids since boot.")
    return XidMark(data["boot_id"], data["seq"])


def save_mark(path: Path, mark: XidMark) -> None:
    """Write atomically (a killed check leaves the old mark, never half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"boot_id": mark.boot_id, "seq": mark.seq}), encoding="utf-8")
    os.replace(tmp, path)


def since_seq(mark: XidMark | None, boot_id: str) -> int | None:
    return mark.seq if mark is not None and mark.boot_id == boot_id else None
