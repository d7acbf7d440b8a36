"""Issue 43: reading a large capture holds each line once. clean() makes one (no, text) pair per line
and nothing per line beside it; a second list of pairs, or a copy of every line's text, shows here as
a larger peak of allocations relative to the text's own size (tracemalloc counts bytes asked for, so
the figure does not depend on the machine's speed). Time and RSS are the benchmark's
(benchmarks/reading_speed.py --only report)."""

from __future__ import annotations

import random
import tracemalloc
from pathlib import Path

import pytest

from gpuvet.captures.text import clean

_NOISE = (
    "usb 1-1.{n}: new high-speed USB device number {k} using xhci_hcd",
    "EXT4-fs (nvme0n1p{n}): mounted filesystem with ordered data mode. Quota mode: none.",
    "systemd[1]: Started session-{k}.scope - Session {k} of User slurm.",
    "mlx5_core 0000:{n:02x}:00.0: mlx5_pcie_event:301: PCIe slot advertised sufficient power (75W).",
)
# One Line per line is about 2.6x a kernel log's text (a pair, an int and a str beside ~75 characters);
# the old clean(), which made a second list of pairs before the Lines, peaked at 3.9x.
_PEAK = 3.2


def _kernel_log(lines: int) -> str:
    """A bug report's kernel log: other drivers' lines with their stamps, and one Xid (seeded)."""
    rnd = random.Random(43)
    out = [f"[{1000 + i * 0.37:12.6f}] " + rnd.choice(_NOISE).format(n=rnd.randrange(1, 200), k=i + 1000)
           for i in range(lines)]
    out.append("[ 9999.000000] NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off "
               "the bus.")
    return "\n".join(out) + "\n"


def test_cleaning_a_long_log_holds_each_line_once() -> None:
    text = _kernel_log(10_000)
    tracemalloc.start()
    try:
        cleaned = clean(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(cleaned.lines) == 10_002  # every line, the last (empty) one too
    assert cleaned.lines[-2].text.endswith("fallen off the bus.")
    assert peak <= _PEAK * len(text), f"clean() peaked at {peak / len(text):.2f}x the text's size"


def test_markers_are_searched_in_one_copy_of_the_lines() -> None:
    """Marks joins the lines once, each after a newline: no join and then a second copy with a newline
    before it (a bug report's text twice, beside its lines, was the top of doctor --from's peak)."""
    from gpuvet.captures.marks import Marks

    lines = clean(_kernel_log(600)).lines  # under marks._SMALL: no byte triples counted, the join alone
    joined = sum(len(ln.text) + 1 for ln in lines)
    tracemalloc.start()
    try:
        marks = Marks(lines)
        assert marks.has("NVRM: Xid") and not marks.has("nvidia-smi")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert marks.text is not None and len(marks.text) == joined and marks.text.startswith("\n[")
    assert peak <= 1.4 * joined, f"Marks peaked at {peak / joined:.2f}x the joined lines"


def test_a_settled_file_is_parsed_and_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """doctor and its capture backend both read every --from file: a file unchanged since it was read is
    not read again (a 125 MB report's text, read and decoded a second time); a changed one is."""
    from gpuvet.captures import read

    path = tmp_path / "dmesg.txt"
    path.write_text(_kernel_log(50), encoding="utf-8")
    reads: list[str] = []
    real = read._read_text
    monkeypatch.setattr(read, "_read_text", lambda p, lead: reads.append(p) or real(p, lead))
    monkeypatch.setattr(read, "_SETTLED_NS", -10**12)  # as if written long ago (a test cannot set ctime back)
    first = read.read(str(path))
    assert read.read(str(path)) is first and reads == [str(path)]
    path.write_text(_kernel_log(50).replace("Xid (PCI:0000:18:00): 79", "Xid (PCI:0000:18:00): 48"), encoding="utf-8")
    second = read.read(str(path))
    assert len(reads) == 2 and [x.code for x in second.kernel.xids] == [48]
    monkeypatch.setattr(read, "_SETTLED_NS", 2 * 10**9)  # just written: read each time, whatever its stat says
    assert read.read(str(path)) is second and len(reads) == 3


def test_a_text_given_up_is_let_go_once_its_lines_are_made() -> None:
    """read.py gives clean() the text in a list: where a line loses trailing spaces, peel joins the
    cleaned lines itself, and the text as read is no longer held beside them (a bug report's size)."""
    tracemalloc.start()
    try:
        held = [_kernel_log(10_000).replace("\n", " \n", 1)]  # one line right-stripped: the lines are not the text
        size = len(held[0])
        tracemalloc.reset_peak()
        cleaned = clean(held)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert held == [] and len(cleaned.lines) == 10_002 and not cleaned.lines[0].text.endswith(" ")
    # the text, its Lines (~2.6x) and a transient; with the text kept, peel's joined copy came on top (~4.7x)
    assert peak <= 4.1 * size, f"clean() peaked at {peak / size:.2f}x the text's size"
