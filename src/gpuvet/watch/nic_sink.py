"""Watch's NIC path beside the modules' (issue 47): on slow ticks only, the node's NICs are
read at the tick's time (sysfs on a real node, the spec and its faults on a simulated one),
judged by ``checks.nic_watch``, their ports kept for the Prometheus endpoint and their events
sent to the other sinks. The module samples and the detectors' block feed never see a NIC."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from gpuvet.backends.nic_readings import NicReadings
from gpuvet.backends.readings import ModuleIdentity, Sample, Unavailable
from gpuvet.checks.events import Event
from gpuvet.checks.nic_watch import NicWatch, nic_samples
from gpuvet.checks.window import Sink

if TYPE_CHECKING:  # the endpoint's module is imported where it is used (issue 43)
    from gpuvet.watch.prometheus import ExportState

NicReader = Callable[[float], NicReadings | Unavailable | None]


@dataclass
class NicSink:
    """A sink that samples the NICs when the window takes a slow tick."""

    read: NicReader
    judge: NicWatch
    forward: Sequence[Sink] = ()  # where its events go (the logbook, the endpoint, the caller)
    export: ExportState | None = None
    events: list[Event] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    takes_blocks: ClassVar[bool] = True  # in a run of ticks it reads only the slow ones (``samples``)

    def event(self, e: Event) -> None:
        pass  # the modules' events are not its business

    def listed(self, known: dict[str, ModuleIdentity]) -> None:
        pass

    def samples(self, t: float, samples: Sequence[Sample], slow: bool, cost_per_module: float) -> None:
        if not slow:
            return
        readings = self.read(t)
        if not isinstance(readings, NicReadings):
            if isinstance(readings, Unavailable) and not self.notes:
                self.notes.append(f"NICs not watched: {readings.reason}")
            return
        if self.export is not None:
            ports = {(p.device, p.port): p for p in nic_samples(readings, t)}
            with self.export.lock:
                self.export.nics = ports
        for e in self.judge.observe(readings, t):
            self.events.append(e)
            nic = e.evidence.get("nic")
            if self.export is not None and e.kind != "cleared" and isinstance(nic, str):
                with self.export.lock:
                    key = (e.kind, nic)
                    self.export.nic_events[key] = self.export.nic_events.get(key, 0) + 1
            for sink in self.forward:
                sink.event(e)
