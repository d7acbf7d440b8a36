"""The Prometheus recipes (examples/prometheus/), the Grafana dashboard and the Kubernetes
manifests, checked by the tools their users run: promtool (check config, check rules, test
rules, check metrics) and a real Prometheus (Debian's package) loading the shipped rules and
scraping `gpuvet watch --sim` of a faulty and a healthy node; kubernetes-validate's schemas
for the built-in Kubernetes kinds. No network: everything runs on loopback."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from gpuvet import knowledge
from tests.support.ports import free_port
from tests.support.prometheus_server import api, go_env, require_prometheus, running_prometheus

ROOT = Path(__file__).resolve().parents[2]
RECIPES = ROOT / "examples" / "prometheus"
CONFIG, RULES, RULE_TESTS = RECIPES / "prometheus.yml", RECIPES / "gpuvet-rules.yml", RECIPES / "gpuvet-rules.test.yml"
DASHBOARD = ROOT / "docs" / "grafana" / "gpuvet-modules.json"
MANIFESTS = ROOT / "examples" / "kubernetes" / "gpuvet-watch.yaml"
JOB = "gpuvet-watch"
# a fatal Xid, an overheating forecast (gpu2's thermal interface ageing), a throttle (gpu6's low
# power cap): every dashboard panel has something to show
FAULTY = """base: hgx-h200-8
name: rack3-node7
faults:
  - {kind: xid, module: gpu5, code: 79}
  - {kind: thermal_creep, module: gpu2, c_per_watt_per_day: 0.006, start: 0h}
  - {kind: power_cap_low, module: gpu6, watts: 300}
"""
# each event kind gpuvet raises at warn or critical (src/gpuvet/checks, src/gpuvet/watch), and
# the alert that carries it with its severity (gpuvet's warn is Alertmanager's warning)
KIND_ALERTS = {
    "module_lost": [("GpuvetModuleLost", "critical")],
    "ecc_uncorrectable": [("GpuvetEccUncorrectable", "critical")],
    "xid": [("GpuvetFatalXid", "critical"), ("GpuvetXid", "warning")],
    "throttle": [("GpuvetThrottle", "warning")],
    "clock_flapping": [("GpuvetClockFlapping", "warning")],
    "pcie_replays": [("GpuvetPcieReplays", "warning")],
    "link_down": [("GpuvetLinkDown", "critical")],
    "link_degraded": [("GpuvetLinkDegraded", "warning")],
    "nvlink_errors": [("GpuvetFabricLinkErrors", "warning")],
    "ecc_rising": [("GpuvetEccRising", "warning")],
    "module_quarantined": [("GpuvetModuleQuarantined", "warning")],
    "overheat_forecast": [("GpuvetOverheatForecast", "warning")],
    "nic_errors": [("GpuvetNicErrors", "warning")],
}
NIC_ALERTS = {"GpuvetNicPortDown", "GpuvetNicRateLow"}  # a NIC's: named by device, not module (issue 47)
EXPORTER_ALERTS = {"GpuvetTargetDown", "GpuvetTargetVanished", "GpuvetTargetsAbsent", "GpuvetModuleStoppedReporting"}
LEDGER_ALERTS = {"GpuvetModuleLadderAction"}  # the module ledger's step (gpuvet_module_ladder_step, issue 44)


def alerts_in(path: Path = RULES) -> dict[str, dict]:
    return {r["alert"]: r for g in yaml.safe_load(path.read_text())["groups"] for r in g["rules"] if "alert" in r}


def promtool(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    require_prometheus()
    return subprocess.run(["promtool", *args], input=stdin, capture_output=True, text=True, timeout=60, cwd=RECIPES,
                          env=go_env())


# ---- promtool on the shipped files ----

def test_promtool_checks_the_scrape_config_and_the_rules(tmp_path):
    config = promtool("check", "config", str(CONFIG))
    assert config.returncode == 0, config.stdout + config.stderr
    assert "1 rule files found" in config.stdout  # the config loads the rules (and checks them too)
    rules = promtool("check", "rules", str(RULES))
    assert rules.returncode == 0, rules.stdout + rules.stderr
    assert re.search(r"SUCCESS: \d+ rules found", rules.stdout)
    # the check itself can fail: a rule with a broken expression is refused
    broken = tmp_path / "broken.yml"
    broken.write_text(RULES.read_text().replace("expr: up{job=\"gpuvet-watch\"} == 0", "expr: up{job=\"gpuvet-watch\" == 0"))
    assert broken.read_text() != RULES.read_text()
    assert promtool("check", "rules", str(broken)).returncode != 0


def test_promtool_unit_tests_of_every_alert_pass():
    got = promtool("test", "rules", str(RULE_TESTS))
    assert got.returncode == 0, got.stdout + got.stderr
    tests = yaml.safe_load(RULE_TESTS.read_text())["tests"]
    fired = {t["alertname"] for test in tests for t in test.get("alert_rule_test", []) if t.get("exp_alerts")}
    healthy = next(test for test in tests if test["name"] == "a healthy node fires no alert")
    silent = {t["alertname"] for t in healthy["alert_rule_test"] if t["exp_alerts"] == []}
    assert fired == set(alerts_in()), "every alert has a test in which it fires"
    assert silent == set(alerts_in()), "and none fires on the healthy node"


def test_every_event_kind_gpuvet_raises_has_an_alert_at_its_severity():
    raised: dict[str, set[str]] = {}
    for path in [*(ROOT / "src" / "gpuvet" / "checks").glob("*.py"), *(ROOT / "src" / "gpuvet" / "watch").glob("*.py")]:
        for m in re.finditer(r'Event\(((?:"\w+"(?: if [^,]+ else )?)+),\s*(Severity\.\w+(?: if [^,]+ else Severity\.\w+)?)',
                             path.read_text()):
            kinds, severities = re.findall(r'"(\w+)"', m.group(1)), re.findall(r"Severity\.(\w+)", m.group(2))
            pairs = zip(kinds, severities, strict=True) if len(kinds) == len(severities) else \
                ((k, s) for k in kinds for s in severities)
            for kind, severity in pairs:
                raised.setdefault(kind, set()).add(severity)
    # the Xid detector takes each code's severity from the knowledge base (xids.yaml), not a literal
    raised.setdefault("xid", set()).update(x.severity.upper() for x in knowledge.xids().values())
    assert {"module_lost", "throttle", "overheat_forecast"} <= set(raised)  # the scan finds them
    serious = {k: s - {"INFO"} for k, s in raised.items() if s - {"INFO"}}
    assert set(serious) == set(KIND_ALERTS), "an event kind gpuvet raises at warn or critical has no alert"
    alerts = alerts_in()
    for kind, severities in serious.items():
        expected = {"CRITICAL": "critical", "WARN": "warning"}
        assert {expected[s] for s in severities} == {sev for _, sev in KIND_ALERTS[kind]}, kind
        for name, severity in KIND_ALERTS[kind]:
            assert alerts[name]["labels"]["severity"] == severity, name
    # the fatal Xids the rules select are the knowledge base's critical ones (knowledge/xids.yaml)
    for name in ("GpuvetFatalXid", "GpuvetXid"):
        codes = re.findall(r'xid=~"([\d|]+)"', alerts[name]["expr"])
        assert codes and all({int(c) for c in group.split("|")} == knowledge.fatal_xids() for group in codes), name


def test_every_alert_has_a_severity_a_for_and_names_its_module_and_node():
    alerts = alerts_in()
    assert set(alerts) == ({a for pairs in KIND_ALERTS.values() for a, _ in pairs} | EXPORTER_ALERTS | NIC_ALERTS
                           | LEDGER_ALERTS)
    for name, rule in alerts.items():
        assert rule["labels"]["severity"] in ("critical", "warning"), name
        assert re.fullmatch(r"\d+[smh]", str(rule.get("for", ""))), f"{name}: no for:"
        text = rule["annotations"]["summary"] + rule["annotations"]["description"]
        assert rule["annotations"]["summary"] and rule["annotations"]["description"], name
        if name != "GpuvetTargetsAbsent":  # absent() has no node to name: it says no node is watched
            assert "$labels.node" in rule["annotations"]["summary"], name
        if name in NIC_ALERTS or name == "GpuvetNicErrors":
            assert "$labels.device" in text, name
        elif name not in {"GpuvetTargetDown", "GpuvetTargetVanished", "GpuvetTargetsAbsent"}:
            assert "$labels.module" in text or "$labels.gpu" in text, name
        assert JOB in rule["expr"] or "gpuvet" in rule["expr"] or "DCGM" in rule["expr"], name
    for name in ("GpuvetTargetDown", "GpuvetTargetVanished", "GpuvetTargetsAbsent"):
        assert f'up{{job="{JOB}"}}' in alerts[name]["expr"], name
    jobs = [job["job_name"] for job in yaml.safe_load(CONFIG.read_text())["scrape_configs"]]
    assert jobs == [JOB]


# ---- Kubernetes manifests ----

def manifests() -> list[dict]:
    return [d for d in yaml.safe_load_all(MANIFESTS.read_text()) if d]


@pytest.mark.parametrize("version", ["1.29.0", "latest"])
def test_kubernetes_manifests_validate_against_the_schemas(version):
    kv = pytest.importorskip("kubernetes_validate", reason="pip install kubernetes-validate (the test extra)")
    version = kv.latest_version() if version == "latest" else version
    built_in = [d for d in manifests() if not d["apiVersion"].startswith("monitoring.coreos.com/")]
    assert {d["kind"] for d in built_in} == {"Namespace", "DaemonSet", "Service"}
    for doc in built_in:
        kv.validate(doc, version, strict=True)  # strict: an unknown (misspelt) field is an error
    # the check can fail: a misspelt field of the DaemonSet's container is refused
    daemonset = next(d for d in built_in if d["kind"] == "DaemonSet")
    bad = json.loads(json.dumps(daemonset))
    bad["spec"]["template"]["spec"]["containers"][0]["readinessProbes"] = bad["spec"]["template"]["spec"][
        "containers"][0].pop("readinessProbe")
    with pytest.raises(kv.ValidationError):
        kv.validate(bad, version, strict=True)


# the fields of monitoring.coreos.com/v1 ServiceMonitor the manifest uses, with the CRD's required
# fields, patterns and relabeling keys (prometheus-operator's servicemonitors CRD)
DURATION = r"^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$"
LABEL = r"^[a-zA-Z_][a-zA-Z0-9_]*$"
SERVICE_MONITOR = {
    "type": "object",
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "properties": {
        "apiVersion": {"const": "monitoring.coreos.com/v1"},
        "kind": {"const": "ServiceMonitor"},
        "metadata": {"type": "object", "required": ["name", "namespace", "labels"],
                     "properties": {"labels": {"type": "object", "required": ["release"],
                                               "additionalProperties": {"type": "string"}}}},
        "spec": {
            "type": "object",
            "required": ["selector", "endpoints"],
            "additionalProperties": False,
            "properties": {
                "jobLabel": {"type": "string"},
                "selector": {"type": "object", "required": ["matchLabels"],
                             "properties": {"matchLabels": {"type": "object", "minProperties": 1,
                                                            "additionalProperties": {"type": "string"}}}},
                "namespaceSelector": {"type": "object", "additionalProperties": False,
                                      "properties": {"any": {"type": "boolean"},
                                                     "matchNames": {"type": "array", "items": {"type": "string"}}}},
                "endpoints": {"type": "array", "minItems": 1, "items": {
                    "type": "object", "required": ["port"], "additionalProperties": False,
                    "properties": {
                        "port": {"type": "string"}, "path": {"type": "string", "pattern": "^/"},
                        "interval": {"type": "string", "pattern": DURATION},
                        "scrapeTimeout": {"type": "string", "pattern": DURATION},
                        "relabelings": {"type": "array", "items": {
                            "type": "object", "additionalProperties": False,
                            "properties": {"action": {"enum": ["replace", "keep", "drop", "hashmod", "labelmap",
                                                               "labeldrop", "labelkeep", "lowercase", "uppercase",
                                                               "keepequal", "dropequal"]},
                                           "sourceLabels": {"type": "array", "items": {"type": "string",
                                                                                       "pattern": LABEL}},
                                           "targetLabel": {"type": "string"}, "regex": {"type": "string"},
                                           "replacement": {"type": "string"}, "separator": {"type": "string"},
                                           "modulus": {"type": "integer"}}}}}}},
            },
        },
    },
}


def test_the_service_monitor_selects_the_service_and_is_selected_by_kube_prometheus_stack():
    jsonschema = pytest.importorskip("jsonschema", reason="pip install kubernetes-validate (brings jsonschema)")
    docs = {d["kind"]: d for d in manifests()}
    monitor, service, daemonset = docs["ServiceMonitor"], docs["Service"], docs["DaemonSet"]
    jsonschema.validate(monitor, SERVICE_MONITOR)
    with pytest.raises(jsonschema.ValidationError):  # the structural check can fail: no release label
        jsonschema.validate({**monitor, "metadata": {**monitor["metadata"], "labels": {"app": "x"}}}, SERVICE_MONITOR)
    # kube-prometheus-stack's Prometheus selects ServiceMonitors labelled release: <its Helm release>
    assert monitor["metadata"]["labels"]["release"] == "kube-prometheus-stack"
    assert re.search(r"release: kube-prometheus-stack +#.*release", MANIFESTS.read_text())
    # the chain: ServiceMonitor -> Service (labels, namespace, port name) -> DaemonSet's pods and port
    spec = monitor["spec"]
    assert spec["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    assert service["metadata"]["namespace"] in spec["namespaceSelector"]["matchNames"]
    ports = {p["name"]: p for p in service["spec"]["ports"]}
    assert {e["port"] for e in spec["endpoints"]} <= set(ports)
    pod = daemonset["spec"]["template"]
    assert service["spec"]["selector"].items() <= pod["metadata"]["labels"].items()
    container_ports = {p["name"]: p["containerPort"] for c in pod["spec"]["containers"] for p in c.get("ports", [])}
    assert all(p["targetPort"] in container_ports for p in ports.values())
    # the container serves where the Service points, and the rules' job name is the Service's
    command = pod["spec"]["containers"][0]["command"]
    assert command[command.index("--prometheus") + 1].endswith(f":{container_ports['metrics']}")
    assert service["metadata"]["name"] == JOB and "jobLabel" not in spec
    # the alerts name the node: the ServiceMonitor sets the label `node`, as the scrape config does
    assert any(r.get("targetLabel") == "node" for e in spec["endpoints"] for r in e.get("relabelings", []))


# ---- what fills each dcgm-exporter name (docs/integrations.md's table) ----

def test_the_pcie_replay_counter_carries_nvmls_reading_and_is_left_out_where_unsupported():
    from gpuvet.backends.nvidia.backend import NvidiaBackend
    from gpuvet.backends.nvidia.gateway import Nvml
    from tests.fakes.fake_nvml import hgx_h200
    from tests.node.test_dcgm_names import scrape as dcgm_scrape

    fake = hgx_h200(3)
    fake.gpus[1].pcie_replays = 42
    fake.gpus[2].unsupported.add("nvmlDeviceGetPcieReplayCounter")
    _, families = dcgm_scrape(NvidiaBackend(Nvml(lib=fake)), "dcgm", seconds=2, interval=1)
    replays = {s.labels["gpu"]: s.value for s in families["DCGM_FI_DEV_PCIE_REPLAY_COUNTER"].samples}
    assert replays == {"0": 0, "1": 42}  # nvmlDeviceGetPcieReplayCounter as read; no series where NVML cannot say


def test_the_dcgm_table_lists_every_exported_name_with_the_backends_that_fill_it():
    from gpuvet.watch.dcgm import FIELDS, XID_FIELD

    text = (ROOT / "docs" / "integrations.md").read_text()
    rows = [line.strip().strip("|").split("|") for line in text.splitlines() if line.startswith("| `DCGM_FI_")]
    documented = {name for row in rows for name in re.findall(r"`(DCGM_FI_\w+)`", row[0])}
    assert documented == {f.name for f in FIELDS} | {XID_FIELD[0]}
    header = next(line for line in text.splitlines() if line.startswith("| dcgm-exporter name"))
    assert [c.strip() for c in header.strip("|").split("|")][-3:] == ["NVIDIA live", "AMD live", "simulated"]
    assert all(len(row) == 7 and all(c.strip() for c in row) for row in rows)
    assert "PCIe replay and" not in text  # it is exported: the old 'not exported' list no longer names it


# ---- gpuvet watch --sim served, scraped by a real Prometheus with the shipped rules ----
# (the live stack's tests come last in this file: its three children run from its first test to the module's end)

@contextmanager
def watching(tmp: Path, spec: str, *args: str, logbook: Path | None = None) -> Iterator[str]:
    """`gpuvet watch --sim SPEC --prometheus 127.0.0.1:<free port> ARGS` in a child process; with
    ``logbook`` it keeps one there (and serves the ledger's ladder step), else --no-log."""
    port = free_port()
    log = tmp / f"watch-{port}.log"
    keep = ["--logbook", str(logbook)] if logbook else ["--no-log"]
    proc = subprocess.Popen([sys.executable, "-m", "gpuvet", "watch", "--sim", spec, "--prometheus",
                             f"127.0.0.1:{port}", "--json", *keep, *args],
                            stdout=subprocess.DEVNULL, stderr=log.open("w"))
    try:
        yield f"127.0.0.1:{port}"
    finally:
        proc.kill()
        proc.wait(timeout=30)


def scrape(address: str) -> str:
    with urllib.request.urlopen(f"http://{address}/metrics", timeout=5) as r:
        return r.read().decode()


def until(check: Callable[[], object], what: str, timeout: float = 20.0) -> object:
    """Poll ``check`` until it gives something true; fail naming ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            got = check()
        except OSError:
            got = None
        if got:
            return got
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not within {timeout:.0f} s")
        time.sleep(0.25)


def test_config(targets: list[str]) -> str:
    """The shipped scrape config with a 1 s scrape and evaluation, these targets, the shipped rules
    by absolute path, and no Alertmanager (the alerts are read from Prometheus's API)."""
    config = yaml.safe_load(CONFIG.read_text())
    config["global"].update(scrape_interval="1s", evaluation_interval="1s")
    config.pop("alerting")
    config["rule_files"] = [str(RULES)]
    (job,) = config["scrape_configs"]
    job.update(scrape_interval="1s", scrape_timeout="1s", static_configs=[{"targets": targets}])
    return yaml.safe_dump(config)


test_config.__test__ = False  # type: ignore[attr-defined]  # a helper, not a test


@dataclass(frozen=True)
class Stack:
    url: str
    faulty: str
    healthy: str


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    require_prometheus()
    root = tmp_path_factory.mktemp("recipes")
    (root / "rack3-node7.yaml").write_text(FAULTY)
    with ExitStack() as stack:
        # the faulty node at 10000x (its forecast stands after about 30 simulated hours: ~11 s, most of it spent in the
        # fatal Xid's test, and the dashboard's waits 25 s more; 40000x sampled 4x as often, ~3 s more CPU) with a
        # logbook (its Xid 79 puts gpu5 on the ledger's ladder: the dashboard's ladder panel), the healthy one live
        faulty = stack.enter_context(watching(root, str(root / "rack3-node7.yaml"), "--names", "both",
                                              "--interval", "60s", "--speedup", "10000",
                                              logbook=root / "rack3-node7.db"))
        healthy = stack.enter_context(watching(root, "hgx-h200-8", "--names", "both", "--interval", "1s"))
        for address in (faulty, healthy):
            until(lambda a=address: "gpuvet_module_info" in scrape(a), f"gpuvet watch serving at {address}")
        url = stack.enter_context(running_prometheus(root, test_config([faulty, healthy])))
        yield Stack(url, faulty, healthy)


def alerts(url: str) -> list[dict]:
    return api(url, "alerts")["alerts"]  # type: ignore[index]


def query(url: str, expr: str) -> list[dict]:
    return api(url, "query", query=expr)["result"]  # type: ignore[index]


def rule_iterations(url: str) -> int:
    """How often Prometheus has evaluated the alert group (its own metrics, not scraped)."""
    with urllib.request.urlopen(url + "/metrics", timeout=5) as r:
        text = r.read().decode()
    m = re.search(r'prometheus_rule_group_iterations_total\{rule_group="[^"]*;gpuvet-alerts"\} (\d+)', text)
    return int(m.group(1)) if m else 0


def test_a_fatal_xid_fires_the_critical_alert_and_a_healthy_node_fires_none(stack):
    def fatal() -> list[dict]:
        return [a for a in alerts(stack.url) if a["labels"]["alertname"] == "GpuvetFatalXid" and a["state"] == "firing"]

    (alert,) = until(fatal, "GpuvetFatalXid firing for the faulty node's Xid 79")
    labels = alert["labels"]
    assert labels["instance"] == stack.faulty and labels["severity"] == "critical"
    assert (labels["gpu"], labels["xid"], labels["Hostname"], labels["node"]) == ("5", "79", "rack3-node7", "127.0.0.1")
    assert alert["annotations"]["summary"] == "Fatal Xid 79 on gpu5 of 127.0.0.1"
    # the healthy node: scraped three times, then the alerts evaluated twice more, and none pending or firing
    until(lambda: query(stack.url, f'count_over_time(up{{instance="{stack.healthy}"}}[1m]) >= 3'),
          "three scrapes of the healthy node")
    before = rule_iterations(stack.url)
    until(lambda: rule_iterations(stack.url) >= before + 2, "two more evaluations of the alerts")
    now = alerts(stack.url)
    assert [a for a in now if a["labels"].get("instance") == stack.healthy] == []
    assert not [a for a in now if a["labels"]["alertname"] in EXPORTER_ALERTS]  # both targets up, every module here
    # the fatal Xid is not also a warning (the rules join gpuvet's uuid to dcgm-exporter's UUID)
    assert not [a for a in now if a["labels"]["alertname"] == "GpuvetXid" and a["labels"].get("module") == "gpu5"]
    # Xid 79 also takes gpu5 off the bus: the watch declares it lost, the only other critical alert
    critical = {(a["labels"]["alertname"], a["labels"].get("uuid", ""))
                for a in now if a["labels"]["severity"] == "critical"}
    assert {name for name, _ in critical} == {"GpuvetFatalXid", "GpuvetModuleLost"}
    assert [uuid for name, uuid in critical if name == "GpuvetModuleLost"] == ["GPU-sim-rack3-node7-gpu5"]


def dashboard_queries() -> list[tuple[str, str]]:
    board = json.loads(DASHBOARD.read_text())
    out = [(p["title"], t["expr"]) for p in board["panels"] for t in p.get("targets", [])]
    for var in board["templating"]["list"]:
        m = re.fullmatch(r"label_values\((\w+), (\w+)\)", str(var.get("query", "")))
        if m:  # a variable's own query, as Grafana runs it
            out.append((f"variable {var['name']}", f"group by ({m.group(2)}) ({m.group(1)})"))
    return out


def grafana_substitute(expr: str) -> str:
    """Template variables as Grafana expands "All": a regex matching everything."""
    expr = re.sub(r"\$\{?model\}?", ".*", expr)
    expr = re.sub(r"\$__(rate_)?interval", "1m", expr)
    assert "$" not in expr, f"a template variable the test does not know: {expr}"
    return expr


def test_every_dashboard_query_returns_series(stack):
    until(lambda: query(stack.url, "count_over_time(gpuvet_module_overheat_forecast_seconds[1m]) >= 2"),
          "two scrapes of the faulty node's overheating forecast", timeout=25)
    queries = dashboard_queries()
    assert len(queries) >= 12
    # an instant query sees the state of one moment (gpu6's power-cap throttle comes and goes with
    # the simulated load): a panel that stays empty over several scrapes is the failure
    empty = [(title, expr) for title, expr in queries if not query(stack.url, grafana_substitute(expr))]
    deadline = time.monotonic() + 15
    while empty and time.monotonic() < deadline:
        time.sleep(1)
        empty = [(title, expr) for title, expr in empty if not query(stack.url, grafana_substitute(expr))]
    assert empty == []
    # the PCIe / NVLink panel draws both: one series per module each (an `a or b` over equal label sets drew a only)
    board = json.loads(DASHBOARD.read_text())
    (panel,) = [p for p in board["panels"] if p["title"] == "PCIe link width / NVLink links up"]
    counts = [len(query(stack.url, grafana_substitute(t["expr"]))) for t in panel["targets"]]
    assert counts == [15, 15]  # 8 modules on the healthy node, 7 on the faulty one: Xid 79 took gpu5 off the bus
    assert not [e for _, e in queries if re.search(r"\bor\b", e)], "an `or` of two metrics hides one of them"


def lint(text: str) -> tuple[int, list[str]]:
    got = promtool("check", "metrics", stdin=text)
    return got.returncode, [line for line in (got.stdout + got.stderr).splitlines() if line.strip()]


def test_promtool_check_metrics_on_a_live_scrape(stack, tmp_path):
    # gpuvet's own names follow Prometheus's conventions: not one complaint
    with ExitStack() as es:
        own = es.enter_context(watching(tmp_path, "hgx-h200-8", "--interval", "1s"))
        # the ECC counter comes with the first slow tick: wait for it (the renaming check below needs it)
        body = until(lambda: (t := scrape(own)) and "gpuvet_module_info" in t
                     and "gpuvet_module_ecc_corrected_errors_total{" in t and t, f"gpuvet watch at {own}")
    code, complaints = lint(str(body))
    assert (code, complaints) == (0, [])
    # --names both: dcgm-exporter's names keep its own ways (counters without _total, camelCase
    # labels UUID, modelName, Hostname, "COUNTER" in a name), as its dashboards expect; nothing else
    both = scrape(stack.faulty)
    assert "DCGM_FI_DEV_GPU_TEMP" in both and "gpuvet_events_total" in both
    code, complaints = lint(both)
    known = (r"label names should be written in 'snake_case' not 'camelCase'",
             r'counter metrics should have "_total" suffix', r"metric name should not include type 'counter'")
    odd = [c for c in complaints if not (c.startswith("DCGM_FI_") and any(re.search(k, c) for k in known))]
    assert code == 3 and complaints and odd == []
    # and the check can fail on gpuvet's names: a counter renamed without _total is caught
    code, complaints = lint(str(body).replace("gpuvet_events_total", "gpuvet_events_count").replace(
        "gpuvet_module_ecc_corrected_errors_total", "gpuvet_module_ecc_corrected_errors"))
    assert code != 0 and any("gpuvet_module_ecc_corrected_errors" in c for c in complaints)
