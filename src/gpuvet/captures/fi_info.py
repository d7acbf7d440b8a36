"""libfabric's ``fi_info`` listing (issue 46, FX68E): which providers libfabric found and on which devices, the
provider a job over EFA or verbs (aws-ofi-nccl, MPI over OFI) will use. Its forms, from libfabric's util/info.c:

- the default: one block per fi_info entry, ``provider: efa`` then indented ``fabric:``, ``domain:``, ``version:``,
  ``type:`` and ``protocol:`` lines (``provider: efa;ofi_rxd`` names a utility provider layered on a core one);
- ``-v``: fi_tostr's dump, ``fi_info:`` then ``fabric_attr:`` (``name:``, ``prov_name:``, ``prov_version:``),
  ``domain_attr:`` (``name:``) and ``ep_attr:`` (``type:``, ``protocol:``), each entry under a ``---`` line;
- ``-l``: the providers alone, ``efa:`` then an indented ``version: 2.0``.

Read into notes (the providers, their fabrics and domains) and, for an RDMA provider (efa, verbs), the device a
domain names (``efa_0-rdm`` is efa_0) as a NIC of unknown port state: inventory lists it, nothing judges it. A
listing found no provider when fi_getinfo fails (``fi_getinfo: -61 (No data available)``): that line is the RDMA
verbs lines' (rdma_verbs.py, rdma_setup_failed); here the provider ``-p`` asked for is named beside it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuvet.backends.nic_readings import Nic
from gpuvet.captures.efa_counters import EFA
from gpuvet.captures.nic_tools import NicLinesParse
from gpuvet.captures.text import Line

KIND = "fi_info"

_PROVIDER = re.compile(r"^provider:\s*([\w;.-]{1,64})\s*$")
_KEY = re.compile(r"^\s{1,16}(fabric|domain|version|type|protocol|name|prov_name|prov_version):\s*(\S{1,200})\s*$")
# -v: an indented key, alone (a block's head: fabric_attr:, nic:) or with its value (caps: [ FI_MSG, … ])
_SECTION = re.compile(r"^\s{1,24}([a-z_]{2,32}):(?:\s{1,8}(\S.{0,400}))?\s*$")
_LISTED = re.compile(r"^([\w;.-]{1,64}):\s*$")  # -l: a provider's name alone, its version indented below
_LIST_VERSION = re.compile(r"^\s{1,16}version:\s*(\d{1,6}\.\d{1,6})\s*$")
_COMMAND = re.compile(r"\bfi_info\b(?:.{0,80}?\s-p\s*([\w;.-]{1,64}))?")
_NO_PROVIDER = re.compile(r"\bfi_getinfo\b[^\n]{0,40}?(-61\b|No data available)")
RDMA_PROVIDERS = ("efa", "verbs", "psm3", "cxi", "opx", "psm2", "usnic")  # a domain of theirs names an RDMA device
MAX_ENTRIES = 256


@dataclass
class _Entry:
    provider: str
    values: dict[str, str] = field(default_factory=dict)
    section: str = ""  # -v: the attribute block the lines now read are in (fabric_attr, domain_attr, ep_attr, …)


FiInfoParse = NicLinesParse  # the NIC tools' record and the lines read (nic_tools.NicLinesParse)


def parse(lines: list[Line]) -> FiInfoParse:
    """The providers and domains fi_info's output in ``lines`` lists, as notes and RDMA devices; the lines read."""
    entries, claimed = _entries(lines)
    listed, more = _listed(lines, claimed)
    asked, commands, failed = _asked(lines, claimed | more)
    if not entries and not listed and not failed:
        return FiInfoParse()
    notes = [_said(entries)] if entries else []
    notes += [f"fi_info -l: providers {', '.join(listed)}"] if listed else []
    notes += [f"fi_info{f' -p {asked}' if asked else ''}: fi_getinfo found no provider{f' {asked}' if asked else ''} "
              "(-61, No data available)"] if failed else []
    return FiInfoParse(nics=_devices(entries), kinds=[KIND], claimed=claimed | more | commands, notes=notes)


def _entries(lines: list[Line]) -> tuple[list[_Entry], set[int]]:
    """The default form's blocks and -v's, one entry each."""
    entries: list[_Entry] = []
    claimed: set[int] = set()
    current: _Entry | None = None
    for ln in lines:
        t = ln.text
        if (m := _PROVIDER.match(t)) is not None:
            current = _Entry(m.group(1))
            entries.append(current)
        elif t.strip() == "fi_info:":
            current = _Entry("")
            entries.append(current)
        elif t.strip() == "---":  # -v: the line between entries
            current = None
        elif current is not None and (k := _KEY.match(t)) is not None:
            _keep(current, k.group(1), k.group(2))
        elif current is not None and (s := _SECTION.match(t)) is not None:
            current.section = s.group(1) if s.group(2) is None else current.section
        else:
            current = None
            continue
        claimed.add(ln.no)
    kept = [e for e in entries if e.provider]
    return kept[:MAX_ENTRIES], claimed if kept else set()


def _keep(entry: _Entry, key: str, value: str) -> None:
    """-v's keys named as the default form's, by the block they are in: fabric_attr's name and prov_name,
    prov_version, domain_attr's name, ep_attr's type and protocol (other blocks' keys of those names are not)."""
    where = entry.section
    if key == "prov_name" and where == "fabric_attr":
        entry.provider = entry.provider or value
    elif key == "prov_version" and where == "fabric_attr":
        entry.values.setdefault("version", value)
    elif key == "name" and where in ("fabric_attr", "domain_attr"):
        entry.values.setdefault("fabric" if where == "fabric_attr" else "domain", value)
    elif key in ("type", "protocol") and where in ("", "ep_attr"):
        entry.values.setdefault(key, value)
    elif key in ("fabric", "domain", "version") and where == "":
        entry.values.setdefault(key, value)


def _listed(lines: list[Line], claimed: set[int]) -> tuple[list[str], set[int]]:
    """-l's providers: a bare ``name:`` line with an indented ``version:`` under it."""
    names, read = [], set[int]()
    rest = [ln for ln in lines if ln.no not in claimed]
    for a, b in zip(rest, rest[1:], strict=False):
        if (m := _LISTED.match(a.text)) is not None and (v := _LIST_VERSION.match(b.text)) is not None:
            names.append(f"{m.group(1)} {v.group(1)}")
            read |= {a.no, b.no}
    return names[:MAX_ENTRIES], read


def _asked(lines: list[Line], claimed: set[int]) -> tuple[str | None, set[int], bool]:
    """The provider ``fi_info -p`` asked for, the command lines read, and whether fi_getinfo failed (its line is
    left to the RDMA verbs lines' reader, which judges it)."""
    asked, commands, failed = None, set[int](), False
    for ln in lines:
        if "fi_info" in ln.text and (m := _COMMAND.search(ln.text)) is not None:
            asked = m.group(1) or asked
            commands.add(ln.no)
        elif "fi_getinfo" in ln.text and _NO_PROVIDER.search(ln.text) is not None:
            failed = True
    return asked, commands if failed or claimed else set(), failed


def _said(entries: list[_Entry]) -> str:
    """One note: each provider, its fabric and the domains it offers (endpoint type, protocol, version)."""
    by: dict[tuple[str, str], list[str]] = {}
    for e in entries:
        v = e.values
        what = ", ".join(x for x in (v.get("type"), v.get("protocol"), v.get("version") and f"v{v['version']}") if x)
        by.setdefault((e.provider, v.get("fabric", "?")), []).append(f"{v.get('domain', '?')} ({what})")
    parts = [f"provider {p} on fabric {f}: {'; '.join(d)}" for (p, f), d in by.items()]
    return f"fi_info: {len(entries)} entr{'y' if len(entries) == 1 else 'ies'}: " + " | ".join(parts)


def _devices(entries: list[_Entry]) -> list[Nic]:
    """The RDMA devices the RDMA providers' domains name (efa_0-rdm, efa_0-dgrm: efa_0; verbs' mlx5_0), once each."""
    names: dict[str, None] = {}
    for e in entries:
        core = e.provider.split(";")[0]
        domain = e.values.get("domain", "")
        if core in RDMA_PROVIDERS and domain and domain != "?":
            names[re.sub(r"-(rdm|dgrm|xrc)$", "", domain)] = None
    return [Nic(name, EFA if name.startswith("efa") else None, None, ()) for name in list(names)[:MAX_ENTRIES]]
