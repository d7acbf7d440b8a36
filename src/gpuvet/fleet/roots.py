"""Outliers under the root that explains them (issue 42): validate's envelope names its roots
(``roots: [{key, kind, severity, subject, title, explains}]``), each with the check keys it
explains; an outlier whose check is among them is that root's, so one slowed link reads as one
fault explaining 21 outliers, not 21 findings. An envelope without ``roots`` (older files) gives
None: its outliers are listed as before."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gpuvet.checks.model import check_key
from gpuvet.fleet.peers import Outlier


@dataclass(frozen=True)
class NodeRoot:
    """One root of a node's own validate, as its envelope gives it."""

    key: str
    kind: str
    severity: str
    subject: str
    title: str
    explains: tuple[str, ...]


@dataclass(frozen=True)
class RootGroup:
    """A node's root and the merge's outliers it explains (in the outliers' order)."""

    node: str
    root: NodeRoot
    outliers: tuple[Outlier, ...]

    def line(self) -> str:
        n = len(self.outliers)
        return f"{self.node}: {self.root.title} — explains {n} outlier{'' if n == 1 else 's'}"


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def read_roots(value: object) -> tuple[NodeRoot, ...] | None:
    """The envelope's ``roots`` (None where it has none: an older file); an entry that is not
    a root object is skipped, not trusted: the peers' figures do not depend on it."""
    if not isinstance(value, list):
        return None
    out = []
    for r in value:
        if not isinstance(r, dict):
            continue
        fields = [_text(r.get(k)) for k in ("key", "kind", "severity", "subject", "title")]
        explains = r.get("explains")
        if any(f is None for f in fields) or not isinstance(explains, list):
            continue
        key, kind, severity, subject, title = (f or "" for f in fields)
        out.append(NodeRoot(key, kind, severity, subject, title, tuple(e for e in explains if isinstance(e, str))))
    return tuple(out)


def outlier_key(o: Outlier) -> str:
    """The check key validate's roots name (``layer/name/where``)."""
    return check_key(o.layer or "", o.metric, o.module, o.between)


def group(outliers: Sequence[Outlier], roots: dict[str, tuple[NodeRoot, ...] | None]) -> list[RootGroup]:
    """Each node's roots that explain at least one outlier, with those outliers; an outlier goes
    to the first root (validate's order: worst first) that explains its check."""
    taken: dict[tuple[str, str], list[Outlier]] = {}
    for o in outliers:
        key = outlier_key(o)
        root = next((r for r in roots.get(o.node) or () if key in r.explains), None)
        if root is not None:
            taken.setdefault((o.node, root.key), []).append(o)
    out = []
    for node, node_roots in roots.items():
        for r in node_roots or ():
            if (node, r.key) in taken:
                out.append(RootGroup(node, r, tuple(taken[(node, r.key)])))
    return out


def roots_json(node: str, roots: dict[str, tuple[NodeRoot, ...] | None],
               groups: Sequence[RootGroup]) -> list[dict[str, object]] | None:
    """A node's roots for fleet merge's JSON, each with the number of outliers it explains
    (None: the envelope had no roots)."""
    given = roots.get(node)
    if given is None:
        return None
    counts = {g.root.key: len(g.outliers) for g in groups if g.node == node}
    return [{"key": r.key, "kind": r.kind, "severity": r.severity, "subject": r.subject, "title": r.title,
             "explains": list(r.explains), "outliers": counts.get(r.key, 0)} for r in given]
