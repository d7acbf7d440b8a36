"""Issue 46 (batch Z): p2pBandwidthLatencyTest's latency matrices (us) are read, every one the sample prints: a GPU
table and a CPU table under each 'P2P=Disabled Latency Matrix (us)' / 'P2P=Enabled Latency (P2P Writes) Matrix
(us)' title. No design figure gives a latency, so they are said read and never judged (nor priced as GB/s); a paste
of them alone lists the modules timed. A paste copied with an editor's line numbers reads the same."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuvet.captures.gutter import ungutter
from gpuvet.captures.read import parse_text
from gpuvet.cli.app import main

LATENCY = """P2P=Disabled Latency Matrix (us)
   GPU     0      1      2
     0   2.48  16.02  15.77
     1  14.10   2.31  15.20
     2  13.88  15.61   2.29

   CPU     0      1      2
     0   2.60   6.70   6.41
     1   6.55   2.58   6.29
     2   6.33   6.21   2.47
P2P=Enabled Latency (P2P Writes) Matrix (us)
   GPU     0      1      2
     0   2.47   1.90   1.88
     1   1.87   2.30   1.85
     2   1.86   1.84   2.28

   CPU     0      1      2
     0   2.66   1.95   1.93
     1   2.02   2.70   1.99
     2   1.91   1.88   2.52
"""
BANDWIDTH = """Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)
   D\\D     0      1      2
     0 770.10  48.20  48.30
     1  48.10 771.50  48.25
     2  48.22  48.19 772.00
"""
NAMES = ["p2pBandwidthLatencyTest latency P2P=Disabled GPU (us)", "p2pBandwidthLatencyTest latency P2P=Disabled CPU (us)",
         "p2pBandwidthLatencyTest latency P2P=Enabled (writes) GPU (us)",
         "p2pBandwidthLatencyTest latency P2P=Enabled (writes) CPU (us)"]


def _numbered(text: str) -> str:
    """The text as vim's ':set number' shows it (a right-aligned gutter, then one space)."""
    return "".join(f"{n:3d} {s}".rstrip(" ") + "\n" for n, s in enumerate(text.splitlines(), 1))


@pytest.mark.parametrize("text", [LATENCY, "```\n" + _numbered(LATENCY) + "```\n"])
def test_every_latency_matrix_is_read_not_judged(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                  ) -> None:
    fc = parse_text(text, "p2p.txt")
    assert list(fc.samples.latencies) == NAMES
    assert fc.samples.latencies[NAMES[0]][1] == [14.10, 2.31, 15.20]
    assert fc.samples.latencies[NAMES[3]][2] == [1.91, 1.88, 2.52]
    assert not fc.samples.matrices  # microseconds are no bandwidth
    path = tmp_path / "p2p.txt"
    path.write_text(text)
    assert main(["doctor", "--from", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["findings"] == []
    assert main(["inventory", "--from", str(path), "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["modules"]) == 3


def test_latency_tables_beside_bandwidth_ones_stay_apart() -> None:
    fc = parse_text(BANDWIDTH + LATENCY, "p2p.txt")
    assert list(fc.samples.matrices) == ["p2pBandwidthLatencyTest unidirectional P2P=Enabled (writes)"]
    assert list(fc.samples.latencies) == NAMES


def test_a_tools_own_short_numbered_list_keeps_its_numbers() -> None:
    lines = [(n, f"{n} GPU-{n}") for n in range(1, 6)]  # shorter than an editor's gutter run (MIN_RUN)
    notes: list[str] = []
    assert ungutter(lines, notes) == lines and not notes
    table = [(n + 1, f"  {n}   {8.5 + n:.2f}   6.12") for n in range(8)]  # a matrix's rows 0..7: the tool's index
    assert ungutter(table, notes) == table and not notes
    sweep = [(1, "NumCUs   CPU00   GPU00")] + [(n + 1, f"  {n}   {11.0 + n:.2f}   {17.5 * n:.2f}") for n in range(1, 9)]
    assert ungutter(sweep, notes) == sweep and not notes  # TransferBench's rows numbered from 1 under its header
    long = [(n, f"{n:2d} GPU-{n}") for n in range(1, 8)]
    assert [s for _, s in ungutter(long, notes)] == [f"GPU-{n}" for n in range(1, 8)] and notes
