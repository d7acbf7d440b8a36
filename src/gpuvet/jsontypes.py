"""JSON-ready values, for every layer: what evidence holds, what YAML and JSON loading returns
before it is narrowed. Read-only views (Sequence, Mapping), so a dict of lists of str fits."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

Json = str | int | float | bool | None | Sequence["Json"] | Mapping[str, "Json"]
JsonMapping = Mapping[str, Json]
