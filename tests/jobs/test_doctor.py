"""Doctor: the fault matrix (one case per fault kind, healthy nodes clean), playbooks as data,
captured evidence from machines without gpuvet, and bad input."""

import json
from pathlib import Path

import pytest

from gpuvet.cli.app import main
from gpuvet.doctor.captures import parse_nccl_tests, parse_nvbandwidth, parse_smi_text, parse_xid_log
from gpuvet.doctor.model import causes, playbooks
from gpuvet.doctor.run import validate_playbooks
from gpuvet.watch.trend import thermal_trend
from tests.harness.doctor_evaluate import run_case
from tests.harness.doctor_matrix import suite_cases
from tests.support.helpers import call

DATA = Path(__file__).parent.parent / "data" / "captures"



def test_playbooks_are_data_and_name_real_checks_and_causes():
    validate_playbooks()
    assert set(playbooks()) == {"interconnect-slow", "module-missing", "compute-errors", "overheating",
                                "results-fluctuate", "compute-below-peak"}
    order = [s.check for s in playbooks()["interconnect-slow"].steps]
    # the seed's order: physical link, then driver/runtime configuration, then the pattern, and the host
    assert order.index("link_state") < order.index("nccl_environment") < order.index("collective_results") \
        < order.index("host_bottleneck")
    assert {"p2p_disabled", "module_fell_off_bus", "thermal_interface_ageing"} <= set(causes())


FAULT_KINDS = {"missing_module", "module_lost", "module_added", "mem_clock_flapping", "power_cap_low",
               "silent_corruption", "thermal_creep", "ecc_rising", "xid", "link_down", "link_degraded",
               "wiring_swap", "p2p_disabled"}


def test_the_suite_covers_every_fault_kind():
    assert {c.fault["kind"] for c in suite_cases() if c.fault} == FAULT_KINDS
    assert any(c.fault is None for c in suite_cases())


@pytest.mark.slow
@pytest.mark.parametrize("case", suite_cases(), ids=lambda c: c.name)
def test_fault_matrix_names_the_cause_and_healthy_nodes_stay_clean(case, tmp_path):
    """One simulated day of telemetry (four for the slow thermal creep); the full matrix with
    the default four-day window is benchmarks/doctor_matrix.py."""
    window = None if case.fault and case.fault["kind"] == "thermal_creep" else 86400.0
    outcome = run_case(case, tmp_path, thermal_trend, window_s=window)
    assert outcome.verdict == "correct", [(f.cause, f.module, f.between, f.playbook) for f in outcome.findings]
    assert outcome.triage_ok  # triage (no symptom) finds it too


def test_doctor_json_findings_match_the_spec_form(capsys, tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text("base: hgx-h200-8\nfaults:\n  - {kind: link_degraded, between: [gpu1, nvswitch0], factor: 0.5}\n")
    code, out, _ = call(capsys, "doctor", "interconnect-slow", "--sim", str(spec), "--json")
    data = json.loads(out)
    assert code == 1 and data["simulated"] is True
    (f,) = data["findings"]
    assert f["cause"] == "link_degraded" and f["between"] == ["gpu1", "nvswitch0"]
    assert f["fix"] and 0 < f["confidence"] <= 1 and f["evidence"]
    steps = [s["check"] for s in data["steps"]]
    assert steps[:2] == ["module_presence", "link_state"] and data["steps"][1]["status"] == "confirmed"
    assert len(steps) == 2  # stops at the first confirmed cause


def test_all_runs_every_step(capsys):
    code, out, _ = call(capsys, "doctor", "interconnect-slow", "--sim", "mesh-4", "--json", "--all", "--window", "2h")
    data = json.loads(out)
    assert code == 0 and data["findings"] == []
    assert len(data["steps"]) == 15 and {s["status"] for s in data["steps"]} <= {"clear", "inconclusive"}


def test_nccl_environment_forcing_a_slow_transport(capsys, monkeypatch):
    monkeypatch.setenv("NCCL_P2P_DISABLE", "1")
    monkeypatch.setenv("NCCL_TOPO_FILE", "/nonexistent/topo.xml")
    code, out, _ = call(capsys, "doctor", "interconnect-slow", "--sim", "mesh-4", "--json", "--all", "--window", "1h")
    causes_found = {f["cause"] for f in json.loads(out)["findings"]}
    assert code == 1 and {"p2p_disabled", "nccl_topo_file_stale"} <= causes_found


def test_captured_smi_text_shows_width_downgrade_throttling_and_ecc(capsys):
    code, out, _ = call(capsys, "doctor", "--from", str(DATA / "smi_q_h100_2gpu.txt"), "--json")
    found = {(f["cause"], f.get("module")) for f in json.loads(out)["findings"]}
    assert code == 1
    assert ("pcie_link_downgraded", "0000:18:00.0") in found
    assert ("thermal_throttling", "0000:2A:00.0") in found
    assert ("ecc_disabled", "0000:2A:00.0") in found


def test_captured_nccl_tests_wrong_results_and_latency_bound_sizes(capsys):
    code, out, _ = call(capsys, "doctor", "interconnect-slow", "--from", str(DATA / "nccl_all_reduce_8gpu_wrong.txt"),
                        "--json")
    data = json.loads(out)
    assert code == 1 and [f["cause"] for f in data["findings"]] == ["data_corruption_in_transfer"]
    assert data["findings"][0]["evidence"]["sizes"] == [16777216]
    code, out, _ = call(capsys, "doctor", "interconnect-slow", "--from", str(DATA / "nccl_all_reduce_small_sizes.txt"),
                        "--json")
    assert [f["cause"] for f in json.loads(out)["findings"]] == ["latency_bound_messages"]


def test_captured_nvbandwidth_at_pcie_speed_means_p2p_off(capsys):
    code, out, _ = call(capsys, "doctor", "interconnect-slow", "--from", str(DATA / "nvbandwidth_d2d_p2p_off.txt"),
                        "--json")
    (f,) = json.loads(out)["findings"]
    assert f["cause"] == "p2p_disabled" and f["evidence"]["median_gbps"] < 30


def test_captured_kernel_log_xids_with_their_meaning(capsys):
    code, out, _ = call(capsys, "doctor", "module-missing", "--from", str(DATA / "dmesg_xid.txt"), "--json", "--all")
    found = {(f["cause"], f["evidence"].get("xid")) for f in json.loads(out)["findings"]}
    assert ("module_fell_off_bus", 79) in found and ("xid", 48) in found
    meaning = next(f for f in json.loads(out)["findings"] if f["evidence"].get("xid") == 48)["evidence"]["meaning"]
    assert "double-bit ECC" in meaning


def test_captured_topology_and_xml_load(capsys):
    code, out, _ = call(capsys, "doctor", "--from", str(DATA / "topo_nvswitch_8gpu.txt"), "--from",
                        str(DATA / "smi_q_x_h100_8gpu.xml"), "--json")
    data = json.loads(out)
    assert code in (0, 1) and data["simulated"] is False and data["steps"]


def test_parsers_read_the_fixtures():
    path = DATA / "nccl_all_reduce_8gpu_wrong.txt"
    r = parse_nccl_tests(path.read_text(), str(path))
    assert r.op == "all_reduce" and r.ranks == 8 and len(r.rows) == 6 and r.avg_busbw == pytest.approx(96.04)
    assert r.rows[-1].busbw == pytest.approx(321.14)
    m = parse_nvbandwidth((DATA / "nvbandwidth_d2d_p2p_off.txt").read_text(), "x")
    assert m["device_to_device_memcpy_read_ce"][0] == [None, 24.81, 24.77, 22.10]
    smi = parse_smi_text((DATA / "smi_q_h100_2gpu.txt").read_text(), "x")
    assert [s.bus_id for s in smi] == ["0000:18:00.0", "0000:2A:00.0"]
    assert smi[0].fields["PCI/GPU Link Info/Link Width/Current"] == "8x"
    xids = parse_xid_log((DATA / "dmesg_xid.txt").read_text(), "x")
    assert [(x.bus_id, x.code) for x in xids] == [("0000:3A:00.0", 48), ("0000:5D:00.0", 79)]


def test_unknown_symptom_lists_the_known_ones(capsys):
    code, _, err = call(capsys, "doctor", "gpu-slow", "--sim", "mesh-4")
    assert code == 2 and "interconnect-slow" in err and "overheating" in err and "Traceback" not in err


def test_unreadable_capture_names_the_file_and_what_was_expected(capsys, tmp_path):
    junk = tmp_path / "notes.txt"
    junk.write_text("some unrelated text\n")
    code, _, err = call(capsys, "doctor", "--from", str(junk))
    assert code == 2 and "notes.txt" in err and "nvidia-smi" in err and "nccl-tests" in err
    code, _, err = call(capsys, "doctor", "--from", str(tmp_path / "missing.txt"))
    assert code == 2 and "missing.txt" in err


def test_the_command_gives_doctor_the_thermal_trend(capsys, tmp_path):
    """Doctor does not import watch: the face hands it watch's forecaster. Without it the trend
    check could only say "unknown", so the command must find a creeping module's ageing."""
    spec = tmp_path / "creep.yaml"
    spec.write_text("base: mesh-4\nfaults:\n  - {kind: thermal_creep, module: gpu1, c_per_watt_per_day: 0.002}\n")
    code, out, _ = call(capsys, "doctor", "overheating", "--sim", str(spec), "--json", "--window", "2d")
    found = [(f["cause"], f["module"]) for f in json.loads(out)["findings"]]
    assert code == 1 and ("thermal_interface_ageing", "gpu1") in found


def test_a_captured_module_is_named_once_by_its_bus_id_with_evidence(capsys):
    """The capture's inventory calls it gpu1 and its -q section 0000:2A:00.0: one module, one
    finding per cause, named as the pasted text names it, and the finding says what it read."""
    from pathlib import Path

    capture = Path(__file__).parent.parent / "data" / "captures" / "smi_q_h100_2gpu.txt"
    assert main(["doctor", "--from", str(capture), "--json"]) == 1
    found = json.loads(capsys.readouterr().out)["findings"]
    ecc = [f for f in found if f["cause"] == "ecc_disabled"]
    assert [f["module"] for f in ecc] == ["0000:2A:00.0"] and ecc[0]["evidence"]
    pairs = [(f["cause"], f["module"]) for f in found]
    assert len(pairs) == len(set(pairs)) and not any(m and m.startswith("gpu") for _, m in pairs)


def test_a_playbook_that_stops_at_its_first_cause_says_what_it_did_not_run(capsys, tmp_path):
    """A missing module stops interconnect-slow before its link steps: the degraded link behind it
    is found only with --all, and the run says so instead of looking complete."""
    spec = tmp_path / "two.yaml"
    spec.write_text("base: mesh-4\nfaults:\n  - {kind: missing_module, module: gpu3}\n"
                    "  - {kind: link_degraded, between: [gpu0, gpu1], factor: 0.5}\n")
    main(["doctor", "interconnect-slow", "--sim", str(spec), "--json"])
    first = json.loads(capsys.readouterr().out)
    (note,) = [n for n in first["notes"] if n.startswith("stopped at the first confirmed cause")]
    assert "interconnect-slow at module_presence" in note and "--all" in note, note
    assert "link_degraded" not in {f["cause"] for f in first["findings"]}
    main(["doctor", "interconnect-slow", "--sim", str(spec), "--all", "--json"])
    every = json.loads(capsys.readouterr().out)
    assert not [n for n in every["notes"] if n.startswith("stopped")], every["notes"]
    assert {"module_missing", "link_degraded"} <= {f["cause"] for f in every["findings"]}, every["findings"]


# --- root cause first (issue 42): the findings under the fault that explains them -------------------

TWO_FAULTS = ("base: hgx-h200-8\nfaults:\n  - {kind: link_degraded, between: [gpu1, nvswitch0], factor: 0.33}\n"
              "  - {kind: power_cap_low, module: gpu6, watts: 300}\n")


def _keys(data):
    """Each finding's key as roots name it (cause/where), from the finding's own fields."""
    return [f"{f['cause']}/{f.get('module') or '-'.join(f.get('between') or ['node'])}" for f in data["findings"]]


def test_doctor_groups_the_slow_pairs_under_the_link_and_the_lower_gemm_under_the_cap(capsys, tmp_path,
                                                                                       monkeypatch):
    spec = tmp_path / "node.yaml"
    spec.write_text(TWO_FAULTS, encoding="utf-8")
    code, out, _ = call(capsys, "doctor", "--node", str(spec), "--all", "--window", "1h", "--json")
    data = json.loads(out)
    assert code == 1 and {"symptom", "findings", "steps", "cant_tell", "notes"} <= set(data)  # kept keys
    roots = {r["subject"]: r for r in data["roots"]}
    assert set(roots) == {"gpu1↔nvswitch0", "gpu6"}, data["roots"]
    link, cap = roots["gpu1↔nvswitch0"], roots["gpu6"]
    assert link["title"] == "gpu1↔nvswitch0 at 33 % of design" and link["kind"] == "link_degraded"
    assert link["explains"][0] == "link_degraded/gpu1-nvswitch0"
    pairs = [k for k in link["explains"][1:] if k.startswith("topology_misidentified/")]
    assert len(pairs) == 7 and all("gpu1" in k for k in pairs)  # every pair over gpu1's slowed link
    assert cap["explains"] == ["power_cap_low/gpu6", "compute_below_peak_unexplained/gpu6"]
    explained = [k for r in data["roots"] for k in r["explains"]]
    assert sorted(explained) == sorted(_keys(data))  # every finding under exactly one root
    monkeypatch.setenv("COLUMNS", "80")
    _, text, _ = call(capsys, "doctor", "--node", str(spec), "--all", "--window", "1h")
    head = [line for line in text.splitlines() if not line.startswith(("╭", "│", "╰"))][:4]
    assert head[0].endswith("cause(s) found (10 warn); 2 root(s)"), head
    assert any("gpu1↔nvswitch0 at 33 % of design — explains 7 finding(s)" in line for line in head), head
    assert any("gpu6 power capped — explains 1 finding(s)" in line for line in head), head


@pytest.mark.parametrize(("capture", "root", "explained"), [
    ("nvbandwidth_d2d_p2p_off.txt", "p2p_disabled/node", ["topology_misidentified/node"]),
    ("real/kern_cmpunlocker4_cannot_attach.txt", "module_cannot_attach/0000:01:00.0",
     ["module_init_failed/0000:01:00.0"]),
])
def test_doctor_from_a_capture_puts_two_findings_of_one_cause_under_it(capsys, capture, root, explained):
    code, out, _ = call(capsys, "doctor", "--from", str(DATA / capture), "--all", "--json")
    data = json.loads(out)
    assert code == 1 and len(data["findings"]) == 2
    assert [(r["key"], r["explains"]) for r in data["roots"]] == [(root, [root, *explained])]
