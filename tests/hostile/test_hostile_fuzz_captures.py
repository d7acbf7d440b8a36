"""Issue 36, property-based: every capture kind (the corpus in tests/data/captures, real and
synthetic) damaged at random, packed or not, and random text — read as doctor reads them and as
topo/inventory do (CaptureBackend) — gives a result or a GpuvetError (exit 2), never another
exception; and validate --json envelopes damaged at random fold or are refused by both readers
in the same words. A fixed seed and few examples keep each test well under 10 s; the long run
is ``GPUVET_FUZZ_EXAMPLES=2000 GPUVET_FUZZ_RANDOM=1 pytest tests/hostile/test_hostile_fuzz_captures.py``."""

from __future__ import annotations

import gzip
import json
import os
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuvet.backends.capture.backend import CaptureBackend
from gpuvet.captures import read as capture_read
from gpuvet.doctor.captures import read_captures
from gpuvet.errors import GpuvetError
from gpuvet.fleet import fold
from gpuvet.fleet.peers import PeerTable
from tests.support.corpus import corpus_files
from tests.support.fleet_envelopes import envelope, module_checks, outcome

EXAMPLES = int(os.environ.get("GPUVET_FUZZ_EXAMPLES", "10"))  # the suite beside a CPU hog stays within 5 min
RANDOM = os.environ.get("GPUVET_FUZZ_RANDOM") == "1"
CI = settings(max_examples=EXAMPLES, derandomize=not RANDOM, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                     HealthCheck.function_scoped_fixture])

DATA = Path(__file__).parent.parent / "data" / "captures"
CORPUS = corpus_files(DATA)  # a batch's MANIFEST.md is no capture; a blind batch not yet scored is left out
# smi_q, smi_x, topo, xid, nccl, nvb, dcgm, lspci, nvlink, dmesg, …: each kind's first file
def _kind(p: Path) -> str:
    return re.sub(r"\d+$", "", p.name.split("_")[0])


KINDS = sorted({_kind(p) for p in CORPUS} | {"smi_q", "smi_x"})

# what a hostile paste puts in a line, by what it does to a reader: numbers too long or not numbers, markup,
# brackets, separators, control bytes, a tool's own words, typography, a paste's line prefixes, a table's cells
TOKEN_CLASSES: tuple[tuple[str, ...], ...] = (
    ("9" * 5000, "9" * 400, "0x" + "F" * 400, "NaN", "inf", "-1", "1e400"),
    ("<", ">", "</gpu>", "<gpu id=\"x\">"),
    ("{", "}", "[", "]"),
    ("|", "+---", ":", " : "),
    ("\x1b[2J", "\x00", "\r", "\t"),
    ("GPU0", "NV18", "X", "Xid", "NVRM: Xid (PCI:0000:18:00): 79, pid=1", "test_categories", "\"tests\": 5"),
    ("…", "...", "\ufeff", "é"),
    ("# source: x", "```", "0: ", "[1,0]<stdout>: ", "node07: "),
    ("SYS", "PIX", "N/A", "Active"),
)
TOKENS = [token for tokens in TOKEN_CLASSES for token in tokens]
EVERY_TOKEN = "GPUVET_FUZZ_EXAMPLES" in os.environ  # the long run splices every token into every kind


def _readable(path: str) -> None:
    """Read as doctor --from and topo/inventory --from read it: a result, or a GpuvetError."""
    for read in (lambda: read_captures([path]), lambda: CaptureBackend([path])):
        try:
            read()
        except GpuvetError:
            pass


@st.composite
def damaged(draw: st.DrawFn) -> bytes:
    """A corpus file, its lines deleted, repeated, cut or spliced with hostile tokens."""
    lines = draw(st.sampled_from(CORPUS)).read_bytes().split(b"\n")
    for _ in range(draw(st.integers(1, 6))):
        i = draw(st.integers(0, max(0, len(lines) - 1)))
        how = draw(st.sampled_from(["token", "delete", "repeat", "cut", "swap", "bytes"]))
        line = lines[i] if lines else b""
        if how == "token":
            at = draw(st.integers(0, len(line)))
            lines[i:i + 1] = [line[:at] + draw(st.sampled_from(TOKENS)).encode() + line[at:]]
        elif how == "delete" and lines:
            del lines[i]
        elif how == "repeat":
            lines[i:i] = [line] * draw(st.integers(1, 40))
        elif how == "cut":
            lines = lines[:i + 1]
        elif how == "swap" and lines:
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif how == "bytes":
            lines[i:i + 1] = [draw(st.binary(max_size=40))]
    return b"\n".join(lines)


@CI
@given(damaged(), st.booleans())
def test_a_damaged_capture_of_any_kind_is_read_or_refused(tmp_path_factory, data, packed):
    path = tmp_path_factory.mktemp("cap") / ("capture.log.gz" if packed else "capture.txt")
    path.write_bytes(gzip.compress(data) if packed else data)
    _readable(str(path))


@CI
@given(st.lists(st.sampled_from(list("0123456789abcXGPUNV:|+-<>/{}[]\" \n.#") + TOKENS), max_size=200).map("".join))
def test_random_text_is_read_or_refused(text):
    try:
        capture_read.parse_text(text, "random.txt")
    except GpuvetError:
        pass


def tokens_for(index: int) -> list[tuple[int, str]]:
    """(place in TOKENS, token) spliced into the ``index``-th kind: in the suite one of each class, turned
    by the kind's place so each token meets a seventh of the kinds or more (31 of 221 today); a reader meets
    a class's tokens alike (a field too long, a stray bracket), and each token was a parse of the whole file:
    9 parses a kind instead of 43 (~35 s of the suite's CPU). The long run takes every token."""
    if EVERY_TOKEN:
        return list(enumerate(TOKENS))
    return [(TOKENS.index(tokens[(index + c) % len(tokens)]), tokens[(index + c) % len(tokens)])
            for c, tokens in enumerate(TOKEN_CLASSES)]


def test_each_token_is_spliced_into_some_kinds() -> None:
    met = {k for i in range(len(KINDS)) for k, _ in tokens_for(i)}
    assert met == set(range(len(TOKENS))), sorted(set(range(len(TOKENS))) - met)
    assert len(set(TOKENS)) == len(TOKENS)  # TOKENS.index names each token's own place


@pytest.mark.parametrize("kind", KINDS)
def test_every_capture_kind_with_every_hostile_token_is_read_or_refused(tmp_path, kind):
    """Deterministic sweep: each kind's first corpus file, a token of every class (tokens_for) put in every
    7th line."""
    # a kind is the name's first word less its trailing digits ("i915_…" is kind "i"), or smi_q / smi_x
    source = next(p for p in CORPUS if p.name.startswith(kind + "_") or _kind(p) == kind)
    lines = source.read_text(errors="replace").split("\n")
    for k, token in tokens_for(KINDS.index(kind)):
        spliced = [ln + token if (i + k) % 7 == 0 else ln for i, ln in enumerate(lines)]
        path = tmp_path / f"{k}.txt"
        path.write_text("\n".join(spliced), encoding="utf-8")
        _readable(str(path))


# --- envelopes ---------------------------------------------------------------------------------
def _good() -> bytes:
    _, env = envelope(1, module_checks(np.arange(8.0).reshape(2, 4)))
    env["environment"]["modules"] = [{"id": "gpu0"}, {"id": "gpu1"}]
    env["simulated"] = False
    return json.dumps(env).encode()


JSON_TOKENS = [b"NaN", b"Infinity", b"-Infinity", b"1e400", b"1" + b"0" * 400, b"7" * 5000, b"null", b"true",
               b"[]", b"{}", b"\"x\"", b"[\"a\"]", b"-0", b"5e-324", b"18446744073709551616", b"[" * 2000, b"\xff"]


@st.composite
def damaged_envelope(draw: st.DrawFn) -> bytes:
    """A real-shaped envelope with a value spliced in place of another, or bytes cut or flipped."""
    data = _good()
    for _ in range(draw(st.integers(1, 3))):
        how = draw(st.sampled_from(["value", "cut", "flip"]))
        if not data:
            break
        if how == "value" and b":" in data:  # replace one JSON scalar (after a colon) by a hostile one
            colons = [i for i, b in enumerate(data) if b == ord(":")]
            at = draw(st.sampled_from(colons)) + 1
            end = at
            while end < len(data) and data[end] not in b",}]":
                end += 1
            data = data[:at] + b" " + draw(st.sampled_from(JSON_TOKENS)) + data[end:]
        elif how in ("cut", "value"):
            data = data[:draw(st.integers(0, len(data)))]
        else:
            i = draw(st.integers(0, len(data) - 1))
            data = data[:i] + bytes([data[i] ^ draw(st.integers(1, 255))]) + data[i + 1:]
    return data



@CI
@given(damaged_envelope())
def test_a_damaged_envelope_folds_or_is_refused_alike_by_both_readers(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("env") / "node.json"
    path.write_bytes(data)
    ordinary, fast = PeerTable(), PeerTable()
    said = [outcome(fold.fold_file, ordinary, str(path)), outcome(fold.fold_figures, fast, str(path))]
    assert said[0] == said[1]
    if said[0] is None:
        assert ordinary.analyse() == fast.analyse()
        assert all(v == v for c in ordinary.types.values() for v in c.value)  # no NaN pooled


# --- issue 35: the AMD and Ascend readers (amd-smi, rocm-smi, rocm-bandwidth-test, amdgpu lines, npu-smi)
VENDOR = [p for p in CORPUS if p.name.startswith(("amd_", "ascend_"))]
VENDOR_TOKENS = ["GPU: 0", "    ASIC:", "        MARKET_NAME: AMD Instinct MI300X", "        SIZE: 9" + "9" * 40 + " MB",
                 "HOPS TABLE:", "WEIGHT TABLE:", "LINK TYPE TABLE:", "0000:05:00.0", "XGMI", "SELF",
                 "=== Weight between two GPUs ===", "GPU[0]\t\t: PCI Bus: 0000:2F:00.0",
                 "GPU[99999]\t: (Topology) Numa Node: x",
                 '{"card0": {"Card Series": "', '[{"gpu": 0, "vram": {"size": {"value": "x", "unit": "ZB"}}}]',
                 "device,Card series", "card0,", "Device: 2,  AMD Instinct MI210,  GPU-06c9,  05:0.0", "D/D",
                 "amdgpu 0000:28:00.0: ring gfx_0.0.0 timeout", "amdgpu 0000:28:00.0: GPU reset begin!",
                 "[drm:amdgpu_job_timedout [amdgpu]] *ERROR* ring sdma0 timeout", "uncorrectable hardware error",
                 "| 0     Ascend910           | OK            | 178.5       36                0    / 0             |",
                 "| 0     0                   | 0000:9D:00.0  | 0           0    / 0          3416 / 65536         |",
                 "| NPU   Name                | Health        |", "0000:xx:00.0", "rccl-tests: Version develop"]


@CI
@given(st.sampled_from(VENDOR), st.lists(st.sampled_from(VENDOR_TOKENS + TOKENS), min_size=1, max_size=30),
       st.integers(0, 80), st.integers(0, 3))
def test_a_damaged_amd_or_ascend_capture_is_read_or_refused(tmp_path_factory, path, tokens, at, cut):
    lines = path.read_text(encoding="utf-8").split("\n")
    where = at % len(lines)
    lines[where:where + cut] = [" ".join(tokens)]
    target = tmp_path_factory.mktemp("vendor") / path.name
    target.write_text("\n".join(lines), encoding="utf-8")
    _readable(str(target))
