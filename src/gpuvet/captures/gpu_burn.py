"""gpu-burn's output: its progress lines (``60.0%  proc'd: 10 (2047 Gflop/s) - …   errors: 0 - 0
temps: 46 C - 48 C``, one figure per GPU joined by `` - ``), and its verdict (``Tested 2 GPUs:`` then
``GPU 0: OK`` / ``GPU 1: FAULTY``). The last progress line says what each GPU did: a count of work
of 0 or -1 is a GPU whose test never ran, an error count marked ``(DIED!)`` a worker that died; a
negative error count is no count (gpu-burn's counter, wilicc/gpu-burn#12) and is said so. Several
runs pasted together are each kept (a later OK never overwrites an earlier FAULTY), and a run cut
before its verdict keeps its last error counts. The `nvidia-smi -L`-style lines gpu-burn prints
first are read by smi_list."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.text import Cut, Line

# a progress line as pasted: bare, or quoted or set in markdown inside a post ('"30.0%  proc'd: …')
# (each cell starts and ends on a non-blank, or is absent: no run of blanks split two ways, review 55)
_PROGRESS = lazy(r"^\s*(?:[\"'`*>]+\s*)?[\d.]+%\s+proc'd:(?:\s*(\S(?:.*?\S)??))?\s+errors:\s*((?:\S(?:.*?\S)??)?)"
                 r"(?:\s+temps:\s*(.*))?\s*$")
_WORK = lazy(r"(?<!\d)(-?\d+) \([\d.]+ Gflop/s\)")
_ERRORS = lazy(r"(-?\d+)\s*(?:\((WARNING|DIED)!\))?")
_TEMP = lazy(r"(?<!\d)(\d+) C\b")
_TESTED = lazy(r"^\s*Tested (\d+) GPUs?:\s*$")
_VERDICT = lazy(r"^\s*GPU (\d{1,4}): (OK|FAULTY)\b[^:]{0,60}$")
_INIT_ERROR = lazy(r"^\s*Couldn't init a GPU test: (.{1,200})$")
_INITIALIZED = lazy(r"^\s*Initialized device (\d{1,4}) with (\d{1,9}) MB of memory")
_ENDED = lazy(r"^\s*(?:Killing processes|\^C\s*$)")  # gpu-burn stopping its workers, or the poster's ^C
_OWN = lazy(r"^\s*(?:Summary at:|Killing processes|Initialized device \d+ with|Results are \d+ bytes each|"
            r"Run length not specified|Burning for|Freed memory for dev|Uninitted cublas|done\s*$|"
            r"No clients are alive|read\[\d+\] error|Using compare file)")


@dataclass
class BurnRun:
    """One ``Tested N GPUs:`` block and the error counts of the progress line before it."""

    line: int
    verdicts: dict[int, str] = field(default_factory=dict)
    errors: list[int] = field(default_factory=list)


@dataclass
class GpuBurnParse:
    tool: str = "gpu-burn"  # the stress tool whose run this is (gpu_fryer's summary is kept as one too)
    verdicts: dict[int, str] = field(default_factory=dict)  # GPU index -> OK / FAULTY; FAULTY in any run wins
    runs: list[BurnRun] = field(default_factory=list)  # each verdict block, in the order printed
    cut_errors: list[int] = field(default_factory=list)  # a last run cut before its verdict: its error counts
    work: list[int] = field(default_factory=list)  # the last progress line: iterations per GPU
    errors: list[int] = field(default_factory=list)  # the last progress line: errors per GPU
    died: set[int] = field(default_factory=set)  # GPUs whose error count the tool marked (DIED!)
    temps: list[int] = field(default_factory=list)
    init_errors: list[tuple[int, str]] = field(default_factory=list)  # (line, gpu-burn's error)
    verdict_line: int | None = None
    aborted: int | None = None  # the line of 'No clients are alive!  Aborting': every worker gone, no verdict
    initialized: dict[int, tuple[int, int]] = field(default_factory=dict)  # device -> (line, MB) it set up
    ended: int | None = None  # the line it stopped at ('Killing processes', ^C) with no progress line before
    claimed: set[int] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)

    @property
    def ran(self) -> bool:
        return bool(self.verdicts or self.work or self.init_errors or self.initialized)  # set up a GPU: it started

    @property
    def silent(self) -> bool:
        """It set its GPUs up and stopped (killed, or ^C) with no progress line, verdict or error: no result."""
        return bool(self.initialized) and self.ended is not None and not (
            self.work or self.errors or self.verdicts or self.init_errors)

    def faulty_run(self, gpu: int) -> BurnRun | None:
        """The first run that called the GPU FAULTY."""
        return next((r for r in self.runs if r.verdicts.get(gpu) == "FAULTY"), None)

    def disagree(self, gpu: int) -> list[str]:
        """The GPU's verdict in each run, where the runs do not all say the same (none when they do)."""
        said = [r.verdicts[gpu] for r in self.runs if gpu in r.verdicts]
        return said if len(set(said)) > 1 else []


def parse(lines: list[Line]) -> GpuBurnParse:
    out = GpuBurnParse()
    if not any("proc'd:" in ln.text or _TESTED.match(ln.text) or _INIT_ERROR.match(ln.text)
               or _INITIALIZED.match(ln.text) for ln in lines):
        return out
    in_verdict = cut = gap = False
    for ln in lines:
        if isinstance(ln, Cut):  # the poster cut lines after a GPU's set-up: what it printed then is not known
            gap = gap or bool(out.initialized) and out.ended is None
        elif (i := _INITIALIZED.match(ln.text)) is not None:
            out.initialized[int(i.group(1))] = (ln.no, int(i.group(2)))
        if (p := _PROGRESS.match(ln.text)) is not None:
            _progress(out, p, ln.no)
            cut = True
        elif _TESTED.match(ln.text):
            in_verdict, cut, out.verdict_line = True, False, ln.no
            out.runs.append(BurnRun(ln.no, errors=list(out.errors)))
        elif in_verdict and (v := _VERDICT.match(ln.text)) is not None:
            _verdict(out, int(v.group(1)), v.group(2))
        elif (e := _INIT_ERROR.match(ln.text)) is not None:
            out.init_errors.append((ln.no, e.group(1).strip()))
        elif out.initialized and _ENDED.match(ln.text):
            out.ended = out.ended or ln.no
        elif not _OWN.match(ln.text):
            continue
        elif "No clients are alive" in ln.text:
            out.aborted = ln.no
        out.claimed.add(ln.no)
    out.cut_errors = list(out.errors) if cut else []
    out.ended = None if gap else out.ended
    if out.ran:
        out.notes.append(_note(out))
    else:
        out.claimed.clear()
    return out


def _verdict(out: GpuBurnParse, gpu: int, verdict: str) -> None:
    out.runs[-1].verdicts[gpu] = verdict
    if verdict == "FAULTY" or gpu not in out.verdicts:
        out.verdicts[gpu] = verdict


def _note(out: GpuBurnParse) -> str:
    faulty = sorted(g for g, v in out.verdicts.items() if v == "FAULTY")
    split = [g for g in sorted(out.verdicts) if out.disagree(g)]
    return (f"gpu-burn: {len(out.verdicts)} GPU verdict(s)"
            + (f", FAULTY: GPU {', '.join(map(str, faulty))}" if faulty else "")
            + (f" ({len(out.runs)} runs; they disagree on GPU {', '.join(map(str, split))})" if split else "")
            + ("" if out.verdicts else " (no 'Tested N GPUs' verdict: the run was cut or killed)")
            + (f"; device(s) {', '.join(map(str, sorted(out.initialized)))} set up, then it stopped at line "
               f"{out.ended} with no progress line" if out.silent else ""))


def _progress(out: GpuBurnParse, p: re.Match[str], line: int) -> None:
    """A progress line: the last one read wins (it holds the run's totals). gpu-burn ends every one with its
    temps: a line without them was cut by the paste, its error cells (the last maybe cut mid-number, its
    (DIED!) mark lost) are not read: a cell the paste lost is never judged (issue 46, batch Q's class)."""
    out.work = [int(w) for w in _WORK.findall(p.group(1) or "")]
    if p.group(3) is None:
        out.notes.append(f"gpu-burn: the progress line at line {line} is cut (no 'temps:' column): its error "
                         "counts are not read")
        return
    found = _ERRORS.findall(p.group(2))
    out.errors = [int(n) for n, _ in found]
    out.died = {i for i, (_, mark) in enumerate(found) if mark == "DIED"}
    out.temps = [int(t) for t in _TEMP.findall(p.group(3) or "")]
