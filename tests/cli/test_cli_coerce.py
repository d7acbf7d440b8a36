"""cli/coerce.py (issue 43): a value given as text reaches the command as typer would pass it, with no
pydantic adapter built; any other value gets typer's own check and its own message."""

from __future__ import annotations

import pytest
from typer._click.core import Context
from typer._coercion import AdapterRuntimeParam

from gpuvet.cli.app import command, main


def _param(cmd: str, name: str):  # type: ignore[no-untyped-def]
    sub = command().commands[cmd]  # type: ignore[attr-defined]
    return sub, next(p for p in sub.params if p.name == name)


def test_text_and_lists_of_text_pass_as_typer_passes_them_with_no_adapter() -> None:
    doctor, from_ = _param("doctor", "from_")
    ctx = Context(doctor)
    assert from_.process_value(ctx, ("a.log", "b.log")) == ["a.log", "b.log"]
    _, expect = _param("doctor", "expect")
    assert expect.process_value(ctx, "nvl72") == "nvl72"
    assert expect.process_value(ctx, None) is None
    assert not isinstance(from_._runtime_param, AdapterRuntimeParam)
    assert not isinstance(expect._runtime_param, AdapterRuntimeParam)


def test_another_value_gets_typers_own_check(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "gemm", "--size", "abc"]) == 2
    err = capsys.readouterr().err
    assert "Invalid value for '--size'" in err and "valid integer" in err
