"""Huawei's HCCL Test (CANN ``hccl_test``: ``mpirun -n 8 ./bin/all_reduce_test -b 8K -e 1G -f 2 -p 8``)
read into the records nccl-tests fills, so the same checks judge it.

Its table is ``data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): | check_result:`` (the
docs spell avg_time), one row per size. It prints algorithm bandwidth only; the bus bandwidth is
derived with nccl-tests' factor for the collective (all_reduce 2(n-1)/n; all_gather, reduce_scatter
and alltoall (n-1)/n; broadcast and reduce 1) when the command line names the ranks (-p or -n),
else left unknown. ``check_result`` success counts as 0 wrong, failed as wrong (and the line is a
failure, kept as evidence), NULL as not checked. It prints no summary: the run is taken as whole
when its last row reaches the maxbytes its first line announces; only then is the average bus
bandwidth given. Error lines (``hccl interface return err …, retcode: 7``) are failures.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gpuvet.captures.bench import NcclFailure, NcclParse
from gpuvet.captures.records import NcclResult, NcclRow
from gpuvet.captures.text import Line

if TYPE_CHECKING:
    from gpuvet.captures.read import FileCapture

KIND = "hccl_test"
_HEAD = re.compile(r"^\s*data_size\(Bytes\):\s*\|\s*a(?:ve?g)_time\(us\):\s*\|\s*alg_bandwidth\(GB/s\):\s*\|"
                   r"\s*check_result:\s*$")
_ROW = re.compile(r"^\s*(\d{1,20})\s*\|\s*(\S+)\s*\|\s*(\S+)\s*\|\s*(success|failed|NULL)\s*$")
_BOUNDS = re.compile(r"^\s*the minbytes is (\d{1,20}), maxbytes is (\d{1,20}), iters is \d+, warmup_iters is \d+")
_ERROR = re.compile(r"^\s*(hccl|acl) interface return err\S*(?: return err)?\s+(\S+:\d+), retcode: (\w+)")
_ERROR_TRAIL = re.compile(r"^\s*(This is an error in \w+\.|Process \d+ HcclGetRootInfo failed.*)\s*$")
_COMMAND = re.compile(r"\b(all_reduce|all_gather|reduce_scatter|alltoall|broadcast|reduce|scatter)(?:v)?_test\b")
_RANKS = re.compile(r"(?:^|\s)-(?:p|n|np)\s+(\d{1,6})\b")
_BUS_FACTOR = {"all_reduce": lambda n: 2 * (n - 1) / n, "all_gather": lambda n: (n - 1) / n,
               "reduce_scatter": lambda n: (n - 1) / n, "alltoall": lambda n: (n - 1) / n,
               "broadcast": lambda n: 1.0, "reduce": lambda n: 1.0}


def add_to(fc: FileCapture, lines: list[Line], where: str) -> set[int]:
    """HCCL Test output in the lines, added to the file's nccl-tests records; the lines claimed."""
    parsed = parse(lines, where)
    if parsed.claimed:
        fc.nccl.results += parsed.results
        fc.nccl.failures += parsed.failures
        fc.nccl.notes += parsed.notes
        fc.nccl.claimed |= parsed.claimed
        fc.kinds.append(KIND)
    return parsed.claimed


def parse(lines: list[Line], where: str) -> NcclParse:
    out = NcclParse()
    rows: list[NcclRow] = []
    bounds: tuple[int, int] | None = None
    header = False
    for ln in lines:
        if _HEAD.match(ln.text):
            header = True
        elif (b := _BOUNDS.match(ln.text)) is not None:
            bounds = bounds or (int(b.group(1)), int(b.group(2)))
        elif (m := _ROW.match(ln.text)) is not None:
            rows.append(_row(m))
            if m.group(4) == "failed":
                out.failures.append(NcclFailure("check_result", f"check_result failed at {m.group(1)} B", None,
                                                ln.text.strip(), ln.no))
        elif "mpirun" in ln.text and _COMMAND.search(ln.text):
            pass  # the command line: it names the collective and the ranks
        elif (e := _ERROR.match(ln.text)) is not None:
            out.failures.append(NcclFailure(e.group(1), f"retcode {e.group(3)}", e.group(2), ln.text.strip(), ln.no))
        elif not (_ERROR_TRAIL.match(ln.text) and (out.failures or bounds)):
            continue
        out.claimed.add(ln.no)
    if not (header or bounds or out.failures):
        return NcclParse()  # rows without the tool's header or first line: not enough to say it is HCCL Test
    out.results.append(_result(lines, rows, bounds, where, out.notes))
    return out


def _number(text: str) -> float | None:
    try:
        v = float(text)
    except ValueError:
        return None
    return v if v == v and 0 <= v < float("inf") else None


def _row(m: re.Match[str]) -> NcclRow:
    wrong = {"success": 0, "failed": 1}.get(m.group(4))
    return NcclRow(int(m.group(1)), _number(m.group(2)), _number(m.group(3)), None, wrong)


def _result(lines: list[Line], rows: list[NcclRow], bounds: tuple[int, int] | None, where: str,
            notes: list[str]) -> NcclResult:
    """The rows with bus bandwidth derived where the collective and the ranks are known."""
    command = next((ln.text for ln in lines if _COMMAND.search(ln.text)), "")
    op_m = _COMMAND.search(command) or _COMMAND.search(where)
    op = op_m.group(1) if op_m else "unknown"
    ranks_m = _RANKS.search(command)
    ranks = int(ranks_m.group(1)) if ranks_m and int(ranks_m.group(1)) > 0 else None
    factor = _BUS_FACTOR[op](ranks) if op in _BUS_FACTOR and ranks else None
    if factor is None and rows:
        notes.append(f"{KIND}: {'the ranks' if op in _BUS_FACTOR else 'the collective'} not in the capture (give the "
                     "mpirun command line with it): bus bandwidth not derived from alg_bandwidth")
    elif rows:
        notes.append(f"{KIND}: bus bandwidth derived from alg_bandwidth × {factor:g} ({op}, {ranks} ranks, "
                     "nccl-tests' factor); HCCL Test prints algorithm bandwidth only")
    rows = [NcclRow(r.size_bytes, r.time_us, r.algbw, r.algbw * factor if factor and r.algbw is not None else None,
                    r.wrong) for r in rows]
    bad = [i for i, r in enumerate(rows) if r.time_us is None or r.algbw is None]
    if bad:
        notes.append(f"{KIND}: {len(bad)} row(s) with unreadable figures: not used for bandwidth")
    whole = bool(rows) and bounds is not None and rows[-1].size_bytes >= bounds[1]
    if rows and not whole:
        notes.append(f"{KIND}: the output ends at {rows[-1].size_bytes} B"
                     + (f" before the maxbytes {bounds[1]} it announced" if bounds else " without its first line "
                        "(the minbytes/maxbytes it announces)") + ": cut, killed or hung, or a part pasted")
    sums = [r.busbw for r in rows if r.busbw is not None]
    unchecked = [r.size_bytes for r in rows if r.wrong is None]
    if unchecked:
        notes.append(f"{KIND}: check_result NULL at {len(unchecked)} size(s): not checked (-c 0, or a sum the check "
                     "cannot represent)")
    avg = sum(sums) / len(sums) if whole and sums and len(sums) == len(rows) else None
    return NcclResult(op, ranks, rows, avg, where)
