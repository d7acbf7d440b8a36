"""Issue 17, property-based: generated bad values for the CLI flags and damaged spec and rules
files must end in exit 0, 1 or 2 — never a traceback, never a hang. A fixed seed
(``derandomize``) and a modest example count keep it inside the CI budget; the long run with
many more examples is ``benchmarks/fuzz_long.py``."""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
import time
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuvet.cli.app import main
from gpuvet.errors import GpuvetError
from gpuvet.logbook.store import Logbook

EXAMPLES = int(os.environ.get("GPUVET_FUZZ_EXAMPLES", "12"))  # CI; benchmarks/fuzz_long.py runs thousands
CALL_LIMIT_S = 25.0  # a hang, not a speed target: a refusal takes well under a second
RANDOM = os.environ.get("GPUVET_FUZZ_RANDOM") == "1"  # benchmarks/fuzz_long.py: a fresh seed each run
CI = settings(max_examples=EXAMPLES, derandomize=not RANDOM, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

HOSTILE = ["nan", "-nan", "inf", "-inf", "Infinity", "1e400", "-1e400", "1e-9", "0", "-0", "-1", "1.5", "",
           " ", "[/]", "[bold]x[/bold]", "0x10", "9" * 40, "1,,2", ",", ":::", "1:2:0", "700:300:50",
           "0.0001ms", "1e3s", "5w", "-5s", "[::]:9400", "[::1]:0", "127.0.0.1:99999", "a:b:c", "\x00", "é",
           "𝟘", "1_000", "١٢"]
values = st.one_of(st.sampled_from(HOSTILE), st.text(max_size=12), st.floats().map(repr),
                   st.integers(min_value=-10**20, max_value=10**20).map(str))

# (the command up to the flag, the flags a value is generated for, what keeps a good run short)
COMMANDS = [
    (["plan", "memory"], ["--params", "--zero", "--dp", "--tp", "--pp", "--cp", "--layers", "--hidden", "--heads",
                          "--kv-heads", "--ffn", "--vocab", "--seq-len", "--micro-batch", "--experts", "--headroom",
                          "--precision", "--optimizer", "--recompute", "--model"], ["--params", "7B", "--json"]),
    (["plan", "step", "--node", "mesh-4"], ["--tp", "--pp", "--dp", "--mfu", "--zero", "--micro-batches",
                                           "--seq-len", "--layers", "--hidden", "--heads", "--params"], ["--json"]),
    (["plan", "power"], ["--budget", "--loads", "--tdp", "--floor"], ["--budget", "4000", "--loads", "1,1,0.5"]),
    (["plan", "collective", "--node", "mesh-4"], ["--ranks", "--bytes", "--op", "--algorithm"], ["--json"]),
    (["watch", "--sim", "mesh-4", "--no-log", "--json", "--no-admission", "--speedup", "max"],
     ["--interval", "--slow-every", "--horizon", "--retention", "--prometheus", "--speedup"],
     ["--duration", "1s"]),  # --duration itself is not fuzzed: "5w" at max speed is a legitimate long run
    (["bench", "efficiency", "--sim", "mesh-4", "--quick", "--modules", "gpu0", "--json"],
     ["--caps", "--size", "--fraction"], ["--caps", "300,700"]),
    (["events", "--logbook", "{home}/lb.db"], ["--since", "--limit", "--kind", "--module"], []),
]


@pytest.fixture(scope="module")
def home() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as d:
        old = os.environ.get("GPUVET_HOME")
        os.environ["GPUVET_HOME"] = d
        Logbook(Path(d) / "lb.db").close()  # events reads it: the filters are fuzzed, not "no logbook here"
        try:
            yield Path(d)
        finally:
            if old is None:
                os.environ.pop("GPUVET_HOME", None)
            else:
                os.environ["GPUVET_HOME"] = old


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    start = time.monotonic()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    elapsed = time.monotonic() - start
    assert elapsed < CALL_LIMIT_S, f"{argv} took {elapsed:.1f} s"
    return code, out.getvalue(), err.getvalue()


def assert_clean(argv: list[str], code: int, err: str) -> None:
    assert code in (0, 1, 2), (argv, code, err)
    assert "Traceback" not in err, (argv, err)
    if code == 2:
        assert err.strip(), (argv, "exit 2 without a message")
        assert "no logbook here" not in err, (argv, "the fixture's logbook is missing: nothing was fuzzed")


@pytest.mark.parametrize(("prefix", "flags", "defaults"), COMMANDS, ids=[" ".join(c[0][:2]) for c in COMMANDS])
def test_generated_flag_values_end_in_a_clear_exit(home, prefix, flags, defaults):
    @CI
    @given(flag=st.sampled_from(flags), value=values)
    def check(flag: str, value: str) -> None:
        base = [a.format(home=home) for a in prefix + defaults]
        if flag in base:  # the generated value replaces the default one
            i = base.index(flag)
            base = base[:i] + base[i + 2:]
        argv = base + [flag, value]
        code, _, err = run_cli(argv)
        assert_clean(argv, code, err)

    check()


def _preset(name: str) -> str:
    return resources.files("gpuvet.node").joinpath("presets", f"{name}.yaml").read_text(encoding="utf-8")


YAML_JUNK = ["&a x", "*a", "*zz", "{", "[", "- ", ":", "!!python/object:os.system", "<<: *a", "? "]


@st.composite
def damaged_yaml(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from([_preset(n) for n in ("mesh-4", "hgx-h200-8", "pcie-8", "grouped-16", "nvl72")]))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        action = draw(st.sampled_from(["cut", "insert", "hostile"]))
        if action == "cut":
            text = text[:at] + text[at + draw(st.integers(1, 40)):]
        elif action == "insert":
            text = text[:at] + draw(st.text(max_size=8)) + text[at:]
        else:
            text = text[:at] + draw(st.sampled_from(HOSTILE + YAML_JUNK)) + text[at:]
    return text


def test_damaged_specs_are_refused_cleanly(home):
    @CI
    @given(text=damaged_yaml())
    def check(text: str) -> None:
        path = home / "damaged.yaml"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        argv = ["spec", "check", str(path)]
        code, _, err = run_cli(argv)
        assert_clean(argv, code, err)

    check()


json_like = st.recursive(
    st.one_of(st.none(), st.booleans(), st.floats(), st.integers(), st.text(max_size=8)),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=20)
spec_keys = ["name", "base", "modules", "host", "pcie", "fabric", "endpoints", "links", "faults"]


def test_generated_spec_structures_are_refused_or_loaded(home):
    import yaml

    from gpuvet.node.build import build_node
    from gpuvet.node.spec import parse_spec

    @CI
    @given(data=st.dictionaries(st.sampled_from(spec_keys), json_like, max_size=6))
    def check(data: dict) -> None:
        text = yaml.safe_dump(data)
        try:
            spec = parse_spec(yaml.safe_load(text) or {}, "generated")
            build_node(spec, "generated")
        except GpuvetError:
            pass

    check()


def test_damaged_rules_files_are_refused_cleanly(home):
    rules = resources.files("gpuvet.validate").joinpath("rules", "default.yaml").read_text(encoding="utf-8")

    from gpuvet.validate.rules import load_rules

    @CI
    @given(at=st.integers(0, len(rules)), junk=st.one_of(st.sampled_from(HOSTILE), st.binary(max_size=16)))
    def check(at: int, junk: str | bytes) -> None:
        path = home / "rules.yaml"
        raw = rules.encode()
        path.write_bytes(raw[:at] + (junk if isinstance(junk, bytes) else junk.encode("utf-8", "surrogatepass"))
                         + raw[at:])
        try:
            load_rules(path)
        except GpuvetError:
            pass

    check()
