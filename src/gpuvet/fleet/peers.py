"""Outliers among peers: per metric, robust scores (median and MAD) across every node of one
node type, naming the node, module or link that deviates and by how much. A node 8 % slower
than its peers passes a fixed threshold and still drags every synchronous job down.

The modified z-score (Iglewicz & Hoaglin): z = 0.6745 · (x − median) / MAD. Their usual cut-off
is 3.5; a fleet compares hundreds of thousands of figures at once, where 3.5 would flag a few
hundred by chance, so the default is 5 (about one chance flag per three million figures of
Gaussian noise). A floor on the relative deviation (3 %) keeps a near-zero MAD from flagging
noise."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpuvet.errors import GpuvetError
from gpuvet.validate.baseline import lower_is_better

Z_LIMIT = 5.0
MIN_DEVIATION = 0.03


@dataclass(frozen=True)
class Outlier:
    node: str
    node_type: str
    metric: str  # the check name, e.g. gemm_bf16, p2p_one_way
    value: float
    fleet_median: float
    score: float  # modified z-score; negative: worse for throughputs
    deviation_pct: float
    unit: str | None = None
    module: str | None = None
    between: tuple[str, str] | None = None
    layer: str | None = None


@dataclass(frozen=True)
class FleetAnalysis:
    node_types: dict[str, list[str]]  # node type -> nodes
    outliers: list[Outlier]
    metrics: int
    values: int


def envelope_node(env: dict[str, Any], where: str) -> tuple[str, str, int]:
    """(node name, node type, schema version) of a validate --json envelope."""
    try:
        environment = env["environment"]
        return str(environment["node"]), str(environment.get("node_type") or "unknown"), int(env["schema_version"])
    except (KeyError, TypeError, ValueError):
        raise GpuvetError("not a validate --json envelope (no environment.node or schema_version)", where=where,
                          fix="give the output of `gpuvet validate --json` for each node.") from None


def analyse(envelopes: Sequence[tuple[str, dict[str, Any]]], z_limit: float = Z_LIMIT,
            min_deviation: float = MIN_DEVIATION) -> FleetAnalysis:
    """``envelopes``: (where it came from, envelope). Groups by node type; refuses mixed schemas."""
    schemas: dict[int, str] = {}
    by_type: dict[str, list[tuple[str, dict[str, Any]]]] = defaultdict(list)
    for where, env in envelopes:
        node, node_type, schema = envelope_node(env, where)
        schemas.setdefault(schema, where)
        by_type[node_type].append((node, env))
    if len(schemas) > 1:
        listed = "; ".join(f"schema {s} ({w})" for s, w in sorted(schemas.items()))
        raise GpuvetError(f"envelopes of different schema versions: {listed}", where="fleet merge",
                          fix="re-run validate with one gpuvet version on every node, or merge them separately.")
    outliers: list[Outlier] = []
    metrics = values = 0
    for node_type, group in by_type.items():
        series: dict[str, tuple[list[float], list[tuple[str, dict[str, Any]]]]] = defaultdict(lambda: ([], []))
        for node, env in group:
            for c in env.get("checks", []):
                value = c.get("value")
                if c.get("verdict") == "skip" or not isinstance(value, (int, float)) or isinstance(value, bool):
                    continue
                key = f"{c.get('layer')}/{c.get('name')}"
                vals, refs = series[key]
                vals.append(float(value))
                refs.append((node, c))
        for key, (vals, refs) in series.items():
            metrics += 1
            values += len(vals)
            if len({n for n, _ in refs}) < 3:
                continue  # fewer than three nodes: no majority to compare with
            x = np.asarray(vals)
            median = float(np.median(x))
            mad = float(np.median(np.abs(x - median)))
            scale = mad if mad > 0 else max(abs(median) * 1e-3, 1e-12)
            z = 0.6745 * (x - median) / scale
            name = key.split("/", 1)[1]
            worse = z > 0 if lower_is_better(name) else z < 0
            deviation = (x - median) / abs(median) if median else np.zeros_like(x)
            flagged = np.flatnonzero(worse & (np.abs(z) > z_limit) & (np.abs(deviation) > min_deviation))
            for i in flagged:
                node, c = refs[i]
                between = tuple(c["between"]) if c.get("between") else None
                outliers.append(Outlier(node, node_type, name, vals[i], median, float(z[i]),
                                        100.0 * float(deviation[i]), c.get("unit"), c.get("module"), between,
                                        c.get("layer")))
    outliers.sort(key=lambda o: abs(o.score), reverse=True)
    types = {t: sorted({n for n, _ in g}) for t, g in by_type.items()}
    return FleetAnalysis(types, outliers, metrics, values)


def healthy_envelopes(envelopes: Sequence[tuple[str, dict[str, Any]]], analysis: FleetAnalysis,
                      node_type: str) -> list[tuple[str, dict[str, Any]]]:
    """The envelopes of one node type whose node has no outlier: the majority a fleet baseline is made of."""
    bad = {o.node for o in analysis.outliers}
    return [(w, e) for w, e in envelopes if envelope_node(e, w)[1] == node_type and envelope_node(e, w)[0] not in bad]
