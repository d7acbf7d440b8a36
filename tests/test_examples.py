"""The recipes in examples/ and docs/integrations.md work as written: every YAML and JSON file is
well formed, every gpuvet command line in them is accepted by gpuvet's own parser (and its
option values by the command's own checks), the shell scripts parse, and the Slurm health check
drains a faulty simulated node with gpuvet's reason through a stand-in scontrol."""

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer._click.exceptions import UsageError  # typer 0.29 carries its own click
from typer.core import TyperGroup
from typer.main import get_command

from gpuvet.cli.app import app
from gpuvet.cli.health import _check_args
from gpuvet.watch.prometheus import NAMES, parse_address

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
DOC = ROOT / "docs" / "integrations.md"
SCRIPT = EXAMPLES / "slurm" / "gpuvet-healthcheck.sh"


def files(*suffixes):
    return sorted(p for p in EXAMPLES.rglob("*") if p.is_file() and p.name.endswith(suffixes))


def parse_cli(args: list[str]):
    """Resolve subcommands down to the leaf and parse its options, as the CLI would (no run)."""
    command = get_command(app)
    ctx = command.make_context("gpuvet", list(args), resilient_parsing=False)
    rest = list(args)
    while isinstance(command, TyperGroup):
        name, *rest = rest
        sub = command.get_command(ctx, name)
        if sub is None:
            raise UsageError(f"no command {name!r}")
        command = sub
        ctx = sub.make_context(name, rest, parent=ctx)
    leaf_checks(ctx)
    return ctx


def leaf_checks(ctx) -> None:
    """The value checks a command makes in its body (parsing alone accepts any string)."""
    p = ctx.params
    if ctx.info_name == "health":
        _check_args("json" if p["as_json"] else p["fmt"], p["xid_since"], list(p["ignore"] or ()))
    if ctx.info_name == "watch":
        assert p["names"] in NAMES
        if p["prometheus"]:
            parse_address(p["prometheus"])


def yaml_commands(doc: object) -> list[list[str]]:
    out = []
    if isinstance(doc, dict):
        command = doc.get("command")
        if isinstance(command, list) and command and command[0] == "gpuvet":
            out.append([str(a) for a in command[1:] + list(doc.get("args", []))])
        for value in doc.values():
            out += yaml_commands(value)
    elif isinstance(doc, list):
        for value in doc:
            out += yaml_commands(value)
    return out


def command_lines() -> list[tuple[str, list[str]]]:
    """(where, arguments after `gpuvet`) for every gpuvet command line in the recipes."""
    found: list[tuple[str, list[str]]] = []
    for path in files(".yaml", ".yml"):
        for doc in yaml.safe_load_all(path.read_text()):
            found += [(path.name, c) for c in yaml_commands(doc)]
    for path in files(".json"):
        for rule in json.loads(path.read_text()).get("rules", []):
            if rule["path"].endswith("/gpuvet"):
                found.append((path.name, rule["args"]))
    for path in files(".service"):
        for line in path.read_text().splitlines():
            if line.startswith("ExecStart="):
                found.append((path.name, shlex.split(line.removeprefix("ExecStart="))[1:]))
    for path in [*files("Dockerfile"), *files(".sh")]:
        for line in path.read_text().splitlines():
            m = re.search(r'CMD (\[.*\])', line)
            if m and not line.lstrip().startswith("#"):
                found.append((path.name, json.loads(m.group(1))[1:]))
            m = re.search(r'\$GPUVET (health[^$)]*)', line)
            if m:
                found.append((path.name, shlex.split(m.group(1))))
    for line in DOC.read_text().splitlines():
        m = re.match(r"^\$ gpuvet (.*)$", line)
        if m:
            found.append((DOC.name, shlex.split(m.group(1).split(" |")[0].split(";")[0])))
    return found


def test_every_yaml_and_json_recipe_is_well_formed():
    yamls, jsons = files(".yaml", ".yml"), files(".json")
    assert yamls and jsons
    kinds = set()
    for path in yamls:
        for doc in yaml.safe_load_all(path.read_text()):
            assert isinstance(doc, dict) and {"apiVersion", "kind", "metadata"} <= set(doc), path
            kinds.add(doc["kind"])
    assert {"DaemonSet", "Service", "ServiceMonitor"} <= kinds
    for path in jsons:
        monitor = json.loads(path.read_text())
        assert monitor["plugin"] == "custom" and monitor["pluginConfig"]["max_output_length"] <= 80
        assert {r["condition"] for r in monitor["rules"]} <= {c["type"] for c in monitor["conditions"]}


def test_every_gpuvet_command_line_is_accepted_by_the_cli_parser():
    found = command_lines()
    where = {w for w, _ in found}
    assert {"gpuvet-watch.yaml", "gpuvet-health-monitor.json", "gpuvet-watch.service", "gpuvet-healthcheck.sh",
            "Dockerfile", "integrations.md"} <= where, where
    for place, args in found:
        try:
            ctx = parse_cli(args)
        except UsageError as exc:
            pytest.fail(f"{place}: gpuvet {' '.join(args)}: {exc}")
        assert ctx.info_name in ("health", "watch", "events", "doctor", "inventory", "topo"), (place, args)


def test_the_parser_check_itself_rejects_a_wrong_line():
    with pytest.raises(UsageError):
        parse_cli(["watch", "--prometheus-address", "0.0.0.0:9400"])
    with pytest.raises(Exception, match="not one of"):
        parse_cli(["health", "--format", "prometheus"])


@pytest.mark.parametrize("script", files(".sh"), ids=lambda p: p.name)
def test_shell_scripts_parse(script):
    assert subprocess.run(["bash", "-n", str(script)], capture_output=True).returncode == 0
    assert os.access(script, os.X_OK)


def _run_script(tmp_path, mode, faults):
    spec = tmp_path / "node.yaml"
    spec.write_text(yaml.safe_dump({"base": "hgx-h200-8", "faults": faults}))
    calls = tmp_path / "scontrol.calls"
    fake = tmp_path / "scontrol"
    fake.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" >> {calls}\n')
    fake.chmod(0o755)
    env = {**os.environ, "GPUVET": f"{sys.executable} -m gpuvet", "SCONTROL": str(fake),
           "GPUVET_HEALTH_ARGS": f"--sim {spec} --state {tmp_path / 'mark.json'}", "SLURMD_NODENAME": "gpu-node-07",
           "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "GPUVET_HOME": str(tmp_path)}
    done = subprocess.run(["bash", str(SCRIPT), mode], env=env, capture_output=True, text=True, timeout=60)
    return done.returncode, (calls.read_text().splitlines() if calls.exists() else [])


def test_slurm_health_check_drains_a_faulty_node_with_gpuvets_reason(tmp_path):
    code, calls = _run_script(tmp_path, "prolog", [{"kind": "xid", "module": "gpu5", "code": 79}])
    assert code == 1  # a failing Prolog: Slurm requeues the job
    assert calls == ["update", "nodename=gpu-node-07", "state=drain",
                     "reason=gpuvet: xid: gpu5: Xid 79 (GPU has fallen off the bus)"]


def test_slurm_health_check_passes_a_healthy_node_and_exits_0_after_draining(tmp_path):
    assert _run_script(tmp_path, "healthcheck", []) == (0, [])
    code, calls = _run_script(tmp_path, "healthcheck", [{"kind": "missing_module", "module": "gpu3"}])
    assert code == 0 and calls[2] == "state=drain" and calls[3].startswith("reason=gpuvet: presence: ")
