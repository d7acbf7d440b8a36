"""The NVLink fabric manager's own words, as its journal, `systemctl status` and log print them:
NV_WARN_NOTHING_TO_DO (a board without NVSwitches: nothing to manage, its "failure" is expected), a
start that configured the switches, a service that failed or was stopped, its [ERROR] lines. The
last word about the service is its state; earlier ones are history."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.text import Line

_FM = lazy(r"nv-fabricmanager|nvidia-fabricmanager|fabricmanager\.|Fabric Manager", re.IGNORECASE)
_NOTHING = lazy(r"NV_WARN_NOTHING_TO_DO")
_STARTED = lazy(r"Successfully configured all the available NVSwitches|Started \"?Nvidia Fabric Manager|"
                r"Active: active \(running\)", re.IGNORECASE)
_FAILED = lazy(r"Control process exited, code=exited, status=\d+|Failed to start .*fabric ?manager|"
               r"nvidia-fabricmanager\.service failed|Active: failed|\bfailed! Exit code|"
               # systemctl status' head line: systemd (>= 248) marks a unit that failed with '×' ('●' otherwise)
               r"^\s*\u00d7 nv(?:idia)?-fabricmanager(?:\.service)?\b|"
               r"aborting fabric manager|"  # its own log: '…, aborting fabric manager'
               # a config file it cannot use ends the start before anything runs: 'fabric manager config
               # file item: FABRIC_NODE_CONFIG_FILE has an invalid value', 'failed to parse … config file'
               r"config file item: \S+ has an invalid value|"
               r"(?:failed|unable) to (?:parse|open|read|load) (?:the )?(?:fabric ?manager )?config|"
               # its version check against the loaded driver, which aborts the start (gpu-operator #544): 'fabric
               # manager NVIDIA GPU driver interface version 530.30.02 don't match with driver version 530.41.03'
               r"driver interface version \S+ (?:don.t|doesn.t|do not|does not) match", re.IGNORECASE)
# FX68E: gpud's fabric-manager check (components/accelerator/nvidia/fabric-manager/component.go), its reasons: no
# NVSwitch or a product without fabric manager support (not needed), the service found active, or found inactive / its
# executable missing where the board needs it (failed)
_GPUD_NOT_NEEDED = lazy(r"NVSwitch not detected, skipping fabric manager check|\bdoes not support fabric manager\b")
_GPUD_ACTIVE = lazy(r"\bfabric manager found and active\b|^\W{0,4}fabric manager is active\s*$", re.IGNORECASE)
_GPUD_INACTIVE = lazy(r"nv-fabricmanager found but fabric manager service is not active|fabric manager supported but "
                      r"nv-fabricmanager executable not found")
_STOPPED = lazy(r"Stopped \"?Nvidia Fabric Manager|Stopped nvidia-fabricmanager", re.IGNORECASE)
_ERROR = lazy(r"\[ERROR\]")
# an NVSwitch's SXid as the fabric manager logs it: 'detected NVSwitch non-fatal error 12028 on fid 0 on NVSwitch pci
# bus id 00000000:86:00.0 physical id 3 port 61' (its own log, or its journal's 'nv-fabricmanager[N]: …')
SWITCH_ERROR = lazy(r"detected NVSwitch (non-fatal|fatal) error (\d{1,6})(?:.*?\bpci bus id "
                    r"((?:[0-9A-Fa-f]{4,8}:)?[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]))?(?:.*?\bport (\d{1,3}))?", re.I)
SWITCH_WORDS = "detected NVSwitch"  # how each SWITCH_ERROR line starts, as the fabric manager prints it (a marker)
# its multicast (NVLink SHARP) team set-up failing for a GPU it does not know (gpud's fabric manager matcher): '[ERROR]
# [tid 1230079] failed to find the GPU handle 5410063385821516767 in the multicast team request setup 6130285411925746235.'
MULTICAST = lazy(r"failed to (?:find the GPU handle \d+ in the multicast team|(?:setup|allocate) (?:the )?"
                 r"multicast team)", re.I)
MULTICAST_WORDS = "multicast team"  # every MULTICAST line holds it (a marker: the fabric manager's own words)
# the reader's markers (formats.py): its name (_FM, any case), or its own NVSwitch or multicast error lines (parse's gate)
MARKS = ("abric", "ABRIC", SWITCH_WORDS, MULTICAST_WORDS)
# modules that never sit on an NVSwitch baseboard: consumer and workstation cards, PCIe data-centre cards
_NO_SWITCH = lazy(r"GeForce|\bRTX\b|Quadro|TITAN|PCIe|PCIE|\b(?:T4|P4|P40|L4|L40S?|A2|A10|A16|A40|T1000|"
                  r"T400)\b", re.IGNORECASE)


def without_switches(products: list[str | None]) -> list[str] | None:
    """The module names, where the capture names every module and none is of a kind that sits on an NVSwitch
    board (so the fabric manager has nothing to manage); None where one is unnamed or may be switched."""
    named = [p for p in products if p]
    if not named or len(named) < len(products) or not all(_NO_SWITCH.search(p) for p in named):
        return None
    return named


@dataclass(frozen=True)
class FmEvent:
    kind: str  # nothing_to_do, not_needed (gpud's), started, failed, stopped, switch_error (an NVSwitch SXid),
    # multicast_failed, error
    line: int
    text: str
    host: str | None = None  # the host its syslog/pdsh prefix named, in a log of several (captures/hosted.py)


@dataclass
class FabricManagerLog:
    events: list[FmEvent] = field(default_factory=list)
    claimed: set[int] = field(default_factory=set)

    def by_host(self) -> list[tuple[str | None, FabricManagerLog]]:
        """Each host's service apart, where the log names several (its last state is that host's): else itself."""
        hosts = list(dict.fromkeys(e.host for e in self.events))
        if hosts == [None]:
            return [(None, self)]
        return [(h, FabricManagerLog([e for e in self.events if e.host == h], self.claimed)) for h in hosts]

    @property
    def nothing_to_do(self) -> bool:
        return any(e.kind == "nothing_to_do" for e in self.events)

    @property
    def last_state(self) -> FmEvent | None:
        """The service's last start, failure or stop: what it is now, as far as the capture goes."""
        states = [e for e in self.events if e.kind in ("started", "failed", "stopped")]
        return states[-1] if states else None


def _kind(text: str) -> str | None:
    for kind, pattern in (("nothing_to_do", _NOTHING), ("not_needed", _GPUD_NOT_NEEDED), ("failed", _FAILED),
                          ("failed", _GPUD_INACTIVE), ("started", _GPUD_ACTIVE), ("started", _STARTED),
                          ("stopped", _STOPPED), ("switch_error", SWITCH_ERROR), ("multicast_failed", MULTICAST),
                          ("error", _ERROR)):
        if pattern.search(text):
            return kind
    return None


# DCGM's advice naming the fabric manager (knowledge/dcgm_errors.yaml's next steps): a line holding it is DCGM's
# message about the fabric, read by dcgm_health, not the fabric manager's own line
_DCGM_ADVICE = ("Ensure Fabric Manager is running", "check fabric manager and initialization logs",
                "FabricManager is running without errors", "Fabric Manager (Cluster UUID")


def parse(lines: list[Line]) -> FabricManagerLog:
    out = FabricManagerLog()
    if not any(_FM.search(ln.text) or SWITCH_WORDS in ln.text or MULTICAST_WORDS in ln.text for ln in lines[:5000]):
        return out  # its name, or its own NVSwitch or multicast error lines (unambiguous: its log without the name)
    for ln in lines:
        kind = _kind(ln.text)  # systemctl status' "Active:" line names no fabric manager itself
        if kind is None and (not _FM.search(ln.text) or any(a in ln.text for a in _DCGM_ADVICE)):
            continue
        out.claimed.add(ln.no)
        if kind is not None:
            out.events.append(FmEvent(kind, ln.no, ln.text.strip()[:300]))
    return out
