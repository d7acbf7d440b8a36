"""Issue 42: a module that fell off the bus (an off-bus Xid, 79) stops reporting readings, as a
module_lost module does: watch's samples, its live table, the logbook and Prometheus; validate
finds it missing. Which Xids do that is the knowledge base's (xids.yaml ``off_bus``)."""

import json

from gpuvet import knowledge
from gpuvet.cli.app import main
from gpuvet.logbook.store import Logbook
from gpuvet.watch.loop import WatchConfig, Watcher
from gpuvet.watch.prometheus import ExportState

XID79 = [{"kind": "xid", "module": "gpu5", "code": 79, "at": "1h"}]
GPU5 = "GPU-sim-hgx-h200-8-gpu5"


def test_the_knowledge_base_names_79_as_off_the_bus_and_each_such_xid_drains():
    assert 79 in knowledge.off_bus_xids() and 13 not in knowledge.off_bus_xids()
    assert all(knowledge.xid(c).drains for c in knowledge.off_bus_xids())


def test_telemetry_carries_the_xid_on_the_last_reading_then_none(faulty):
    tel = faulty("hgx-h200-8", XID79).telemetry()
    seen = [(s.t, s.xids) for t in range(0, 3 * 3600, 60) for s in tel.sample(float(t), slow=t % 300 == 0)
            if s.module == "gpu5"]
    assert seen[-1] == (3600.0, (79,)) and all(t < 3600 for t, _ in seen[:-1])
    assert "gpu5" not in {m.id for m in tel.present(2 * 3600.0)}


def test_watch_loses_the_module_and_stops_storing_and_serving_it(faulty, tmp_path):
    book, state = Logbook(tmp_path / "lb.db"), ExportState()
    result = Watcher(faulty("hgx-h200-8", XID79), WatchConfig(interval_s=60, duration_s=3 * 3600, speedup=None),
                     book, export=state).run()
    kinds = [(e.kind, e.module, e.time) for e in result.events if e.module == "gpu5"]
    assert kinds == [("xid", "gpu5", 3600.0), ("module_lost", "gpu5", 3660.0)]
    assert {m["uuid"]: m["state"] for m in result.modules.values()}[GPU5] == "lost"
    last = book.db.execute("SELECT MAX(s.t) FROM samples s JOIN modules m ON m.mkey = s.mkey WHERE m.uuid = ?",
                           (GPU5,)).fetchone()[0]
    assert last == 3600.0
    assert GPU5 not in state.latest and len(state.latest) == 7


def test_watch_live_table_drops_the_module(tmp_path, capsys):
    spec = tmp_path / "x79.yaml"
    spec.write_text("base: hgx-h200-8\nfaults:\n  - {kind: xid, module: gpu5, code: 79, at: 1h}\n")
    code = main(["watch", "--node", str(spec), "--duration", "3h", "--interval", "1m", "--speedup", "max",
                 "--no-log"])
    out = capsys.readouterr().out
    table = out[out.rindex("gpuvet watch — t = 3.0h"):]
    assert code == 1 and "gpu4 " in table and "\ngpu5 " not in table and "lost: gpu5" in table


def test_validate_finds_a_module_lost_before_the_run_missing(tmp_path, capsys):
    spec = tmp_path / "x79.yaml"
    spec.write_text("base: hgx-h200-8\nfaults:\n  - {kind: xid, module: gpu5, code: 79, at: 0s}\n")
    code = main(["validate", "--node", str(spec), "--level", "quick", "--json", "--no-log"])
    data = json.loads(capsys.readouterr().out)
    failed = {(c["key"] if "key" in c else c["name"]) for c in data["checks"] if c["verdict"] == "fail"}
    assert code == 1 and any("missing_module" in k for k in failed), failed
    assert any("gpu5" in r["subject"] for r in data["roots"])
