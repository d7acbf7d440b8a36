"""perftest's output (ib_write_bw, ib_read_bw, ib_send_bw; their _lat siblings) as people paste it:
the header block (`Device : mlx5_0`, `Link type : IB`), the local/remote address lines and the
result rows (`#bytes #iterations BW peak[MB/sec] BW average[MB/sec] MsgRate[Mpps]`, or Gb/sec with
--report_gbits). Its `Key : value` header is perftest's, never an nvidia-smi -q module.

A run that failed says so in perftest's own words (perftest_communication.c, perftest_resources.c): the TCP
side channel ('Couldn't connect to HOST:PORT', 'Unable to init the socket connection'), the QP's set-up
('Failed to modify QP 0x… to RTR', 'Couldn't create QP'), the exchange ('Failed to exchange data between
server and clients'), the device ('No IB devices found') or a work request ('Completion with error at
client', 'Failed status 12: wr_id …'): each is kept with its line. Without the header only perftest's own
wording counts (HOST:PORT, a QP/HCA/GID word): curl's "Couldn't connect to server" is no RDMA test."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuvet.captures import perftest_failures, rdma_verbs
from gpuvet.captures.lazy_re import lazy
from gpuvet.captures.text import Line

_TITLE = lazy(r"^\s*(RDMA_Write|RDMA_Read|Send|Atomic\w*)\b[\w ]{0,30}?\b(BW|Latency)\s+Test\b",
              re.IGNORECASE)  # "RDMA_Write BW Test", "RDMA_Write Post List BW Test"
_UNITS = lazy(r"#bytes\s+#iterations\s+BW peak\[(MB|Gb|MiB)/sec\]\s+BW average\[(MB|Gb|MiB)/sec\]",
              re.IGNORECASE)
_ROW = lazy(r"^\s*(?:\*+\s*)?(\d+)\s+(\d+)\s+(\d+(?:\.\d+)?)\s+(\d+(?:\.\d+)?)\s+(\d+(?:\.\d+)?)(?:\s*\*+)?\s*$")
_DEVICE = lazy(r"\bDevice\s+:\s*([\w.-]+)")
_LINK = lazy(r"\bLink type\s+:\s*(\w+)")
_CONNECTION = lazy(r"\bConnection type\s+:\s*(\w+)")  # R14B: RC, UC, UD, XRC, DC (perftest's header)
_TRANSPORT = lazy(r"\bTransport type\s+:\s*(\w+)")
_MTU = lazy(r"^\s*Mtu\s+:\s*(\d{3,4})\s*\[B\]")  # the path MTU the run's QPs use (perftest's header)
_RULE = lazy(r"^\s*-{20,}\s*$")
_FAIL = re.compile(r"Couldn't connect to \S+|Unable to (?:init the socket connection|open file descriptor for socket|"
                   r"Connect the HCA's through the link|set up socket connection|connect \(retries|find the "
                   r"Infiniband/RoCE device|create QP)|"
                   r"Failed to (?:modify QP\b.{0,24}?to (?:INIT|RTR|RTS)|exchange data between server and clients|"
                   r"create QP)|Couldn't create (?:the )?QP|No IB devices found|IB device \S+ not found|"
                   r"Couldn't get device list|Couldn't get context for the device|Completion with error at "
                   r"(?:client|server)|Failed status[ -]|Poll send CQ error status=\d+|Port number \d+ state is \w+|"
                   r"Found Incompatibility issue with GID types|Couldn't allocate MR|Couldn't read remote address|"
                   r"Couldn't register GPU MR",  # R8C: Mellanox/gpu_direct_rdma_access's ibv_reg_mr on GPU memory
                   re.IGNORECASE)
_FAIL_WORDS = ("couldn't", "unable to", "failed", "completion with error", "no ib devices", "ib device", "port number",
               "incompatibility", "poll send cq")
# Without perftest's header a failure line must be perftest's alone: curl, ssh and many others also say
# "Couldn't connect to server" or "Failed to ...", so a headless line needs HOST:PORT or an RDMA noun.
# perftest 4.5+ prints a completion's status by name ('Failed status-transport retry counter exceeded (12): wr_id 0')
_HEADLESS = lazy(r"Couldn't connect to [\w.:\[\]-]*\w:\d{1,5}\b|\b(?:QPs?|HCA's|HCA|GID)\b|"
                 r"Unable to init the socket connection|exchange data between server and clients|"
                 r"No IB devices found|Completion with error at (?:client|server)|Failed status[ -][\w ]{0,40}"
                 r"\(?\d+\)?: wr_id|Couldn't allocate MR|Couldn't register GPU MR|Couldn't read remote address|"
                 r"Unable to (?:set up socket "
                 r"connection|open file descriptor for socket connection|connect \(retries = \d+\)|find the "
                 r"Infiniband/RoCE device)|IB device \S+ not found|Couldn't get context for the device|"
                 r"Port number \d+ state is (?:Down|Init|Armed|Nop)\b|Poll send CQ error status=\d+")
# formats.py's markers: a title (_TITLE, any case: '… BW Test', '… Latency Test': 'Test'), its units row (_UNITS), or a
# failure in its own words (_FAIL, _HEADLESS: HOST:PORT after "Couldn't connect to", a QP/HCA/GID, …)
MARKS = ("Test", "test", "TEST", "#bytes", "#BYTES", "#Bytes", "Couldn't", "QP", "HCA", "GID", "Unable to",
         "exchange data between", "No IB devices", "Completion with error", "Failed status", "IB device", "Port number",
         "Poll send CQ", "Incompatibility", "context for the device", *perftest_failures.MARKS)
_HEADER = lazy(r"^\s*(-{20,}|[A-Za-z][\w \t.*/()-]{1,40}:\s.*|(local|remote) address:.*)$")


# R8C: a run on GPU memory (perftest's --use_cuda/--use_rocm and its own CUDA lines, gpu_direct_rdma_access's GPU MR),
# and the HCA its command line names ('ib_write_bw -d mlx5_0 …')
_GPU_BUFFER = lazy(r"--use_(?:cuda|rocm|neuron|hl)\b|\bcuMemAlloc\(\) of a \d+ bytes GPU buffer"
                   r"|allocated GPU buffer address|Couldn't register GPU MR")
_CMD_HCA = lazy(r"\bib_(?:write|read|send|atomic)_(?:bw|lat)\b[^\n]*?\s(?:-d|--ib-dev)[\s=]+([\w.-]+)")


def _gpu_buffers(lines: list[Line], runs: list[PerftestRun]) -> None:
    """Mark runs on GPU memory, and name the HCA of a run whose header is not there from its command line."""
    if not runs:
        return
    gpu, hca = False, None
    for ln in lines:
        if ("GPU" in ln.text or "--use_" in ln.text) and _GPU_BUFFER.search(ln.text) is not None:
            gpu = True
        if hca is None and "ib_" in ln.text and (m := _CMD_HCA.search(ln.text)) is not None:
            hca = m.group(1)
    for run in runs:
        run.gpu_buffer, run.device = gpu, run.device or hca


@dataclass(frozen=True)
class PerftestRow:
    size_bytes: int
    bw_avg_gbps: float  # Gb/s


@dataclass
class PerftestRun:
    test: str
    device: str | None = None
    link_type: str | None = None
    mtu: int | None = None  # bytes, as its header printed it (doctor/notable.py: RoCE's below 4096)
    rows: list[PerftestRow] = field(default_factory=list)
    failures: list[tuple[int, str]] = field(default_factory=list)  # (line, perftest's error line)
    connection: str | None = None  # R14B: the header's Connection type (RC) and Transport type (IB)
    transport: str | None = None
    gpu_buffer: bool = False  # R8C: the run's buffers were GPU memory (--use_cuda/--use_rocm, perftest's cuMemAlloc)


@dataclass
class PerftestParse:
    runs: list[PerftestRun] = field(default_factory=list)
    claimed: set[int] = field(default_factory=set)


def _gbps(value: float, unit: str) -> float:
    return value if unit.lower() == "gb" else value * 8 / 1000 * (1.048576 if unit.lower() == "mib" else 1.0)


def _types(run: PerftestRun, text: str) -> None:
    """The header's Connection type and Transport type (R14B: inventory says them with the device)."""
    if "type" not in text:
        return
    if (c := _CONNECTION.search(text)) is not None:
        run.connection = run.connection or c.group(1)
    if (t := _TRANSPORT.search(text)) is not None:
        run.transport = run.transport or t.group(1)


def _failure(text: str, headed: bool) -> bool:
    """perftest's own failure line (``headed``: its header is above it); R14B: perftest_failures.py's as well."""
    if any(w in text.lower() for w in _FAIL_WORDS) and _FAIL.search(text) is not None \
            and (headed or _HEADLESS.search(text) is not None and not rdma_verbs.foreign(text)):
        return True
    return perftest_failures.failed(text, headed) and (headed or not rdma_verbs.foreign(text))


# R14B: the server's banner while it waits ('* Waiting for client to connect... *' between rules of stars)
_WAITING = lazy(r"^\s*(?:\*{20,}|\*\s*Waiting for client to connect\.*\s*\*|Waiting for client rdma_cm QP to "
                r"connect)\s*$")


def _banner(lines: list[Line]) -> set[int]:
    """The lines of the server's banner (perftest's write_bw.c and siblings print it before the client connects)."""
    return {ln.no for ln in lines if ("*" in ln.text or "Waiting" in ln.text) and _WAITING.match(ln.text)}


def _own_lines(lines: list[Line]) -> list[Line]:
    """Issue 46 (FX68E): ``lines``, less 'No IB devices found' where the text runs rdma-core's device listing
    (ibv_devinfo, ibv_devices) and no perftest title: the listing prints it itself (absent_stack.py reads it)."""
    if not any("ibv_dev" in ln.text and ("ibv_devinfo" in ln.text or "ibv_devices" in ln.text) for ln in lines) \
            or any(_TITLE.match(ln.text) for ln in lines):
        return lines
    return [ln for ln in lines if "No IB devices" not in ln.text]


def parse(lines: list[Line]) -> PerftestParse:
    out = PerftestParse()
    run: PerftestRun | None = None
    unit = "MB"
    near = perftest_failures.beside_own(lines) if any("mismatch: local=" in ln.text for ln in lines) else set()
    for ln in _own_lines(lines):
        if _failure(ln.text, run is not None or ln.no in near):
            if run is None:
                run = PerftestRun("perftest (header not in the capture)")
                out.runs.append(run)
            run.failures.append((ln.no, ln.text.strip()[:240]))
            out.claimed.add(ln.no)
            continue
        if (m := _TITLE.match(ln.text)) is not None:
            run = PerftestRun(f"{m.group(1)} {m.group(2)}")
            out.runs.append(run)
        elif run is None and _UNITS.search(ln.text):  # result rows pasted without the header block
            run = PerftestRun("unknown")
            out.runs.append(run)
        if run is None:
            continue
        if (u := _UNITS.search(ln.text)) is not None:
            unit = u.group(2)
        elif (m := _ROW.match(ln.text)) is not None:
            run.rows.append(PerftestRow(int(m.group(1)), _gbps(float(m.group(4)), unit)))
        elif (d := _DEVICE.search(ln.text)) is not None:
            run.device = run.device or d.group(1)
        elif (k := _LINK.search(ln.text)) is not None:
            run.link_type = k.group(1)
        elif (u := _MTU.match(ln.text)) is not None:
            run.mtu = int(u.group(1))
        elif not (_HEADER.match(ln.text) or _TITLE.match(ln.text)):
            continue
        out.claimed.add(ln.no)
        if (d := _DEVICE.search(ln.text)) is not None:
            run.device = run.device or d.group(1)
        _types(run, ln.text)
    _gpu_buffers(lines, out.runs)
    if out.runs:  # perftest's rules of dashes, the one above the first title included; a server's banner
        out.claimed |= {ln.no for ln in lines if _RULE.match(ln.text)} | _banner(lines)
    return out
