"""The collective model against published single-node measurements (8-GPU NVSwitch and 8-GPU
PCIe nodes): each cited figure, the model's prediction on the node spec it names, the error, and
per table role the median and the largest error. Data and citations:
benchmarks/data/published_collectives.yaml; `role` says which tables the constants were fitted to
(calibration) and which they never saw (check).
Target (issue 22): |error| <= 10 % at every size of every check table, small sizes included.
Targets (issue 49): |error| <= 10 % at bandwidth-bound sizes (above 512 MiB) and <= 25 % at mid sizes
(1 - 512 MiB); none below 1 MiB. The `issue 49` column gives each figure's verdict (pass, miss, or
no target); the last lines count them for the check figures and name every miss.

    python benchmarks/collective_vs_published.py [--data FILE ...] [--fit] [--terms NODE:RANKS[:ALGORITHM]]

With no --data it scores both figure files: issue 22's 8-GPU tables and issue 49's families
(tests/data/published_collectives_issue49.json: xGMI with the MI325X check, NVL72, the GB200 tray and
two-tray checks, the H200 forced-NVLS check).

--terms prints, for one case (e.g. nvl72:4:ring, the GB200 tray check), the model's all_reduce time
per size split into its terms for every protocol it could run (fixed, steps x step latency, traffic
over bandwidth), and the protocol it picks: where a size's error comes from.

--nccl-tuner ARCH:RANKS prints, beside every ring-forced figure of that many ranks on that
architecture (blackwell: the GB200 tray check; hopper: the 8-GPU ring rows), what NCCL 2.25.1's own
tuner estimates (its cost model, read from its source, not gpuvet's; each collective with its own
step count), the protocol it picks by that estimate, and gpuvet's figure: whether a miss is gpuvet's
or already in the library's own model.

A run whose figures file entry says one process drove several GPUs (`launch`: nccl-tests -g N) is priced
so: a call takes at least ranks x the one-process launch time (ONE_PROCESS_LAUNCH_S in
src/gpuvet/node/collective_model.py), the rest one process per GPU. Beside each miss the summary prints
how its run was launched and the other published runs of the same case that disagree with it by more
than the target; such a miss still counts as one. The passes whose time the launch floor set on the
figures it was fitted to (`launch_fit`) are said apart: no check of it.

--fit-ll fits NVLink 5's LL share (nvl_domain share:ll) to the figures moved from check (Azure's GB200 tray where
NCCL's tuner runs LL, P49g) alone, then with LL128's share, and prints every check figure it moves and the summary
counts: kept only if the checks meet the targets (docs/plan.md: it was not).

--nccl-channels prices every NVLink ring with the channels and threads NCCL gives a collective by its size (P49h:
src/enqueue.cc topoGetAlgoInfo), --nccl-pick in the protocol NCCL's tuner picks: each prints what it moves.

--fit refits the model's constants to the figures marked `calibration` and prints them (to be
copied into COLLECTIVE_TUNING in src/gpuvet/node/performance.py), and the one-process launch time to
the figures marked `launch_fit` (to be copied into ONE_PROCESS_LAUNCH_S).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

from gpuvet.errors import GpuvetError
from gpuvet.node.collectives import Algorithm, Protocol, Tuning, bus_factor, collective_cost

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: the harness is tests/harness
from tests.harness.plan_reference import (  # noqa: E402
    FIGURES,
    FITTED,
    TARGETS,
    ReferenceComparison,
    TuningFit,
    compare,
    fit,
    fit_launch,
    median_abs_error,
    size_band,
    verdict,
)

DATA = Path(__file__).parent / "data" / "published_collectives.yaml"
DATA_49 = Path(__file__).resolve().parents[1] / "tests" / "data" / "published_collectives_issue49.json"
MiB = 2**20


def _fmt(n: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:g} {unit}"
    return f"{n} B"


def _short(source: str) -> str:
    """owner/repo and the issue number or file name of a GitHub address (the data file has it whole); a README's
    folders too, where one repository has several (yangwhale/gpu-tpu-pedia's B200 board and GB200/GB300 trays)."""
    parts = source.removeprefix("https://github.com/").split("/")
    if len(parts) < 3:
        return source
    if parts[2] == "issues":
        return f"{parts[0]}/{parts[1]}#{parts[3]}"
    name = "/".join(parts[4:]) if parts[-1].lower() == "readme.md" and len(parts) > 5 else parts[-1]
    return f"{parts[0]}/{parts[1]} {name}"


def _size(sizes: tuple[int, ...]) -> str:
    return _fmt(sizes[0]) if len(sizes) == 1 else f"{_fmt(min(sizes))}..{_fmt(max(sizes))} avg"


def _refit(data: str) -> None:
    """Each medium from its family's file (FIGURES: issue 49's families are in tests/data), or all from
    ``data`` where one was given."""
    root = Path(__file__).resolve().parents[1]
    fits = {
        medium: fit(root / FIGURES[family] if data == str(DATA) else data, family, medium, free)
        for medium, (family, free) in FITTED.items()
        if data != str(DATA) or family in FIGURES
    }
    for name, f in fits.items():
        print(
            f"{name}: fitted to {f.figures} calibration figures, rms ln-error {f.rms_log_error:.3f}, "
            f"largest {f.max_log_error:.3f}"
        )
        print(f"  free (the rest held): {', '.join(f.free)}")
        print(f"  base_s={f.tuning.base_s:.3g}")
        for (algo, proto), a in f.tuning.alpha_s.items():
            print(f"  alpha {algo.value}/{proto.value} = {a * 1e6:.3g} us")
        for algo, e in f.tuning.efficiency.items():
            print(f"  efficiency {algo.value} = {e:.3f}")
        for proto, share in f.tuning.share.items():
            print(f"  share {proto.value} = {share:.3f}")
        if f.tuning.switch is not None:
            print(
                f"  chunk in_switch = {f.tuning.switch.chunk_s * 1e6:.3g} us ({f.tuning.switch.channels} channels, "
                f"heads up to {f.tuning.switch.max_heads})"
            )
    if data == str(DATA):
        launch = fit_launch(DATA_49)
        print(
            f"one-process launch: fitted to {launch.figures} launch_fit figures, rms ln-error "
            f"{launch.rms_log_error:.3f}\n  ONE_PROCESS_LAUNCH_S = {launch.per_gpu_s * 1e6:.3g} us per GPU"
        )


def _terms(case: str) -> None:
    """The model's all_reduce terms per size and protocol for ``case`` (NODE:RANKS[:ALGORITHM])."""
    from gpuvet.backends.select import open_backend
    from gpuvet.plan.collective import CollectiveModel

    node, ranks, *forced = case.split(":") + [""]
    n = _ranks(ranks, "--terms", f"not a NODE:RANKS[:ALGORITHM] case: {case!r}", "e.g. nvl72:4:ring")
    forced = [f for f in forced if f]
    backend = open_backend(sim=node)
    model = CollectiveModel(backend.node(), backend.spec.faults if backend.spec else ())
    members = model.members(n)
    session = model.perf.collectives(members)
    medium, bandwidth = session.bandwidths("all_reduce")
    tuning = model.perf.collective_tuning[medium]
    algo = Algorithm(forced[0]) if forced else None
    print(
        f"{node}, {ranks} ranks, all_reduce, constants {medium!r}; per protocol: fixed + steps x step "
        f"latency + traffic / bandwidth [+ NVLink SHARP's chunk rounds and pipeline fill] = total us "
        f"(busbw GB/s); * marks the model's pick"
    )
    for size in (2**k for k in range(18, 27)):
        pick = model.predict("all_reduce", size, members, forced[0] if forced else None)
        cells = []
        for (a, proto), alpha in tuning.alpha_s.items():
            if a not in bandwidth or (algo is not None and a is not algo):
                continue
            eff = tuning.bandwidth_share(a, proto, "all_reduce")
            chunks = tuning.chunk_s(a, size, len(members), bandwidth[a] * eff)  # NVLink SHARP's rounds and fill
            cost = partial(collective_cost, "all_reduce", len(members), link_gbps=bandwidth[a], alpha_s=alpha, algorithm=a)
            total = cost(size, base_s=tuning.base_s + chunks, efficiency=eff)
            bare, empty = cost(size, efficiency=eff), cost(0, efficiency=eff)
            if total is None or bare is None or empty is None:
                continue
            mark = "*" if (a.value, proto.value) == (pick.algorithm, pick.protocol) else " "
            cells.append(
                f"{mark}{a.value}/{proto.value} {tuning.base_s * 1e6:.1f}+{empty.seconds * 1e6:.1f}+"
                f"{(bare.seconds - empty.seconds) * 1e6:.1f}"
                f"{f'+{chunks * 1e6:.1f}' if chunks else ''}={total.seconds * 1e6:.1f} "
                f"({size * pick.busbw / pick.algbw / total.seconds / 1e9:.0f})"
            )
        print(f"{_fmt(size):>8}  " + "  ".join(cells))


@dataclass(frozen=True)
class NcclRingTuner:
    """NCCL's own estimate of a single-node ring all_reduce, as its tuner computes it to pick a
    protocol (NCCL src/graph/tuning.cc at 80f6bda4378b99d99e82b4d76a633791cc45fef0, v2.25.1-1,
    the release Azure's GB200 tray table ran): latency = base + 2(n-1) NVLink steps (lines 121,
    131), bus bandwidth = the ring's, LL's halved and capped at ``llMaxBws`` (lines 151-156, 255),
    LL128's at 0.92 and ``perChMaxRingLL128Bws`` per channel (lines 158-163, 256), algorithm
    bandwidth = bus × n / 2(n-1) (line 291), time = latency + bytes / bandwidth (line 544).
    A comparison, not gpuvet's model: what the library believes a size costs."""

    ring_gbps: float  # the ring graph's channels × per-channel GB/s
    ll_cap_gbps: float  # llMaxBws, the architecture's single-node row
    ll128_cap_gbps: float  # the graph's channels × perChMaxRingLL128Bws

    def microseconds(self, nranks: int, size: int, op: str = "all_reduce") -> dict[str, float]:
        """Per protocol. reduce_scatter and all_gather take n - 1 steps (tuning.cc's ``nsteps``) and
        ``size`` is nccl-tests' total, the bytes NCCL prices (enqueue.cc's getAlgoInfo:
        ncclFuncMaxSendRecvCount, at f44ac759, v2.26.2-1, as at 80f6bda4)."""
        steps = 2 * (nranks - 1) if op == "all_reduce" else nranks - 1
        protocols = {
            "ll": (min(self.ll_cap_gbps, 0.5 * self.ring_gbps), 6.6 + steps * 0.6),
            "ll128": (min(0.92 * self.ring_gbps, self.ll128_cap_gbps), 14.0 + steps * 1.9),
            "simple": (self.ring_gbps, 8.4 + steps * 3.4),
        }
        return {p: lat + size / (1000 * bus * nranks / steps) for p, (bus, lat) in protocols.items()}


# The ring graph: 18 NVLinks at topo.h's per-link figure (SM100_NVLINK_BW 40.0, SM90_NVLINK_BW 20.6;
# src/graph/topo.h lines 17 and 19 at the same commit). Blackwell: the search's first speed (90 GB/s,
# src/graph/search.cc line 940) fills 8 channels = 720, the GPU's whole NVLink figure, duplicated to
# 16 x 45 (lines 915-926). Hopper: 6 channels x 60 (7 would exceed 370.8), duplicated to 12 x 30 =
# 360. The channel counts are derived from the search rule, not read from a run's log.
NCCL_RING_TUNERS = {
    "blackwell": NcclRingTuner(ring_gbps=16 * 45.0, ll_cap_gbps=2 * 141.0, ll128_cap_gbps=16 * 2 * 36.7),
    "hopper": NcclRingTuner(ring_gbps=12 * 30.0, ll_cap_gbps=141.0, ll128_cap_gbps=12 * 36.7),
}
_TUNER_FAMILY = {"blackwell": "nvl72", "hopper": "nvswitch"}


def _ranks(text: str, flag: str, what: str, example: str) -> int:
    """A rank count of two or more in ASCII digits: str.isdigit() takes '²' and '٣', which int() then refuses."""
    if re.fullmatch(r"[0-9]+", text) is None or int(text) < 2:
        raise GpuvetError(
            f"{what}: the rank count {text!r} is not a whole number of 2 or more", where=flag, fix=f"give {example}"
        )
    return int(text)


def _nccl_tuner(case: str) -> None:
    """NCCL 2.25.1's own estimate beside every ring-forced figure of ``case`` (ARCH:RANKS)."""
    arch, _, ranks = case.partition(":")
    fix = f"one of {', '.join(NCCL_RING_TUNERS)} and a rank count, e.g. blackwell:4"
    if arch not in NCCL_RING_TUNERS:
        raise GpuvetError(f"not an ARCH:RANKS case: {case!r}", where="--nccl-tuner", fix=f"give {fix}")
    tuner, n = NCCL_RING_TUNERS[arch], _ranks(ranks, "--nccl-tuner", f"not an ARCH:RANKS case: {case!r}", fix)
    case_of = (_TUNER_FAMILY[arch], n, "ring", 1)
    rows = [r for r in _all() if (r.point.family, r.point.ranks, r.point.algorithm, len(r.point.sizes)) == case_of]
    if not rows:
        print(f"no ring-forced published figure of {n} {arch} ranks in the data files")
        return
    print(
        f"NCCL 2.25.1's own ring estimate (its tuner's cost model, modelled; the same constants at v2.26.2-1) on "
        f"{n} {arch} ranks, against the published figure and gpuvet's; busbw GB/s, error against the published"
    )
    print(
        f"{'op':14} {'size':>8} {'published':>9} {'us':>8}  {'NCCL picks':10} {'us':>8} {'busbw':>7} {'error':>7}  "
        f"{'gpuvet':>7} {'error':>7}  role, source"
    )
    for r in rows:
        size, factor = r.point.sizes[0], bus_factor(r.point.op, n)
        estimate = tuner.microseconds(n, size, r.point.op)
        pick = min(estimate, key=lambda p: estimate[p])
        busbw = size * factor / estimate[pick] / 1e3
        published_us = size * factor / r.point.published_busbw / 1e3
        print(
            f"{r.point.op:14} {_fmt(size):>8} {r.point.published_busbw:9.2f} {published_us:8.1f}  {pick:10} "
            f"{estimate[pick]:8.1f} {busbw:7.2f} {busbw / r.point.published_busbw - 1:+7.1%}  "
            f"{r.predicted_busbw:7.2f} {r.error:+7.1%}  {r.point.role}, {_short(r.point.source)}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", action="append", help="a figures file (repeatable; default: both of the repository's)")
    parser.add_argument("--fit", action="store_true", help="refit the constants to the calibration figures")
    parser.add_argument("--fit-ll", action="store_true", help="fit NVLink 5's LL share to the figures moved from check")
    parser.add_argument("--nccl-channels", action="store_true", help="price NVLink rings with NCCL's channel rule")
    parser.add_argument("--nccl-pick", action="store_true", help="price NVLink rings in NCCL's protocol pick")
    parser.add_argument(
        "--terms",
        metavar="NODE:RANKS[:ALGORITHM]",
        help="print the model's all_reduce terms per size and protocol for one case, e.g. nvl72:4:ring",
    )
    parser.add_argument(
        "--nccl-tuner",
        metavar="ARCH:RANKS",
        help="print NCCL 2.25.1's own ring estimate beside the ring-forced figures, e.g. blackwell:4",
    )
    args = parser.parse_args()
    if args.terms:
        _terms(args.terms)
        return
    if args.nccl_tuner:
        _nccl_tuner(args.nccl_tuner)
        return
    if args.fit_ll:
        _fit_ll()
        return
    if args.nccl_channels or args.nccl_pick:
        _rule("channels" if args.nccl_channels else "pick")
        return
    if args.fit:
        _refit(args.data[0] if args.data else str(DATA))
        return
    rows = [r for data in (args.data or [str(DATA), str(DATA_49)]) for r in compare(data)]
    print("Collective model (modelled, not measured) against published measurements; busbw in GB/s")
    print(
        f"{'family':8} {'role':11} {'op':10} {'forced':6} {'size':20} {'published':>9} {'model':>7} {'error':>7}  "
        f"{'issue 49':9} {'model picks':22} source"
    )
    for r in rows:
        p = r.point
        print(
            f"{p.family:8} {p.role:11} {p.op:10} {p.algorithm or '-':6} {_size(p.sizes):20} {p.published_busbw:9.2f} "
            f"{r.predicted_busbw:7.2f} {r.error:+7.1%}  {verdict(r):9} {r.predicted_algorithm:22} {_short(p.source)}"
        )
    print()
    for family in sorted({r.point.family for r in rows}):
        for role in ("calibration", "check"):
            for lo, hi, label in ((0, 2**20 - 1, "< 1 MiB"), (MiB, None, ">= 1 MiB")):
                med = median_abs_error(rows, min_bytes=lo, max_bytes=hi, role=role, family=family)
                if med is not None:
                    print(f"{family:8} {role:11} sizes {label:8}: median |error| {med:5.1%}")
    for role in [x for x in ("calibration", "check") if any(r.point.role == x and r.point.fitted for r in rows)]:
        mine = [r for r in rows if r.point.role == role and r.point.fitted]  # a --data file may hold one role only
        worst = max(mine, key=lambda r: abs(r.error))
        print(
            f"largest |error| of the {role} figures{' the fit used' if role == 'calibration' else ''}: "
            f"{abs(worst.error):.1%} ({worst.point.family}, {worst.point.op}, {_size(worst.point.sizes)})"
        )
    for r in rows:
        if not r.point.fitted:
            print(f"not fitted: {r.point.family} {r.point.op} {_size(r.point.sizes)}, error {r.error:+.1%} ({r.point.note})")
    worst = max((abs(r.error) for r in rows if r.point.role == "check"), default=0.0)
    print(
        f"all check figures: largest |error| {worst:.1%} (target <= 10% at every size): "
        f"{'met' if worst <= 0.10 else 'MISSED'}"
    )
    _issue49_summary(rows)


def _entries() -> list[dict[str, str]]:
    """Every entry of the issue 49 file, its families' lists together."""
    return [e for family, entries in json.loads(DATA_49.read_text()).items() if family[0] != "_" for e in entries]


def _all() -> list[ReferenceComparison]:
    """Every figure of both files beside the model's prediction."""
    return [r for data in (DATA, DATA_49) for r in compare(data)]


def _launches() -> dict[str, str]:
    """How each run of the issue 49 file drove its GPUs (its entry's ``launch``), by source: one process per GPU,
    or one driving several (``-g N``), which costs CPU launch latency (NVIDIA/nccl-tests#123, #333)."""
    return {e["source"]: e["launch"] for e in _entries() if "launch" in e}


def _moved() -> dict[str, str]:
    """The calibration entries of the issue 49 file that were check rows at first contact (their ``moved_from_check``
    says for which constant, P49g), by source: the summary counts their figures apart, never as checks."""
    return {e["source"]: e["moved_from_check"] for e in _entries() if e["role"] == "calibration" and "moved_from_check" in e}


def _run_algorithm(r: ReferenceComparison) -> str:
    """The algorithm a run used: the one it forced, else the model's pick (NCCL's choice is not printed)."""
    return r.point.algorithm or r.predicted_algorithm.split("/")[0]


def _same_case(r: ReferenceComparison, rows: list[ReferenceComparison]) -> list[tuple[ReferenceComparison, bool]]:
    """The other published runs of ``r``'s family, op, rank count, size and algorithm, each with whether its
    figure differs from ``r``'s by more than issue 49's target at that size."""
    if len(r.point.sizes) != 1 or size_band(r.smallest) == "small":
        return []
    target = TARGETS[size_band(r.smallest)]
    return [
        (
            q,
            max(q.point.published_busbw, r.point.published_busbw) / min(q.point.published_busbw, r.point.published_busbw) - 1
            > target,
        )
        for q in rows
        if q is not r
        and q.point.family == r.point.family
        and q.point.op == r.point.op
        and q.point.ranks == r.point.ranks
        and q.point.sizes == r.point.sizes
        and _run_algorithm(q) == _run_algorithm(r)
    ]


def disagreeing(r: ReferenceComparison, rows: list[ReferenceComparison]) -> list[ReferenceComparison]:
    """The other published runs of the same case whose figure differs from ``r``'s by more than the target:
    runs of the same hardware that disagree (the miss may be the run's)."""
    return [q for q, apart in _same_case(r, rows) if apart]


def agreeing(r: ReferenceComparison, rows: list[ReferenceComparison]) -> list[ReferenceComparison]:
    """The other published runs of the same case within the target of ``r``'s figure: a second run that
    reproduces a miss makes it the model's, not one run's (P49f)."""
    return [q for q, apart in _same_case(r, rows) if not apart]


def _issue49_summary(rows: list[ReferenceComparison]) -> None:
    """Issue 49's targets on the check figures: how many pass, and each miss by name, with how its run was
    launched and the published runs of the same case that disagree with it (a miss still counts)."""
    check = [r for r in rows if r.point.role == "check"]
    verdicts = [verdict(r) for r in check]
    misses = [r for r, v in zip(check, verdicts, strict=True) if v == "miss"]
    print(
        f"issue 49 targets on the check figures (10% above 512 MiB, 25% at 1-512 MiB): "
        f"{verdicts.count('pass')} pass, {len(misses)} miss, {verdicts.count('no target')} below 1 MiB (no target): "
        f"{'met' if not misses else 'MISSED'}"
    )
    launches = _launches()
    for r in misses:
        launch = f"; {launches[r.point.source]}" if r.point.source in launches else ""
        print(
            f"  miss: {r.point.family} {r.point.op} {_size(r.point.sizes)} {r.error:+.1%} ({_short(r.point.source)}{launch})"
        )
        others = disagreeing(r, rows)
        if others:
            near = sum(
                1 for q in others if abs(r.predicted_busbw / q.point.published_busbw - 1) <= TARGETS[size_band(r.smallest)]
            )
            print(
                f"    published runs disagree: {r.point.published_busbw:.2f} here vs "
                + ", ".join(f"{q.point.published_busbw:.2f} ({_short(q.point.source)}, {q.point.role})" for q in others)
                + f"; the model ({r.predicted_busbw:.2f}) is within target of {near} of them (still a miss)"
            )
        same = agreeing(r, rows)
        if same:
            print(
                f"    published runs agree: {r.point.published_busbw:.2f} here vs "
                + ", ".join(f"{q.point.published_busbw:.2f} ({_short(q.point.source)}, {q.point.role})" for q in same)
                + ": reproduced, the model's miss"
            )
    _moved_summary(rows)
    seen = [r for r, v in zip(check, verdicts, strict=True) if v == "pass" and r.point.read_to_choose]
    if seen:  # said apart: these passes are no independent check of the rule they were read to choose
        print(
            f"  of the passes, {len(seen)} are checks read after their first contact to choose a rule: "
            + "; ".join(f"{r.point.family} {r.point.op} {_size(r.point.sizes)}" for r in seen)
        )
    fitted = [
        r
        for r, v in zip(check, verdicts, strict=True)
        if v == "pass" and r.point.launch_fit and r.launch_bound and size_band(r.smallest) != "small"
    ]
    if fitted:  # their time is the launch floor fitted to them: no check of that floor
        print(
            f"  of the passes, {len(fitted)} are set by the one-process launch floor fitted to them: "
            + "; ".join(f"{r.point.family} {r.point.op} {_size(r.point.sizes)} ({_short(r.point.source)})" for r in fitted)
        )


def _moved_summary(rows: list[ReferenceComparison]) -> None:
    """The figures moved from check to calibration after their first contact: counted apart, with the verdict the
    issue's targets would give them, so that no count above takes them for checks."""
    moved, all_rows = _moved(), rows
    rows = [r for r in rows if r.point.role == "calibration" and r.point.source in moved]
    for source in sorted({r.point.source for r in rows}):
        mine = [r for r in rows if r.point.source == source]
        verdicts = [verdict(r) for r in mine]
        print(
            f"  moved from check to calibration after first contact (used to fit, no check): {len(mine)} figures of "
            f"{_short(source)}, {_fmt(min(r.smallest for r in mine))} - {_fmt(max(max(r.point.sizes) for r in mine))} "
            f"({verdicts.count('pass')} pass, {verdicts.count('miss')} miss, {verdicts.count('no target')} below 1 MiB "
            f"with today's constants)"
        )
    if rows:  # P49g's fit on them was not kept: no constant of the model was set by them, so the issue's count keeps them
        check = [r for r in all_rows if r.point.role == "check"] + rows
        v = [verdict(r) for r in check]
        print(
            f"  issue 49 targets with the moved figures counted as checks (the fit on them was not kept): "
            f"{v.count('pass')} pass, {v.count('miss')} miss, {v.count('no target')} below 1 MiB"
        )


# P49g: the one constant fitted to the figures moved from check (NVLink 5's LL share), the rest held.
LL_FIT = ("nvl_domain", ("share:ll",))


def fit_moved(free: tuple[str, ...] = LL_FIT[1]) -> TuningFit:
    """``free`` constants of ``nvl_domain`` fitted (the harness's fit) to the figures moved from check alone: they
    are written to a file of their own, so that no other calibration figure enters the fit."""
    data = json.loads(DATA_49.read_text())
    moved = {
        family: [e for e in entries if e["role"] == "calibration" and "moved_from_check" in e]
        for family, entries in data.items()
        if not family.startswith("_")
    }
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "moved_from_check.json"
        path.write_text(json.dumps({family: entries for family, entries in moved.items() if entries}))
        return fit(path, "nvl72", LL_FIT[0], free)


@contextmanager
def tuned(medium: str, tuning: Tuning) -> Iterator[None]:
    """The model's constants of ``medium`` replaced while the block runs: every model built inside takes them."""
    from gpuvet.node import performance

    old = performance.COLLECTIVE_TUNING[medium]
    performance.COLLECTIVE_TUNING[medium] = tuning
    try:
        yield
    finally:
        performance.COLLECTIVE_TUNING[medium] = old


def check_counts(rows: list[ReferenceComparison]) -> tuple[int, int, int]:
    """Issue 49's verdicts on the check figures: (pass, miss, no target)."""
    verdicts = [verdict(r) for r in rows if r.point.role == "check"]
    return verdicts.count("pass"), verdicts.count("miss"), verdicts.count("no target")


def _fit_ll() -> None:
    """NVLink 5's LL share fitted to the moved figures (then LL128's with it), and every check figure whose error
    moves by more than 0.05 %, before and after: whether the constant holds on the runs it never saw."""
    before = _all()
    for free in (LL_FIT[1], (*LL_FIT[1], "share:ll128")):
        f = fit_moved(free)
        with tuned(LL_FIT[0], f.tuning):
            after = _all()
        shares = ", ".join(f"{n} {f.tuning.share[Protocol(n.removeprefix('share:'))]:.3f}" for n in free)
        title = f"{LL_FIT[0]} {shares}: fitted to {f.figures} moved figures, rms ln-error {f.rms_log_error:.3f}"
        _moves(title, before, after, ("check",))


def _moves(title: str, before: list[ReferenceComparison], after: list[ReferenceComparison], roles: tuple[str, ...]) -> None:
    """``title``, every figure of ``roles`` whose error moves by more than 0.05 %, before and after, the check counts."""
    print(title)
    print(f"  {'family':14} {'role':11} {'size':>8} {'published':>9} {'before':>16} {'after':>16}  verdict, source")
    for b, a in zip(before, after, strict=True):
        if b.point.role in roles and abs(a.error - b.error) > 0.0005:
            print(
                f"  {b.point.family:14} {b.point.role:11} {_size(b.point.sizes):>8} {b.point.published_busbw:9.2f} "
                f"{b.error:+7.1%} {b.predicted_algorithm.split('/')[-1]:>8} {a.error:+7.1%} "
                f"{a.predicted_algorithm.split('/')[-1]:>8}  {verdict(b)} -> {verdict(a)}, {_short(b.point.source)}"
            )
    print(f"  check figures (pass, miss, no target): {check_counts(before)} -> {check_counts(after)}")


# NCCL's channels and threads for a collective by its size (P49h; docs/plan.md): src/enqueue.cc topoGetAlgoInfo at
# v2.25.1-1 (80f6bda4, lines 1672-1712), the same at v2.28.9-1; per protocol (maxThreads, bytes per thread; the ring's
# LL x ranks): tuning.cc 197-209, 488-493. Channels: the ring graph's doubled twice (search.cc 915-940, connect.cc 452).
NCCL_THREADS = {"ll": (512, 8), "ll128": (640, 8), "simple": (512, 64)}
NCCL_RING_FAMILIES = {"fabric": ("hopper", 24), "nvl_domain": ("blackwell", 32), "nvlink5_board": ("blackwell", 32)}


def nccl_ring_channels(nbytes: int, nranks: int, protocol: str, channels: int) -> tuple[int, int]:
    """(channels, threads) NCCL runs a ring collective of ``nbytes`` (the whole buffer) with: while the buffer is
    below channels x threads x threshold it drops a channel, down to one, then halves the threads."""
    nt, threshold = NCCL_THREADS[protocol][0], NCCL_THREADS[protocol][1] * (nranks if protocol == "ll" else 1)
    nc = max(1, min(channels, nbytes // (nt * threshold)))  # where `while (nBytes < nc*nt*threshold) nc--` ends
    while nbytes < nc * nt * threshold and nt % 128 == 0:
        nt //= 2
    return nc, nt


@contextmanager
def nccl_rule(rule: str) -> Iterator[None]:
    """Every NVLink ring priced with one of NCCL's rules (P49h): ``channels``, its bandwidth x nc / channels x nt /
    maxThreads at the size; ``pick``, the protocol NCCL's own estimate is fastest with (the algorithm the model's)."""
    from gpuvet.node import performance

    plain, ring = performance.choose, Algorithm.RING
    arch = {id(performance.COLLECTIVE_TUNING[m].alpha_s): v for m, v in NCCL_RING_FAMILIES.items()}  # kept by _chunked

    def ruled(op: str, n: int, size: int, link: dict[Algorithm, float], tuning: Tuning, algorithm: str | None = None):
        best = plain(op, n, size, link, tuning, algorithm)
        if id(tuning.alpha_s) not in arch or best is None or ring not in link:
            return best
        name, count = arch[id(tuning.alpha_s)]
        if rule == "pick":
            if best.algorithm is not ring or str(op) not in ("all_reduce", "all_gather", "reduce_scatter"):
                return best
            us = NCCL_RING_TUNERS[name].microseconds(n, size, str(op))
            key = (ring, Protocol(min(us, key=lambda p: us[p])))
            return plain(op, n, size, link, replace(tuning, alpha_s={key: tuning.alpha_s[key]}), algorithm)
        picks = []
        for (algo, proto), alpha in tuning.alpha_s.items():
            nc, nt = nccl_ring_channels(size, n, proto.value, count)
            share = nc / count * nt / NCCL_THREADS[proto.value][0] if algo is ring else 1.0
            one = replace(tuning, alpha_s={(algo, proto): alpha})
            picks.append(plain(op, n, size, {**link, ring: link[ring] * share}, one, algorithm))
        return min((p for p in picks if p is not None), key=lambda p: p.seconds, default=None)

    performance.choose = ruled
    try:
        yield
    finally:
        performance.choose = plain


def _rule(rule: str) -> None:
    """The model with and without one of NCCL's rules, on every figure of both files: what the rule moves."""
    before = _all()
    with nccl_rule(rule):
        _moves(f"NCCL's {rule} rule on the NVLink rings (P49h)", before, _all(), ("calibration", "check"))


if __name__ == "__main__":
    try:
        main()
    except GpuvetError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
