"""One paste of several machines (issue 46: never merge without a word). A docs page or a thread pastes an
nvidia-smi table run under ``user@hostA:~$`` beside an lspci run under ``root@hostB:~#``: the shell prompts name
two hosts, and one host's PCI listing never makes the other's driver listing "lack" a module. Each line is the
host of the last prompt above it; where the prompts name two hosts or more, lspci's NVIDIA GPU functions listed
under a host whose driver listing the paste does not hold are kept out of the cross-check, and a note says which
host each listing is; one bus id the listings of two hosts both print is said (two machines' modules). pdsh/clush
'node1: ' prefixes (decorations.py) name the hosts the same way. A paste of one host (or none named) is left as read."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from gpuvet.node.bus import bus_key

if TYPE_CHECKING:
    from gpuvet.captures.links import LspciParse
    from gpuvet.captures.smi_text import SmiText
    from gpuvet.captures.text import Line

# bash/zsh prompts as pastes show them: 'user@host:~$ cmd', 'root@host:/# cmd', '[user@host dir]$ cmd',
# '(venv) user@host:~/x$ cmd', 'user@host ~ % cmd'; the host is the name after '@' up to ':', ' ' or ']'
_PROMPT = re.compile(
    r"^\s*(?:\([^()\s]{1,40}\)\s*)?\[?[A-Za-z_][\w.-]{0,31}@(?P<host>[A-Za-z0-9][\w-]{0,62})"
    r"(?:\.[\w.-]{1,190})?(?::[^\s#$%]{0,200}|\s[^\s#$%\]]{1,200})?\]?\s?[#$%](?:\s|$)"
)
_REV = re.compile(r"\s*\((?:rev|prog-if)\b.*$")  # lspci's '(rev a1) (prog-if 00 [VGA controller])'


def hosts_by_line(lines: list[Line]) -> dict[int, str]:
    """Line number -> the host of the last shell prompt above it (the prompt's own line included), where the
    prompts name two hosts or more; empty otherwise."""
    if not any("@" in ln.text for ln in lines):
        return {}
    out: dict[int, str] = {}
    host: str | None = None
    for ln in lines:
        if "@" in ln.text and (m := _PROMPT.match(ln.text)) is not None:
            host = m.group("host").lower()
        if host is not None:
            out[ln.no] = host
    return out if len(set(out.values())) > 1 else {}


def apart(lspci: LspciParse, smi: SmiText | None, lines: list[Line], prefixed: dict[int, str]) -> None:
    """Where the prompts name several hosts: lspci's NVIDIA GPU functions of a host whose driver listing
    (nvidia-smi's table, -q or its 'No devices were found') the paste does not hold are not compared with
    another host's listing; a note names each listing's host."""
    host_of = prefixed or hosts_by_line(lines)  # pdsh/clush's 'node1: ' prefixes (decorations.py) first
    if not host_of:
        return
    if smi is not None:
        smi.notes += _one_bus_two_hosts(smi, lines, host_of)
    if not lspci.gpus:
        return
    driver = _driver_hosts(lspci, smi, lines, host_of)
    if not driver:
        return
    kept: list[tuple[str, str, str | None]] = []
    other: list[tuple[str, str, str | None]] = []
    for bus, name in lspci.gpus:
        host = _host_of_bus(bus, lines, host_of, _lspci_line)
        (other if host is not None and host not in driver else kept).append((bus, name, host))
    if not other:
        return
    lspci.gpus = [(bus, name) for bus, name, _ in kept]
    on = ", ".join(sorted(driver))
    lspci.notes += [
        f"lspci lists NVIDIA GPU {bus_key(bus)} {_REV.sub('', name)} on host {host} (its prompt or prefix); the driver's "
        f"listing in this paste is host {on}'s: one machine's listing is not compared with another's"
        for bus, name, host in other
    ]


def _one_bus_two_hosts(smi: SmiText, lines: list[Line], host_of: dict[int, str]) -> list[str]:
    """nvidia-smi's listings under two hosts' prompts naming the same bus id: two machines' modules, which the
    listing read as one node's (one module per bus id) - said, never merged without a word."""
    shared: dict[str, set[str]] = {}
    for m in smi.modules:
        short = bus_key(m.bus_id)[5:]
        hosts = {
            h
            for ln in lines
            if short[:2] in ln.text.upper() and _smi_line(ln.text, short)
            if (h := host_of.get(ln.no)) is not None
        }
        if len(hosts) > 1:
            shared[bus_key(m.bus_id)] = hosts
    if not shared:
        return []
    named = sorted(set().union(*shared.values()))
    return [
        f"nvidia-smi: hosts {', '.join(named)} (their prompts or prefixes) each list {', '.join(sorted(shared)[:4])}"
        f"{' …' if len(shared) > 4 else ''}: two machines' modules of one bus id, read here as one module each "
        "(the last listing's readings); give each host's output as its own file to judge each machine"
    ]


def _driver_hosts(lspci: LspciParse, smi: SmiText | None, lines: list[Line], host_of: dict[int, str]) -> set[str]:
    """The hosts the driver's listings were printed on (each nvidia-smi module's line, 'No devices were found')."""
    hosts = {
        h
        for m in (smi.modules if smi else [])
        if m.bus_id
        if (h := _host_of_bus(m.bus_id, lines, host_of, _smi_line)) is not None
    }
    if lspci.smi_none is not None and (h := host_of.get(lspci.smi_none)) is not None:
        hosts.add(h)
    return hosts


def _lspci_line(text: str, short: str) -> bool:
    """lspci's device line of this function: it opens with the bus id (with or without its domain)."""
    s = text.lstrip().upper()
    return s.startswith(short) or s[5:].startswith(short)


def _smi_line(text: str, short: str) -> bool:
    """nvidia-smi's row (table) or 'GPU 00000000:04:00.0' (-q) of this module."""
    return short in text.upper()


def _host_of_bus(bus: str, lines: list[Line], host_of: dict[int, str], match: Callable[[str, str], bool]) -> str | None:
    """The host of the first line ``match`` says names ``bus``; None if no line does, or it sits before any prompt."""
    short = bus_key(bus)[5:]
    for ln in lines:
        if short[:2] in ln.text.upper() and match(ln.text, short):
            return host_of.get(ln.no)
    return None
