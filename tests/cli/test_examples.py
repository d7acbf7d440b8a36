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

ROOT = Path(__file__).resolve().parents[2]
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


def shell_words(command: str) -> str:
    """A script's gpuvet line with its variables as the shell would give them: a default
    (``"${X:-boot}"``) as itself, a quoted path variable as a path, the site's word lists and
    ``"$@"`` as nothing, redirections dropped."""
    command = re.sub(r'"\$\{\w+:-([^}]*)\}"', r"\1", command)
    command = re.sub(r'"\$\w+"', "/var/lib/gpuvet/placeholder.json", command)
    command = re.sub(r'"\$@"|\$\{\w+:-\}', "", command)
    return re.sub(r"\d?>&?\S+", "", command)


def npd_commands(path: Path) -> list[list[str]]:
    """A node-problem-detector monitor's gpuvet command lines: gpuvet itself, or the wrapper,
    which passes its arguments to ``health --format npd``."""
    out = []
    for rule in json.loads(path.read_text()).get("rules", []):
        if rule["path"].endswith("/gpuvet"):
            out.append(rule["args"])
        elif rule["path"].endswith("/gpuvet-npd.sh"):
            out.append(["health", "--format", "npd", *rule["args"]])
    return out


def command_lines() -> list[tuple[str, list[str]]]:
    """(where, arguments after `gpuvet`) for every gpuvet command line in the recipes."""
    found: list[tuple[str, list[str]]] = []
    for path in files(".yaml", ".yml"):
        for doc in yaml.safe_load_all(path.read_text()):
            found += [(path.name, c) for c in yaml_commands(doc)]
    for path in files(".json"):
        found += [(path.name, args) for args in npd_commands(path)]
    for path in files(".service"):
        for line in path.read_text().splitlines():
            if line.startswith("ExecStart="):
                found.append((path.name, shlex.split(line.removeprefix("ExecStart="))[1:]))
    for path in [*files("Dockerfile"), *files(".sh"), *files(".nhc")]:
        for line in path.read_text().splitlines():
            m = re.search(r'CMD (\[.*\])', line)
            if m and not line.lstrip().startswith("#"):
                found.append((path.name, json.loads(m.group(1))[1:]))
            m = re.search(r'\$(?:GPUVET|gpuvet) (health[^)]*)\)', line)
            if m:
                found.append((path.name, shlex.split(shell_words(m.group(1)))))
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
        if path.parent.name == "prometheus":  # Prometheus's own files: promtool checks them (test_prometheus_recipes)
            continue
        for doc in yaml.safe_load_all(path.read_text()):
            assert isinstance(doc, dict), path
            if path.parent.name == "kubernetes":  # Prometheus' own files are checked by promtool
                assert {"apiVersion", "kind", "metadata"} <= set(doc), path
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


def _spec(tmp_path, faults) -> Path:
    spec = tmp_path / "node.yaml"
    spec.write_text(yaml.safe_dump({"base": "hgx-h200-8", "faults": faults}))
    return spec


def _scontrol(tmp_path, fails: bool = False) -> Path:
    """A stand-in scontrol that records its arguments, or fails as one does with the controller
    down (exit 1, nothing done)."""
    calls = tmp_path / "scontrol.calls"
    fake = tmp_path / ("scontrol-down" if fails else "scontrol")
    body = "echo 'slurm_update error: Unable to contact slurm controller' >&2; exit 1" if fails \
        else f'printf "%s\\n" "$@" >> {calls}'
    fake.write_text(f"#!/bin/sh\n{body}\n")
    fake.chmod(0o755)
    return fake


def _slurmd_env(tmp_path, **extra: str) -> dict[str, str]:
    """What slurmd gives a HealthCheckProgram or Prolog: no login environment (env -i), a minimal
    PATH, SLURMD_NODENAME; gpuvet as the site names it (GPUVET) unless a test takes it away ("-")."""
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "SLURMD_NODENAME": "gpu-node-07",
           "GPUVET": f"{sys.executable} -m gpuvet", "PYTHONPATH": str(ROOT / "src"),
           "GPUVET_STATE": str(tmp_path / "state" / "mark.json"), "GPUVET_HOME": str(tmp_path),
           "GPUVET_HEALTHCHECK_DEFAULTS": str(tmp_path / "no-defaults"), "SCONTROL": str(_scontrol(tmp_path))}
    return {k: v for k, v in {**env, **extra}.items() if v != "-"}


def _run_script(tmp_path, mode, faults=None, **extra: str):
    env = _slurmd_env(tmp_path, **extra)
    if faults is not None:
        env["GPUVET_HEALTH_ARGS"] = f"--sim {_spec(tmp_path, faults)}"
    done = subprocess.run(["env", "-i", *(f"{k}={v}" for k, v in env.items()), "bash", str(SCRIPT), mode],
                          capture_output=True, text=True, timeout=60)
    calls = tmp_path / "scontrol.calls"
    lines = calls.read_text().splitlines() if calls.exists() else []
    calls.unlink(missing_ok=True)
    return done.returncode, lines


XID79 = [{"kind": "xid", "module": "gpu5", "code": 79}]


def test_slurm_health_check_drains_a_faulty_node_with_gpuvets_reason(tmp_path):
    code, calls = _run_script(tmp_path, "prolog", XID79)
    assert code == 1  # a failing Prolog: Slurm drains the node too and requeues the job
    assert calls == ["update", "nodename=gpu-node-07", "state=drain",
                     "reason=gpuvet: xid: gpu5: Xid 79 (GPU has fallen off the bus)"]


def test_slurm_health_check_passes_a_healthy_node_and_exits_0_after_draining(tmp_path):
    assert _run_script(tmp_path, "healthcheck", []) == (0, [])
    assert (tmp_path / "state" / "mark.json").is_file() and not list((tmp_path / "state").glob("mark.json.pending*"))
    code, calls = _run_script(tmp_path, "healthcheck", [{"kind": "missing_module", "module": "gpu3"}])
    assert code == 0 and calls[2] == "state=drain" and calls[3].startswith("reason=gpuvet: presence: ")


def test_an_xid_is_marked_seen_only_after_the_drain_went_through(tmp_path):
    """The controller is down: the node is not drained, the script says so (exit 1) and the Xid
    is not marked seen, so the next run drains for it. Before, the mark moved first and
    scontrol's failure was ignored: every later run reported the node healthy."""
    down = str(_scontrol(tmp_path, fails=True))
    for mode in ("healthcheck", "prolog"):
        assert _run_script(tmp_path, mode, XID79, SCONTROL=down) == (1, [])
    code, calls = _run_script(tmp_path, "healthcheck", XID79)
    assert code == 0 and calls[3] == "reason=gpuvet: xid: gpu5: Xid 79 (GPU has fallen off the bus)"
    # drained once: the Xid is seen now; the module it took off the bus is still missing, and says so
    code, calls = _run_script(tmp_path, "healthcheck", XID79)
    assert code == 0 and calls[3].startswith("reason=gpuvet: presence: ") and "gpu5" in calls[3], calls


@pytest.mark.parametrize("mode", ["healthcheck", "prolog", "epilog"])
def test_a_gpuvet_missing_from_slurmds_path_drains_never_passes(tmp_path, mode):
    code, calls = _run_script(tmp_path, mode, XID79, GPUVET="-")  # slurmd's PATH has no gpuvet
    assert code == (0 if mode == "healthcheck" else 1)
    assert calls[:3] == ["update", "nodename=gpu-node-07", "state=drain"]
    assert calls[3].startswith("reason=gpuvet: cannot run 'gpuvet' (exit 127)"), calls


def test_a_run_that_could_not_tell_drains_with_gpuvets_own_words(tmp_path):
    code, calls = _run_script(tmp_path, "prolog", None, GPUVET_HEALTH_ARGS="--sim no-such-preset")
    assert code == 1 and calls[3].startswith("reason=gpuvet: could not tell: "), calls
    assert "no-such-preset" in calls[3] and len(calls[3]) <= len("reason=") + 120


def test_a_crashed_gpuvet_drains_with_its_exit_status(tmp_path):
    crash = tmp_path / "gpuvet-crash"
    crash.write_text("#!/bin/sh\necho 'Segmentation fault' >&2\nexit 139\n")
    crash.chmod(0o755)
    code, calls = _run_script(tmp_path, "epilog", [], GPUVET=str(crash))
    assert code == 1 and calls[3] == "reason=gpuvet: health check ended with exit 139: Segmentation fault"


def test_an_unknown_mode_is_refused_before_anything_runs(tmp_path):
    assert _run_script(tmp_path, "prologue", XID79) == (2, [])


def test_a_mistyped_site_argument_drains_naming_the_argument(tmp_path):
    """A typo in GPUVET_HEALTH_ARGS is exit 2 (could not tell): the reason names it, not the usage banner."""
    code, calls = _run_script(tmp_path, "prolog", None, GPUVET_HEALTH_ARGS="--node hgx-h200-8 --ignroe processes")
    assert code == 1 and calls[3].startswith("reason=gpuvet: could not tell: No such option: --ignroe"), calls
