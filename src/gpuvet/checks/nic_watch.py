"""Watch's NIC path. On slow ticks each RDMA port's state, rate and counters become a small
record of their own (not a module ``Sample``: modules are GPUs), and one detector turns the
readings into events. A port down or below its design rate is ``checks.nics``' verdict (one
verdict for health, validate, doctor and watch); what one reading cannot tell, an error
counter's rate, is judged here against the bounds below."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from gpuvet import knowledge
from gpuvet.backends.nic_readings import ERROR_COUNTERS, NicReadings
from gpuvet.checks import nics
from gpuvet.checks.events import Event, Severity
from gpuvet.node.model import EndpointKind, Node
from gpuvet.node.nic_catalog import find_nic_model

# Error counts per hour above which a rising counter is an event. link_downed: any rise (the
# link went down and retrained; ibdiagnet flags a link_down_counter that rises during its run,
# ibqueryerrors' default threshold is 0). The others: 10 per hour is gpuvet's assumption, not a
# vendor figure (ibqueryerrors reports any non-zero count; a few symbol errors a day on a long
# copper link are corrected and harmless, a steady rise is a cable or transceiver going bad).
ERROR_BOUNDS_PER_HOUR: Mapping[str, float] = {
    "symbol_error": 10.0, "link_downed": 0.0, "port_rcv_errors": 10.0, "excessive_buffer_overrun_errors": 10.0,
    "link_error_recovery": 10.0, "local_link_integrity_errors": 10.0,
}
QUIET_S = 3600.0  # an error episode closes after an hour without a rise
_JUDGED = ("nic_port_down", "nic_port_down_undeclared", "nic_rate_low", "nic_missing")  # checks.nics' verdicts watched
_BACK = {"nic_port_down": "the port is up again", "nic_port_down_undeclared": "the port is up again",
         "nic_rate_low": "the port runs at its design rate again",
         "nic_missing": "the NICs of the design are all there again"}


@dataclass(frozen=True)
class NicPortSample:
    """One RDMA port at one slow tick (what the Prometheus endpoint serves)."""

    t: float
    device: str
    port: int
    state: str  # ACTIVE, DOWN, …
    phys_state: str  # LinkUp, Polling, …
    rate_gbps: float | None
    link_layer: str
    counters: Mapping[str, int]  # error counters read
    xmit_bytes: int | None  # port_xmit_data × 4 (sysfs counts 4-byte words); None: not read
    rcv_bytes: int | None


def nic_samples(readings: NicReadings, t: float) -> list[NicPortSample]:
    """Each port of each NIC read, as one record."""
    out = []
    for nic in readings.nics:
        for p in nic.ports:
            xmit, rcv = p.traffic.get("port_xmit_data"), p.traffic.get("port_rcv_data")
            out.append(NicPortSample(t, nic.device, p.port, p.state, p.phys_state, p.rate_gbps, p.link_layer,
                                     dict(p.counters), xmit * 4 if xmit is not None else None,
                                     rcv * 4 if rcv is not None else None))
    return out


def declared_nics(design: Node | None) -> list[nics.DeclaredNic]:
    """The NICs a design declares (a simulated node's spec), in its order; none without one."""
    if design is None:
        return []
    return [nics.DeclaredNic(e.id, find_nic_model(e.model)) for e in design.endpoints
            if e.kind is EndpointKind.NIC]


@dataclass
class _Open:
    """An open condition: since when, how many slow ticks showed it, the last tick it moved."""

    since: float
    seen: int = 1
    last: float = 0.0


@dataclass
class NicWatch:
    """A port going down (critical) or coming back (cleared), training below its design rate
    (warn), a NIC of the design gone (critical), an error counter rising (warn): one event per
    episode, a ``cleared`` one when it ends. Counters that go down were reset, not negative."""

    declared: Sequence[nics.DeclaredNic] = ()
    bounds: Mapping[str, float] = field(default_factory=lambda: dict(ERROR_BOUNDS_PER_HOUR))
    quiet_s: float = QUIET_S
    _open: dict[tuple[str, str | None], _Open] = field(default_factory=dict)
    _rising: dict[tuple[str, int, str], _Open] = field(default_factory=dict)
    window_s: float = 3600.0  # a counter's rate is its rise over the last hour (or since the first tick)
    _prev: dict[tuple[str, int, str], tuple[float, int]] = field(default_factory=dict)
    _hist: dict[tuple[str, int, str], deque[tuple[float, int]]] = field(default_factory=dict)  # (t, rise so far)

    def observe(self, readings: NicReadings, t: float) -> list[Event]:
        return self._verdicts(readings, t) + self._counters(nic_samples(readings, t), t)

    def _verdicts(self, readings: NicReadings, t: float) -> list[Event]:
        """checks.nics' verdicts as episodes: one event when one appears, cleared when it goes."""
        now = {(v.kind, v.nic): v for v in nics.ports(readings, self.declared) if v.kind in _JUDGED}
        out = []
        for key, v in now.items():
            if key in self._open:
                self._open[key].seen += 1
                continue
            self._open[key] = _Open(t, last=t)
            level = Severity(knowledge.fault(v.kind).severity)
            out.append(Event(v.kind, level, None, t, v.reason, {"nic": v.nic, "fix": v.fix}))
        for key in [k for k in self._open if k not in now]:
            episode = self._open.pop(key)
            out.append(_cleared(key[0], key[1], episode, t, _BACK[key[0]]))
        return out

    def _counters(self, samples: Sequence[NicPortSample], t: float) -> list[Event]:
        out = []
        for s in samples:
            for name in ERROR_COUNTERS:
                value = s.counters.get(name)
                if value is not None and name in self.bounds:
                    out += self._counter(s, name, value)
        for key in [k for k, e in self._rising.items() if t - e.last >= self.quiet_s]:
            episode = self._rising.pop(key)
            out.append(_cleared("nic_errors", key[0], episode, t, f"port {key[1]}'s {key[2]} has not risen for "
                                f"{self.quiet_s / 3600:g} h", {"port": key[1], "counter": key[2]}))
        return out

    def _counter(self, s: NicPortSample, name: str, value: int) -> list[Event]:
        """One counter's rise over the last ``window_s`` (an hour), as a rate against its bound."""
        key = (s.device, s.port, name)
        prev = self._prev.get(key)
        self._prev[key] = (s.t, value)
        hist = self._hist.setdefault(key, deque())
        total = hist[-1][1] if hist else 0
        if prev is not None and s.t > prev[0]:
            total += value - prev[1] if value >= prev[1] else value  # went down: reset; count from zero
        hist.append((s.t, total))
        while len(hist) > 2 and hist[1][0] <= s.t - self.window_s:
            hist.popleft()
        rise, span = total - hist[0][1], s.t - hist[0][0]
        if rise <= 0 or span <= 0 or total == (hist[-2][1] if len(hist) > 1 else 0):
            return []  # no rise over the window, or none since the last tick
        rate = rise / span * 3600
        if rate <= self.bounds[name]:
            return []
        return self._rising_event(s, name, value, rate, rise, span)

    def _rising_event(self, s: NicPortSample, name: str, value: int, rate: float, rise: int, span: float
                      ) -> list[Event]:
        """The event that opens an episode; while it is open, counted only."""
        key = (s.device, s.port, name)
        episode = self._rising.get(key)
        if episode is not None:
            episode.seen += 1
            episode.last = s.t
            return []
        self._rising[key] = _Open(s.t, last=s.t)
        bound = self.bounds[name]
        said = "any rise" if bound == 0 else f"bound {bound:g}/h"
        return [Event("nic_errors", Severity.WARN, None, s.t, f"{s.device} port {s.port}: {name} rising at "
                      f"{rate:.1f}/h (+{rise} in {span / 60:.0f} min; {said}): check the cable/transceiver and "
                      "the switch port (mlxlink)",
                      {"nic": s.device, "port": s.port, "counter": name, "per_hour": rate, "count": value,
                       "rise": rise, "over_s": span, "bound_per_hour": bound})]


def _cleared(kind: str, nic: str | None, episode: _Open, t: float, why: str,
             extra: Mapping[str, str | int] | None = None) -> Event:
    where = f"{nic}: " if nic else ""
    return Event("cleared", Severity.INFO, None, t, f"{kind} cleared: {where}{why}",
                 {"of": kind, "nic": nic, "since": episode.since, "seen": episode.seen,
                  "duration_s": t - episode.since, **(extra or {})})
