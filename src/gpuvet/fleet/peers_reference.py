"""Peer analysis as first written, one series at a time in Python: the oracle that the array
implementation in ``fleet.peers`` is tested and benchmarked against (same outliers, same
order, same figures). Not used by the commands.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from gpuvet.errors import GpuvetError
from gpuvet.fleet.peers import MIN_DEVIATION, Z_LIMIT, FleetAnalysis, NodeVerdict, Outlier, envelope_node
from gpuvet.validate.direction import lower_is_better


def analyse_reference(envelopes: Sequence[tuple[str, dict[str, Any]]], z_limit: float = Z_LIMIT,
            min_deviation: float = MIN_DEVIATION) -> FleetAnalysis:
    """``envelopes``: (where it came from, envelope). Groups by node type; refuses mixed schemas."""
    schemas: dict[int, str] = {}
    by_type: dict[str, list[tuple[str, dict[str, Any]]]] = defaultdict(list)
    nodes = []
    for where, env in envelopes:
        node, node_type, schema = envelope_node(env, where)
        schemas.setdefault(schema, where)
        by_type[node_type].append((node, env))
        verdicts = [c.get("verdict") for c in env.get("checks", [])]
        nodes.append(NodeVerdict(node, node_type, where, env.get("verdict"), verdicts.count("fail"),
                                 verdicts.count("warn")))  # no plausibility screen: its envelopes are plausible
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
    return FleetAnalysis(types, outliers, metrics, values, nodes=nodes)
