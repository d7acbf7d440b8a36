"""Issue 46: a capture is read the same however it was pasted. A metamorphic test: a fixed subset of the
corpus (every tool family, files on which doctor finds a cause or inventory lists modules), each file
decorated as real pastes decorate output (tests/support/decorate.py says where each shows), and doctor's
findings (cause, module, severity) and inventory's modules must be those of the plain file.

Doctor and inventory run in this process through the functions `doctor --from` and `inventory --from`
call (cli.doctor._diagnose, cli.app._backend), without the CLI's argument parsing and JSON, so ~1,000
cases stay within a few seconds. test_capture_decorations.py checks the parse of the whole corpus under
launcher prefixes; this one checks the answers, under the decorations forums and terminals add.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path
from unittest import mock

import pytest

from gpuvet.cli.app import _backend
from gpuvet.cli.doctor import _diagnose
from gpuvet.errors import GpuvetError
from tests.support import decorate as d

CAPTURES = Path(__file__).parent.parent / "data" / "captures"
_HEADER = re.compile(r"#\s*(source|shows|conclusion|expect|note|tuned)\b", re.I)


@dataclass(frozen=True)
class Sample:
    path: str  # under tests/data/captures
    command: str  # what the poster typed (the prompt transforms show it)
    kind: str = "text"  # "kernel": dmesg lines with their stamps; "json", "xml": one document


SAMPLES = (
    # NVIDIA's tools
    Sample("smi_q_h100_2gpu.txt", "nvidia-smi -q"),
    Sample("real/smi_q_gpud80_remapped_pending.txt", "nvidia-smi -q"),
    Sample("fresh_e/smiq_dcgmexp319_a10g_unknown_error.txt", "nvidia-smi -q"),
    Sample("real/smi_q_gpustat135_clocks.txt", "nvidia-smi -q -d CLOCK"),
    Sample("smi_q_x_h100_8gpu.xml", "nvidia-smi -q -x", "xml"),
    Sample("real/smi_x_netdata2922_fragment.xml", "nvidia-smi -q -x", "xml"),
    Sample("topo_nvswitch_8gpu.txt", "nvidia-smi topo -m"),
    Sample("topo_2gpu_consumer.txt", "nvidia-smi topo -m"),
    Sample("dev_g_nvidia/topo_dcgmexp316_8gpu_nv12_pairs_pxb.txt", "nvidia-smi topo -m"),
    Sample("real/topo_club3090_1229_2x5090.txt", "nvidia-smi topo -m"),
    Sample("fresh_e/smi_dcgmexp313_a10g_gpu0_err.txt", "nvidia-smi"),
    Sample("fresh_c/smi_azhpcdiag77_v100_power_err.txt", "nvidia-smi"),
    Sample("fresh_g/smi_wsl9134_windows_2x_geforce_indented_table.txt", "nvidia-smi"),
    Sample("dev_g_nvidia/smi_xxd3vin19_unknown_error_device_handle_2015.txt", "nvidia-smi"),
    Sample("fresh_d/smi_ogkm387_rtx2080ti_unable_device_handle.txt", "nvidia-smi"),
    Sample("fresh_e/smicsv_smc57_rtx2060_query.txt", "nvidia-smi --query-gpu=name,pcie.link.gen.current --format=csv"),
    Sample("fresh_g/smiL_gpuhot64_4x3090_prompt.txt", "nvidia-smi -L"),
    Sample("fresh_c/nvlink_gpud1085_b200_all_inactive.txt", "nvidia-smi nvlink -s"),
    Sample("nccl_all_reduce_small_sizes.txt", "./build/all_reduce_perf -b 8 -e 128M -f 8 -g 8"),
    Sample("nccl_all_reduce_8gpu_wrong.txt", "./build/all_reduce_perf -b 8 -e 8G -f 2 -g 8"),
    Sample("real/nccl_tests289_5090_invalid_argument.txt", "./build/hypercube_perf -g 8"),
    Sample("fresh/nccl_nvls_nccl1788_h100_cuda401.txt", "NCCL_DEBUG=INFO python train.py"),
    Sample("dev_g_nvidia/nccl_nccltests24_ib_error12_illegal_access.txt", "mpirun -np 16 ./all_reduce_perf"),
    Sample("fresh_e/nccl_raylightning24_pid_prefix_ipc_peer_access.txt", "python train.py"),
    Sample("nvbandwidth_d2d_p2p_off.txt", "./nvbandwidth"),
    Sample("fresh_e/p2p_nccl814_p2p_enabled_slower_6gpu.txt", "./p2pBandwidthLatencyTest"),
    Sample("fresh_e/dcgmi_dcgm49_pcie_fail_nvlink_down_no_nvlink_a100.txt", "dcgmi diag -r 2"),
    Sample("fresh_f/dcgm_nvsentinel772_jq_diag_summary_failed.txt", "dcgmi diag -r 1 -j | jq .", "json"),
    Sample("dev_g_nvidia/gpuburn_gpuburn14_1080ti_cublas_not_initialized.txt", "./gpu_burn 60"),
    Sample("fresh_c/fabricmgr_gpuop356_geforce_fm_fail.txt", "systemctl status nvidia-fabricmanager"),
    Sample("real/lspci_jan183_4090_riser_gen1.txt", "sudo lspci -vvv"),
    Sample("fresh_e/devq_cudasamples13_getdevicecount_999.txt", "./deviceQuery"),
    Sample("fresh_e/bwtest_helixer22_rtx2080ti_htod.txt", "./bandwidthTest"),
    # the kernel's
    Sample("dmesg_xid.txt", "sudo dmesg -T | grep NVRM", "kernel"),
    Sample("fresh/kern_ogkm587_h100_snp_guest_probe_failed.txt", "sudo dmesg", "kernel"),
    Sample("fresh_e/kernel_gpuburn1_aer_surprise_down_xid79.txt", "sudo dmesg", "kernel"),
    Sample("fresh_f/amd_kern_rocm6127_gfx1201_comp_ring_pagefault.txt", "sudo dmesg", "kernel"),
    Sample("real/amd_kern_rocm1386_mi50_athub.txt", "sudo dmesg", "kernel"),
    Sample("fresh_g/aer_redhat7128107_switch_port_sdes_fatal.txt", "journalctl -k"),
    # AMD's, Huawei's, the NICs'
    Sample("fresh_g/rocmsmi_rocsmi73_vega10_unable_memuse.txt", "rocm-smi -a"),
    Sample("fresh_f/rocmsmi_rocsmi55_radeonvii_default_table.txt", "rocm-smi"),
    Sample("real/amd_rocmsmi_marimo9237_json.txt", "rocm-smi --showuse --json", "json"),
    Sample("fresh_g/rocmsmi_vllm32017_8x_mi300x_weight_hops_topo.txt", "rocm-smi --showtopo"),
    Sample("fresh_e/amdsmi_amdexporter18_metric_na.txt", "amd-smi metric"),
    Sample("real/amd_rocmsystems5763_mi250x_hops.txt", "amd-smi topology"),
    Sample("fresh_e/rocmbw_rocmbuild559_validation_fail_riser.txt", "rocm-bandwidth-test -v"),
    Sample("real/amd_tb_mhilgema_mi350x_cfg_error.txt", "TransferBench config.cfg"),
    Sample("fresh_e/npusmi_1panel9472_910b4_ok.txt", "npu-smi info"),
    Sample("fresh_f/hccl_llamafactory5071_ei0006_910b3.txt", "llamafactory-cli train"),
    Sample("real/ascend_arthurchiao_910b_topo.txt", "npu-smi info -t topo"),
    Sample("fresh/ibvdevinfo_deepep60_port_down.txt", "ibv_devinfo"),
    Sample("fresh_f/ibstat_lshca79_cx6dx_eth_rate_2_5.txt", "lshca"),
)

Transform = Callable[[str, str], str]  # (the tool's text, the command typed) -> the text as pasted
TRANSFORMS: dict[str, Transform] = {
    "quoted '> '": lambda t, c: d.quoted(t),
    "indented 4 spaces": lambda t, c: d.indented(t),
    "fence, prose around": lambda t, c: d.fenced(t),
    "fence ```shell, prose around": lambda t, c: d.fenced(t, "shell"),
    "fence glued to the first and last lines": lambda t, c: d.fence_glued(t),
    "fence behind '> '": lambda t, c: d.quoted_fence(t),
    "fence in a list item": lambda t, c: d.listed_fence(t),
    "each line in `inline code`": lambda t, c: d.inline_code(t),
    "each line in **bold**": lambda t, c: d.bold_lines(t),
    "CRLF": lambda t, c: d.crlf(t),
    "trailing spaces": lambda t, c: d.trailing_spaces(t),
    "no-break spaces": lambda t, c: d.no_break_spaces(t),
    "curly quotes and ellipsis": lambda t, c: d.typeset(t),
    "tabs expanded": lambda t, c: d.tabs_expanded(t),
    **{f"prompt {style}": partial(d.prompted, style=style) for style in d.PROMPTS},
    **{f"prompts around, {style}": partial(d.prompt_after, style=style) for style in ("bash $", "root@host #")},
    "journald": lambda t, c: d.journald(t),
    "dmesg -T": lambda t, c: d.dmesg_t(t),
    "pdsh node01:": lambda t, c: d.pdsh(t),
    "kubectl --timestamps": lambda t, c: d.kubectl_timestamps(t),
    "srun -l": lambda t, c: d.srun_label(t),
    # nested as pastes nest them: a fence typed on launcher-prefixed lines, a prose line that looks like a host
    "fence glued over srun -l": lambda t, c: d.fence_glued(d.srun_label(t)),
    "fence glued over pdsh": lambda t, c: d.fence_glued(d.pdsh(t)),
    "'Output:' over pdsh": lambda t, c: "Output:\n" + d.pdsh(t),
    "<details>": lambda t, c: d.details(t),
    "**bold** prose": lambda t, c: d.bold_prose(t),
    **{f"cut {mark}": partial(lambda t, c, mark: d.cut(t, mark), mark=mark) for mark in d.CUT_MARKS},
    # round 2: list items, a word processor's dashes, tabs put back, more cut marks ('* ' items and the em dash
    # are read by the same code as '- ' and the en dash: their own tests below, not 104 more cases here)
    "each line a list item '- '": lambda t, c: d.bulleted(t),
    "en dash for --": lambda t, c: d.dashed(t),
    "leading spaces retabbed": lambda t, c: d.retabbed(t),
    **{f"cut {mark}": partial(lambda t, c, mark: d.cut(t, mark), mark=mark) for mark in d.CUT_MARKS_MORE},
    # round 3: long lines cut at a fixed width, mid-token (fold -w 80; a mail client at 72): decorations.unwrap
    **{f"wrapped at {w}": partial(lambda t, c, w: d.wrapped(t, w), w=w) for w in d.WRAP_WIDTHS},
}
LONG = 12  # lines: a cut between two halves needs a block long enough to have halves


def out_of_scope(sample: Sample, transform: str, body: str) -> str | None:
    """Why a transform does not apply to a sample (None: it does). Said, never skipped silently."""
    if transform == "dmesg -T" and sample.kind != "kernel":
        return "dmesg -T stamps the kernel's ring buffer only: no tool's output reaches it"
    if transform == "journald" and sample.kind in ("json", "xml"):
        return "a document is printed to a terminal or a file, not logged line by line to the journal"
    if transform.startswith("cut ") and sample.kind in ("json", "xml"):
        return "a cut inside one document makes another document (unbalanced): what is read of it may change"
    if transform.startswith("cut ") and len(body.split("\n")) < LONG:
        return f"fewer than {LONG} lines: no long block to cut in two"
    if transform.startswith("wrapped at ") and max(map(len, body.split("\n"))) <= int(transform.split()[-1]):
        return "no line longer than the width: nothing to wrap"
    return None


def _split(text: str) -> tuple[list[str], str]:
    """The corpus header (`# source:` …, no part of a paste) and the tool's text after it."""
    lines = text.split("\n")
    head = 0
    while head < min(len(lines), 10) and _HEADER.match(lines[head]):
        head += 1
    return lines[:head], "\n".join(lines[head:])


@cache
def sample_text(sample: Sample) -> tuple[tuple[str, ...], str]:
    head, body = _split((CAPTURES / sample.path).read_text(encoding="utf-8", errors="replace"))
    return tuple(head), body


def read_back(path: Path) -> tuple[object, object]:
    """doctor's findings (cause, module or NIC, between, severity) and inventory's modules, as
    `doctor --from` and `inventory --from` compute them; a refusal as ('refused', what)."""
    try:
        with mock.patch("gpuvet.cli.doctor.heartbeat", _quiet):  # a thread per case, for a terminal no one sees
            result, _ = _diagnose(None, None, None, [str(path)], None, False)
        findings: object = sorted((f.cause, f.module or str(f.evidence.get("nic")), f.between, f.severity)
                                  for f in result.findings)
    except GpuvetError as exc:
        findings = ("refused", exc.message)
    try:
        backend = _backend(None, [str(path)])
        try:
            modules: object = [dataclasses.asdict(m) for m in backend.inventory().modules]
        finally:
            backend.close()
    except GpuvetError as exc:
        modules = ("refused", exc.message)
    return findings, modules


@contextlib.contextmanager
def _quiet(what: str) -> Iterator[None]:
    yield


@cache
def plain(sample: Sample) -> tuple[object, object]:
    return read_back(CAPTURES / sample.path)


CASES = [(s, t) for s in SAMPLES for t in TRANSFORMS]
_MIXED = ("a -q excerpt indented by 4 spaces at its first level and one tab at its second: an editor's tab is told "
          "from a tool's only by a line led by a tab then spaces (a pass over every line of every text otherwise)")
_ONE_LINE = ("one line wrapped alone: a single line exactly as wide as the width could be the tool's own, and the "
             "line after it a record (an '[exit 2]' after an 80-column 'ls:' error is one): not rejoined")
_LIKE_RECORDS = ("the tail is shaped like the records around it (a header's 'GPU5  GPU6' beside rows led by 'GPU0'; "
                 "'GPU 0000:0B:00.0: Unknown Error.' beside nvidia-smi -L's 'GPU 3: …'): it could be one, not rejoined")
XFAIL: dict[tuple[str, str], str] = {  # (sample path, transform) -> the class of decoration left unread
    ("real/smi_q_gpud80_remapped_pending.txt", "leading spaces retabbed"): _MIXED,
    ("real/smi_q_gpustat135_clocks.txt", "leading spaces retabbed"): _MIXED,
    ("fresh_f/dcgm_nvsentinel772_jq_diag_summary_failed.txt", "wrapped at 80"): _ONE_LINE,
    ("dev_g_nvidia/topo_dcgmexp316_8gpu_nv12_pairs_pxb.txt", "wrapped at 72"): _ONE_LINE,
    ("fresh/nccl_nvls_nccl1788_h100_cuda401.txt", "wrapped at 72"): _ONE_LINE,
    ("fresh_d/smi_ogkm387_rtx2080ti_unable_device_handle.txt", "wrapped at 80"): _LIKE_RECORDS,
    ("fresh_g/rocmsmi_vllm32017_8x_mi300x_weight_hops_topo.txt", "wrapped at 72"): _LIKE_RECORDS,
    ("fresh_f/rocmsmi_rocsmi55_radeonvii_default_table.txt", "wrapped at 80"): (
        "rocm-smi's header wrapped inside a word ('PwrCap   SC' / 'LK OD   MCLK OD  GPU%') and its banner rules are "
        "not rejoined: the wrapped paste's table is not read (its 250 W PwrCap, read from the plain one since "
        "dec1f0d, is missing; before that both answers were equally empty)"),
}


@pytest.fixture(scope="module")
def pasted_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder for every case (a folder per case cost as much as reading it)."""
    return tmp_path_factory.mktemp("pasted")


def decorated_answer(sample: Sample, transform: str, pasted_dir: Path) -> object:
    """read_back of the sample as the transform pastes it; None where the pair is out of scope (listed by
    test_every_out_of_scope_pair_says_why) or the transform leaves the text as it was (no tab, no '--', no
    line to wrap: the plain file itself)."""
    head, body = sample_text(sample)
    if out_of_scope(sample, transform, body):
        return None
    decorated = TRANSFORMS[transform](body, sample.command)
    if decorated == body:
        return None
    where = pasted_dir / Path(sample.path).name
    where.write_bytes("\n".join([*head, decorated]).encode("utf-8"))
    return read_back(where)


# Spellings of one decoration, each read by one piece of code and each with a test of its own (the cut marks:
# test_a_posters_cut_mark_is_a_cut_in_any_common_spelling and its round 2; a prompt: the line before the tool's
# text): the sweep gives each sample two of the 11 cut marks and one of the 4 prompts, turned by the sample's
# place, so every sample still meets every class and every spelling several samples (12 pairs fewer a sample,
# a quarter of the sweep's CPU; the cross product proved each spelling again on every tool's text).
SPELLINGS: tuple[tuple[tuple[str, ...], int], ...] = (
    (tuple(f"cut {mark}" for mark in (*d.CUT_MARKS, *d.CUT_MARKS_MORE)), 2),
    (tuple(f"prompt {style}" for style in d.PROMPTS), 1),
)


def swept(index: int) -> list[str]:
    """The transforms the ``index``-th sample is pasted with: every one but the spellings given to others."""
    left = set()
    for spellings, kept in SPELLINGS:
        mine = {spellings[(index * kept + k) % len(spellings)] for k in range(kept)}
        left |= set(spellings) - mine
    return [t for t in TRANSFORMS if t not in left]


def test_every_spelling_is_pasted_on_samples_it_applies_to() -> None:
    met = {t for i, s in enumerate(SAMPLES) for t in swept(i) if not out_of_scope(s, t, sample_text(s)[1])}
    assert {t for spellings, _ in SPELLINGS for t in spellings} <= met, "a cut mark or prompt met no sample"
    assert all(set(TRANSFORMS) - {t for ss, _ in SPELLINGS for t in ss} <= set(swept(i)) for i in range(len(SAMPLES)))


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: s.path)
def test_a_decorated_capture_gets_the_plain_ones_answer(sample: Sample, pasted_dir: Path) -> None:
    """Every transform of the sample (swept) but its known misses (XFAIL: each a strict xfail of its own below).
    One test per sample, not per pair: a test's own cost (~2 ms of pytest and xdist) was a third of a pair's."""
    differ = {}
    for transform in swept(SAMPLES.index(sample)):
        if (sample.path, transform) not in XFAIL:
            got = decorated_answer(sample, transform, pasted_dir)
            if got is not None and got != plain(sample):
                differ[transform] = got
    assert not differ, f"plain: {plain(sample)!r}\n" + "\n".join(f"{t}: {a!r}"[:2000] for t, a in differ.items())


@pytest.mark.parametrize(("sample", "transform"), [
    pytest.param(next(s for s in SAMPLES if s.path == path), transform, id=f"{transform}-{path}",
                 marks=pytest.mark.xfail(reason=why, strict=True)) for (path, transform), why in XFAIL.items()])
def test_a_known_miss_still_misses(sample: Sample, transform: str, pasted_dir: Path) -> None:
    """A decoration class left unread (XFAIL): the decorated answer differs from the plain one until it is read
    (a pair out of scope passes here, so its strict xfail fails: a listed miss must be a case)."""
    got = decorated_answer(sample, transform, pasted_dir)
    if got is not None:
        assert got == plain(sample)


def test_every_sample_has_something_to_keep() -> None:
    """A sample on which doctor finds nothing and inventory lists no module would compare nothing."""
    empty = [s.path for s in SAMPLES if plain(s) == ([], [])]
    refused = [s.path for s in SAMPLES if any(isinstance(r, tuple) for r in plain(s))]
    assert empty == [] and refused == []


def test_every_out_of_scope_pair_says_why() -> None:
    """The pairs left out, each with its reason; most pairs are in scope."""
    left = {}
    for s, t in CASES:
        why = out_of_scope(s, t, sample_text(s)[1])
        if why:
            left[(s.path, t)] = why
    assert all(left.values()) and len(left) < len(CASES) / 4
    assert len(SAMPLES) >= 40 and len({s.path.split("/")[0] for s in SAMPLES}) >= 8


# --- the classes the sweep found, each in its tool's own format ---------------------------------------------
def test_a_fence_typed_on_the_first_and_last_log_lines_leaves_both_lines_read() -> None:
    from gpuvet.captures.text import clean

    text = ("dmesg says:\n```[    9.29] amdgpu 0000:83:00.0: amdgpu: Fatal error during GPU init\n"
            "[    9.30] amdgpu: probe of 0000:83:00.0 failed with error -12```\nany idea?")
    cleaned = clean(text)
    assert [ln.text for ln in cleaned.lines][1:3] == ["[    9.29] amdgpu 0000:83:00.0: amdgpu: Fatal error during GPU init",
                                                  "[    9.30] amdgpu: probe of 0000:83:00.0 failed with error -12"]
    assert any("code fence typed on them" in n for n in cleaned.notes)
    assert [ln.text for ln in clean("```shell\n$ ls\n```").lines] == ["$ ls"]  # a language tag is no glued line


def test_a_root_prompt_before_rocm_smi_json_is_not_its_start() -> None:
    from gpuvet.captures.read import parse_text

    text = '[root@gpu01 ~]# rocm-smi --showuse --json\n{"card0": {"GPU use (%)": "0", "Card Series": "Radeon RX 7900 XT"}}'
    assert [m.name for m in parse_text(text, "rocm.json").amd.modules] == ["Radeon RX 7900 XT"]


def test_a_cut_between_the_rows_of_a_rocm_smi_matrix_keeps_the_rows_after_it() -> None:
    from gpuvet.captures.read import parse_text

    rows = [f"GPU{i}   " + "   ".join("0" if j == i else "15" for j in range(4)) for i in range(4)]
    text = "\n".join(["       GPU0   GPU1   GPU2   GPU3", *rows[:2], "[...]", *rows[2:], "",
                      "===== Hops between two GPUs =====", "       GPU0   GPU1   GPU2   GPU3",
                      *(r.replace("15", "1") for r in rows)])
    fabric = parse_text(text, "topo.txt").amd.fabric
    assert fabric is not None and len(fabric.weight) == 6 and len(fabric.hops) == 6


@pytest.mark.parametrize("mark", ["...", "…", "[...]", "(snip)", "<snip>", "--- snip ---", "<!-- snip -->", "// ...",
                                  "# ...",
                                  "...skipping...", "... (output truncated) ...", "[... 120 lines omitted ...]", "<...>"])
def test_a_posters_cut_mark_is_a_cut_in_any_common_spelling(mark: str) -> None:
    from gpuvet.captures.text import clean

    lines = clean(f"GPU0  X\n{mark}\nGPU3  NV4").lines
    assert [ln.elision for ln in lines] == [False, True, False]


def test_dots_around_a_tools_title_are_no_cut() -> None:
    from gpuvet.captures.text import clean

    title = "." * 20 + "    ROCm System Management Interface    " + "." * 20
    assert [ln.elision for ln in clean(f"{title}\n... done\nLoading ... ok").lines] == [False, False, False]


def test_a_matrix_row_cut_mid_cell_before_a_posters_cut_mark_is_read_as_cut() -> None:
    """A cut mark after the last row says the excerpt stops there: the row's half cell is left out, as at
    the file's end, not refused."""
    from gpuvet.captures.read import parse_text

    text = "\tGPU0\tGPU1\tGPU2\nGPU0\t X \tNV4\tNV4\nGPU1\tNV4\t X \tNV4\nGPU2\tNV4\tN"
    for after in ("", "\n...", "\n[...]\n", "\n# [cut: the excerpt ends here, mid-row]"):
        topo = parse_text(text + after, "topo.txt").topo
        assert topo is not None and topo.devices == ["GPU0", "GPU1", "GPU2"]


@pytest.mark.parametrize("mark", ["(truncated)", "[truncated]", "[output truncated]", "-- 8< --", "--8<--", "\u2702",
                                  "-- \u2702 --", ". . .", ". . . ."])
def test_a_posters_cut_mark_in_round_2_spellings_is_a_cut(mark: str) -> None:
    from gpuvet.captures.text import clean

    lines = clean(f"GPU0  X\n{mark}\nGPU3  NV4\nTruncated: no\n8 16").lines
    assert [ln.elision for ln in lines] == [False, True, False, False, False]


def test_a_topo_matrix_cut_with_scissors_keeps_the_rows_after_it() -> None:
    from gpuvet.captures.read import parse_text

    rows = ["GPU0\t X \tNV4\tNV4\tNV4", "GPU1\tNV4\t X \tNV4\tNV4", "GPU2\tNV4\tNV4\t X \tNV4", "GPU3\tNV4\tNV4\tNV4\t X "]
    for mark in ("-- 8< --", "[truncated]", ". . ."):
        topo = parse_text("\n".join(["\tGPU0\tGPU1\tGPU2\tGPU3", *rows[:2], mark, *rows[2:]]), "topo.txt").topo
        assert topo is not None and topo.devices == ["GPU0", "GPU1", "GPU2", "GPU3"]


def test_a_smi_q_set_as_a_markdown_list_is_read_as_the_list() -> None:
    from gpuvet.captures.read import parse_text

    q = ("==============NVSMI LOG==============\n\nDriver Version                            : 550.54.15\n"
         "Attached GPUs                             : 1\nGPU 00000000:18:00.0\n"
         "    Product Name                          : NVIDIA H100 80GB HBM3\n"
         "    Persistence Mode                      : Enabled\n")
    for mark in ("-", "*"):
        listed = "\n".join(f"{mark} {s}" if s else s for s in q.split("\n"))
        assert [m.product for m in parse_text(listed, "q.txt").smi.modules] == ["NVIDIA H100 80GB HBM3"]
    assert [ln.text for ln in clean_lines("- a\nb\n- c")] == ["- a", "b", "- c"]  # one line no item: no list


def clean_lines(text: str) -> list[object]:
    from gpuvet.captures.text import clean

    return list(clean(text).lines)


def test_a_word_processors_dash_for_double_dash_is_read_as_it() -> None:
    from gpuvet.captures.text import clean

    cleaned = clean("Error: \u2013 \u2013 Failed\n\u2013\u2013\u2013 snip \u2013\u2013\u2013\nGPU0\u2014\u2014\u2014+")
    assert [ln.text for ln in cleaned.lines] == ["Error: -- -- Failed", "------ snip ------", "GPU0------+"]
    assert cleaned.lines[1].elision and any("en or em dash" in n for n in cleaned.notes)


def test_an_smi_q_retabbed_by_an_editor_keeps_its_levels() -> None:
    from gpuvet.captures.text import clean

    text = "GPU 00000000:18:00.0\n    ECC Errors\n\tVolatile\n\t    SRAM Correctable : 0\n\tAggregate\nGPU0\tX\tNV4"
    assert [ln.text for ln in clean(text).lines][2:] == ["        Volatile", "            SRAM Correctable : 0",
                                                       "        Aggregate", "GPU0\tX\tNV4"]


# --- round 3: a paste wrapped at a fixed width (decorations.unwrap) ------------------------------------------
_KERNEL = [
    "[ 8123.441907] NVRM: Xid (PCI:0000:41:00): 79, pid=2291, name=python3, GPU has fallen off the bus.",
    "[ 8123.441920] NVRM: GPU 0000:41:00.0: GPU has fallen off the bus.",
    "[ 8123.442311] NVRM: GPU 0000:41:00.0: RmInitAdapter failed! (0x26:0xffff:1601) while resuming",
    "[ 8123.442340] pcieport 0000:40:01.1: AER: Uncorrected (Fatal) error message received from 0000:41:00.0",
    "[ 8123.442355] nvidia 0000:41:00.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer",
]


def test_a_kernel_log_folded_at_80_reads_as_printed() -> None:
    from gpuvet.captures.text import clean

    plain = "\n".join(_KERNEL)
    for width in (80, 72):
        cleaned = clean(d.wrapped(plain, width))
        assert [ln.text for ln in cleaned.lines] == _KERNEL
        assert any(f"wrapped at {width} columns" in n for n in cleaned.notes), cleaned.notes
    assert [ln.no for ln in clean(d.wrapped(plain, 80)).lines] == [1, 3, 4, 6, 8]  # each line keeps its first number


_LS = "ls: cannot access '/dev/nvidia-caps-imex-channels/x/': No such file or directory"  # 80 wide


def test_real_lines_exactly_80_wide_stay_apart() -> None:
    from gpuvet.captures.text import clean

    def wide(line: str) -> str:
        return (line + " " + "x" * 80)[:80]

    kernel = [wide(s) for s in _KERNEL] + ["[ 8123.443001] NVRM: GPU at PCI:0000:41:00: GPU-5a1b"]  # 5 of 80
    table = ["+" + "-" * 78 + "+", "| NVIDIA-SMI 470.82.01" + " " * 57 + "|", "+" + "-" * 78 + "+",
             "|   0  Tesla V100-SXM2" + " " * 57 + "|", "| N/A   35C    P0    42W / 300W" + " " * 48 + "|"]
    header = "#       size         count      type   redop    root     time   algbw   busbw #wrong"
    rows = [header[:80], "           8             2     float     sum      -1    27.90    0.00    0.00      0",
            "          16             4     float     sum      -1    28.01    0.00    0.00      0"]
    wrapped_at_word = ["NVRM: GPU 0000:41:00.0: RmInitAdapter failed! (0x26:0xffff:1601) while", "resuming the module"]
    perftest = ["\t#bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]",
                "\t1024       1000             0.00               5544.28\t\t   5.677340", ""] * 2  # tab-indented
    nvlink = ["            GPU 0: NVIDIA GB200 (UUID: GPU-d1b93026-6d5b-03bd-3a71-f85b47a61bde)",  # nvidia-smi nvlink -s
              " " * 21 + "NVLE: disabled", " " * 17 + "Link 0: 50 GB/s", " " * 17 + "Link 1: 50 GB/s"] * 2
    for lines in (kernel, table, [r[:80] for r in rows], wrapped_at_word * 2, [_LS, "[exit 2]"], perftest, nvlink):
        assert all(len(s) <= 80 for s in lines) and (any(len(s) == 80 for s in lines) or lines[0] in wrapped_at_word)
        cleaned = clean("\n".join(lines))
        assert [ln.text.strip() for ln in cleaned.lines] == [s.strip() for s in lines]  # (a block's indent peeled)
        assert not any("wrapped at" in n for n in cleaned.notes)
