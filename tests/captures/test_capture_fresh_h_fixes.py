"""Batch H's NVIDIA-side misses (issue 46), each as its class: inputs written in each tool's own layout,
never one capture's strings."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpuvet.captures import nccl_log
from gpuvet.captures.text import clean
from tests.captures.test_captures_fresh_c import run_json


def _doctor(tmp_path: Path, text: str) -> tuple[int, dict[str, Any]]:
    path = tmp_path / "capture.txt"
    path.write_text(text)
    return run_json("doctor", "--from", str(path))


def _found(data: dict[str, Any]) -> dict[tuple[str, str | None], str]:
    return {(f["cause"], f.get("module")): f["severity"] for f in data["findings"]}


_IB_WARN = ("compute-node-a07:418220:419011 [3] transport/net_ib.cc:2244 NCCL WARN NET/IB: Got completion from peer "
            "10.20.0.17<41766> with status=12 opcode=0 len=524288 vendor err 129 (Send) localGid "
            "::ffff:10.200.100.3 remoteGids::ffff:10.200.100.17 hca mlx5_11")


def test_a_long_nccl_warn_line_keeps_the_hca_name_whole(tmp_path: Path) -> None:
    assert len(_IB_WARN) > 240
    parsed = nccl_log.parse(clean(_IB_WARN + "\n").lines)
    assert parsed.failures and parsed.failures[0].at.text.endswith("hca mlx5_11")
    _, data = _doctor(tmp_path, _IB_WARN + "\n")
    logs = [f["evidence"].get("log", "") for f in data["findings"]]
    assert any(str(log).endswith("hca mlx5_11") for log in logs)


def test_a_line_longer_than_kept_is_cut_between_words_and_marked() -> None:
    long = "NCCL WARN " + " ".join(f"mlx5_{i}" for i in range(100))
    out = nccl_log.kept(long)
    assert out.endswith(" …") and len(out) <= 402
    assert out[:-2].split()[-1] in long.split()


_NOT_CALLED = """\
[   14.201117] nvidia: loading out-of-tree module taints kernel.
[   14.233541] nvidia-nvlink: Nvlink Core is being initialized, major device number 235
[   14.234010] NVRM: The NVIDIA probe routine was not called for 2 device(s).
[   14.234412] NVRM: This can occur when a driver such as:
               NVRM: nouveau, rivafb, nvidiafb or rivatv
               NVRM: was loaded and obtained ownership of the NVIDIA device(s).
[   14.234980] NVRM: Try unloading the conflicting kernel module (and/or
               NVRM: reconfigure your kernel without the conflicting
               NVRM: driver(s)), then try loading the NVIDIA kernel module
               NVRM: again.
[   14.235301] NVRM: No NVIDIA devices probed.
"""


def test_a_driver_whose_probe_was_never_called_is_one_critical_finding_with_its_advice(tmp_path: Path) -> None:
    _, data = _doctor(tmp_path, _NOT_CALLED)
    found = [f for f in data["findings"] if f["severity"] in ("warn", "critical")]
    assert len(found) == 1 and found[0]["cause"] == "module_init_failed" and found[0]["severity"] == "critical"
    assert found[0]["evidence"]["message"] == "probe_not_called"
    assert "nouveau" in found[0]["fix"]


def test_an_nvidia_smi_line_glued_to_prose_of_another_script_is_read_as_its_output(tmp_path: Path) -> None:
    for text in ("训练到一半显卡掉了，运行nvidia-smi后显示Unable to determine the device handle for GPU0000:3b:00.0: "
                 "Unknown Error\n重启后恢复。\n",
                 "nvidia-smiを実行すると：Unable to determine the device handle for GPU 0000:3B:00.0: GPU is lost。"
                 "再起動が必要です\n"):
        _, data = _doctor(tmp_path, text)
        assert _found(data) == {("module_fell_off_bus", "0000:3B:00.0"): "critical"}, text


def test_an_english_sentence_that_only_mentions_the_message_is_still_not_the_tools_line(tmp_path: Path) -> None:
    text = ("Last week we saw Unable to determine the device handle for GPU0000:3b:00.0: Unknown Error on "
            "another box, but not here.\n")
    path = tmp_path / "capture.txt"
    path.write_text(text)
    from gpuvet.captures.kernel import parse
    assert not parse(clean(text).lines).events


_ROWS = """\
GPU0     X      NV12    NV12    NV12    PXB     SYS     0-31    0               N/A
GPU1    NV12     X      NV12    NV12    PXB     SYS     0-31    0               N/A
GPU2    NV12    NV12     X      NV12    SYS     PXB     32-63   1               N/A
GPU3    NV12    NV12    NV12     X      SYS     PXB     32-63   1               N/A
"""


def test_topo_m_rows_without_their_header_line_are_read_as_the_matrix_with_a_note() -> None:
    from gpuvet.captures.read import parse_text
    fc = parse_text("[cut above]\n" + _ROWS, "constructed")
    assert fc.topo is not None and fc.topo.header == ["GPU0", "GPU1", "GPU2", "GPU3"]
    assert fc.topo.cells[frozenset({"GPU0", "GPU3"})] == "NV12"
    assert any("no header line" in n for n in fc.topo.notes)


def test_a_headerless_block_whose_halves_disagree_or_has_no_diagonal_is_not_taken_for_topo() -> None:
    from gpuvet.captures import topo
    bad = _ROWS.replace("GPU1    NV12     X      NV12    NV12", "GPU1    NV4      X      NV12    NV12")
    assert topo.parse(clean(bad).lines, "constructed") is None
    assert topo.parse(clean(_ROWS.replace(" X ", " 0 ")).lines, "constructed") is None


def _switched(off: int | None, n: int = 8, nv: str = "NV18") -> str:
    head = "        " + "  ".join(f"GPU{j}" for j in range(n)) + "  CPU Affinity    NUMA Affinity"
    rows = []
    for i in range(n):
        cells = ["X" if i == j else ("SYS" if off in (i, j) else nv) for j in range(n)]
        rows.append(f"GPU{i}    " + "    ".join(cells) + f"    {0 if i < n // 2 else 1}-{i}    {i * 2 // n}")
    return "\n".join([head, *rows]) + "\n"


def test_a_module_off_the_switched_fabric_is_named_with_none_of_the_peers_links(tmp_path: Path) -> None:
    _, data = _doctor(tmp_path, _switched(5))
    assert _found(data) == {("nvlink_down", "gpu5"): "critical"}
    assert "gpu5: 0 of 18" in next(f for f in data["findings"])["evidence"]["detail"]
    _, clean_data = _doctor(tmp_path, _switched(None))
    assert _found(clean_data) == {}


def test_a_card_beside_a_small_directly_linked_group_is_not_taken_for_a_module_off_a_switch(tmp_path: Path) -> None:
    _, data = _doctor(tmp_path, _switched(4, n=5, nv="NV4"))
    assert not [f for f in data["findings"] if f["cause"] == "nvlink_down"]


def _p2p_matrix(title: str, n: int, cell: Callable[[int, int], float]) -> list[str]:
    head = "   D\\D" + "".join(f"{j:>7}" for j in range(n))
    rows = [f"{i:>6} " + " ".join(f"{(800.0 if i == j else cell(i, j)):6.2f}" for j in range(n)) for i in range(n)]
    return [title, head, *rows]


def _p2p_run(gain: float, cut_top: int = 0) -> str:
    def slow(i: int, j: int) -> float:
        return 6.1 if (i < 2) == (j < 2) else 8.6

    before = _p2p_matrix("Bidirectional P2P=Disabled Bandwidth Matrix (GB/s)", 4, slow)
    after = _p2p_matrix("Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)", 4, lambda i, j: slow(i, j) * gain)
    kept = before[2 + cut_top:] if cut_top else before
    return "\n".join([*kept, *after, "P2P=Disabled Latency Matrix (us)"]) + "\n"


def test_a_p2p_enabled_matrix_no_faster_than_the_disabled_one_is_one_finding_not_degraded_links(
        tmp_path: Path) -> None:
    for cut in (0, 2):  # whole, or its title and first two rows cut (the rows above the first title)
        _, data = _doctor(tmp_path, _p2p_run(1.0, cut))
        assert _found(data) == {("p2p_disabled", None): "warn"}, cut
    _, data = _doctor(tmp_path, _p2p_run(4.0))
    assert not [f for f in data["findings"] if f["cause"] == "p2p_disabled"]
