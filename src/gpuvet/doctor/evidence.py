"""Evidence doctor's checks draw on, gathered once and only when a check asks: inventory and
topology, the declared node, a short benchmark of pairs and compute, a telemetry window (on a
simulated node, days of simulated time in a second), environment variables, the logbook, and
captured files."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from gpuvet.backends.base import Backend
from gpuvet.backends.readings import Inventory
from gpuvet.captures.records import MONITOR_KINDS
from gpuvet.checks.events import Event
from gpuvet.checks.model import Check
from gpuvet.doctor.captures import Captures
from gpuvet.doctor.model import Cited
from gpuvet.doctor.window import HeldForTrend, Window
from gpuvet.errors import GpuvetError
from gpuvet.node.bus import bus_key
from gpuvet.node.model import Node
from gpuvet.node.vendor_tools import CAPTURED

if TYPE_CHECKING:  # the benchmarks, the telemetry window and the design's expectations: imported by the evidence
    # that gathers them (a live or simulated node), never by a captured file's (issue 43: a small file's startup)
    from gpuvet.backends.engine import BenchEngine
    from gpuvet.bench.context import BenchContext
    from gpuvet.bench.records import BenchResult
    from gpuvet.checks.expected import Expectations
    from gpuvet.checks.window import TrendModel
    from gpuvet.node.diff import Difference

PAIR_TESTS = ("p2p_one_way", "p2p_two_way")  # the copy benchmark's pair checks doctor judges


class TrendFactory(Protocol):
    """Slowdown °C per module and the sampling interval -> a fresh trend model."""

    def __call__(self, slowdown_c: dict[str, float], interval_s: float = ...) -> TrendModel: ...


@dataclass
class Evidence:
    backend: Backend | None
    declared: Node | None = None
    captures: Captures = field(default_factory=Captures)
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    window_s: float | None = None  # telemetry window; None: the default for the backend
    watch: bool = True  # False for captured evidence: there is no live node to watch
    trend: TrendFactory | None = None  # the thermal trend model (watch's forecaster), given by the face
    symptom: str | None = None  # the symptom the user named (diagnose sets it); None: triage, no symptom given

    @cached_property
    def window(self) -> Window | None:
        """Telemetry over a window; run first so the node below is the node at its end."""
        if self.backend is None or not self.watch or self.backend.why_no_modules:
            return None  # nothing to watch: no live node, or a machine without modules (no 10 s wait for nothing)
        from gpuvet.checks.admission import admit
        from gpuvet.checks.detectors import default_detectors
        from gpuvet.checks.window import Observer, TelemetryWindow, evidence_window

        backend = self.backend
        try:
            source = backend.telemetry()
            config = evidence_window(source, self.window_s)
            held = self._held(source.slowdown_c(), config.interval_s)
            observers: list[Observer] = [*default_detectors(), *([held] if held is not None else [])]
            result = TelemetryWindow(source, config, observers, admit=lambda module: admit(backend, module)).run()
        except GpuvetError:
            return None
        return Window(result.events, held, config.duration_s or 0.0, config.interval_s, len(source.present(0.0)))

    def _held(self, slowdown_c: dict[str, float], interval_s: float) -> HeldForTrend | None:
        factory = self.trend
        return HeldForTrend(lambda: factory(slowdown_c, interval_s=interval_s)) if factory is not None else None

    @cached_property
    def inventory(self) -> Inventory | None:
        if self.backend is None:
            return None
        _ = self.window  # the node as it is after the window
        return self.backend.inventory()

    def modules_by_bus_id(self) -> dict[str, str]:
        """The inventory's module ids by bus id, one spelling (node.bus): NVML's, lspci's and the
        driver's compare."""
        inv = self.inventory
        return {bus_key(m.bus_id): m.id for m in (inv.modules if inv else ()) if isinstance(m.bus_id, str)}

    @cached_property
    def node(self) -> Node | None:
        if self.backend is None:
            return None
        _ = self.window
        return self.backend.node()

    @cached_property
    def differences(self) -> list[Difference] | None:
        if self.declared is None or self.node is None:
            return None
        from gpuvet.node.diff import diff_nodes

        return diff_nodes(self.declared, self.node)

    @cached_property
    def engine(self) -> BenchEngine | None:
        if self.backend is None:
            return None
        _ = self.window
        try:
            return self.backend.engine()
        except GpuvetError:
            return None

    @cached_property
    def expectations(self) -> Expectations | None:
        """Against what the node should be: the declared spec, else its inferred nominal design."""
        if self.node is None:
            return None
        from gpuvet.checks.expected import Expectations
        from gpuvet.node.design import infer_design

        return Expectations(self.declared if self.declared is not None else infer_design(self.node).node)

    def _ctx(self) -> BenchContext | None:
        if self.engine is None:
            return None
        from gpuvet.bench.context import BenchContext
        from gpuvet.bench.timing import QUICK

        return BenchContext(self.engine, QUICK)

    @cached_property
    def pairs(self) -> list[BenchResult] | None:
        ctx = self._ctx()
        if ctx is None or any(m.is_host for m in ctx.engine.modules()) or len(ctx.engine.modules()) < 2:
            return None
        from gpuvet.bench import copy

        return copy.run(ctx, copy.CopyOptions(tests=("p2p",), size_bytes=64 * 2**20, pairs="sampled"))

    @cached_property
    def pair_checks(self) -> list[Check] | None:
        """Each measured pair, one way and both ways at once, against what the design's links carry
        (``expectations``: never the state judged), judged once for every check that reads it. Both
        ways matter: a copy staged through host memory on a PCIe switch keeps its one-way rate and
        halves when the reverse copy shares the host's link (P2P off on a PCIe node)."""
        if self.pairs is None or self.expectations is None:
            return None
        from gpuvet.checks.measured import copy_checks

        return [c for c in copy_checks(self.pairs, self.expectations, [], "gpu") if c.name in PAIR_TESTS]

    @cached_property
    def compute(self) -> list[BenchResult] | None:
        ctx = self._ctx()
        if ctx is None or any(m.is_host for m in ctx.engine.modules()):
            return None
        from gpuvet.bench import gemm

        return gemm.run(ctx, gemm.GemmOptions(dtypes=("bf16",), check=True))

    @property
    def local(self) -> bool:
        """Whether the evidence is of this machine (live or simulated here), not a captured one."""
        return self.backend is not None and not self.backend.captured

    @property
    def no_modules(self) -> str | None:
        """Why no module is visible on a live machine without any (None when there are modules)."""
        if self.backend is None or not self.local or self.inventory is None or self.inventory.modules:
            return None  # a capture without a module list is not a node without modules
        return self.backend.why_no_modules or "the backend found no module"

    @property
    def source(self) -> str:
        """Where the node's readings come from, in words; simulated ones say so."""
        b = self.backend
        if b is None:
            return "no node"
        if b.simulated:
            name = self.declared.name if self.declared is not None else b.name
            return f"simulated node {name} (a model, not hardware)"
        if b.captured:
            return "captured " + ", ".join(Path(p).name for p in self.captures.topo_and_xml)
        return f"{b.name} readings of this machine"

    def window_source(self) -> str:
        """The telemetry window as a source: how long, and whether simulated."""
        w = self.window
        if w is None:
            return "no telemetry window"
        simulated = self.backend is not None and self.backend.simulated
        span = f"{w.duration_s / 86400:.1f} simulated days" if simulated else f"{w.duration_s:g} s"
        return f"telemetry window ({span}, {w.modules} modules)"

    def capture_source(self, *kinds: str) -> str | None:
        """The captured files read as one of ``kinds`` (e.g. "nvidia-smi -q"), or None."""
        files = [f"{name} ({', '.join(k for k in got if k in kinds)})" for name, got in self.captures.read_as.items()
                 if any(k in kinds for k in got)]
        return ", ".join(files) or None

    def smi_source(self) -> str:
        """The files a module's health readings came from: nvidia-smi's forms or a monitor's, else every file read
        (deviceQuery's 'ECC Enabled' is one), never a label naming a tool that was not given."""
        every = ", ".join(f"{name} ({', '.join(got)})" for name, got in self.captures.read_as.items())
        return self.capture_source(CAPTURED["smi_q"], CAPTURED["smi_qx"], CAPTURED["smi_table"],
                                   CAPTURED["smi_query"], *MONITOR_KINDS) or every or CAPTURED["smi_q_label"]

    def clock_reasons_cited(self) -> list[Cited]:
        """Captured modules whose clock-event section was read (an excerpt without it says nothing)."""
        return [Cited(self.smi_source(), "Clocks Event Reasons active", ", ".join(sorted(h.clock_events)) or "none",
                      where=h.module) for h in self.captures.health if h.module in self.captures.clock_reasons_read]

    def events(self, *kinds: str) -> list[Event]:
        w = self.window
        return [e for e in (w.events if w else []) if e.kind in kinds]

    def close(self) -> None:
        if "engine" in self.__dict__ and self.engine is not None:
            self.engine.close()
            del self.__dict__["engine"]  # opened again if another diagnosis needs it

    def versions(self) -> dict[str, str | None]:
        return self.engine.versions() if self.engine is not None else {}
