"""Typer's check of a parameter's value, without pydantic where the value is plain text (issue 43).

Typer checks each value a command receives through a pydantic type adapter that it builds on first
use; the first one imports pydantic and costs ~0.07 s, a fifth of ``doctor --from`` a small file.
Most values gpuvet takes are text (``--from FILE``, a spec, a duration) or not given at all: those are
passed on as typer would pass them, and any other value (a number, a path, a choice, bytes) gets
typer's own check, built then, with its own messages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from typer._coercion import RuntimeParam, TypeDescriptor, build_runtime_param

if TYPE_CHECKING:
    from typer._click.core import Context, Parameter
    from typer.core import _TyperParameter


@dataclass(frozen=True)
class _Plain(RuntimeParam):
    """A parameter's check: text (or a list of texts) as given; else typer's, built on first need."""

    descriptor: TypeDescriptor

    def _coerce_value(self, value: Any, param: _TyperParameter, ctx: Context) -> Any:
        plain = self.descriptor.file_annotation is None and self.parameter_info.parser is None
        if plain and self.annotation is str and type(value) is str:
            return value  # typer's str adapter: str(value) of a str, the same text
        if plain and self.annotation == list[str] and isinstance(value, (list, tuple)) \
                and all(type(v) is str for v in value):
            return list(value)  # its list adapter: each item as above, in a list
        param._runtime_param = typer_check = build_runtime_param(self.descriptor)
        return typer_check._coerce_value(value, param=param, ctx=ctx)


def plain_checks(param: Parameter) -> None:
    """Give a typer parameter the check above, before typer builds its own (a value not given, None,
    needs none: typer's ``coerce`` answers it before any check)."""
    descriptor = getattr(param, "type_descriptor", None)
    if isinstance(descriptor, TypeDescriptor) and getattr(param, "_runtime_param", False) is None:
        param._runtime_param = _Plain(  # type: ignore[attr-defined]
            parameter_info=descriptor.parameter_info, annotation=descriptor.annotation, descriptor=descriptor)
