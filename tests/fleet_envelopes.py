"""validate --json envelopes as the peer-analysis tests build them: a node's per-module checks
from an array, wrapped with the node's name and type."""

from typing import Any

import numpy as np


def module_checks(values: np.ndarray) -> list[dict[str, Any]]:
    """One check per (module, metric) of a (modules, metrics) array, module by module: "m{k}" on "gpu{m}"."""
    return [{"layer": "compute", "name": f"m{k}", "verdict": "pass", "value": float(values[m, k]), "unit": "x",
             "module": f"gpu{m}"} for m in range(values.shape[0]) for k in range(values.shape[1])]


def envelope(n: int, checks: list[dict[str, Any]], node_type: str = "H200", **top: Any) -> tuple[str, dict[str, Any]]:
    """(where it came from, envelope) of node number ``n``: file f{n}, node n{nn}."""
    return f"f{n}", {"schema_version": 1, **top, "environment": {"node": f"n{n:02d}", "node_type": node_type},
                     "checks": checks}
