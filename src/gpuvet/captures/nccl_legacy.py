"""NCCL 1.x's test binaries and the oldest nccl-tests, as their source printed them (issue 46, AX2; NVIDIA/nccl
v1.2.3-1+cuda8.0 test/single/*_test.cu and test/mpi/mpi_test.cu, nccl-tests of 2017-2019), read beside today's
nccl-tests (captures/bench.py):

- the single-process tests ``all_reduce_test <bytes> [nGPUs] [GPU …]``: '#   Rank  0 uses device  0 [0x04] Tesla
  P100-SXM2-16GB' (the README's older '#   Device  0 ->  0 [0x0a] GeForce GTX TITAN X'), a header '# bytes N type op
  time algbw busbw res …' and rows of one size per type and op, their time in milliseconds (nccl-tests' in µs);
  broadcast's and reduce's rows hold the root between the type (op) and the time;
- the shortest form posters paste, 'N type op time algbw busbw' with no bytes column (the size is N times the type's
  width);
- mpi_test's verdict ('3 errors. Test FAILED.', 'Test PASSED.') and its init failure ('NCCL Init failed (2) …');
- several runs pasted one after another, each under the command line that ran it (the thread comparing them):
  each run is read alone, named by its command (``runs``).

A row's figures are never guessed: a layout is read only where each cell has its own shape."""

from __future__ import annotations

import re

from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.records import NcclRow
from gpuvet.captures.text import Line

_WIDTH = {
    "char": 1,
    "int8": 1,
    "uint8": 1,
    "half": 2,
    "int": 4,
    "int32": 4,
    "uint32": 4,
    "float": 4,
    "double": 8,
    "int64": 8,
    "uint64": 8,
}
_TYPES = "|".join(sorted(_WIDTH, key=len, reverse=True))
_NUM = r"(\d+\.\d+)"
# 'N type [op] [root] time algbw busbw [res]': no bytes column (the first cell a count, the second a type name)
_SHORT_ROW = lazy(
    r"^\s*(\d+)\s+("
    + _TYPES
    + r")\s+(?:(?:sum|prod|max|min)\s+)?(?:-?\d{1,3}\s+)?"
    + _NUM
    + r"\s+"
    + _NUM
    + r"\s+"
    + _NUM
    + r"(?:\s+(\S+))?(?:\s+\d+\.\d+\s+\d+\.\d+\s+\d+\.\d+(?:\s+\S+)?)?\s*$"
)
# 'bytes N type root time algbw busbw res' (broadcast): the root a small integer where a time would be
ROOT_ROW = lazy(
    r"^\s*(\d+)\s+(\d+)\s+(" + _TYPES + r")\s+(-?\d{1,3})\s+" + _NUM + r"\s+" + _NUM + r"\s+" + _NUM + r"\s+(\S+)\s*$"
)
# the single-process tests' device lines: 'Rank 0 uses device 0 [0x04] MODEL', the README's 'Device 0 -> 0 [..] MODEL'
DEVICE = lazy(
    r"^#?\s*(?:Rank\s+(\d+)\s+uses\s+device|Device)\s+(\d+)\s+(?:->\s+\d+\s+)?\[(?:0x)?[0-9a-fA-F:.]+\]\s+"
    r"(.+?)\s*$"
)
HEADER = lazy(r"^#?\s*(?:bytes\s+N\s+type|N\s+type\s+(?:op\s+|root\s+)?time\s+algbw)")
# a test binary's command line: NCCL 1's '*_test', nccl-tests' '*_perf' (its arguments after it)
COMMAND = lazy(
    r"(?:^|[\s/$#>])(?P<op>all_reduce|all_gather|reduce_scatter|broadcast|reduce|alltoall|sendrecv|gather|"
    r"scatter|hypercube)_(?:test|perf)(?:\.exe)?\b(?P<args>[^|\n]{0,200})"
)
# mpi_test's own words: its verdict after checking every value, its init failure
MPI_FAILED = lazy(r"^\s*(\d+) errors\. Test FAILED\.\s*$")
MPI_PASSED = lazy(r"^\s*Test PASSED\.\s*$")
MPI_INIT = lazy(r"^\s*NCCL Init failed \((\d+)\) '([^']*)'")


def row(text: str) -> NcclRow | None:
    """A row of NCCL 1's layouts no nccl-tests layout reads: the short one (no bytes column) or broadcast's (a
    root before the time); its time read in µs (NCCL 1 prints milliseconds)."""
    if (m := ROOT_ROW.match(text)) is not None:
        size, t, alg, bus, res = int(m.group(1)), m.group(5), m.group(6), m.group(7), m.group(8)
    elif (m := _SHORT_ROW.match(text)) is not None:
        size, t, alg, bus, res = int(m.group(1)) * _WIDTH[m.group(2)], m.group(3), m.group(4), m.group(5), m.group(6)
    else:
        return None
    err = _float(res) if res is not None else None
    return NcclRow(size, float(t) * 1000.0, float(alg), float(bus), None if err is None else int(err > 1e-3))


def _float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def device(text: str) -> tuple[str, str, str, str] | None:
    """A single-process test's device line as (rank, host, device, model): no host is printed (''), and the
    README's form names no rank (its device is its rank)."""
    m = DEVICE.match(text.strip())
    if m is None:
        return None
    return (m.group(1) or m.group(2), "", m.group(2), m.group(3))


def command_ranks(lines: list[Line]) -> int | None:
    """The GPUs a NCCL 1 test's command line asks for ('all_reduce_test 10000000 2 0 1': 2), None where no such
    line gives a count (its default is every visible GPU: not said)."""
    for ln in lines:
        if "_test" in ln.text and (m := COMMAND.search(ln.text)) is not None:
            count = re.match(r"\s+\d+\s+(\d+)\b", m.group("args"))
            return int(count.group(1)) if count else None
    return None


def runs(lines: list[Line], is_row: object) -> list[int]:
    """Where each of two or more runs pasted one after another starts: a test's command line with result rows
    under it before the next command; [] where the file holds one run. ``is_row``: the reader's row test."""
    assert callable(is_row)
    starts = [i for i, ln in enumerate(lines) if ("_test" in ln.text or "_perf" in ln.text) and COMMAND.search(ln.text)]
    if len(starts) < 2:
        return []
    bounds = [*starts, len(lines)]
    ran = [a for a, b in zip(bounds, bounds[1:], strict=False) if any(is_row(ln.text) for ln in lines[a + 1 : b])]
    return ran if len(ran) >= 2 else []


def summaryless(lines: list[Line]) -> bool:
    """A NCCL 1 test's run (its command, header or device lines): before 1.3 it printed no 'Avg bus bandwidth'
    line, so a table without one is not a run cut short."""
    return any(
        ("_test" in ln.text and COMMAND.search(ln.text)) or HEADER.match(ln.text.strip()) or DEVICE.match(ln.text.strip())
        for ln in lines[:4000]
        if "_test" in ln.text or "N" in ln.text or "evice" in ln.text
    )


def command_at(lines: list[Line]) -> tuple[int, str] | None:
    """The first test command line of a run and its text (the run's name in a file holding several)."""
    for ln in lines:
        if ("_test" in ln.text or "_perf" in ln.text) and (m := COMMAND.search(ln.text)) is not None:
            return ln.no, (m.group("op") + ln.text[m.end("op") : m.end("args")]).strip()[:120]
    return None
