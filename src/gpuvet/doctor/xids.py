"""The Xid catalogue (data in causes.yaml): what each code means and NVIDIA's documented action;
the NVRM messages without an Xid are read from captures/kernel_messages.yaml (shared with health)."""

from __future__ import annotations

from functools import cache
from importlib import resources

import yaml
from pydantic import BaseModel, ConfigDict

from gpuvet.captures.kernel_messages import KernelMessageInfo as KernelMessageInfo
from gpuvet.captures.kernel_messages import kernel_message_catalog as kernel_message_catalog

UNKNOWN = "not in gpuvet's list; see NVIDIA's Xid catalogue (docs.nvidia.com/deploy/xid-errors)"


class XidInfo(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    meaning: str
    action: str


@cache
def xid_catalog() -> dict[int, XidInfo]:
    text = resources.files("gpuvet.doctor").joinpath("causes.yaml").read_text(encoding="utf-8")
    return {int(k): XidInfo.model_validate(v) for k, v in (yaml.safe_load(text).get("xids") or {}).items()}


def meaning(code: int) -> str:
    info = xid_catalog().get(code)
    return info.meaning if info else UNKNOWN


def action(code: int) -> str | None:
    info = xid_catalog().get(code)
    return info.action if info else None
