"""Xids as they happen on a live NVIDIA node, for watch. NVML's event set delivers the driver's
critical Xid events (what dcgm-exporter's ``DCGM_FI_DEV_XID_ERRORS`` reports); where it cannot be
set up (a driver or binding without events, a module that refuses to register), the kernel log,
where the driver writes every Xid, is read after the newest record seen, as health's
``--xid-since last`` does. Either way only Xids from after watch started are events: health
reports those from before."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from gpuvet.backends.base import ModuleLost
from gpuvet.backends.nvidia.gateway import Nvml, NvmlHandle
from gpuvet.backends.readings import Unavailable, XidRecord
from gpuvet.node.bus import bus_key

NVML_EVENT_TYPE_XID_CRITICAL = 0x8  # nvmlEventTypeXidCriticalError (nvml.h)
MAX_EVENTS_PER_POLL = 1000  # a storm of Xids is still read a poll at a time, never an endless loop


class _Device(Protocol):
    handle: NvmlHandle
    bus_id: str
    uuid: str
    id: str


@dataclass
class XidFeed:
    """Each poll returns the Xids that arrived since the last one, by module id. ``source`` says
    where they come from ("nvml events", "kernel log", or why neither could be read)."""

    nvml: Nvml
    devices: Sequence[_Device]
    read_log: Callable[[Callable[[str], str | None]], tuple[XidRecord, ...] | Unavailable]
    source: str = ""
    _event_set: object | None = None
    _log_seq: int | None = None

    def start(self) -> XidFeed:
        self._event_set = self._register()
        if self._event_set is not None:
            self.source = "nvml events"
        else:
            first = self.read_log(self._module_of)
            self._log_seq = max((x.seq for x in first), default=-1) if isinstance(first, tuple) else None
            self.source = "kernel log" if isinstance(first, tuple) else f"none: {first.reason}"
        return self

    def _register(self) -> object | None:
        """An event set with every module registered for critical Xids, else None (and freed)."""
        event_set: object = self.nvml.query("nvmlEventSetCreate")
        if isinstance(event_set, Unavailable):
            return None
        for d in self.devices:
            try:
                done = self.nvml.query("nvmlDeviceRegisterEvents", d.handle, NVML_EVENT_TYPE_XID_CRITICAL,
                                       NvmlHandle(event_set), module=d.id)
            except ModuleLost:
                done = Unavailable("lost")
            if isinstance(done, Unavailable):
                self.nvml.query("nvmlEventSetFree", NvmlHandle(event_set))
                return None
        return event_set

    def _module_of(self, bus: str) -> str | None:
        return next((d.id for d in self.devices if bus_key(d.bus_id) == bus_key(bus)), None)

    def poll(self, slow: bool) -> dict[str, tuple[int, ...]]:
        """New Xids by module: every poll from the event set, on slow ticks from the kernel log."""
        if self._event_set is not None:
            return self._drain_events()
        if self._log_seq is None or not slow:
            return {}
        records = self.read_log(self._module_of)
        if isinstance(records, Unavailable):
            return {}
        new = [x for x in records if x.seq > self._log_seq]
        self._log_seq = max([x.seq for x in new], default=self._log_seq)
        out: dict[str, tuple[int, ...]] = {}
        for x in new:
            if x.module is not None:
                out[x.module] = (*out.get(x.module, ()), x.code)
        return out

    def _drain_events(self) -> dict[str, tuple[int, ...]]:
        out: dict[str, tuple[int, ...]] = {}
        for _ in range(MAX_EVENTS_PER_POLL):
            try:
                data = self.nvml.query("nvmlEventSetWait_v2", NvmlHandle(self._event_set), 0)
            except ModuleLost:
                break
            if isinstance(data, Unavailable):  # NVML_ERROR_TIMEOUT: nothing more is waiting
                break
            module = self._device_module(data.device)
            if module is not None and int(data.eventType) & NVML_EVENT_TYPE_XID_CRITICAL:
                out[module] = (*out.get(module, ()), int(data.eventData))
        return out

    def _device_module(self, handle: object) -> str | None:
        """The module an event names: by UUID (a handle NVML hands back need not be the same
        object), else by the handle itself."""
        try:
            uuid = self.nvml.query("nvmlDeviceGetUUID", NvmlHandle(handle))
        except ModuleLost:
            uuid = None
        if isinstance(uuid, bytes):
            uuid = uuid.decode("ascii", "replace")
        found = next((d.id for d in self.devices if isinstance(uuid, str) and d.uuid == uuid), None)
        return found or next((d.id for d in self.devices if d.handle == handle), None)

    def close(self) -> None:
        if self._event_set is not None:
            self.nvml.query("nvmlEventSetFree", NvmlHandle(self._event_set))
            self._event_set = None


def kernel_log_reader(path: Path) -> Callable[[Callable[[str], str | None]], tuple[XidRecord, ...] | Unavailable]:
    def read(module_of: Callable[[str], str | None]) -> tuple[XidRecord, ...] | Unavailable:
        from gpuvet.backends.kernel_log import kernel_log

        return kernel_log(module_of, path)[0]

    return read
