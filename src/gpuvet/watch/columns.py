"""One module's recorded samples as arrays (issue 43): the query-CSV reader hands a month of
one-minute rows to the replay as columns, so no ``Sample`` is made for a row the detectors skip
in a block. ``Recording.samples`` still gives the samples, made from the columns on first use,
for every reader of a recording that wants them one by one."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from gpuvet.backends.readings import Sample
from gpuvet.checks.blocks import ModuleBlock

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
# the counters an nvidia-smi log may hold, as ``Sample`` names them
COUNTS = ("ecc_corrected", "ecc_uncorrected", "pcie_gen", "pcie_gen_max", "pcie_width", "pcie_width_max")


@dataclass
class Columns:
    """A module's samples in the order read; NaN where a reading is missing (None in a ``Sample``).
    ``seq``: each sample's place among all the recording's samples (what orders ties in time)."""

    module: str
    uuid: str
    seq: IntArray
    t: FloatArray
    temp: FloatArray
    power: FloatArray
    sm: FloatArray
    mem: FloatArray
    util: FloatArray
    throttle: IntArray
    counts: dict[str, FloatArray] = field(default_factory=dict)  # only the columns the log has

    def __len__(self) -> int:
        return len(self.t)

    def shifted(self, offset: int) -> Columns:
        """The same samples placed after ``offset`` others (a recording merged after another)."""
        return Columns(self.module, self.uuid, self.seq + offset, self.t, self.temp, self.power, self.sm, self.mem,
                       self.util, self.throttle, self.counts)

    def samples(self) -> list[Sample]:
        t, th = self.t.tolist(), self.throttle.tolist()
        temp, power, sm, mem, util = (floats(a) for a in (self.temp, self.power, self.sm, self.mem, self.util))
        n = len(t)
        none: list[int | None] = [None] * n
        counts = [_ints(self.counts[c]) if c in self.counts else none for c in COUNTS]
        m, u = self.module, self.uuid
        return [Sample(ts, m, u, tc, pw, sc, mc, ut, b, ecc_corrected=ec, ecc_uncorrected=eu, pcie_gen=g,
                       pcie_gen_max=gm, pcie_width=w, pcie_width_max=wm)
                for ts, tc, pw, sc, mc, ut, b, ec, eu, g, gm, w, wm in zip(t, temp, power, sm, mem, util, th, *counts,
                                                                             strict=True)]

    def block(self, order: IntArray, rows: IntArray) -> ModuleBlock:
        """The samples taken in ``order`` as a detector block (``rows``: their stream positions), as
        ``checks.blocks.from_samples`` makes it from the same samples."""
        arrays = {name: getattr(self, name)[order] for name in ("temp", "power", "sm", "mem", "util", "t")}
        arrays["rows"] = rows.astype(np.float64)  # the forecaster's windows read both as arrays
        n = len(order)
        none: list[int | None] = [None] * n
        counts = {c: _ints(self.counts[c][order]) if c in self.counts else none for c in COUNTS}
        # a counter the log lacks is None at once (not a walk over a list of Nones per module)
        some = {c: v if c in self.counts and any(x is not None for x in v) else None for c, v in counts.items()}
        pcie = (counts["pcie_gen"], counts["pcie_gen_max"], counts["pcie_width"], counts["pcie_width_max"])
        b = _ArrayBlock(self.module, self.uuid, arrays["t"].tolist(), rows.tolist(), [], [], [], [], [],
                        self.throttle[order].tolist(), None, some["ecc_corrected"], some["ecc_uncorrected"],
                        pcie if any(some[c] for c in COUNTS[2:]) else None)
        b.arrays.update(arrays)  # what ``ModuleBlock.array`` would make of the lists
        return b


class _Listed:
    """A float column of an ``_ArrayBlock``: its array, made the list ``ModuleBlock`` holds (None
    for NaN) only when read, as a detector fed one sample at a time reads it."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, block: ModuleBlock | None, owner: type | None = None) -> list[float | None]:
        assert block is not None
        got: list[float | None] | None = block.__dict__.get(self.name)
        if got is None:
            got = block.__dict__[self.name] = floats(block.arrays[self.name])
        return got

    def __set__(self, block: ModuleBlock, value: list[float | None]) -> None:
        block.__dict__[self.name] = value or None  # empty: the block's array, listed when read


class _ArrayBlock(ModuleBlock):
    """A ``ModuleBlock`` made from columns: the detectors' block checks and the forecaster read the
    arrays; a month's float columns are listed only where a detector reads them sample by sample."""

    temp = _Listed()
    power = _Listed()
    sm = _Listed()
    mem = _Listed()
    util = _Listed()


def floats(a: FloatArray) -> list[float | None]:
    values: list[float | None] = a.tolist()
    if np.isnan(a).any():
        return [None if v != v else v for v in values]
    return values


def _ints(a: FloatArray) -> list[int | None]:
    if np.isnan(a).any():
        return [None if v != v else int(v) for v in a.tolist()]
    return a.astype(np.int64).tolist()  # type: ignore[no-any-return]


def samples_of(columns: Sequence[Columns]) -> list[Sample]:
    """Every module's samples, in the order the recording read them."""
    if not columns:
        return []
    made = [s for c in columns for s in c.samples()]
    order = np.argsort(np.concatenate([c.seq for c in columns]), kind="stable")
    return [made[i] for i in order.tolist()]


def times_of(columns: Sequence[Columns]) -> list[float]:
    """Every sample's time, in the order read."""
    if not columns:
        return []
    order = np.argsort(np.concatenate([c.seq for c in columns]), kind="stable")
    return np.concatenate([c.t for c in columns])[order].tolist()  # type: ignore[no-any-return]
