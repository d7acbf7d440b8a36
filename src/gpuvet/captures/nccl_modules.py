"""The modules an NCCL/RCCL debug log names when no channel or topology line gave their bus ids (issue 46,
batches S and T): the GPUs of NCCL's path dump ('GPU/600000 :GPU/100000 (2/44.0/NVB) …', each a busId in
hex), else each process's CUDA device, the [n] of its 'host:pid:tid [n]' prefix. A node's inventory is
what the log says of it: a module it names is listed, never left out because no tool listed it."""

from __future__ import annotations

import re

from gpuvet.captures import nccl_log
from gpuvet.captures.nccl_log import _log_line  # the log's own reading of a line (host, pid, [n])
from gpuvet.captures.records import SmiTextModule
from gpuvet.captures.smi_text import SmiText
from gpuvet.captures.text import Line

# NCCL's paths dump (graph/paths.cc): 'GPU/<busId> :' then each peer 'GPU/<busId> (hops/bw/type)'
_PATH_FROM = re.compile(r"^GPU/([0-9a-fA-F]{4,12})\s*:")
_USER = re.compile(r"^(?:user|username|your-?host(?:name)?|example)$", re.I)  # a user's word put for the host
_PATH_TO = re.compile(r"\bGPU/([0-9a-fA-F]{4,12}) \(\d")
_RANK_OF = re.compile(r"\brank (\d{1,6}) nranks (\d{1,6})\b", re.I)  # init.cc's comm line: a rank of the communicator


def listing(lines: list[Line], log: nccl_log.NcclLog) -> SmiText:
    """The modules named, on one host only (a device index or a bus id repeats from node to node); empty
    where the log names none, spans several hosts, or numbers every process's device alike
    (CUDA_VISIBLE_DEVICES: each process sees its one GPU as [0], so the index names no module), or whose one
    process's one device may be any GPU."""
    said = [at for ln in lines if "CCL" in ln.text and (at := _log_line(ln)) is not None
            and at.lib in ("NCCL", "RCCL")]
    hosts = sorted({at.host for at in said if at.host})
    if (log.one_host is None and hosts) or len(hosts) > 1 or log.redacted or (log.nodes or 1) > 1 or any(
            _USER.match(h) for h in hosts):
        return SmiText()  # a masked host ('user', '<hostname>') may stand for several nodes
    where = hosts[0] if hosts else "host not in the log"
    buses, ranks = _path_buses(said), _ranks(said)
    if buses:
        return SmiText(modules=[SmiTextModule(bus, "") for bus in buses], notes=[
            f"NCCL debug log: {len(buses)} module(s) named by bus id in NCCL's path dump on {where}; their model "
            "is not in the log", *ranks])
    devices = _devices(said)
    notes = [f"NCCL debug log: {len(devices)} module(s) named by the CUDA device of its processes' lines on {where} "
             f"(device {', '.join(map(str, devices))}): listed by CUDA index, bus id and model not in the log"]
    return SmiText(modules=[SmiTextModule(f"GPU {d}", "", {"Index": str(d)}) for d in devices],
                   notes=(notes if devices else []) + ranks)


def ranks_note(lines: list[Line]) -> list[str]:
    """The communicator's size and ranks (``_ranks``) as the log's lines say them, for a listing made elsewhere."""
    return _ranks([at for ln in lines if "rank" in ln.text and (at := _log_line(ln)) is not None])


def _ranks(said: list[nccl_log.LogLine]) -> list[str]:
    """The communicator's size and the ranks the lines name ('comm 0x… rank 6 nranks 8', 2.0-2.2's 'rank 6 nranks
    8'): how many processes the job has, whatever the excerpt shows of them (R14A)."""
    sizes = sorted({int(m.group(2)) for at in said if (m := _RANK_OF.search(at.message))})
    named = sorted({int(m.group(1)) for at in said if (m := _RANK_OF.search(at.message))})
    if not sizes:
        return []
    return [f"NCCL debug log: a communicator of {' / '.join(map(str, sizes))} ranks (nranks); the lines name rank(s) "
            f"{', '.join(map(str, named))}"]


def _path_buses(said: list[nccl_log.LogLine]) -> list[str]:
    """Each GPU the path dump names (the line's own and its peers'), as a bus id, in the order of its busId."""
    found: set[str] = set()
    for at in said:
        if (m := _PATH_FROM.match(at.message)) is not None:
            found.add(m.group(1).lower())
            found.update(x.lower() for x in _PATH_TO.findall(at.message))
    return [nccl_log.bus_of(x) for x in sorted(found, key=lambda x: int(x, 16))]


def _devices(said: list[nccl_log.LogLine]) -> list[int]:
    """The [n] each process printed, where no two processes printed the same one and at least two are named (a
    lone process's [0] may be any GPU CUDA_VISIBLE_DEVICES gave it: it names no module)."""
    by_pid: dict[int | None, set[int]] = {}
    for at in said:
        if at.dev is not None:
            by_pid.setdefault(at.pid, set()).add(at.dev)
    seen = [d for devs in by_pid.values() for d in devs]
    return sorted(seen) if len(seen) == len(set(seen)) > 1 else []
