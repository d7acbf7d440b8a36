"""`gpuvet`: the command line. Thin: each command parses, calls the library, renders.

Exit codes: 0 fine, 1 a finding (e.g. topology differences), 2 bad input or error.
"""

from __future__ import annotations

import errno
import gc
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from gpuvet import __version__
from gpuvet.cli.checks import output_file
from gpuvet.cli.common import NodeOpt, SimOpt, chosen_node
from gpuvet.cli.jsonout import write_json
from gpuvet.cli.lazy import Lazy, LazyCommands, lazy_group

if TYPE_CHECKING:
    from rich.console import Console
    from typer._click.core import Command, Context, Parameter

    from gpuvet.backends.base import Backend
    from gpuvet.backends.nic_readings import NicReadings
    from gpuvet.backends.readings import Unavailable
    from gpuvet.checks.nics import NicVerdict
    from gpuvet.node.diff import Difference
    from gpuvet.node.matrix import LinkMatrix
    from gpuvet.node.model import Node

# Commands in their own modules, imported only when looked up (to run, or for --help): `topo`
# does not load doctor, watch, bench, plan or fleet. ORDER is the order --help lists them in.
_LAZY = {
    "validate": Lazy("gpuvet.cli.validate", "validate", "The three-layer baseline with verdicts, kept in the logbook."),
    "report": Lazy("gpuvet.cli.validate", "report", "Write a kept run as one self-contained HTML file."),
    "watch": Lazy("gpuvet.cli.watch", "watch", "Telemetry, detectors, overheating forecast, hot-plug, Prometheus."),
    "events": Lazy("gpuvet.cli.watch", "events", "What happened: events kept in the logbook."),
    "doctor": Lazy("gpuvet.cli.doctor", "doctor", "Ordered troubleshooting that names the cause."),
    "health": Lazy("gpuvet.cli.health", "health",
                   "The fast pre/post-job check for Slurm, NHC and node-problem-detector."),
    "bench": Lazy("gpuvet.cli.bench", "bench_app"),
    "baseline": Lazy("gpuvet.cli.validate", "baseline_app"),
    "log": Lazy("gpuvet.cli.validate", "log_app"),
    "plan": Lazy("gpuvet.cli.plan", "plan_app"),
    "fleet": Lazy("gpuvet.cli.fleet", "fleet_app"),
    "module": Lazy("gpuvet.cli.module", "module_app"),
}
_ORDER = ["validate", "report", "watch", "events", "doctor", "health", "inventory", "topo", "catalog",
          "spec", "bench", "baseline", "log", "module", "plan", "fleet"]

app = typer.Typer(
    help="Vet, benchmark, watch and plan GPU compute modules. Every command takes --json; "
    "--node PRESET_OR_SPEC runs it on a simulated node (try: gpuvet topo --node hgx-h200-8).",
    no_args_is_help=True, pretty_exceptions_enable=False, add_completion=False,
    cls=lazy_group(_LAZY, _ORDER, lambda cmd: _with_metavars(cmd)),
)
spec_app = typer.Typer(help="Node specs: presets, checking, showing, exporting the detected node.",
                       no_args_is_help=True)
app.add_typer(spec_app, name="spec")

FromOpt = Annotated[list[str] | None, typer.Option(
    "--from", help="Read captured files instead of this machine: `nvidia-smi topo -m`, `nvidia-smi -q` (text or "
    "-x XML), or any capture doctor reads (see docs/doctor.md); give --from once per file to combine: "
    "--from a.txt --from b.txt.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON for scripts instead of tables.")]


def _console() -> Console:
    from gpuvet.cli import term

    return term.console()


def _print_json(data: object) -> None:
    from gpuvet.report.jsonable import to_jsonable

    write_json(to_jsonable(data), indent=2)


def _backend(sim: str | None, from_files: list[str] | None) -> Backend:
    from gpuvet.backends.select import open_backend

    if sim and from_files:
        from gpuvet.errors import GpuvetError

        raise GpuvetError("--node and --from both given", fix="use one source at a time.")
    return open_backend(sim=sim, from_files=from_files)


@app.command()
def inventory(node_ref: NodeOpt = None, sim: SimOpt = None, from_: FromOpt = None, as_json: JsonOpt = False) -> None:
    """List the modules, the host and the software versions.

    Without GPU modules this shows the host and says why no module was found.
    """
    sim = chosen_node(node_ref, sim)
    backend = _backend(sim, from_)
    try:
        inv, nics = backend.inventory(), backend.listed_nics()
    finally:
        backend.close()
    from gpuvet.cli import render

    if as_json:
        _print_json({"simulated": inv.simulated, "backend": inv.backend, "modules": inv.modules,
                     "host": inv.host, "software": inv.software, "notes": inv.notes, **render.nics_json(nics)})
        return
    render.inventory(_console(), inv)
    render.nics(_console(), nics)


@app.command(short_help="How modules connect, and what differs from the declared node.")
def topo(node_ref: NodeOpt = None, sim: SimOpt = None, from_: FromOpt = None,
         expect: Annotated[str | None, typer.Option(
             "--expect", help="Compare with this declared node (preset or spec file); exit 1 on differences.")] = None,
         as_json: JsonOpt = False) -> None:
    """Show how modules connect (link matrix with bandwidths) and, with --expect, what differs
    from the declared node: missing_module, extra_module, link_down, link_degraded,
    wiring_mismatch."""
    from gpuvet.node.matrix import link_matrix

    sim = chosen_node(node_ref, sim)
    backend = _backend(sim, from_)
    try:
        found, nics = backend.node(), backend.nics()
    finally:
        backend.close()
    diffs = None
    declared = None
    unread: list[str] = []
    rates: list[str] = []
    if expect:
        from gpuvet.node.build import build_node
        from gpuvet.node.diff import diff_nodes, unread_rates, unread_widths
        from gpuvet.node.spec import load_spec

        spec, where = load_spec(expect)
        declared = build_node(spec, where)
        diffs = diff_nodes(declared, found)
        unread = unread_widths(declared, found)
        rates = unread_rates(declared, found)
    diffs, unlisted = _modules_unlisted(backend, found, diffs)
    nic_diffs = _nic_differences(nics, declared, found)
    from gpuvet.checks import nic_affinity

    design = declared if declared is not None else (found if backend.simulated else None)  # a spec is its design
    nearest = nic_affinity.judge(found, design, "declared" if declared is not None else "the spec")
    mat = link_matrix(found)
    from gpuvet.cli.exits import verdict

    with verdict(1 if diffs or nic_diffs else 0):
        if as_json:
            data = _topo_json(backend, found, mat, diffs, declared, unread, rates)
            from gpuvet.cli import render

            data.update(render.nics_json(nics))
            if nic_affinity.nics_of(found):
                data["nearest_nic"] = render.nearest_nic_json(nearest)
            if nic_diffs is not None:
                data["nic_differences"] = [{"kind": v.kind, "nic": v.nic, "reason": v.reason, "fix": v.fix}
                                           for v in nic_diffs]
            if unlisted and isinstance(compared := data.get("compared"), dict):
                compared["modules_unlisted"] = unlisted
            _print_topo_json(data, _matrix_rows(mat))
        else:
            _print_topo(backend, found, mat, diffs if diffs or not nic_diffs else None, unread, rates)
            if unlisted:
                from rich.text import Text

                _console().print(Text(f"can't tell the {len(unlisted)} declared module(s) ({', '.join(unlisted)}): "
                                      "the captured files list no module (give nvidia-smi -q, nvidia-smi -L or "
                                      "topo -m taken on the node)", style="yellow"))
            if nic_affinity.nics_of(found):
                from gpuvet.cli import render as shown

                shown.nearest_nics(_console(), nearest)
            _print_topo_nics(nics, nic_diffs)


def _modules_unlisted(backend: Backend, found: Node, diffs: list[Difference] | None
                      ) -> tuple[list[Difference] | None, list[str]]:
    """Captured files that list no module (an ibstat alone) judge none: the declared modules are can't-tell,
    never missing (newcomer 56); returns the differences left and the modules not judged."""
    if diffs is None or not backend.captured or found.modules:
        return diffs, []
    unlisted = [d.module for d in diffs if d.kind == "missing_module" and d.module]
    return [d for d in diffs if d.kind != "missing_module"], unlisted


def _nic_differences(nics: NicReadings | Unavailable | None, declared: Node | None,
                     found: Node | None = None) -> list[NicVerdict] | None:
    """With --expect: the NICs found against the declared ones (missing, down, below the declared
    model's rate; a module whose nearest NIC is farther than the design's, nic_far); None without
    a declaration, or where the source neither lists NICs nor places any in the PCIe tree."""
    from gpuvet.backends.nic_readings import NicReadings
    from gpuvet.checks import nic_affinity
    from gpuvet.checks import nics as nic_checks

    placed = found is not None and bool(nic_affinity.nics_of(found))
    if declared is None or not (isinstance(nics, NicReadings) or placed):
        return None
    out = nic_checks.ports(nics, nic_checks.declared_nics(declared)) if isinstance(nics, NicReadings) else []
    return out + (nic_affinity.far(found, declared) if found is not None and placed else [])


def _print_topo_nics(nics: NicReadings | Unavailable | None, diffs: list[NicVerdict] | None) -> None:
    from rich.text import Text

    from gpuvet.cli import render

    console = _console()
    render.nics(console, nics)
    if diffs:
        console.print(Text(f"{len(diffs)} NIC difference(s) from the declared node:", style="bold"))
    for v in diffs or ():
        console.print(Text.assemble(("  ", ""), f"{v.kind}: ", v.reason))


def _print_topo(backend: Backend, found: Node, mat: LinkMatrix, diffs: list[Difference] | None,
                unread: list[str], rates: list[str] | None = None) -> None:
    from rich.text import Text

    from gpuvet.cli import render

    console = _console()
    render.banner(console, backend.simulated, backend.name, found.name)
    render.matrix(console, mat, backend.simulated)
    for note in backend.notes():  # what a capture left out or skipped, printed literally
        console.print(Text(note, style="dim"))
    if diffs is not None:
        render.differences(console, diffs, unread, rates)


def _matrix_rows(mat: LinkMatrix) -> dict[str, dict[str, object]]:
    """Cells are shared objects (one per distinct connection): convert each once."""
    from gpuvet.node.matrix import cell_items
    from gpuvet.report.jsonable import to_jsonable

    done: dict[int, object] = {}
    rows: dict[str, dict[str, object]] = {a: {} for a in mat.modules}
    for (a, b), cell in cell_items(mat.cells):
        key = id(cell)
        if key not in done:
            done[key] = to_jsonable(cell)
        rows[a][b] = done[key]
    return rows


def _print_topo_json(data: dict[str, object], rows: dict[str, dict[str, object]]) -> None:
    """Like ``_print_json``, with one matrix row per line: json's indenting encoder is pure
    Python, and a 576-module matrix has 331,200 cells."""
    import json

    from gpuvet.report.jsonable import to_jsonable

    data["matrix"] = "\0matrix"  # keeps its place among the keys
    text = json.dumps(to_jsonable(data), indent=2)
    body = ",\n".join(f"    {json.dumps(a)}: {json.dumps(row)}" for a, row in rows.items())
    text = text.replace('"\\u0000matrix"', "{\n" + body + "\n  }" if rows else "{}", 1)
    sys.stdout.write(text + "\n")


def _topo_json(backend: Backend, node: Node, mat: LinkMatrix, diffs: list[Difference] | None,
               declared: Node | None = None, unread: list[str] | None = None,
               rates: list[str] | None = None) -> dict[str, object]:
    from gpuvet.report.jsonable import drop_none, to_jsonable

    out: dict[str, object] = {
        "simulated": backend.simulated, "backend": backend.name, "node": node.name,
        "modules": [{"id": m.id, "model": m.model.name, "bus_id": m.bus_id, "uuid": m.uuid} for m in node.modules],
        "links": [{"between": [lk.a, lk.b], "kind": str(lk.kind), "width": lk.width, "width_known": lk.width_known,
                   "gen": lk.gen,
                   "bandwidth_gbps": lk.bandwidth_gbps, "up": lk.up} for lk in node.links],
        "matrix": None,  # the rows are written apart, one line each (_print_topo_json)
        "host_paths": to_jsonable(mat.host),
        "matrix_basis": "modelled: bottleneck of the declared or detected link capacities, not a measurement",
        "notes": list(backend.notes()),
    }
    if diffs is not None:
        out["differences"] = [drop_none(to_jsonable(d)) for d in diffs]
    if declared is not None:  # what "no differences" rests on: a capture without fabric never compared it
        out["compared"] = {"declared": declared.name, "modules": len(declared.modules), "links": len(declared.links),
                           "fabric_known": node.fabric_known, "pcie_known": node.pcie_known,
                           "pcie_width_unread": list(unread or []), "fabric_rate_unread": list(rates or [])}
    return out


@dataclass(frozen=True)
class Preset:
    """One row of spec presets (its JSON keys: name, modules, model, fabric, description)."""

    name: str
    modules: int
    model: str
    fabric: str
    description: str | None


@spec_app.command("presets")
def spec_presets(as_json: JsonOpt = False) -> None:
    """List the built-in presets (usable wherever a spec is accepted)."""
    from gpuvet.node.build import build_node
    from gpuvet.node.spec import load_spec, preset_names

    rows: list[Preset] = []
    for name in preset_names():
        spec, where = load_spec(name)
        node = build_node(spec, where)
        rows.append(Preset(name, len(node.modules), node.modules[0].model.name,
                           spec.fabric.kind if spec.fabric else "pcie", spec.description))
    if as_json:
        _print_json(rows)
        return
    from rich.text import Text

    from gpuvet.cli import term

    t = term.table("Presets")
    for col in ("name", "modules", "model", "fabric", "description"):
        term.column(t, col, key=col == "name", right=col == "modules")
    for r in rows:
        t.add_row(Text(r.name), str(r.modules), Text(r.model), Text(r.fabric), Text(r.description or ""))
    _console().print(t)


SpecArg = Annotated[str, typer.Argument(metavar="SPEC", help="A preset name (gpuvet spec presets) or a spec "
                                        "YAML file.")]


@spec_app.command("show")
def spec_show(ref: SpecArg, as_json: Annotated[bool, typer.Option(
        "--json", help="Print the spec as JSON (the same fields as the YAML) instead of YAML.")] = False) -> None:
    """Print a spec with its base merged in (what gpuvet will use), as YAML or JSON."""
    from gpuvet.node.spec import dump_spec, load_spec

    spec, _ = load_spec(ref)
    if as_json:
        _print_json({"name": spec.name, **spec.model_dump(mode="json", exclude_none=True, exclude_defaults=True)})
        return
    sys.stdout.write(dump_spec(spec))


@spec_app.command("check")
def spec_check(ref: SpecArg, as_json: JsonOpt = False) -> None:
    """Validate a spec: fields, module models, link names, fault targets. Exit 2 if invalid."""
    from gpuvet.backends.select import load_node

    loaded = load_node(ref)
    node = loaded.declared
    faults = [f.kind for f in loaded.faults]
    if as_json:
        _print_json({"valid": True, "name": node.name, "modules": len(node.modules), "links": len(node.links),
                     "faults": faults})
    else:
        from rich.text import Text

        _console().print(Text.assemble(("valid", "green"), f": {node.name}, {len(node.modules)} modules, "
                                       f"{len(node.links)} links, faults: {', '.join(faults) or 'none'}"))


@spec_app.command("export")
def spec_export(node_ref: NodeOpt = None, sim: SimOpt = None, from_: FromOpt = None,
                output: Annotated[Path | None, typer.Option("-o", "--output", metavar="FILE",
                                                            help="Write the YAML spec to FILE (default: stdout).",
                                                            callback=output_file)] = None,
                as_json: Annotated[bool, typer.Option("--json", help="Print the spec as JSON on stdout; with -o, "
                                                      "{\"wrote\": FILE} instead of the note.")] = False,
                allow_missing: Annotated[bool, typer.Option("--allow-missing", help="Export even when the node "
                                                            "lacks a module its design has (the spec then "
                                                            "expects the gap).")] = False,
                allow_empty: Annotated[bool, typer.Option("--allow-empty", help="Export even when no module was "
                                                          "found (the spec then declares an empty node).")]
                = False) -> None:
    """Write the detected node's design as a spec (use it later with --expect). Links are written
    at their design (the module's maximum PCIe width, the catalog's fabric), not at a degraded
    state found: what differed is named on stderr and in the spec's description. A node that
    lacks a module its design has is refused unless --allow-missing; one where no module was
    found, unless --allow-empty."""
    from gpuvet.errors import GpuvetError
    from gpuvet.node.export import EMPTY_NOTE, as_designed, empty_node_error, export_yaml, node_to_spec

    sim = chosen_node(node_ref, sim)
    backend = _backend(sim, from_)
    try:
        found = backend.node()
        widths = {m.id: m.pcie_width_max for m in backend.inventory().modules if isinstance(m.pcie_width_max, int)}
        why_none = backend.why_no_modules
    finally:
        backend.close()
    empty = not found.modules
    if empty and not allow_empty:  # as --expect, an empty spec holds a node whose every module is gone as designed
        raise empty_node_error(why_none, ", ".join(from_) if from_ else sim or "this machine")
    if empty:
        _say(f"note: {EMPTY_NOTE}")
    designed = as_designed(found, widths)
    if designed.missing and not allow_missing:  # the gap would become the expectation: never flagged again
        raise GpuvetError("the node lacks a module its design has: " + "; ".join(designed.missing), where="spec export",
                          fix="export from the node when every module is there (a spec used as --expect must hold "
                              "the design), or give --allow-missing to write the modules found anyway.")
    node, notes = designed.node, designed.not_as_found
    for note in notes:
        _say(f"note: not exported as found: {note}")
    if output:
        from gpuvet.files import write_atomic

        write_atomic(output, export_yaml(node, notes, empty), where="-o")
        if as_json:
            _print_json({"wrote": str(output), **({"not_as_found": list(notes)} if notes else {}),
                         **({"empty": True} if empty else {})})
        else:
            from gpuvet.cli.literal import literal

            print(literal(f"wrote {output}"))
    elif as_json:
        spec = node_to_spec(node, notes, empty)
        _print_json({"name": spec.name, **spec.model_dump(mode="json", exclude_none=True, exclude_defaults=True)})
    else:
        sys.stdout.write(export_yaml(node, notes, empty))


@app.command()
def catalog(as_json: JsonOpt = False) -> None:
    """Module models gpuvet knows, with datasheet figures (dense TFLOPS, per-direction GB/s)."""
    from gpuvet.node.catalog import CATALOG, DTYPES

    if as_json:
        _print_json(list(CATALOG.values()))
        return
    from rich.text import Text

    from gpuvet.cli import term

    console = _console()
    t = term.table("Catalog (GB/s per direction; memory: the driver's total, nvidia-smi's MiB, in GiB)")
    for col in ("model", "memory", "memory GB/s", "fabric GB/s", "PCIe", "TDP"):
        term.column(t, col, key=col == "model", right=col not in ("model", "PCIe"))
    for m in CATALOG.values():
        t.add_row(Text(m.name), f"{m.memory_gib:.1f} GiB" if m.memory_gib else "-", term.sig(m.memory_bw_gbps),
                  term.sig(m.fabric_gbps) if m.fabric_gbps else "-",
                  f"gen{m.pcie_gen} x{m.pcie_width}" if m.pcie_gen else "-", term.sig(m.tdp_w, "W"))  # none: Ascend OAM
    console.print(t)
    f = term.table("Dense TFLOPS (datasheet, without sparsity)")
    term.column(f, "model", key=True)
    for d in DTYPES:
        term.column(f, d, right=True)
    for m in CATALOG.values():
        f.add_row(Text(m.name), *[term.sig(m.tflops[d]) if d in m.tflops else "-" for d in DTYPES])
    console.print(f)


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
        from gpuvet.cli.literal import literal

        sys.stderr.write(literal(text).encode("utf-8", "backslashreplace").decode("utf-8") + "\n")
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


# metavars by parameter name, for every option that does not name its own: what to give, not a
# Python type (help never shows <str>, <bool> or <list[str]>)
_METAVARS = {"sim": "SPEC", "expect": "SPEC", "compare": "SPEC", "node_ref": "SPEC", "ref": "SPEC",
             "logbook": "FILE_OR_URL", "from_": "FILE", "files": "FILE", "run": "RUN", "run_a": "RUN", "run_b": "RUN",
             "runs": "RUN", "modules": "IDS", "module": "ID", "since": "DURATION", "window": "DURATION",
             "timeout": "DURATION", "interval": "DURATION", "slow_every": "DURATION", "duration": "DURATION",
             "horizon": "DURATION", "retention": "DURATION", "step": "DURATION", "prometheus": "HOST:PORT",
             "prometheus_url": "URL", "match": "SELECTOR", "kind": "KIND", "symptom": "SYMPTOM", "speedup": "N|max",
             "ray_address": "ADDRESS", "caps": "WATTS", "dtypes": "DTYPES", "ops": "OPS", "kinds": "KINDS",
             "tests": "TESTS", "models": "MODELS", "size_bytes": "BYTES", "min_bytes": "BYTES", "max_bytes": "BYTES",
             "names": "gpuvet|dcgm|both|amd", "level": "quick|standard|long", "fmt": "text|json|nhc|npd",
             "xid_since": "boot|last", "ignore": "CHECK", "dtype": "fp32|fp16|bf16"}


def _metavar(param: Parameter) -> str:
    if getattr(param, "is_flag", False):
        return ""
    name = param.name or ""
    if name in _METAVARS:
        return _METAVARS[name]
    kind = param.bare_type() if hasattr(param, "bare_type") else ""
    return {"int": "N", "float": "NUMBER", "Path": "FILE", "list[Path]": "FILE"}.get(
        kind, name.upper().rstrip("_") or "VALUE")


def _with_metavars(command: Command) -> Command:
    """Name every option's value for people (``SPEC``, ``FILE``, ``RUN``, ``N``) where the option
    does not already; a flag shows none."""
    subs = getattr(command, "commands", {})
    for sub in subs.built() if isinstance(subs, LazyCommands) else subs.values():  # lazy ones: when built
        _with_metavars(sub)
    shown_help = command.get_help_option

    def help_option(ctx: Context) -> Parameter | None:
        option = shown_help(ctx)
        if option is not None:
            option.metavar = ""  # --help is a flag: no <bool>
        return option

    command.get_help_option = help_option  # type: ignore[method-assign,assignment]
    for param in command.params:
        if param.metavar is None:
            param.metavar = _metavar(param)
        if not hasattr(param, "opts") or not any(o.startswith("-") for o in param.opts):  # an argument
            shown = "..." if param.nargs != 1 else ""  # its name beside it says the rest: no 'SYMPTOM  SYMPTOM'
            param.display_type_rich = lambda ctx, shown=shown: shown  # type: ignore[attr-defined]  # not its type
    return command


_COMMAND: list[Command] = []  # built by the first command(): rebuilding took ~10 ms a call (4,800 calls in tests)


def command() -> Command:
    """The click command behind ``gpuvet``, with people's metavars (what main and the tests run).
    Built once per process: options' defaults and environment variables are read when a command
    runs, not here, and a lazy command is rebuilt if its function is replaced (lazy.LazyCommands)."""
    if not _COMMAND:
        _COMMAND.append(_with_metavars(typer.main.get_command(app)))
    return _COMMAND[0]


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit code (0 ok, 1 finding, 2 error). Errors are printed as one
    literal paragraph: never through markup, never a traceback for bad input or a full disk."""
    from gpuvet.errors import GpuvetError

    try:
        from gpuvet.cli.from_args import check_argv  # files after one --from: say how, before click's box

        check_argv(sys.argv[1:] if argv is None else argv)
        command().main(args=argv, prog_name="gpuvet")
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 2)
    except GpuvetError as exc:
        _say(f"error: {exc.message}")
        return 2
    except BrokenPipeError:
        return 0
    except MemoryError:  # an input far beyond anything real (a size limit missed it): a line, not a traceback
        _say("error: out of memory Fix: give smaller input, or run where more memory is free.")
        return 2
    except OSError as exc:  # a full disk, a read-only or missing folder: the environment, not a bug
        _say(_os_error(exc))
        return 2
    return 0


def run() -> NoReturn:
    """The ``gpuvet`` script and ``python -m gpuvet``: ``main``, then exit. Everything made by
    then lives until the process ends, so it is frozen out of the interpreter's collections at
    exit: they walked every object for 35-50 ms, a tenth of a ``topo``. Cleanup registered with
    ``atexit`` (logging, Ray, temporary folders) still runs. Tests call ``main``, which keeps a
    long-lived process's collector as it was."""
    code = main()
    gc.freeze()
    sys.exit(code)
