"""Issue 42, gates that never pass what they could not see: validate with no accelerator found
exits 2 (the host alone only with --host-only); fleet merge names every node's own verdict and
exits 1 when one failed; spec export refuses an empty node (--allow-empty writes it, saying
so); plan step exits 1 when the job does not fit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuvet.backends.host import HostBackend
from gpuvet.cli.app import main
from gpuvet.errors import GpuvetError
from tests.support.fleet_envelopes import write_envelopes

NO_DRIVER = ("NVIDIA: the NVML library (libnvidia-ml.so) is not installed; AMD: the amdsmi Python package is not "
             "installed (No module named 'amdsmi')")


def call(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


class Reached(GpuvetError):
    """Raised in place of the layers: the run got past the gate."""


@pytest.fixture
def no_accelerator(monkeypatch):
    """This machine as one whose GPU driver is missing, whatever the test machine has; the layers
    replaced by a marker, so a test sees whether the run got past the gate without measuring."""
    from gpuvet.backends import select
    from gpuvet.validate import run

    monkeypatch.setattr(select, "open_backend", lambda sim=None, **_: HostBackend(NO_DRIVER))
    monkeypatch.setattr(run.Validator, "run", lambda self: (_ for _ in ()).throw(Reached("reached the layers")))


# --- 1. validate with no accelerator ------------------------------------------------------------
def test_validate_with_no_accelerator_exits_2_saying_what_was_looked_for_and_how_to_fix(capsys, no_accelerator,
                                                                                      tmp_path):
    book = tmp_path / "lb.db"
    code, out, err = call(capsys, "validate", "--level", "quick", "--json", "--logbook", str(book))
    assert code == 2 and not out and "reached the layers" not in err
    assert "no accelerator was found" in err and "NVML" in err and "AMD SMI" in err
    assert "libnvidia-ml.so" in err and "amdsmi" in err  # what each vendor's library said
    assert "--node" in err and "--host-only" in err and "driver" in err
    assert not book.exists()  # refused before a run was begun in the logbook


def test_validate_host_only_judges_the_host_when_no_accelerator_is_found(capsys, no_accelerator):
    code, _, err = call(capsys, "validate", "--level", "quick", "--host-only", "--no-log")
    assert code == 2 and "reached the layers" in err and "no accelerator" not in err


def test_host_only_where_modules_were_found_is_refused_not_ignored(capsys, monkeypatch):
    from gpuvet.backends import select
    from gpuvet.backends.sim.backend import SimBackend

    monkeypatch.setattr(select, "open_backend", lambda sim=None, **_: SimBackend.from_ref("mesh-4"))
    code, _, err = call(capsys, "validate", "--level", "quick", "--host-only", "--no-log")
    assert code == 2 and "--host-only" in err and "4 module(s)" in err and "drop --host-only" in err


def test_host_only_with_sim_is_refused(capsys):
    code, _, err = call(capsys, "validate", "--sim", "mesh-4", "--host-only", "--no-log")
    assert code == 2 and "--host-only" in err and "--sim" in err


def test_a_fleet_node_without_accelerator_raises_the_refusal_and_the_runner_says_it(monkeypatch):
    """fleet validate runs the executor on each Ray node: a GPU node whose driver is missing
    gives the refusal (not a host envelope judged warn), and the runner's status shows its words
    (Ray wraps it in a remote traceback whose first 500 characters rarely reached them)."""
    from gpuvet.backends import select
    from gpuvet.fleet.executor import validate_envelope
    from gpuvet.fleet.ray_runner import error_text

    monkeypatch.setattr(select, "open_backend", lambda sim=None, **_: HostBackend(NO_DRIVER))
    with pytest.raises(GpuvetError) as refused:
        validate_envelope(None, "quick")
    assert "no accelerator was found" in refused.value.message
    exceptions = pytest.importorskip("ray.exceptions")
    import pickle

    sent = pickle.loads(pickle.dumps(refused.value))  # as Ray carries it back from the node
    wrapped = exceptions.RayTaskError("validate_envelope", "Traceback (most recent call last):\n" + " x\n" * 400,
                                      sent).as_instanceof_cause()
    said = error_text(wrapped)
    assert said.startswith("validate: no accelerator was found") and "Fix:" in said and "Traceback" not in said
    assert error_text(RuntimeError("boom")) == "RuntimeError: boom"


# --- 2. fleet merge and each node's own verdict -------------------------------------------------
def _envelope(node: str, verdict: str, fails: int) -> dict:
    checks = [{"layer": "compute", "name": "gemm_bf16", "verdict": "pass", "value": 900.0, "unit": "TFLOPS",
               "module": "gpu0"}]
    checks += [{"layer": "inventory", "name": f"link{i}", "verdict": "fail", "value": None, "unit": None}
               for i in range(fails)]
    return {"schema_version": 1, "verdict": verdict, "simulated": False,
            "environment": {"node": node, "node_type": "H200-SXM", "modules": [{"id": "gpu0", "model": "H200-SXM"}]},
            "checks": checks}


def _write(tmp_path: Path, *envs: dict) -> list[str]:
    return write_envelopes(tmp_path, list(envs))


@pytest.mark.parametrize("extra", [(), ("--jobs", "1"), ("--report", "REPORT")])
def test_merge_of_a_failed_node_exits_1_and_names_its_own_verdict(capsys, tmp_path, extra):
    paths = _write(tmp_path, _envelope("good", "pass", 0), _envelope("broken", "fail", 3))
    extra = tuple(str(tmp_path / "r.html") if e == "REPORT" else e for e in extra)
    code, out, _ = call(capsys, "fleet", "merge", *paths, "--json", *extra)
    data = json.loads(out)
    assert code == 1 and data["outliers"] == [] and data["failed_nodes"] == ["broken"]
    nodes = {n["node"]: n for n in data["nodes"]}
    assert nodes["broken"]["verdict"] == "fail" and nodes["broken"]["fails"] == 3
    assert nodes["good"]["verdict"] == "pass" and nodes["good"]["fails"] == 0
    assert nodes["broken"]["source"] == paths[1]
    code, out, _ = call(capsys, "fleet", "merge", *paths, *extra)
    assert code == 1
    table = out.split("outliers among peers")[0]  # the nodes come before the outliers
    assert "broken" in table and "fail" in table and "1 whose own validate failed" in table


def test_merge_of_passing_nodes_still_exits_0_and_lists_them(capsys, tmp_path):
    paths = _write(tmp_path, _envelope("a", "pass", 0), _envelope("b", "warn", 0))
    code, out, _ = call(capsys, "fleet", "merge", *paths, "--json")
    data = json.loads(out)
    assert code == 0 and data["failed_nodes"] == [] and [n["verdict"] for n in data["nodes"]] == ["pass", "warn"]


def test_a_node_whose_checks_failed_under_a_pass_verdict_is_still_a_failed_node(capsys, tmp_path):
    paths = _write(tmp_path, _envelope("a", "pass", 0), _envelope("b", "pass", 1))
    code, out, _ = call(capsys, "fleet", "merge", *paths, "--json")
    assert code == 1 and json.loads(out)["failed_nodes"] == ["b"]


def test_an_envelope_verdict_that_is_none_of_the_four_is_refused_by_both_readers(tmp_path):
    from gpuvet.fleet import fold
    from gpuvet.fleet.peers import PeerTable

    (path,) = _write(tmp_path, _envelope("a", "great", 0))
    for reader in (fold.fold_file, fold.fold_figures):
        with pytest.raises(GpuvetError, match="verdict is not one of pass, warn, fail, skip"):
            reader(PeerTable(), path)


# --- 3. spec export of a node where no module was found ---------------------------------------
CAPTURES = Path(__file__).parent.parent / "data" / "captures"


@pytest.mark.parametrize("source", ["machine", "capture"])
@pytest.mark.parametrize("extra", [(), ("--allow-missing",), ("--json",), ("-o", "OUT")])
def test_spec_export_with_no_module_is_refused(capsys, monkeypatch, tmp_path, source, extra):
    from gpuvet.backends import select

    real_open = select.open_backend  # the machine: its host backend, whatever the test machine has
    monkeypatch.setattr(select, "open_backend", lambda sim=None, from_files=None, **k:
                        real_open(sim, from_files) if from_files else HostBackend(NO_DRIVER))
    target = tmp_path / "node.yaml"
    args = tuple(str(target) if a == "OUT" else a for a in extra)
    where = ("--from", str(CAPTURES / "dmesg_xid.txt")) if source == "capture" else ()
    code, out, err = call(capsys, "spec", "export", *where, *args)
    assert code == 2 and not out and not target.exists()
    assert "no module was found" in err and "empty node" in err and "--allow-empty" in err
    assert ("dmesg_xid.txt" in err) if source == "capture" else ("libnvidia-ml.so" in err)


def test_spec_export_allow_empty_writes_it_saying_so(capsys, monkeypatch, tmp_path):
    from gpuvet.backends import select
    from gpuvet.node.spec import load_spec

    monkeypatch.setattr(select, "open_backend", lambda sim=None, from_files=None, **_: HostBackend(NO_DRIVER))
    target = tmp_path / "node.yaml"
    code, out, err = call(capsys, "spec", "export", "--allow-empty", "-o", str(target), "--json")
    assert code == 0 and json.loads(out) == {"wrote": str(target), "empty": True}
    assert "note: no module was found" in err and "empty node" in err
    spec, _ = load_spec(str(target))
    assert spec.description and "no module was found" in spec.description and "--allow-empty" in spec.description
    assert "# empty: no module was found" in target.read_text()
    code, out, err = call(capsys, "spec", "export", "--allow-empty", "--json")
    assert code == 0 and "empty node" in json.loads(out)["description"] and json.loads(out)["modules"] == []


def test_spec_export_of_a_node_with_modules_says_nothing_of_empty(capsys):
    code, out, err = call(capsys, "spec", "export", "--sim", "mesh-4")
    assert code == 0 and "empty" not in out + err and "gpu3" in out


# --- 4. plan step that does not fit ----------------------------------------------------------------
@pytest.mark.parametrize("fmt", [(), ("--json",)])
def test_plan_step_that_does_not_fit_exits_1(capsys, fmt):
    code, out, _ = call(capsys, "plan", "step", "--node", "mesh-4", "--params", "400B", *fmt)
    assert code == 1
    assert ("DOES NOT FIT" in out) if not fmt else (json.loads(out)["plans"][0]["fits"] is False)


def test_plan_step_exits_1_when_one_compared_node_does_not_fit(capsys):
    """13B fits eight H200s (141 GB each) but not four H100s (80 GB): the comparison is a finding."""
    code, out, _ = call(capsys, "plan", "step", "--node", "hgx-h200-8", "--compare", "mesh-4", "--params", "13B",
                        "--json")
    assert [p["fits"] for p in json.loads(out)["plans"]] == [True, False] and code == 1


def test_plan_step_that_fits_exits_0(capsys):
    code, out, _ = call(capsys, "plan", "step", "--node", "mesh-4", "--json")
    assert code == 0 and json.loads(out)["plans"][0]["fits"] is True


# --- topo on a machine with no accelerator says why, as inventory does -----------------------------
def test_topo_with_no_accelerator_names_what_was_looked_for(capsys, monkeypatch):
    """`topo --expect` on a machine without a driver listed every declared module as missing and never said
    that no NVML or AMD SMI was there (a newcomer's run): the host backend's note says why, in text and JSON."""
    from gpuvet.backends import select

    monkeypatch.setattr(select, "open_backend", lambda sim=None, **_: HostBackend(NO_DRIVER))
    code, out, _ = call(capsys, "topo", "--expect", "hgx-h200-8")
    assert code == 1 and "missing_module" in out and NO_DRIVER in " ".join(out.split())
    code, out, _ = call(capsys, "topo", "--json")
    assert code == 0 and any(NO_DRIVER in n for n in json.loads(out)["notes"])
