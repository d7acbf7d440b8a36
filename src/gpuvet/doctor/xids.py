"""The Xid catalogue doctor reads: gpuvet.knowledge (xids.yaml, every Xid of NVIDIA's catalog with
its resolution bucket, severity and action); the NVRM messages without an Xid are read from
captures/kernel_messages.yaml (shared with health)."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from functools import cache

from pydantic import BaseModel, ConfigDict

from gpuvet import knowledge
from gpuvet.captures.kernel_messages import kernel_message_catalog as kernel_message_catalog
from gpuvet.doctor.model import Finding, finding

UNKNOWN = "not in gpuvet's list; see NVIDIA's Xid catalogue (docs.nvidia.com/deploy/xid-errors)"


class XidInfo(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    meaning: str
    action: str
    severity: str = "warn"


@cache
def xid_catalog() -> dict[int, XidInfo]:
    return {code: XidInfo(meaning=x.meaning, action=x.action, severity=x.severity)
            for code, x in knowledge.xids().items()}


def meaning(code: int) -> str:
    info = xid_catalog().get(code)
    return info.meaning if info else UNKNOWN


def action(code: int) -> str | None:
    info = xid_catalog().get(code)
    return info.action if info else None


def xid_finding(cause: str, confidence: float, module: str | None, code: int, line: str | None = None) -> Finding:
    """A finding of an Xid at the knowledge base's severity for that code (not the cause's default), or
    for that line where the code names its fatality in the message (NVLink 5's 'Nonfatal')."""
    x = knowledge.xid(code)
    found = finding(cause, confidence, module=module, fix=x.action, carried={"log": line} if line else None, xid=code,
                    meaning=x.meaning, bucket=x.bucket)
    return replace(found, severity=knowledge.xid_severity(code, line))


BURST_MODULES = 4  # the same application Xid on this many modules of one host at least: the work's fault


def burst(places: dict[tuple[str | None, str], list[int]]) -> list[Finding]:
    """Issue 46: the same Xid of the application's bucket (RESTART_APP: an MMU fault, a graphics exception) on
    BURST_MODULES modules or more of one host: one fault of the work that ran on all of them (a kernel writing
    out of bounds, a collective's), seen on every module, not so many failed modules; a node-wide burst of
    MMU faults often leaves the modules hung until the host reboots."""
    out: list[Finding] = []
    for host in dict.fromkeys(h for h, _ in places):
        counts = Counter(c for (h, _), codes in places.items() if h == host for c in set(codes))
        for code, n in sorted(counts.items()):
            if n >= BURST_MODULES and knowledge.xid(code).bucket == "RESTART_APP":
                out.append(replace(finding("xid_burst_across_modules", 0.7, xid=code, modules=n,
                                           meaning=knowledge.xid(code).meaning), host=host))
    return out
