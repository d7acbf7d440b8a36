"""Issue 46 (AGX2): nvidia-smi's modules judged against their peers, as an engineer reads a node's table: the same
model on one node is set up alike, so one that differs from the others is the odd one, not the design.

- ECC: the table's 'Volatile Uncorr. ECC' cell reads a count where ECC is on and N/A where it is off; a module
  reading N/A beside a peer of its model that reads a count has ECC off (warn, ecc_disabled): its memory errors
  go uncounted and the job sees different memory on it;
- the power cap: one module capped more than a tenth below its peers of the same model (warn, power_cap_low);
- MIG mode or persistence mode differing from its peers (info, a setting worth noting: a job sized for one mode
  fails or slows on the other);
- a reading the tool did not get: 0 C or 0 W on one module while its peers read values (info: the sensor
  is not reported, no reading of the module);
- memory nearly full on an idle module (info: a process holds it, most often a framework that reserves the memory
  up front, vLLM's gpu_memory_utilization; a new process there runs out of memory).

Peers are the modules the captures list with distinct bus ids (one node) and the same product name."""

from __future__ import annotations

import re
from collections import defaultdict
from typing import TYPE_CHECKING

from gpuvet.doctor.model import Finding, finding
from gpuvet.doctor.outcome import MEDIUM
from gpuvet.doctor.shipped_settings import ecc_off_as_shipped
from gpuvet.knowledge import threshold

if TYPE_CHECKING:
    from gpuvet.captures.records import SmiTextModule
    from gpuvet.doctor.captures import Captures

NOTE = "setting_worth_noting"
UNREPORTED = "module_reading_unreported"
ECC = "ECC Mode/Current"
CAP = "GPU Power Readings/Current Power Limit"
_NUMBER = re.compile(r"(\d+(?:\.\d+)?)")
_SETTINGS = (("MIG Mode/Current", "MIG mode"), ("Persistence Mode", "persistence mode"))
_READINGS = (
    ("Temperature/GPU Current Temp", "temperature", "0 C"),
    ("GPU Power Readings/Power Draw", "power draw", "0 W"),
)  # a fan at 0 % is no gap: a consumer card stops its fans when idle (zero-RPM mode)


def findings(caps: Captures) -> list[Finding]:
    """The peer judgments and the idle memory notes the captures' nvidia-smi modules show."""
    mods = caps.smi_text
    if len({m.bus_id for m in mods}) != len(mods):  # two nodes' tables, or one read twice: no peers
        return []
    groups: dict[str, list[SmiTextModule]] = defaultdict(list)
    for m in mods:
        if not m.unread:  # a module with cells the table printed ERR! is judged by those (module_unreadable)
            groups[m.product].append(m)
    out: list[Finding] = []
    for group in groups.values():
        if len(group) > 1:
            out += _ecc(group) + _caps(group) + _settings(group) + _readings(group)
    return out + [f for m in mods if (f := _held(m)) is not None]


def _gpu(m: SmiTextModule) -> str:
    return f"GPU {m.fields.get('Index', '?')} ({m.product})"


def _value(m: SmiTextModule, key: str) -> float | None:
    got = _NUMBER.search(m.fields.get(key, ""))
    return float(got.group(1)) if got is not None else None


def _ecc(group: list[SmiTextModule]) -> list[Finding]:
    on = [m for m in group if m.fields.get(ECC) == "Enabled"]
    if not on:
        return []
    peer = _gpu(on[0])
    return [
        finding(
            "ecc_disabled",
            MEDIUM,
            module=m.bus_id,
            said=f"{_gpu(m)}: ECC off (its ECC cell reads N/A or Disabled) while {peer}, the same model on this "
            "node, has ECC on: its memory errors go uncounted and uncorrected, unlike its peers'",
        )
        for m in group
        if m.fields.get(ECC) in (None, "Disabled") and not ecc_off_as_shipped(m.product)
        and "Compute Mode" in m.fields
        and m.fields.get("MIG Mode/Current") != "Enabled"  # MIG's ECC cell reads 'On', not a count
    ]


def _caps(group: list[SmiTextModule]) -> list[Finding]:
    # a truncated name ('GeForce GTX 106...') may hold two models of different caps: only full names compared
    caps = {m.bus_id: v for m in group if (v := _value(m, CAP)) is not None and v > 0 and "..." not in m.product}
    if len(caps) < 2:
        return []
    top = max(caps.values())
    return [
        finding(
            "power_cap_low",
            MEDIUM,
            module=m.bus_id,
            said=f"{_gpu(m)}: power cap {caps[m.bus_id]:g} W, below its peers' {top:g} W (the same model on this node)",
        )
        for m in group
        if m.bus_id in caps and caps[m.bus_id] < threshold("peer_power_cap_share") * top
    ]


def _settings(group: list[SmiTextModule]) -> list[Finding]:
    out: list[Finding] = []
    for key, name in _SETTINGS:
        values = [m.fields[key] for m in group if m.fields.get(key)]
        if len(set(values)) < 2:
            continue
        usual = max(set(values), key=values.count)
        out += [
            finding(
                NOTE,
                MEDIUM,
                module=m.bus_id,
                said=f"{_gpu(m)}: {name} {m.fields[key]} while its peers of "
                f"the same model run {usual}: a job sized for one setting fails or slows on the other",
            )
            for m in group
            if m.fields.get(key) and m.fields[key] != usual and values.count(usual) > 1
        ]
    return out


def _readings(group: list[SmiTextModule]) -> list[Finding]:
    out: list[Finding] = []
    for key, name, zero in _READINGS:
        read = {m.bus_id: v for m in group if (v := _value(m, key)) is not None}
        if not any(v > 0 for v in read.values()):
            continue
        out += [
            finding(
                UNREPORTED,
                MEDIUM,
                module=m.bus_id,
                said=f"{_gpu(m)}: {name} reads {zero} while its peers "
                f"read values: the sensor is not reported, no reading of the module",
            )
            for m in group
            if read.get(m.bus_id) == 0
        ]
    return out


def _held(m: SmiTextModule) -> Finding | None:
    used, total = _value(m, "FB Memory Usage/Used"), _value(m, "FB Memory Usage/Total")
    busy = _value(m, "Utilization/Gpu")
    if used is None or not total or busy is None or busy > threshold("idle_busy_pct"):
        return None
    if used < threshold("idle_memory_full_share") * total:
        return None
    return finding(
        NOTE,
        MEDIUM,
        module=m.bus_id,
        said=f"{_gpu(m)}: {used:g} of {total:g} MiB in use while it is idle ({busy:g} %): a process holds the "
        "memory (a framework that reserves it up front, vLLM's gpu_memory_utilization); a new process on it runs "
        "out of memory",
    )
