"""``nvidia-smi --query-remapped-rows`` CSV (issue 46): its pending and failure flags print as 0/1 where -q says
No/Yes; a pending remap is read as the -q field is, so doctor asks for the reset on the module it names."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.helpers import run

HEADER = ("gpu_bus_id, remapped_rows.correctable, remapped_rows.uncorrectable, remapped_rows.pending, "
          "remapped_rows.failure\n")


def _findings(tmp_path: Path, rows: str) -> list[tuple[str, str, str | None]]:
    path = tmp_path / "remapped.csv"
    path.write_text(HEADER + rows)
    code, out, err = run(["doctor", "--from", str(path), "--json"])
    assert code in (0, 1), err
    return [(f["cause"], f["severity"], f.get("module")) for f in json.loads(out)["findings"]]


def test_a_pending_remap_printed_as_1_is_the_module_waiting_for_its_reset(tmp_path: Path) -> None:
    rows = "00000000:07:00.0, 0, 0, 0, 0\n00000000:0F:00.0, 0, 3, 1, 0\n"
    assert _findings(tmp_path, rows) == [("row_remap_pending", "warn", "0000:0F:00.0")]


def test_a_failed_remap_printed_as_1_is_named(tmp_path: Path) -> None:
    causes = {c for c, _, m in _findings(tmp_path, "00000000:41:00.0, 2, 9, 0, 1\n") if m == "0000:41:00.0"}
    assert causes and all("remap" in c for c in causes)


def test_all_zero_rows_are_clear(tmp_path: Path) -> None:
    assert _findings(tmp_path, "00000000:07:00.0, 0, 0, 0, 0\n00000000:0F:00.0, 1, 0, 0, 0\n") == []
