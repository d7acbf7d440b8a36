"""DCGM's failure reasons (issue 46; data: dcgm_errors.yaml): every DCGM_FR_* code with its message formats,
DCGM's own severity and the faults.yaml cause a message of it is. Read once, on first need (a capture without a
DCGM message never loads it); captures/dcgm_messages.py builds the patterns that read the messages."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import cast

from gpuvet import knowledge

GENERIC = "dcgm"  # the cause token for DCGM's own generic cause (dcgm_diag_* or dcgm_health_* by where it was printed)
XID = "xid"  # the cause token for a message naming an Xid


@dataclass(frozen=True)
class DcgmCode:
    """One DCGM_FR_* code: what DCGM prints for it and what gpuvet makes of it."""

    name: str
    id: int
    severity: str  # DCGM's: ISOLATE, RESET, TRIAGE, MONITOR, CONFIG, UNKNOWN
    cause: str | None  # a faults.yaml cause, GENERIC, XID, or None (no fault)
    formats: tuple[str, ...]  # printf formats, as dcgm_errors.h writes them
    fields: tuple[tuple[str, str], ...] = ()  # (words of the message, cause), the first that matches decides
    xid: int | None = None  # the one Xid the code is
    health: str | None = None  # the result dcgmi health prints for it (WARN, FAIL), where the health watch raises it
    shares: str | None = None  # the code whose format it prints (its own message is told by the field it names)
    category: str = ""  # DCGM's (HARDWARE_MEMORY, SOFTWARE_CONFIG, …)

    @property
    def judged(self) -> bool:
        """A message of it is a finding wherever it is read: its cause is one of its own, or DCGM's generic one for
        a fault of the module's hardware (DCGM's HARDWARE_* category: an InfoROM it found corrupt)."""
        return self.cause not in (None, GENERIC) or (self.cause == GENERIC and self.category.startswith("HARDWARE"))


@cache
def dcgm_codes() -> dict[str, DcgmCode]:
    """Every code by name; a code sharing another's format (``same_format_as``) gets that one's formats."""
    rows = cast(dict[str, dict[str, object]], knowledge._read("dcgm_errors.yaml")["codes"])
    out: dict[str, DcgmCode] = {}
    for name, row in rows.items():
        shared = row.get("same_format_as")
        formats = cast(list[str], rows[str(shared)].get("formats") if shared else row.get("formats")) or []
        fields = cast(list[list[str]], row.get("fields") or [])
        xid = row.get("xid")
        out[name] = DcgmCode(name, int(cast(int, row["id"])), str(row["severity"]),
                             str(row["cause"]) if row.get("cause") is not None else None, tuple(formats),
                             tuple((str(w), str(c)) for w, c in fields), int(cast(int, xid)) if xid else None,
                             str(row["health"]) if row.get("health") else None, str(shared) if shared else None,
                             str(row.get("category") or ""))
    return out


@cache
def by_id() -> dict[int, DcgmCode]:
    """The codes by DCGM's number (the JSON's ``error_id``)."""
    return {c.id: c for c in dcgm_codes().values()}


def dcgm_source() -> str:
    return str(knowledge._read("dcgm_errors.yaml")["source"])
