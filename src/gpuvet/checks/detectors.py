"""Detectors: each a small typed rule over one module's samples that emits events with a
severity and its evidence. They skip missing readings (None) rather than read them as zeros,
and treat a counter that goes down as a reset, not as a negative rate."""

from __future__ import annotations

import statistics
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpuvet import knowledge
from gpuvet.backends.readings import Sample, ThrottleReason, throttle_labels, throttle_reasons
from gpuvet.checks.events import Event, Severity

if TYPE_CHECKING:  # a type only (the check model's module loads pydantic's models)
    from gpuvet.checks.model import Json

THROTTLE_BITS = (ThrottleReason.SW_POWER_CAP | ThrottleReason.HW_SLOWDOWN | ThrottleReason.SW_THERMAL_SLOWDOWN
                 | ThrottleReason.HW_THERMAL_SLOWDOWN | ThrottleReason.HW_POWER_BRAKE_SLOWDOWN)
THROTTLE_MASK = int(THROTTLE_BITS)  # a plain int: ``int & IntFlag`` goes through enum machinery on every sample
FATAL_XIDS = set(knowledge.fatal_xids())  # severity critical in gpuvet.knowledge (xids.yaml, NVIDIA's catalog)


class Detector(ABC):
    """One rule over one module's samples; keeps its own per-module state."""

    kind = "detector"

    @abstractmethod
    def observe(self, s: Sample) -> list[Event]:
        """The events this sample raises (usually none)."""


@dataclass
class ThrottleDetector(Detector):
    """Throttling while busy, for ``min_samples`` in a row; one event per episode."""

    min_samples: int = 3
    clear_samples: int = 10
    _run: dict[str, int] = field(default_factory=dict)
    _clean: dict[str, int] = field(default_factory=dict)
    _active: set[str] = field(default_factory=set)
    _open: dict[str, _Episode] = field(default_factory=dict)  # module -> its open throttle episode
    kind = "throttle"

    def observe(self, s: Sample) -> list[Event]:
        bits = s.throttle & THROTTLE_MASK
        if bits and (s.util or 0) >= 0.5:
            self._run[s.module] = self._run.get(s.module, 0) + 1
            self._clean[s.module] = 0
            if s.module in self._open:
                self._open[s.module].seen += 1
            if self._run[s.module] >= self.min_samples and s.module not in self._active:
                self._active.add(s.module)
                self._open[s.module] = _Episode(s.t)
                reasons = list(throttle_labels(bits))
                words = ", ".join(r.words for r in throttle_reasons(bits))
                return [Event("throttle", Severity.WARN, s.module, s.t, f"throttled under load: {words}",
                              {"reasons": reasons, "temp_c": s.temp_c, "power_w": s.power_w,
                               "sm_clock_mhz": s.sm_clock_mhz}, uuid=s.uuid)]
        else:
            self._run[s.module] = 0
            self._clean[s.module] = self._clean.get(s.module, 0) + 1
            if self._clean[s.module] >= self.clear_samples:
                self._active.discard(s.module)
                if (episode := self._open.pop(s.module, None)) is not None:
                    return [_cleared("throttle", s, episode, f"no throttling for {self.clear_samples} samples")]
        return []


@dataclass
class _FlapWindow:
    powers: deque[float]
    last: tuple[float, float] | None = None
    flags: deque[tuple[int, int]] = field(default_factory=deque)  # (memory switched, sm switched) per step
    switches: list[int] = field(default_factory=lambda: [0, 0])


@dataclass
class _Episode:
    """An open condition: when it opened and how many samples showed it since."""

    since: float
    seen: int = 1


def _cleared(of: str, s: Sample, episode: _Episode, why: str) -> Event:
    """The event that closes an open condition: one per episode, naming what it closes."""
    return Event("cleared", Severity.INFO, s.module, s.t, f"{of} cleared: {why}",
                 {"of": of, "since": episode.since, "seen": episode.seen, "duration_s": s.t - episode.since},
                 uuid=s.uuid)


@dataclass
class ClockFlappingDetector(Detector):
    """A clock switching between states under steady load (not idle, not a load change).
    Switches are counted incrementally over the last ``window`` samples."""

    window: int = 60
    min_switches: int = 6
    step: float = 0.05  # a switch: a change of more than 5 %
    cooldown_s: float = 3600.0  # kept for callers; an open episode raises nothing more (issue 42)
    _win: dict[str, _FlapWindow] = field(default_factory=dict)
    _last: dict[str, float] = field(default_factory=dict)
    _open: dict[str, _Episode] = field(default_factory=dict)  # module -> its open flapping episode
    kind = "clock_flapping"

    def observe(self, s: Sample) -> list[Event]:
        w = self._win.get(s.module)
        if (s.util or 0) < 0.8 or s.mem_clock_mhz is None or s.sm_clock_mhz is None or s.power_w is None:
            if w is None or w.last is not None:  # idle or unreadable: start again (a fresh window stays as it is)
                self._win[s.module] = _FlapWindow(deque(maxlen=self.window))
            return []
        if w is None:
            w = self._win[s.module] = _FlapWindow(deque(maxlen=self.window))
        mem, sm = s.mem_clock_mhz, s.sm_clock_mhz
        switches = w.switches
        if w.last is not None:
            (mem0, sm0), step = w.last, self.step
            flag = (int(abs(mem - mem0) > step * max(mem0, mem)), int(abs(sm - sm0) > step * max(sm0, sm)))
            w.flags.append(flag)
            switches[0] += flag[0]
            switches[1] += flag[1]
            if len(w.flags) > self.window - 1:
                old = w.flags.popleft()
                switches[0] -= old[0]
                switches[1] -= old[1]
        w.last = (mem, sm)
        w.powers.append(s.power_w)
        if len(w.powers) < self.window // 2:
            return []
        if switches[0] < self.min_switches and switches[1] < self.min_switches:
            return self._steady(s, w)
        return self._flapping(s, w)

    def _steady(self, s: Sample, w: _FlapWindow) -> list[Event]:
        """A full window of steady clocks under load closes an open episode (``cleared``)."""
        episode = self._open.get(s.module)
        if episode is None or len(w.flags) < self.window - 1:
            return []
        del self._open[s.module]
        return [Event("cleared", Severity.INFO, s.module, s.t,
                      f"clock_flapping cleared: the clocks held steady under load for {len(w.flags) + 1} samples",
                      {"of": "clock_flapping", "since": episode.since, "seen": episode.seen,
                       "duration_s": s.t - episode.since}, uuid=s.uuid)]

    def _flapping(self, s: Sample, w: _FlapWindow) -> list[Event]:
        """The event that opens an episode, when the load held still; while it is open, counted only."""
        if max(w.powers) > 1.3 * statistics.median(w.powers):
            return []  # the load changed; clocks follow it legitimately
        episode = self._open.get(s.module)
        if episode is not None:
            episode.seen += 1
            return []
        self._open[s.module] = _Episode(s.t)
        self._last[s.module] = s.t
        which = 0 if w.switches[0] >= w.switches[1] else 1
        name = ("memory", "sm")[which]
        assert w.last is not None
        return [Event("clock_flapping", Severity.WARN, s.module, s.t,
                      f"{name} clock switched {w.switches[which]} times in {len(w.powers)} samples under steady load",
                      {"clock": name, "switches": w.switches[which], "now_mhz": w.last[which]}, uuid=s.uuid)]


@dataclass
class PcieLinkDetector(Detector):
    """PCIe below its maximum generation or width while busy (an idle downshift is normal), or
    its replay counter rising (a marginal link retrying transfers: a riser, a slot, a cable)."""

    replays_per_hour: float = 100.0  # gpuvet's own bound, as for fabric errors
    _down: set[str] = field(default_factory=set)
    _replays: dict[str, tuple[float, int]] = field(default_factory=dict)
    kind = "link_degraded"

    def observe(self, s: Sample) -> list[Event]:
        return self._replay_rate(s) + self._narrow(s)

    def _replay_rate(self, s: Sample) -> list[Event]:
        if s.pcie_replays is None:
            return []
        prev = self._replays.get(s.module)
        self._replays[s.module] = (s.t, s.pcie_replays)
        if not prev or s.t <= prev[0]:
            return []
        delta = s.pcie_replays - prev[1] if s.pcie_replays >= prev[1] else s.pcie_replays  # a reset counter
        rate = delta / (s.t - prev[0]) * 3600
        if rate <= self.replays_per_hour:
            return []
        return [Event("pcie_replays", Severity.WARN, s.module, s.t, f"PCIe replays at {rate:.0f}/h (bound "
                      f"{self.replays_per_hour:.0f}/h): reseat the module or riser, check the slot",
                      {"per_hour": rate, "count": s.pcie_replays}, uuid=s.uuid)]

    def _narrow(self, s: Sample) -> list[Event]:
        if s.pcie_gen is None or s.pcie_width is None or s.pcie_gen_max is None or s.pcie_width_max is None:
            return []
        if (s.util or 0) < 0.3:
            return []
        below = s.pcie_gen < s.pcie_gen_max or s.pcie_width < s.pcie_width_max
        if below and s.module not in self._down:
            self._down.add(s.module)
            return [Event("link_degraded", Severity.WARN, s.module, s.t,
                          f"PCIe at gen{s.pcie_gen} x{s.pcie_width} under load; its maximum is gen{s.pcie_gen_max} "
                          f"x{s.pcie_width_max}", {"link": "pcie", "gen": s.pcie_gen, "width": s.pcie_width,
                                                   "gen_max": s.pcie_gen_max, "width_max": s.pcie_width_max},
                          uuid=s.uuid)]
        if not below:
            self._down.discard(s.module)
        return []


@dataclass
class NvlinkDetector(Detector):
    """Fabric links down (fewer active than expected) or their error counters rising."""

    errors_per_hour: float = 100.0
    _down: set[str] = field(default_factory=set)  # modules with an open link event (either kind)
    _errors: dict[str, tuple[float, int]] = field(default_factory=dict)
    _open: dict[tuple[str, str], _Episode] = field(default_factory=dict)  # (module, kind) -> open episode
    kind = "link_degraded"

    def observe(self, s: Sample) -> list[Event]:
        out = self._links(s) if s.nvlink_up is not None and s.nvlink_expected else []
        if s.nvlink_errors is not None:
            prev = self._errors.get(s.module)
            self._errors[s.module] = (s.t, s.nvlink_errors)
            if prev and s.t > prev[0]:
                delta = s.nvlink_errors - prev[1] if s.nvlink_errors >= prev[1] else s.nvlink_errors
                rate = delta / (s.t - prev[0]) * 3600
                if rate > self.errors_per_hour:
                    out.append(Event("nvlink_errors", Severity.WARN, s.module, s.t,
                                     f"fabric link errors at {rate:.0f}/h", {"per_hour": rate}, uuid=s.uuid))
        return out

    def _links(self, s: Sample) -> list[Event]:
        """Links down (inactive: critical, faults.yaml link_down) apart from links slowed (warn);
        a source that cannot tell them apart (nvlink_down None) reports both as slowed."""
        assert s.nvlink_up is not None and s.nvlink_expected is not None
        down = s.nvlink_down or 0
        slowed = s.nvlink_expected - s.nvlink_up - down
        evidence: dict[str, Json] = {"link": "nvlink", "up": s.nvlink_up, "expected": s.nvlink_expected}
        out = self._life(s, Event("link_down", Severity.CRITICAL, s.module, s.t,
                                  f"{down} of {s.nvlink_expected} fabric links down", evidence | {"down": down},
                                  uuid=s.uuid) if down > 0 else None)
        words = "slowed" if s.nvlink_down is not None else "down or slowed"
        out += self._life(s, Event("link_degraded", Severity.WARN, s.module, s.t,
                                   f"{slowed} of {s.nvlink_expected} fabric links {words}", evidence,
                                   uuid=s.uuid) if slowed > 0 else None, "link_degraded")
        if any((s.module, k) in self._open for k in ("link_down", "link_degraded")):
            self._down.add(s.module)
        else:
            self._down.discard(s.module)
        return out

    def _life(self, s: Sample, now: Event | None, kind: str = "link_down") -> list[Event]:
        """One event opens the condition, later samples count it, its end is ``cleared``."""
        episode = self._open.get((s.module, kind))
        if now is not None and episode is None:
            self._open[(s.module, kind)] = _Episode(s.t)
            return [now]
        if now is not None and episode is not None:
            episode.seen += 1
        elif episode is not None:
            del self._open[(s.module, kind)]
            return [_cleared(kind, s, episode, f"all {s.nvlink_expected} fabric links up at speed")]
        return []


@dataclass
class EccDetector(Detector):
    """Correctable errors: change detection on the rate (per hour, in buckets) against the
    module's own history; uncorrectable: any increase. Counter resets are handled."""

    bucket_s: float = 3600.0
    factor: float = 5.0
    min_per_hour: float = 10.0
    history: int = 24
    cooldown_s: float = 6 * 3600.0
    _prev: dict[str, tuple[int, int]] = field(default_factory=dict)
    _bucket: dict[str, tuple[int, float]] = field(default_factory=dict)
    _rates: dict[str, deque[float]] = field(default_factory=dict)
    _last: dict[str, float] = field(default_factory=dict)
    _open: dict[str, _Episode] = field(default_factory=dict)  # module -> its open ecc_rising episode
    _usual: dict[str, float] = field(default_factory=dict)  # module -> its usual rate when the episode opened
    kind = "ecc"

    @staticmethod
    def _delta(now: int, before: int) -> int:
        return now - before if now >= before else now  # went down: the driver reset it; count from zero

    def observe(self, s: Sample) -> list[Event]:
        if s.ecc_corrected is None:
            return []
        out = []
        prev = self._prev.get(s.module)
        uncorrected = s.ecc_uncorrected if s.ecc_uncorrected is not None else (prev[1] if prev else 0)
        self._prev[s.module] = (s.ecc_corrected, uncorrected)
        if prev is None:
            return []
        if self._delta(uncorrected, prev[1]) > 0:
            out.append(Event("ecc_uncorrectable", Severity.CRITICAL, s.module, s.t,
                             "uncorrectable ECC errors: data was lost; drain the module",
                             {"count": uncorrected}, uuid=s.uuid))
        delta = self._delta(s.ecc_corrected, prev[0])
        index = int(s.t // self.bucket_s)
        current, count = self._bucket.get(s.module, (index, 0.0))
        if index != current:
            rates = self._rates.setdefault(s.module, deque(maxlen=self.history))
            rate = count * 3600 / self.bucket_s
            baseline = statistics.median(rates) if len(rates) >= 3 else 0.0
            out += self._rising(s, rate, baseline)
            rates.append(rate)
            current, count = index, 0.0
        self._bucket[s.module] = (current, count + delta)
        return out

    def _rising(self, s: Sample, rate: float, baseline: float) -> list[Event]:
        """An hour at the bound opens one ecc_rising (later hours count it); an hour below closes it."""
        episode = self._open.get(s.module)
        usual = self._usual.get(s.module, baseline) if episode is not None else baseline  # not the rising hours'
        if rate < max(self.min_per_hour, self.factor * usual):
            if episode is None:
                return []
            del self._open[s.module]
            return [_cleared("ecc_rising", s, episode, f"correctable ECC errors back to {rate:.0f}/h")]
        if episode is not None:
            episode.seen += 1
            return []
        self._open[s.module] = _Episode(s.t)
        self._last[s.module] = s.t
        self._usual[s.module] = baseline
        return [Event("ecc_rising", Severity.WARN, s.module, s.t,
                      f"correctable ECC errors at {rate:.0f}/h (usually {baseline:.1f}/h)",
                      {"per_hour": rate, "baseline_per_hour": baseline}, uuid=s.uuid)]


class XidDetector(Detector):
    """Each Xid at the severity and with the action of gpuvet.knowledge (NVIDIA's resolution bucket)."""

    kind = "xid"

    def observe(self, s: Sample) -> list[Event]:
        return [self._event(s, knowledge.xid(code)) for code in s.xids]

    @staticmethod
    def _event(s: Sample, x: knowledge.Xid) -> Event:
        fatal = " (fatal: drain and reset the module)" if x.drains else ""
        return Event("xid", Severity(x.severity), s.module, s.t, f"Xid {x.code}{fatal}: {x.meaning}",
                     {"code": x.code, "bucket": x.bucket, "action": x.action}, uuid=s.uuid)


def default_detectors() -> list[Detector]:
    return [ThrottleDetector(), ClockFlappingDetector(), PcieLinkDetector(), NvlinkDetector(), EccDetector(),
            XidDetector()]


def run_all(detectors: Iterable[Detector], samples: Iterable[Sample]) -> list[Event]:
    out: list[Event] = []
    for s in samples:
        for d in detectors:
            out.extend(d.observe(s))
    return out
