"""One captured file, whatever it holds: each parser claims the lines it understood, the kinds
found are named, and the lines nobody claimed are reported (never silently dropped).

A file may be gzip-compressed (nvidia-bug-report.log.gz); it is read up to MAX_TEXT_BYTES.
"""

from __future__ import annotations

import gzip
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from gpuvet.captures import bench, dcgm, kernel, links, smi_text, smi_xml, topo
from gpuvet.captures.text import MAX_LINES, Cleaned, Line, clean, ranges
from gpuvet.errors import CaptureError

_BUNDLE = re.compile(r"Start of NVIDIA bug report log file|nvidia-bug-report\.sh Version:")  # the bundle's header
MAX_FILE_BYTES = 256 * 2**20  # on disk (a bug report of a large node is tens of MB)
MAX_TEXT_BYTES = 512 * 2**20  # after decompression
EXPECTED = ("nvidia-smi -q (text, whole or excerpts) or -q -x (XML), nvidia-smi topo -m (a matrix under a "
            "GPU0 … header), nvidia-smi nvlink -s/-e, nccl-tests output, nvbandwidth output, kernel log lines with "
            "Xid errors, lspci -vvv, dcgmi diag (text or -j JSON), or an nvidia-bug-report.log(.gz) holding them")


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
    dcgm: dcgm.DcgmParse = field(default_factory=dcgm.DcgmParse)
    notes: list[str] = field(default_factory=list)
    bug_report: bool = False


def read_text(path: str) -> str:
    """The file's text, unpacked if gzip; bounded. Raises CaptureError."""
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_FILE_BYTES:
            raise CaptureError(f"{size / 2**20:.0f} MiB is larger than any capture ({MAX_FILE_BYTES // 2**20} MiB "
                               "at most)", where=path, fix="give the capture itself, or the part of it that matters.")
        with p.open("rb") as fh:
            head = fh.read(2)
        if head == b"\x1f\x8b":
            with gzip.open(p, "rb") as gz:
                data = gz.read(MAX_TEXT_BYTES + 1)
        else:
            data = p.read_bytes()
    except OSError as exc:
        raise CaptureError(f"cannot read the file ({exc.strerror or exc})", where=path,
                           fix="check the path and that it is a file you can read.") from None
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise CaptureError(f"a damaged gzip file ({exc})", where=path,
                           fix="copy the .gz again, or give the unpacked .log.") from None
    if len(data) > MAX_TEXT_BYTES:
        raise CaptureError(f"unpacks to more than {MAX_TEXT_BYTES // 2**20} MiB", where=path,
                           fix="give the capture itself, or the part of it that matters.")
    if b"\x00" in data[:65536]:
        raise CaptureError("a binary file, not captured text", where=path, fix=f"give {EXPECTED}.")
    return data.decode("utf-8", errors="replace")


def read(path: str) -> FileCapture:
    return parse_text(read_text(path), path)


def parse_text(text: str, where: str) -> FileCapture:
    """Every capture in the text. Raises CaptureError when nothing in it can be read, or when
    what is there cannot be trusted (see the parsers)."""
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
    claimed |= _text_parsers(fc, rest, where)
    _dcgm_json(fc, text, lines, claimed)
    if not claimed:
        raise CaptureError("nothing in it is output gpuvet can read", where=where, fix=f"give {EXPECTED}.")
    bundle = [f"nvidia-bug-report: read {', '.join(fc.kinds)} inside it"] if fc.bug_report else []
    fc.notes = bundle + cleaned.notes + _notes(fc) + _skipped(cleaned, claimed, fc.bug_report)
    return fc


def _text_parsers(fc: FileCapture, lines: list[Line], where: str) -> set[int]:
    """The specific formats first; topo -m and nvidia-smi -q (whose `Key : value` shape is
    the least specific) read only what the others left."""
    claimed: set[int] = set()
    fc.nccl, fc.nvb = bench.parse_nccl(lines, where), bench.parse_nvbandwidth(lines)
    fc.kernel, fc.nvlink = kernel.parse(lines), links.parse_nvlink(lines)
    fc.lspci, fc.dcgm = links.parse_lspci(lines), dcgm.parse_text(lines)
    for parsed, kind in ((fc.nccl, "nccl-tests"), (fc.nvb, "nvbandwidth"), (fc.kernel, "kernel log"),
                         (fc.nvlink, "nvlink state"), (fc.lspci, "lspci -vvv"), (fc.dcgm, "dcgmi diag")):
        if parsed.claimed:
            claimed |= parsed.claimed
            fc.kinds.append(kind)
    rest = [ln for ln in lines if ln.no not in claimed]
    fc.topo = topo.parse(rest, where)
    if fc.topo is not None:
        claimed |= fc.topo.claimed
        fc.kinds.append("nvidia-smi topo -m")
    smi = smi_text.parse([ln for ln in rest if ln.no not in claimed])
    if smi.modules:
        fc.smi = smi
        claimed |= smi.claimed
        fc.kinds.append("nvidia-smi -q")
    return claimed


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
    for part in (fc.xml, fc.topo, fc.smi, fc.nccl, fc.nvb, fc.kernel, fc.nvlink, fc.lspci, fc.dcgm):
        if part is not None:
            notes += part.notes
    return notes


def _skipped(cleaned: Cleaned, claimed: set[int], bug_report: bool) -> list[str]:
    rest = [ln.no for ln in cleaned.lines if ln.no not in claimed and ln.text.strip() and not ln.elision]
    if not rest:
        return []
    what = "not output gpuvet reads" if not bug_report else "other sections of the bug report"
    return [f"line(s) {ranges(rest)}: {what}, skipped ({len(rest)} line(s))"]
