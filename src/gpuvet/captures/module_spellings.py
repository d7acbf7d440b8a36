"""One module spelled two ways in a text naming GPUs (issue 46, never invent, never merge): a paste's 'GPU: AMD
Instinct MI50 (gfx906:sramecc+:xnack-)' and an application's '0: … gcnArchName=gfx906' name one card, by its
model and by its gfx target. A module named only by a gfx target is dropped where a module named by its model
carries that same target on its own line, one for one: two targets listed beside one model stay two modules."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Protocol, TypeVar

GFX = re.compile(r"(?<![\w-])(gfx(?:90[0-9a-c]|94[0-9]|95[0-9]|10\d\d|11\d\d|12\d\d|80\d|70\d))(?![\w-])")


class _Named(Protocol):
    model: str
    bus: str | None


N = TypeVar("N", bound=_Named)


def targets(head: str, models: Sequence[str]) -> list[str]:
    """The gfx targets a line gives beside a model it names by name (none where it names only a target)."""
    return list(dict.fromkeys(GFX.findall(head))) if any(not GFX.fullmatch(m) for m in models) else []


def without_second_spellings(named: list[N], spelled: Counter[str]) -> list[N]:
    """``named`` less each module named only by a gfx target (no bus id) that a model named with that target is;
    ``spelled``: per target, how many modules named by model carry it."""
    left, out = Counter(spelled), []
    for n in named:
        if n.bus is None and GFX.fullmatch(n.model) and left[n.model] > 0:
            left[n.model] -= 1
            continue
        out.append(n)
    return out
