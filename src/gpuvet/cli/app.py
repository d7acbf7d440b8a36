"""`gpuvet`: the command line. Thin: each command parses, calls the library, renders.

Exit codes: 0 fine, 1 a finding (e.g. topology differences), 2 bad input or error.
"""

from __future__ import annotations

import errno
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from gpuvet import __version__
from gpuvet.cli.checks import output_file
from gpuvet.cli.jsonout import write_json

app = typer.Typer(
    help="Vet, benchmark, watch and plan GPU compute modules. Every command takes --json; "
    "--sim PRESET_OR_SPEC runs it on a simulated node (try: gpuvet topo --sim hgx-h200-8).",
    no_args_is_help=True, pretty_exceptions_enable=False, add_completion=False,
)
spec_app = typer.Typer(help="Node specs: presets, checking, showing, exporting the detected node.",
                       no_args_is_help=True)
app.add_typer(spec_app, name="spec")


def _add_commands() -> None:
    """Commands defined in their own modules (typer only: the work loads when a command runs)."""
    from gpuvet.cli import doctor, health, validate, watch
    from gpuvet.cli.bench import bench_app

    app.add_typer(bench_app, name="bench")
    app.command("validate", short_help="The three-layer baseline with verdicts, kept in the logbook.")(validate.validate)
    app.command("report", short_help="Write a kept run as one self-contained HTML file.")(validate.report)
    app.add_typer(validate.baseline_app, name="baseline")
    app.add_typer(validate.log_app, name="log")
    app.command("watch", short_help="Telemetry, detectors, overheating forecast, hot-plug, Prometheus.")(watch.watch)
    app.command("events", short_help="What happened: events kept in the logbook.")(watch.events)
    app.command("doctor", short_help="Ordered troubleshooting that names the cause.")(doctor.doctor)
    app.command("health", short_help="The fast pre/post-job check for Slurm, NHC and node-problem-detector.")(health.health)
    from gpuvet.cli.plan import plan_app

    app.add_typer(plan_app, name="plan")
    from gpuvet.cli.fleet import fleet_app

    app.add_typer(fleet_app, name="fleet")


_add_commands()

SimOpt = Annotated[str | None, typer.Option(
    "--sim", help="Simulate this node: a preset name (gpuvet spec presets) or a spec YAML file.")]
FromOpt = Annotated[list[str] | None, typer.Option(
    "--from", help="Read captured files instead of this machine: `nvidia-smi topo -m`, `nvidia-smi -q` (text or "
    "-x XML), or any capture doctor reads (see docs/doctor.md); repeat to combine.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON for scripts instead of tables.")]


def _console() -> Any:
    from rich.console import Console

    return Console()


def _print_json(data: Any) -> None:
    from gpuvet.report.jsonable import to_jsonable

    write_json(to_jsonable(data), indent=2)


def _backend(sim: str | None, from_files: list[str] | None) -> Any:
    from gpuvet.backends.select import open_backend

    if sim and from_files:
        from gpuvet.errors import GpuvetError

        raise GpuvetError("--sim and --from both given", fix="use one source at a time.")
    return open_backend(sim=sim, from_files=from_files)


@app.command()
def inventory(sim: SimOpt = None, from_: FromOpt = None, as_json: JsonOpt = False) -> None:
    """List the modules, the host and the software versions.

    Without GPU modules this shows the host and says why no module was found.
    """
    backend = _backend(sim, from_)
    try:
        inv = backend.inventory()
    finally:
        backend.close()
    if as_json:
        _print_json({"simulated": inv.simulated, "backend": inv.backend, "modules": inv.modules,
                     "host": inv.host, "software": inv.software, "notes": inv.notes})
        return
    from gpuvet.cli import render

    render.inventory(_console(), inv)


@app.command(short_help="How modules connect, and what differs from the declared node.")
def topo(sim: SimOpt = None, from_: FromOpt = None,
         expect: Annotated[str | None, typer.Option(
             "--expect", help="Compare with this declared node (preset or spec file); exit 1 on differences.")] = None,
         as_json: JsonOpt = False) -> None:
    """Show how modules connect (link matrix with bandwidths) and, with --expect, what differs
    from the declared node: missing_module, extra_module, link_down, link_degraded,
    wiring_mismatch."""
    from gpuvet.node.matrix import link_matrix

    backend = _backend(sim, from_)
    try:
        found = backend.node()
    finally:
        backend.close()
    diffs = None
    if expect:
        from gpuvet.node.build import build_node
        from gpuvet.node.diff import diff_nodes
        from gpuvet.node.spec import load_spec

        spec, where = load_spec(expect)
        diffs = diff_nodes(build_node(spec, where), found)
    mat = link_matrix(found)
    if as_json:
        _print_topo_json(_topo_json(backend, found, mat, diffs))
    else:
        from gpuvet.cli import render

        console = _console()
        render.banner(console, backend.simulated, backend.name, found.name)
        render.matrix(console, mat, backend.simulated)
        from rich.text import Text

        for note in backend.notes():  # what a capture left out or skipped, printed literally
            console.print(Text(note, style="dim"))
        if diffs is not None:
            render.differences(console, diffs)
    if diffs:
        raise typer.Exit(1)


def _matrix_rows(mat: Any) -> dict[str, dict[str, Any]]:
    """Cells are shared objects (one per distinct connection): convert each once."""
    from gpuvet.report.jsonable import to_jsonable

    done: dict[int, Any] = {}
    rows: dict[str, dict[str, Any]] = {a: {} for a in mat.modules}
    for (a, b), cell in mat.cells.items():
        key = id(cell)
        if key not in done:
            done[key] = to_jsonable(cell)
        rows[a][b] = done[key]
    return rows


def _print_topo_json(data: dict[str, Any]) -> None:
    """Like ``_print_json``, with one matrix row per line: json's indenting encoder is pure
    Python, and a 576-module matrix has 331,200 cells."""
    import json

    from gpuvet.report.jsonable import to_jsonable

    rows, data["matrix"] = data["matrix"], "\0matrix"  # keeps its place among the keys
    text = json.dumps(to_jsonable(data), indent=2)
    body = ",\n".join(f"    {json.dumps(a)}: {json.dumps(row)}" for a, row in rows.items())
    text = text.replace('"\\u0000matrix"', "{\n" + body + "\n  }" if rows else "{}", 1)
    sys.stdout.write(text + "\n")


def _topo_json(backend: Any, node: Any, mat: Any, diffs: Any) -> dict[str, Any]:
    from gpuvet.report.jsonable import drop_none, to_jsonable

    out: dict[str, Any] = {
        "simulated": backend.simulated, "backend": backend.name, "node": node.name,
        "modules": [{"id": m.id, "model": m.model.name, "bus_id": m.bus_id, "uuid": m.uuid} for m in node.modules],
        "links": [{"between": [lk.a, lk.b], "kind": str(lk.kind), "width": lk.width, "gen": lk.gen,
                   "bandwidth_gbps": lk.bandwidth_gbps, "up": lk.up} for lk in node.links],
        "matrix": _matrix_rows(mat),
        "host_paths": to_jsonable(mat.host),
        "matrix_basis": "modelled: bottleneck of the declared or detected link capacities, not a measurement",
        "notes": list(backend.notes()),
    }
    if diffs is not None:
        out["differences"] = [drop_none(to_jsonable(d)) for d in diffs]
    return out


@spec_app.command("presets")
def spec_presets(as_json: JsonOpt = False) -> None:
    """List the built-in presets (usable wherever a spec is accepted)."""
    from gpuvet.node.build import build_node
    from gpuvet.node.spec import load_spec, preset_names

    rows: list[dict[str, Any]] = []
    for name in preset_names():
        spec, where = load_spec(name)
        node = build_node(spec, where)
        rows.append({"name": name, "modules": len(node.modules), "model": node.modules[0].model.name,
                     "fabric": spec.fabric.kind if spec.fabric else "pcie", "description": spec.description})
    if as_json:
        _print_json(rows)
        return
    from rich.table import Table

    t = Table(title="Presets")
    for col in ("name", "modules", "model", "fabric", "description"):
        t.add_column(col)
    for r in rows:
        t.add_row(r["name"], str(r["modules"]), r["model"], r["fabric"], r["description"] or "")
    _console().print(t)


@spec_app.command("show")
def spec_show(ref: Annotated[str, typer.Argument(help="Preset name or spec file.")]) -> None:
    """Print a spec with its base merged in (what gpuvet will use)."""
    from gpuvet.node.spec import dump_spec, load_spec

    spec, _ = load_spec(ref)
    sys.stdout.write(dump_spec(spec))


@spec_app.command("check")
def spec_check(ref: Annotated[str, typer.Argument(help="Preset name or spec file.")],
               as_json: JsonOpt = False) -> None:
    """Validate a spec: fields, module models, link names, fault targets. Exit 2 if invalid."""
    from gpuvet.backends.sim import SimBackend

    backend = SimBackend.from_ref(ref)
    node = backend.declared
    summary: dict[str, Any] = {"valid": True, "name": node.name, "modules": len(node.modules), "links": len(node.links),
               "faults": [f.kind for f in backend.spec.faults]}
    if as_json:
        _print_json(summary)
    else:
        from rich.markup import escape

        _console().print(f"[green]valid[/]: {escape(node.name)}, {len(node.modules)} modules, {len(node.links)} links, "
                         f"faults: {', '.join(summary['faults']) or 'none'}")


@spec_app.command("export")
def spec_export(sim: SimOpt = None, from_: FromOpt = None,
                output: Annotated[Path | None, typer.Option("-o", "--output", help="Write here (default: stdout).",
                                                                    callback=output_file)] = None
                ) -> None:
    """Write the detected node as a spec that loads back unchanged (use it later with --expect)."""
    from gpuvet.node.export import export_yaml

    backend = _backend(sim, from_)
    try:
        text = export_yaml(backend.node())
    finally:
        backend.close()
    if output:
        output.write_text(text, encoding="utf-8")
        print(f"wrote {output}")
    else:
        sys.stdout.write(text)


@app.command()
def catalog(as_json: JsonOpt = False) -> None:
    """Module models gpuvet knows, with datasheet figures (dense TFLOPS, per-direction GB/s)."""
    from gpuvet.node.catalog import CATALOG, DTYPES

    if as_json:
        _print_json(list(CATALOG.values()))
        return
    from rich.table import Table

    t = Table(title="Catalog (dense TFLOPS; GB/s per direction)")
    for col in ("model", "memory GiB", "mem GB/s", *DTYPES, "fabric GB/s", "PCIe", "TDP W"):
        t.add_column(col)
    for m in CATALOG.values():  # memory: the driver's total (nvidia-smi's MiB) in GiB
        t.add_row(m.name, f"{m.memory_gib:.1f}" if m.memory_gib else "-", f"{m.memory_bw_gbps:g}",
                  *[f"{m.tflops[d]:g}" if d in m.tflops else "-" for d in DTYPES],
                  f"{m.fabric_gbps:g}" if m.fabric_gbps else "-", f"gen{m.pcie_gen} x{m.pcie_width}", f"{m.tdp_w:g}")
    _console().print(t)


def _version_callback(value: bool) -> None:
    if value:
        print(f"gpuvet {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: Annotated[bool, typer.Option("--version", callback=_version_callback, is_eager=True,
                                                help="Print the version.")] = False) -> None:
    """gpuvet: vet GPU modules, links and drivers with evidence."""


def _say(text: str) -> None:
    """Print a message on stderr literally (no markup), whatever it holds; this cannot fail."""
    try:
        sys.stderr.write(text.encode("utf-8", "backslashreplace").decode("utf-8") + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # stderr closed or full: nothing more can be said
        pass


_OS_FIXES = {errno.ENOSPC: "free space on that disk (gpuvet kept what it had written).",
             errno.EDQUOT: "free space or raise the quota.",
             errno.EACCES: "check the permissions of the path, or point GPUVET_HOME / the flag elsewhere.",
             errno.EPERM: "check the permissions of the path, or point GPUVET_HOME / the flag elsewhere.",
             errno.EROFS: "the file system is read-only: write somewhere else.",
             errno.ENOENT: "check the path."}


def _os_error(exc: OSError) -> str:
    where = f" ({exc.filename})" if exc.filename else ""
    fix = _OS_FIXES.get(exc.errno or 0, "check the path and the disk.")
    return f"error: {exc.strerror or exc}{where}. Fix: {fix}"


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit code (0 ok, 1 finding, 2 error). Errors are printed as one
    literal paragraph: never through markup, never a traceback for bad input or a full disk."""
    from gpuvet.errors import GpuvetError

    try:
        app(args=argv, prog_name="gpuvet")
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 2)
    except GpuvetError as exc:
        _say(f"error: {exc.message}")
        return 2
    except BrokenPipeError:
        return 0
    except OSError as exc:  # a full disk, a read-only or missing folder: the environment, not a bug
        _say(_os_error(exc))
        return 2
    return 0
