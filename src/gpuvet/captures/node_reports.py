"""Reports over many nodes (issue 46, AX2): a health check's or smoke test's verdict per host, as clusters print
them. Each failing node is its own record (records.AppError with its ``host``, and 'GPU N' where its reason names
one), of a kind by what its reason says (reason_kind); passing nodes are counted in a note. Read here:

- a table whose header names a host column and a status, result or issue column: Markdown (AMD Primus' smoke
  report: '| Node | Hostname | Status | Duration | Top fail reason |') or aligned by spaces ('HOST  STATUS  REASON');
- a summary of reasons by node list (LLNL's CSM epilog roll-up: 'compute:  "GPU 0 failed cudaMalloc 1":  1: sierra3061');
- a verdict line naming its host ('FAILED: sierra1133 Failed during cudaGetDeviceCount: initialization error',
  'node12: FAIL: GPU 3 …', 'gpu-a017 FAILED gpu_burn');
- dshbak -c's blocks (a host list between two dashed lines, then what those hosts printed).

What a reason means is doctor's (capture_errors.KIND_CAUSES): a CUDA init or allocation failure is the driver's or
the module's state, an RDMA completion error the NIC's link, a slow GPU its performance, HBM already in use before the
test other processes holding the module; any other GPU or interconnect reason is the suite's verdict, cited. A reason
naming no GPU, NIC or library (a file system, a time daemon) is said, not judged."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuvet.captures.app_errors import AppErrorsParse
from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.lines import TextLines
from gpuvet.captures.records import AppError
from gpuvet.captures.runtime_marks import NODE_REPORT_WORDS
from gpuvet.captures.text import Line

TOOL = "node health report"
WORDS = NODE_REPORT_WORDS  # the literals every line read holds one of (ops_layer's gate, runtime_marks.OPS_MARKS)
_CAP = 4000  # candidate lines at most
_MOST_HOSTS = 64  # a node list expanded to at most this many hosts

# the reason's words -> its kind (doctor/capture_errors.KIND_CAUSES), first match wins
_REASONS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (k, lazy(v, re.I))
    for k, v in (
        (
            "node_gpu_busy",
            r"HBM busy|already in use|memory (?:is )?(?:in use|held|busy)|foreign (?:process|pid)|"
            r"leaked (?:process|rank)|processes? (?:running|holding|found) on (?:the )?GPU|GPU (?:is )?busy",
        ),
        ("ecc_uncorrectable", r"uncorrectable ECC|ECC uncorrectable|\bDBE\b|double[- ]bit"),
        ("node_corrupt", r"non-finite|\bNaN\b|wrong results?|mismatch(?:ed)? results?|corrupt|miscompar"),
        (
            "node_cuda_init",
            r"initiali[sz]ation error|cudaErrorInitializationError|CUDA_ERROR_NOT_INITIALIZED|cuInit\b|"
            r"cudaGetDeviceCount|hipGetDeviceCount|no CUDA-capable device|is_available\(\) is False|"
            r"version mismatch|CUDA unknown error|unknown error|set_device\(\d+\) raised|"
            r"could not (?:create|initiali[sz]e) (?:a )?(?:CUDA |HIP )?context",
        ),
        ("node_alloc_failed", r"\b(?:cuda|hip|cuMem)Malloc\w*|\balloc(?:ation)?\b.{0,40}\bfail|out of memory"),
        (
            "node_rdma_completion",
            r"\bCQE\b|completion error|retry (?:count )?exceeded|\bWC error|IBV_WC_\w+|"
            r"transport retry",
        ),
        (
            "node_gpu_slow",
            r"\bslow (?:GPU|gpu|device|node)\b|\bGPU (?:is )?slow\b|\b(?:GEMM|TFLOPS|HBM GB/s|GFLOPS?)\b.{0,40}"
            r"(?:<|below|under|less than)|\b(?:below|under) (?:the )?(?:expected )?(?:GEMM|TFLOPS|"
            r"GFLOPS)",
        ),
    )
)
# a reason about a GPU, accelerator, NIC or collective library (else a file system's, a service's: said, not judged)
_GPU_REASON = lazy(
    r"(?i)(?<![\w-])(?:gpus?\d*|cuda\w*|cu[A-Z]\w+|hip\w*|nccl\w*|rccl\w*|nvml|nvidia\w*|amdgpu|rocm\w*|"
    r"hbm|vram|ecc|xid|nvlink|xgmi|nvswitch|pcie|gemm|tflops|ib|infiniband|rdma|cqe|hca|mlx\d\w*|"
    r"roce|nic|dcgm\w*|amd-smi|rocm-smi|nvidia-smi|gpu_\w+|\w+_gpu)(?![\w-])"
)
_GPU_INDEX = lazy(r"(?i)(?<![\w-])(?:gpu\s?\[?(\d{1,3})\]?|cuda:(\d{1,3})|device\s(\d{1,3}))(?![\w-]|\.\d)")

_PASS = {"PASS", "PASSED", "OK", "HEALTHY", "SUCCESS", "GOOD"}
_FAIL = {"FAIL", "FAILED", "FAILURE", "ERROR", "UNHEALTHY", "BAD", "CRITICAL"}  # never a scheduler's drain or down
_HOST_HEAD = lazy(r"(?i)^(?:host(?:[ _]?name)?|node(?:[ _]?name)?|server|machine|nodelist|node list)$")
_STATUS_HEAD = lazy(r"(?i)^(?:status|result|verdict|health|overall(?: status)?|outcome)$")
_REASON_HEAD = lazy(r"(?i)reason|issue|error|message|detail|fail|cause|problem|comment")
_MD_ROW = lazy(r"^\s*\|(.*)\|\s*$")
_MD_RULE = lazy(r"^\s*\|?\s*:?-{3,}")
# a host as reports print it: a letter first, a digit in it, no space ('sierra1133', 'tus1-p3-g25', 'gpu-a017')
_HOSTNAME = r"[A-Za-z][\w.-]{0,62}"
_NOT_HOST = lazy(
    r"(?i)^(?:gpu|cuda|device|dev|rank|card|npu|port|test|step|phase|stage|run|iter\w*|round|pass|"
    r"loop|rc|node|epoch|cpu|socket|numa|mlx\d_?|hca|ib|eth|ens|enp|sm|v)[_-]?\d{1,2}$"
)
# a verdict line naming its host: 'FAILED: host reason', 'host: FAIL: reason', 'host FAILED reason'
_VERDICT_FIRST = lazy(r"^\s*(?P<v>FAILED|FAIL|PASSED|PASS)\s*[:-]?\s+(?P<h>" + _HOSTNAME + r")[:,]?(?:\s+(?P<r>\S.*))?$")
_HOST_FIRST = lazy(
    r"^\s*(?:[Nn]ode\s+)?(?P<h>" + _HOSTNAME + r")\s*[:]?\s+(?P<v>FAILED|FAIL|PASSED|PASS)\b\s*[:,-]?"
    r"\s*(?P<r>.*)$"
)
# a test's verdict under its host (IBM CAST hcdiag through xdsh: 'c650f03p05: chk-nvidia-smi test FAIL, rc=1')
_TEST_VERDICT = lazy(
    r"^\s*(?P<h>" + _HOSTNAME + r")\s*:\s+(?P<t>[\w.-]+)\s+test\s+(?P<v>FAILED|FAIL|PASSED|PASS)\b[,:]?"
    r"\s*(?P<r>.*)$"
)
# a roll-up of reasons by node list: '[role:]  "reason":  count: hostlist'
_ROLLUP = lazy(r"^\s*(?:[\w.-]+:\s+)?\"(?P<r>[^\"]{2,300})\":\s+(?P<n>\d+):\s+(?P<h>[\w.\-\[\],]+)\s*$")
_DASHES = lazy(r"^\s*-{8,}\s*$")
_HOSTLIST = lazy(r"^\s*(" + _HOSTNAME + r"(?:\[[\d,\-]+\])?(?:,\s*" + _HOSTNAME + r"(?:\[[\d,\-]+\])?)*)\s*$")


@dataclass
class _Read:
    """What the report said: the failing nodes' records, the hosts seen passing, the lines read."""

    errors: list[AppError] = field(default_factory=list)
    passed: list[str] = field(default_factory=list)
    other: list[str] = field(default_factory=list)  # failures of no GPU's or NIC's, said
    claimed: set[int] = field(default_factory=set)


def read(lines: list[Line], out: AppErrorsParse) -> None:
    """The per-node verdicts in ``lines``, added to ``out`` (ops_layer.parse's): one record per failing node and
    module, of its reason's kind; the passing nodes counted in a note."""
    cand = _candidates(lines)
    if not cand:
        return
    got = _Read()
    _tables(lines, cand, got)
    _lines(lines, cand, got)
    _dshbak(lines, cand, got)
    if not got.errors and not got.passed and not got.other:
        return
    out.claimed |= got.claimed
    out.errors += got.errors
    failing = list(dict.fromkeys(e.host or "" for e in got.errors))
    passed = [h for h in dict.fromkeys(got.passed) if h not in failing]
    out.notes.append(
        f"{TOOL}: {len(failing)} node(s) failing ({', '.join(failing[:8])}"
        f"{' …' if len(failing) > 8 else ''}), {len(passed)} passing"
        + (f"; not judged (no GPU or NIC named): {'; '.join(got.other[:3])}" if got.other else "")
    )


def reason_kind(reason: str) -> str | None:
    """The kind of a node's failure reason, or None where it names no GPU, NIC or collective library."""
    for kind, rx in _REASONS:
        if rx.search(reason):
            return kind
    return "node_check_failed" if _GPU_REASON.search(re.sub(r"[-_]", " ", reason)) else None  # 'chk-nvidia-smi'


def _candidates(lines: list[Line]) -> list[int]:
    """The positions of the lines holding one of WORDS (str.find on a long text), at most _CAP."""
    if isinstance(lines, TextLines) and (at := lines.holding(list(WORDS))) is not None:
        return at[:_CAP]
    return [i for i, ln in enumerate(lines) if any(w in ln.text for w in WORDS)][:_CAP]


def _add(got: _Read, host: str, reason: str, ln: Line, how: str) -> None:
    """A failing node's reason: a record of its kind on the GPU it names (else the node), or said where it names
    no GPU or NIC. Each host once per kind and module (a roll-up and the verdict it quotes are one failure)."""
    reason = reason.strip().strip("`*").strip()
    got.claimed.add(ln.no)
    kind = reason_kind(reason) if reason else "node_check_failed"
    if kind is None:
        got.other.append(f"{host}: {reason[:100]}")
        return
    g = _GPU_INDEX.search(reason)
    module = f"GPU {int(next(x for x in g.groups() if x is not None))}" if g else None
    for i, e in enumerate(got.errors):
        if e.host == host and e.kind == kind and e.module == module:
            got.errors[i] = AppError(e.kind, e.line, e.text, e.module, e.tool, e.times + 1, host=host)
            return
    said = f"node {host}: {reason or 'failed (no reason given)'} ({how})"
    got.errors.append(AppError(kind, ln.no, said[:300], module, TOOL, host=host))


def _cells(text: str) -> list[str] | None:
    """A Markdown row's cells, or an aligned table's (runs of two spaces or more), None for another line."""
    if (md := _MD_ROW.match(text)) is not None:
        return [c.strip() for c in md.group(1).split("|")]
    parts = re.split(r"\s{2,}|\t", text.strip())
    return parts if len(parts) >= 2 else None


def _tables(lines: list[Line], cand: list[int], got: _Read) -> None:
    """Tables whose header names a host column and a status or issue column: each row a node's verdict."""
    for i in cand:
        head = _cells(lines[i].text)
        if head is None or not any(_HOST_HEAD.match(c) for c in head):
            continue
        hosts = [k for k, c in enumerate(head) if _HOST_HEAD.match(c)]
        host = next((k for k in hosts if "name" in head[k].lower()), hosts[-1])  # 'Hostname' over a rank's 'Node'
        status = next((k for k, c in enumerate(head) if _STATUS_HEAD.match(c)), None)
        reason = next((k for k, c in enumerate(head) if k not in (host, status) and _REASON_HEAD.search(c)), None)
        if status is None and reason is None:
            continue
        got.claimed.add(lines[i].no)
        _rows(lines, i + 1, len(head), (host, status, reason), lines[i].text.lstrip().startswith("|"), got)


def _rows(lines: list[Line], at: int, width: int, cols: tuple[int, int | None, int | None], md: bool, got: _Read) -> None:
    """The table's rows from ``at`` on, until a line of another shape."""
    host, status, reason = cols
    for ln in lines[at : at + 2000]:
        if md and _MD_RULE.match(ln.text):
            got.claimed.add(ln.no)
            continue
        cells = _cells(ln.text) if (ln.text.lstrip().startswith("|") == md) else None
        if cells is None or len(cells) <= max(host, status or 0) or not cells[host]:
            return
        if not md and len(cells) > width:  # an aligned row's reason holds runs of spaces: the rest is its reason
            cells = [*cells[: width - 1], "  ".join(cells[width - 1 :])]
        said = cells[status].upper().strip("*` ") if status is not None else ""
        why = cells[reason] if reason is not None and reason < len(cells) else ""
        name = cells[host].strip("`* ")
        if said in _PASS or (status is None and not why):
            got.passed.append(name)
            got.claimed.add(ln.no)
        elif said in _FAIL or (status is None and why):
            _add(got, name, why, ln, "the report's table")
        else:
            got.claimed.add(ln.no)


def _lines(lines: list[Line], cand: list[int], got: _Read) -> None:
    """Roll-ups of reasons by node list and verdict lines naming their host."""
    for i in cand:
        ln = lines[i]
        t = ln.text
        if '":' in t and (roll := _ROLLUP.match(t)) is not None:
            for host in expand(roll.group("h")):
                _add(got, host, roll.group("r"), ln, f"a roll-up of {roll.group('n')} node(s)")
            continue
        if "PASS" not in t and "FAIL" not in t:
            continue
        test = _TEST_VERDICT.match(t)
        m = test or _VERDICT_FIRST.match(t) or _HOST_FIRST.match(t)
        if m is None or _NOT_HOST.match(m.group("h")) or not re.search(r"\d", m.group("h")):
            continue
        if m.group("v").startswith("PASS"):
            got.passed.append(m.group("h"))
            got.claimed.add(ln.no)
        else:
            why = f"{test.group('t')} test {test.group('v')} {test.group('r')}".strip() if test else m.group("r") or ""
            _add(got, m.group("h"), why, ln, "its verdict line")


def _dshbak(lines: list[Line], cand: list[int], got: _Read) -> None:
    """dshbak -c's blocks: a host list between two dashed lines, then what those hosts printed; a block whose
    lines open with a failure verdict is each of its hosts' failure, one opening with a pass verdict their pass."""
    rules = [i for i in cand if _DASHES.match(lines[i].text)]
    for a, b in zip(rules, rules[1:], strict=False):
        if b != a + 2 or (named := _HOSTLIST.match(lines[a + 1].text)) is None:
            continue
        hosts = expand(named.group(1))
        end = next((r for r in rules if r > b), len(lines))
        body = [ln for ln in lines[b + 1 : end] if ln.text.strip()]
        verdict = (
            re.match(r"^\s*(FAILED|FAIL|ERROR|UNHEALTHY|PASSED|PASS|OK|HEALTHY)\b[:\s-]*(.*)$", body[0].text)
            if body
            else None
        )
        if verdict is None:
            continue
        got.claimed |= {lines[a].no, lines[a + 1].no, lines[b].no}
        for host in hosts:
            if verdict.group(1) in _PASS:
                got.passed.append(host)
                got.claimed.add(body[0].no)
            else:
                _add(got, host, verdict.group(2), body[0], "dshbak's block")


def expand(hostlist: str) -> list[str]:
    """A node list's hosts: 'a1,a2', Slurm's 'sierra[1133,1301-1303]' (at most _MOST_HOSTS)."""
    out: list[str] = []
    for part in re.findall(r"[^,\[]+(?:\[[^\]]*\])?", hostlist):
        part = part.strip()
        br = re.match(r"^(.*)\[([\d,\-]+)\](.*)$", part)
        if br is None:
            out.append(part)
            continue
        for piece in br.group(2).split(","):
            lo, _, hi = piece.partition("-")
            width = len(lo)
            for n in range(int(lo), int(hi or lo) + 1):
                out.append(f"{br.group(1)}{n:0{width}d}{br.group(3)}")
                if len(out) >= _MOST_HOSTS:
                    return out
    return [h for h in out if h][:_MOST_HOSTS]
