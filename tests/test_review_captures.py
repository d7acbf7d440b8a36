"""Today's hostile review of the capture readers (issues 41 and 46: never merge, drop or invent): each
input is written here in the tool's own format, with what gpuvet must make of it."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

from gpuvet.cli.app import main


def _run(*args: str) -> tuple[int, dict[str, Any] | None, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([*args, "--json"])
    assert "Traceback" not in err.getvalue()
    return code, (json.loads(out.getvalue()) if code != 2 else None), err.getvalue()


def _file(tmp_path: Path, text: str, name: str = "capture.txt") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _causes(tmp_path: Path, text: str) -> set[tuple[str, str | None]]:
    code, data, _ = _run("doctor", "--from", _file(tmp_path, text))
    assert data is not None, code
    return {(f["cause"], f.get("module")) for f in data["findings"]}


def _modules(tmp_path: Path, text: str, name: str = "capture.txt") -> tuple[list[tuple[str, str | None]], list[str]]:
    code, data, _ = _run("inventory", "--from", _file(tmp_path, text, name))
    assert data is not None, code
    return [(m["id"], m["bus_id"]) for m in data["modules"]], data.get("notes", [])


# --- 3: nvidia-smi's 'Unable to determine the device handle' is its own line, not a sentence about it --------

_HANDLE = "Unable to determine the device handle for GPU 0000:3B:00.0: Unknown Error"


def test_prose_that_mentions_the_handle_error_is_no_finding(tmp_path: Path) -> None:
    prose = f"Users sometimes report: {_HANDLE}, but that was fixed by a reboot last year.\n"
    kernel = "[    5.123456] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.104.05  Thu Aug 24 2023\n"
    assert _causes(tmp_path, kernel + prose) == set()


def test_the_handle_error_as_nvidia_smi_prints_it_is_a_finding(tmp_path: Path) -> None:
    for line in (_HANDLE, f"root@node07:~# nvidia-smi\n{_HANDLE}",
                 f"Dec  6 05:16:29 node07 nvidia-smi[4242]: {_HANDLE}",
                 f"the command nvidia-smi outputs the following error: {_HANDLE}."):
        assert ("module_fell_off_bus", "0000:3B:00.0") in _causes(tmp_path, line + "\n"), line
