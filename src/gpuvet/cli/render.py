"""Rich renderings of inventories, link matrices and differences. Only the CLI imports this."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from rich.console import Console
from rich.panel import Panel
from rich.text import Text

from gpuvet.backends.readings import Inventory, ModuleInfo, SoftwareInfo, Unavailable
from gpuvet.cli import term

if TYPE_CHECKING:  # keep scipy (pulled in by the matrix) out of commands that do not need it
    from gpuvet.backends.nic_readings import NicReadings
    from gpuvet.checks.nic_affinity import Judged
    from gpuvet.node.diff import Difference
    from gpuvet.node.matrix import LinkMatrix


def _v(value: object, fmt: str = "{}") -> str:
    if isinstance(value, Unavailable) or value is None:
        return "n/a"
    return fmt.format(value)


_NO_HOST = "not in the captured file"  # a capture that names no host (HostInfo.hostname None)


def banner(console: Console, simulated: bool, backend: str, name: str) -> None:
    if simulated:
        console.print(Panel(Text.assemble(("SIMULATED", "bold yellow"), " node ", (name, "bold"),
                                          " — figures come from a model, not from hardware"), style="yellow"))
    else:
        console.print(Text.assemble((name, "bold"), f"  backend: {backend}"))


def _pcie(m: ModuleInfo) -> str:
    now = _gen_width(m.pcie_gen_current, m.pcie_width_current)
    top = _gen_width(m.pcie_gen_max, m.pcie_width_max)
    return now if now == top else f"{now} (max {top})"


def _gen_width(gen: object, width: object) -> str:
    """'gen5 x16'; 'gen5', 'x16' or 'n/a' for what was not read (not 'genn/a xn/a')."""
    parts = [f"gen{_v(gen)}" if _v(gen) != "n/a" else "", f"x{_v(width)}" if _v(width) != "n/a" else ""]
    return " ".join(p for p in parts if p) or "n/a"


def inventory(console: Console, inv: Inventory) -> None:
    name = inv.host.hostname
    banner(console, inv.simulated, inv.backend, f"host {_NO_HOST}" if name is None else name)
    if inv.modules:
        wide = console.width >= 140  # room for the uuid beside the rest
        t = term.table(f"Modules ({len(inv.modules)})")
        term.column(t, "id", key=True)
        for col in ("model", "memory", "PCIe", "power limit", "ECC"):
            term.column(t, col, right=col in ("memory", "power limit"))
        term.column(t, "bus id", key=True)
        if wide:
            term.column(t, "uuid", key=True)
        for m in inv.modules:
            mem = _v(m.memory_bytes / 2**30 if isinstance(m.memory_bytes, int) else m.memory_bytes, "{:.1f} GiB")
            model = Text(str(m.model)) if m.in_catalog else Text.assemble(str(m.model), (" (not in catalog)", "dim"))
            ecc = ("on" if m.ecc_enabled else "off") if isinstance(m.ecc_enabled, bool) else m.ecc_enabled
            cells = [Text(m.id), model, Text(mem), Text(_pcie(m)), Text(_v(m.power_limit_w, "{:.0f} W")),
                     Text(_v(ecc)), Text(_v(m.bus_id))]
            t.add_row(*cells, *([Text(_v(m.uuid))] if wide else []))
        console.print(t)
        if not wide and any(not isinstance(m.uuid, Unavailable) and m.uuid for m in inv.modules):
            u = term.table("UUIDs")
            term.column(u, "id", key=True)
            term.column(u, "uuid", key=True)
            for m in inv.modules:
                u.add_row(Text(m.id), Text(_v(m.uuid)))
            console.print(u)
    _affinity(console, inv.modules)
    _mig_modes(console, inv.modules)
    h, s = inv.host, inv.software
    host_mem = h.memory_bytes / 2**30 if isinstance(h.memory_bytes, int) else h.memory_bytes
    console.print(Text.assemble(("Host ", "bold"), f"{h.hostname or _NO_HOST}: {_v(h.cpu_model)}, sockets {_v(h.sockets)}, "
                                f"cores {_v(h.cores_physical)}, threads {_v(h.threads_logical)}, NUMA nodes "
                                f"{_v(h.numa_nodes)}, memory {_v(host_mem, '{:.1f} GiB')}, {h.os}"))
    console.print(Text.assemble(("Software ", "bold"), f"driver {_v(s.driver_version)}, CUDA driver API "
                                f"{_v(s.cuda_driver_version)}{_runtime(s)}, NVML {_v(s.nvml_version)}, "
                                f"gpuvet {s.gpuvet_version}"))
    for note in inv.notes:
        console.print(Text.assemble(("note: ", "cyan"), note))


def _runtime(s: SoftwareInfo) -> str:
    """', CUDA runtime 6.5' where a capture (deviceQuery) printed the runtime a program was built with."""
    return f", CUDA runtime {s.cuda_runtime_version}" if isinstance(s.cuda_runtime_version, str) else ""


def _affinity(console: Console, modules: tuple[ModuleInfo, ...]) -> None:
    """The CPUs and NUMA nodes near each module, where a capture (topo -m) printed them."""
    if not any(isinstance(m.cpu_affinity, str) or isinstance(m.gpu_numa_id, int) for m in modules):
        return
    t = term.table("Affinity")
    for col in ("id", "CPU affinity", "NUMA affinity", "GPU NUMA ID"):
        term.column(t, col, key=col == "id")
    for m in modules:
        t.add_row(Text(m.id), Text(_v(m.cpu_affinity)), Text(_v(m.numa_node)), Text(_v(m.gpu_numa_id)))
    console.print(t)


def _mig_modes(console: Console, modules: tuple[ModuleInfo, ...]) -> None:
    """Each module's MIG mode (current, and pending where it was read), where any module's was read."""
    if not any(isinstance(m.mig_mode, bool) or isinstance(m.mig_mode_pending, bool) for m in modules):
        return
    t = term.table("MIG mode")
    for col in ("id", "current", "pending"):
        term.column(t, col, key=col == "id")
    for m in modules:
        t.add_row(Text(m.id), *(Text(_v(("enabled" if v else "disabled") if isinstance(v, bool) else v))
                                for v in (m.mig_mode, m.mig_mode_pending)))
    console.print(t)


def _nic_model(hca_type: str | None) -> str:
    from gpuvet.node.nic_catalog import find_nic_model

    model = find_nic_model(hca_type)
    return model.name if model else (hca_type or "unknown")


def nics_json(readings: NicReadings | Unavailable | None) -> dict[str, object]:
    """The NICs as inventory's JSON gives them: "nics" (one entry per device, its ports) and
    "peer_memory"; a reason instead where they could not be read, nothing where the source has none."""
    if readings is None:
        return {}
    if isinstance(readings, Unavailable):
        return {"nics": None, "nics_unavailable": readings.reason}
    peer = readings.peer_memory
    return {"nics": [{"device": n.device, "model": _nic_model(n.hca_type), "hca_type": n.hca_type, "bus_id": n.bus_id,
                      "firmware": n.firmware, "netdevs": list(n.netdevs), "numa_node": n.numa_node,
                      **({"board_id": n.board_id} if n.board_id else {}),
                      **({"pcie": {"gen": n.pcie.gen, "width": n.pcie.width, "gen_max": n.pcie.gen_max,
                                   "width_max": n.pcie.width_max}} if n.pcie else {}),
                      "ports": [{"port": p.port, "state": p.state, "physical_state": p.phys_state,
                                 "rate_gbps": p.rate_gbps, "width": p.width, "link_layer": p.link_layer,
                                 "error_counters": p.counters} for p in n.ports]} for n in readings.nics],
            "peer_memory": peer.reason if isinstance(peer, Unavailable) else peer}


def nics(console: Console, readings: NicReadings | Unavailable | None) -> None:
    """One row per NIC port: the device, its model, state, rate and link layer, where it sits."""
    if readings is None:
        return
    if isinstance(readings, Unavailable):
        console.print(Text.assemble(("NICs ", "bold"), f"not read: {readings.reason}"))
        return
    if not readings.nics:
        console.print(Text.assemble(("NICs ", "bold"), "no InfiniBand or RoCE NIC"))
        return
    t = term.table(f"NICs ({len(readings.nics)})")
    for col in ("device", "model", "port", "state", "rate", "layer", "bus id"):
        term.column(t, col, key=col in ("device", "bus id"), right=col in ("port", "rate"))
    for n in readings.nics:
        if not n.ports:  # named by a topology only: its ports are not in the capture
            t.add_row(Text(n.device), Text(_nic_model(n.hca_type)), Text("n/a"), Text("not in the capture"),
                      Text("n/a"), Text("n/a"), Text(n.bus_id or "n/a"))
        for p in n.ports:
            rate = f"{p.rate_gbps:g} Gb/s" if p.rate_gbps is not None else "n/a"
            t.add_row(Text(n.device), Text(_nic_model(n.hca_type)), Text(str(p.port)), Text(p.state), Text(rate),
                      Text(p.link_layer), Text(n.bus_id or "n/a"))
    console.print(t)
    peer = readings.peer_memory
    console.print(Text.assemble(("Peer memory ", "bold"), peer.reason if isinstance(peer, Unavailable)
                                else (peer or "none loaded (GPUDirect RDMA off)")))


def nearest_nic_json(judged: list[Judged]) -> list[dict[str, object]]:
    """topo's "nearest_nic": per module its nearest NIC and relation, the design's relation and
    what it rests on ("declared", "its peers"; null where none is known), and whether it is far."""
    return [{"module": j.found.module, "nic": j.found.nic, "relation": j.found.relation,
             "unread_nics": j.found.unread, "design_relation": j.design, "design_basis": j.basis or None,
             "far": j.far} for j in judged]


def nearest_nics(console: Console, judged: list[Judged]) -> None:
    """One row per module: its nearest NIC, their relation (topo -m's words), the design's."""
    t = term.table("Nearest NIC per module (PCIe relation as topo -m names it)")
    for col in ("module", "nearest NIC", "relation", "design", "verdict"):
        term.column(t, col, key=col != "verdict")
    for j in judged:
        n = j.found
        rel = str(n.relation) if n.relation else ("not read" if n.unread else "none reached")
        design = f"{j.design} ({j.basis})" if j.design else "n/a"
        verdict = Text("nic_far", "yellow") if j.far else Text("ok" if j.design and n.relation else "")
        t.add_row(Text(n.module), Text(n.nic or "-"), Text(rel), Text(design), verdict)
    console.print(t)


_SHOWN = 16  # rows and columns of the matrix drawn; a bigger node also gets a summary of every pair


def matrix(console: Console, mat: LinkMatrix, simulated: bool) -> None:
    if not mat.modules:
        console.print("No modules: no link matrix to show.")
        return
    width = max(max(len(m) for m in mat.modules), 4) + 2
    fits = max((console.width - width) // width - 1, 2)  # columns that fit beside the row labels and host
    big = len(mat.modules) > min(_SHOWN, fits)
    t = term.table("Link matrix (label; GB/s per direction for one transfer, modelled from link widths and "
                   "speeds, not measured)" + (" (simulated)" if simulated else ""))
    term.column(t, "", key=True)
    shown = mat.modules[:min(_SHOWN, fits)]
    for m in shown:
        t.add_column(Text(m), justify="center", no_wrap=True)
    t.add_column("host", justify="center", no_wrap=True)
    for a in shown:
        row = [Text(a, style="bold")]
        for b in shown:
            if a == b:
                row.append(Text("X"))
                continue
            c = mat.cells[(a, b)]
            row.append(Text(c.label + (f"\n{'~' if c.assumed else ''}{c.gbps:.0f}" if c.gbps is not None else "")))
        hp = mat.host[a]
        row.append(Text(f"{hp.socket or '-'}\n{'~' if hp.assumed else ''}{hp.gbps:.0f}" if hp.gbps is not None
                        else (hp.socket or "-")))
        t.add_row(*row)
    console.print(t)
    if big:
        left = len(mat.modules) - len(shown)
        console.print(Text(f"{left} more rows and columns left out; every pair is counted below; use --json for "
                           "all.", style="dim"))
        _pair_summary(console, mat)
    console.print(Text("NV#/XG#/SD# = # bonded fabric links (direct or through a switch); PIX/PXB/PHB/NODE/SYS "
                       "as in nvidia-smi topo -m. ~ = a link on the path has no known speed (a typical one is "
                       "assumed).", style="dim"))


def _pair_summary(console: Console, mat: LinkMatrix) -> None:
    """Every ordered pair counted by its cell, and every module by its host path: on a node too
    big to draw, an odd pair shows up as a small count."""
    from gpuvet.node.matrix import cell_counts

    pairs = cell_counts(mat.cells)
    t = term.table(f"All {len(mat.cells):,} module pairs by connection")
    for col in ("label", "GB/s", "pairs"):
        term.column(t, col, right=col != "label", key=col == "label")
    for cell, count in sorted(pairs.items(), key=lambda kv: (-kv[1], kv[0].label)):
        shown = "-" if cell.gbps is None else f"{'~' if cell.assumed else ''}{cell.gbps:.0f}"
        t.add_row(Text(cell.label), shown, f"{count:,}")
    console.print(t)
    hosts = Counter((hp.gbps, hp.assumed, hp.socket is None) for hp in mat.host.values())
    h = term.table(f"All {len(mat.host):,} host paths by bandwidth")
    for col in ("GB/s to host memory", "modules"):
        term.column(h, col, right=True)
    for (gbps, assumed, no_socket), count in sorted(hosts.items(), key=lambda kv: -kv[1]):
        label = "no socket" if no_socket else ("-" if gbps is None else f"{'~' if assumed else ''}{gbps:.0f}")
        h.add_row(label, f"{count:,}")
    console.print(h)


def differences(console: Console, diffs: list[Difference], unread: list[str] | None = None,
                unread_rates: list[str] | None = None) -> None:
    if unread:  # a nominal width is no reading: say what "no differences" does not cover
        console.print(Text(f"can't tell the PCIe width of {len(unread)} module(s): {', '.join(unread)} "
                           "(the source gave none; nvidia-smi -q or amd-smi static shows it)", style="yellow"))
    if unread_rates:  # an assumed fabric rate is no reading either
        console.print(Text(f"can't tell the rate of {len(unread_rates)} fabric link(s) (the source names links, "
                           "not speeds): their ~ figures assume a typical rate and are not compared with "
                           "the declared one", style="yellow"))
    if not diffs:
        console.print(Text.assemble(("No differences", "bold green"),
                                    " in what was read" if unread or unread_rates
                                    else " between the declared node and what was found",
                                    "."))
        return
    t = term.table(f"Differences ({len(diffs)})")
    for col in ("kind", "where", "expected", "found", "detail"):
        term.column(t, col, key=col in ("kind", "where"))
    for d in diffs:
        where = d.module or ("-".join(d.between) if d.between else "")
        t.add_row(Text(str(d.kind), style="red"), Text(where), Text(d.expected or ""), Text(d.found or ""),
                  Text(d.detail))
    console.print(t)
