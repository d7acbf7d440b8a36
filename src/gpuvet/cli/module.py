"""`gpuvet module`: each module's history, wherever it sat (the module ledger, docs/ledger.md):
list, show, the RMA packet, and the fleet's figures."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from gpuvet.cli.checks import output_file
from gpuvet.cli.common import LogbookOpt

if TYPE_CHECKING:
    from pydantic import JsonValue

    from gpuvet.ledger.build import Ledger
    from gpuvet.ledger.ladders import Ladders
    from gpuvet.ledger.model import ModuleHistory

module_app = typer.Typer(help="Each module's history by serial or UUID: list, show, RMA packet, fleet figures.",
                         no_args_is_help=True)
LaddersOpt = Annotated[Path | None, typer.Option("--ladders", help="The site's escalation ladders (YAML; "
                                                 "default: gpuvet's; docs/ledger.md).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON for scripts instead of tables.")]
IdArg = Annotated[str, typer.Argument(help="A serial, a UUID (or its first 8+ characters), or node/slot "
                                      "(e.g. node07/gpu3: the module there last).")]


def _ledger(logbook: str | None, ladders_file: Path | None) -> tuple[Ledger, Ladders, str]:
    from gpuvet.ledger.build import build_ledger
    from gpuvet.ledger.ladders import load_ladders
    from gpuvet.logbook.store import Logbook, utc_now

    ladders = load_ladders(ladders_file)
    book = Logbook(logbook, existing=True)
    try:
        now = utc_now()
        return build_ledger(book.ledger_rows(), ladders, now), ladders, now
    finally:
        book.close()


def _find(ledger: Ledger, ident: str) -> ModuleHistory:
    from gpuvet.errors import GpuvetError
    from gpuvet.ledger.build import find_module

    found = find_module(ledger, ident.strip()) if ident.strip() else None
    if found is None:
        some = ", ".join(h.id for h in _worst(ledger)[:4]) or "(none kept yet)"
        raise GpuvetError(f"no module {ident!r} in the logbook", where="ID",
                          fix=f"give a serial, UUID or node/slot; `gpuvet module list` shows them (e.g. {some}).")
    return found


def _worst(ledger: Ledger) -> list[ModuleHistory]:
    return sorted(ledger.modules, key=lambda h: (-(h.step.rank if h.step else -1), -len(h.occurrences), h.id))


def _json(data: object) -> None:
    from gpuvet.cli.jsonout import write_json
    from gpuvet.report.jsonable import to_jsonable

    write_json(to_jsonable(data), indent=1)


def _summary(h: ModuleHistory, ledger: Ledger) -> dict[str, object]:
    from gpuvet.ledger.fleet import is_simulated

    step = h.step
    return {"id": h.id, "simulated": is_simulated(h, ledger), "serial": h.serial, "uuids": h.uuids, "model": h.model,
            "where": h.where,
            "node": h.places[-1].node if h.places else None, "module": h.places[-1].slot if h.places else None,
            "places": len(h.places), "occurrences": len(h.occurrences), "reports": len(h.reports),
            "figures": len(h.figures), "step": step.step if step else None, "fault": step.fault if step else None,
            "why": step.why if step else None}


@module_app.command("list")
def list_modules(logbook: LogbookOpt = None, ladders: LaddersOpt = None, as_json: JsonOpt = False) -> None:
    """Every module the logbook knows, worst first: its ladder step, fault occurrences, where it is."""
    from rich.text import Text

    from gpuvet.cli import term

    ledger, _, _ = _ledger(logbook, ladders)
    rows = _worst(ledger)
    if as_json:
        _json([_summary(h, ledger) for h in rows])
        return
    t = term.table()
    for col, right in (("module", False), ("where", False), ("faults", True), ("step", False)):
        term.column(t, col, right=right, key=col in ("module", "where"))  # a place is never cut mid-word
    from gpuvet.ledger.fleet import is_simulated

    for h in rows:
        sim = "\n(simulated)" if is_simulated(h, ledger) else ""
        t.add_row(Text(_label(h, ledger) + sim), Text(h.where), Text(str(len(h.occurrences))),
                  Text(f"{h.step.step}: {h.step.why}" if h.step else "-"))
    term.console().print(t)
    if not rows:
        term.console().print(Text("no module in the logbook yet: health --logbook, watch and validate keep them"))


SHORT_UUID = 12  # 'GPU-1b0e7d3a': NVIDIA's prefix and 8 hex digits, as `module show` takes it (a unique prefix)


def _label(h: ModuleHistory, ledger: Ledger) -> str:
    """The module as the list names it: its serial (where read) over its UUID cut to the shortest
    prefix of ``SHORT_UUID`` or more characters that no other module's UUID starts with (`module
    show` finds it by that prefix), so a 40-character UUID leaves the step column its width."""
    if not h.uuids:
        return h.id
    uuid = h.uuids[0]
    others = [u for m in ledger.modules if m is not h for u in m.uuids]
    short = next((uuid[:n] for n in range(min(SHORT_UUID, len(uuid)), len(uuid))
                  if not any(u.startswith(uuid[:n]) for u in others)), uuid)
    return "\n".join(dict.fromkeys(x for x in (h.serial, short) if x))


@module_app.command("show")
def show(ident: IdArg, logbook: LogbookOpt = None, ladders: LaddersOpt = None, as_json: JsonOpt = False) -> None:
    """One module's timeline: its places, findings, events and figures, and its ladder step now."""
    from dataclasses import asdict

    from gpuvet.ledger.packet import timeline

    ledger, _, _ = _ledger(logbook, ladders)
    h = _find(ledger, ident)
    if as_json:
        _json(_summary(h, ledger) | {"places": [asdict(p) for p in h.places],
                             "occurrences": [asdict(o) for o in h.occurrences],
                             "step": asdict(h.step) if h.step else None, "timeline": timeline(h)})
        return
    _show_text(h, timeline(h), ledger)


def _show_text(h: ModuleHistory, items: list[dict[str, JsonValue]], ledger: Ledger) -> None:
    from rich.text import Text

    from gpuvet.cli import term
    from gpuvet.ledger.fleet import is_simulated

    console = term.console()
    sim = "  (simulated)" if is_simulated(h, ledger) else ""
    console.print(Text(f"{h.id}  {h.model or ''}  serial {h.serial or 'not read'}{sim}", style="bold"))
    console.print(Text(f"UUID {', '.join(h.uuids)}; now at {h.where}"))
    if h.step:
        console.print(Text(f"step: {h.step.step.upper()} ({h.step.why})", style="bold"))
    t = term.table()
    for col in ("time (UTC)", "where", "what"):
        term.column(t, col, key=col != "what")
    for i in items:
        where = f"{i.get('node')}/{i.get('module') or '-'}"
        t.add_row(Text(str(i["time_utc"])[:16]), Text(where), Text(_what(i)))
    console.print(t)


def _what(i: dict[str, JsonValue]) -> str:
    if i["what"] == "placed":
        return f"seen here (bus {i.get('bus_id') or '?'}) until {str(i.get('until_utc'))[:16]}"
    if i["what"] == "figure":
        unit = f" {i['unit']}" if i.get("unit") else ""
        value = "no figure" if i.get("value") is None else f"{_num(i['value'])}{unit}"
        design = "" if i.get("expected") is None else f" vs design {_num(i['expected'])}{unit}"
        return f"{i['name']}: {value}{design} ({i['verdict']})"
    return f"{i['what']}: {i['message']} [{i['fault']}]"


def _num(value: JsonValue) -> str:
    """A figure as a person reads it: four significant digits (747.4, not 747.3829662320496)."""
    return f"{value:.4g}" if isinstance(value, float) else str(value)


@module_app.command("rma")
def rma(ident: IdArg,
        out: Annotated[Path, typer.Option("-o", "--out", callback=output_file, help="The packet (.tar.gz).")],
        keep_hostnames: Annotated[bool, typer.Option("--keep-hostnames", help="Keep node and host names (default: "
                                                     "node-1, node-2, ...).")] = False,
        logbook: LogbookOpt = None, ladders: LaddersOpt = None, as_json: JsonOpt = False) -> None:
    """The RMA packet of one module, for its vendor (docs/ledger.md).

    It holds the identity, timeline, findings with evidence, figures against design and kernel lines.

    It adds the node's environment, a one-page summary, and what the packet still lacks."""
    from gpuvet.files import write_atomic
    from gpuvet.ledger.packet import host_names, packet_files, pseudonyms, write_tar

    ledger, lad, now = _ledger(logbook, ladders)
    h = _find(ledger, ident)
    if not h.occurrences:  # still written: a vendor may ask for a healthy module's history too
        from gpuvet.cli.literal import line as literal

        sys.stderr.write(literal(f"gpuvet: module rma: warning: module {h.id} has no fault in the logbook; the "
                                 "packet holds its history only") + "\n")
    files = packet_files(h, ledger, lad, now, keep_hostnames)
    folder = "rma-" + "".join(c if c.isalnum() or c in "-_." else "_" for c in h.id)
    write_atomic(out, write_tar(files, folder), where=str(out))
    if as_json:
        _json({"module": h.id, "out": str(out), "files": sorted(files)})
        return
    from gpuvet.cli.literal import line

    sys.stdout.write(line(f"wrote {out}: {len(files)} files for module {h.id}") + "\n")
    for text in files["summary.txt"].decode("utf-8").splitlines():
        sys.stdout.write(line(text) + "\n")
    if not keep_hostnames and (alias := pseudonyms(host_names(h, ledger))):  # here only: the packet keeps none
        said = ", ".join(f"{fake} is {real}" for real, fake in alias.items())
        sys.stdout.write(line(f"host names replaced in the packet: {said} (this key stays out of it)") + "\n")


@module_app.command("fleet")
def fleet(logbook: LogbookOpt = None, ladders: LaddersOpt = None, as_json: JsonOpt = False,
          include_simulated: Annotated[bool, typer.Option(
              "--include-simulated", help="Count simulated modules and runs too (default: left out of the "
              "figures, since simulated time is no node-hour of the fleet).")] = False) -> None:
    """Repeat offenders ("lemons") and each node group's reliability figures (docs/ledger.md).

    Per node group: mean time between findings and the share of time a node was drainable.

    Occurrences are counted by Llama 3's interruption classes."""
    from dataclasses import asdict

    from rich.text import Text

    from gpuvet.cli import term
    from gpuvet.ledger.fleet import groups, is_simulated, lemons, real_only

    full, lad, _ = _ledger(logbook, ladders)
    ledger = full if include_simulated else real_only(full)
    left_out = [] if include_simulated else [h.id for h in full.modules if is_simulated(h, full)]
    bad, figures = lemons(ledger), groups(ledger, lad)
    if as_json:
        _json({"lemons": [asdict(m) for m in bad], "groups": [asdict(g) for g in figures],
               "simulated_left_out": left_out})
        return
    t = term.table("node groups")
    for col in ("group", "nodes", "node-h", "faults", "MTBF h", "drainable"):
        term.column(t, col, right=col != "group", key=col == "group")
    for g in figures:
        t.add_row(Text(g.group), Text(str(g.nodes)), Text(f"{g.node_hours:g}"), Text(str(g.occurrences)),
                  Text("-" if g.mtbf_hours is None else f"{g.mtbf_hours:g}"),
                  Text("-" if g.drainable_share is None else f"{100 * g.drainable_share:.1f}%"))
    term.console().print(t)
    for m in bad:
        faults = ", ".join(f"{k} x{v}" for k, v in sorted(m.faults.items()))
        sim = " (simulated)" if m.simulated else ""
        term.console().print(Text(f"lemon {m.id}{sim} at {m.where}: {m.occurrences} occurrences ({faults})"))
    if left_out:
        term.console().print(Text(f"{len(left_out)} simulated module(s) and their runs left out of these figures "
                                  "(--include-simulated counts them)"))
