"""Root cause first (issue 42): the facts validate found about the node itself (inventory,
software and topology checks: a link slowed or down, a module missing, a power cap) are the
roots; every benchmark check that failed or warned is attached to the root whose link or module
it runs over, so one slowed link reads as one fault explaining 24 checks, not 24 faults. Pure:
checks and the design in, roots out; validate's text and JSON (``roots``) read the same list."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gpuvet import knowledge
from gpuvet.checks.model import Check, Json, Layer, Verdict
from gpuvet.node.model import Node

ROOT_LAYERS = (Layer.INVENTORY, Layer.SOFTWARE, Layer.NETWORK)
_RANK = {"critical": 2, "warn": 1, "info": 0}
# check names that restate another root's fact: the module count beside the module that is missing
_RESTATED = {"modules": ("missing_module", "module_lost")}
# validate check names whose fault kind is named differently in faults.yaml
_KIND = {"power_limit": "power_cap_low", "missing_module": "module_missing", "module_lost": "module_fell_off_bus"}


@dataclass(frozen=True)
class Root:
    """One fault that explains checks: its subject, one severity (faults.yaml's words), a title
    that fits a line, and the keys of the checks it explains (its own first)."""

    key: str
    kind: str
    severity: str
    subject: str
    title: str
    explains: tuple[str, ...]

    def to_json(self) -> dict[str, Json]:
        return {"key": self.key, "kind": self.kind, "severity": self.severity, "subject": self.subject,
                "title": self.title, "explains": list(self.explains)}


def _bad(c: Check) -> bool:
    return c.verdict in (Verdict.FAIL, Verdict.WARN)


def _severity(c: Check) -> str:
    """faults.yaml's severity for the check's fault kind; else its verdict's word."""
    kind = _KIND.get(c.name, c.name)
    known = knowledge.faults().get(kind)
    return known.severity if known else ("critical" if c.verdict is Verdict.FAIL else "warn")


def _subject(c: Check) -> str:
    return "↔".join(c.between) if c.between else c.module or "node"


def _title(c: Check) -> str:
    """'gpu1↔nvswitch0 at 33 % of design', or the check's name and place."""
    where = _subject(c)
    if c.name == "link_degraded" and isinstance(c.value, str) and isinstance(c.expected, str):
        got, want = _gbps(c.value), _gbps(c.expected)
        if got and want:
            return f"{where} at {100 * got / want:.0f} % of design"
    words = {"link_down": "down", "missing_module": "missing", "module_lost": "lost", "power_limit": "power capped"}
    return f"{where} {words.get(c.name, c.name.replace('_', ' '))}"


def _gbps(text: str) -> float | None:
    """The GB/s figure of a link's description ('nvlink x18 148.5 GB/s')."""
    words = text.split()
    try:
        return float(words[words.index("GB/s") - 1]) if "GB/s" in words[1:] else None
    except ValueError:
        return None


def _ends(c: Check, modules: frozenset[str]) -> frozenset[str]:
    """The modules a check runs on: its module, or its pair's module ends."""
    return frozenset(x for x in ((c.module,) if c.module else tuple(c.between or ())) if x in modules)


def _over_link(link: tuple[str, str], pair: tuple[str, str], design: Node) -> bool:
    """Whether a copy between ``pair`` crosses the module-to-module ``link`` in the design."""
    from gpuvet.node.routing import Router

    router = Router(design, forwarding=True)
    try:
        route = router.route_edges(*pair)
    except KeyError:
        return False
    hops = router.hops(route or [])
    return any({a, b} == set(link) for a, b in zip(hops, hops[1:], strict=False))


def _explains(root: Check, c: Check, design: Node, modules: frozenset[str]) -> bool:
    """A link explains the checks that run over it; a module, the checks that run on it."""
    ends = _ends(root, modules | ({root.module} if root.module else set()))  # a missing module: not in the design
    if not ends:  # a node-wide setting (p2p off): every pair and collective
        return c.module is None
    if root.between and len(ends) == 2 and c.between:
        return _over_link(root.between, c.between, design)
    return bool(ends & _ends(c, modules))


def _candidates(checks: Sequence[Check]) -> list[Check]:
    """The facts about the node (its inventory, settings and topology), gravest first; a check
    that only restates another's fact (the module count beside the missing module) is not one."""
    facts = [c for c in checks if _bad(c) and c.layer in ROOT_LAYERS]
    names = {c.name for c in facts}
    facts = [c for c in facts if not set(_RESTATED.get(c.name, ())) & names]
    return sorted(facts, key=lambda c: -_RANK.get(_severity(c), 0))


def find_roots(checks: Sequence[Check], design: Node | None) -> list[Root]:
    """The roots, each with the failed or warned checks it explains; checks no fact explains are
    grouped under the module they name most (a fault only a benchmark sees: silent corruption)."""
    modules = frozenset(m.id for m in design.modules) if design else frozenset()
    facts = _candidates(checks)
    owner: dict[str, list[str]] = {c.key: [c.key] for c in facts}
    rest = [c for c in checks if _bad(c) and c.key not in owner]
    for c in rest:
        root = next((f for f in facts if design is not None and _explains(f, c, design, modules)), None)
        if root is None and c.module is None and c.between is None and facts:  # node-wide: a link first
            root = next((f for f in facts if f.name in _RESTATED.get(c.name, ())
                         or (f.between and c.layer not in ROOT_LAYERS)), facts[0])
        if root is not None:
            owner[root.key].append(c.key)
    left = [c for c in rest if not any(c.key in keys for keys in owner.values())]
    roots = [Root(f.key, _KIND.get(f.name, f.name), _severity(f), _subject(f), _title(f), tuple(owner[f.key]))
             for f in facts]
    return roots + _unexplained(left, modules)


def _unexplained(left: Sequence[Check], modules: frozenset[str]) -> list[Root]:
    """One root per module the unexplained checks name most, led by its gravest check; a
    node-wide check joins the first of them (or stands alone)."""
    count: dict[str, int] = {}
    for c in left:
        for m in _ends(c, modules):
            count[m] = count.get(m, 0) + 1
    groups: dict[str, list[Check]] = {}
    for c in left:
        ends = _ends(c, modules)
        home = max(ends, key=lambda m: (count[m], m)) if ends else next(iter(groups), "node")
        groups.setdefault(home, []).append(c)
    out = []
    for home, members in groups.items():
        lead = min(members, key=lambda c: (c.verdict is not Verdict.FAIL, c.module is None))
        keys = (lead.key, *(c.key for c in members if c is not lead))
        out.append(Root(lead.key, lead.name, _severity(lead), home, f"{home}: {lead.name.replace('_', ' ')}", keys))
    return out
