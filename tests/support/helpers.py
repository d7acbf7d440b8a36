"""Helpers the test files share (issue 45: one copy, not nineteen)."""

from __future__ import annotations

import contextlib
import io
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from gpuvet.cli.app import main


def call(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run ``gpuvet ARGS`` in this process: (exit code, stdout, stderr)."""
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def run(argv: list[str]) -> tuple[int, str, str]:
    """Run ``gpuvet ARGV`` with its output captured here (for tests without capsys)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def refused(argv: list[str], *words: str) -> str:
    """``gpuvet ARGV`` refused as bad input: exit 2, a one-line ``error:`` naming ``words``, no traceback."""
    code, _, err = run(argv)
    assert code == 2, err
    assert "Traceback" not in err and err.startswith("error: ")
    for w in words:
        assert w in err, err
    return err


def fleet_merge(capsys: pytest.CaptureFixture[str], *args: str, timeout: float = 30) -> tuple[int, str, str]:
    """``fleet merge`` in a thread, so a hang fails the test instead of stopping it."""
    result: list[int] = []
    worker = threading.Thread(target=lambda: result.append(main(["fleet", "merge", *args])), daemon=True)
    worker.start()
    worker.join(timeout)
    assert result, f"fleet merge {' '.join(args)} did not return in {timeout} s"
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return result[0], out, err


def doctor_capture(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, *more: str,
                   name: str = "capture.txt") -> tuple[int, dict[str, Any]]:
    """``gpuvet doctor --from`` one capture written from ``text``: (exit code, its --json answer)."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    code = main(["doctor", "--from", str(path), "--json", *more])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, json.loads(out)


def doctor_triples(text: str, tmp_path: Path,
                   capsys: pytest.CaptureFixture[str]) -> tuple[int, list[tuple[str, str, str]]]:
    """``gpuvet doctor --from`` on ``text`` (a newline added): the exit code and each finding as (cause, severity,
    module or ''); no findings where doctor printed nothing (a refusal)."""
    path = tmp_path / "capture.txt"
    path.write_text(text + "\n", encoding="utf-8")
    code = main(["doctor", "--from", str(path), "--json"])
    out = capsys.readouterr().out
    found = json.loads(out)["findings"] if out.strip() else []
    return code, [(f["cause"], f["severity"], f.get("module") or "") for f in found]


def found_causes(data: dict[str, Any]) -> set[tuple[str, str | None]]:
    """The (cause, module) of each finding of a doctor --json answer."""
    return {(f["cause"], f.get("module")) for f in data["findings"]}


def capture_json(tmp_path: Path, text: str, cmd: str = "doctor") -> dict[str, object]:
    """``gpuvet CMD --from`` one capture written from ``text``, for tests without capsys: its --json answer."""
    path = tmp_path / "capture.txt"
    path.write_text(text)
    _, out, err = run([cmd, "--from", str(path), "--json"])
    assert "Traceback" not in err
    data = json.loads(out)
    assert isinstance(data, dict)
    return data


def doctor_text(tmp_path: Path, text: str, name: str = "capture.txt") -> tuple[int, dict[str, Any]]:
    """``gpuvet doctor --from`` one capture written from ``text``, for tests without capsys: (exit code, its
    --json answer; empty where it refused the file)."""
    path = tmp_path / name
    path.write_text(text)
    code, out, err = run(["doctor", "--from", str(path), "--json"])
    assert "Traceback" not in err
    return code, json.loads(out) if code != 2 else {}


def capture_findings(tmp_path: Path, text: str) -> dict[tuple[str, str | None], str]:
    """doctor's findings on one capture written from ``text``: {(cause, module): severity}."""
    findings: list[dict[str, Any]] = capture_json(tmp_path, text)["findings"]  # type: ignore[assignment]
    return {(f["cause"], f.get("module")): f["severity"] for f in findings}


def smi_table(*modules: tuple[str, int]) -> str:
    """nvidia-smi's default table (the 535 layout) of (name as the table prints it, temperature °C) modules,
    on buses 0000:19:00.0, 0000:1A:00.0, … in order; the power and memory columns an H100's."""
    rows = []
    for i, (name, temp) in enumerate(modules):
        rows += [f"|   {i}  {name:<24}       On  | 00000000:{0x19 + i:02X}:00.0 Off |                    0 |",
                 f"| N/A   {temp}C    P0             402W / 700W |  61234MiB / 81559MiB |     98%      Default |",
                 "|                                         |                      |             Disabled |",
                 "+-----------------------------------------+----------------------+----------------------+"]
    return "\n".join([
        "+---------------------------------------------------------------------------------------+",
        "| NVIDIA-SMI 535.104.05             Driver Version: 535.104.05   CUDA Version: 12.2     |",
        "|-----------------------------------------+----------------------+----------------------+",
        "| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |",
        "| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |",
        "|                                         |                      |               MIG M. |",
        "|=========================================+======================+======================|",
        *rows, ""])
