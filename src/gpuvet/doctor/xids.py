"""The Xid catalogue and the NVRM messages without an Xid (data in causes.yaml): what each means,
the cause it names and NVIDIA's documented action."""

from __future__ import annotations

from functools import cache
from importlib import resources

import yaml
from pydantic import BaseModel, ConfigDict

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


class KernelMessageInfo(BaseModel):
    """An NVRM message without an Xid (captures/kernel.py names its kind): the cause doctor names."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    cause: str
    meaning: str
    action: str


@cache
def kernel_message_catalog() -> dict[str, KernelMessageInfo]:
    text = resources.files("gpuvet.doctor").joinpath("causes.yaml").read_text(encoding="utf-8")
    table = yaml.safe_load(text).get("kernel_messages") or {}
    return {str(k): KernelMessageInfo.model_validate(v) for k, v in table.items()}
