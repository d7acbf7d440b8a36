"""The CLI imports only what the command it runs needs: sub-commands load when looked up."""

import json
import subprocess
import sys

from gpuvet.cli.app import command

# what no command defined in cli/app.py needs (each is a command's own stack, or an optional library)
NOT_FOR_TOPO = ("torch", "ray", "scipy", "psycopg", "prometheus_client", "gpuvet.doctor", "gpuvet.watch",
                "gpuvet.plan", "gpuvet.fleet", "gpuvet.bench", "gpuvet.cli.doctor", "gpuvet.cli.watch",
                "gpuvet.cli.bench", "gpuvet.cli.plan", "gpuvet.cli.fleet", "gpuvet.cli.validate")
HELP_ORDER = ["validate", "report", "watch", "events", "doctor", "health", "inventory", "topo", "catalog",
              "spec", "bench", "baseline", "log", "module", "plan", "fleet"]


def _loaded_after(code: str) -> tuple[list[str], str]:
    """Run ``code`` in a fresh interpreter; the modules of NOT_FOR_TOPO it left loaded, and its stdout."""
    probe = (f"{code}\nimport sys\n"
             f"sys.stderr.write(repr([m for m in {NOT_FOR_TOPO!r} if m in sys.modules]))")
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return eval(r.stderr.strip().splitlines()[-1]), r.stdout  # noqa: S307  # our own repr of a list


def test_importing_the_cli_loads_no_sub_command_and_no_heavy_library():
    loaded, _ = _loaded_after("import gpuvet.cli.app")
    assert loaded == []


def test_topo_on_a_preset_loads_no_other_command():
    loaded, out = _loaded_after("from gpuvet.cli.app import main\nmain(['topo', '--sim', 'mesh-4', '--json'])")
    assert loaded == []
    doc = json.loads(out)
    assert doc["simulated"] is True and len(doc["modules"]) == 4


def test_topo_of_a_small_node_needs_no_numpy():
    """Its link matrix takes the plain-Python path (the same cells: tests/node/test_scale_paths.py)."""
    code = ("import sys\nfrom gpuvet.cli.app import main\nmain(['topo', '--sim', 'hgx-h200-8'])\n"
            "sys.stderr.write(repr('numpy' in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "NV18" in r.stdout and r.stderr.strip().endswith("False")


def test_a_lazy_command_loads_its_module_when_run():
    loaded, _ = _loaded_after("from gpuvet.cli.app import main\nmain(['plan', '--help'])")
    assert "gpuvet.cli.plan" in loaded and "gpuvet.cli.doctor" not in loaded


def test_every_command_is_listed_in_order_and_resolves():
    root = command()
    assert list(root.commands) == HELP_ORDER
    assert root.list_commands(None) == HELP_ORDER  # type: ignore[arg-type]
    doctor = root.commands["doctor"]
    assert doctor.name == "doctor" and doctor.short_help == "Ordered troubleshooting that names the cause."
    assert {p.name for p in doctor.params} >= {"sim", "as_json"}
    assert all(p.metavar is not None for p in doctor.params)  # people's metavars, applied when built
    assert sorted(root.commands["plan"].commands)  # a group arrives with its sub-commands
    assert "nosuch" not in root.commands and root.commands.get("nosuch") is None


# what doctor on a simulated node may load of gpuvet.captures: the records (data) and the kernel-message
# catalog its Xid knowledge reads; every parser loads only when a file is read (issue 43)
DOCTOR_SIM_CAPTURES = {"gpuvet.captures", "gpuvet.captures.records", "gpuvet.captures.kernel_messages"}


def test_doctor_on_a_simulated_node_loads_no_capture_parser():
    """Nor, for --json, the terminal library, the host's process reader or the module ledger."""
    code = ("import sys\nfrom gpuvet.cli.app import main\n"
            "code = main(['doctor', '--node', 'nvl72', '--window', '1h', '--json'])\n"
            "sys.stderr.write(repr((code, sorted(m for m in sys.modules if m.startswith('gpuvet.captures')), "
            "[m for m in ('scipy', 'torch', 'pandas', 'rich', 'psutil', 'gpuvet.ledger') if m in sys.modules])))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    exit_code, captures, heavy = eval(r.stderr.strip().splitlines()[-1])  # noqa: S307  # our own repr
    assert exit_code == 0 and json.loads(r.stdout)["findings"] == []
    assert set(captures) <= DOCTOR_SIM_CAPTURES, sorted(set(captures) - DOCTOR_SIM_CAPTURES)
    assert heavy == []


def test_replay_with_no_log_loads_no_logbook(tmp_path):
    """`watch --replay FILE --json --no-log` opens no logbook, so none of its modules load; nor the
    check model's pydantic records (only a type there), the terminal library or the process reader."""
    log = tmp_path / "node7.csv"
    rows = ["timestamp, index, name, uuid, temperature.gpu, power.draw [W], utilization.gpu [%]"]
    rows += [f"2026/01/01 00:{k // 2:02d}:{30 * (k % 2):02d}.000, {g}, NVIDIA H200, GPU-{g}, {40 + g}, 600.00 W, 97 %"
             for k in range(20) for g in range(2)]
    log.write_text("\n".join(rows) + "\n")
    code = ("import sys\nfrom gpuvet.cli.app import main\n"
            f"code = main(['watch', '--replay', {str(log)!r}, '--json', '--no-log'])\n"
            "sys.stderr.write(repr((code, sorted(m for m in sys.modules if m.startswith('gpuvet.logbook')), "
            "[m for m in ('gpuvet.checks.model', 'rich', 'psutil') if m in sys.modules])))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    exit_code, logbook, heavy = eval(r.stderr.strip().splitlines()[-1])  # noqa: S307  # our own repr
    assert exit_code == 0 and json.loads(r.stdout)["samples"] == 40
    assert logbook == [] and heavy == []


def test_the_tree_is_built_once_and_a_replaced_command_again(monkeypatch, capsys):
    """main builds the click tree once per process; a command whose function is replaced (a test's
    monkeypatch) is built again from the new function, and from the real one once it is back."""
    from gpuvet.cli import doctor as doctor_cli
    from gpuvet.cli.app import main

    root = command()
    assert command() is root and root.commands["doctor"] is root.commands["doctor"]
    calls: list[str] = []

    def stand_in(window: str = "5m") -> None:
        calls.append(window)

    monkeypatch.setattr(doctor_cli, "doctor", stand_in)
    assert main(["doctor", "--window", "1h"]) == 0 and calls == ["1h"]
    monkeypatch.undo()
    assert {p.name for p in command().commands["doctor"].params} >= {"sim", "as_json"}
    assert main(["doctor", "--help"]) == 0 and "--window" in capsys.readouterr().out
