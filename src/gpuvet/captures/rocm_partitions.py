"""Issue 46 (R14C): the 'Partitions (Mem, Compute, ID)' column of rocm-smi's ROCm 6 default table ('NPS1, CPX, 0'),
on a GPU split into compute partitions (MI300's SPX, DPX, QPX, CPX; memory NPS1, NPS4): each partition is its own
row and device. A row whose modes print N/A beside a partition id ('N/A, N/A, 1') is a partition the tool reads no
telemetry for, as rocm-smi prints a compute partition other than the first (amdsmi#100): said, so a row of N/A is
not taken for a dead device. The rows themselves are captures/rocm_table.py's; this only names the partitions."""

from __future__ import annotations

import re

from gpuvet.captures.records import ListedParse
from gpuvet.captures.text import Line

MARKERS = ("Partitions",)
_HEADER = re.compile(r"^\s*Device\s+Node\s+IDs\s+.*\bPartitions\b")
# a row's partition cells: memory mode, compute mode, partition id ('NPS1, CPX, 0' or 'N/A, N/A, 1')
_CELLS = re.compile(r"\b(NPS\d|N/A),\s+(SPX|DPX|TPX|QPX|CPX|N/A),\s+(\d{1,3})\b")
_ROW = re.compile(r"^\s*(\d{1,4})\s")


def read(lines: list[Line], out: ListedParse) -> None:
    """A note naming each row's partition where the default table prints the column (run before its reader)."""
    if not any(_HEADER.match(ln.text) for ln in lines):
        return
    said: list[str] = []
    silent: list[str] = []
    first: list[str] = []
    for ln in lines:
        if (row := _ROW.match(ln.text)) is None or (c := _CELLS.search(ln.text)) is None:
            continue
        if c.group(2) == "N/A" and c.group(3) == "0":  # review 67b F12: the first partition, not one after it
            first.append(f"GPU[{row.group(1)}] (partition 0)")
        elif c.group(2) == "N/A":
            silent.append(f"GPU[{row.group(1)}] (partition {c.group(3)})")
        else:
            said.append(f"GPU[{row.group(1)}] {c.group(1)}/{c.group(2)} partition {c.group(3)}")
    if not said and not silent and not first:
        return
    out.notes.append("rocm-smi: compute partitions: " + "; ".join(said or ["none with its modes printed"])
                     + (f"; {', '.join(silent)} print N/A for their modes and readings, as rocm-smi does for a "
                        "compute partition other than the first of a partitioned GPU: each listed as a device of "
                        "its own, none judged dead for it" if silent else "")
                     + (f"; {', '.join(first)} print N/A for their modes as partition 0, the first of its GPU: "
                        "the tool read no modes for it, not judged dead for that" if first else ""))
