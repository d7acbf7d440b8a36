"""A milder confirmed cause early in a playbook never hides a more severe one a later step
confirms (issue 46 review: "ECC is off" from nvidia-smi -q hid a captured uncorrectable ECC error)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from gpuvet.cli.app import main
from gpuvet.doctor import run
from gpuvet.doctor.model import finding, playbooks
from gpuvet.doctor.outcome import confirmed, unknown


def _stub_ev() -> Any:
    return SimpleNamespace(no_modules=None, backend=None, modules_by_bus_id=lambda: {})


def _checks(book: Any, first: str, last: str) -> dict[str, Any]:
    """The first step confirms ``first``, the last confirms ``last``, every other can't tell."""
    keys = [s.key for s in book.steps]
    out: dict[str, Any] = {k: (lambda ev: unknown("stub: nothing read")) for k in keys}
    out[keys[0]] = lambda ev: confirmed("stub", finding(first, 0.9, module="gpu0"))
    out[keys[-1]] = lambda ev: confirmed("stub", finding(last, 0.9, module="gpu1"))
    return out


@pytest.mark.parametrize("book_id", sorted(playbooks()))
def test_a_later_critical_is_never_hidden_by_an_earlier_warning(monkeypatch, book_id):
    book = playbooks()[book_id]
    if len(book.steps) < 2:
        pytest.skip("one step: nothing can hide behind it")
    monkeypatch.setattr(run, "CHECKS", _checks(book, "ecc_disabled", "ecc_uncorrectable_since_boot"))
    steps, found = run.run_playbook(book, _stub_ev())
    assert {f.cause for f in found} == {"ecc_disabled", "ecc_uncorrectable_since_boot"}
    # the steps that confirmed nothing more severe are not shown: the answer stays short
    assert [s.status for s in steps] == ["confirmed", "confirmed"]


@pytest.mark.parametrize("book_id", sorted(playbooks()))
def test_a_critical_still_stops_the_playbook(monkeypatch, book_id):
    book = playbooks()[book_id]
    monkeypatch.setattr(run, "CHECKS", _checks(book, "ecc_uncorrectable_since_boot", "ecc_disabled"))
    steps, found = run.run_playbook(book, _stub_ev())
    assert [f.cause for f in found] == ["ecc_uncorrectable_since_boot"] and len(steps) == 1


def test_an_equally_severe_later_cause_stays_behind_the_first(monkeypatch):
    book = playbooks()["compute-errors"]
    monkeypatch.setattr(run, "CHECKS", _checks(book, "ecc_disabled", "ecc_disabled"))
    steps, found = run.run_playbook(book, _stub_ev())
    assert len(steps) == 1 and len(found) == 1
    every, _ = run.run_playbook(book, _stub_ev(), all_steps=True)
    assert len(every) == len(book.steps)


def test_ecc_off_in_smi_q_does_not_hide_a_captured_uncorrectable_ecc_error(capsys, tmp_path):
    """The review's case, without --all: nvidia-smi -q says ECC is off on one module (a warning, an
    early step) and the program's traceback says uncorrectable ECC error (critical, the last step)."""
    smi = Path(__file__).parent.parent / "data" / "captures" / "smi_q_h100_2gpu.txt"
    trace = tmp_path / "trace.txt"
    trace.write_text("Traceback (most recent call last):\n  File \"x.py\", line 3, in <module>\n"
                     "RuntimeError: CUDA error: uncorrectable ECC error encountered on cuda:1\n", encoding="utf-8")
    main(["doctor", "compute-errors", "--from", str(smi), "--from", str(trace), "--json"])
    data = json.loads(capsys.readouterr().out)
    causes = [f["cause"] for f in data["findings"]]
    assert "ecc_uncorrectable_since_boot" in causes and "ecc_disabled" in causes, causes
    assert data["findings"][0]["cause"] == "ecc_uncorrectable_since_boot"
