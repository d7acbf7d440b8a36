"""Huawei's HCCL Test (CANN ``hccl_test``: ``mpirun -n 8 ./bin/all_reduce_test -b 8K -e 1G -f 2 -p 8``)
read into the records nccl-tests fills, so the same checks judge it.

Its table is ``data_size(Bytes): | aveg_time(us): | alg_bandwidth(GB/s): | check_result:`` (the
docs spell avg_time), one row per size. It prints algorithm bandwidth only; the bus bandwidth is
derived with nccl-tests' factor for the collective (all_reduce 2(n-1)/n; all_gather, reduce_scatter
and alltoall (n-1)/n; broadcast and reduce 1). The factors hold because hccl_test's data_size is
the size nccl-tests' factors assume: its sources (opbase_test/hccl_*_rootinfo_test.cc,
cal_execution_time) divide the all_gather / reduce_scatter count by the ranks and print
alg_bandwidth as that per-rank size x ranks over the time (the gathered / scattered total), and
alltoall, broadcast and reduce as the whole buffer of one rank over the time. scatter and
reduce_scatterv have no factor checked against the sources: bus bandwidth stays unknown there.

The ranks are mpirun's ``-n``/``-np`` (CANN's HCCL Test docs: "the total NPUs: nodes x NPUs per
node"); the test binary's own ``-n`` is its iteration count and ``-p`` its NPUs per node, taken as
the ranks only when mpirun names no -n and no hostfile or hosts (one node). Otherwise busbw is
left unknown with a note. ``check_result`` success counts as 0 wrong, failed as wrong (and the
line is a failure, kept as evidence), NULL as not checked. It prints no summary: the run is taken
as whole when its last row reaches the maxbytes its first line announces; only then is the average
bus bandwidth given. Error lines (``hccl interface return err …, retcode: 7``) are failures. Each
command line, ``the minbytes is …`` line or table header after a run's rows starts another run:
two tests in one file are two results.

The log names no NPU, so doctor prices its bus bandwidth on the NPUs a listing beside it names
(npu-smi info: 910B3 is the catalog's Ascend910B, on the atlas-800t-a2 mesh) or on the node
``--expect`` declares (``doctor.collective_expect``), and can't tell without either.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from gpuvet.captures.bench import NcclFailure, NcclParse
from gpuvet.captures.records import HCCL_TEST, NcclResult, NcclRow
from gpuvet.captures.text import Line

KIND = HCCL_TEST
_HEAD = re.compile(r"^\s*data_size\(Bytes\):\s*\|\s*a(?:ve?g)_time\(us\):\s*\|\s*alg_bandwidth\(GB/s\):\s*\|"
                   r"\s*check_result:\s*$")
_ROW = re.compile(r"^\s*(\d{1,20})\s*\|\s*(\S+)\s*\|\s*(\S+)\s*\|\s*(success|failed|NULL)\s*$")
_BOUNDS = re.compile(r"^\s*the minbytes is (\d{1,20}), maxbytes is (\d{1,20}), iters is \d+, warmup_iters is \d+")
_ERROR = re.compile(r"^\s*(hccl|acl) interface return err\S*(?: return err)?\s+(\S+:\d+), retcode: (\w+)")
_ERROR_TRAIL = re.compile(r"^\s*(This is an error in \w+\.|Process \d+ HcclGetRootInfo failed.*)\s*$")
_COLLECTIVES = "all_reduce|all_gather|reduce_scatter|alltoall|broadcast|reduce|scatter"
_COMMAND = re.compile(rf"\b({_COLLECTIVES})(v)?_test\b")
_BINARY = re.compile(rf"(?:^|\s)(\S*/)?({_COLLECTIVES})(v)?_test(?=\s|$)")  # the test binary on a command line
_MPI = re.compile(r"(?:^|[\s/])(mpirun|mpiexec)(?=\s|$)")
_MPI_RANKS = re.compile(r"(?:^|\s)(?:-n|--n|-np|--np)(?:\s+|=)(\d{1,6})(?=\s|$)")
_MPI_HOSTS = re.compile(r"(?:^|\s)(?:-f|-hostfile|--hostfile|-machinefile|--machinefile|-H|-host|--host|-hosts|"
                        r"--hosts|-ppn|-npernode|--npernode|--map-by)(?:\s|=|$)")
_PER_NODE = re.compile(r"(?:^|\s)-p(?:\s+|=)(\d{1,6})(?=\s|$)")
_OPTION = re.compile(r"(?:^|\s)-{1,2}[A-Za-z]")
# nccl-tests' factors, for the collectives whose hccl_test sources print data_size as nccl-tests' size
# (see the module docstring); the v variants only where their source was read (all_gatherv, alltoallv).
_BUS_FACTOR: dict[str, Callable[[int], float]] = {
               "all_reduce": lambda n: 2 * (n - 1) / n, "all_gather": lambda n: (n - 1) / n,
               "reduce_scatter": lambda n: (n - 1) / n, "alltoall": lambda n: (n - 1) / n,
               "broadcast": lambda n: 1.0, "reduce": lambda n: 1.0}
_V_CHECKED = {"all_gather", "alltoall"}


@dataclass
class _Command:
    op: str
    variant: bool  # the v form (all_gatherv_test …)
    mpi: str | None  # the mpirun part, before the binary; None when the line has none
    test: str  # the test's own options, after the binary


@dataclass
class _Run:
    """One test's output: its command line, first line, header and rows, as far as the file has them."""

    command: _Command | None = None
    bounds: tuple[int, int] | None = None
    header: bool = False
    rows: list[NcclRow] = field(default_factory=list)

    def empty(self) -> bool:
        return self.command is None and self.bounds is None and not self.header and not self.rows


def _command(text: str) -> _Command | None:
    """A command line running a test binary: mpirun before it, a path to it, or options after it."""
    m = _BINARY.search(text)
    if m is None:
        return None
    before, after = text[:m.start()], text[m.end():]
    mpi = before if _MPI.search(before) else None
    if mpi is None and not m.group(1) and not _OPTION.search(after):
        return None
    return _Command(m.group(2), bool(m.group(3)), mpi, after)


def parse(lines: list[Line], where: str) -> NcclParse:
    out = NcclParse()
    runs = [_Run()]
    announced = False  # a `the minbytes is …` line seen: error trails after it are the tool's
    for ln in lines:
        run = runs[-1]
        if _HEAD.match(ln.text):
            if run.header or run.rows:
                runs.append(run := _Run())
            run.header = True
        elif (b := _BOUNDS.match(ln.text)) is not None:
            if run.bounds or run.header or run.rows:
                runs.append(run := _Run())
            run.bounds, announced = (int(b.group(1)), int(b.group(2))), True
        elif (m := _ROW.match(ln.text)) is not None:
            run.rows.append(_row(m))
            if m.group(4) == "failed":
                out.failures.append(NcclFailure("check_result", f"check_result failed at {m.group(1)} B", None,
                                                ln.text.strip(), ln.no, tool=KIND))
        elif (c := _command(ln.text)) is not None:
            if not run.empty():
                runs.append(run := _Run())
            run.command = c
        elif (e := _ERROR.match(ln.text)) is not None:
            out.failures.append(NcclFailure(e.group(1), f"retcode {e.group(3)}", e.group(2), ln.text.strip(), ln.no,
                                            tool=KIND))
        elif not (_ERROR_TRAIL.match(ln.text) and (out.failures or announced)):
            continue
        out.claimed.add(ln.no)
    if not (announced or any(r.header for r in runs) or out.failures):
        return NcclParse()  # rows without the tool's header or first line: not enough to say it is HCCL Test
    runs = [r for r in runs if not r.empty()] or [_Run()]
    for i, run in enumerate(runs):
        label = f"{KIND} (run {i + 1} of {len(runs)})" if len(runs) > 1 else KIND
        out.results.append(_result(run, where, label, out.notes))
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


def _ranks(command: _Command | None) -> tuple[int | None, str]:
    """The ranks and where they come from, or None and why they are not known."""
    if command is None:
        return None, "no command line in the capture (give the mpirun command line with it: its -n is the ranks)"
    if command.mpi is None:
        return None, ("the command line has no mpirun part (the ranks are mpirun's -n; the test's own -n is its "
                      "iteration count, -p its NPUs per node)")
    if (m := _MPI_RANKS.search(command.mpi)) is not None:
        n = int(m.group(1))
        return (n, "mpirun -n") if n > 0 else (None, "mpirun -n 0 starts no rank")
    if _MPI_HOSTS.search(command.mpi):
        return None, ("mpirun names no -n but hosts or a hostfile: the ranks are not known (the test's -p is its "
                      "NPUs per node, not the ranks)")
    if (p := _PER_NODE.search(command.test)) is not None and int(p.group(1)) > 0:
        return int(p.group(1)), "the test's -p (NPUs per node; mpirun names no -n and no hosts: one node)"
    return None, "mpirun names no -n and the test no -p: the ranks are not known"


def _factor(op: str, variant: bool, ranks: int | None, why: str) -> tuple[float | None, str]:
    """The bus bandwidth factor, or None and why none is applied."""
    name = f"{op}{'v' if variant else ''}"
    if op == "unknown":
        return None, "the collective is not in the capture (give the mpirun command line with it)"
    if op not in _BUS_FACTOR or (variant and op not in _V_CHECKED):
        return None, (f"{name}: no bus-bandwidth factor checked against hccl_test's sources for it (what its "
                      "data_size counts is not verified)")
    if ranks is None:
        return None, why
    if ranks < 2:
        return None, f"{name} on {ranks} rank: no data crosses a link"
    return _BUS_FACTOR[op](ranks), ""


def _result(run: _Run, where: str, label: str, notes: list[str]) -> NcclResult:
    """The rows with bus bandwidth derived where the collective and the ranks are known."""
    cmd = run.command
    op_m = None if cmd else _COMMAND.search(where)
    op = cmd.op if cmd else op_m.group(1) if op_m else "unknown"
    variant = cmd.variant if cmd else bool(op_m and op_m.group(2))
    ranks, how = _ranks(cmd)
    rows, bounds = run.rows, run.bounds
    factor, why = _factor(op, variant, ranks, how)
    if factor is None and rows:
        notes.append(f"{label}: {why}: bus bandwidth not derived from alg_bandwidth (algorithm bandwidth only)")
    elif rows:
        notes.append(f"{label}: bus bandwidth derived from alg_bandwidth × {factor:g} ({op}, {ranks} ranks from "
                     f"{how}; nccl-tests' factor); HCCL Test prints algorithm bandwidth only")
    rows = [NcclRow(r.size_bytes, r.time_us, r.algbw, r.algbw * factor if factor and r.algbw is not None else None,
                    r.wrong) for r in rows]
    bad = [i for i, r in enumerate(rows) if r.time_us is None or r.algbw is None]
    if bad:
        notes.append(f"{label}: {len(bad)} row(s) with unreadable figures: not used for bandwidth")
    whole = bool(rows) and bounds is not None and rows[-1].size_bytes >= bounds[1]
    if rows and not whole:
        notes.append(f"{label}: the output ends at {rows[-1].size_bytes} B"
                     + (f" before the maxbytes {bounds[1]} it announced" if bounds else " without its first line "
                        "(the minbytes/maxbytes it announces)") + ": cut, killed or hung, or a part pasted")
    sums = [r.busbw for r in rows if r.busbw is not None]
    unchecked = [r.size_bytes for r in rows if r.wrong is None]
    if unchecked:
        notes.append(f"{label}: check_result NULL at {len(unchecked)} size(s): not checked (-c 0, or a sum the check "
                     "cannot represent)")
    avg = sum(sums) / len(sums) if whole and sums and len(sums) == len(rows) else None
    return NcclResult(op, ranks, rows, avg, where, announced_max=bounds[1] if bounds else None)
