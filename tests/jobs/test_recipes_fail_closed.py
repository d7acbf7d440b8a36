"""Operators' doors fail closed (issue 48): node-problem-detector's plugin, the NHC check and the
systemd unit never pass a node gpuvet could not see, and each recipe is checked by the tool its
users run (shellcheck, systemd-analyze verify). The Slurm script's cases are in test_examples."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from gpuvet.cli.app import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
NPD = EXAMPLES / "node-problem-detector" / "gpuvet-npd.sh"
NHC = EXAMPLES / "nhc" / "gpuvet.nhc"
UNIT = EXAMPLES / "systemd" / "gpuvet-watch.service"
GPUVET = f"{sys.executable} -m gpuvet"
XID79 = [{"kind": "xid", "module": "gpu5", "code": 79}]


def _tool(name: str) -> str:
    """The real tool; on CI (which installs it) its absence fails, elsewhere it skips."""
    found = shutil.which(name)
    if found is None:
        if os.environ.get("CI"):
            pytest.fail(f"{name} is not installed; .ci/run installs it")
        pytest.skip(f"{name} is not installed here (Debian: apt-get install {name})")
    return found


def _spec(tmp_path: Path, faults: list[dict[str, object]]) -> str:
    spec = tmp_path / "node.yaml"
    spec.write_text(yaml.safe_dump({"base": "hgx-h200-8", "faults": faults}))
    return str(spec)


def _env(tmp_path: Path, **extra: str) -> list[str]:
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "GPUVET": GPUVET, "PYTHONPATH": str(ROOT / "src"),
           "GPUVET_HOME": str(tmp_path), **extra}
    return ["env", "-i", *(f"{k}={v}" for k, v in env.items() if v != "-")]


# --- node-problem-detector ---------------------------------------------------------------------
def _npd(tmp_path: Path, *args: str, **extra: str) -> tuple[int, str]:
    done = subprocess.run([*_env(tmp_path, **extra), "bash", str(NPD), *args], capture_output=True, text=True,
                          timeout=60)
    return done.returncode, done.stdout


def test_npd_plugin_healthy_is_ok_with_gpuvets_line(tmp_path):
    code, out = _npd(tmp_path, "--sim", "hgx-h200-8")
    assert code == 0 and out == "gpuvet: healthy, 8 modules (simulated)\n"


def test_npd_plugin_a_fatal_xid_is_a_problem_with_its_reason(tmp_path):
    code, out = _npd(tmp_path, "--sim", _spec(tmp_path, XID79))
    assert code == 1 and out.startswith("gpuvet: xid: gpu5: Xid 79") and len(out.rstrip("\n")) <= 80


@pytest.mark.parametrize(("args", "extra", "words"), [
    (("--sim", "no-such-preset"), {}, "gpuvet: could not tell: "),  # exit 2: Unknown to NPD, cordons nothing
    (("--sim", "hgx-h200-8"), {"GPUVET": "-"}, "gpuvet: cannot run gpuvet (exit 127)"),  # not on the PATH
])
def test_npd_plugin_what_gpuvet_could_not_see_is_a_problem_not_unknown(tmp_path, args, extra, words):
    code, out = _npd(tmp_path, *args, **extra)
    assert code == 1 and out.startswith(words) and out.count("\n") == 1 and len(out) <= 81, out


@pytest.mark.parametrize("fmt", ["npd", "nhc"])
def test_health_refusal_still_prints_the_schedulers_line(capsys, fmt):
    """node-problem-detector takes the plugin's stdout as the condition's message: a refusal
    printed only the stderr paragraph, so the condition had none."""
    assert main(["health", "--format", fmt, "--sim", "no-such-preset"]) == 2
    out, err = capsys.readouterr()
    assert "no-such-preset" in err
    lines = out.splitlines()
    if fmt == "npd":
        assert len(lines) == 1 and lines[0].startswith("gpuvet: could not tell: ") and len(lines[0]) <= 80
    else:
        assert lines[0].startswith("UNKNOWN: gpuvet health: ") and lines[-1].startswith("reason: gpuvet: could not")
        assert len(lines[-1]) <= len("reason: ") + 120


# --- NHC ---------------------------------------------------------------------------------------
def _nhc(tmp_path: Path, *args: str, **extra: str) -> tuple[int, str]:
    """The check as NHC runs it: sourced into bash, `die` being NHC's (here: record and fail)."""
    script = (f'die() {{ printf "DIE %s %s\\n" "$1" "$2"; return 1; }}\n. {NHC}\n'
              f'check_gpuvet_health "$@"; echo "RC $?"\n')
    done = subprocess.run([*_env(tmp_path, **extra), "bash", "-c", script, "nhc", *args], capture_output=True,
                          text=True, timeout=60)
    return done.returncode, done.stdout


def test_nhc_check_passes_a_healthy_node_without_calling_die(tmp_path):
    assert _nhc(tmp_path, "--sim", "hgx-h200-8") == (0, "RC 0\n")


def test_nhc_check_dies_with_gpuvets_reason(tmp_path):
    _, out = _nhc(tmp_path, "--sim", _spec(tmp_path, XID79))
    assert out == "DIE 1 gpuvet: xid: gpu5: Xid 79 (GPU has fallen off the bus)\nRC 1\n"


def test_nhc_check_reports_the_xid_since_boot_on_every_run(tmp_path):
    """NHC drains after the check returns, so the check keeps no mark it cannot confirm."""
    spec = _spec(tmp_path, XID79)
    assert _nhc(tmp_path, "--sim", spec)[1] == _nhc(tmp_path, "--sim", spec)[1] != "RC 0\n"


@pytest.mark.parametrize(("args", "extra", "words"), [
    (("--sim", "no-such-preset"), {}, "DIE 1 gpuvet: could not tell: "),
    (("--sim", "hgx-h200-8"), {"GPUVET": "-"}, "DIE 1 gpuvet: cannot run 'gpuvet' (exit 127)"),
])
def test_nhc_check_fails_closed(tmp_path, args, extra, words):
    _, out = _nhc(tmp_path, *args, **extra)
    assert out.startswith(words) and out.endswith("RC 1\n"), out


# --- the tools the recipes' users run ----------------------------------------------------------
def _scripts() -> list[Path]:
    return sorted([*EXAMPLES.rglob("*.sh"), *EXAMPLES.rglob("*.nhc")])


def test_every_shell_recipe_is_clean_under_shellcheck():
    shellcheck = _tool("shellcheck")
    scripts = _scripts()
    assert {p.name for p in scripts} >= {"gpuvet-healthcheck.sh", "gpuvet-npd.sh", "gpuvet.nhc"}
    done = subprocess.run([shellcheck, "-s", "bash", "-S", "info", *map(str, scripts)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stdout


def test_shellcheck_itself_flags_an_unquoted_variable(tmp_path):
    shellcheck = _tool("shellcheck")
    bad = tmp_path / "bad.sh"
    bad.write_text("#!/bin/bash\nrm -f $1\n")
    assert subprocess.run([shellcheck, "-s", "bash", str(bad)], capture_output=True).returncode != 0


def _verify(unit_text: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """systemd-analyze verify exits 0 even for a line it ignores: its stderr is the verdict."""
    analyze = _tool("systemd-analyze")
    unit = tmp_path / UNIT.name
    unit.write_text(unit_text.replace("/usr/local/bin/gpuvet", str(Path(sys.executable).parent / "gpuvet")))
    return subprocess.run([analyze, "verify", "--man=no", str(unit)], capture_output=True, text=True, timeout=60)


def test_the_systemd_unit_verifies_clean(tmp_path):
    if not (Path(sys.executable).parent / "gpuvet").exists():
        pytest.skip("gpuvet's console script is not installed next to this Python")
    done = _verify(UNIT.read_text(), tmp_path)
    assert done.returncode == 0 and done.stderr.strip() == "", done.stderr
    broken = _verify(UNIT.read_text().replace("Restart=always", "Restart=sometimes"), tmp_path)
    assert "restart specifier" in broken.stderr  # the check can fail


def test_the_systemd_unit_restarts_a_crash():
    """A crash exits 1 like a stop after a critical event; with exit 1 declared a success, only
    Restart=always restarts it (on-failure never did)."""
    settings = dict(line.split("=", 1) for line in UNIT.read_text().splitlines() if "=" in line and line[0] != "#")
    assert settings["Restart"] == "always" or "1" not in settings.get("SuccessExitStatus", "").split()
