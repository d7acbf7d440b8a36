"""The one JSON printer of the CLI. JSON has no NaN or Infinity (``json.dumps`` would write them,
and strict parsers — jq, JavaScript, Go — reject the document), so a non-finite float becomes
null and the dump itself runs with ``allow_nan=False`` as the last guard."""

from __future__ import annotations

import json
import math
import sys


def finite(data: object) -> object:
    """``data`` with every NaN/Infinity float replaced by None (typed records made plain first)."""
    from gpuvet.report.jsonable import to_jsonable

    return _finite(to_jsonable(data))


def _finite(obj: object) -> object:
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_finite(v) for v in obj]
    return obj


def dumps(data: object, indent: int = 1) -> str:
    return json.dumps(finite(data), indent=indent, allow_nan=False)


def write_json(data: object, indent: int = 1) -> None:
    sys.stdout.write(dumps(data, indent) + "\n")
