"""Peers on one node as a yardstick: modules of one model must agree with each other, and so
must the pairs of one topological class (same link label). The outlier is named once — a
module whose paths are all slow is one finding, not fourteen footnotes.

Needs no expectation at all, so it holds where the catalog or the design cannot say what a
figure should be (a CPU host, an unknown model, a capture)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from statistics import median

from gpuvet.bench.registry import module_peer_figures, pair_peer_figures
from gpuvet.checks.model import Check, Layer, Verdict
from gpuvet.knowledge import threshold
from gpuvet.node.model import Node
from gpuvet.node.vendor_tools import PCIE_LINK_STATE, VendorTools, tools_for

WARN_BELOW = threshold("peer_warn_below_pct") / 100  # of the peers' median (the knowledge base's)
FAIL_BELOW = threshold("peer_fail_below_pct") / 100
# Which figures compare among peers is each benchmark's own word (its registration, gpuvet.bench.registry).


def _value(c: Check) -> float | None:
    ok = c.verdict is not Verdict.SKIP and isinstance(c.value, (int, float)) and not isinstance(c.value, bool)
    return float(c.value) if ok and isinstance(c.value, (int, float)) else None


def _verdict(ratio: float) -> Verdict | None:
    return Verdict.FAIL if ratio < FAIL_BELOW else Verdict.WARN if ratio < WARN_BELOW else None


def module_peer_checks(checks: Sequence[Check], node: Node) -> list[Check]:
    """Each module's figure against the median of the modules of its model, per check name."""
    models = {m.id: m.model.name for m in node.modules}
    groups: dict[tuple[str, str], list[tuple[Check, float]]] = defaultdict(list)
    figures = module_peer_figures()
    for c in checks:
        value = _value(c)
        if c.module in models and value is not None and c.name.startswith(figures):
            groups[(c.name, models[c.module])].append((c, value))
    out = []
    for (name, model), rows in groups.items():
        if len(rows) < 3:
            continue
        middle = median(v for _, v in rows)
        for c, v in rows:
            verdict = _verdict(v / middle) if middle > 0 else None
            if verdict is not None:
                out.append(Check(c.layer, f"peers_{name}", verdict, value=round(100 * v / middle, 1), unit="% of peers",
                                 expected=100.0, module=c.module, dtype=c.dtype, device=c.device,
                                 reason=f"{c.module}: {name} at {100 * v / middle:.0f} % of the median of its "
                                        f"{len(rows) - 1} {model} peers",
                                 fix="compare its clocks, power limit and throttle reasons with a peer's",
                                 evidence={"median": middle, "value": v}))
    return out


def pair_peer_checks(checks: Sequence[Check], design: Node) -> list[Check]:
    """Pairs of one class (the design's link label) against the class median; a module in most
    of the slow pairs is named once for all of them."""
    from gpuvet.node.matrix import link_matrix

    labels = {k: cell.label for k, cell in link_matrix(design).cells.items()}
    out: list[Check] = []
    for name in pair_peer_figures():
        rows = [(c, v) for c in checks if c.name == name and c.between and (v := _value(c)) is not None]
        classes: dict[str, list[tuple[Check, float]]] = defaultdict(list)
        for c, v in rows:
            assert c.between is not None
            classes[labels.get(c.between, "?")].append((c, v))
        slow: list[tuple[Check, float]] = []
        for members in classes.values():
            if len(members) >= 3:
                middle = median(v for _, v in members)
                slow += [(c, v / middle) for c, v in members if middle > 0 and v / middle < WARN_BELOW]
        fabric = {end for link in design.fabric_links() for end in (link.a, link.b)}
        out += _name_outliers(name, rows, slow, tools_for(m.model for m in design.modules), fabric)
    return out


def _own_links(module: str, tools: VendorTools, fabric: set[str]) -> str:
    """Where to look at a module's own links: its fabric's (NVLink, xGMI) where it has one, else its PCIe slot's."""
    return tools.module_link if module in fabric else PCIE_LINK_STATE


def _name_outliers(name: str, rows: list[tuple[Check, float]], slow: list[tuple[Check, float]],
                   tools: VendorTools, fabric: set[str]) -> list[Check]:
    per_module: dict[str, int] = defaultdict(int)
    total: dict[str, int] = defaultdict(int)
    for c, _ in rows:
        for m in c.between or ():
            total[m] += 1
    for c, _ in slow:
        for m in c.between or ():
            per_module[m] += 1
    culprits = sorted(m for m, n in per_module.items() if n > total[m] / 2)
    out = []
    for m in culprits:
        mine = [r for c, r in slow if m in (c.between or ())]
        worst = min(mine)
        ratio = median(mine)
        out.append(Check(Layer.MODULE_LINK, f"peers_{name}", _verdict(worst) or Verdict.WARN,
                         value=round(100 * ratio, 1), unit="% of peers", expected=100.0, module=m,
                         reason=f"{m}: its {len(mine)} paths at {100 * ratio:.0f} % of the other "
                                f"{len(rows) - total[m]} of their class",
                         fix=f"look at {m}'s own links: {_own_links(m, tools, fabric)}"))
    for c, r in slow:
        if not set(c.between or ()) & set(culprits):
            out.append(Check(Layer.MODULE_LINK, f"peers_{name}", _verdict(r) or Verdict.WARN, value=round(100 * r, 1),
                             unit="% of peers", expected=100.0, between=c.between,
                             reason=f"{'→'.join(c.between or ())} at {100 * r:.0f} % of the pairs of its class",
                             fix="look at the links on this pair's path"))
    return out
