"""Flag checks run where typer parses the flag (``callback=ints(1, 4096)``): the range is stated
once, next to the flag, and a bad value is a GpuvetError (exit 2, the range in the message)
before any work starts. The checks themselves live in ``gpuvet.quantities``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import typer

from gpuvet import quantities

T = TypeVar("T")


def _flag(param: typer.CallbackParam) -> str:
    return max(param.opts, key=len) if param.opts else f"--{param.name}"


def ints(lo: int | None = None, hi: int | None = None) -> Callable[[typer.CallbackParam, int | None], int | None]:
    """An integer flag from ``lo`` to ``hi`` (None passes: the flag was not given)."""

    def check(param: typer.CallbackParam, value: int | None) -> int | None:
        return None if value is None else quantities.check_int(value, _flag(param), lo, hi)

    return check


def floats(lo: float | None = None, hi: float | None = None, *, lo_open: bool = False, hi_open: bool = False,
           unit: str = "") -> Callable[[typer.CallbackParam, float | None], float | None]:
    """A finite float flag inside the range (open ends exclude the bound itself)."""

    def check(param: typer.CallbackParam, value: float | None) -> float | None:
        if value is None:
            return None
        return quantities.check_float(value, _flag(param), lo, hi, lo_open=lo_open, hi_open=hi_open, unit=unit)

    return check


def comma_list(param: typer.CallbackParam, value: str | None) -> str | None:
    """A comma-separated list flag (``--modules gpu0,gpu3``): at least one item and no empty
    ones; ``,`` or ``''`` meant "all" silently (the flag's default), which a typo must not."""
    if value is not None and (not value.strip() or any(not item.strip() for item in value.split(","))):
        from gpuvet.errors import GpuvetError

        raise GpuvetError(f"{value!r} has an empty item", where=_flag(param),
                          fix="name each item, separated by commas (e.g. gpu0,gpu3), or leave the flag out for all.")
    return value


def output_file(param: typer.CallbackParam, value: Path | None) -> Path | None:
    """An output path: its folder exists and is writable, and it is not a folder itself."""
    if value is not None:
        check_output(value, _flag(param))
    return value


def check_output(path: Path, flag: str) -> None:
    """Checked before the work: a run of minutes must not end in "no such folder", and a link
    planted at the path is refused before anything is written (gpuvet.files writes it)."""
    import os

    from gpuvet.errors import GpuvetError
    from gpuvet.files import check_target

    parent = path.parent if str(path.parent) else Path(".")
    check_target(path, flag)  # a planted link, a folder, a device: refused before the work
    if not parent.is_dir():
        raise GpuvetError(f"the folder {str(parent)!r} does not exist", where=flag,
                          fix=f"create it first (mkdir -p {parent}) or write somewhere else.")
    if not os.access(parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise GpuvetError(f"cannot write {str(path)!r} (no permission)", where=flag,
                          fix="choose a path you can write to.")


def renamed(new_value: T | None, old_value: T | None, old: str, new: str) -> T | None:
    """A flag renamed for one meaning per name: the old spelling still works, with a note on
    stderr; both given with different values is an error."""
    if old_value is None:
        return new_value
    import sys

    from gpuvet.errors import GpuvetError

    if new_value is not None and new_value != old_value:
        raise GpuvetError(f"{old} and {new} both given", where=old, fix=f"{old} is the old name of {new}: give {new} only.")
    sys.stderr.write(f"gpuvet: note: {old} is deprecated here; use {new} (it means the same).\n")
    return old_value
