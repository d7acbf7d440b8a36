"""The pieces watch and doctor share (presence, the telemetry window, sinks) and the live table,
each on its own with a small fake source: fast, and exact about what each piece does."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuvet.backends.nvidia.monitor import THROTTLE_REASONS, reason_names
from gpuvet.backends.readings import ModuleIdentity, Sample, ThrottleReason, Unavailable, throttle_labels
from gpuvet.backends.select import open_backend
from gpuvet.backends.telemetry import TelemetrySource
from gpuvet.checks.admission import Admission
from gpuvet.checks.events import Event, Severity
from gpuvet.checks.presence import LOST_AFTER_MISSES, Presence
from gpuvet.checks.window import TelemetryWindow, WindowConfig, evidence_window
from gpuvet.cli.render_watch import LiveTable, module_table, with_slow_fields


def ident(i: int) -> ModuleIdentity:
    return ModuleIdentity(f"gpu{i}", f"GPU-{i}", f"0000:0{i}:00.0", "H100")


def sample(i: int, t: float, **kw: object) -> Sample:
    return Sample(t, f"gpu{i}", f"GPU-{i}", 60.0, 500.0, 1980.0, 2619.0, 0.9, **kw)  # type: ignore[arg-type]


@dataclass
class FakeSource(TelemetrySource):
    """gpu0 and gpu1 from the start; gpu1 goes silent (and off the list, unless ``listed_when_silent``) at
    ``silent_from``; gpu2 is there from ``added_at``."""

    silent_from: float = 1e9
    added_at: float = 1e9
    listed_when_silent: bool = False
    calls: list[tuple[float, bool]] = field(default_factory=list)

    def present(self, t: float) -> list[ModuleIdentity]:
        one = [ident(1)] if t < self.silent_from or self.listed_when_silent else []
        return [ident(0), *one] + ([ident(2)] if t >= self.added_at else [])

    def sample(self, t: float, slow: bool) -> list[Sample]:
        self.calls.append((t, slow))
        ids = [0] + ([1] if t < self.silent_from else []) + ([2] if t >= self.added_at else [])
        return [sample(i, t) for i in ids]

    def slowdown_c(self) -> dict[str, float]:
        return {"gpu0": 87.0, "gpu1": 87.0}


@dataclass
class Recorder:
    events: list[Event] = field(default_factory=list)
    listed_sets: list[set[str]] = field(default_factory=list)
    ticks: list[tuple[float, int, bool]] = field(default_factory=list)

    def event(self, e: Event) -> None:
        self.events.append(e)

    def listed(self, known: dict[str, ModuleIdentity]) -> None:
        self.listed_sets.append(set(known))

    def samples(self, t: float, samples: object, slow: bool, cost_per_module: float) -> None:
        self.ticks.append((t, len(samples), slow))  # type: ignore[arg-type]


def test_presence_names_arrivals_admits_them_and_loses_the_silent() -> None:
    admitted: list[str] = []

    def admit(module: str) -> Admission:
        admitted.append(module)
        return Admission(module, False, "compute 40 % of expected", {})

    p = Presence(admit)
    assert p.listed(0.0, [ident(0), ident(1)]) == []  # there from the start: no event
    kinds = [e.kind for e in p.listed(60.0, [ident(0), ident(1), ident(2)])]
    assert kinds == ["module_added", "module_quarantined"] and admitted == ["gpu2"]
    assert p.states["GPU-2"].state == "quarantined"
    for k in range(LOST_AFTER_MISSES - 1):
        assert p.answered(61.0 + k, {"GPU-0", "GPU-2"}) == []
    (lost,) = p.answered(70.0, {"GPU-0", "GPU-2"})
    assert (lost.kind, lost.severity, lost.uuid) == ("module_lost", Severity.CRITICAL, "GPU-1")
    assert "GPU-1" not in p.known and p.states["GPU-1"].state == "lost" and p.states["GPU-1"].lost_at == 70.0
    (gone,) = p.listed(80.0, [ident(0)])  # gpu2 no longer listed
    assert gone.uuid == "GPU-2" and gone.evidence == {"bus_id": "0000:02:00.0"}


def test_window_samples_paced_ticks_and_sends_each_event_to_every_sink() -> None:
    source = FakeSource(silent_from=30.0, added_at=50.0)
    a, b = Recorder(), Recorder()
    result = TelemetryWindow(source, WindowConfig(interval_s=10.0, slow_every_s=20.0, duration_s=80.0, speedup=None),
                             sinks=[a, b]).run()
    assert [t for t, _ in source.calls] == [10.0 * k for k in range(9)]  # 0..80 s inclusive
    assert [slow for _, slow in source.calls] == [k % 2 == 0 for k in range(9)]
    kinds = [(e.kind, e.module, e.time) for e in result.events]
    assert kinds == [("module_lost", "gpu1", 40.0), ("module_added", "gpu2", 60.0)]  # no admission asked
    assert a.events == b.events == result.events
    assert a.listed_sets[0] == {"GPU-0", "GPU-1"} and a.listed_sets[-1] == {"GPU-0", "GPU-2"}
    assert result.samples == sum(n for _, n, _ in a.ticks) and result.end_t == 90.0
    assert {u: m.state for u, m in result.modules.items()} == {"GPU-0": "present", "GPU-1": "lost", "GPU-2": "added"}


def test_a_module_listed_but_silent_is_lost_after_three_misses() -> None:
    source = FakeSource(silent_from=30.0, listed_when_silent=True)
    result = TelemetryWindow(source, WindowConfig(interval_s=10.0, slow_every_s=100.0, duration_s=60.0,
                                                  speedup=None)).run()
    assert [(e.kind, e.module, e.time) for e in result.events] == [("module_lost", "gpu1", 50.0)]
    assert "stopped answering" in result.events[0].message


def test_a_lost_modules_last_reading_is_no_longer_served_to_prometheus() -> None:
    from gpuvet.watch.prometheus import ExportState, exposition
    from gpuvet.watch.sinks import ExportSink

    source = FakeSource(silent_from=30.0)
    state = ExportState()
    TelemetryWindow(source, WindowConfig(interval_s=10.0, slow_every_s=20.0, duration_s=60.0, speedup=None),
                    sinks=[ExportSink(state, source)]).run()
    assert set(state.latest) == set(state.identities) == {"GPU-0"}
    assert state.events[("module_lost", "GPU-1")] == 1  # the loss itself stays counted
    from prometheus_client import CollectorRegistry

    from gpuvet.watch.prometheus import WatchCollector

    registry = CollectorRegistry(auto_describe=False)
    registry.register(WatchCollector(state))
    body = exposition(state, registry).decode()
    assert 'uuid="GPU-0"' in body and "gpuvet_module_temperature_celsius{" in body
    assert not [line for line in body.splitlines() if "GPU-1" in line and "event" not in line]


def test_window_stops_when_asked() -> None:
    source = FakeSource()
    seen: list[float] = []
    window = TelemetryWindow(source, WindowConfig(interval_s=1.0, duration_s=None, speedup=None),
                             stop=lambda: len(seen) >= 3)
    window.sinks = [type("S", (), {"event": lambda self, e: None, "listed": lambda self, k: None,
                                   "samples": lambda self, t, s, slow, c: seen.append(t)})()]
    assert window.run().end_t == 3.0 and seen == [0.0, 1.0, 2.0]


def test_an_evidence_window_is_days_on_a_simulated_clock_and_seconds_on_a_real_one() -> None:
    sim = evidence_window(open_backend(sim="mesh-4").telemetry())
    assert sim.duration_s == 4 * 86400.0 and sim.speedup is None
    real = evidence_window(FakeSource())
    assert real.duration_s == 10.0 and real.speedup == 1.0
    assert evidence_window(FakeSource(), 3.0).duration_s == 3.0


def test_the_live_table_drops_a_lost_module_and_lists_it_under_the_table() -> None:
    view = LiveTable(simulated=True)
    view.tick(0.0, [sample(0, 0.0), sample(1, 0.0)])
    lost = Event("module_lost", Severity.CRITICAL, "gpu1", 5.0, "gone", uuid="GPU-1")
    view.event(lost)
    view.tick(6.0, [sample(0, 6.0), sample(1, 6.0)])  # a late sample of the lost module does not bring it back
    assert set(view.shown) == {"GPU-0"} and view.lost == [lost]
    table = view.table()
    assert table.row_count == 1 and "lost: gpu1 (GPU-1)" in str(table.caption)
    view.event(Event("module_added", Severity.INFO, "gpu1", 9.0, "appeared", uuid="GPU-1"))
    view.tick(10.0, [sample(1, 10.0)])
    assert set(view.shown) == {"GPU-0", "GPU-1"} and not view.lost


def test_the_renderer_keeps_slow_fields_on_screen_without_touching_the_samples() -> None:
    slow = sample(0, 0.0, pcie_gen=5, pcie_width=16, ecc_corrected=3)
    fast = sample(0, 1.0)
    shown = with_slow_fields(fast, slow)
    assert (shown.pcie_gen, shown.pcie_width, shown.ecc_corrected, shown.t) == (5, 16, 3, 1.0)
    assert (fast.pcie_gen, fast.ecc_corrected) == (None, None)  # the sample itself is left as it came
    assert module_table(1.0, {"GPU-0": shown}, False).row_count == 1


def test_throttle_reasons_are_gpuvets_own_names_for_nvmls_bits() -> None:
    """The integer a sample stores means the same to NVML's gateway and to gpuvet's enum."""
    assert {int(r): r.label for r in ThrottleReason} == THROTTLE_REASONS
    mask = 0x1 | 0x4 | 0x20 | 0x200  # idle and an unknown bit are not reasons gpuvet names
    assert throttle_labels(mask) == reason_names(mask) == ("sw_power_cap", "sw_thermal_slowdown")
    assert sample(0, 0.0, throttle=0x44).reasons == (ThrottleReason.SW_POWER_CAP, ThrottleReason.HW_THERMAL_SLOWDOWN)


def test_the_backend_says_why_it_cannot_measure_the_host() -> None:
    sim = open_backend(sim="mesh-4")
    placement, load = sim.host_placement(), sim.host_load()
    assert isinstance(placement, Unavailable) and "simulated" in placement.reason
    assert isinstance(load, Unavailable) and sim.declared is not None and sim.spec is not None


def test_numa_placement_is_read_from_the_kernels_cpu_lists(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from gpuvet.backends.host_load import cpu_numa

    for node, cpus in (("node0", "0-3,8-9\n"), ("node1", "4-7,10-11\n")):
        (tmp_path / node).mkdir()
        (tmp_path / node / "cpulist").write_text(cpus)
    (tmp_path / "node2").mkdir()  # a node without a cpulist is skipped, not a crash
    numa = cpu_numa(tmp_path)
    assert [c for c, n in sorted(numa.items()) if n == 0] == [0, 1, 2, 3, 8, 9]
    assert [c for c, n in sorted(numa.items()) if n == 1] == [4, 5, 6, 7, 10, 11]


def test_a_sample_cannot_be_changed_after_it_is_read() -> None:
    import dataclasses

    import pytest

    from gpuvet.backends.sim.backend import SimBackend

    backend = SimBackend.from_ref("mesh-4")
    try:
        (first, *_) = backend.telemetry().sample(0.0, slow=True)
    finally:
        backend.close()
    assert first.pcie_gen is not None  # a slow tick fills the slow fields in the constructor
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.temp_c = 20.0  # type: ignore[misc]
