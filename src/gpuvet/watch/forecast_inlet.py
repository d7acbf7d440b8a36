"""The inlet each module's R is measured above: the inlet/coolant reading where the source has
one, else an estimate from the node's other modules of the same model at once (T − R·P less
their usual offset; the median, leave-one-out). This keeps the node's common R and each module's
usual offset, learnt slowly across windows; the arithmetic is ``forecast_fit``'s."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable

from gpuvet.watch import forecast_text as text
from gpuvet.watch.forecast_fit import CommonFit, fit_common, learn_offsets, leave_one_out
from gpuvet.watch.forecast_settings import COMMON_R_TAU_S, OFFSET_TAU_S
from gpuvet.watch.forecast_windows import WindowStat

Inlet = tuple[float, str, float]  # °C, how it was formed, the common R it rests on (0 with a reading)


def _members(stats: dict[str, WindowStat]) -> dict[str | None, list[str]]:
    """The usable modules without an inlet reading, by model: the ones an inlet is estimated from."""
    groups: dict[str | None, list[str]] = defaultdict(list)
    for m, x in stats.items():
        if x.steady and x.ref is None and x.power > 0:
            groups[x.model].append(m)
    return groups


class NodeInlet:
    """One node's inlet estimate: the common R of each model and each module's usual offset."""

    def __init__(self) -> None:
        self.offsets: dict[str, float] = {}  # °C of T − R·P over the other modules', learnt slowly
        self.groups: dict[str | None, CommonFit] = defaultdict(CommonFit)
        # ``inlets``' window and its members, which ``learn`` of the same window takes (once) instead of finding again
        self._found: tuple[dict[str, WindowStat], dict[str | None, list[str]]] | None = None

    def inlets(self, stats: dict[str, WindowStat], warned: Callable[[str], bool]) -> dict[str, Inlet]:
        """Each usable module's inlet in this window and how it was formed: the reading, or the
        median over the other modules of its model of T − R·P − their usual offset (R: the
        common fit; the offset: each module's own R and sensor differences, learnt over days).
        A module's own temperature never enters its own inlet, nor does a warned module's (its
        creep would leak into the others); none with fewer than two others at the start.
        The third figure is the common R the estimate rests on (0 with a reading): the trend is
        fitted to each module's R less it, so the common R's own wobble cancels."""
        out: dict[str, Inlet] = {}
        found: dict[str | None, list[str]] = defaultdict(list)  # ``_members``, in the same pass
        for m, x in stats.items():
            if x.steady:
                if x.ref is not None:
                    out[m] = (x.ref, text.READ_INLET, 0.0)
                elif x.power > 0:
                    found[x.model].append(m)
        offsets = self.offsets
        self._found = (stats, found)
        for model, members in found.items():
            if len(members) < 3:
                continue
            r = self.groups[model].r
            bases = [stats[m].temp - r * stats[m].power - offsets.get(m, 0.0) for m in members]
            trusted = [not warned(m) for m in members]  # a creeping module is nobody's inlet
            said: dict[int, str] = {}  # the sentence for each count of modules used, written once a window
            for m, inlet in zip(members, leave_one_out(bases, trusted), strict=True):
                if inlet is not None:
                    used = inlet[1]
                    how = said.get(used)
                    if how is None:
                        how = said[used] = text.inlet_how(used, len(members) - 1 - used, model, r)
                    out[m] = (inlet[0], how, r)
        return out

    def learn(self, stats: dict[str, WindowStat], span_s: float) -> None:
        """The common R from how the modules' powers and temperatures differ in the same window
        (the inlet is the same for all: it cancels), and each module's usual offset of T − R·P
        over the others. A creeping module is one of many in the fit and one outlier to the
        median; a peer that drops out moves the others' inlet by noise, not by its offset."""
        decay_r = math.exp(-span_s / COMMON_R_TAU_S)
        rate = min(span_s / OFFSET_TAU_S, 1.0)
        offsets = self.offsets
        found = self._found[1] if self._found is not None and self._found[0] is stats else _members(stats)
        self._found = None
        for model, members in found.items():
            if len(members) < 3:
                continue
            g = self.groups[model]
            sums = fit_common(g.sxy, g.sxx, [stats[m].power for m in members],
                              [stats[m].temp - offsets.get(m, 0.0) for m in members], decay_r)
            if sums is not None:
                g.sxy, g.sxx = sums
                g.windows += 1
            r = g.r
            learnt = learn_offsets([stats[m].temp - r * stats[m].power for m in members],
                                   [offsets.get(m) for m in members], rate)
            offsets.update(zip(members, learnt, strict=True))
