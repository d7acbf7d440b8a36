"""The Xid policy health judges by: which codes drain a node and which are reported only. The
knowledge is gpuvet.knowledge's (xids.yaml, from NVIDIA's Xid catalog); this is its health view."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from gpuvet import knowledge


@dataclass(frozen=True)
class XidPolicy:
    drain: dict[int, str]  # severity critical: the node is unfit for the next job
    report: dict[int, str]  # warn or info: the job's own, reported without failing

    def meaning(self, code: int) -> str:
        return self.drain.get(code) or self.report.get(code) or knowledge.xid(code).meaning

    def action(self, code: int) -> str:
        return knowledge.xid(code).action

    def severity(self, code: int) -> knowledge.Level:
        return knowledge.xid(code).severity


@cache
def xid_policy() -> XidPolicy:
    table = knowledge.xids()
    return XidPolicy({c: x.meaning for c, x in table.items() if x.drains},
                     {c: x.meaning for c, x in table.items() if not x.drains})
