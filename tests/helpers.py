"""Helpers the test files share (issue 45: one copy, not nineteen)."""

from __future__ import annotations

import pytest

from gpuvet.cli.app import main


def call(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run ``gpuvet ARGS`` in this process: (exit code, stdout, stderr)."""
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err
