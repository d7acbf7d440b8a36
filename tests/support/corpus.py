"""The capture corpus the sweeping tests read: every file kept under tests/data/captures, less a blind batch
not yet scored (issue 46: a batch's expectations are written before gpuvet reads its files, and its
first-contact score is taken by someone who has seen none of gpuvet's output on it; a sweep that ran doctor
over it would show that output, and its failures would invite fixes tuned on the batch before it is scored).
A batch is unscored while its MANIFEST.md table has a "first contact" column whose every cell is "(pending)"."""

from __future__ import annotations

from pathlib import Path

CAPTURES = Path(__file__).resolve().parents[1] / "data" / "captures"
_PENDING = "(pending)"


def unscored_batches(root: Path = CAPTURES) -> frozenset[str]:
    """Folders holding a blind batch's MANIFEST.md whose first-contact cells are all still pending."""
    return frozenset(m.parent.name for m in root.glob("*/MANIFEST.md") if _pending(m.read_text(encoding="utf-8")))


def _pending(manifest: str) -> bool:
    """Whether the table's "first contact" column exists and no row has been scored."""
    column, cells = None, []
    for line in manifest.splitlines():
        row = [c.strip().lower() for c in line.strip().strip("|").split("|")]
        if column is None and "first contact" in row:
            column = row.index("first contact")
        elif column is not None and len(row) > column and not set(row[column]) <= set("-: "):
            cells.append(row[column])
    return bool(cells) and all(c == _PENDING for c in cells)


def corpus_files(root: Path = CAPTURES) -> list[Path]:
    """Every capture file (no MANIFEST.md), less those of unscored blind batches."""
    blind = unscored_batches(root)
    return sorted(p for p in root.rglob("*") if p.is_file() and p.suffix != ".md"
                  and not blind & set(p.relative_to(root).parts[:1]))
