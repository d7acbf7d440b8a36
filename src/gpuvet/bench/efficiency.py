"""Performance per watt: GEMM throughput and the power drawn — from the module's energy
counter over the run, not a single reading — at each power cap; the efficiency curve and its
knee. Real power caps change only with --apply, under the restore journal; a simulated node
sweeps its own model without touching anything."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuvet.backends.engine import Unsupported
from gpuvet.backends.power_control import PowerControl
from gpuvet.backends.settings_journal import guarded
from gpuvet.bench.context import BenchContext
from gpuvet.bench.timing import measure
from gpuvet.errors import GpuvetError

NAME = "efficiency"


@dataclass(frozen=True)
class EfficiencyOptions:
    modules: tuple[str, ...] | None = None
    caps: tuple[float, ...] | None = None  # watts; default: the allowed range in 50 W steps
    apply: bool = False
    force: bool = False
    fraction: float = 0.5
    dtype: str = "bf16"
    size: int | None = None


@dataclass(frozen=True)
class Point:
    module: str
    cap_w: float
    tflops: float
    power_w: float
    tflops_per_w: float
    temp_c: float | None = None


@dataclass
class Curve:
    module: str
    points: list[Point]
    knee_w: float | None
    original_cap_w: float
    notes: list[str] = field(default_factory=list)


def parse_caps(text: str) -> tuple[float, ...]:
    """'300:700:50' (from:to:step) or '300,450,700': finite watts from 1 to 10,000, at most 1,000 caps."""
    from gpuvet.quantities import parse_float_range

    return parse_float_range(text, "--caps", 1.0, 10_000.0, most=1000, unit="W")


def knee(points: list[Point], fraction: float) -> float | None:
    """The cap beyond which an extra watt buys less than ``fraction`` of the TFLOPS per watt the
    module averages there: where f'(P) / (f(P)/P) crosses ``fraction``. The slope at each point
    comes from a quadratic fitted through it and its two neighbours on each side (a local fit, so
    noise in one point does not move the knee); the crossing is interpolated between points.
    Points at the firmware floor (under a quarter of the best throughput) are left out."""
    import numpy as np

    best = max((p.tflops for p in points), default=0.0)
    pts = sorted((p for p in points if p.tflops >= 0.25 * best), key=lambda p: p.power_w)
    if len(pts) < 3:
        return None
    power = np.array([p.power_w for p in pts])
    tflops = np.array([p.tflops for p in pts])
    ratios = []
    for i in range(len(pts)):
        lo, hi = max(0, i - 2), min(len(pts), i + 3)
        if hi - lo < 3:
            continue
        coeffs = np.polyfit(power[lo:hi], tflops[lo:hi], 2)
        slope = np.polyval(np.polyder(coeffs), power[i])
        value = np.polyval(coeffs, power[i])
        ratios.append((pts[i].cap_w, float(slope / (value / power[i]))))
    for (c0, r0), (c1, r1) in zip(ratios, ratios[1:], strict=False):
        if r0 >= fraction > r1:
            return c0 + (c1 - c0) * (r0 - fraction) / (r0 - r1)
    if ratios and ratios[0][1] < fraction:
        return ratios[0][0]
    return None


def run(ctx: BenchContext, control: PowerControl, opts: EfficiencyOptions) -> list[Curve]:
    modules = [m.id for m in ctx.select(opts.modules)]
    if not 0 < opts.fraction < 1:
        raise GpuvetError("the knee fraction must be between 0 and 1", where="--fraction", fix="e.g. 0.5")
    sweep = control.simulated or opts.apply
    caps: dict[str, tuple[float, ...]] = {}
    for m in modules:
        lo, hi = control.range_w(m)
        wanted = opts.caps or tuple(float(c) for c in range(int(lo + 49) // 50 * 50, int(hi) + 1, 50)) or (hi,)
        bad = [c for c in wanted if c < lo - 1e-6 or c > hi + 1e-6]
        if bad:
            raise GpuvetError(f"caps {', '.join(f'{c:g}' for c in bad)} W are outside {m}'s allowed {lo:g}-{hi:g} W",
                              where="--caps", fix=f"stay within {lo:g}:{hi:g}.")
        if sweep and not control.simulated and control.busy(m) and not opts.force:
            raise GpuvetError(f"{m} is in use by process(es) {', '.join(map(str, control.busy(m)))}", where=m,
                              fix="wait until it is idle, or add --force if you accept disturbing them.")
        caps[m] = wanted
    if not sweep:
        return [_point_only(ctx, control, m, opts) for m in modules]
    curves = []
    with guarded(control, modules) as set_limit:
        for m in modules:
            original = control.limit_w(m)
            points = []
            for i, cap in enumerate(caps[m]):
                ctx.progress(i, len(caps[m]), f"{m} at {cap:g} W")
                set_limit(m, cap)
                points.append(_measure(ctx, control, m, cap, opts))
            curves.append(Curve(m, points, knee(points, opts.fraction), original))
    return curves


def _measure(ctx: BenchContext, control: PowerControl, module: str, cap: float, opts: EfficiencyOptions) -> Point:
    n = opts.size or 8192
    try:
        workload = ctx.engine.gemm(module, opts.dtype, n)
    except Unsupported as exc:
        raise GpuvetError(str(exc), where=module, fix="pick another --dtype.") from None
    e0, t0 = control.energy_j(module), control.now_s()
    with ctx.engine.monitoring([module]) as telemetry:
        timing = measure(workload, ctx.plan)
    e1, t1 = control.energy_j(module), control.now_s()
    workload.close()
    tflops = 2 * n**3 / timing.stats.median / 1e12
    if e0 is not None and e1 is not None and t1 > t0 and e1 > e0:  # a counter that did not move is no reading
        power = (e1 - e0) / (t1 - t0)
    else:
        t = telemetry.get(module)
        power = (t.power_w_median if t and t.power_w_median else cap)
    temp = telemetry[module].temp_c_max if module in telemetry else None
    return Point(module, cap, tflops, power, tflops / power, temp)


def _point_only(ctx: BenchContext, control: PowerControl, module: str, opts: EfficiencyOptions) -> Curve:
    cap = control.limit_w(module)
    return Curve(module, [_measure(ctx, control, module, cap, opts)], None, cap,
                 ["measured at the current power limit only: a sweep changes the module's power limit and needs "
                  "--apply (and root); gpuvet journals and restores the original"])
