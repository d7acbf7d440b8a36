"""Issue 43: a format whose markers a text lacks is not run (captures/read.py). That is sound only
while each marker is in every line its parser can claim: here every format with markers, run anyway
on every capture of the corpus that lacks them, must find nothing. A parser taught a new syntax
whose lines hold none of its format's markers fails here once a capture of that syntax is kept."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest

from gpuvet.captures import amd_smi, app_errors, marks, read
from gpuvet.captures.formats import FORMATS, FileCapture
from gpuvet.captures.marks import Marks
from gpuvet.captures.records import ListedParse
from gpuvet.captures.smi_text import SmiText
from gpuvet.captures.text import Line, clean
from tests.support.corpus import corpus_files
from tests.support.sweep import OneBatch, batches, check_each

CORPUS = Path(__file__).resolve().parents[1] / "data" / "captures"
# every capture kept, less a blind batch not yet scored
FILES = corpus_files(CORPUS)
BATCHES = batches(FILES, CORPUS)  # one test per batch folder, each of its files checked (tests/support/sweep.py)
MARKED = [f for f in FORMATS if f.markers]
_CLEANED = OneBatch(lambda text: clean(text).lines)  # a batch's lines, cleaned once for its five sweeps


def _lines(batch: str, path: Path) -> list[Line]:
    """The file's lines as clean makes them (shared by the sweeps of its batch: each cleaned every file)."""
    return _CLEANED(batch, path, read.read_text(str(path)))


def test_the_costly_formats_have_markers() -> None:
    assert {"nccl-tests", "kernel AER", "hccl_test", "TransferBench", "ibstat, ibstatus, ibv_devinfo, ibdev2netdev",
            "amd-smi, rocm-smi, rocm-bandwidth-test", "perftest", "ROCm/HIP error lines"} <= {f.name for f in MARKED}


def test_every_format_has_markers_or_says_why_not() -> None:
    """A format added without markers runs over every line of every file (issue 43); one that cannot
    have them says why in one line."""
    assert [f.name for f in FORMATS if not f.markers and not f.unmarked.strip()] == []
    assert [f.name for f in FORMATS if f.markers and f.unmarked] == []
    assert all(markers for markers, _ in amd_smi.READERS)


@pytest.mark.parametrize("batch", BATCHES, scope="module")  # a batch's sweeps in a row (_CLEANED)
def test_a_format_without_its_markers_finds_nothing(batch: str) -> None:
    check_each(BATCHES[batch], partial(_a_format_without_its_markers_finds_nothing, batch), CORPUS)


def _a_format_without_its_markers_finds_nothing(batch: str, path: Path) -> None:
    lines = _lines(batch, path)
    present = Marks(lines)
    present.settle(read._GROUPS)  # as read._walk asks: each answer as ``has`` gives it, the literals at once
    empty = FileCapture(str(path))  # each field's default, read only: one a file, not one a format (~2 s of CPU)
    for fmt in MARKED:
        if present.any(fmt.markers):
            continue
        got = fmt.run(lines, str(path), present)  # a Gated one's readers ask the marks of these same lines
        assert not got.claimed and not got.found and not got.kinds, (fmt.name, sorted(got.claimed)[:5])
        default = getattr(empty, fmt.field) if fmt.field else None
        assert got.value is None or got.value == default or fmt.field is None, fmt.name
        assert fmt.field or not isinstance(got.value, SmiText) or not got.value.modules, fmt.name


@pytest.mark.parametrize("batch", BATCHES, scope="module")  # a batch's sweeps in a row (_CLEANED)
def test_an_amd_reader_without_its_markers_finds_nothing(batch: str) -> None:
    """amd_smi.parse runs each of its ten readers only on a text holding that reader's markers: run
    anyway where they are absent, a reader changes nothing."""
    check_each(BATCHES[batch], partial(_an_amd_reader_without_its_markers_finds_nothing, batch), CORPUS)


def _an_amd_reader_without_its_markers_finds_nothing(batch: str, path: Path) -> None:
    lines = _lines(batch, path)
    present = Marks(lines)
    for markers, reader in amd_smi.READERS:
        if present.any(markers):
            continue
        out = ListedParse()
        reader(lines, out)
        assert out == ListedParse(), (reader.__qualname__, sorted(out.claimed)[:5], out.kinds, out.notes[:1])


def test_the_joined_text_is_let_go_once_settled_and_joined_again_if_asked() -> None:
    """read._walk settles every marker group its formats and their readers ask about, then lets the joined
    text (a bug report's size) go; a marker asked later is still answered."""
    present = Marks([Line(1, "GPU[0] : x"), Line(2, "plain")])
    present.settle([("GPU[",), ("nothing", "plain")])
    assert present.text is None and present.found == {"GPU[": True, "nothing": False, "plain": True}
    assert present.has("GPU[0]") and not present.has("zzz")
    assert all(markers in fmt.groups() for fmt in FORMATS for markers in [fmt.markers])
    amd = next(fmt for fmt in FORMATS if fmt.name.startswith("amd-smi"))
    assert all(markers in amd.groups() for markers, _ in amd_smi.READERS)


@pytest.mark.parametrize("batch", BATCHES, scope="module")  # a batch's sweeps in a row (_CLEANED)
def test_the_application_error_candidates_are_the_same_with_the_whole_texts_marks(batch: str) -> None:
    """app_errors skips a word no casing of which the whole text holds (Marks.any_case), and searches a key word
    alone where the text may hold only it of its anchor's: never a line any kind reads. The lines it leaves
    (an anchor's, 'Peer access from GPU0 -> GPU1 : Yes' under 'peer access') are lines no kind reads."""
    check = _the_application_error_candidates_are_the_same_with_the_whole_texts_marks
    check_each(BATCHES[batch], partial(check, batch), CORPUS)


def _the_application_error_candidates_are_the_same_with_the_whole_texts_marks(batch: str, path: Path) -> None:
    lines = _lines(batch, path)
    marked, every = app_errors._candidates(lines, Marks(lines)), app_errors._candidates(lines)
    assert set(marked) <= set(every)
    left = [i for i in set(every) - set(marked) if app_errors._kind(lines[i].text) is not None
            or "is_available" in lines[i].text.lower() or (i and "is_available" in lines[i - 1].text.lower())]
    assert not left, [lines[i].text for i in left[:3]]


def test_no_casing_of_a_word_is_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    """any_case is False only where the lowered text lacks the word, whatever the casing, across the steps
    the triples are counted in; a text with İ or the Kelvin sign (lower() makes ASCII of them) says True."""
    monkeypatch.setattr(marks, "_SMALL", 0)
    monkeypatch.setattr(marks, "_STEP", 3)
    texts = ["RuntimeError: CUDA ERROR", "cUdA eRrOr\nIS_AVAILABLE", "[[GPU]] x", "\u0130llegal", "\u212aernel image",
             "é€ NVML\tmisaligned", "plain text only"]
    for text in texts:
        present = Marks([Line(i + 1, t) for i, t in enumerate(text.split("\n"))])
        for word in (*app_errors._ANCHORS, "is_available", "kernel image", "illegal"):
            assert present.any_case(word) or word not in text.lower(), (text, word)
    assert not Marks([Line(1, "plain text only")]).any_case("cuda")
    assert Marks([Line(1, "\u212a")]).any_case("k image")


NEEDING = [m for fmt in FORMATS for group in fmt.groups() for m in group if isinstance(m, marks.Needing)]


@pytest.mark.parametrize("batch", BATCHES, scope="module")  # a batch's sweeps in a row (_CLEANED)
def test_a_pattern_needing_words_is_found_where_it_matches(batch: str) -> None:
    """A Needing marker is searched only where one of its words may be (issue 43): found wherever its
    pattern matches the text."""
    check_each(BATCHES[batch], partial(_a_pattern_needing_words_is_found_where_it_matches, batch), CORPUS)


def _a_pattern_needing_words_is_found_where_it_matches(batch: str, path: Path) -> None:
    lines = _lines(batch, path)
    text = "\n" + "\n".join(ln.text for ln in lines)
    present = Marks(lines)
    for marker in NEEDING:
        assert present.has(marker) == bool(marker.pattern.search(text)), marker.pattern.pattern


def test_the_words_a_pattern_needs_decide_only_where_they_can(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(marks, "_SMALL", 0)
    assert len(NEEDING) >= 3
    code = next(m for m in NEEDING if "E[A-Z]" in m.pattern.pattern)
    for text, found in (("EI0001: x", True), ("  EJ0004 y", True), ("ERROR EI00", False), ("EI٠٠٠١ z", True)):
        assert Marks([Line(1, "plain"), Line(2, text)]).has(code) is found, text
    cell = next(m for m in NEEDING if "0x" in m.pattern.pattern)
    assert Marks([Line(1, "0  0x74a1,  35.0c")]).has(cell) and not Marks([Line(1, "0x74a1 35.0c")]).has(cell)


def test_rocm_smis_table_is_run_for_its_header_not_for_any_temp() -> None:
    """Issue 43: rocm-smi's default table is read under its header (rocm_table._HEAD, of a line's text without
    its blanks), and its marker is that header at a line's start: not every text holding 'Temp' (nvidia-smi -q's
    'GPU Current Temp', in every bug report)."""
    from gpuvet.captures import rocm_table

    for line in (" GPU  Temp    AvgPwr   SCLK     MCLK     Fan      Perf", "\t GPU\tTemp\tAvgPwr", "GPU DID Temp AvgPwr",
                 "Device  Node  IDs        Temp      Power     Partitions", "Device [Model : Revision]    Temp  Power",
                 "        GPU Current Temp                  : 31 C", "    GPU Shutdown Temp : 92 C   Power Draw : 70 W",
                 "GPU Temp (DieEdge) AvgPwr", "GPUs  Temp  AvgPwr", "GPU Temperature Power", "Device Temp", "GPU TempPower"):
        header = rocm_table._HEAD.match(line.strip()) is not None
        assert Marks([Line(1, "x"), Line(2, line), Line(3, "y")]).any(rocm_table.MARKERS) is header, line
    assert not Marks(clean((CORPUS / "smi_q_h100_2gpu.txt").read_text()).lines).any(rocm_table.MARKERS)


def test_the_query_gpu_csv_is_run_for_its_header_or_command_not_for_any_comma() -> None:
    """Issue 43: a --query-gpu table opens at its header (smi_query._columns: query names split by commas) or under
    its command line; its marker is a line opening as such a header does, or the command: not every text holding a
    comma (a bug report's lspci -vvv, -q and kernel logs)."""
    from gpuvet.captures import smi_query

    query = next(fmt for fmt in FORMATS if fmt.name == "nvidia-smi --query-gpu")
    headers = ("index, name, temperature.gpu", "  pci.bus_id, power.draw [W], utilization.gpu [%]", "timestamp,name,uuid",
               "memory.total [MiB] , memory.used [MiB]", "\tclocks.sm [MHz],clocks.mem [MHz]")
    for line in headers:
        assert smi_query._columns(line.strip()) is not None, line
        assert Marks([Line(1, "x"), Line(2, line)]).any(query.markers), line
    for line in ("\t\tLnkCap:\tPort #0, Speed 32GT/s, Width x16", "[ 1000.370000] nvidia-nvswitch124: open (major=1001)",
                 "    Product Name : NVIDIA H200, rev a1", "with a detailed description of your problem, when", "a, b"):
        assert not Marks([Line(1, "x"), Line(2, line)]).any(query.markers), line
    assert Marks([Line(1, "$ nvidia-smi --query-gpu=index --format=csv,noheader")]).any(query.markers)


def test_the_byte_triples_never_hide_a_marker(monkeypatch: pytest.MonkeyPatch) -> None:
    """A marker is looked for only where each of its byte triples is in the text (marks._triples): the answer
    is ``in``'s, across the steps the triples are counted in and for any characters."""
    monkeypatch.setattr(marks, "_SMALL", 0)
    monkeypatch.setattr(marks, "_STEP", 3)
    texts = ["", "a", "GPU[0] : x\nab", "é€ \U0001f600 x\n\tGPU: 1", "nThread 1 nGpus 8 minBytes", "0123456789" * 3]
    for text in texts:
        present = Marks([Line(i + 1, t) for i, t in enumerate(text.split("\n"))])
        for marker in ("GPU[", "GPU: ", "\U0001f600 x", "é€", "nGpus", "minBytes", "789012", "90", "ab", "ba", "x\n",
                       "\tGPU", "zz", "€ \U0001f600"):
            assert present.has(marker) == (marker in text), (text, marker)


def test_the_text_is_searched_once_per_marker() -> None:
    present = Marks([Line(1, "# nThread 1 nGpus 8"), Line(2, "plain")])
    assert present.any(("nothing here", "nThread")) and not present.any(("CA '",))
    assert set(present.found) == {"nothing here", "nThread", "CA '"}


@pytest.mark.parametrize("batch", BATCHES, scope="module")  # a batch's sweeps in a row (_CLEANED)
def test_the_application_error_lines_are_among_the_candidates(batch: str) -> None:
    """app_errors reads only the lines its one search of the whole text found (issue 43): every line
    its per-line reading would take is one of them."""
    check_each(BATCHES[batch], partial(_the_application_error_lines_are_among_the_candidates, batch), CORPUS)


def _the_application_error_lines_are_among_the_candidates(batch: str, path: Path) -> None:
    lines = _lines(batch, path)
    every = {i for i, ln in enumerate(lines) if app_errors._kind(ln.text) or app_errors._torch_false(lines, i)}
    assert every <= set(app_errors._candidates(lines))


@pytest.mark.parametrize("block", [1, 2, 3, 8192])
def test_the_candidates_hold_every_key_and_the_line_after_is_available(block: int,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(app_errors, "_BLOCK", block)  # a block's edge between a line and the next
    lines = [Line(1, "plain"), Line(2, ">>> torch.cuda.is_available()"), Line(3, "False"), Line(4, "ECC Mode"),
             Line(5, "RuntimeError: CUDA error: an illegal memory access was encountered"), Line(6, "İ nvml")]
    assert app_errors._candidates(lines) == [1, 2, 4, 5]
    assert all(any(a in k for a in app_errors._ANCHORS) for k in app_errors._KEY_WORDS)
    assert [e.kind for e in app_errors.parse(lines).errors] == ["torch_no_cuda", "illegal_address"]
