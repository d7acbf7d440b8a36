"""gpuvet's own YAML data files, read fast. Here, in the knowledge base that every layer may read
and that reads no other part of gpuvet, so each package-data reader can share it."""

from __future__ import annotations

from typing import Any

import yaml

_PackageLoader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_package_yaml(text: str) -> Any:
    """gpuvet's own data files (knowledge, causes, playbooks, kernel messages, ladders), shipped
    with the package and trusted: libyaml's whole safe loader, about ten times faster than the
    Python one (the same constructor, so the same data). Files from a user take
    ``gpuvet.node.yamlload.load_bounded``."""
    return yaml.load(text, Loader=_PackageLoader)  # noqa: S506 - a safe loader: CSafeLoader or SafeLoader
