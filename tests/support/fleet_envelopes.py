"""validate --json envelopes as the peer-analysis tests build them: a node's per-module checks
from an array, wrapped with the node's name and type; and a table's state, to compare two folds."""

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from gpuvet.errors import GpuvetError


def module_checks(values: np.ndarray) -> list[dict[str, Any]]:
    """One check per (module, metric) of a (modules, metrics) array, module by module: "m{k}" on "gpu{m}"."""
    return [{"layer": "compute", "name": f"m{k}", "verdict": "pass", "value": float(values[m, k]), "unit": "x",
             "module": f"gpu{m}"} for m in range(values.shape[0]) for k in range(values.shape[1])]


def envelope(n: int, checks: list[dict[str, Any]], node_type: str = "H200", **top: Any) -> tuple[str, dict[str, Any]]:
    """(where it came from, envelope) of node number ``n``: file f{n}, node n{nn}."""
    return f"f{n}", {"schema_version": 1, **top, "environment": {"node": f"n{n:02d}", "node_type": node_type},
                     "checks": checks}


def table_state(table: Any, with_layout: bool = True) -> Any:
    """Everything a PeerTable holds, comparable (figures as their doubles' bytes, so NaN equals
    NaN). ``with_layout=False`` leaves out whether the fast layout was kept: a value that one
    reader gives as an int and another as a float is the same figure, in another kind of layout."""
    return ({t: (dict(c.nodes), dict(c.series), dict(c.refs), dict(c._seen), c.series_of.tolist(),
                 c.ref_of.tolist(), c.node_of.tolist(), np.frombuffer(c.value).tobytes(),
                 c.regular if with_layout else None) for t, c in table.types.items()},
            list(table.types), dict(table.schemas), table.simulated)


def outcome(step: Callable[..., object], *args: object) -> str | None:
    """What ``step(*args)`` refused (the error's words), or None where it took the input."""
    try:
        step(*args)
    except GpuvetError as exc:
        return exc.what
    return None


def write_envelopes(folder: Path, envs: list[dict[str, Any]]) -> list[str]:
    """Each envelope as NODE.json in ``folder`` (its environment's node name): the paths, in order."""
    paths = []
    for env in envs:
        path = folder / f"{env['environment']['node']}.json"
        path.write_text(json.dumps(env), encoding="utf-8")
        paths.append(str(path))
    return paths
