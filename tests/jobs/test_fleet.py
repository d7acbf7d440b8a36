"""Fleet: peer analysis over envelopes, merge from files, a real local Ray cluster of simulated
nodes, and a 2-node × 2-process gloo all_reduce through torchrun-style rendezvous."""

import json
import os
import subprocess
import sys

import pytest
import yaml

from gpuvet.errors import GpuvetError
from gpuvet.fleet.executor import validate_envelope
from gpuvet.fleet.peers import analyse
from tests.support.helpers import call
from tests.support.ports import free_port

DEGRADED = [{"kind": "link_degraded", "between": ["gpu1", "nvswitch0"], "factor": 0.5}]
SLOW_MODULE = [{"kind": "power_cap_low", "module": "gpu5", "watts": 450}]



def write_specs(folder, count=6, base="hgx-h200-8", faults_at=None):
    faults_at = faults_at if faults_at is not None else {2: DEGRADED, 4: SLOW_MODULE}
    paths = []
    for i in range(count):
        p = folder / f"node{i:02d}.yaml"
        p.write_text(yaml.safe_dump({"base": base, "name": f"node{i:02d}", "faults": faults_at.get(i, [])}))
        paths.append(p)
    return paths


@pytest.fixture(scope="module")
def envelope_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fleet")
    files = []
    for spec in write_specs(folder):
        out = folder / f"{spec.stem}.json"
        out.write_text(json.dumps(validate_envelope(str(spec), "quick")))
        files.append(out)
    return files


def test_merge_names_exactly_the_outlying_nodes(capsys, envelope_files, tmp_path):
    code, out, _ = call(capsys, "fleet", "merge", *map(str, envelope_files), "--json", "--report",
                        str(tmp_path / "fleet.html"), "--baseline-out", str(tmp_path / "fleet-baseline.json"))
    data = json.loads(out)
    assert code == 1  # nodes stand out
    assert {o["node"] for o in data["outliers"]} == {"node02", "node04"}
    for o in data["outliers"]:
        assert {"node", "metric", "value", "fleet_median", "score"} <= set(o)
    slow = [o for o in data["outliers"] if o["node"] == "node04" and o["metric"] == "gemm_bf16"]
    assert [o["module"] for o in slow] == ["gpu5"] and slow[0]["score"] < -5
    links = {tuple(o["between"]) for o in data["outliers"] if o["node"] == "node02" and o["metric"] == "p2p_one_way"}
    assert links and all("gpu1" in pair for pair in links)  # every slow pair crosses gpu1's degraded link
    html = (tmp_path / "fleet.html").read_text()
    assert "node02" in html and '<svg class="plot"' in html
    base = json.loads((tmp_path / "fleet-baseline.json").read_text())
    assert sorted(set(base["runs"])) == ["node00", "node01", "node03", "node05"]  # the healthy majority


def test_node_types_are_analysed_apart_and_schemas_never_mixed(tmp_path, envelope_files):
    envs = [(str(f), json.loads(f.read_text())) for f in envelope_files]
    mesh = [(f"m{i}", validate_envelope("mesh-4", "quick")) for i in range(3)]
    for i, (_, e) in enumerate(mesh):
        e["environment"]["node"] = f"mesh{i}"
    analysis = analyse(envs + mesh)
    assert set(analysis.node_types) == {"H200-SXM", "H100-SXM"}
    assert {o.node for o in analysis.outliers} == {"node02", "node04"}
    old = json.loads(envelope_files[0].read_text())
    old["schema_version"] = 0
    old["environment"]["node"] = "an-older-node"  # another node: the same one twice is refused as such
    with pytest.raises(GpuvetError, match="different schema versions"):
        analyse(envs + [("old.json", old)])


def test_merge_bad_files_are_clear_errors(capsys, tmp_path):
    junk = tmp_path / "junk.json"
    junk.write_text("{not json")
    code, _, err = call(capsys, "fleet", "merge", str(junk))
    assert code == 2 and "junk.json" in err
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"hello": 1}))
    code, _, err = call(capsys, "fleet", "merge", str(other))
    assert code == 2 and "validate --json" in err


def test_unreachable_ray_address_is_a_clear_error(capsys):
    pytest.importorskip("ray")
    code, _, err = call(capsys, "fleet", "validate", "--ray", "127.0.0.1:1", "--timeout", "5")
    assert code == 2 and "cannot reach the Ray cluster at 127.0.0.1:1" in err


def _warm_worker(folder: str, workers: int, spec: str) -> int:
    """Import gpuvet's validate and run it once on a one-module spec (its first call loads the
    presets and the knowledge files), then wait until ``workers`` of these run at once: each is
    then its own worker, and the fleet run's tasks find them idle."""
    import time
    from pathlib import Path

    validate_envelope(spec, "standard")
    Path(folder, str(os.getpid())).touch()
    deadline = time.monotonic() + 60
    while len(os.listdir(folder)) < workers and time.monotonic() < deadline:
        time.sleep(0.02)
    return os.getpid()


def _warm_workers(ray, address: str, folder) -> None:
    """Start a worker per simulated node before the clock starts (the same job, so the fleet run
    reuses them): the timeout then measures the validation, not Python start-up of a fresh worker
    on a runner whose cores are taken."""
    ray.init(address=address, ignore_reinit_error=True, logging_level="ERROR", log_to_driver=False)
    tiny = folder / "tiny.yaml"
    tiny.write_text(yaml.safe_dump({"name": "tiny", "modules": {"count": 1, "model": "H100-SXM"}}))
    (folder / "up").mkdir()
    warm = ray.remote(_warm_worker)
    refs = [warm.options(num_cpus=0.5, resources={"gpuvet_sim": 0.01}).remote(str(folder / "up"), 2, str(tiny))
            for _ in range(2)]
    assert len(set(ray.get(refs, timeout=120))) == 2


def test_a_node_with_n_units_of_gpuvet_sim_holds_n_simulated_nodes():
    from gpuvet.fleet.ray_runner import sim_slots

    assert sim_slots([2.0, 1.0, 0.5]) == [0, 1, 2, 0]  # round the machines first; a part unit is one
    assert sim_slots([3.0]) == [0, 0, 0] and sim_slots([]) == []


@pytest.mark.slow
def test_fleet_validate_on_a_local_ray_cluster(tmp_path, capsys, monkeypatch):
    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    # One raylet holds both simulated nodes (gpuvet_sim=2): a second raylet and its two agents cost
    # 2-4 s beside busy loops. The small node (0.07 s quiet in a warmed worker, 0.3 s beside two busy
    # loops and the hanging node's task) finishes well inside a 2 s timeout; a 576-module switched
    # domain validated at standard (every pair) never does (its quick level alone takes 7 s), and
    # holds a core only until the timeout. Outliers are tested on merged files above.
    (small,) = write_specs(tmp_path, count=1, base="mesh-4")
    huge = tmp_path / "node-hangs.yaml"
    huge.write_text(yaml.safe_dump({"name": "node-hangs", "modules": {"count": 576, "model": "B200"},
                                    "fabric": {"kind": "switched", "link": {"kind": "nvlink", "width": 18,
                                                                             "lane_gbps": 50}},
                                    "host": {"sockets": 2}}))
    # Ray starts its workers at niceness 15: beside a runner's busy loops they get a few per cent of a
    # core and importing gpuvet takes 15 s instead of 1 s. The test cluster runs them at 0.
    # No dashboard, usage report, autoscaler monitor or log monitor: Python processes fewer starting
    # beside the loops.
    monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", "0")
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "resources": {"gpuvet_sim": 2},
                                                            "object_store_memory": 80 * 2**20,
                                                            "include_dashboard": False, "no_monitor": True,
                                                            "include_log_monitor": False,
                                                            "_system_config": {"worker_niceness": 0}})
    try:
        _warm_workers(ray, cluster.address, tmp_path)
        code, out, err = call(capsys, "fleet", "validate", "--ray", cluster.address, "--timeout", "2",
                              "--level", "standard", "--sim", str(small), "--sim", str(huge), "--json",
                              "--logbook", str(tmp_path / "lb.db"))
    finally:
        ray.shutdown()
        cluster.shutdown()
    assert out, err
    data = json.loads(out)
    status = {n["node"]: n["status"] for n in data["nodes"]}
    assert code == 1  # a node that gave no result is a finding
    assert status == {"node00": "ok", "node-hangs": "timed_out"}  # the small one is not held up
    assert len({n["ray_node"] for n in data["nodes"]}) == 1  # both on the one raylet's two units
    (late,) = [n for n in data["nodes"] if n["status"] == "timed_out"]
    assert "2 s" in json.dumps(late)


@pytest.mark.slow
def test_two_nodes_by_two_processes_gloo_all_reduce_through_rendezvous(tmp_path):
    port = free_port()
    procs = []
    for rank in range(4):
        env = {**os.environ, "RANK": str(rank), "WORLD_SIZE": "4", "LOCAL_RANK": str(rank % 2),
               "LOCAL_WORLD_SIZE": "2", "GROUP_RANK": str(rank // 2), "MASTER_ADDR": "127.0.0.1",
               "MASTER_PORT": str(port), "GLOO_SOCKET_IFNAME": "lo", "OMP_NUM_THREADS": "1"}
        procs.append(subprocess.Popen([sys.executable, "-m", "gpuvet", "bench", "collective", "--torchrun", "--json",
                                       "--quick", "--ops", "all_reduce", "--min-bytes", "1024", "--max-bytes",
                                       "262144", "--factor", "16"],
                                      env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path))
    outs = [p.communicate(timeout=180) for p in procs]
    assert all(p.returncode == 0 for p in procs), [e[-1500:] for _, e in outs]
    data = json.loads(outs[0][0])  # rank 0 reports
    assert all(not o.strip() for o, _ in outs[1:])
    busbw = [r for r in data["results"] if r["metric"] == "busbw"]
    assert {r["detail"]["ranks"] for r in busbw} == {4} and {r["size_bytes"] for r in busbw} == {1024, 16384, 262144}
    assert all(r["correct"] is True and r["value"] > 0 for r in busbw)
    # busbw = algbw × 2(n-1)/n with n = 4
    algbw = {r["size_bytes"]: r["value"] for r in data["results"] if r["metric"] == "algbw"}
    assert all(r["value"] == pytest.approx(algbw[r["size_bytes"]] * 1.5) for r in busbw)


def test_an_envelope_reads_the_same_with_orjson_and_without(tmp_path, monkeypatch):
    """orjson (the fleet extra) reads envelopes fast; what it refuses and json reads goes to json."""
    import math

    from gpuvet.fleet.fold import read_envelope

    pytest.importorskip("orjson")
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps({"schema_version": 1, "environment": {"node": "n1", "node_type": "H200 · SXM"},
                                 "checks": [{"name": "gemm", "value": 1.5e3, "module": "gpu0"}]}), encoding="utf-8")
    odd = tmp_path / "odd.json"  # Python's json writes NaN (orjson refuses it) and big integers
    odd.write_text('{"schema_version": 1, "checks": [{"value": NaN}, {"value": 123456789012345678901234567890}]}',
                   encoding="utf-8")
    fast = [read_envelope(plain), read_envelope(odd)]
    monkeypatch.setitem(sys.modules, "orjson", None)  # as if the extra were not installed
    slow = [read_envelope(plain), read_envelope(odd)]
    assert fast[0] == slow[0] == json.loads(plain.read_text(encoding="utf-8"))
    assert math.isnan(fast[1]["checks"][0]["value"]) and math.isnan(slow[1]["checks"][0]["value"])
    assert fast[1]["checks"][1] == slow[1]["checks"][1] == {"value": 123456789012345678901234567890}
    broken = tmp_path / "broken.json"
    broken.write_text('{"schema_version": 1,', encoding="utf-8")
    with pytest.raises(ValueError):
        read_envelope(broken)


def test_the_fleet_page_reads_envelopes_as_the_schema_would_and_refuses_what_it_refuses():
    """The page reads each node's figures straight off the envelope (validating thousands of
    whole envelopes again took minutes): the same page as from validated documents, and a
    malformed envelope still gets the schema's words."""
    from gpuvet.logbook.document import as_document
    from gpuvet.report.html import fleet_page

    envs = []
    for i in range(4):
        env = validate_envelope("mesh-4", "quick")
        env["environment"]["node"] = f"mesh{i}"
        if i == 1:
            env["checks"] = [dict(c, value=c["value"] * 0.5) if isinstance(c.get("value"), float) else c
                             for c in env["checks"]]
        envs.append((f"m{i}.json", env))
    analysis = analyse(envs)
    assert analysis.outliers  # the page draws the flagged metrics too
    documents = [(w, as_document(e, w)) for w, e in envs]
    assert fleet_page(analysis, envs, []) == fleet_page(analysis, documents, [])
    broken = {**envs[0][1], "checks": [*envs[0][1]["checks"], "not a check"]}
    with pytest.raises(GpuvetError, match="not a gpuvet run document") as err:
        fleet_page(analysis, [("broken.json", broken)], [])
    assert err.value.where == "broken.json"


def test_merge_of_simulated_runs_says_simulated_in_its_text(capsys, envelope_files, tmp_path):
    code, out, _ = call(capsys, "fleet", "merge", *map(str, envelope_files))
    assert code == 1 and out.startswith("SIMULATED"), out[:200]
    real = tmp_path / "real.json"  # the same figures as if measured: no banner
    real.write_text(json.dumps({**json.loads(envelope_files[0].read_text()), "simulated": False}))
    _, out, _ = call(capsys, "fleet", "merge", str(real))
    assert out.startswith("H200-SXM: 1 node") and "SIMULATED" not in out, out[:200]
