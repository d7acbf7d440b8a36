"""The sweeping tests leave out a blind batch until it is scored (tests/support/corpus.py), so no test run
shows gpuvet's output on a batch whose first contact is still to be measured (issue 46)."""

from __future__ import annotations

from pathlib import Path

from tests.support.corpus import corpus_files, unscored_batches

_HEAD = "| file | F/H | tool | first contact | after fixes |\n|---|---|---|---|---|\n"


def _batch(root: Path, name: str, cells: tuple[str, ...]) -> None:
    (root / name).mkdir()
    rows = "".join(f"| a{i}.txt | H | smi | {c} | (pending) |\n" for i, c in enumerate(cells))
    (root / name / "MANIFEST.md").write_text("# Batch\n\n" + _HEAD + rows, encoding="utf-8")
    for i in range(len(cells)):
        (root / name / f"a{i}.txt").write_text("x\n", encoding="utf-8")


def test_a_batch_is_left_out_until_one_of_its_rows_is_scored(tmp_path: Path) -> None:
    _batch(tmp_path, "fresh_y", ("(pending)", "(pending)"))
    _batch(tmp_path, "fresh_z", ("hit: the Xid named", "(pending)"))
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "smi.txt").write_text("x\n", encoding="utf-8")
    (tmp_path / "dev_a").mkdir()
    (tmp_path / "dev_a" / "MANIFEST.md").write_text("| file | what |\n|---|---|\n| b.txt | x |\n", encoding="utf-8")
    assert unscored_batches(tmp_path) == {"fresh_y"}
    names = {p.relative_to(tmp_path).as_posix() for p in corpus_files(tmp_path)}
    assert names == {"fresh_z/a0.txt", "fresh_z/a1.txt", "real/smi.txt"}
