"""YAML read with bounds, for files a user (or someone else) hands gpuvet: specs, rules.

PyYAML's safe loader builds no objects, but it still follows aliases: nine levels of ten
aliases ("billion laughs") is a 1 KB file that expands to 10^9 nodes once anything walks it,
and a deeply nested file exhausts the interpreter's stack. So the document is composed first,
counting aliases and depth as it goes, its expanded size is computed without expanding it
(each node's size once, memoised), and only then is it turned into Python data."""

from __future__ import annotations

from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.events import AliasEvent
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.resolver import Resolver

try:  # libyaml's event parser (C, no recursion) when present; composing stays in Python, bounded
    from yaml.cyaml import CParser as _Parser  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    from yaml.parser import Parser
    from yaml.reader import Reader
    from yaml.scanner import Scanner

    class _Parser(Reader, Scanner, Parser):  # type: ignore[no-redef]
        def __init__(self, stream: str) -> None:
            Reader.__init__(self, stream)
            Scanner.__init__(self)
            Parser.__init__(self)

from gpuvet.errors import GpuvetError

MAX_FILE_BYTES = 256 << 10  # 256 KiB: a 1,024-module spec with every bus id and UUID written out is ~110 KB
MAX_DEPTH = 32  # a spec nests 5 levels deep; rules 3
MAX_ALIASES = 1000  # anchors are handy for repeated faults; a bomb needs few, so expansion is bounded too
MAX_EXPANDED_NODES = 200_000  # scalars + collections after every alias is followed
MAX_DIGITS = 100  # in a decimal integer: every count and code a spec or rule holds is far shorter; Python's
                  # int() itself refuses more than 4,300 (a ValueError, not a message naming the line)


class _BoundedLoader(Composer, _Parser, SafeConstructor, Resolver):
    def __init__(self, stream: str, where: str, error: type[GpuvetError], lists: dict[str, int]) -> None:
        _Parser.__init__(self, stream)
        Composer.__init__(self)
        SafeConstructor.__init__(self)
        Resolver.__init__(self)
        self._where, self._error = where, error
        self._depth = 0
        self._aliases = 0
        self._lists = lists
        self._top_key: object = None

    def _refuse(self, what: str, fix: str) -> GpuvetError:
        return self._error(what, where=self._where, fix=fix)

    def compose_node(self, parent: Node | None, index: int | Node) -> Node | None:
        if self.check_event(AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_ALIASES:
                raise self._refuse(f"more than {MAX_ALIASES} YAML aliases (*name)", "write the repeated parts out.")
        if self._depth == 1:  # a value of the top-level mapping: remember its key
            self._top_key = getattr(index, "value", None)
        elif self._depth == 2 and isinstance(parent, SequenceNode) and isinstance(index, int):
            most = self._lists.get(self._top_key) if isinstance(self._top_key, str) else None
            if most is not None and index >= most:  # refused while reading, not after
                raise self._refuse(f"more than {most:,} {self._top_key}; the limit is {most:,}",
                                   "split it, or see docs/limits.md for why the limit is there.")
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise self._refuse(f"nested more than {MAX_DEPTH} levels deep", "flatten the document.")
            return super().compose_node(parent, index)  # type: ignore[arg-type]  # the stubs say int; a mapping passes its key node
        finally:
            self._depth -= 1

    def compose_mapping_node(self, anchor: str | None) -> MappingNode:  # type: ignore[override]  # the stubs say dict
        """A key given twice in one mapping is refused naming both lines: PyYAML keeps the last silently (a
        second `modules:` replaced the first). Checked as composed, before merge keys (<<) are followed."""
        node: MappingNode = super().compose_mapping_node(anchor)  # type: ignore[arg-type]
        seen: dict[tuple[str, str], int] = {}
        for key, _ in node.value:
            if not isinstance(key, ScalarNode) or key.tag == "tag:yaml.org,2002:merge":
                continue
            line = key.start_mark.line + 1
            first = seen.setdefault((key.tag, str(key.value)), line)
            if first != line:
                raise self._refuse(f"line {line}: the key {str(key.value)[:60]!r} is given twice in one mapping "
                                   f"(first at line {first}); which one is meant is not known",
                                   "keep one of the two (YAML readers differ on which wins).")
        return node

    def construct_bounded_int(self, node: ScalarNode) -> object:
        """YAML's int, refused past MAX_DIGITS digits (in any base: a 5,000-digit hex integer is read, but
        cannot be printed in an error message, whose str() has the same limit)."""
        digits = str(node.value).replace("_", "").lstrip("+-")
        digits = digits[2:] if digits[:2].lower() in ("0x", "0o", "0b") else digits
        if len(digits) > MAX_DIGITS:
            raise self._refuse(f"line {node.start_mark.line + 1}: an integer of {len(digits):,} digits (at most "
                               f"{MAX_DIGITS})", "write the number the field means; see docs/limits.md for each "
                               "field's range.")
        return self.construct_yaml_int(node)


# types-PyYAML constrains the loader type to PyYAML's own classes; a subclass of SafeLoader is one at run time
_BoundedLoader.add_constructor("tag:yaml.org,2002:int", _BoundedLoader.construct_bounded_int)  # type: ignore[type-var]


def expanded_size(root: Node) -> int:
    """How many nodes the document has once every alias is followed (memoised: linear time)."""
    sizes: dict[int, int] = {}
    order: list[Node] = []
    stack: list[Node] = [root]
    while stack:  # iterative post-order: no recursion on hostile depth
        node = stack.pop()
        if id(node) in sizes:
            continue
        sizes[id(node)] = -1
        order.append(node)
        stack.extend(_children(node))
    total: dict[int, int] = {}
    for node in reversed(order):
        total[id(node)] = min(1 + sum(total.get(id(c), 0) for c in _children(node)), MAX_EXPANDED_NODES + 1)
    return total[id(root)]


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def load_bounded(text: str, where: str, error: type[GpuvetError] = GpuvetError,
                 lists: dict[str, int] | None = None) -> object:
    """``yaml.safe_load`` within the limits above (what it returns: JSON-like data, plus the
    dates, bytes and sets YAML's safe tags make — the caller narrows it); a breach raises ``error`` naming the limit.
    ``lists`` caps the length of top-level lists by key (``{"modules": 1024}``), checked while
    the list is read. Raises yaml.YAMLError for malformed YAML, as safe_load does."""
    if len(text) > MAX_FILE_BYTES:
        raise error(f"{len(text):,} characters; the limit is {MAX_FILE_BYTES:,}", where=where,
                    fix="a spec or rules file this large is not hand-written: check that it is the right file.")
    loader = _BoundedLoader(text, where, error, lists or {})
    try:
        root = loader.get_single_node()
        if root is None:
            return None
        if expanded_size(root) > MAX_EXPANDED_NODES:
            raise error(f"expands to more than {MAX_EXPANDED_NODES:,} values once its aliases are followed",
                        where=where, fix="write repeated parts out, or use fewer nested aliases.")
        return loader.construct_document(root)
    finally:
        loader.dispose()
