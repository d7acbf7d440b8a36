"""Every command's terminal output at 80 columns: no line wider, no cell cut ("…"), the verdict
and the place of every finding intact, and data printed literally (a bus id with :AB:/:CD: is
not an emoji code, a name with [bold] is not markup). Help names values, never Python types."""

import json
import re
from pathlib import Path

import pytest

from gpuvet.cli.app import main

DATA = Path(__file__).parent.parent / "data" / "captures"
FAULTY = """\
base: mesh-4
name: "[bold]rack:ab:7"
faults:
  - {kind: link_degraded, between: [gpu0, gpu1], factor: 0.5}
  - {kind: power_cap_low, module: gpu2, watts: 300}
"""


@pytest.fixture
def env(monkeypatch, tmp_path):
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("GPUVET_HOME", str(tmp_path))
    spec = tmp_path / "faulty.yaml"
    spec.write_text(FAULTY)
    return tmp_path, str(spec)


def text(capsys, *args: str) -> tuple[int, str]:
    code = main(list(args))
    out, _ = capsys.readouterr()
    for line in out.splitlines():
        assert len(line) <= 80, f"{args}: {len(line)} columns: {line!r}"
    assert "…" not in out, f"{args}: a cell was cut:\n{out}"
    return code, out


def rows(out: str, *words: str) -> list[str]:
    """Lines of a table holding all these words (the row of one finding)."""
    return [line for line in out.splitlines() if all(w in line for w in words)]


def test_inventory_prints_bus_ids_literally(capsys, env, tmp_path):
    xml = (DATA / "smi_q_x_h100_8gpu.xml").read_text().replace("00000000:BA:00.0", "00000000:CD:00.0")
    capture = tmp_path / "smi.xml"
    capture.write_text(xml)
    code, out = text(capsys, "inventory", "--from", str(capture))
    assert code == 0
    assert rows(out, "gpu5", "0000:AB:00.0") and rows(out, "gpu6", "0000:CD:00.0")
    assert "🆎" not in out and "💿" not in out


def test_a_name_with_markup_and_emoji_codes_is_printed_as_given(capsys, env):
    _, spec = env
    code, out = text(capsys, "inventory", "--sim", spec)
    assert code == 0 and "[bold]rack:ab:7" in out


def test_topo_differences_keep_the_place(capsys, env):
    _, spec = env
    code, out = text(capsys, "topo", "--sim", spec, "--expect", "mesh-4")
    assert code == 1 and rows(out, "link_degraded", "gpu0-gpu1")


def test_topo_labels_as_nvidia_smi(capsys, env):
    code, out = text(capsys, "topo", "--sim", "hgx-h200-8")
    assert code == 0 and "NV18" in out and "SW18" not in out


@pytest.mark.parametrize("args", [["catalog"], ["spec", "presets"], ["spec", "check", "mesh-4"],
                                  ["plan", "memory", "--params", "7B", "--model", "H100-SXM"],
                                  ["plan", "collective", "--node", "hgx-h200-8"],
                                  ["plan", "step", "--node", "mesh-4", "--compare", "pcie-8"],
                                  ["plan", "power", "--budget", "2000", "--loads", "1,1,0.3,0"]])
def test_small_commands_fit(capsys, env, args):
    code, out = text(capsys, *args)
    does_not_fit = args[:2] == ["plan", "step"]  # the 7B default does not fit pcie-8's L40S: a finding, exit 1
    assert code == (1 if does_not_fit else 0) and out.strip() and ("DOES NOT FIT" in out) == does_not_fit


def test_validate_rows_keep_verdict_and_place(capsys, env):
    _, spec = env
    code, out = text(capsys, "validate", "--sim", spec, "--level", "quick", "--no-log")
    assert code == 1
    assert rows(out, "power_limit", "gpu2", "warn")
    assert rows(out, "p2p_one_way", "gpu0→gpu1", "fail") and rows(out, "p2p_two_way", "gpu0↔gpu1", "fail")
    assert "% of expected, below" in out and "pct_of_expected" not in out  # evidence in words


def test_bench_gemm_is_a_module_by_dtype_matrix(capsys, env):
    code, out = text(capsys, "bench", "gemm", "--sim", "mesh-4", "--quick")
    assert code == 0
    header = rows(out, "module", "fp64", "bf16", "status")
    assert header and all(rows(out, f"gpu{i}", "ok") for i in range(4))
    assert len(out.splitlines()) < 20  # one row per module, not one per figure
    for figure in re.findall(r"\b\d[\d,]*\.?\d*\b", rows(out, "gpu0")[0])[1:]:  # 3 significant figures
        digits = figure.replace(",", "")
        digits = digits.replace(".", "").lstrip("0") if "." in digits else digits.rstrip("0")
        assert len(digits) <= 3, figure


def test_bench_collective_is_a_size_by_op_matrix(capsys, env):
    code, out = text(capsys, "bench", "collective", "--sim", "mesh-4", "--quick", "--max-bytes", "1048576",
                     "--factor", "16", "--ops", "all_reduce,all_gather")
    assert code == 0
    assert rows(out, "size", "status") and rows(out, "512 KiB", "ok") and rows(out, "8 B", "ok")


def test_bench_copy_pair_sums_say_what_they_count(capsys, env):
    code, out = text(capsys, "bench", "copy", "--sim", "mesh-4", "--quick")
    assert code == 0
    two_way = json.loads(_json(capsys, "bench", "copy", "--sim", "mesh-4", "--quick"))["results"]
    pairs = [r["value"] for r in two_way if r["metric"] == "p2p_two_way"]
    line = rows(out, "over 6 pairs (each counted once)")[0]
    assert len(pairs) == 6 and "sum" in line


def _json(capsys, *args: str) -> str:
    main([*args, "--json"])
    return capsys.readouterr()[0]


def test_bench_efficiency_and_membw_and_model_fit(capsys, env):
    for args in (["bench", "efficiency", "--sim", "mesh-4", "--quick", "--caps", "300:700:200", "--modules", "gpu0"],
                 ["bench", "membw", "--sim", "mesh-4", "--quick"], ["bench", "model", "--sim", "mesh-4", "--quick"]):
        code, out = text(capsys, *args)
        assert code == 0 and "SIMULATED" in out


def test_doctor_findings_keep_the_place_and_speak_in_words(capsys, env):
    _, spec = env
    code, out = text(capsys, "doctor", "compute-below-peak", "--sim", spec, "--window", "10m")
    assert code == 1
    assert rows(out, "WARN", "gpu2:")
    assert "limit 300 W, maximum 700 W" in out and "limit_w=" not in out


def test_health_rows_fit(capsys, env):
    _, spec = env
    code, out = text(capsys, "health", "--sim", spec)
    assert code in (0, 1) and "[bold]rack:ab:7" in out


def test_fleet_merge_outlier_table_keeps_node_and_place(capsys, env, tmp_path):
    files = []
    for i in range(4):  # four nodes of one type; node0 with a low power cap on gpu2 and a slow link
        spec = tmp_path / f"node{i}.yaml"
        spec.write_text(FAULTY.replace('"[bold]rack:ab:7"', "node0") if i == 0 else f"base: mesh-4\nname: node{i}\n")
        main(["validate", "--sim", str(spec), "--level", "quick", "--no-log", "--json"])
        path = tmp_path / f"node{i}.json"
        path.write_text(capsys.readouterr()[0])
        files.append(str(path))
    code, out = text(capsys, "fleet", "merge", *files[1:3])  # two healthy nodes (node0's own validate fails: exit 1)
    assert code == 0 and "at least 3 nodes" in out  # two nodes: nothing can stand out, and it says so
    code, out = text(capsys, "fleet", "merge", files[1])
    assert code == 0 and "H100-SXM: 1 node\n" in out  # one node, not "1 nodes"
    code, out = text(capsys, "fleet", "merge", *files)
    # node0's outliers are under the roots its own validate named: the node and the place stay whole
    assert code == 1 and "node0: gpu2 power capped — explains" in out and "node0: gpu0↔gpu1 at 50 % of design" in out
    assert "each under a root above" in out and all(len(line) <= 80 for line in out.splitlines())


def _commands(group, path=()):
    for name, sub in getattr(group, "commands", {}).items():
        yield from _commands(sub, (*path, name))
    if not getattr(group, "commands", None):
        yield path, group


def test_help_names_values_and_explains_every_option(capsys, monkeypatch):
    from gpuvet.cli.app import command

    monkeypatch.setenv("COLUMNS", "80")
    for path, cmd in _commands(command()):
        for param in cmd.params:
            if getattr(param, "hidden", False):
                continue
            shown = param.display_type_rich(None) if hasattr(param, "display_type_rich") else ""
            assert not (shown or "").startswith("<"), (path, param.name, shown)
            if param.param_type_name == "option":
                assert param.help, (path, param.name)
    main(["validate", "--help"])
    out = capsys.readouterr()[0]
    assert "quick|standard|long" in out and "<bool>" not in out and "<str>" not in out


def test_figures_in_three_significant_figures_and_evidence_in_words():
    from gpuvet.cli import term

    assert [term.sig(v) for v in (1303.2, 72.83, 0.01234, 56.717, 0.0, 7)] == ["1,300", "72.8", "0.0123", "56.7",
                                                                               "0", "7"]
    assert term.sig(float("nan")) == "-" and term.size(268435456) == "256 MiB" and term.size(8) == "8 B"
    assert term.sig(1e-15, "rel_error") == "1.00e-15 rel_error" and term.sig(0.00012) == "0.000120"
    words = term.evidence_words({"reasons": ["sw_thermal_slowdown"], "temp_c": 86.88464840135318,
                                 "power_w": 593.9776778968252, "sm_clock_mhz": 1683.0})
    assert words == "throttled: software thermal slowdown, 86.9 °C, 594 W, SM clock 1,680 MHz"


def test_watch_live_table_and_events_fit_80_columns_and_print_data_literally(capsys, env):
    tmp, spec = env
    book = str(tmp / "lb.db")
    code, out = text(capsys, "watch", "--sim", spec, "--duration", "30m", "--interval", "60s", "--speedup", "max",
                     "--logbook", book)
    assert code == 0 and rows(out, "gpu2", "300", "software") and "power cap" in out  # why, in words (wrapped)
    code, out = text(capsys, "events", "--logbook", book)
    assert code == 0 and rows(out, "throttle", "gpu2", "warn") and rows(out, "link_degraded", "gpu0")


def test_an_event_message_is_data_not_markup():
    from gpuvet.checks.events import Event, Severity
    from gpuvet.cli.render_watch import event_line

    line = event_line(Event(time=60.0, kind="xid", severity=Severity.CRITICAL, module="gpu0",
                            message="Xid 79 on 0000:AB:00.0 [bold]fallen off the bus[/]"))
    assert "0000:AB:00.0 [bold]fallen off the bus[/]" in line.plain


# --- what each verdict read, on the terminal (issue 34) -------------------------------------------
def _flat(out: str) -> str:
    """The output with its wrapping undone: a cell's continuation lines follow it (the check and
    result columns never wrap), so a read line can be looked for whole."""
    return " ".join(out.split())


def test_cited_lines_group_by_value_put_the_odd_one_first_and_count_the_rest():
    from gpuvet.checks.model import Cited
    from gpuvet.cli.render_doctor import cited_lines

    same = [Cited("NVML", "clock-event reasons now", "none", f"gpu{i}") for i in range(7)]
    odd = Cited("NVML", "clock-event reasons now", "sw_power_cap", "gpu7")
    assert cited_lines([*same, odd]) == ["NVML: clock-event reasons now = sw_power_cap [gpu7] (+1 more in --json)"]
    assert cited_lines([*same, odd], most=2)[1] == "NVML: clock-event reasons now = none [gpu0, gpu1, gpu2 and 4 more]"
    assert cited_lines([Cited("kmsg", "NVRM message", "x" * 400 + "\nforged")]) == [
        "kmsg: NVRM message = " + "x" * 157 + "..."]
    assert cited_lines([Cited("a", "b", "two\nlines")]) == ["a: b = two\\nlines"]
    assert cited_lines([]) == []


def test_doctor_steps_show_what_they_read(capsys, env):
    _, spec = env
    code, out = text(capsys, "doctor", "--sim", spec, "--window", "10m", "--verbose")  # every step, as before issue 46
    assert code == 1 and "[bold]rack:ab:7" in out  # the spec's name is in the citations, printed as given
    from gpuvet.checks.model import Cited
    from gpuvet.cli.render_doctor import cited_lines

    code, data = main(["doctor", "--sim", spec, "--window", "10m", "--json"]), json.loads(capsys.readouterr().out)
    flat = _flat(out)
    clear = [s for s in data["steps"] if s["status"] == "clear"]
    assert clear and all(s["evidence"] for s in clear)
    for s in data["steps"]:
        lines = cited_lines([Cited(**c) for c in s.get("evidence", [])])
        assert all(_flat(f"read: {line}") in flat for line in lines), (s["check"], lines)
    shown = sum(1 for line in out.splitlines() if "read: " in line)
    assert shown == sum(1 for s in data["steps"] if s.get("evidence"))  # one line per step that read something


def test_health_rows_show_what_each_check_read(capsys, env):
    _, spec = env
    code, out = text(capsys, "health", "--sim", spec)
    flat = _flat(out)
    assert "read: simulated node (a model, not hardware): uncorrectable ECC errors (volatile) = 0 [gpu0, gpu1, " \
           "gpu2 and 1 more]" in flat
    main(["health", "--sim", spec, "--json"])
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert sum(1 for line in out.splitlines() if "read: " in line) == sum(1 for f in findings if f.get("evidence"))
    assert all(f.get("evidence") for f in findings if f["status"] == "ok")


def test_health_prints_a_kernel_message_literally(capsys, env, monkeypatch, tmp_path):
    import gpuvet.backends.select as select
    from gpuvet.backends.nvidia.backend import NvidiaBackend
    from gpuvet.backends.nvidia.gateway import Nvml
    from tests.fakes.fake_nvml import hgx_h200

    log = tmp_path / "kmsg.txt"
    log.write_text("3,7,9000000,-;NVRM: GPU 0000:98:00.0: RmInitAdapter failed! [red]:ab:\x1b]0;owned\x07\n")
    monkeypatch.setattr(select, "open_backend", lambda **_: NvidiaBackend(Nvml(lib=hgx_h200()), kernel_log=log))
    code, out = text(capsys, "health")
    flat = _flat(out)
    assert code == 1 and "\x1b" not in out and "\x07" not in out
    assert "read: kernel log (nvidia readings): NVRM message = NVRM: GPU 0000:98:00.0: RmInitAdapter failed! " \
           "[red]:ab:\\x1b]0;owned\\x07 [record 7]" in flat
    assert rows(out, "kernel_messages", "FAIL", "0000:98:00.0:")


def test_log_list_keeps_a_node_name_whole_at_80_columns(capsys, env):
    """'mi300x-8' wrapped as 'mi300x-/8': at 80 columns the start time gives up its year instead."""
    assert main(["validate", "--sim", "mi300x-8", "--level", "quick"]) == 0
    capsys.readouterr()
    _, out = text(capsys, "log", "list")
    (row,) = rows(out, "mi300x-8")
    assert re.search(r"\b\d\d-\d\d \d\d:\d\d\b", row) and "quick" in row, row


def test_events_with_none_to_show_say_so_and_what_was_looked_at(capsys, env):
    assert main(["validate", "--sim", "mesh-4", "--level", "quick"]) == 0  # a logbook with no events
    capsys.readouterr()
    _, out = text(capsys, "events", "--since", "2h", "--module", "gpu3")
    assert out.startswith("no events newer than 2h of gpu3 in the logbook"), out
    assert main(["events", "--json"]) == 0 and capsys.readouterr().out.strip() == "[]"


def test_every_help_fits_80_columns_without_a_cut(capsys, monkeypatch):
    """A value list in an option's help is a sentence that wraps; rich cut 'adam|adamw|…|ada…'."""
    from gpuvet.cli.app import command

    monkeypatch.setenv("COLUMNS", "80")
    for path, _ in _commands(command()):
        main([*path, "--help"])
        out = capsys.readouterr().out.replace("://…", "")  # a URL's elision written in the help itself
        assert "…" not in out, (path, [line for line in out.splitlines() if "…" in line])


def test_doctor_answers_first_then_each_judged_check_once_then_one_cant_tell_line(capsys, env):
    """Issue 46: the verdict and causes come first; a check several playbooks run is listed once; the checks
    that could not tell are one line naming what would judge them; --verbose lists every step."""
    _, spec = env
    code, out = text(capsys, "doctor", "--sim", spec, "--window", "10m")
    main(["doctor", "--sim", spec, "--window", "10m", "--json"])
    data = json.loads(capsys.readouterr().out)
    lines = [ln for ln in out.splitlines() if ln.strip() and "SIMULATED" not in ln and not set(ln) <= set("╭─╮╰╯│ ")]
    assert code == 1 and lines[0].startswith("doctor (triage across all playbooks): ") and "cause(s) found" in lines[0]
    first_finding = next(i for i, ln in enumerate(lines) if ln.startswith(("CRITICAL", "WARN", "INFO")))
    table = lines.index("checks that judged something")
    assert first_finding < table  # the causes before the checks
    judged = {s["check"] for s in data["steps"] if s["status"] != "inconclusive"}
    rows = [m.group(1) for ln in lines[table:] if (m := re.match(r"([a-z_]+) +(confirmed|clear) ", ln))]
    assert sorted(rows) == sorted(judged) and len(rows) == len(set(rows))  # each judged check once
    assert "steps in order" not in out and "can't tell  " not in out  # no can't-tell rows
    unjudged = data["cant_tell"]["checks"]
    assert unjudged and not set(unjudged) & judged and data["cant_tell"]["give"]
    assert f"can't tell: {len(unjudged)} check(s); " in _flat(out)
    _, verbose = text(capsys, "doctor", "--sim", spec, "--window", "10m", "--verbose")
    assert "steps in order" in verbose and "can't tell  " in verbose
