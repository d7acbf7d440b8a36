"""nvidia-smi topo -m read into inventory (issue 46): every GPU its header names is a module, a row the
capture cut included, and each row's NUMA Affinity is the module's NUMA node. The matrices are written here
in topo -m's format (tab-separated cells, its affinity columns)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.helpers import call

HEADER = "\tGPU0\tGPU1\tGPU2\tGPU3\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
ROWS = ["GPU0\t X \tNV8\tNV8\tNV8\tPXB\t0-15\t0\t\tN/A\n", "GPU1\tNV8\t X \tNV8\tNV8\tPXB\t0-15\t0\t\tN/A\n",
        "GPU2\tNV8\tNV8\t X \tNV8\tSYS\t16-31\t1\t\tN/A\n", "GPU3\tNV8\tNV8\tNV8\t X \tSYS\t16-31\t1\t\tN/A\n"]


def _inventory(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str) -> list[dict[str, object]]:
    path = tmp_path / "topo.txt"
    path.write_text(text)
    code, out, _ = call(capsys, "inventory", "--from", str(path), "--json")
    assert code == 0
    modules: list[dict[str, object]] = json.loads(out)["modules"]
    return modules


def test_numa_affinity_is_each_modules_numa_node(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    modules = _inventory(capsys, tmp_path, HEADER + "".join(ROWS))
    assert [(m["id"], m["numa_node"]) for m in modules] == [("gpu0", 0), ("gpu1", 0), ("gpu2", 1), ("gpu3", 1)]


def test_a_gpu_whose_row_is_cut_is_still_listed(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    modules = _inventory(capsys, tmp_path, HEADER + "".join(ROWS[:2]))
    assert [(m["id"], m["numa_node"]) for m in modules] == [("gpu0", 0), ("gpu1", 0), ("gpu2", None), ("gpu3", None)]
