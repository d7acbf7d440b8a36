"""Review 56 LOW 14: formats.py names some parsers by ``module.attr`` strings, imported on their format's first
run (issue 43). A misspelt name would fail only when a file with that format's markers arrives; here every such
name in formats.py, and every one FORMATS holds, resolves to a function now."""

from __future__ import annotations

import ast
import importlib
import inspect

from gpuvet.captures import formats

_LAZY = ("_one", "_listed", "_kept", "_aside", "_loaded", "_marked", "_found")  # the helpers that take a parser by name


def _named_in_source() -> set[str]:
    """Every string literal formats.py hands to one of the lazy helpers."""
    tree = ast.parse(inspect.getsource(formats))
    return {call.args[0].value for call in ast.walk(tree)
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in _LAZY
            and call.args and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str)}


def _named_in_formats() -> set[str]:
    """The names FORMATS' parsers hold (the string each lazy helper's closure keeps)."""
    names = set()
    for fmt in formats.FORMATS:
        run = fmt.parse.parse if isinstance(fmt.parse, formats.Gated) else fmt.parse
        names |= {c.cell_contents for c in run.__closure__ or () if isinstance(c.cell_contents, str)}
    return names


def _unresolved(names: set[str]) -> list[str]:
    """The names whose module does not import or lacks the attribute, or whose attribute is no function."""
    bad = []
    for name in sorted(names):
        module, _, attr = name.partition(".")
        try:
            found = getattr(importlib.import_module(f"gpuvet.captures.{module}"), attr)
        except (ImportError, AttributeError):
            bad.append(name)
            continue
        if not callable(found) or "." in attr:
            bad.append(name)
    return bad


def test_every_lazy_parser_name_resolves_to_a_function() -> None:
    in_source, in_formats = _named_in_source(), _named_in_formats()
    assert len(in_source) >= 17 and in_formats  # 17 at review 56
    assert in_formats <= in_source  # every name a format holds is a literal this test reads
    assert _unresolved(in_source | in_formats) == []
    assert all(callable(formats._loaded(name)) for name in in_formats)


def test_a_misspelt_or_missing_name_is_caught() -> None:
    assert _unresolved({"smi_lsit.parse", "smi_list.prase", "smi_list.parse"}) == ["smi_list.prase", "smi_lsit.parse"]
