"""The CLI as a user runs it: exit codes, JSON contracts, clear errors without tracebacks."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from gpuvet.node.spec import preset_names
from tests.support.helpers import call
from tests.support.helpers import run as run_here

DATA = Path(__file__).parent.parent / "data" / "captures"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gpuvet", *args], capture_output=True, text=True, timeout=60)



def test_python_m_and_help():
    r = run("--help")
    assert r.returncode == 0 and "inventory" in r.stdout and "topo" in r.stdout


def test_inventory_json_on_this_machine_has_the_contract_keys(capsys):
    code, out, _ = call(capsys, "inventory", "--json")
    data = json.loads(out)
    assert code == 0
    assert {"simulated", "backend", "modules", "host", "software"} <= set(data)
    assert data["simulated"] is False
    if not data["modules"]:  # no GPU here: the host, and a note saying so
        assert data["backend"] == "host" and any("No GPU module" in n for n in data["notes"])
    assert data["host"]["memory_bytes"] > 0


def test_inventory_sim_json(capsys):
    code, out, _ = call(capsys, "inventory", "--sim", "hgx-h200-8", "--json")
    data = json.loads(out)
    assert code == 0 and data["simulated"] is True and data["backend"] == "sim"
    assert [m["id"] for m in data["modules"]] == [f"gpu{i}" for i in range(8)]
    assert all(m["model"] == "H200-SXM" and m["memory_bytes"] == 143_771 * 2**20 for m in data["modules"])
    # what the simulation does not model is null with its reason, never a made-up number
    assert data["modules"][0]["sm_clock_mhz"] is None
    assert "sm_clock_mhz" in data["modules"][0]["unavailable"]


def test_inventory_sim_terminal_says_simulated(capsys):
    code, out, _ = call(capsys, "inventory", "--sim", "mesh-4")
    assert code == 0 and "SIMULATED" in out


@pytest.mark.parametrize("name", preset_names())
def test_topo_sim_expect_same_preset_is_clean(capsys, name):
    code, out, _ = call(capsys, "topo", "--sim", name, "--expect", name, "--json")
    data = json.loads(out)
    assert code == 0 and data["differences"] == [] and data["simulated"] is True


def test_topo_reports_faults_with_exit_1(capsys, tmp_path):
    spec = tmp_path / "faulty.yaml"
    spec.write_text(yaml.safe_dump({"base": "pcie-8", "faults": [
        {"kind": "missing_module", "module": "gpu3"}, {"kind": "wiring_swap", "modules": ["gpu0", "gpu6"]}]}))
    code, out, _ = call(capsys, "topo", "--sim", str(spec), "--expect", "pcie-8", "--json")
    data = json.loads(out)
    assert code == 1
    assert sorted((d["kind"], d.get("module") or tuple(d["between"])) for d in data["differences"]) == \
        [("missing_module", "gpu3"), ("wiring_mismatch", ("gpu0", "gpu6"))]
    wiring = next(d for d in data["differences"] if d["kind"] == "wiring_mismatch")
    assert wiring["modules"] == ["gpu0", "gpu6"]


def test_topo_matrix_json_has_bandwidths(capsys):
    code, out, _ = call(capsys, "topo", "--sim", "hgx-h200-8", "--json")
    data = json.loads(out)
    assert data["matrix"]["gpu0"]["gpu1"] == {"label": "NV18", "gbps": 450.0, "assumed": False}
    assert data["host_paths"]["gpu0"]["socket"] == "cpu0"
    assert data["matrix_basis"].startswith("modelled")


def test_topo_from_capture_with_expect(capsys):
    code, out, _ = call(capsys, "topo", "--from", str(DATA / "topo_pcie_8gpu.txt"), "--expect", "pcie-8", "--json")
    data = json.loads(out)
    assert code == 0 and data["differences"] == [] and data["simulated"] is False
    assert data["matrix"]["gpu0"]["gpu1"]["label"] == "PIX" and data["matrix"]["gpu0"]["gpu1"]["assumed"] is True


def test_topo_on_this_machine(capsys):
    code, out, _ = call(capsys, "topo")
    assert code == 0


@pytest.mark.parametrize("args,expected", [
    (("topo", "--sim", "no-such-preset"), "no-such-preset"),
    (("inventory", "--sim", "hgx-h900-8"), "presets"),
    (("topo", "--from", "/nonexistent/topo.txt"), "/nonexistent/topo.txt"),
])
def test_bad_input_exit_2_without_traceback(args, expected):
    # in this process: the script's exit code is main's (test_the_script_exits_with_mains_code_…)
    code, _, err = run_here(list(args))
    assert code == 2
    assert "Traceback" not in err and expected in err


def test_malformed_spec_and_bad_fault(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("base: mesh-4\nfaults: [{kind: link_down, between: [gpu0, gpu7]}]\n")
    code, _, err = run_here(["topo", "--sim", str(bad)])
    assert code == 2 and "gpu7" in err and "faults[0]" in err and "Traceback" not in err
    broken = tmp_path / "broken.yaml"
    broken.write_text("modules: {count: 2, model: H100-SXM\n")
    code, _, err = run_here(["spec", "check", str(broken)])
    assert code == 2 and "line" in err and "Traceback" not in err


def test_unreadable_capture(tmp_path):
    junk = tmp_path / "junk.xml"
    junk.write_bytes(b"<nvidia_smi_log><gpu")
    code, _, err = run_here(["inventory", "--from", str(junk)])
    assert code == 2 and "junk.xml" in err and "Traceback" not in err


@pytest.mark.parametrize("name", preset_names())
def test_spec_export_loads_back_unchanged(capsys, tmp_path, name):
    code, out, _ = call(capsys, "spec", "export", "--sim", name)
    assert code == 0
    path = tmp_path / "exported.yaml"
    path.write_text(out)
    from gpuvet.backends.sim.backend import SimBackend

    original = SimBackend.from_ref(name).node()
    reloaded = SimBackend.from_ref(str(path)).node()
    assert reloaded.module_ids == original.module_ids
    assert set(reloaded.links) == set(original.links)
    assert set(reloaded.endpoints) == set(original.endpoints)
    assert [m.model for m in reloaded.modules] == [m.model for m in original.modules]
    code, out2, _ = call(capsys, "spec", "export", "--sim", str(path))
    assert out2 == out  # a fixed point


def test_export_of_capture_round_trips(capsys, tmp_path):
    code, out, _ = call(capsys, "spec", "export", "--from", str(DATA / "topo_v100_hybrid_cube_mesh.txt"))
    path = tmp_path / "v100.yaml"
    path.write_text(out)
    code, out2, _ = call(capsys, "spec", "export", "--sim", str(path))
    assert out2 == out


def test_spec_presets_and_catalog_json(capsys):
    code, out, _ = call(capsys, "spec", "presets", "--json")
    assert code == 0 and {r["name"] for r in json.loads(out)} >= {"hgx-h200-8", "mesh-4", "pcie-8", "grouped-16"}
    code, out, _ = call(capsys, "catalog", "--json")
    assert code == 0 and any(m["name"] == "MI300X" for m in json.loads(out))


def test_heavy_libraries_are_not_imported_for_inventory():
    code = ("import sys; from gpuvet.cli.app import main; main(['inventory', '--sim', 'hgx-h200-8', '--json']); "
            "heavy = [m for m in ('torch', 'ray', 'torchvision') if m in sys.modules]; "
            "sys.stderr.write(repr(heavy))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.stderr.strip().endswith("[]")


def test_a_reader_that_goes_away_after_a_finding_still_gets_exit_1():
    """`gpuvet topo --expect … | head -1` under pipefail: the differences were found before the
    table was drawn, so a closed pipe must not turn them into "nothing differs" (exit 0)."""
    for json_flag in ([], ["--json"]):
        proc = subprocess.Popen([sys.executable, "-m", "gpuvet", "topo", "--node", "hgx-h200-8", "--expect", "mesh-4",
                                 *json_flag], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        proc.stdout.close()
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 1 and not err.strip(), (json_flag, err.decode())


def test_the_script_exits_with_mains_code_and_still_runs_atexit_cleanup(tmp_path):
    """``run`` (the script, ``python -m gpuvet``) freezes the collector before it exits, for a
    faster exit: the exit code is still main's, and what atexit was asked to do is done."""
    assert run("topo", "--sim", "hgx-h200-8", "--expect", "mesh-4").returncode == 1
    bad = run("topo", "--sim", "no-such-preset")
    assert bad.returncode == 2 and "error" in bad.stderr
    marker = tmp_path / "cleaned"
    code = (f"import atexit, pathlib, sys; atexit.register(pathlib.Path({str(marker)!r}).touch); "
            "sys.argv = ['gpuvet', 'topo', '--sim', 'mesh-4']; from gpuvet.cli.app import run; run()")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "gpu3" in done.stdout and marker.exists()


def test_a_reader_that_goes_away_ends_the_command_with_exit_0():
    """`gpuvet topo | head -1` under `set -o pipefail`: rich's own answer to a closed pipe is exit 1,
    which gpuvet uses for a finding; the command ends quietly with 0 instead."""
    proc = subprocess.Popen([sys.executable, "-m", "gpuvet", "topo", "--node", "hgx-h200-8"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # the reader is gone before the first line is written
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and not err.strip(), err.decode()
