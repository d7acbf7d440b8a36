"""The collective model against published measurements: load a file of cited figures (stated
busbw, rows of an all_reduce_perf table, or nccl-tests' average over a sweep), predict each on the
node spec it names, and report the error; fit the model's latency and efficiency constants to the
figures marked ``calibration``. ``benchmarks/collective_vs_published.py`` prints the table; the
tests hold the model to it."""

from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from gpuvet.backends.select import open_backend
from gpuvet.errors import GpuvetError
from gpuvet.knowledge.package_yaml import load_package_yaml
from gpuvet.node.collectives import Algorithm, Protocol, Tuning, bus_factor
from gpuvet.plan.collective import CollectiveModel
from gpuvet.quantities import parse_bytes


@dataclass(frozen=True)
class ReferencePoint:
    family: str  # nvswitch | pcie
    source: str
    node_ref: str
    role: str  # calibration | check
    op: str
    algorithm: str | None  # forced by the run, None for the library's own choice
    sizes: tuple[int, ...]  # one size, or a sweep's sizes
    published_busbw: float
    note: str
    ranks: int = 8
    fitted: bool = True  # False: a calibration row the fit leaves out (the file says why in its note)
    nvls_chunk: int | None = None  # the run's NCCL_NVLS_CHUNKSIZE where it set one (NCCL's default otherwise)
    read_to_choose: bool = False  # a check read, after its first contact, to choose a rule: no independent check of it
    launch: str = "per-gpu"  # one-process: the run's one process drove every GPU (nccl-tests -g N), its entry's launch
    launch_fit: bool = False  # one of the figures the one-process launch time was fitted to: no check of it


@dataclass(frozen=True)
class ReferenceComparison:
    point: ReferencePoint
    node: str
    predicted_busbw: float
    predicted_algorithm: str  # algorithm/protocol, several joined by "+" over a sweep
    launch_bound: bool = False  # the one-process launch floor set the time at some size of the figure

    @property
    def error(self) -> float:
        """Relative error of the predicted busbw, signed (positive: the model is optimistic)."""
        return self.predicted_busbw / self.point.published_busbw - 1.0

    @property
    def smallest(self) -> int:
        return min(self.point.sizes)


def _sweep(lo: int, hi: int) -> tuple[int, ...]:
    sizes, s = [], lo
    while s <= hi:
        sizes.append(s)
        s *= 2
    return tuple(sizes)


def load(path: str | Path) -> list[ReferencePoint]:
    """Every figure of a reference file (format: benchmarks/data/published_collectives.yaml; JSON,
    a subset of YAML, reads the same: tests/data/published_collectives_issue49.json). The file is read once
    per text (the calibration tests load it ~40 times a run); a changed file is read again."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as e:
        raise GpuvetError(f"cannot read it ({e.strerror})", where=str(path), fix="give an existing file") from None
    return list(_points(str(path), text))


@functools.lru_cache(maxsize=8)
def _points(where: str, text: str) -> tuple[ReferencePoint, ...]:
    """The figures of one file's text (frozen records, so one tuple serves every caller)."""
    path = Path(where)
    fix = "see benchmarks/data/published_collectives.yaml for the format"
    try:
        data: dict[str, list[dict[str, Any]]] = load_package_yaml(text)  # the project's own file: libyaml's loader
    except yaml.YAMLError as e:
        raise GpuvetError(f"not valid YAML: {e}", where=str(path), fix=fix) from None
    points = []
    for family, entries in (data or {}).items():
        if family.startswith("_"):  # a note about the file (JSON has no comments)
            continue
        for i, entry in enumerate(entries):
            where = f"{path}: {family}[{i}]"
            try:
                ranks = int(entry.get("ranks", 8))
                chunk = int(entry["nvls_chunk_bytes"]) if "nvls_chunk_bytes" in entry else None
                ref = entry["node"]
                launch = "one-process" if str(entry.get("launch", "")).startswith("one process driving") else "per-gpu"
                if ref.endswith(".yaml"):
                    ref = str(path.parent / ref)
                for p in entry["points"]:
                    if "sweep" in p:
                        lo, hi = (parse_bytes(str(s), "sweep") for s in p["sweep"])
                        sizes = _sweep(lo, hi)
                    else:
                        sizes = (parse_bytes(str(p["size"]), "size"),)
                    if "time_us" in p:
                        busbw = sizes[0] / (float(p["time_us"]) * 1e-6) / 1e9 * bus_factor(p["op"], ranks)
                    else:
                        busbw = float(p["busbw"])
                    points.append(ReferencePoint(family, entry["source"], ref, entry["role"], p["op"],
                                                 p.get("algorithm"), sizes, busbw, p.get("note", ""), ranks,
                                                 bool(p.get("fit", True)), chunk, bool(p.get("read_to_choose", False)),
                                                 launch, bool(entry.get("launch_fit", False))))
            except (KeyError, TypeError, ValueError) as e:
                raise GpuvetError(f"bad entry ({type(e).__name__}: {e})", where=where, fix=fix) from None
    return tuple(points)


class _Models:
    """One collective model per node spec (and NVLS chunk setting), shared by every figure of that node."""

    def __init__(self) -> None:
        self._models: dict[tuple[str, int | None], CollectiveModel] = {}

    def __call__(self, ref: str, nvls_chunk: int | None = None) -> CollectiveModel:
        if (ref, nvls_chunk) not in self._models:
            backend = open_backend(sim=ref)
            model = CollectiveModel(backend.node(), backend.spec.faults if backend.spec else ())
            self._models[(ref, nvls_chunk)] = model
            for medium, tuning in list(model.perf.collective_tuning.items()):
                model.perf.collective_tuning[medium] = _chunked(tuning, nvls_chunk)
        return self._models[(ref, nvls_chunk)]

    def set_tuning(self, medium: str, tuning: Tuning) -> None:
        for (_, chunk), m in self._models.items():
            m.perf.collective_tuning[medium] = _chunked(tuning, chunk)


def _chunked(tuning: Tuning, nvls_chunk: int | None) -> Tuning:
    """``tuning`` with NVLink SHARP's largest chunk set as a run set it (NCCL_NVLS_CHUNKSIZE): NCCL's
    chunk rule (SwitchChunking) then shrinks from that size, not from the 128 KiB default."""
    if nvls_chunk is None or tuning.switch is None:
        return tuning
    return replace(tuning, switch=replace(tuning.switch, max_chunk=nvls_chunk))


def _predict(models: _Models, p: ReferencePoint) -> ReferenceComparison:
    model = models(p.node_ref, p.nvls_chunk)
    members = model.members(p.ranks)
    preds = [model.predict(p.op, s, members, p.algorithm, p.launch) for s in p.sizes]
    chosen = "+".join(sorted({f"{x.algorithm}/{x.protocol}" for x in preds}))
    return ReferenceComparison(p, model.node.name, statistics.fmean(x.busbw for x in preds), chosen,
                               any(x.launch_bound for x in preds))


def compare(path: str | Path) -> list[ReferenceComparison]:
    """Every figure in the reference file next to the model's prediction for it."""
    models = _Models()
    return [_predict(models, p) for p in load(path)]


def median_abs_error(rows: Sequence[ReferenceComparison], *, min_bytes: int = 0, max_bytes: int | None = None,
                     role: str | None = None, family: str | None = None) -> float | None:
    """Median |error| of the rows whose sizes lie in [min_bytes, max_bytes], of ``role`` and ``family``."""
    errors = [abs(r.error) for r in rows
              if r.smallest >= min_bytes and (max_bytes is None or max(r.point.sizes) <= max_bytes)
              and (role is None or r.point.role == role) and (family is None or r.point.family == family)]
    return statistics.median(errors) if errors else None


# Issue 49's targets, by size: within 10 % where a collective is bandwidth-bound (above 512 MiB),
# within 25 % at mid sizes (1 - 512 MiB); below 1 MiB the issue sets none.
MID_SIZES = (2**20, 2**29)
TARGETS = {"bandwidth-bound": 0.10, "mid": 0.25}


def size_band(size_bytes: int) -> str:
    """Which of issue 49's size bands ``size_bytes`` falls in: small, mid or bandwidth-bound."""
    if size_bytes < MID_SIZES[0]:
        return "small"
    return "mid" if size_bytes <= MID_SIZES[1] else "bandwidth-bound"


def verdict(row: ReferenceComparison) -> str:
    """pass or miss against issue 49's target for the row's band (every size of a sweep in it);
    "no target" below 1 MiB."""
    bands = {size_band(s) for s in row.point.sizes}
    if bands == {"small"}:
        return "no target"
    target = min(TARGETS[b] for b in bands if b != "small")
    return "pass" if abs(row.error) <= target else "miss"


# --- fitting the constants ----------------------------------------------------------------------

def _parameters(tuning: Tuning, free: Sequence[str]) -> list[float]:
    out = []
    for name in free:
        if name == "base":
            out.append(tuning.base_s)
        elif name.startswith("share:"):
            out.append(tuning.share[Protocol(name[6:])])
        elif name.startswith("eff:"):
            out.append(tuning.efficiency[Algorithm(name[4:])])
        elif name == "chunk:in_switch" and tuning.switch is not None:
            out.append(tuning.switch.chunk_s)
        else:
            algo, proto = name.split("/")
            out.append(tuning.alpha_s[(Algorithm(algo), Protocol(proto))])
    return out


def _with(tuning: Tuning, free: Sequence[str], values: Sequence[float]) -> Tuning:
    alpha, eff, base, share = dict(tuning.alpha_s), dict(tuning.efficiency), tuning.base_s, dict(tuning.share)
    switch = tuning.switch
    for name, v in zip(free, values, strict=True):
        if name == "base":
            base = v
        elif name == "chunk:in_switch" and switch is not None:
            switch = replace(switch, chunk_s=v)
        elif name.startswith("share:"):
            share[Protocol(name[6:])] = v
        elif name.startswith("eff:"):
            eff[Algorithm(name[4:])] = v
        else:
            algo, proto = name.split("/")
            alpha[(Algorithm(algo), Protocol(proto))] = v
    return replace(tuning, base_s=base, alpha_s=alpha, efficiency=eff, share=share, switch=switch)


@dataclass(frozen=True)
class TuningFit:
    tuning: Tuning
    free: tuple[str, ...]
    rms_log_error: float  # root mean square of ln(predicted / published) over the calibration figures
    figures: int
    max_log_error: float = 0.0  # the largest |ln(predicted / published)| among them


def calibration_error(path: str | Path, family: str) -> float:
    """Root mean square of ln(predicted / published) over the ``calibration`` figures of
    ``family``, with the model's committed constants."""
    rows = [r for r in compare(path) if r.point.family == family and r.point.role == "calibration" and r.point.fitted]
    return math.sqrt(statistics.fmean(math.log(r.predicted_busbw / r.point.published_busbw) ** 2 for r in rows))




# What each medium's fit sets, from which family's calibration figures. NVLink SHARP's step latency
# (fabric) and chunk rule come from NCCL's source; its efficiency and per-chunk time are what the
# fabric fit sets now, the ring's constants held at their issue 22 fit (the figures they were fitted
# to are unchanged). The rack's SHARP: its step latency and efficiency (docs/plan.md says why).
FITTED = {
    "fabric": ("nvswitch", ("eff:in_switch", "chunk:in_switch")),
    "pcie": ("pcie", ("eff:ring", "ring/ll")),
    "xgmi": ("xgmi", ("ring/ll", "share:ll", "ring/ll128", "share:ll128", "ring/simple", "eff:ring")),
    "nvl_domain": ("nvl72", ("in_switch/simple", "eff:in_switch")),
    "nvlink5_board": ("nvlink5_board", ("eff:in_switch",)),
}
# Which file holds each family's figures: the 8-GPU NVSwitch and PCIe tables of issue 22, and the
# xGMI mesh and NVL72 rack tables of issue 49.
FIGURES = {"nvswitch": "benchmarks/data/published_collectives.yaml", "pcie": "benchmarks/data/published_collectives.yaml",
           "xgmi": "tests/data/published_collectives_issue49.json", "nvl72": "tests/data/published_collectives_issue49.json",
           "nvlink5_board": "tests/data/published_collectives_issue49.json"}
_ROBUST_SCALE = 0.05  # ln-errors beyond ~5 % count linearly, not squared: one odd row cannot pull the rest


def fit(path: str | Path, family: str, medium: str, free: Sequence[str]) -> TuningFit:
    """Fit the ``free`` constants of ``medium`` ("base", "eff:<algorithm>", "share:<protocol>",
    "<algorithm>/<protocol>") so that the model's busbw matches the ``calibration`` figures of
    ``family`` in ratio: robust least squares (soft L1) on ln(predicted / published), so small and
    large sizes count alike and one odd row of a table cannot pull every other size off."""
    from scipy.optimize import least_squares  # here, not at the top: ~1 s of import in every test worker

    points = [p for p in load(path) if p.family == family and p.role == "calibration" and p.fitted]
    if not points:
        raise ValueError(f"no calibration figures for {family} in {path}")
    models = _Models()
    for p in points:
        models(p.node_ref, p.nvls_chunk)
    start = models(points[0].node_ref).perf.collective_tuning[medium]  # NCCL's default chunk
    x0 = np.log(_parameters(start, free))

    def log_errors(x: np.ndarray) -> np.ndarray:
        models.set_tuning(medium, _with(start, free, [math.exp(v) for v in x]))
        return np.array([math.log(_predict(models, p).predicted_busbw / p.published_busbw) for p in points])

    result = least_squares(log_errors, x0, loss="soft_l1", f_scale=_ROBUST_SCALE, diff_step=1e-4)
    best = _with(start, free, [math.exp(v) for v in result.x])
    errors = log_errors(result.x)
    return TuningFit(best, tuple(free), float(np.sqrt(np.mean(errors**2))), len(points), float(np.abs(errors).max()))


@dataclass(frozen=True)
class LaunchFit:
    per_gpu_s: float  # one launch's host time, per GPU the process drives
    figures: int
    rms_log_error: float  # over the fit figures, each priced max(collective, GPUs x per_gpu_s)


def fit_launch(path: str | Path) -> LaunchFit:
    """The one-process launch time per GPU fitted to the figures marked ``launch_fit`` (one size each): each
    priced as the larger of the per-GPU model's time and ranks x the constant, robust least squares on
    ln(predicted / published) as ``fit`` does. Only those figures enter."""
    from scipy.optimize import least_squares

    points = [p for p in load(path) if p.launch_fit and len(p.sizes) == 1]
    if not points:
        raise ValueError(f"no launch_fit figures in {path}")
    models = _Models()
    alone = [(p, models(p.node_ref, p.nvls_chunk).predict(p.op, p.sizes[0], models(p.node_ref).members(p.ranks),
                                                          p.algorithm).time_s) for p in points]

    def log_errors(x: np.ndarray) -> np.ndarray:
        published = [p.sizes[0] * bus_factor(p.op, p.ranks) / (p.published_busbw * 1e9) for p, _ in alone]
        return np.array([math.log(t / max(s, p.ranks * math.exp(x[0]))) for (p, s), t in zip(alone, published,
                                                                                             strict=True)])

    result = least_squares(log_errors, np.log([4e-6]), loss="soft_l1", f_scale=_ROBUST_SCALE, diff_step=1e-4)
    errors = log_errors(result.x)
    return LaunchFit(float(math.exp(result.x[0])), len(points), float(np.sqrt(np.mean(errors**2))))
