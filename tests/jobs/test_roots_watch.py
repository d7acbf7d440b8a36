"""Root cause first in watch (issue 42): a lost module or a downed link explains the events that
follow on its module while it lasts; watch --json lists the roots before the events, and each
explained event names its root."""

from __future__ import annotations

import json

from gpuvet.checks.events import Event, Severity
from gpuvet.cli.app import main
from gpuvet.watch.events import event_key, event_roots, root_of

W, C, INFO = Severity.WARN, Severity.CRITICAL, Severity.INFO


def _ev(kind, module, t, severity=W, **evidence):
    return Event(kind, severity, module, t, f"{kind} on {module}", evidence)


def test_a_downed_link_explains_what_follows_on_its_module_until_it_clears():
    events = [_ev("link_down", "gpu2", 10, C), _ev("throttle", "gpu2", 20), _ev("throttle", "gpu3", 25),
              _ev("nvlink_errors", "gpu2", 30), _ev("cleared", "gpu2", 40, INFO, of="link_down"),
              _ev("throttle", "gpu2", 50)]
    roots = event_roots(events)
    assert [(event_key(r.event), r.explains) for r in roots] == [("link_down/gpu2/10", (0, 1, 3, 4))]
    assert root_of(events) == {1: "link_down/gpu2/10", 3: "link_down/gpu2/10", 4: "link_down/gpu2/10"}


def test_a_lost_module_takes_its_off_bus_xid_and_a_replacement_starts_afresh():
    events = [_ev("xid", "gpu5", 100, C, code=79), _ev("xid", "gpu4", 120, C, code=79),
              _ev("module_lost", "gpu5", 160, C), _ev("module_added", "gpu5", 500, INFO), _ev("throttle", "gpu5", 600)]
    roots = event_roots(events)
    assert [r.explains for r in roots] == [(2, 0)]  # gpu4's Xid is gpu4's; the new gpu5's throttle its own
    assert root_of(events) == {0: "module_lost/gpu5/160"}


def test_no_root_without_a_lost_module_or_downed_link():
    events = [_ev("throttle", "gpu1", 5), _ev("xid", "gpu1", 9, C, code=48), _ev("cleared", "gpu1", 30, INFO, of="throttle")]
    assert event_roots(events) == [] and root_of(events) == {}


def test_watch_json_lists_roots_first_and_each_explained_event_names_its_root(capsys, tmp_path):
    spec = tmp_path / "node.yaml"
    spec.write_text("base: hgx-h200-8\nfaults:\n  - {kind: xid, module: gpu5, code: 79, at: 3h}\n"
                    "  - {kind: power_cap_low, module: gpu4, watts: 300}\n", encoding="utf-8")
    main(["watch", "--node", str(spec), "--duration", "4h", "--interval", "60s", "--speedup", "max", "--json",
          "--no-log", "--no-admission"])
    data = json.loads(capsys.readouterr().out)
    keys = list(data)
    assert keys.index("roots") < keys.index("events")
    (root,) = data["roots"]
    assert root["kind"] == "module_lost" and root["module"] == "gpu5"
    xid = next(e for e in data["events"] if e["kind"] == "xid")
    assert xid["root"] == root["key"] and root["explains"] == [root["key"], f"xid/gpu5/{xid['time']:g}"]
    assert all("root" not in e for e in data["events"] if e["module"] == "gpu4")  # the cap is its own story
    assert {"kind", "severity", "module", "uuid", "time", "message", "evidence", "node"} <= set(xid)


def test_a_replay_lists_its_roots_before_its_events(capsys):
    from tests.node.test_telemetry_real import REAL

    main(["watch", "--replay", str(REAL / "rtx4090_vlm_48min.csv"), "--json", "--no-log"])
    data = json.loads(capsys.readouterr().out)
    keys = list(data)
    assert keys.index("roots") < keys.index("events") and data["roots"] == []  # a healthy log: no root
    assert all("root" not in e for e in data["events"])


def test_an_xid_or_ecc_error_after_a_downed_link_is_a_fact_of_its_own():
    """A double-bit ECC error (Xid 48) on a module whose link is down is not explained by the link:
    it stays an event of its own, with no root, and the link's slowdowns are still taken."""
    events = [_ev("link_down", "gpu5", 0, C), _ev("xid", "gpu5", 5, C, code=48),
              _ev("ecc_uncorrectable", "gpu5", 6, C), _ev("link_degraded", "gpu5", 7)]
    roots = event_roots(events)
    assert [r.explains for r in roots] == [(0, 3)]
    assert root_of(events) == {3: "link_down/gpu5/0"}


def test_watch_json_keeps_the_xid_apart_from_the_downed_link(tmp_path, capsys):
    spec = tmp_path / "node.yaml"
    spec.write_text("base: hgx-h200-8\nfaults:\n  - {kind: link_down, between: [gpu5, nvswitch0]}\n"
                    "  - {kind: xid, module: gpu5, code: 48}\n")
    main(["watch", "--node", str(spec), "--duration", "2m", "--speedup", "max", "--no-log", "--json"])
    out = json.loads(capsys.readouterr().out)
    (root,) = [r for r in out["roots"] if r["kind"] == "link_down"]
    assert not any(k.startswith("xid/") for k in root["explains"])
    (xid,) = [e for e in out["events"] if e["kind"] == "xid"]
    assert xid.get("root") is None
