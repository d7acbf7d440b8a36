"""Issue 46 (NOTE): settings an engineer would remark on in a healthy capture are said as info, never warn, and only
where the capture shows them: a module in an exclusive compute mode (with the memory a process holds on it), a RoCE
run below MTU 4096 (perftest's header), persistence mode off on a data-center module, topo -m's GPU pairs by
relation and each NUMA node's GPUs (a note). A plain healthy capture of the same tools gets none of them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from benchmarks.notable_settings_bench import CASES, TOPO_NOTE

from gpuvet.cli.app import main


@pytest.mark.parametrize(("name", "text", "want"), CASES, ids=[c[0] for c in CASES])
def test_notable_setting_said_as_info_and_plain_capture_clear(
    name: str, text: str, want: str | None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / f"{name}.txt"
    path.write_text(text)
    assert main(["doctor", "--from", str(path), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert all(f["severity"] == "info" for f in got["findings"]), got["findings"]
    info = {f["cause"] for f in got["findings"]}
    if want is None:
        assert not info, got["findings"]
    elif want == TOPO_NOTE:
        assert any(TOPO_NOTE in n for n in got["notes"]), got["notes"]
    else:
        assert want in info, got["findings"]


def test_exclusive_mode_names_the_memory_held(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "smi.txt"
    path.write_text(next(text for name, text, _ in CASES if name == "smi384_exclusive"))
    main(["doctor", "--from", str(path), "--json"])
    said = [f["evidence"]["said"] for f in json.loads(capsys.readouterr().out)["findings"]]
    assert "GPU 0 is in Exclusive_Process compute mode: one process at a time; 1092 MiB of 16152 MiB in use" in said[0]
    assert "MiB in use" not in said[1]  # GPU 1's 10 MiB: no context on it


def test_topo_note_names_pairs_and_numa(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "topo.txt"
    path.write_text(next(text for name, text, _ in CASES if name == "topo_8gpu_pix_node_sys"))
    main(["doctor", "--from", str(path), "--json"])
    note = next(n for n in json.loads(capsys.readouterr().out)["notes"] if TOPO_NOTE in n)
    assert "PIX (one PCIe switch) GPU0-GPU1, GPU2-GPU3, GPU4-GPU5, GPU6-GPU7" in note
    assert "SYS (across sockets) 16 pairs" in note
    assert "NUMA 0: GPU0-GPU3; NUMA 1: GPU4-GPU7" in note


ROWS = [
    ("fresh_ad/nvsmi_jade73_v100_exclusive_busy.txt", "module_compute_exclusive"),
    ("fresh_ac/ibwritebw_tf22077_roce_mtu1024_header.txt", "setting_worth_noting"),
]


@pytest.mark.parametrize(("row", "cause"), ROWS)
def test_scored_rows(row: str, cause: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = Path(__file__).parent.parent / "data/captures" / row
    assert main(["doctor", "--from", str(path), "--json"]) == 0
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert {f["severity"] for f in findings} == {"info"} and cause in {f["cause"] for f in findings}, findings
