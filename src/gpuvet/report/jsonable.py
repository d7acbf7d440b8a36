"""Turn typed records into JSON-ready data. ``Unavailable`` readings become null, with the
reason under the record's ``unavailable`` key, so scripts never read a fake number."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

from gpuvet.backends.readings import Unavailable

V = TypeVar("V")
_PLAIN = (str, int, bool, type(None))


def to_jsonable(obj: object) -> Any:  # Any: the shape is the caller's, who gave the object
    """``obj`` as JSON-ready data (a pydantic record as the keys it was made from)."""
    kind = type(obj)  # exact plain types first: a big report is mostly these, and ABC checks are slow
    if kind in _PLAIN:
        return obj
    if kind is float:
        return None if obj != obj else obj
    if kind is dict and isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if kind is list and isinstance(obj, list):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, Unavailable):
        return None
    if isinstance(obj, BaseModel):
        return obj.model_dump(mode="json", exclude_unset=True)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out: dict[str, object] = {}
        missing: dict[str, str] = {}
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name)
            if isinstance(value, Unavailable):
                missing[f.name] = value.reason
            out[f.name] = to_jsonable(value)
        if missing:
            out["unavailable"] = missing
        return out
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, Mapping):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, float) and obj != obj:
        return None
    return obj


def drop_none(data: Mapping[str, V | None]) -> dict[str, V]:
    return {k: v for k, v in data.items() if v is not None}
