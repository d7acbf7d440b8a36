"""Issue 42 review findings 7, 8, 15, 17 and 18: one fact, one threshold and one verdict (a copy far
below its design; P2P off), the power limit's clear text, the deprecated validate.checks name, and
the two face functions back under 60 lines."""

from __future__ import annotations

import ast
import importlib
import sys
import warnings
from pathlib import Path

import pytest

from gpuvet import knowledge
from gpuvet.checks.roots import Seen, group
from gpuvet.doctor import checks as doctor_checks
from gpuvet.doctor import transfer_checks
from gpuvet.doctor.evidence import Evidence
from gpuvet.errors import GpuvetError
from tests.support.helpers import call

ROOT = Path(__file__).resolve().parents[2]


def _evidence(backend) -> Evidence:  # the pairs and the inventory only: no telemetry window
    return Evidence(backend, backend.declared, env={}, watch=False)


# --- 7: one threshold for a copy far below its design, read by validate and both doctor paths ---

def test_validate_and_both_doctor_paths_read_one_knowledge_threshold() -> None:
    from gpuvet.doctor.capture_pairs import DESIGN_LOW
    from gpuvet.validate.rules import default_rules

    bound = knowledge.threshold("pair_far_below_pct")
    fails = {r.check: r.threshold for r in default_rules().rules if r.verdict == "fail" and r.field == "pct_of_expected"}
    assert fails["p2p_*"] == fails["h2d*"] == fails["d2h*"] == bound == 100 * DESIGN_LOW == 75
    assert "validate" in knowledge.thresholds()["pair_far_below_pct"].meaning  # it says why 75
    text = (ROOT / "src/gpuvet/validate/rules/default.yaml").read_text()
    assert text.count("threshold: {knowledge: pair_far_below_pct}") == 3  # read, not copied


def test_a_rules_file_may_name_a_knowledge_threshold_and_a_wrong_name_is_refused(tmp_path) -> None:
    from gpuvet.validate.rules import load_rules

    good = tmp_path / "r.yaml"
    good.write_text("rules:\n  - {check: 'p2p_*', field: pct_of_expected, op: lt, "
                    "threshold: {knowledge: pair_far_below_pct}, verdict: fail}\n")
    assert load_rules(good).rules[0].threshold == knowledge.threshold("pair_far_below_pct")
    bad = tmp_path / "bad.yaml"
    bad.write_text("rules:\n  - {check: 'p2p_*', field: pct_of_expected, op: lt, threshold: {knowledge: nope}, "
                   "verdict: fail}\n")
    with pytest.raises(GpuvetError, match="pair_far_below_pct"):
        load_rules(bad)


def test_a_live_pair_at_68_percent_of_design_is_named_not_cleared(faulty) -> None:
    """The review's deg.yaml: mesh-4, gpu0-gpu1 at 0.68 — under validate's 75 %, so doctor names it too."""
    ev = _evidence(faulty("mesh-4", [{"kind": "link_degraded", "between": ["gpu0", "gpu1"], "factor": 0.68}]))
    out = transfer_checks.pair_bandwidth(ev)
    assert out.status == "confirmed", out.summary
    assert {tuple(sorted(f.between or ())) for f in out.findings} == {("gpu0", "gpu1")}


def test_every_live_pair_far_below_design_is_one_finding_not_a_clear(faulty) -> None:
    ev = _evidence(faulty("mesh-4", [{"kind": "p2p_disabled"}]))
    slow = [c for c in ev.pair_checks or [] if c.pct_of_expected is not None]
    assert slow and all(c.pct_of_expected < 75 for c in slow)  # the whole table, as the rule needs
    out = transfer_checks.pair_bandwidth(ev)
    assert out.status == "confirmed" and len(out.findings) == 1, out
    (f,) = out.findings
    assert f.cause == "topology_misidentified" and f.between is None and f.evidence["pairs"] == len(slow)


def test_a_healthy_node_keeps_its_pairs_clear(faulty) -> None:
    ev = _evidence(faulty("pcie-8", []))
    assert transfer_checks.pair_bandwidth(ev).status == "clear"
    assert transfer_checks.p2p_path(ev).status == "clear"


# --- 8: P2P off, one fact: faults.yaml's kind and severity in validate's root and in doctor ---

def test_validates_root_for_pairs_slow_over_the_whole_node_is_p2p_disabled_at_its_severity() -> None:
    mods = [f"gpu{i}" for i in range(4)]
    seen = [Seen(f"p2p_one_way/{a}-{b}", "p2p_one_way", "critical", False, None, (a, b), f"{a}→{b}")
            for a in mods for b in mods if a != b]
    (root,) = group(seen, None, frozenset(mods))
    p2p = knowledge.faults()["p2p_disabled"]
    assert (root.kind, root.severity, root.subject) == ("p2p_disabled", p2p.severity, "node")
    assert len(root.explains) == len(seen)


def test_doctor_names_p2p_off_on_a_pcie_switch_node(faulty) -> None:
    """Staged through host memory, a PCIe pair keeps its one-way rate and halves both ways at once:
    the pairs are priced on the design (the node as built), so doctor sees it as validate does."""
    ev = _evidence(faulty("pcie-8", [{"kind": "p2p_disabled"}]))
    assert ev.expectations is not None and ev.expectations.perf is not None
    assert not ev.expectations.perf.p2p_disabled  # the design, never the faulty state
    out = transfer_checks.p2p_path(ev)
    assert out.status == "confirmed" and [f.cause for f in out.findings] == ["p2p_disabled"], out.summary
    assert out.findings[0].severity == knowledge.faults()["p2p_disabled"].severity


def test_the_one_verdict_matrix_runs_p2p_off_on_both_kinds_of_node() -> None:
    from tests.support import one_verdict

    runs = {(base, f["kind"]) for _, base, f in one_verdict.FAULTS}
    assert {("hgx-h200-8", "p2p_disabled"), ("pcie-8", "p2p_disabled")} <= runs


# --- 15: the power limit is judged against the default, and its clear text says so ---

def test_power_limit_clear_text_says_default(faulty) -> None:
    out = doctor_checks.power_limit(_evidence(faulty("hgx-h200-8", [])))
    assert (out.status, out.summary) == ("clear", "power limits at their default")


# --- 17: the name that promised to stay is back, deprecated, re-exporting the current names ---

def test_validate_checks_is_a_deprecated_re_export() -> None:
    from gpuvet.checks import model

    sys.modules.pop("gpuvet.validate.checks", None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = importlib.import_module("gpuvet.validate.checks")
    assert any(issubclass(w.category, DeprecationWarning) and "gpuvet.checks.model" in str(w.message) for w in caught)
    assert all(getattr(old, n) is getattr(model, n) for n in old.__all__)
    assert {"Check", "Layer", "Verdict", "overall", "worse"} <= set(old.__all__)


def test_architecture_doc_says_the_moved_harnesses_were_never_public() -> None:
    text = (ROOT / "docs/architecture.md").read_text()
    line = next(ln for ln in text.splitlines() if "gpuvet.doctor.matrix" in ln)
    assert "gpuvet.doctor.evaluate" in line and "gpuvet.plan.reference" in line and "never public" in line


# --- 18: the two face functions that grew are back under 60 lines, behaving as before ---

@pytest.mark.parametrize(("path", "name"), [("src/gpuvet/cli/validate.py", "validate"), ("src/gpuvet/cli/plan.py", "step")])
def test_the_face_functions_that_grew_are_under_60_lines(path: str, name: str) -> None:
    tree = ast.parse((ROOT / path).read_text())
    fn = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name)
    assert fn.end_lineno is not None and fn.end_lineno - fn.lineno + 1 <= 60


def test_plan_step_still_refuses_tp_pp_over_the_module_count_and_an_unknown_precision(capsys) -> None:
    code, _, err = call(capsys, "plan", "step", "--node", "hgx-h200-8", "--tp", "8", "--pp", "2")
    assert code == 2 and "tp × pp = 16" in err
    code, _, err = call(capsys, "plan", "step", "--node", "hgx-h200-8", "--precision", "fp4")
    assert code == 2 and "'fp4'" in err
