"""Issue 46: a capture's excerpt is read like the whole where the excerpt holds the fault. The sibling of
test_decoration_invariance.py for CUTS: posters paste a fragment (a table's rows without its header, the
block around the error, the second half of a long output after `...`, a `grep` of a log), and doctor must
still name the same cause on the same module from what the fragment kept.

For each faulty sample and each cut: every finding of the plain file whose evidence lines the cut kept
must come back (cause and module; severity the same, or one step lower only where a case below says what
the cut removed), and the fragment may gain no warning or critical the plain file did not have. Where a
cut cannot be read in principle, `out_of_scope` says why; no case is skipped silently.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from unittest import mock

import pytest

from gpuvet.captures.nic_tools import UNNAMED_HCA
from gpuvet.cli.doctor import _diagnose
from gpuvet.doctor.model import Finding
from gpuvet.errors import GpuvetError
from tests.captures.test_decoration_invariance import SAMPLES, Sample, _quiet, sample_text

CAPTURES = Path(__file__).parent.parent / "data" / "captures"
SHORT = 10  # non-blank lines: an excerpt shorter than this has no header to drop, its first lines are the fault
K = 3  # lines kept either side of an evidence line: the block a poster selects around the error
_EXCLUDED = {"fresh_i"}  # the blind exam: never read here


@dataclass(frozen=True)
class Seen:
    """One finding as compared: what, where, how bad, and the body lines (0-based) that show it."""

    cause: str
    module: str | None
    severity: str
    lines: tuple[int, ...]


# the decoration test's samples, less the documents (a cut one is unbalanced); a healthy one (no finding) is kept:
# its fragments may gain no warning
FAULTY = tuple(s for s in SAMPLES if s.kind not in ("xml", "json") and s.path.split("/")[0] not in _EXCLUDED)
CUTS = ("header dropped 1", "header dropped 2", "header dropped 3", "block around the evidence",
        "first half cut with ...", "grep of the evidence's key words")
_SEVERITY = {"info": 0, "warn": 1, "critical": 2}
_BUS = re.compile(r"(?:[0-9a-f]{4,8}:)?([0-9a-f]{2}):([0-9a-f]{2})\.([0-7])", re.I)
_WORD = re.compile(r"[A-Za-z][\w.-]{3,}")


def _needles(f: Finding) -> list[str]:
    """The text a finding quotes from the file (the log line, the runtime's reason)."""
    out: list[str] = []
    for key in ("log", "why", "text", "message_line"):
        v = f.evidence.get(key)
        if isinstance(v, str) and len(v.strip()) >= 8:
            out.append(v.strip())
    return out


def _evidence_lines(f: Finding, head: int, body: list[str]) -> tuple[int, ...]:
    """The body lines a finding cites: its line numbers, else the lines holding the text it quotes."""
    cited: list[int] = []
    for key in ("line", "lines"):
        v = f.evidence.get(key)
        for n in v if isinstance(v, list) else [v]:
            if isinstance(n, int) and 0 <= n - 1 - head < len(body):
                cited.append(n - 1 - head)
    for needle in _needles(f):
        cited += [i for i, s in enumerate(body) if needle in s or (len(s.strip()) > 20 and s.strip() in needle)]
    if cited:  # a finding read from a group of lines cites its first: the module's lines belong to it too
        cited += _module_lines(f.module or "", body)
    return tuple(sorted(set(cited)))


def _module_lines(module: str, body: list[str]) -> list[int]:
    """The lines naming a module's bus id, in the kernel's spelling (`02:00.0`) or NCCL's (`[2d000]`)."""
    forms: list[str] = []
    for m in _BUS.finditer(module):
        b, dev, fn = (g.lower() for g in m.groups())
        forms += [f"{b}:{dev}.{fn}", f"{b}:{dev}):", f"[{b}{dev}{fn}]"]
    return [i for i, s in enumerate(body) if any(x in s.lower() for x in forms)] if forms else []


def _findings(path: Path) -> tuple[Finding, ...] | str:
    try:
        with mock.patch("gpuvet.cli.doctor.heartbeat", _quiet):
            result, _ = _diagnose(None, None, None, [str(path)], None, False)
    except GpuvetError as exc:
        return f"refused: {exc.message}"
    return tuple(result.findings)


@cache
def plain(sample: Sample) -> tuple[Seen, ...]:
    head, text = sample_text(sample)
    body = text.split("\n")
    found = _findings(CAPTURES / sample.path)
    assert not isinstance(found, str), found
    return tuple(Seen(f.cause, f.module, f.severity, _evidence_lines(f, len(head), body)) for f in found)


def _keep(body: list[str], keep: set[int], mark: str | None = None) -> str:
    """The lines kept, in order; a cut mark where lines between two kept ones were left out."""
    out: list[str] = []
    last = -1
    for i in sorted(keep):
        if mark is not None and out and i != last + 1:
            out.append(mark)
        out.append(body[i])
        last = i
    return "\n".join(out)


def _key_words(body: list[str], lines: tuple[int, ...]) -> list[str]:
    """What a poster greps for: the driver's tag or the bus id the evidence line carries."""
    words: list[str] = []
    for i in lines:
        line = body[i]
        bus = _BUS.search(line)
        if bus:
            words.append(f"{bus.group(1)}:{bus.group(2)}")
        for tag in ("NVRM", "amdgpu", "AER", "NCCL WARN", "Xid", "pcieport", "HCCL", "error", "Error", "FAIL"):
            if tag in line:
                words.append(tag)
                break
    return words


def cut(sample: Sample, how: str) -> tuple[str, set[int]] | str:
    """The fragment a poster pastes and the body lines it kept; a str: why this cut is out of scope."""
    _, text = sample_text(sample)
    body = text.split("\n")
    every = [i for s in plain(sample) for i in s.lines]
    if how.startswith("header dropped"):
        n = int(how.split()[-1])
        if len([s for s in body if s.strip()]) < SHORT:
            return f"an excerpt of fewer than {SHORT} lines: its first lines are the fault itself, no header"
        why = OUT_OF_SCOPE.get((sample.path, how))
        if why:
            return why
        kept = set(range(n, len(body)))
        return "\n".join(body[n:]), kept
    if not every:
        return "no finding cites a line of the file (a value read from a table or a document): no line to cut around"
    why = OUT_OF_SCOPE.get((sample.path, how))
    if why:
        return why
    if how == "block around the evidence":
        kept = {j for i in every for j in range(max(0, i - K), min(len(body), i + K + 1))}
        return _keep(body, kept, "..."), kept
    if how == "first half cut with ...":
        half = len(body) // 2
        return "...\n" + "\n".join(body[half:]), set(range(half, len(body)))
    words = _key_words(body, tuple(every))
    if not words:
        return "the evidence lines hold no driver tag or bus id a poster would grep for"
    kept = {i for i, s in enumerate(body) if any(w in s for w in words)}
    return "\n".join(body[i] for i in sorted(kept)), kept


_CONTEXT = ("the plain file's answer is milder because of a line far from the error (the board a GeForce, for "
            "which no fabric manager is needed): a fragment without that line is read as the error alone says")
_TITLE = ("the lines dropped are the matrix's title, the only place that says what it measures (P2P disabled "
          "or enabled): two matrices of the same shape cannot be told apart without it")
OUT_OF_SCOPE: dict[tuple[str, str], str] = {  # (sample path, cut) -> why the cut cannot be read in principle
    ("fresh_c/fabricmgr_gpuop356_geforce_fm_fail.txt", "block around the evidence"): _CONTEXT,
    ("fresh_c/fabricmgr_gpuop356_geforce_fm_fail.txt", "grep of the evidence's key words"): _CONTEXT,
    ("fresh_e/p2p_nccl814_p2p_enabled_slower_6gpu.txt", "header dropped 3"): _TITLE,
}
_TB = ("TransferBench's '[ERROR] HIP Error: …' line without the banner that names the tool: which program failed "
       "is not in the fragment")
XFAIL: dict[tuple[str, str], str] = {  # (sample path, cut) -> the class of fragment left unread
    ("real/amd_tb_mhilgema_mi350x_cfg_error.txt", "first half cut with ..."): _TB,
    ("real/amd_tb_mhilgema_mi350x_cfg_error.txt", "grep of the evidence's key words"): _TB,
}


def _same_place(got: str | None, was: str | None) -> bool:
    """The fragment's finding is on the file's place; a NIC port's card unnamed where the cut took its header
    ('unnamed HCA port 1' for 'mlx5_12 port 1': the port is its subject, the name was in the lines cut)."""
    if got == was or got is None or was is None:
        return got == was
    return got.startswith(UNNAMED_HCA + " ") and got.rpartition(" port ")[2] == was.rpartition(" port ")[2]


def compare(sample: Sample, how: str, fragment_dir: Path) -> list[str]:
    """The differences between the plain file's answer and the fragment's, as sentences."""
    made = cut(sample, how)
    if isinstance(made, str):
        return []
    text, kept = made
    where = fragment_dir / Path(sample.path).name
    where.write_bytes(text.encode("utf-8"))
    got = _findings(where)
    was = plain(sample)
    held = [s for s in was if (set(s.lines) <= kept if s.lines else how.startswith("header dropped"))]
    if isinstance(got, str):  # refused: right only where the cut kept no finding's evidence
        return [got[:160]] if held else []
    wrong: list[str] = []
    for s in held:  # a finding citing no line is kept by a header's cut only (its table is whole after it)
        same = [f for f in got if f.cause == s.cause and _same_place(f.module, s.module)]
        if not same:
            wrong.append(f"lost {s.cause} on {s.module}")
        elif max(_SEVERITY[f.severity] for f in same) < _SEVERITY[s.severity]:
            wrong.append(f"{s.cause} on {s.module}: {s.severity} -> {same[0].severity}")
    causes = {s.cause for s in was}
    gained = [f"gained {f.cause} on {f.module} ({f.severity})" for f in got
              if f.cause not in causes and _SEVERITY[f.severity] >= 1]
    return wrong + gained


def _param(sample: Sample, how: str) -> object:
    why = XFAIL.get((sample.path, how))
    marks = [pytest.mark.xfail(reason=why, strict=True)] if why else []
    return pytest.param(sample, how, marks=marks, id=f"{how}-{sample.path}")


@pytest.fixture(scope="module")
def fragment_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fragment")


@pytest.mark.parametrize(("sample", "how"), [_param(s, c) for s in FAULTY for c in CUTS])
def test_a_fragment_holding_the_fault_gets_the_whole_files_answer(sample: Sample, how: str,
                                                                  fragment_dir: Path) -> None:
    assert compare(sample, how, fragment_dir) == []


def test_every_cut_left_out_says_why_and_most_are_read() -> None:
    """The cuts out of scope, each with its reason; the faulty samples span the tool families."""
    faulty = [s for s in FAULTY if plain(s)]
    left = {(s.path, c): made for s in faulty for c in CUTS if isinstance(made := cut(s, c), str)}
    assert all(left.values()) and len(left) < len(faulty) * len(CUTS) / 2
    assert len(faulty) >= 28 and len({s.path.split("/")[0] for s in faulty}) >= 8


# --- the classes the first run found, each fixed in its reader and tested in the tool's own format ----------
def _doctor_on(text: str, tmp_path: Path) -> list[tuple[str, str | None, str]]:
    where = tmp_path / "fragment.txt"
    where.write_text(text, encoding="utf-8")
    found = _findings(where)
    assert not isinstance(found, str), found
    return [(f.cause, f.module, f.severity) for f in found]


def test_device_query_s_tail_pasted_alone_is_read(tmp_path: Path) -> None:
    text = "...\n\ncudaGetDeviceCount returned 100\n-> no CUDA-capable device is detected\nResult = FAIL\n"
    assert ("no_modules_visible", None, "critical") in _doctor_on(text, tmp_path)


def test_gpu_burn_s_init_error_grepped_alone_is_read(tmp_path: Path) -> None:
    text = "Couldn't init a GPU test: Error in \"init\": CUBLAS_STATUS_NOT_INITIALIZED\n"
    assert _doctor_on(text, tmp_path) == [("application_cuda_error", None, "warn")]


def test_rocm_bandwidth_test_s_validation_rows_without_title_are_read(tmp_path: Path) -> None:
    """Square rows numbered 0..n-1 give their own columns; a D/D line above them gives them where it is."""
    rows = "    0         PASS        FAIL        PASS\n    1         PASS        PASS        PASS\n" \
           "    2         PASS        PASS        N/A\n"
    for text in (rows, "    D/D       0           1           2\n\n" + rows):
        assert _doctor_on(text, tmp_path) == [("host_copy_validation_failed", None, "critical")]
    where = tmp_path / "healthy.txt"  # every cell PASS, a FAIL elsewhere: nothing gained (a refusal or no finding)
    where.write_text(rows.replace("FAIL", "PASS") + "\n[  FAIL  ] other test\n", encoding="utf-8")
    found = _findings(where)
    assert found == () or isinstance(found, str)


def test_rocm_bandwidth_test_s_rows_neither_square_nor_headed_are_not_guessed() -> None:
    from gpuvet.captures import rocm_validation
    from gpuvet.captures.text import clean

    got = rocm_validation.parse(list(clean("  0   PASS  FAIL\n  1   PASS  PASS\n  2   FAIL  PASS\n").lines))
    assert got.checks == [] and any("columns unknown" in n for n in got.notes)


def test_ibv_devinfo_without_its_hca_id_line_still_reads_the_port(tmp_path: Path) -> None:
    block = ("\ttransport:\t\t\tInfiniBand (0)\n\tfw_ver:\t\t\t\t28.39.1002\n\tvendor_part_id:\t\t\t4129\n"
             "\tphys_port_cnt:\t\t\t1\n\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_DOWN (1)\n"
             "\t\t\tmax_mtu:\t\t4096 (5)\n\t\t\tlink_layer:\t\tInfiniBand\n")
    assert [c for c, _, _ in _doctor_on(block, tmp_path)] == ["nic_port_down_undeclared"]
    healthy = block.replace("PORT_DOWN (1)", "PORT_ACTIVE (4)")
    assert _doctor_on(healthy, tmp_path) == []


_Q_GPU = re.compile(r"^GPU ([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])\s*$")
# the second: three 'Key : value' lines alone, their common indent peeled (flush left): 'Product Name', a block's
# first key, opens the module (smi_text._OPENS), so 'Product Brand : Unknown Error' is read without its GPU line
_Q_SAMPLES = ("smi_q_h100_2gpu.txt", "fresh_e/smiq_dcgmexp319_a10g_unknown_error.txt")


@pytest.mark.parametrize("path", _Q_SAMPLES)
def test_a_q_block_without_its_gpu_line_is_named_by_its_bus_id_field(path: str, tmp_path: Path) -> None:
    """The middle of a -q dump: one GPU's block pasted from the line after 'GPU 0000…'. Its findings are the
    whole file's on that module, named by the block's own 'Bus Id' field (a block without one: the unnamed
    module, 'bus id not in the excerpt')."""
    sample = next(s for s in FAULTY if s.path == path)
    body = sample_text(sample)[1].split("\n")
    heads = [i for i, s in enumerate(body) if _Q_GPU.match(s)]
    for k, i in enumerate(heads):
        block = body[i + 1:heads[k + 1] if k + 1 < len(heads) else len(body)]
        bus = _Q_GPU.match(body[i]).group(1)[-7:].upper()  # type: ignore[union-attr]
        want = {(s.cause, s.severity) for s in plain(sample) if s.module and s.module.endswith(bus)}
        named = bus if any("Bus Id" in s for s in block) else "GPU (bus id not in the excerpt)"  # else: unnamed
        got = _doctor_on("\n".join(block), tmp_path)
        assert want and want <= {(c, sev) for c, m, sev in got if m and m.endswith(named)}, (bus, got)
        assert len({m for _, m, _ in got}) == 1  # one module, not the block's twice under two names


def test_a_q_block_without_gpu_line_nor_bus_id_is_the_unnamed_module(tmp_path: Path) -> None:
    q = ("    Clocks Event Reasons\n        Idle                              : Not Active\n"
         "        HW Slowdown                       : Active\n    ECC Mode\n"
         "        Current                           : Disabled\n        Pending                           : Disabled\n")
    got = _doctor_on(q, tmp_path)
    assert ("ecc_disabled", "GPU (bus id not in the excerpt)", "warn") in got


@pytest.mark.parametrize("last", [12, 6, 3])
def test_the_last_lines_of_an_nccl_tests_run_keep_its_wrong_values(last: int, tmp_path: Path) -> None:
    """The tail a poster pastes: the rows and summary (12), the last rows without the header (6), the summary
    alone (3, '# Out of bounds values : 2 FAILED'): the wrong values found in each."""
    sample = next(s for s in FAULTY if s.path == "nccl_all_reduce_8gpu_wrong.txt")
    tail = "\n".join(sample_text(sample)[1].rstrip("\n").split("\n")[-last:])
    assert ("data_corruption_in_transfer", None, "critical") in _doctor_on(tail, tmp_path)


def test_a_topo_matrix_without_its_header_still_names_the_degraded_module(tmp_path: Path) -> None:
    """Rows without the header that names the columns: the diagonal X and the rows' order give the columns
    (GPU rows only too: the NIC columns then unnamed)."""
    from tests.jobs.test_doctor_issue46 import _topo_m

    rows = _topo_m({3: 16}).split("\n")
    for fragment in (rows[1:], rows[1:9]):
        got = _doctor_on("\n".join(fragment), tmp_path)
        assert [(c, m) for c, m, _ in got if c == "nvlink_down"] == [("nvlink_down", "gpu3")]


# --- a table's last row cut mid-line (issue 46, batch Q): the row is noted, never judged ----------------------------
_FIGURE = re.compile(r"^[-+]?(\d[\d.,]*|\.\d+)(e[-+]?\d+)?%?[A-Za-z/]{0,4}$|^(N/A|X|-|PASS|FAIL|OK)$", re.I)


def _table_row(line: str) -> bool:
    """A line of four cells or more, two in five of them figures (a benchmark's or a monitor's row)."""
    cells = [c.strip(",;") for c in line.split() if not re.fullmatch(r"[|+=:_-]+", c)]
    return len(cells) >= 4 and sum(bool(_FIGURE.match(c)) for c in cells) * 5 >= len(cells) * 2


def _severe_causes(text: str, where: Path) -> set[tuple[str, str | None]] | None:
    where.write_bytes(text.encode("utf-8"))
    got = _findings(where)
    return None if isinstance(got, str) else {(f.cause, f.module) for f in got if _SEVERITY[f.severity] >= 1}


@pytest.mark.parametrize("sample", [s for s in FAULTY if any(_table_row(x) for x in sample_text(s)[1].split("\n"))],
                         ids=lambda s: s.path)
def test_a_last_table_row_cut_mid_line_gains_no_warning(sample: Sample, fragment_dir: Path) -> None:
    """The file's last table row cut after half its cells, or one more (the paste stopping there): no warning
    or critical the whole file, or the file without that row, does not give."""
    body = sample_text(sample)[1].split("\n")
    i = max(k for k, line in enumerate(body) if _table_row(line))
    cells = list(re.finditer(r"\S+", body[i]))
    where = fragment_dir / f"cut-{Path(sample.path).name}"
    allowed = {(s.cause, s.module) for s in plain(sample)} | (_severe_causes("\n".join(body[:i] + body[i + 1:]), where)
                                                             or set())
    for kept in (len(cells) // 2, len(cells) // 2 + 1):
        cut = body[i][:cells[kept - 1].end()]
        got = _severe_causes("\n".join(body[:i] + [cut]), where)
        assert got is None or got <= allowed, (body[i][:80], cut[-40:])
