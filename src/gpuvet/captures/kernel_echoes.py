"""Kernel events that are another event seen again (issue 46): the cause is the finding, its echo is not a
second one. Kept apart from kernel.py's reading so each stays one job."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from collections.abc import Sequence


class _Event(Protocol):
    @property
    def kind(self) -> str: ...

    @property
    def module(self) -> str: ...


E = TypeVar("E", bound=_Event)

# an amdgpu hang (a ring timed out, the module reset), seen again from the display as a fence timeout
_HANGS = frozenset(("amd_ring_timeout", "amd_ring_recovered", "amd_gpu_reset", "amd_reset_failed",
                    "amd_recovery_failed", "amd_mes_unresponsive"))
# (the cause, its echo): another driver owning the devices (the NVIDIA probe never called), seen again as
# 'No NVIDIA devices probed' or a failed probe; a hung ring's fences found signalled by the fallback timer only
_ECHOES = ((_HANGS, "amd_fence_timeout"), (_HANGS, "amd_fence_fallback"),
           (frozenset(("probe_not_called",)), "probe_failed"))


def without_echoes(events: Sequence[E]) -> list[E]:
    """The events less each echo on a module whose cause is there: alone, an echo is a finding."""
    out = list(events)
    for causes, echo in _ECHOES:
        held = {e.module for e in out if e.kind in causes}
        out = [e for e in out if not (e.kind == echo and e.module in held)]
    return out
