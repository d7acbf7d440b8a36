"""Root cause first (issue 42): the facts a job found about the node itself (a link slowed or
down, a module missing, a power cap) are the roots; every measurement that failed or warned is
attached to the root whose link or module it runs over, so one slowed link reads as one fault
explaining 24 checks, not 24 faults. One machinery for every job: validate's checks and doctor's
findings are each read as ``Seen`` records (``seen_checks``; doctor/answer.py), and ``group``
makes the roots. Pure: records and the design in, roots out."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from gpuvet import knowledge
from gpuvet.checks.model import Check, Json, Layer, Verdict
from gpuvet.node.model import Node

ROOT_LAYERS = (Layer.INVENTORY, Layer.SOFTWARE, Layer.NETWORK)
_RANK = {"critical": 2, "warn": 1, "info": 0}
# kinds that restate another root's fact: the module count beside the module that is missing
_RESTATED = {"modules": ("module_missing", "module_fell_off_bus")}
# validate check names whose fault kind is named differently in faults.yaml
_KIND = {"power_limit": "power_cap_low", "missing_module": "module_missing", "module_lost": "module_fell_off_bus"}
# facts that follow from another fact on the same place: a module whose firmware did not boot, or
# whose PCIe resources could not be mapped, is a module the driver could not initialise
_FOLLOWS = {"module_init_failed": ("module_firmware_boot_failed", "module_cannot_attach")}
# module facts that slow what the module computes, not the copies between it and its peers
_COMPUTE_ONLY = frozenset({"power_cap_low", "clocks_locked_low", "clocks_held_low", "thermal_throttling"})
# pair failures spread over the whole node that no link or module explains: the pairs do not take
# their direct path (P2P off, ACS, a path through the host): one fact, at faults.yaml's severity
_SPREAD = "p2p_disabled"
_WORDS = {"link_down": "down", "module_missing": "missing", "module_fell_off_bus": "lost",
          "power_cap_low": "power capped", "nvlink_down": "NVLinks down"}


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


@dataclass(frozen=True)
class Seen:
    """A failed or warned check or finding as the roots read it: a ``fact`` about the node (it
    may be a root) or a measurement (it is explained by one); where it ran, and its title."""

    key: str
    kind: str  # faults.yaml's name for it, where it has one
    severity: str  # critical, warn
    fact: bool
    module: str | None
    between: tuple[str, str] | None
    title: str
    failed: bool = True  # a fail (not a warn): leads its group when no fact explains it


def seen_checks(checks: Sequence[Check]) -> list[Seen]:
    """validate's failed and warned checks; the inventory, software and network layers are facts."""
    return [Seen(c.key, _KIND.get(c.name, c.name), _severity(c), c.layer in ROOT_LAYERS, c.module, c.between,
                 _title(c), c.verdict is Verdict.FAIL) for c in checks if _bad(c)]


def _bad(c: Check) -> bool:
    return c.verdict in (Verdict.FAIL, Verdict.WARN)


def _severity(c: Check) -> str:
    """faults.yaml's severity for the check's fault kind; else its verdict's word."""
    known = knowledge.faults().get(_KIND.get(c.name, c.name))
    return known.severity if known else ("critical" if c.verdict is Verdict.FAIL else "warn")


def subject(module: str | None, between: tuple[str, str] | None) -> str:
    return "↔".join(between) if between else module or "node"


def _title(c: Check) -> str:
    """'gpu1↔nvswitch0 at 33 % of design', or the check's name and place."""
    if c.name == "link_degraded" and isinstance(c.value, str) and isinstance(c.expected, str):
        share = link_share(c.value, c.expected)
        if share is not None:
            return f"{subject(c.module, c.between)} at {share} % of design"
    return place_title(_KIND.get(c.name, c.name), c.module, c.between)


def place_title(kind: str, module: str | None, between: tuple[str, str] | None) -> str:
    """'gpu1↔gpu2 down', 'gpu3 missing', 'gpu6 power capped'."""
    return f"{subject(module, between)} {_WORDS.get(kind, kind.replace('_', ' '))}"


def link_share(measured: str, design: str) -> int | None:
    """The percentage of design a link's description carries ('nvlink x18 148.5 GB/s' of '... 450.0 GB/s')."""
    got, want = _gbps(measured), _gbps(design)
    return round(100 * got / want) if got and want else None


def _gbps(text: str) -> float | None:
    """The GB/s figure of a link's description ('nvlink x18 148.5 GB/s')."""
    words = text.split()
    try:
        return float(words[words.index("GB/s") - 1]) if "GB/s" in words[1:] else None
    except ValueError:
        return None


def _ends(s: Seen, modules: frozenset[str]) -> frozenset[str]:
    """The modules a record runs on: its module, or its pair's module ends."""
    return frozenset(x for x in ((s.module,) if s.module else tuple(s.between or ())) if x in modules)


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


def _explains(root: Seen, s: Seen, design: Node | None, modules: frozenset[str]) -> bool:
    """A link explains the records that run over it (without a design to route on: the pair it
    joins); a module, the records that run on it."""
    ends = _ends(root, modules | ({root.module} if root.module else set()))  # a missing module: not in the design
    if not ends:  # a node-wide setting (p2p off): every pair and collective
        return s.module is None
    if root.kind in _COMPUTE_ONLY and s.between:  # a capped module computes slower; its copies run as before
        return False
    if root.between and len(ends) == 2 and s.between:
        return _over_link(root.between, s.between, design) if design else set(s.between) == set(root.between)
    return bool(ends & _ends(s, modules))


def _candidates(seen: Sequence[Seen]) -> list[Seen]:
    """The facts about the node, gravest first; a fact that only restates another's (the module
    count beside the missing module) is not one."""
    kinds = {s.kind for s in seen if s.fact}
    facts = [s for s in seen if s.fact and not set(_RESTATED.get(s.kind, ())) & kinds]
    return sorted(facts, key=lambda s: -_RANK.get(s.severity, 0))


def find_roots(checks: Sequence[Check], design: Node | None) -> list[Root]:
    """validate's roots: ``group`` over its failed and warned checks."""
    return group(seen_checks(checks), design)


def group(seen: Sequence[Seen], design: Node | None, places: frozenset[str] = frozenset()) -> list[Root]:
    """The roots, each with the records it explains; records no fact explains are grouped under
    the module they name most (a fault only a benchmark sees: silent corruption), or under the
    node when they are spread over every module (P2P off). ``places``: module names the records
    use beyond the design's (a capture's bus ids)."""
    modules = places | (frozenset(m.id for m in design.modules) if design else frozenset())
    seen = _one_per_key(seen)
    facts = _candidates(seen)
    cause = _causes(facts)
    facts = [f for f in facts if f.key not in cause]
    # a link explains before a module (a pair slowed over a slowed link, not by a capped end), and a
    # fact with a place before a node-wide one (a module missing where the design cannot tell)
    placed = sorted(facts, key=lambda f: (not _ends(f, modules | ({f.module} if f.module else set())), not f.between))
    owner: dict[str, list[str]] = {s.key: [s.key] for s in facts}
    for key, by in cause.items():
        owner[by].append(key)
    rest = [s for s in seen if s.key not in owner and s.key not in cause]
    for s in rest:
        root = next((f for f in placed if _explains(f, s, design, modules)), None)
        if root is None and s.module is None and s.between is None and facts:  # node-wide: a link first
            root = next((f for f in facts if f.kind in _RESTATED.get(s.kind, ())
                         or (f.between and not s.fact)), facts[0])
        if root is not None:
            owner[root.key].append(s.key)
    taken = {k for keys in owner.values() for k in keys}
    roots = [Root(f.key, f.kind, f.severity, subject(f.module, f.between), f.title, tuple(owner[f.key]))
             for f in facts]
    return roots + _unexplained([s for s in rest if s.key not in taken], modules)


def _one_per_key(seen: Sequence[Seen]) -> list[Seen]:
    """Checks that find one fault (a module missing from the inventory and from the hotplug
    history) are one record, so one root: the gravest of them, a fact where any is."""
    out: dict[str, Seen] = {}
    for s in seen:
        kept = out.setdefault(s.key, s)
        if kept is not s:
            grave = s if _RANK.get(s.severity, 0) > _RANK.get(kept.severity, 0) else kept
            out[s.key] = replace(grave, fact=kept.fact or s.fact, failed=kept.failed or s.failed)
    return list(out.values())


def _causes(facts: Sequence[Seen]) -> dict[str, str]:
    """The facts that follow from another fact on the same place (``_FOLLOWS``): key -> its root's key."""
    direct = {s.key: c.key for s in facts for c in facts
              if c.kind in _FOLLOWS.get(s.kind, ()) and (c.module, c.between) == (s.module, s.between)}
    out = {}
    for key, by in direct.items():
        for _ in range(len(direct)):  # up the chain to a fact nothing explains
            by = direct.get(by, by)
        out[key] = by
    return out


def _spread(pairs: Sequence[Seen], modules: frozenset[str]) -> bool:
    """Pair failures that no two modules account for (a node-wide cause: P2P off), or that take
    two thirds of every pair of modules; one or two bad modules are in every failed pair."""
    edges = {frozenset(_ends(s, modules)) for s in pairs}
    possible = len(modules) * (len(modules) - 1) // 2
    return len(edges) >= 3 and (3 * len(edges) >= 2 * possible or _cover(edges, 2) > 2)


def _cover(edges: set[frozenset[str]], most: int) -> int:
    """How many modules a greedy cover of the pairs takes (counting stops past ``most``)."""
    left, n = set(edges), 0
    while left and n <= most:
        count: dict[str, int] = {}
        for e in left:
            for m in e:
                count[m] = count.get(m, 0) + 1
        top = max(count, key=lambda m: (count[m], m))
        left = {e for e in left if top not in e}
        n += 1
    return n


def _unexplained(left: Sequence[Seen], modules: frozenset[str]) -> list[Root]:
    """One root per module the unexplained records name most, led by its gravest; a node-wide
    record joins the first of them (or stands alone). Pair failures spread over the whole node
    are one root, the node's, with the node-wide records."""
    pairs = [s for s in left if len(_ends(s, modules)) == 2]
    node = [*pairs, *(s for s in left if not _ends(s, modules))] if _spread(pairs, modules) else []
    count: dict[str, int] = {}
    for s in left:
        for m in _ends(s, modules):
            count[m] = count.get(m, 0) + 1
    groups: dict[str, list[Seen]] = {"node": node} if node else {}
    for s in (s for s in left if s not in node):
        ends = _ends(s, modules)
        home = max(ends, key=lambda m: (count[m], m)) if ends else next(iter(groups), "node")
        groups.setdefault(home, []).append(s)
    out = []
    for home, members in groups.items():
        lead = min(members, key=lambda s: (not s.failed, s.module is None))
        keys = (lead.key, *(s.key for s in members if s is not lead))
        if home == "node" and node:  # the fact is the node's path between modules, faults.yaml's words for it
            fact = knowledge.faults()[_SPREAD]
            title = f"node: {_SPREAD.replace('_', ' ')}? ({lead.kind.replace('_', ' ')} slow across the node)"
            out.append(Root(lead.key, fact.kind, fact.severity, home, title, keys))
            continue
        out.append(Root(lead.key, lead.kind, lead.severity, home, f"{home}: {lead.kind.replace('_', ' ')}", keys))
    return out
