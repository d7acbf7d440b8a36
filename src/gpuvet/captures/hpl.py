"""Issue 46 (R14E): HPL's output (netlib HPL 2.x's HPL_pdtest/HPL_pdinfo, as rocHPL and NVIDIA's HPC-Benchmarks print
it too). Its parameter block ('N      :  384000', 'P      :       1'), a result row under the ``T/V N NB P Q Time
Gflops`` header ('WR11C2R4      384000   384     1     2            4626.07             8.1599e+03'), the scaled
residual check after it ('||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N)=   4.12e-03 ...... PASSED'; HPL 1.0's
three '||Ax-b||_oo / ( eps * ||A||_1  * N ) = … PASSED' lines), the closing summary ('1 tests completed and passed
residual checks,'), and the progress lines some builds print ('Column=000000384 Fraction= 0.1% Gflops=7.818e+03').
A run whose residual check reads FAILED computed a wrong solution: tool_failures.py holds that verdict (silent data
corruption, the knowledge base's); the run's Gflops are said, not judged (no model of the machine's rate here)."""

from __future__ import annotations

import re

from gpuvet.captures.bench_results import BenchResult, BenchResults
from gpuvet.captures.text import Line

TOOL = "HPL"
_TITLE = re.compile(r"^\s*HPLinpack\s+\S+\s+--|^\s*HPL-(?:AI|MxP)\b|^\s*(?:roc|Ro)HPL\b", re.I)
_ROW = re.compile(r"^\s*([WT][A-Z0-9]{2,14})\s+(\d{2,9})\s+(\d{1,6})\s+(\d{1,5})\s+(\d{1,5})\s+(\d+(?:\.\d+)?)"
                  r"\s+(\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)(?:\s+\(\s*\d+(?:\.\d+)?(?:[eE][+-]?\d+)?\s*\))?\s*$")
# ^ NVIDIA's HPC-Benchmarks HPL adds its per-GPU rate in brackets ('3.945e+05 ( 4.931e+04)')
_HEADER = re.compile(r"^\s*T/V\s+N\s+NB\s+P\s+Q\s+Time\s+Gflops\b")
_RESIDUAL = re.compile(r"^\s*\|\|Ax-b\|\|.{0,80}?=\s*(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|nan|inf)\s*\.{2,}\s*"
                       r"(PASSED|FAILED)\b", re.I)
_SUMMARY = re.compile(r"^\s*(\d+) tests? (completed and passed residual checks|completed and failed residual checks|"
                      r"skipped because of illegal input values)")
_OWN = re.compile(
    r"^\s*(?:Written by|Modified by|An explanation of the input/output|The following parameter values will be used|"
    r"- The matrix A is randomly|- The following scaled residual|- The relative machine precision|"
    r"- Computational tests pass|\|\|Ax-b\|\|_oo\s*/|HPL_pdgesv\(\) (?:start|end) time|Finished\s+\d+ tests|"
    r"End of Tests\.|(?:T/V|N|NB|PMAP|P|Q|PFACT|NBMIN|NDIV|RFACT|BCAST|DEPTH|SWAP|L1|U|EQUIL|ALIGN|Time|Gflops)\s+:|"
    r"Column=\d+ Fraction=\s*[\d.]+% Gflops=|Prog=\s*[\d.]+%|[=-]{20,}\s*$)"
)


def parse(lines: list[Line]) -> BenchResults:
    """HPL's runs (each result row with the residual check after it) and its own lines claimed; nothing where the
    text holds no HPL title and no result row under its header."""
    out = BenchResults()
    titled = any(_TITLE.match(ln.text) for ln in lines[:400])
    header = False
    for ln in lines:
        text = ln.text
        if _TITLE.match(text) or _HEADER.match(text):
            header = header or _HEADER.match(text) is not None
        elif (titled or header) and (r := _ROW.match(text)) is not None:
            out.results.append(BenchResult(TOOL, f"{r.group(1)} N={r.group(2)} NB={r.group(3)} P={r.group(4)} "
                                           f"Q={r.group(5)}: {float(r.group(7)):g} Gflops in {r.group(6)} s", ln.no))
        elif (titled or header) and (c := _RESIDUAL.match(text)) is not None:
            _checked(out, c.group(2).upper() == "PASSED", c.group(1))
        elif not ((titled or header) and (_SUMMARY.match(text) or _OWN.match(text))):
            continue
        out.claimed.add(ln.no)
    if not out.results and not titled:
        return BenchResults()
    out.notes.append(_said(out))
    return out


def _checked(out: BenchResults, passed: bool, residual: str) -> None:
    """The residual check said of the run before it (HPL 1.0's three lines: FAILED in any fails the run)."""
    if out.results:
        last = out.results[-1]
        keep = passed if last.passed is None else (last.passed and passed)
        out.results[-1] = BenchResult(last.tool, f"{last.said.split('; residual')[0]}; residual {residual} "
                                      f"{'PASSED' if keep else 'FAILED'}", last.line, keep)


def _said(out: BenchResults) -> str:
    runs = out.results
    if not runs:
        return "HPL: its header read, no result row (the run was cut before its first result)"
    failed = sum(1 for r in runs if r.passed is False)
    return (f"HPL: {len(runs)} run(s), {failed} failed its residual check; " + "; ".join(r.said for r in runs[:4])
            + " (the Gflops said, not judged: gpuvet holds no model of this machine's rate)")
