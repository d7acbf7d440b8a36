"""What each NVRM message kind of ``kernel.MESSAGES`` means, the cause doctor names and the action
(data: kernel_messages.yaml). Here, below the jobs, so doctor and health read the same table."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources

from gpuvet.knowledge.package_yaml import load_package_yaml

_FIELDS = ("cause", "meaning", "action")


@dataclass(frozen=True)
class KernelMessageInfo:
    """An NVRM message without an Xid (captures/kernel.py names its kind)."""

    cause: str  # a cause of doctor/causes.yaml
    meaning: str
    action: str


@cache
def kernel_message_catalog() -> dict[str, KernelMessageInfo]:
    text = resources.files("gpuvet.captures").joinpath("kernel_messages.yaml").read_text(encoding="utf-8")
    table = load_package_yaml(text).get("kernel_messages") or {}
    out: dict[str, KernelMessageInfo] = {}
    for kind, entry in table.items():
        if not isinstance(entry, dict) or set(entry) != set(_FIELDS) or not all(isinstance(entry[f], str)
                                                                               for f in _FIELDS):
            raise ValueError(f"kernel_messages.yaml: {kind}: needs exactly {', '.join(_FIELDS)} (text)")
        out[str(kind)] = KernelMessageInfo(entry["cause"], entry["meaning"], entry["action"])
    return out
