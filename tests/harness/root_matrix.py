"""The root-cause matrix (issue 42): a seeded mix of one to three planted faults on each preset,
validated (simulated, quick, no --expect), and three properties judged per case: the roots are
the planted faults (no fewer, no more, by place), every failed or warned check is attached to
exactly one root, and the first 24 lines at 80 columns hold the verdict and every root's title.
Run whole by benchmarks/validate_matrix.py and a slice of it by tests/jobs/test_roots_matrix.py."""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from gpuvet.node.model import EndpointKind, Node

# the faults mixed: each changes what one module, one link or the whole node can do
MODULE_KINDS = ("power_cap_low", "missing_module", "silent_corruption", "mem_clock_flapping")
LINK_KINDS = ("link_degraded", "link_down")
NODE_KINDS = ("p2p_disabled",)
# the quick level runs no GEMM agreement and no memory bandwidth: what it cannot see is not planted there
QUICK_BLIND = ("silent_corruption", "mem_clock_flapping")
# the default level (standard) measures every pair: on more modules than this the matrix runs quick
STANDARD_MOST = 16
SCREEN_LINES, SCREEN_COLUMNS = 24, 80


@dataclass(frozen=True)
class Planted:
    """One fault as a spec's ``faults:`` entry, and the place its root must name."""

    entry: dict[str, object]

    @property
    def place(self) -> frozenset[str]:
        e = self.entry
        between = e.get("between")
        return frozenset(between) if isinstance(between, list) else frozenset({str(e.get("module", "node"))})


@dataclass(frozen=True)
class MixCase:
    preset: str
    faults: tuple[Planted, ...]
    level: str = "standard"

    @property
    def name(self) -> str:
        return f"{self.preset}:" + "+".join(f"{f.entry['kind']}@{'-'.join(sorted(f.place))}" for f in self.faults)


@dataclass(frozen=True)
class Judged:
    """A case's three properties, and what was seen when one fails."""

    case: MixCase
    roots_match: bool
    all_attached: bool
    fits_screen: bool
    roots: tuple[str, ...]  # the roots' subjects
    bad_checks: int
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.roots_match and self.all_attached and self.fits_screen


def design(preset: str) -> Node:
    from gpuvet.node.build import build_node
    from gpuvet.node.spec import load_spec

    spec, where = load_spec(preset)
    return build_node(spec, where)


def _link_of(node: Node, module: str, used: set[str], rng: random.Random) -> list[str] | None:
    """One of the module's own links to a place no other fault took: fabric first, else PCIe."""
    links = [ln for ln in node.links if module in (ln.a, ln.b) and not {ln.a, ln.b} & used]
    peers = {m.id for m in node.modules} | {e.id for e in node.endpoints if e.kind is EndpointKind.FABRIC_SWITCH}
    fabric = [ln for ln in links if ln.kind.is_fabric and {ln.a, ln.b} <= peers] or links
    if not fabric:
        return None
    ln = rng.choice(sorted(fabric, key=lambda x: (x.a, x.b)))
    return [ln.a, ln.b]


def _fault(kind: str, module: str, node: Node, used: set[str], rng: random.Random) -> Planted | None:
    if kind in LINK_KINDS:
        link = _link_of(node, module, used, rng)
        factor: dict[str, object] = {"factor": 0.33} if kind == "link_degraded" else {}
        return Planted({"kind": kind, "between": link, **factor}) if link else None
    if kind == "power_cap_low":
        tdp = next(m.model.tdp_w for m in node.modules if m.id == module) or 700.0
        return Planted({"kind": kind, "module": module, "watts": round(0.45 * tdp)})
    if kind in NODE_KINDS:
        return Planted({"kind": kind})
    return Planted({"kind": kind, "module": module})


def level_for(node: Node) -> str:
    return "standard" if len(node.modules) <= STANDARD_MOST else "quick"


def blind_to(node: Node, level: str) -> tuple[str, ...]:
    """The fault kinds validate cannot see on this node at this level: the quick level runs no GEMM
    agreement and no memory bandwidth; a simulated module with no sourced compute rate or memory
    bandwidth (atlas-800t-a2's Ascend 910B) cannot be measured, so neither is there."""
    unrated = any(not m.model.tflops or not m.model.memory_bw_gbps for m in node.modules)
    return QUICK_BLIND if level == "quick" or unrated else ()


def mix(preset: str, size: int, rng: random.Random, node: Node) -> MixCase:
    """``size`` faults of different kinds on different places (a link fault takes both its ends),
    each a fault the level validates at can see."""
    level = level_for(node)
    kinds = [k for k in MODULE_KINDS + LINK_KINDS + NODE_KINDS if k not in blind_to(node, level)]
    used: set[str] = set()
    faults: list[Planted] = []
    for kind in rng.sample(kinds, len(kinds)):
        free = [m.id for m in node.modules if m.id not in used]
        f = _fault(kind, rng.choice(free), node, used, rng) if free else None
        if f is not None and len(faults) < size:
            used |= f.place & {m.id for m in node.modules}  # a switch may carry several faulty links
            faults.append(f)
    return MixCase(preset, tuple(faults), level)


def cases(presets: Sequence[str], sizes: Sequence[int] = (1, 2, 3), seed: int = 42) -> Iterator[MixCase]:
    """Per preset, one mix of each size, drawn from a generator seeded by the seed and the preset."""
    for preset in presets:
        node = design(preset)
        rng = random.Random(f"{seed}:{preset}")
        for size in sizes:
            yield mix(preset, size, rng, node)


def _validate(spec: Path, level: str, *extra: str) -> str:
    """validate's stdout (simulated, not kept), as a user at the terminal or a script gets it."""
    from gpuvet.cli.app import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        main(["validate", "--node", str(spec), "--level", level, "--no-log", *extra])
    return out.getvalue()


def _screen(spec: Path, level: str) -> list[str]:
    """The first 24 lines validate prints at 80 columns."""
    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(SCREEN_COLUMNS)
    try:
        return _validate(spec, level).splitlines()[:SCREEN_LINES]
    finally:
        if before is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = before


def run_case(case: MixCase) -> Judged:
    with tempfile.TemporaryDirectory() as folder:
        spec = Path(folder) / "node.yaml"
        spec.write_text(yaml.safe_dump({"base": case.preset, "faults": [f.entry for f in case.faults]}),
                        encoding="utf-8")
        data = json.loads(_validate(spec, case.level, "--json"))
        head = _screen(spec, case.level)
    return judge(case, data, head)


def _list(value: object) -> list[object]:
    return list(value) if isinstance(value, list) else []


def _dicts(value: object) -> list[dict[str, object]]:
    return [x for x in _list(value) if isinstance(x, dict)]


def _key(c: dict[str, object]) -> str:
    """A JSON check's key, as the roots name it (layer/name/where)."""
    from gpuvet.checks.model import check_key

    module, between = c.get("module"), c.get("between")
    pair = (str(between[0]), str(between[1])) if isinstance(between, list) and len(between) == 2 else None
    return check_key(str(c.get("layer")), str(c.get("name")), str(module) if module else None, pair)


def _root_place(root: dict[str, object], case: MixCase) -> list[str]:
    """The place a root names. A missing module the design cannot place (the last one: no gap in
    the numbering, no --expect) is named 'node': it stands for the planted missing module."""
    place = sorted(str(root.get("subject", "")).split("↔"))
    missing = [f for f in case.faults if f.entry["kind"] == "missing_module"]
    if place == ["node"] and root.get("kind") == "module_missing" and len(missing) == 1:
        return sorted(missing[0].place)
    return place


def judge(case: MixCase, data: dict[str, object], head: Sequence[str]) -> Judged:
    """The three properties of one case, from validate's JSON and its first screen."""
    roots = _dicts(data.get("roots"))
    places = sorted(_root_place(r, case) for r in roots)
    planted = sorted(sorted(f.place) for f in case.faults)
    keys = [str(k) for r in roots for k in _list(r.get("explains"))]
    bad = {_key(c) for c in _dicts(data.get("checks")) if c.get("verdict") in ("fail", "warn")}
    attached = len(keys) == len(set(keys)) and set(keys) == bad
    fits = (any(line.startswith("verdict:") for line in head) and all(len(line) <= SCREEN_COLUMNS for line in head)
            and all(any(str(r.get("title")) in line for line in head) for r in roots))
    detail = "" if places == planted else f"planted {planted}, roots {places}"
    if not attached:
        detail += f" unattached {sorted(bad - set(keys))[:3]}"
    if not fits:
        detail += " screen: " + " | ".join(head[:3])
    return Judged(case, places == planted, attached, fits, tuple(str(r.get("subject")) for r in roots), len(bad),
                  detail.strip())
