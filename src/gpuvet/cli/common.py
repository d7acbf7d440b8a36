"""What the faces (the command modules of cli/) share: the node option and its old spelling, the
logbook option and its opener, durations. One module, so that no face imports another face's
private names (issue 45): a face changed alone cannot break the one beside it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from gpuvet.cli.checks import renamed

if TYPE_CHECKING:
    from gpuvet.logbook.store import Logbook

NODE_HELP = "The node: a preset (gpuvet spec presets) or a spec YAML file (default: this machine)."
NodeOpt = Annotated[str | None, typer.Option("--node", metavar="SPEC", help=NODE_HELP)]
SimOpt = Annotated[str | None, typer.Option("--sim", metavar="SPEC", hidden=True, help="Old name of --node.")]
LogbookOpt = Annotated[str | None, typer.Option(
    "--logbook", help="The logbook: a file, or a postgresql:// URL (default: $GPUVET_LOGBOOK, else "
    "$GPUVET_HOME/logbook.db, else the user's data directory).")]


def chosen_node(node: str | None, sim: str | None) -> str | None:
    """The node asked for: --node, or its old name --sim (one deprecation line on stderr, never on
    stdout, so --json and piped tables stay as they were); None for this machine."""
    return renamed(node, sim, "--sim", "--node")


def open_logbook(path: str | None, existing: bool = False) -> Logbook:
    """``existing``: a command that only reads the logbook refuses a path where none is kept."""
    from gpuvet.logbook.store import Logbook

    return Logbook(path, existing=existing)


def flag_seconds(text: str | None, where: str) -> float | None:
    """A duration flag (1s, 500ms, 10m, 12h, 3d) in seconds; None when not given."""
    from gpuvet.errors import GpuvetError
    from gpuvet.node.timeunits import DurationError, parse_duration

    if text is None:
        return None
    try:
        return parse_duration(text, where)
    except DurationError as exc:
        raise GpuvetError(exc.problem, where=where, fix="write e.g. 1s, 500ms, 10m, 12h, 3d.") from None
