"""A module listed twice is one module (issue 41): bug reports hold ``nvidia-smi -q`` twice, a post
holds ``amd-smi static`` and ``amd-smi metric`` of the same GPUs, a listing is pasted twice. Two
listings are one module when their UUIDs match, or (a UUID missing on either) their bus ids;
the same bus id under two UUIDs is two modules (two machines' captures) and is said so. Readings
that differ are named in a note, the first one kept, never silently overwritten."""

from __future__ import annotations

import re
from dataclasses import fields, replace

from gpuvet.captures.records import UNNAMED, ListedModule, SmiTextModule
from gpuvet.captures.text import bounded

_BDF = re.compile(r"(?:([0-9A-Fa-f]{1,8}):)?([0-9A-Fa-f]{1,2}):([0-9A-Fa-f]{1,2})\.([0-7])")
_SHOWN = 4  # differing readings named per module; the rest counted
_HEX = re.compile(r"[0-9a-f]")


def bus_key(bus: str | None) -> str | None:
    """A bus id as one key whatever its spelling: 00000000:18:00.0, 0000:18:00.0 and 18:00.0 alike."""
    m = _BDF.fullmatch(bus.strip()) if bus else None
    if m is None:
        return None
    return f"{int(m.group(1) or '0', 16):x}:{int(m.group(2), 16):02x}:{int(m.group(3), 16):02x}.{m.group(4)}"


def _identity(uuid: str | None) -> str | None:
    """A UUID as a module's identity; None for a placeholder a poster or tool left in its place ('GPU-XX',
    '<redacted>', 'N/A'): fewer than 8 hex digits name no module, and two of them are not one module."""
    uid = (uuid or "").strip().lower()
    return uid if len(_HEX.findall(uid.removeprefix("gpu-"))) >= 8 else None


class _Index:
    """Where each UUID and bus id was first seen; which earlier module a new one is."""

    def __init__(self) -> None:
        self.by_uuid: dict[str, int] = {}
        self.by_bus: dict[str, tuple[int, str | None]] = {}
        self.clashes: list[str] = []

    def find(self, uuid: str | None, bus: str | None) -> int | None:
        uid, key = _identity(uuid), bus_key(bus)
        if uid is not None and uid in self.by_uuid:
            return self.by_uuid[uid]
        if key is None or key not in self.by_bus:
            return None
        at, other = self.by_bus[key]
        if uid is not None and other is not None:  # one bus id, two UUIDs: two machines, not one module
            self.clashes.append(f"bus id {bus} is listed with two UUIDs ({other}, {uid})")
            return None
        return at

    def add(self, at: int, uuid: str | None, bus: str | None) -> None:
        uid, key = _identity(uuid), bus_key(bus)
        if uid is not None:
            self.by_uuid.setdefault(uid, at)
        if key is not None:
            self.by_bus.setdefault(key, (at, uid))


def merge_listed(modules: list[ListedModule], tool: str) -> tuple[list[ListedModule], list[str]]:
    """One entry per module: a repeat (same UUID or bus id; same label where neither is printed)
    fills what the first lacked; readings that differ are named, the first kept."""
    cuts: list[str] = []
    modules = [replace(m, name=bounded(m.name, f"{m.label[:40]}: name", cuts),
                       uuid=bounded(m.uuid, f"{m.label[:40]}: UUID", cuts),
                       health=bounded(m.health, f"{m.label[:40]}: health", cuts)) for m in modules]
    kept: list[ListedModule] = []
    index, by_label = _Index(), dict[tuple[str | None, str], int]()
    repeats: dict[int, int] = {}
    differ: dict[int, list[str]] = {}
    for m in modules:
        at = index.find(m.uuid, m.bus_id)
        if at is None:  # same label: the same module unless both name it, differently (amd-smi metric has no BDF)
            at = by_label.get((m.tool, m.label))
            if at is not None and (m.uuid or m.bus_id) and (kept[at].uuid or kept[at].bus_id):
                at = None
        if at is None:
            at = len(kept)
            kept.append(m)
        else:
            kept[at], conflicts = _fill(kept[at], m)
            repeats[at] = repeats.get(at, 1) + 1
            differ.setdefault(at, []).extend(conflicts)
        index.add(at, kept[at].uuid, kept[at].bus_id)
        by_label.setdefault((m.tool, m.label), at)
    notes = [f"{tool}: {c}" for c in cuts[:8]] + _notes(tool, [(_name(kept[at]), n, differ.get(at, []))
                                                             for at, n in repeats.items()], index)
    return kept, notes


def _fill(first: ListedModule, again: ListedModule) -> tuple[ListedModule, list[str]]:
    changes: dict[str, object] = {}
    conflicts: list[str] = []
    for f in fields(ListedModule):
        if f.name in ("label", "tool", "ras"):
            continue
        a, b = getattr(first, f.name), getattr(again, f.name)
        if a is None and b is not None:
            changes[f.name] = b
        elif a is not None and b is not None and a != b:
            conflicts.append(f"{f.name} {_short(a)} then {_short(b)}")
    ras = dict(first.ras)
    for path, value in again.ras:
        if path in ras and ras[path] != value:
            conflicts.append(f"{path} {_short(ras[path])} then {_short(value)}")
        ras.setdefault(path, value)
    return replace(first, **changes, ras=tuple(ras.items())), conflicts  # type: ignore[arg-type]


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _name(m: ListedModule) -> str:
    return f"{m.label} ({m.bus_id or m.uuid})" if m.bus_id or m.uuid else m.label


def _notes(tool: str, repeats: list[tuple[str, int, list[str]]], index: _Index) -> list[str]:
    """One note for the modules listed again with the same readings; one per module whose readings
    differ (at most 8, the rest counted); one per bus id seen under two UUIDs."""
    notes: list[str] = []
    same = [f"{name} {n} times" for name, n, conflicts in repeats if not conflicts]
    if same:
        more = f" and {len(same) - _SHOWN} more" if len(same) > _SHOWN else ""
        notes.append(f"{tool}: {len(same)} module(s) listed more than once with the same readings, each read as one "
                     f"module ({', '.join(same[:_SHOWN])}{more})")
    differ = [(name, n, c) for name, n, c in repeats if c]
    for name, n, conflicts in differ[:8]:
        more = f" and {len(conflicts) - _SHOWN} more" if len(conflicts) > _SHOWN else ""
        notes.append(f"{tool}: {name} is listed {n} times: one module, whose readings differ "
                     f"({'; '.join(conflicts[:_SHOWN])}{more}): the first kept")
    if len(differ) > 8:
        notes.append(f"{tool}: {len(differ) - 8} more module(s) listed again with readings that differ: the first kept")
    notes += [f"{tool}: {c}: two modules (captures of two machines?), both kept" for c in index.clashes[:8]]
    return notes


def merge_smi(modules: list[SmiTextModule]) -> tuple[list[SmiTextModule], list[str]]:
    """nvidia-smi -q's GPUs, one per bus id or GPU UUID (an excerpt without its GPU line is never
    matched by a bus id it does not show)."""
    cuts: list[str] = []
    for m in modules:
        m.product = bounded(m.product, f"GPU {m.bus_id}: Product Name", cuts) or ""
    kept: list[SmiTextModule] = []
    index = _Index()
    repeats: dict[int, int] = {}
    differ: dict[int, list[str]] = {}
    for m in modules:
        uuid = m.fields.get("GPU UUID") or next((v for k, v in m.fields.items() if k.endswith("/GPU UUID")), None)
        bus = None if m.bus_id.startswith(UNNAMED) else m.bus_id
        at = index.find(uuid, bus)
        if at is None:
            at = len(kept)
            kept.append(m)
        else:
            first = kept[at]
            differ.setdefault(at, []).extend(f"{k} {_short(first.fields[k])} then {_short(v)}" for k, v in m.fields.items()
                                             if k in first.fields and first.fields[k] != v)
            for k, v in m.fields.items():
                first.fields.setdefault(k, v)
            first.product = first.product or m.product
            repeats[at] = repeats.get(at, 1) + 1
        index.add(at, uuid, bus)
    return kept, [f"nvidia-smi -q: {c}" for c in cuts[:8]] + _notes(
        "nvidia-smi -q", [(f"GPU {kept[at].bus_id}", n, differ.get(at, [])) for at, n in repeats.items()], index)
