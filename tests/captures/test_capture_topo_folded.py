"""nvidia-smi topo -m folded at 80 columns (`fold -w 80`, newcomer 55): fold counts a tab to its next stop of 8,
so a tab-separated matrix's pieces are 80 columns wide, not 80 characters. The matrix is rejoined where every
piece before a continuation is exactly that wide and each continuation starts with a cell (no row starts so);
the capture is tests/data/captures/topo_nvswitch_8gpu.txt, folded here."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuvet.captures.read import parse_text

TOPO = (Path(__file__).parent.parent / "data" / "captures" / "topo_nvswitch_8gpu.txt").read_text()


def fold(text: str, width: int = 80) -> str:
    """What coreutils' fold -w does: a line broken where its next character would pass the width (tabs to 8)."""
    out = []
    for line in text.split("\n"):
        col, piece = 0, ""
        for ch in line:
            step = 8 - col % 8 if ch == "\t" else 1
            if col + step > width:
                out.append(piece)
                col, piece = 0, ""
                step = 8 if ch == "\t" else 1
            piece, col = piece + ch, col + step
        out.append(piece)
    return "\n".join(out)


@pytest.mark.parametrize("folded", [fold(TOPO), fold(TOPO.expandtabs())], ids=["tabs", "spaces"])
def test_topo_m_folded_at_80_reads_as_printed(folded: str) -> None:
    assert folded != TOPO and max(len(s.expandtabs()) for s in folded.split("\n")) == 80
    fc, plain = parse_text(folded, "topo.txt"), parse_text(TOPO, "topo.txt")
    assert fc.topo is not None and plain.topo is not None
    assert (fc.topo.devices, fc.topo.cells, fc.topo.affinity) == (plain.topo.devices, plain.topo.cells,
                                                                  plain.topo.affinity)
    assert any("wrapped at 80 columns" in n for n in fc.notes), fc.notes
