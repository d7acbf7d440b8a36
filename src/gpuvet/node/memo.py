"""Derived data computed once per node and reused: routes, relations, the link matrix.

A ``Node`` is frozen (a fault makes a new one), so anything derived from it stays valid for
as long as the node lives; keeping it on the node object ties its lifetime to the node's and
needs no invalidation. Keys name the deriving function, e.g. ``"routing.graph"``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar, cast

from gpuvet.node.model import Node

T = TypeVar("T")


def per_node(node: Node, key: str, make: Callable[[], T]) -> T:
    """``make()`` the first time ``key`` is asked of ``node``; the same object afterwards."""
    memo = node.memo
    if key not in memo:
        memo[key] = make()
    return cast(T, memo[key])
