"""The corpus sweeps' one test per batch (tests/support/sweep.py) still checks every file and names each one
that fails: a batch test is only as strict as the per-file tests it replaced if a failure cannot hide another."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.corpus import CAPTURES, corpus_files
from tests.support.sweep import batches, check_each


def test_every_file_is_checked_and_every_failing_one_named(tmp_path: Path) -> None:
    paths = [tmp_path / "fresh_q" / name for name in ("a.txt", "b.txt", "c.txt", "d.txt")]
    seen: list[str] = []

    def check(path: Path) -> None:
        seen.append(path.name)
        assert path.name not in ("b.txt", "d.txt"), f"{path.name} misread"

    with pytest.raises(AssertionError) as err:
        check_each(paths, check, tmp_path)
    assert seen == ["a.txt", "b.txt", "c.txt", "d.txt"]  # the files after a failure are still checked
    said = str(err.value)
    assert "2 file(s) failed" in said and "fresh_q/b.txt: AssertionError: b.txt misread" in said
    assert "fresh_q/d.txt: AssertionError: d.txt misread" in said and "a.txt" not in said
    assert isinstance(err.value.__cause__, AssertionError) and "b.txt" in str(err.value.__cause__)


def test_an_error_is_a_failure_and_a_skip_leaves_its_file_unchecked(tmp_path: Path) -> None:
    def check(path: Path) -> None:
        if path.name == "odd.bin":
            pytest.skip("not UTF-8")
        if path.name == "bad.txt":
            raise KeyError("modules")

    assert check_each([tmp_path / "odd.bin", tmp_path / "ok.txt"], check, tmp_path) == 1
    with pytest.raises(AssertionError, match="bad.txt: KeyError: 'modules'"):
        check_each([tmp_path / "ok.txt", tmp_path / "bad.txt"], check, tmp_path)


def test_the_batches_hold_every_corpus_file_once_by_its_folder() -> None:
    files = corpus_files()
    held = batches(files)
    assert sorted(p for b in held.values() for p in b) == sorted(files)
    assert {p.relative_to(CAPTURES).parts[0] for p in held["real"]} == {"real"}
    assert all(p.parent == CAPTURES for p in held["captures"]) and len(held) > 30
