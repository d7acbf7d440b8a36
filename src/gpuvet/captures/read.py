"""One captured file, whatever it holds: each parser claims the lines it understood, the kinds
found are named, and the lines nobody claimed are reported (never silently dropped).

A file may be gzip-compressed (nvidia-bug-report.log.gz); the bounds on what is read are in
read_text and docs/limits.md.
"""

from __future__ import annotations

import os
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

from gpuvet.captures import (
    aer,
    amd_smi,
    bench,
    dcgm,
    fabric_manager,
    hccl,
    kernel,
    links,
    nccl_devices,
    nccl_log,
    nic_tools,
    npu_smi,
    perftest,
    rocm_validation,
    smi_query,
    smi_table,
    smi_text,
    smi_xml,
    topo,
    transferbench,
)
from gpuvet.captures.records import ListedParse
from gpuvet.captures.text import MAX_LINES, Cleaned, Line, clean, ranges
from gpuvet.errors import CaptureError
from gpuvet.files import Input, open_input, unpacked

_BUNDLE = re.compile(r"Start of NVIDIA bug report log file|nvidia-bug-report\.sh Version:")  # the bundle's header
MAX_FILE_BYTES = 256 * 2**20  # on disk (a bug report of a large node is tens of MB)
MAX_TEXT_BYTES = 128 * 2**20  # the text, after decompression: a large node's bug report is tens of MB
_KEEP_WHILE = 64 * 2**20  # kept as read up to here; a larger text is counted to its end first, then read again
_CHUNK = 2**20
_SMALLER = "give the capture itself, or the part of it that matters."
MAX_DIGITS = 1000  # in one run of decimal digits; Python's int() refuses more than 4,300 (a ValueError mid-parse)
_ZEROS = str.maketrans("123456789", "000000000")  # every digit a 0: a long run is then one str.find
EXPECTED = ("nvidia-smi -q (text, whole or excerpts) or -q -x (XML), nvidia-smi's default table or --query-gpu CSV, "
            "nvidia-smi topo -m (a matrix under a "
            "GPU0 … header), nvidia-smi nvlink -s/-e, nccl-tests output, nvbandwidth output, kernel log lines with "
            "Xid errors, lspci -vvv, dcgmi diag (text or -j JSON), or an nvidia-bug-report.log(.gz) holding them; "
            "for AMD amd-smi static/metric/topology (text or --json), rocm-smi --showtopo/-a (text, --json, --csv), "
            "rocm-bandwidth-test, rccl-tests or amdgpu kernel lines; for Ascend npu-smi info; for the NICs ibstat, "
            "ibstatus, ibv_devinfo, ibdev2netdev or perftest (ib_write_bw, …); the fabric manager's journal; "
            "NCCL_DEBUG=INFO or RCCL logs, HCCL plog lines")


@dataclass
class FileCapture:
    path: str
    kinds: list[str] = field(default_factory=list)
    smi: smi_text.SmiText | None = None
    xml: smi_xml.SmiXml | None = None
    topo: topo.TopoMatrix | None = None
    nccl: bench.NcclParse = field(default_factory=bench.NcclParse)
    nvb: bench.NvbParse = field(default_factory=bench.NvbParse)
    kernel: kernel.KernelParse = field(default_factory=kernel.KernelParse)
    nvlink: links.NvLinkParse = field(default_factory=links.NvLinkParse)
    lspci: links.LspciParse = field(default_factory=links.LspciParse)
    aer: aer.AerParse = field(default_factory=aer.AerParse)  # the kernel's PCIe AER lines
    dcgm: dcgm.DcgmParse = field(default_factory=dcgm.DcgmParse)
    dmon: smi_text.Dmon = field(default_factory=smi_text.Dmon)
    amd: ListedParse = field(default_factory=ListedParse)  # amd-smi, rocm-smi, rocm-bandwidth-test
    npu: ListedParse = field(default_factory=ListedParse)  # npu-smi info
    nics: nic_tools.NicToolsParse = field(default_factory=nic_tools.NicToolsParse)  # ibstat, ibv_devinfo, …
    fabric_manager: fabric_manager.FabricManagerLog = field(default_factory=fabric_manager.FabricManagerLog)
    perftest: perftest.PerftestParse = field(default_factory=perftest.PerftestParse)  # ib_write_bw, …
    nccl_log: nccl_log.NcclLog = field(default_factory=nccl_log.NcclLog)  # NCCL_DEBUG lines, RCCL's, HCCL's plog
    rbt_validation: rocm_validation.RbtValidation = field(default_factory=rocm_validation.RbtValidation)  # -v
    notes: list[str] = field(default_factory=list)
    bug_report: bool = False


def read_text(path: str) -> str:
    """The file's text, unpacked if gzip. Bounded while it is read: a regular file only (a FIFO
    would wait for a writer, /dev/zero never ends), at most MAX_FILE_BYTES on disk, and its text
    at most MAX_TEXT_BYTES and MAX_LINES lines, counted as the bytes come (a small .gz that
    unpacks to gigabytes is refused at the bound, not after). Raises CaptureError."""
    with _open_regular(path) as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > MAX_FILE_BYTES:
            raise CaptureError(f"{size / 2**20:,.0f} MiB is larger than any capture ({MAX_FILE_BYTES // 2**20} MiB "
                               "at most)", where=path, fix=_SMALLER)
        try:
            packed = fh.read(2) == b"\x1f\x8b"
            if not packed and size > MAX_TEXT_BYTES:
                raise CaptureError(f"{size / 2**20:,.0f} MiB of text is more than any capture holds "
                                   f"({MAX_TEXT_BYTES // 2**20} MiB at most)", where=path, fix=_SMALLER)
            fh.seek(0)
            data = _bounded(fh, path, packed, _KEEP_WHILE)
            if data is None:  # past _KEEP_WHILE yet within the bounds: read again, keeping it this time
                fh.seek(0)
                data = _bounded(fh, path, packed, None)
            assert data is not None  # with no keep limit the text is always kept
        except OSError as exc:
            raise CaptureError(f"cannot read the file ({exc.strerror or exc})", where=path,
                               fix="check the path and that it is a file you can read.") from None
        except (EOFError, zlib.error) as exc:
            raise CaptureError(f"a damaged gzip file ({exc})", where=path,
                               fix="copy the .gz again, or give the unpacked .log.") from None
    return data.decode("utf-8", errors="replace")


_CAPTURE = Input(error=CaptureError, not_file=", not a regular file: a capture is a file saved from a tool's output",
                 fix="save the output to a file first (e.g. `nvidia-smi -q > smi.txt`) and give that file.")


def _open_regular(path: str) -> BinaryIO:
    """The file opened by the one safe opener (gpuvet/files.py): a regular file, or a CaptureError
    saying what it is."""
    return open_input(path, path, _CAPTURE)


def _bounded(fh: BinaryIO, path: str, packed: bool, limit: int | None) -> bytearray | None:
    """The text's bytes, read (and unpacked) a MiB at a time while its size and lines are counted;
    CaptureError at the first bound passed. Kept only up to ``limit`` bytes: past it the rest is
    only counted, and None says that the text fits the bounds but must be read again to be kept
    (a refusal never holds more than ``limit`` bytes)."""
    kept: bytearray | None = bytearray()
    size = lines = 0
    for piece in (_gunzip(fh) if packed else iter(lambda: fh.read(_CHUNK), b"")):
        if not size and b"\x00" in piece[:65536]:
            raise CaptureError("a binary file, not captured text", where=path, fix=f"give {EXPECTED}.")
        size += len(piece)
        lines += piece.count(b"\n")
        if b"\r" in piece:  # clean() splits at a lone CR too
            lines += piece.count(b"\r") - piece.count(b"\r\n")
        if size > MAX_TEXT_BYTES:
            raise CaptureError(f"{'unpacks to' if packed else 'holds'} more than {MAX_TEXT_BYTES // 2**20} MiB of "
                               "text", where=path, fix=_SMALLER)
        if lines >= MAX_LINES:
            raise CaptureError(f"more than {MAX_LINES:,} lines{' unpacked' if packed else ''} (at most "
                               f"{MAX_LINES:,})", where=path, fix=_SMALLER)
        if kept is not None:
            kept += piece
            if limit is not None and size > limit:
                kept = None  # let it go: counted to the end, then read again
    return kept


def _gunzip(fh: BinaryIO) -> Iterator[bytes]:
    """A gzip file's text a MiB at a time (files.unpacked: every member, zero padding as gzip
    reads it). zlib.error for damage, EOFError for a file cut short."""
    return unpacked(fh, True, _CHUNK)


def read(path: str) -> FileCapture:
    return parse_text(read_text(path), path)


def parse_text(text: str, where: str) -> FileCapture:
    """Every capture in the text. Raises CaptureError when nothing in it can be read, or when
    what is there cannot be trusted (see the parsers)."""
    _refuse_long_numbers(text, where)
    cleaned = clean(text)
    if len(cleaned.lines) > MAX_LINES:
        raise CaptureError(f"{len(cleaned.lines)} lines (at most {MAX_LINES})", where=where,
                           fix="give the capture itself, or the part of it that matters.")
    fc = FileCapture(where, bug_report=bool(_BUNDLE.search(text[:20000])))
    lines = cleaned.lines
    claimed: set[int] = set()
    fc.xml = smi_xml.parse(lines, where)
    if fc.xml is not None:
        claimed |= fc.xml.claimed
        fc.kinds.append("nvidia-smi -q -x")
    rest = [ln for ln in lines if ln.no not in claimed]
    try:
        claimed |= _text_parsers(fc, rest, where)
    except CaptureError as exc:  # a parser that knows the line, not the file: name both
        if exc.where and where not in exc.where:
            exc = CaptureError(exc.what, where=f"{where}, {exc.where}", fix=exc.fix)
            raise exc from None
        raise
    _dcgm_json(fc, text, lines, claimed)
    if not claimed or not fc.kinds:  # lines claimed under no kind (a banner, a header alone): nothing was read
        raise CaptureError("nothing in it is output gpuvet can read", where=where, fix=f"give {EXPECTED}.")
    bundle = [f"nvidia-bug-report: read {', '.join(fc.kinds)} inside it"] if fc.bug_report else []
    fc.notes = bundle + cleaned.notes + _notes(fc) + _skipped(cleaned, claimed, fc.bug_report)
    return fc


def _refuse_long_numbers(text: str, where: str) -> None:
    """No tool writes a number of a thousand digits; one would make int() raise mid-parse."""
    run, step = "0" * (MAX_DIGITS + 1), 1 << 20
    for start in range(0, len(text), step):  # a MiB at a time (overlapping by a run), not a copy of the whole text
        at = text[start:start + step + MAX_DIGITS].translate(_ZEROS).find(run)
        if at < 0:
            continue
        begin = end = start + at
        while end < len(text) and text[end] in "0123456789":
            end += 1
        line = text.count("\n", 0, begin) + text.count("\r", 0, begin) - text.count("\r\n", 0, begin) + 1
        raise CaptureError(f"line {line}: a number of {end - begin:,} digits (at most {MAX_DIGITS:,}); no tool "
                           "writes one", where=where, fix="give the tool's output as it printed it.")


def _text_parsers(fc: FileCapture, lines: list[Line], where: str) -> set[int]:
    """The specific formats first; topo -m and nvidia-smi -q (whose `Key : value` shape is
    the least specific) read only what the others left."""
    claimed: set[int] = set()
    fc.nccl, fc.nvb = bench.parse_nccl(lines, where), bench.parse_nvbandwidth(lines)
    fc.kernel, fc.nvlink = kernel.parse(lines), links.parse_nvlink(lines)
    fc.lspci, fc.dcgm = links.parse_lspci(lines), dcgm.parse_text(lines)
    fc.dmon, fc.aer = smi_text.parse_dmon(lines), aer.parse(lines)
    fc.amd, fc.npu = amd_smi.parse(lines), npu_smi.parse(lines)
    for parsed, kind in ((fc.nccl, "nccl-tests"), (fc.nvb, "nvbandwidth"), (fc.kernel, "kernel log"),
                         (fc.nvlink, "nvlink state"), (fc.lspci, "lspci -vvv"), (fc.dcgm, "dcgmi diag"),
                         (fc.dmon, "nvidia-smi dmon"), (fc.aer, "kernel AER")):
        if parsed.claimed:
            claimed |= parsed.claimed
            fc.kinds.append(kind)
    fc.kinds += ["nvidia-smi: no devices"] if fc.lspci.smi_none else []  # its one line, read beside an lspci listing
    for listed in (fc.amd, fc.npu):  # each names the formats it found
        claimed |= listed.claimed
        fc.kinds += listed.kinds
    fc.nccl_log = nccl_log.parse(lines)  # the runtimes' own logs: before -q, whose `Key : value` they resemble
    claimed |= fc.nccl_log.claimed
    fc.kinds += fc.nccl_log.kinds
    fc.rbt_validation = rocm_validation.parse(lines)  # rocm-bandwidth-test -v: its PASS/FAIL matrix
    claimed |= fc.rbt_validation.claimed
    fc.kinds += ["rocm-bandwidth-test -v"] if fc.rbt_validation.checks else []
    claimed |= hccl.add_to(fc, [ln for ln in lines if ln.no not in claimed], where)  # Ascend HCCL Test
    claimed |= transferbench.add_to(fc, [ln for ln in lines if ln.no not in claimed])  # AMD TransferBench
    fc.nics, more = nic_tools.parse([ln for ln in lines if ln.no not in claimed])  # the RDMA NICs
    claimed |= more
    fc.kinds += fc.nics.kinds
    claimed |= _network_tools(fc, [ln for ln in lines if ln.no not in claimed])
    table = smi_table.parse([ln for ln in lines if ln.no not in claimed])  # nvidia-smi's default table
    claimed |= table.claimed
    query = smi_query.parse([ln for ln in lines if ln.no not in claimed])  # nvidia-smi --query-gpu CSV
    claimed |= query.claimed
    rest = [ln for ln in lines if ln.no not in claimed]
    fc.topo = topo.parse(rest, where)
    if fc.topo is not None:
        topo.again(rest, fc.topo, where)  # a second matrix in the file: compared with the first, said
        claimed |= fc.topo.claimed
        fc.kinds.append("nvidia-smi topo -m")
    smi = smi_text.parse([ln for ln in rest if ln.no not in claimed], where)
    if smi.modules:
        fc.smi = smi
        claimed |= smi.claimed
        fc.kinds.append("nvidia-smi -q")
    elif table.modules or query.modules:  # a -q beside them (a bug report) says more of the same modules
        fc.smi = table if table.modules else query
        fc.kinds.append("nvidia-smi table" if table.modules else "nvidia-smi --query-gpu")
    elif fc.nccl.results and fc.topo is None and (named := nccl_devices.listing(lines)).modules:
        fc.smi = named  # a benchmark log alone: its device lines are the module list
    return claimed


def _network_tools(fc: FileCapture, lines: list[Line]) -> set[int]:
    """The fabric manager's journal and perftest runs: read before nvidia-smi -q, whose `Key : value`
    shape would otherwise take perftest's header for modules."""
    fc.fabric_manager, fc.perftest = fabric_manager.parse(lines), perftest.parse(lines)
    for parsed, kind in ((fc.fabric_manager, "fabric manager log"), (fc.perftest, "perftest")):
        if parsed.claimed:
            fc.kinds.append(kind)
    return fc.fabric_manager.claimed | fc.perftest.claimed


def _dcgm_json(fc: FileCapture, text: str, lines: list[Line], claimed: set[int]) -> None:
    if "test_categories" not in text:
        return
    body = "\n".join(ln.text for ln in lines)
    parsed = dcgm.parse_json(body)
    if parsed is None:
        fc.notes.append("something like dcgmi diag -j JSON, but not readable JSON: skipped")
        return
    first = next(ln.no for ln in lines if "{" in ln.text)
    last = max(ln.no for ln in lines if "}" in ln.text)
    parsed.claimed = {ln.no for ln in lines if first <= ln.no <= last}
    fc.dcgm = parsed
    claimed |= parsed.claimed
    fc.kinds.append("dcgmi diag -j")


def _notes(fc: FileCapture) -> list[str]:
    notes: list[str] = []
    for part in (fc.xml, fc.topo, fc.smi, fc.nccl, fc.nvb, fc.kernel, fc.nvlink, fc.lspci, fc.dcgm, fc.dmon, fc.amd,
                 fc.npu, fc.nccl_log, fc.rbt_validation):
        if part is not None:
            notes += part.notes
    return notes


def _skipped(cleaned: Cleaned, claimed: set[int], bug_report: bool) -> list[str]:
    rest = [ln.no for ln in cleaned.lines if ln.no not in claimed and ln.text.strip() and not ln.elision]
    if not rest:
        return []
    what = "not output gpuvet reads" if not bug_report else "other sections of the bug report"
    return [f"line(s) {ranges(rest)}: {what}, skipped ({len(rest)} line(s))"]
