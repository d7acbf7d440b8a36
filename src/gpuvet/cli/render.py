"""Rich renderings of inventories, link matrices and differences. Only the CLI imports this."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from gpuvet.backends.readings import Inventory, Unavailable

if TYPE_CHECKING:  # keep scipy (pulled in by the matrix) out of commands that do not need it
    from gpuvet.node.diff import Difference
    from gpuvet.node.matrix import LinkMatrix


def _v(value: Any, fmt: str = "{}") -> str:
    if isinstance(value, Unavailable) or value is None:
        return "[dim]n/a[/dim]"
    return fmt.format(value)


def banner(console: Console, simulated: bool, backend: str, name: str) -> None:
    if simulated:
        console.print(Panel(f"[bold yellow]SIMULATED[/] node [bold]{escape(name)}[/] — figures come from a model, "
                            "not from hardware", style="yellow"))
    else:
        console.print(f"[bold]{escape(name)}[/]  backend: {escape(backend)}")


def inventory(console: Console, inv: Inventory) -> None:
    banner(console, inv.simulated, inv.backend, inv.host.hostname)
    if inv.modules:
        t = Table(title=f"Modules ({len(inv.modules)})", title_justify="left")
        for col in ("id", "model", "memory", "PCIe cur/max", "power limit", "ECC", "bus id", "uuid"):
            t.add_column(col)
        for m in inv.modules:
            mem = _v(m.memory_bytes / 2**30 if isinstance(m.memory_bytes, int) else m.memory_bytes, "{:.1f} GiB")
            pcie = (f"gen{_v(m.pcie_gen_current)} x{_v(m.pcie_width_current)} / "
                    f"gen{_v(m.pcie_gen_max)} x{_v(m.pcie_width_max)}")
            model = m.model if m.in_catalog else f"{m.model} [dim](not in catalog)[/]"
            ecc = ("on" if m.ecc_enabled else "off") if isinstance(m.ecc_enabled, bool) else m.ecc_enabled
            t.add_row(m.id, model, mem, pcie, _v(m.power_limit_w, "{:.0f} W"), _v(ecc), _v(m.bus_id), _v(m.uuid))
        console.print(t)
    h, s = inv.host, inv.software
    host_mem = h.memory_bytes / 2**30 if isinstance(h.memory_bytes, int) else h.memory_bytes
    console.print(f"[bold]Host[/] {escape(h.hostname)}: {escape(_v(h.cpu_model))}, sockets {_v(h.sockets)}, "
                  f"cores {_v(h.cores_physical)}, threads {_v(h.threads_logical)}, NUMA nodes {_v(h.numa_nodes)}, "
                  f"memory {_v(host_mem, '{:.1f} GiB')}, {h.os}")
    console.print(f"[bold]Software[/] driver {_v(s.driver_version)}, CUDA driver API {_v(s.cuda_driver_version)}, "
                  f"NVML {_v(s.nvml_version)}, gpuvet {s.gpuvet_version}")
    for note in inv.notes:
        console.print(f"[cyan]note:[/] {escape(note)}")


_SHOWN = 16  # rows and columns of the matrix drawn; a bigger node also gets a summary of every pair


def matrix(console: Console, mat: LinkMatrix, simulated: bool) -> None:
    if not mat.modules:
        console.print("No modules: no link matrix to show.")
        return
    big = len(mat.modules) > _SHOWN
    t = Table(title="Link matrix (label; GB/s per direction for one transfer, "
              "modelled from link widths and speeds, not measured)" +
              (" [simulated]" if simulated else ""), title_justify="left")
    t.add_column("")
    shown = mat.modules[:_SHOWN]
    for m in shown:
        t.add_column(Text(m), justify="center")
    t.add_column("host", justify="center")
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
        left = len(mat.modules) - _SHOWN
        console.print(f"[dim]{left} more rows and columns left out; every pair is counted below; use --json for all.[/]")
        _pair_summary(console, mat)
    console.print("[dim]NV#/XG#/SD# = # bonded fabric links (direct or through a switch); PIX/PXB/PHB/NODE/SYS "
                  "as in nvidia-smi topo -m. ~ = a link on the path has no known speed (a typical one is assumed).[/]")


def _pair_summary(console: Console, mat: LinkMatrix) -> None:
    """Every ordered pair counted by its cell, and every module by its host path: on a node too
    big to draw, an odd pair shows up as a small count."""
    pairs = Counter(mat.cells.values())
    t = Table(title=f"All {len(mat.cells):,} module pairs by connection", title_justify="left")
    for col in ("label", "GB/s", "pairs"):
        t.add_column(col, justify="right" if col != "label" else "left")
    for cell, count in sorted(pairs.items(), key=lambda kv: (-kv[1], kv[0].label)):
        shown = "-" if cell.gbps is None else f"{'~' if cell.assumed else ''}{cell.gbps:.0f}"
        t.add_row(Text(cell.label), shown, f"{count:,}")
    console.print(t)
    hosts = Counter((hp.gbps, hp.assumed, hp.socket is None) for hp in mat.host.values())
    h = Table(title=f"All {len(mat.host):,} host paths by bandwidth", title_justify="left")
    for col in ("GB/s to host memory", "modules"):
        h.add_column(col, justify="right")
    for (gbps, assumed, no_socket), count in sorted(hosts.items(), key=lambda kv: -kv[1]):
        label = "no socket" if no_socket else ("-" if gbps is None else f"{'~' if assumed else ''}{gbps:.0f}")
        h.add_row(label, f"{count:,}")
    console.print(h)


def differences(console: Console, diffs: list[Difference]) -> None:
    if not diffs:
        console.print("[bold green]No differences[/] between the declared node and what was found.")
        return
    t = Table(title=f"Differences ({len(diffs)})", title_justify="left")
    for col in ("kind", "where", "expected", "found", "detail"):
        t.add_column(col)
    for d in diffs:
        where = d.module or ("-".join(d.between) if d.between else "")
        t.add_row(f"[red]{d.kind}[/]", where, d.expected or "", d.found or "", d.detail)
    console.print(t)
