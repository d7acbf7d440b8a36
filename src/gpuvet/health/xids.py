"""The Xid policy (xids.yaml): which codes drain a node, which are reported only."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources

import yaml


@dataclass(frozen=True)
class XidPolicy:
    drain: dict[int, str]
    report: dict[int, str]

    def meaning(self, code: int) -> str:
        return self.drain.get(code) or self.report.get(code) or "not in gpuvet's Xid table"


@cache
def xid_policy() -> XidPolicy:
    data = yaml.safe_load(resources.files("gpuvet.health").joinpath("xids.yaml").read_text(encoding="utf-8"))
    return XidPolicy({int(k): str(v) for k, v in data["drain"].items()},
                     {int(k): str(v) for k, v in data["report"].items()})
