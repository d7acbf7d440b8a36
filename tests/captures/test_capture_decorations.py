"""Issue 46: a capture reads the same however it was pasted. Every file of the corpus (real, fresh, fresh_c,
fresh_d and the written ones) is read plain and then decorated as operators paste it: indented by 4 spaces,
quoted with '> ', behind srun's `0: `, Open MPI's `[1,0]<stdout>:`, a kubectl --timestamps stamp, with CRLF
line ends, and the nestings and log collectors below. What was read (modules, matrices, rows, kernel
events, the lines claimed) must not change; only the notes say what was peeled. Parse level
(captures.read.parse_text), so the whole corpus stays fast.

Every decoration is applied to every format, not to every file: a decoration is a line prefix (or line end)
that decorations.peel takes off before any format's reader sees the text, so what it can break is a format's
reading, and a second file of the same format meets the same peel and the same reader. The files are grouped
by format (the kinds their plain text is read as); in each group the decorations are dealt round the files in
turn, so each group gets all of them and each file at least EACH, the same ones on every run (no randomness):
263 files x 15 decorations were 3,945 parses, now 1,300 or so."""

from __future__ import annotations

import dataclasses
import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest

from gpuvet.captures.decorations import peel
from gpuvet.captures.read import FileCapture, parse_text
from gpuvet.captures.text import clean
from gpuvet.errors import CaptureError

CAPTURES = Path(__file__).parent.parent / "data" / "captures"
FILES = sorted(p for d in (CAPTURES, CAPTURES / "real", CAPTURES / "fresh", CAPTURES / "fresh_c", CAPTURES / "fresh_d")
               for p in d.iterdir() if p.is_file() and p.suffix in (".txt", ".xml", ".log"))
_HEADER = re.compile(r"#\s*(source|shows|conclusion|expect|note|tuned)\b", re.I)
_SKIP = {"notes", "path", "where", "host"}  # what may differ: the notes name the decoration; the path is the variant's;
# the host a launcher prefix names (pdsh's, syslog's) is the decoration's own word, said for doctor --from's several files

DECORATIONS: dict[str, Callable[[list[str]], str]] = {
    "indented by 4 spaces": lambda ls: "\n".join("    " + s if s else s for s in ls),
    "quoted '> '": lambda ls: "\n".join("> " + s for s in ls),
    "srun --label '0: '": lambda ls: "\n".join("0: " + s for s in ls),
    "Open MPI '[1,0]<stdout>:'": lambda ls: "\n".join("[1,0]<stdout>:" + s for s in ls),
    "kubectl --timestamps": lambda ls: "\n".join("2024-05-01T12:00:00.123456Z " + s for s in ls),
    "CRLF line ends": lambda ls: "\r\n".join(ls),
    # and what else operators paste through: nested, padded ranks, log collectors, hosts
    "quoted then indented": lambda ls: "\n".join(">     " + s for s in ls),
    "tab-indented": lambda ls: "\n".join("\t" + s if s else s for s in ls),
    "srun ranks padded": lambda ls: "\n".join(f"{i % 16:>3}: " + s for i, s in enumerate(ls)),
    "Open MPI ranks": lambda ls: "\n".join(f"[1,{i % 8}]<stdout>:" + s for i, s in enumerate(ls)),
    "journalctl": lambda ls: "\n".join("May 01 12:00:00 gpu-node-3 job.sh[4242]: " + s for s in ls),
    "docker compose": lambda ls: "\n".join("trainer-1  | " + s for s in ls),
    "pdsh host": lambda ls: "\n".join("gpu-node-3: " + s for s in ls),
    "torchrun --tee": lambda ls: "\n".join("[default0]:" + s for s in ls),
    "timestamp over srun": lambda ls: "\n".join("2024-05-01T12:00:00Z 0: " + s for s in ls),
}


def decorate(text: str, how: str) -> str:
    """The capture as pasted: its corpus header (not part of the paste) kept first, the rest decorated."""
    lines = text.split("\n")
    head = 0
    while head < min(len(lines), 10) and _HEADER.match(lines[head]):
        head += 1
    body = DECORATIONS[how](lines[head:])
    return "\n".join([*lines[:head], body]) if head else body


def shape(obj: object) -> object:
    """What a parse read, without its notes: nested records as tuples, XML as its text."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return tuple((f.name, shape(getattr(obj, f.name))) for f in dataclasses.fields(obj) if f.name not in _SKIP)
    if isinstance(obj, ET.Element):  # whitespace between tags is no reading
        return re.sub(rb">\s+<", b"><", re.sub(rb"^(<[^>]+>)\s+", rb"\1", ET.tostring(obj)))
    if isinstance(obj, dict):
        return tuple(sorted(((repr(k), shape(v)) for k, v in obj.items()), key=lambda kv: kv[0]))
    if isinstance(obj, (set, frozenset)):
        return tuple(sorted(repr(shape(v)) for v in obj))
    if isinstance(obj, (list, tuple)):
        return tuple(shape(v) for v in obj)
    return obj


def read(text: str) -> object:
    try:
        fc: FileCapture = parse_text(text, "capture.txt")
    except CaptureError as exc:
        return ("refused", exc.what)
    return shape(fc)


EACH = 5  # decorations each file gets at least (a format with fewer files than 15 / EACH gives each file more)


@cache
def plain_reading(path: Path) -> tuple[tuple[str, ...], object]:
    """The file's format (the kinds its plain text is read as; a refusal is one) and what was read."""
    try:
        fc = parse_text(path.read_text(encoding="utf-8", errors="replace"), "capture.txt")
    except CaptureError as exc:
        return ("refused",), ("refused", exc.what)  # as read() says a refusal
    return tuple(sorted(fc.kinds)), shape(fc)


@cache
def decorations_of() -> dict[Path, tuple[str, ...]]:
    """The decorations each file is read under: dealt round each format's files in turn (see the docstring)."""
    by_format: dict[tuple[str, ...], list[Path]] = defaultdict(list)
    for path in FILES:
        by_format[plain_reading(path)[0]].append(path)
    names, dealt = list(DECORATIONS), {}
    for files in by_format.values():
        each = max(EACH, -(-len(names) // len(files)))
        for i, path in enumerate(files):
            dealt[path] = tuple(names[(i * each + j) % len(names)] for j in range(each))
    return dealt


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_decorated_capture_reads_as_the_plain_one(path: Path) -> None:
    text = path.read_text(encoding="utf-8", errors="replace")
    plain = plain_reading(path)[1]
    differ = [how for how in decorations_of()[path] if read(decorate(text, how)) != plain]
    assert differ == []


def test_the_sweep_covers_every_batch() -> None:
    assert {p.parent.name for p in FILES} == {"captures", "real", "fresh", "fresh_c", "fresh_d"} and len(FILES) > 250


def test_every_format_is_read_under_every_decoration() -> None:
    """The deal leaves no (format, decoration) pair out and no file with fewer than EACH."""
    pairs = {(plain_reading(path)[0], how) for path, hows in decorations_of().items() for how in hows}
    formats = {plain_reading(path)[0] for path in FILES}
    assert pairs == {(f, how) for f in formats for how in DECORATIONS} and len(formats) > 30
    assert min(map(len, decorations_of().values())) >= EACH


# --- each decoration as operators paste it, and what is not one ---------------------------------------------
_ROWS = ("           8             2     float     sum      -1    136.3    0.00    0.00      0    70.85    0.00    "
         "0.00      0", "          16             4     float     sum      -1    69.29    0.00    0.00      0    68.67"
         "    0.00    0.00      0")


def _texts(text: str) -> list[str]:
    return [ln.text for ln in clean(text).lines]


def test_an_indented_open_mpi_tag_over_headerless_rows_is_peeled_and_the_rows_read() -> None:
    text = "Results:\n```\n" + "\n".join(f"        [1,0]<stdout>:{r}" for r in _ROWS) + "\n```\n"
    fc = parse_text(text, "all_reduce.txt")
    assert [r.size_bytes for r in fc.nccl.results[0].rows] == [8, 16]
    assert any("Open MPI --tag-output" in n for n in fc.notes)


def test_a_prefix_on_one_line_is_not_a_launchers() -> None:
    """A size-led nccl-tests row is never eaten; a lone `1: lo:` line keeps its number."""
    text = "1: lo: <LOOPBACK,UP>\n    link/loopback 00:00:00:00:00:00\n" + "\n".join(_ROWS)
    assert _texts(text)[0] == "1: lo: <LOOPBACK,UP>" and _texts(text)[2:] == list(_ROWS)


def test_a_run_of_prefixed_lines_inside_prose_is_peeled_and_line_numbers_kept() -> None:
    text = ("My job prints this:\n\n" + "\n".join(f"{n}: NCCL INFO line {n}" for n in range(4)) +
            "\n\nany idea what is wrong? It happens on every node of the job, every time, with every version.\n")
    lines = clean(text).lines
    assert [(ln.no, ln.text) for ln in lines[2:6]] == [(3 + n, f"NCCL INFO line {n}") for n in range(4)]


@pytest.mark.parametrize("prefix", ["2024-05-01T12:00:00.123456789Z ", "May 01 12:00:00 gpu-node-3 python3[4242]: ",
                                    "2024-05-01T12:00:00.123+00:00 gpu-node-3 trainer[77]: ", "trainer-1  | ",
                                    "[gpu-node-3:04242] ", "[3] ", "  12: ", "> > ", "\t", "[default3]:", "[rank3]: ",
                                    "[pod/nccl-test-worker-0/nccl] ", "[2024-05-01 12:00:00] ", "10.0.3.7: ",
                                    "Wed May  1 12:00:00 2024[1,0]<stdout>:", "[2024-05-01T12:00:00Z][1,3]<stdout>:"])
def test_every_common_prefix_shape_is_peeled(prefix: str) -> None:
    body = ["#       size         count      type   redop    root     time   algbw   busbw #wrong", *_ROWS]
    peeled = peel([(i + 1, prefix + s) for i, s in enumerate(body)])
    assert [s for _, s in peeled.lines] == body
    assert peeled.notes or peeled.quoted


def test_text_copied_from_a_web_page_reads_as_the_tools() -> None:
    """No-break spaces between a matrix's cells and an escaped '->' in a NCCL channel line."""
    text = ("\u00a0\u00a0\u00a0\u00a0GPU0\u00a0\u00a0GPU1\nGPU0\u00a0\u00a0X\u00a0\u00a0NV4\n"
            "node1:12:34 [0] NCCL INFO Channel 00/0 : 0[0] -&gt; 8[0] [send] via NET/Socket/0\n")
    cleaned = clean(text)
    assert [ln.text for ln in cleaned.lines][:3] == ["    GPU0  GPU1", "GPU0  X  NV4",
                                                 "node1:12:34 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via "
                                                 "NET/Socket/0"]
    assert any("no-break" in n for n in cleaned.notes) and any("HTML entities" in n for n in cleaned.notes)


def test_a_key_value_listing_is_not_taken_for_host_prefixes() -> None:
    """ibstat flattened, `Key: value` on every line: the keys differ line to line, so they are not hosts."""
    body = ["CA type: MT4124", "Firmware version: 20.28.4000", "Port 1:", "State: Active", "Rate: 200"]
    peeled = peel([(i + 1, s) for i, s in enumerate(body)])
    assert [s for _, s in peeled.lines] == body and not peeled.notes


def test_a_tools_own_indentation_under_its_header_is_kept() -> None:
    body = ["GPU 00000000:3B:00.0", "    Product Name                          : NVIDIA H100 80GB HBM3",
            "    Persistence Mode                      : Enabled"]
    assert [s for _, s in peel([(i + 1, s) for i, s in enumerate(body)]).lines] == body


def test_a_markdown_code_block_after_prose_loses_markdowns_4_spaces_and_says_so() -> None:
    body = ["Here is ibstat:", "", "    CA 'mlx5_0'", "    \tCA type: MT4129", "    \tPort 1:", "    \t\tState: Active"]
    peeled = peel([(i + 1, s) for i, s in enumerate(body)])
    assert [s for _, s in peeled.lines][2:] == ["CA 'mlx5_0'", "\tCA type: MT4129", "\tPort 1:", "\t\tState: Active"]
    assert any("indented by 4 space(s)" in n for n in peeled.notes)


def test_an_excerpt_cut_from_a_tools_middle_keeps_the_tools_indentation() -> None:
    """-q's lines under a cut section start deeper than the excerpt goes on: inside a fence, or pasted as a
    whole after some prose, that indentation is the tool's."""
    body = ["                Current             : 1", "            Link Width", "                Max : 16x",
            "        Replays Since Reset         : 0", "    Fan Speed                       : N/A"]
    for text in (["```", *body, "```"], ["the card's -q:", *body]):
        assert [s for _, s in peel([(i + 1, s) for i, s in enumerate(text)]).lines] == text
