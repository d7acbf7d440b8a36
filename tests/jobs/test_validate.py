"""`gpuvet validate`: verdicts on simulated nodes with each fault, the host for real, rules,
baselines, comparisons."""

import json

import pytest
import yaml

from gpuvet.backends.sim.backend import SimBackend
from gpuvet.checks.model import Check, Layer, Verdict
from gpuvet.errors import GpuvetError
from gpuvet.logbook.store import Logbook
from gpuvet.validate.baseline import apply_baseline, load_baseline, make_baseline, save_baseline
from gpuvet.validate.rules import RuleSet, load_rules
from gpuvet.validate.run import Level, Validator, check_json, node_type
from tests.conftest import declared
from tests.support.helpers import call

LAYERS = {"inventory", "software", "network", "compute", "host_link", "module_link", "collective", "memory", "model"}



def validate(backend, level=Level.LONG, expect=None, **kw):
    return Validator(backend, level, declared=declared(expect) if expect else None, **kw).run()


def not_passing(run):
    return {(c.layer.value, c.name, c.module or c.between, c.verdict.value) for c in run.checks
            if c.verdict in (Verdict.WARN, Verdict.FAIL)}


def test_healthy_simulated_node_passes_at_quick(capsys, tmp_path):
    """(Its wall time is a speed target, measured in benchmarks/scale.py, not asserted here.)"""
    code, out, _ = call(capsys, "validate", "--sim", "hgx-h200-8", "--level", "quick", "--json",
                        "--logbook", str(tmp_path / "lb.db"))
    data = json.loads(out)
    assert code == 0 and data["verdict"] == "pass" and data["simulated"] is True and data["run_id"]
    assert {c["layer"] for c in data["checks"]} <= LAYERS
    for c in data["checks"]:
        assert {"layer", "name", "verdict", "value", "unit", "expected"} <= set(c)
        assert c["verdict"] in ("pass", "warn", "fail", "skip")
    pairs = [c for c in data["checks"] if c["name"] == "p2p_one_way"]
    assert len(pairs) == 56 and all(len(c["between"]) == 2 and c["expected"] > 0 for c in pairs)
    h2d = [c for c in data["checks"] if c["name"] == "h2d"]
    assert all(c["module"] and 95 < c["pct_of_expected"] < 105 for c in h2d)


def test_long_level_on_healthy_node_passes_every_layer():
    run = validate(SimBackend.from_ref("hgx-h200-8"), expect="hgx-h200-8")
    assert run.verdict is Verdict.PASS and not_passing(run) == set()
    assert {c.layer.value for c in run.checks} == LAYERS


def _slow_paths(m):
    """What a module's slow fabric link turns besides the link itself: every pair through it
    (against the declared design), its paths named once by the peer check, the node's aggregate
    and its collective."""
    ids = [f"gpu{i}" for i in range(8)]
    pairs = {("module_link", "p2p_one_way", (a, b)) for a in ids for b in ids if a != b and m in (a, b)}
    pairs |= {("module_link", "p2p_two_way", (a, b)) for i, a in enumerate(ids) for b in ids[i + 1:] if m in (a, b)}
    return pairs | {("module_link", "peers_p2p_one_way", m), ("module_link", "peers_p2p_two_way", m),
                    ("module_link", "aggregate_all_pairs", None), ("collective", "all_reduce_busbw", None)}


DTYPES = ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8")
FAULTS = [
    ({"kind": "missing_module", "module": "gpu3"},
     {("inventory", "missing_module", "gpu3"), ("inventory", "modules", None)}),
    ({"kind": "link_down", "between": ["gpu2", "nvswitch0"]},
     {("inventory", "link_down", ("gpu2", "nvswitch0"))} | _slow_paths("gpu2")),
    ({"kind": "link_degraded", "between": ["gpu1", "nvswitch0"], "factor": 0.5},
     {("inventory", "link_degraded", ("gpu1", "nvswitch0"))} | _slow_paths("gpu1")),
    ({"kind": "mem_clock_flapping", "module": "gpu2"},
     {("memory", f"{p}membw_{k}", "gpu2") for p in ("", "peers_") for k in ("copy", "triad")}),
    ({"kind": "power_cap_low", "module": "gpu3", "watts": 350},
     {("software", "power_limit", "gpu3")} | {("compute", f"{p}gemm_{d}", "gpu3") for p in ("", "peers_")
                                             for d in DTYPES}),
    ({"kind": "silent_corruption", "module": "gpu6"},
     {("compute", f"gemm_agreement_{d}", "gpu6") for d in DTYPES}),
]


@pytest.mark.parametrize(("fault", "expected"), FAULTS, ids=[f[0]["kind"] for f in FAULTS])
def test_each_fault_turns_exactly_the_right_checks(faulty, fault, expected):
    run = validate(faulty("hgx-h200-8", [fault]), expect="hgx-h200-8")
    assert run.verdict is Verdict.FAIL
    assert {(layer, name, where) for layer, name, where, _ in not_passing(run)} == expected


def test_power_cap_comes_with_its_evidence(faulty):
    run = validate(faulty("hgx-h200-8", [{"kind": "power_cap_low", "module": "gpu3", "watts": 350}]),
                   level=Level.QUICK)
    gemm = next(c for c in run.checks if c.name == "gemm_bf16" and c.module == "gpu3")
    assert gemm.verdict is Verdict.FAIL and gemm.evidence["throttle_reasons"] == ["sw_power_cap"]
    assert gemm.pct_of_expected < 85 and gemm.fix
    limit = next(c for c in run.checks if c.name == "power_limit" and c.module == "gpu3")
    assert limit.verdict is Verdict.WARN and limit.value == 350 and limit.expected == 700 and "-pl 700" in limit.fix


def test_p2p_disabled_fails_every_pair_and_the_collective(faulty):
    run = validate(faulty("hgx-h200-8", [{"kind": "p2p_disabled"}]), level=Level.QUICK)
    bad = not_passing(run)
    names = {name for _, name, _, _ in bad}
    # staged through host memory, pairs across the sockets are slower still than those on one: the
    # peer check may name them too
    assert {"p2p_one_way", "p2p_two_way", "aggregate_all_pairs", "all_reduce_busbw"} <= names \
        <= {"p2p_one_way", "p2p_two_way", "aggregate_all_pairs", "all_reduce_busbw", "peers_p2p_one_way",
            "peers_p2p_two_way"}
    assert len([b for b in bad if b[1] == "p2p_one_way"]) == 56
    assert len([b for b in bad if b[1] == "p2p_two_way"]) == 28


def test_mem_clock_flapping_shows_the_memory_clock(faulty):
    run = validate(faulty("hgx-h200-8", [{"kind": "mem_clock_flapping", "module": "gpu2"}]))
    check = next(c for c in run.checks if c.name == "membw_copy" and c.module == "gpu2")
    telemetry = check.evidence["telemetry"]["gpu2"]
    assert telemetry["mem_clock_mhz_min"] < telemetry["mem_clock_mhz_max"]


def test_wiring_swap_on_pcie_node_is_named(faulty):
    run = validate(faulty("pcie-8", [{"kind": "wiring_swap", "modules": ["gpu0", "gpu7"]}]), level=Level.QUICK,
                   expect="pcie-8")
    inventory = {c.name for c in run.checks if c.layer is Layer.INVENTORY and c.verdict is Verdict.FAIL}
    assert inventory == {"wiring_mismatch"}


def test_cpu_only_machine_validates_the_host_for_real_and_says_no_gpu(capsys, tmp_path):
    code, out, _ = call(capsys, "validate", "--level", "quick", "--host-only", "--json",
                        "--logbook", str(tmp_path / "lb.db"))
    data = json.loads(out)
    assert code == 0 and data["simulated"] is False and data["verdict"] in ("pass", "warn")
    modules = next(c for c in data["checks"] if c["name"] == "modules")
    assert modules["verdict"] == "warn" and "no GPU module was found" in modules["reason"]
    gemm = next(c for c in data["checks"] if c["name"] == "gemm_fp32")
    assert gemm["module"] == "cpu" and gemm["value"] > 0 and gemm["verdict"] != "skip"
    assert any(c["name"] == "all_reduce_correct" and c["value"] is True for c in data["checks"])
    assert any("No GPU module was found" in n for n in data["notes"])


def test_rules_file_with_unknown_operator_is_a_clear_error(tmp_path, capsys):
    bad = tmp_path / "rules.yaml"
    bad.write_text("rules:\n  - {check: 'gemm_*', field: pct_of_peak, op: approx, threshold: 50, verdict: fail}\n")
    with pytest.raises(GpuvetError) as err:
        load_rules(bad)
    assert "op" in err.value.message and "lt" in err.value.message
    code, _, err_text = call(capsys, "validate", "--sim", "mesh-4", "--rules", str(bad), "--no-log")
    assert code == 2 and "Traceback" not in err_text


def test_users_rules_override_and_extend_the_defaults(tmp_path):
    strict = tmp_path / "strict.yaml"
    strict.write_text(yaml.safe_dump({"extends": "default", "rules": [
        {"check": "gemm_bf16", "field": "pct_of_peak", "op": "lt", "threshold": 90, "verdict": "fail", "fix": "buy"}]}))
    run = validate(SimBackend.from_ref("mesh-4"), Level.QUICK, rules=load_rules(strict))
    failed = {(c.name, c.module) for c in run.checks if c.verdict is Verdict.FAIL}
    assert failed == {("gemm_bf16", f"gpu{i}") for i in range(4)}
    assert all("% of peak" in c.reason and c.fix == "buy" for c in run.checks if c.verdict is Verdict.FAIL)


def test_a_marginal_result_is_measured_again():
    near = RuleSet(rules=[{"check": "gemm_bf16", "field": "pct_of_expected", "op": "lt", "threshold": 100.0,
                           "verdict": "warn"}])
    check = Check(Layer.COMPUTE, "gemm_bf16", Verdict.PASS, value=1.0, pct_of_expected=100.2, cv=0.01)
    assert near.marginal(check)
    assert not near.marginal(Check(Layer.COMPUTE, "gemm_bf16", Verdict.PASS, value=1.0, pct_of_expected=120, cv=0.01))
    run = validate(SimBackend.from_ref("mesh-4"), Level.QUICK, rules=near)
    reruns = [c for c in run.checks if c.evidence.get("rerun")]
    assert reruns and all(c.name == "gemm_bf16" and "first_value" in c.evidence for c in reruns)


def _runs_for_baseline(book, faults_per_run, faulty):
    ids = []
    for faults in faults_per_run:
        backend = faulty("hgx-h200-8", faults) if faults else SimBackend.from_ref("hgx-h200-8")
        ids.append(Validator(backend, Level.QUICK, logbook=book).run().run_id)
    return ids


def test_baseline_is_robust_to_a_bad_run_and_catches_a_regression(tmp_path, faulty):
    book = Logbook(tmp_path / "lb.db")
    capped = [{"kind": "power_cap_low", "module": "gpu0", "watts": 300}]
    ids = _runs_for_baseline(book, [[], [], capped, []], faulty)
    runs = [(r, book.run(r).envelope.node_type, book.checks(r)) for r in ids]
    made = make_baseline(runs, "now")
    gemm0 = made.metrics["compute/gemm_bf16/gpu0"]
    assert ids[2] in gemm0.excluded  # the capped run does not drag the reference down
    path = tmp_path / "base.json"
    save_baseline(made, path)
    base = load_baseline(path)
    good = Validator(SimBackend.from_ref("hgx-h200-8"), Level.QUICK, baseline=base).run()
    assert good.verdict is Verdict.PASS
    assert all(95 < c.pct_of_baseline < 105 for c in good.checks if c.name == "gemm_bf16")
    slow = Validator(faulty("hgx-h200-8", capped), Level.QUICK, baseline=base).run()
    gemm = next(c for c in slow.checks if c.name == "gemm_bf16" and c.module == "gpu0")
    assert gemm.verdict is Verdict.FAIL and gemm.pct_of_baseline < 95


def test_baseline_from_another_node_type_is_refused(tmp_path):
    book = Logbook(tmp_path / "lb.db")
    run_id = Validator(SimBackend.from_ref("mesh-4"), Level.QUICK, logbook=book).run().run_id
    made = make_baseline([(run_id, book.run(run_id).envelope.node_type, book.checks(run_id))], "now")
    assert made.node_type == "H100-SXM"
    with pytest.raises(GpuvetError, match="baseline is for H100-SXM"):
        apply_baseline([], made, node_type(SimBackend.from_ref("hgx-h200-8").node()))


def test_baseline_cli_and_compare_mark_regressions(tmp_path, capsys, faulty):
    db = str(tmp_path / "lb.db")
    code, out, _ = call(capsys, "validate", "--sim", "mesh-4", "--level", "quick", "--json", "--logbook", db)
    first = json.loads(out)["run_id"]
    spec = tmp_path / "capped.yaml"
    spec.write_text(yaml.safe_dump({"base": "mesh-4", "faults": [{"kind": "power_cap_low", "module": "gpu1",
                                                                  "watts": 300}]}))
    code, out, _ = call(capsys, "validate", "--sim", str(spec), "--level", "quick", "--json", "--logbook", db)
    second = json.loads(out)["run_id"]
    assert code == 1
    code, out, _ = call(capsys, "log", "compare", first, second, "--json", "--logbook", db)
    data = json.loads(out)
    assert code == 1 and data["regressions"] >= 1
    regressed = {r["key"] for r in data["results"] if r["regression"]}
    assert "compute/gemm_bf16/gpu1" in regressed and "compute/gemm_bf16/gpu0" not in regressed
    assert any(e["key"] == "gpu1.power_limit_w" and e["b"] == 300 for e in data["environment"])
    base = tmp_path / "b.json"
    code, out, _ = call(capsys, "baseline", "make", first, "-o", str(base), "--logbook", db)
    assert code == 0 and base.exists() and "1 runs" in out
    code, out, _ = call(capsys, "validate", "--sim", "mesh-4", "--level", "quick", "--baseline", str(base),
                        "--json", "--no-log")
    assert code == 0 and json.loads(out)["verdict"] == "pass"


def test_check_json_keeps_the_contract_keys_even_when_empty():
    data = check_json(Check(Layer.SOFTWARE, "driver", Verdict.SKIP, reason="no GPU"))
    assert {"layer", "name", "verdict", "value", "unit", "expected"} <= set(data) and data["reason"] == "no GPU"


def test_settings_read_through_nvml_become_software_warnings():
    from gpuvet.backends.nvidia.backend import NvidiaBackend
    from gpuvet.backends.nvidia.gateway import Nvml
    from gpuvet.checks.software import software_checks
    from tests.fakes.fake_nvml import hgx_h200

    fake = hgx_h200(4)
    fake.gpus[1].persistence = 0
    fake.gpus[2].pids = (4242,)
    fake.gpus[3].app_clocks = (1410, 1980)
    fake.gpus[0].power_mw = (500_000, 700_000, 200_000, 700_000)
    inv = NvidiaBackend(Nvml(lib=fake)).inventory()
    checks = software_checks(inv, {"cuda_version": "12.4", "torch_version": "2.14.1", "nccl_version": "2.21.5"}, None)
    warned = {(c.name, c.module) for c in checks if c.verdict is Verdict.WARN}
    assert warned == {("persistence_mode", "gpu1"), ("other_processes", "gpu2"), ("clocks_locked", "gpu3"),
                      ("power_limit", "gpu0")}
    procs = next(c for c in checks if c.name == "other_processes" and c.module == "gpu2")
    assert "4242" in procs.reason
    compat = next(c for c in checks if c.name == "cuda_compatibility")
    assert compat.verdict is Verdict.PASS  # driver 12.8 runs a 12.4 runtime


@pytest.mark.parametrize(("driver", "runtime", "verdict"), [
    ("12.8", "12.4", Verdict.PASS), ("12.2", "12.4", Verdict.WARN), ("11.8", "12.1", Verdict.FAIL),
    ("13.0", "12.9", Verdict.PASS), (None, "12.4", Verdict.SKIP),
])
def test_cuda_driver_and_runtime_compatibility(driver, runtime, verdict):
    from gpuvet.checks.software import cuda_compatibility

    check = cuda_compatibility(driver, runtime)
    assert check.verdict is verdict
    if verdict is not Verdict.PASS:
        assert check.reason


def test_nothing_measurable_exits_2_but_keeps_the_run(tmp_path, capsys, monkeypatch):
    from gpuvet.backends import host
    from gpuvet.errors import BackendError

    def no_torch(self):
        raise BackendError("PyTorch is not installed, and real benchmarks run through it", fix="pip install")

    monkeypatch.setattr(host.HostBackend, "engine", no_torch)
    db = str(tmp_path / "lb.db")
    code, out, err = call(capsys, "validate", "--level", "quick", "--host-only", "--logbook", db)
    assert code == 2 and "nothing could be measured" in err and "PyTorch is not installed" in err
    code, out, _ = call(capsys, "log", "list", "--json", "--logbook", db)
    assert json.loads(out)[0]["status"] == "complete"


def test_a_node_with_zero_modules_measured_nothing_and_fails_no_benchmark(faulty, capsys, tmp_path):
    """Every module gone: the copy sets of zero transfers (aggregate_host_to_all, all_to_host)
    were a FAIL ('max() arg is an empty sequence'); with nothing measured each benchmark layer is a
    SKIP saying so, and the CLI's 'nothing could be measured' rule gives exit 2, not a verdict."""
    gone = [{"kind": "missing_module", "module": f"gpu{i}"} for i in range(4)]
    run = validate(faulty("mesh-4", gone), level=Level.QUICK)
    assert not run.measured and not [c for c in run.checks if c.verdict is Verdict.FAIL], not_passing(run)
    skipped = {c.layer.value: c.reason for c in run.checks if c.name == "benchmarks"}
    assert set(skipped) == {"compute", "host_link", "module_link", "collective"}
    assert all("no module to measure" in r for r in skipped.values())
    assert not [c for c in run.checks if c.name.startswith(("aggregate_", "contention_"))]
    spec = tmp_path / "zero.yaml"
    spec.write_text(yaml.safe_dump({"base": "mesh-4", "faults": gone}), encoding="utf-8")
    code, _, err = call(capsys, "validate", "--sim", str(spec), "--level", "quick", "--no-log")
    assert code == 2 and "nothing could be measured: no module to measure on" in err and "Traceback" not in err
    assert "module-missing" in err and "gpuvet[torch]" not in err  # torch is not what is missing here
    code, _, err = call(capsys, "validate", "--sim", str(spec), "--level", "quick", "--no-log", "--expect", "mesh-4")
    assert code == 2 and "nothing could be measured" in err  # the missing modules: FAIL in the inventory layer
