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


P2P_STATUS = (" \tGPU0\tGPU1\tGPU2\t\n GPU0\tX\tOK\tNS\t\n GPU1\tOK\tX\tNS\t\n GPU2\tNS\tNS\tX\t\n\n"
              "Legend:\n\n  X    = Self\n  OK   = Status Ok\n  NS   = Not supported\n")
TOPO_AFTER = ("\tGPU0\tGPU1\tGPU2\tCPU Affinity\nGPU0\t X \tPHB\tSYS\t0-15\nGPU1\tPHB\t X \tSYS\t0-15\n"
              "GPU2\tSYS\tSYS\t X \t16-31\n")


def test_a_topo_p2p_status_matrix_first_is_no_topo_m(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """`nvidia-smi topo -p2p r` (issue 46 dev set): its OK/NS statuses are not links; alone it is no topo -m
    (not 'NS is not a topo -m cell') but a status matrix of its own, read (issue 46 dev_h_nvidia: its pairs are
    judged), and a topo -m after it is read as the matrix."""
    alone = tmp_path / "p2p.txt"
    alone.write_text(P2P_STATUS)
    code, out, err = call(capsys, "inventory", "--from", str(alone), "--json")
    assert code == 0 and "not a topo -m cell" not in err and json.loads(out)["modules"] == []
    assert len(_inventory(capsys, tmp_path, P2P_STATUS + "\n" + TOPO_AFTER)) == 3


def test_a_thousand_topo_p2p_matrices_are_read_in_a_loop(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Review 53: each `topo -p2p` matrix first in a file was one more recursive call (500 of them: a
    RecursionError traceback). 1,000 are read alone, and a topo -m after them is read."""
    many = tmp_path / "p2p_many.txt"
    many.write_text((P2P_STATUS + "\n") * 1000)
    code, _, err = call(capsys, "inventory", "--from", str(many))
    assert code == 0 and "Traceback" not in err and "RecursionError" not in err
    assert len(_inventory(capsys, tmp_path, (P2P_STATUS + "\n") * 1000 + TOPO_AFTER)) == 3


def test_topo_p2p_statuses_are_said_and_topo_m_is_no_second_matrix(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Review 53: a topo -m after a `topo -p2p` matrix was compared with itself ('a second matrix … the first
    one is used'), and the NS pairs were claimed without a word; they are named (issue 46 dev_h_nvidia)."""
    path = tmp_path / "p2p_then_topo.txt"
    path.write_text(P2P_STATUS + "\n" + TOPO_AFTER)
    code, out, _ = call(capsys, "inventory", "--from", str(path), "--json")
    notes = " ".join(json.loads(out)["notes"])
    assert code == 0 and "second matrix" not in notes
    assert "2 pair(s) without peer access: GPU0-GPU2 NS (not supported), GPU1-GPU2 NS (not supported)" in notes
    assert "not output gpuvet reads" not in notes  # the -p2p legend is the same capture


def test_a_sentence_after_the_matrix_that_starts_with_a_gpu_name_ends_it(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A post that goes on after the matrix with 'GPU0 and GPU1 are connected by nvlink …' (issue 46 dev set I):
    the sentence ends the matrix, it is not a second GPU0 row (which refused the file)."""
    text = "```\n$ nvidia-smi topo -m\n" + HEADER + "".join(ROWS) + "```\n\nGPU0 and GPU1 are connected by nvlink.\n"
    modules = _inventory(capsys, tmp_path, text)
    assert [(m["id"], m["numa_node"]) for m in modules] == [("gpu0", 0), ("gpu1", 0), ("gpu2", 1), ("gpu3", 1)]


_CUT_ABOVE = """\
GPU3    NV18    NV18    NV18     X      NODE    PXB     96-191,288-383  1               N/A
NIC0    SYS     SYS     NODE    NODE     X      PIX
NIC1    SYS     SYS     NODE    PXB     PIX      X
"""


def test_header_less_rows_read_their_nic_and_affinity_columns_in_topo_ms_order() -> None:
    from gpuvet.captures.read import parse_text

    topo = parse_text("[cut above]\n" + _CUT_ABOVE, "constructed").topo
    assert topo is not None and topo.header == ["GPU0", "GPU1", "GPU2", "GPU3", "NIC0", "NIC1"]
    assert topo.affinity["GPU3"] == {"CPU Affinity": "96-191,288-383", "NUMA Affinity": "1", "GPU NUMA ID": "N/A"}
    older = parse_text(_CUT_ABOVE.replace("  1               N/A", "  1"), "constructed").topo  # no GPU NUMA ID
    assert older is not None and older.affinity["GPU3"] == {"CPU Affinity": "96-191,288-383", "NUMA Affinity": "1"}
    # without a NIC0 row the columns after the GPUs are not named, and no affinity is guessed from position
    alone = parse_text(_CUT_ABOVE.splitlines()[0] + "\n", "constructed").topo
    assert alone is not None and alone.header == ["GPU0", "GPU1", "GPU2", "GPU3"] and not any(alone.affinity.values())
