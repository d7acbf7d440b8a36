"""Expected vs found: the differences between a declared node and a detected one.

Kinds: ``missing_module``, ``extra_module``, ``link_down``, ``link_degraded`` (width, speed or
bandwidth below declared), ``wiring_mismatch`` (links connect other modules than declared).
A wiring mismatch that one exchange of two modules explains is reported once, naming both
modules, instead of as the many pair differences it causes.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

from gpuvet.node.model import Link, LinkKind, Node
from gpuvet.node.relations import PcieRelation, direct_fabric_links, pcie_relations

_BW_TOLERANCE = 0.02  # below declared by more than 2% is degraded
_MAX_SWAP_SEARCH = 24  # modules involved beyond which no swap explanation is searched


@dataclass(frozen=True)
class Difference:
    kind: str
    detail: str
    module: str | None = None
    between: tuple[str, str] | None = None
    modules: tuple[str, str] | None = None
    expected: str | None = None
    found: str | None = None


def _describe(link: Link | None) -> str:
    if link is None:
        return "absent"
    bw = link.bandwidth_gbps
    gen = f" gen{link.gen}" if link.gen else ""
    state = "" if link.up else " (down)"
    width = f"x{link.width}" if link.width_known else "x? (width not read)"
    return f"{link.kind} {width}{gen}" + (f" {bw:.1f} GB/s" if bw is not None else "") + state


def _degraded(declared: Link, found: Link) -> list[str]:
    reasons = []
    if found.width_known and found.width < declared.width:
        reasons.append(f"width x{found.width} < x{declared.width}")
    if declared.gen and found.gen and found.gen < declared.gen:
        reasons.append(f"gen{found.gen} < gen{declared.gen}")
    bw_d, bw_f = declared.bandwidth_gbps, found.bandwidth_gbps
    if bw_d and bw_f is not None and bw_f < bw_d * (1 - _BW_TOLERANCE) and not reasons:
        reasons.append(f"{bw_f:.1f} GB/s < {bw_d:.1f} GB/s")
    return reasons


def _pair(link: Link) -> tuple[str, str]:
    a, b = sorted((link.a, link.b))
    return (a, b)


def _fabric_mismatches(declared: Node, found: Node, present: set[str]) -> tuple[list[Link], list[Link]]:
    """(declared fabric links absent in found, found fabric links not declared)."""
    if not found.fabric_known:
        return [], []
    want = {k: v for k, v in direct_fabric_links(declared).items() if k <= present}
    have = {k: v for k, v in direct_fabric_links(found).items() if k <= present}
    return [want[k] for k in want if k not in have], [have[k] for k in have if k not in want]


def _relation_mismatches(declared: dict[frozenset[str], PcieRelation | None],
                         found: dict[frozenset[str], PcieRelation | None]) -> list[frozenset[str]]:
    return [k for k, rel in declared.items()
            if k in found and rel is not None and found[k] is not None and found[k] != rel]


class _Comparison:
    """Counts structural mismatches for a found node, optionally relabelled by swaps."""

    def __init__(self, declared: Node, found: Node, common: list[str]) -> None:
        self.declared, self.found, self.common = declared, found, common
        self.present = set(common) | {e.id for e in declared.endpoints}
        both_known = declared.pcie_known and found.pcie_known
        self.want_rel = pcie_relations(declared, common) if both_known else {}
        self.has_fabric = bool(declared.fabric_links())

    def relabel(self, node: Node, x: str, y: str) -> Node:
        mapping = {x: y, y: x}
        if self.has_fabric:
            links = tuple(lk.relabel(mapping) if lk.kind.is_fabric else lk for lk in node.links)
        else:
            links = tuple(lk.relabel(mapping) if lk.kind is LinkKind.PCIE and lk.ends & {x, y}
                          and not lk.ends <= {x, y} else lk for lk in node.links)
        return replace(node, links=links)

    def mismatches(self, node: Node) -> tuple[list[Link], list[Link], list[frozenset[str]]]:
        missing, unexpected = _fabric_mismatches(self.declared, node, self.present)
        rel = _relation_mismatches(self.want_rel, pcie_relations(node, self.common)) if self.want_rel else []
        rel = [k for k in rel if k not in node.unseen_relations]
        return missing, unexpected, rel

    def score(self, node: Node) -> int:
        missing, unexpected, rel = self.mismatches(node)
        return len(missing) + len(unexpected) + len(rel)


def _involved(missing: list[Link], unexpected: list[Link], rel: list[frozenset[str]],
              modules: list[str]) -> list[str]:
    """Modules touched by a mismatch, in the node's own order (gpu2 before gpu10)."""
    ends = {e for lk in missing + unexpected for e in lk.ends} | {e for k in rel for e in k}
    return [m for m in modules if m in ends]


@dataclass(frozen=True)
class _Swap:
    modules: tuple[str, str]
    equivalent: tuple[tuple[str, str], ...]  # other exchanges that explain it as well


def _explain_by_swaps(cmp: _Comparison) -> tuple[Node, list[_Swap]]:
    """Greedily exchange pairs of modules while that removes structural mismatches.

    Where the topology is symmetric, several exchanges explain the same mismatch (crossing
    gpu2/gpu3 or their uplink partners gpu10/gpu11): the first in module order is named and
    the others are listed as equivalent.
    """
    node, swaps = cmp.found, []
    score = cmp.score(node)
    while score:
        involved = _involved(*cmp.mismatches(node), modules=cmp.common)
        if len(involved) > _MAX_SWAP_SEARCH:
            break
        trials = []
        for x, y in itertools.combinations(involved, 2):
            trial = cmp.relabel(node, x, y)
            trials.append((cmp.score(trial), (x, y), trial))
        best = min((t[0] for t in trials), default=score)
        if best >= score:
            break
        winners = [t for t in trials if t[0] == best]
        score, node = best, winners[0][2]
        swaps.append(_Swap(winners[0][1], tuple(w[1] for w in winners[1:])))
    return node, swaps


def _link_differences(declared: Node, found: Node, common: set[str]) -> list[Difference]:
    out: list[Difference] = []
    present = common | {e.id for e in declared.endpoints}
    have_fabric = direct_fabric_links(found)
    for key, want in direct_fabric_links(declared).items():
        if not key <= present or not found.fabric_known:
            continue
        out += _compare_link(want, have_fabric.get(key))
    for module in sorted(common):
        declared_pcie = declared.pcie_link(module)
        found_pcie = found.pcie_link(module)
        if declared_pcie is not None and found_pcie is not None:
            want, have = declared_pcie, found_pcie
            out += _compare_link(want, have,
                                 between=(module, want.other(module)))
    return out


def _compare_link(want: Link, have: Link | None, between: tuple[str, str] | None = None) -> list[Difference]:
    between = between or _pair(want)
    if have is None:
        return []  # absent links are structural: handled with wiring
    if want.up and not have.up:
        return [Difference("link_down", f"{between[0]}-{between[1]} is down", between=between,
                           expected=_describe(want), found=_describe(have))]
    reasons = _degraded(want, have)
    if reasons:
        return [Difference("link_degraded", f"{between[0]}-{between[1]}: " + ", ".join(reasons),
                           between=between, expected=_describe(want), found=_describe(have))]
    return []


def unread_widths(declared: Node, found: Node) -> list[str]:
    """Modules whose declared PCIe width could not be compared: the found link's width was
    never read (N/A from the driver, a topology matrix alone). "No differences" does not cover
    them, and saying so keeps a nominal x16 from passing for a reading."""
    out, have_ids = [], set(found.module_ids)
    for module in declared.module_ids:
        want = declared.pcie_link(module)
        have = found.pcie_link(module) if module in have_ids else None
        if want is not None and have is not None and not have.width_known:
            out.append(module)
    return out


def unread_rates(declared: Node, found: Node) -> list[str]:
    """Fabric links (as "a-b") the declared node gives a rate for but whose found link has none
    (npu-smi or nvidia-smi topo -m name links, not speeds): their "~" figures assume a typical
    rate, which is no reading, so "no differences" does not cover them."""
    want = direct_fabric_links(declared)
    return [f"{lk.a}-{lk.b}" for ends, lk in direct_fabric_links(found).items()
            if lk.lane_gbps is None and ends in want and want[ends].lane_gbps is not None]


def diff_nodes(declared: Node, found: Node) -> list[Difference]:
    """Every difference between what ``declared`` says and what ``found`` shows."""
    want_ids, have_ids = declared.module_ids, set(found.module_ids)
    out = [Difference("missing_module", f"{m} is declared but not found", module=m,
                      expected=declared.module(m).model.name, found="absent")
           for m in want_ids if m not in have_ids]
    out += [Difference("extra_module", f"{m} is found but not declared", module=m,
                       expected="absent", found=found.module(m).model.name)
            for m in found.module_ids if m not in set(want_ids)]
    common = [m for m in want_ids if m in have_ids]
    cmp = _Comparison(declared, found, common)
    explained, swaps = _explain_by_swaps(cmp)
    for swap in swaps:
        x, y = swap.modules
        also = "; ".join(f"{a}/{b}" for a, b in swap.equivalent)
        detail = f"{x} and {y} are cabled in each other's place" + (
            f" (the topology is symmetric: exchanging {also} explains it equally)" if also else "")
        out.append(Difference("wiring_mismatch", detail, between=(x, y), modules=(x, y)))
    missing, unexpected, rel = cmp.mismatches(explained)
    out += [Difference("link_down", f"{_pair(lk)[0]}-{_pair(lk)[1]} is declared but not found",
                       between=_pair(lk), expected=_describe(lk), found="absent") for lk in missing]
    out += [Difference("wiring_mismatch", f"{_pair(lk)[0]}-{_pair(lk)[1]} is found but not declared",
                       between=_pair(lk), expected="absent", found=_describe(lk)) for lk in unexpected]
    found_rel = pcie_relations(explained, common) if rel else {}
    for key in rel:
        a, b = sorted(key)
        out.append(Difference("wiring_mismatch", f"{a} and {b} sit elsewhere in the PCIe tree",
                              between=(a, b), expected=str(cmp.want_rel[key]), found=str(found_rel[key])))
    out += _link_differences(declared, explained, set(common))
    return out
