"""Commands whose module is imported only when the command is looked up.

``gpuvet topo`` should not pay for importing doctor, watch, bench, plan and fleet: the root
group lists every command by name, and builds one (imports its module, lets typer read its
signature) the first time it is asked for it: to run it, or to show it in ``--help``.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterator, MutableMapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import typer
from typer.core import TyperGroup
from typer.main import get_command_from_info, get_group_from_info

if TYPE_CHECKING:
    from typer._click.core import Command, Context


@dataclass(frozen=True)
class Lazy:
    """A command (a function) or a group (a ``typer.Typer``) named by its module and attribute."""

    module: str
    attr: str
    short_help: str | None = None  # a command's line in the root --help (a group brings its own)


class LazyCommands(MutableMapping[str, "Command"]):
    """The root group's commands: built ones, and lazy ones that are built on first access.

    The tree lives as long as the process (``main`` builds it once): a lazy command is built again
    when its module's attribute is no longer the object it was built from (a test's monkeypatch)."""

    def __init__(self, built: MutableMapping[str, Command], lazy: dict[str, Lazy], order: list[str],
                 build: Callable[[str, Lazy, object], Command]) -> None:
        self._built = built
        self._lazy = {n: lz for n, lz in lazy.items() if n not in built}
        self._order = [n for n in order if n in built or n in self._lazy]
        self._order += [n for n in built if n not in self._order]
        self._build = build
        self._made: dict[str, tuple[Lazy, object]] = {}  # a built lazy command: what it was built from

    def __getitem__(self, name: str) -> Command:
        made = self._made.get(name)
        if made is not None and getattr(sys.modules.get(made[0].module), made[0].attr, None) is not made[1]:
            self._lazy[name] = made[0]  # its function was replaced since: build it from the new one
            del self._built[name], self._made[name]
        if name not in self._built:
            if name not in self._lazy:
                raise KeyError(name)
            what = self._lazy.pop(name)
            obj = getattr(importlib.import_module(what.module), what.attr)
            self._built[name] = self._build(name, what, obj)
            self._made[name] = (what, obj)
        return self._built[name]

    def __setitem__(self, name: str, cmd: Command) -> None:
        self._lazy.pop(name, None)
        self._made.pop(name, None)
        if name not in self._order:
            self._order.append(name)
        self._built[name] = cmd

    def __delitem__(self, name: str) -> None:
        if name not in self._built and name not in self._lazy:
            raise KeyError(name)
        self._built.pop(name, None)
        self._lazy.pop(name, None)
        self._made.pop(name, None)
        self._order.remove(name)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._order))

    def __len__(self) -> int:
        return len(self._order)

    def __contains__(self, name: object) -> bool:
        return name in self._built or name in self._lazy

    def built(self) -> list[Command]:
        """The commands built so far (what a pass over the tree may change without importing more)."""
        return list(self._built.values())


def lazy_group(lazy: dict[str, Lazy], order: list[str], finish: Callable[[Command], Command],
               pretty_exceptions_short: bool = True) -> type[TyperGroup]:
    """A ``TyperGroup`` class (for ``typer.Typer(cls=...)``) that adds ``lazy`` to the commands typer
    built, listed in ``order``; ``finish`` is applied to each lazy command once built."""

    class LazyGroup(TyperGroup):
        def __init__(self, **attrs: Any) -> None:
            super().__init__(**attrs)
            self.commands = LazyCommands(self.commands, lazy, order, self._build)

        def _build(self, name: str, what: Lazy, obj: object) -> Command:
            short = pretty_exceptions_short
            holder = typer.Typer()  # registered exactly as app.command / app.add_typer would
            if isinstance(obj, typer.Typer):
                holder.add_typer(obj, name=name)
                cmd: Command = get_group_from_info(holder.registered_groups[0], pretty_exceptions_short=short,
                                                   rich_markup_mode=self.rich_markup_mode,
                                                   suggest_commands=self.suggest_commands)
            else:
                holder.command(name, short_help=what.short_help)(cast("Callable[..., object]", obj))
                cmd = get_command_from_info(holder.registered_commands[0], pretty_exceptions_short=short,
                                            rich_markup_mode=self.rich_markup_mode)
            return finish(cmd)

        def list_commands(self, ctx: Context) -> list[str]:
            return list(self.commands)

    return LazyGroup
