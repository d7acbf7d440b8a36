"""Issue 17, flags: every number a user types is checked where it is parsed — exit 2, the flag
and the allowed range named, before any work; JSON output is always valid JSON."""

import json
import math

import pytest

from gpuvet.cli.app import main
from gpuvet.cli.jsonout import dumps
from gpuvet.errors import GpuvetError
from gpuvet.quantities import is_loopback, parse_count, parse_float_range, parse_host_port, parse_seconds
from tests.support.helpers import call
from tests.support.ports import free_port


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUVET_HOME", str(tmp_path / "home"))
    return tmp_path / "home"



REFUSED = [
    # (argv, the flag named, a word of the allowed range)
    (["plan", "step", "--node", "mesh-4", "--tp", "0"], "--tp", "from 1"),
    (["plan", "step", "--node", "mesh-4", "--pp", "0"], "--pp", "from 1"),
    (["plan", "step", "--node", "mesh-4", "--mfu", "0"], "--mfu", "above 0"),
    (["plan", "step", "--node", "mesh-4", "--mfu", "-1"], "--mfu", "above 0"),
    (["plan", "step", "--node", "mesh-4", "--mfu", "nan"], "--mfu", "above 0"),
    (["plan", "step", "--node", "mesh-4", "--tp", "8"], "--tp/--pp", "module count"),
    (["plan", "power", "--budget", "4000", "--loads", "1,1", "--tdp", "0"], "--tdp", "above 0"),
    (["plan", "power", "--budget", "4000", "--loads", "1,1", "--tdp", "-700"], "--tdp", "above 0"),
    (["plan", "power", "--budget", "nan", "--loads", "1,1"], "--budget", "above 0"),
    (["plan", "power", "--budget", "inf", "--loads", "1,1"], "--budget", "above 0"),
    (["plan", "power", "--budget", "4000", "--loads", "1,nan"], "--loads", "from 0 to 1"),
    (["plan", "power", "--budget", "4000", "--loads", "1,,1"], "--loads", "no empty items"),
    (["plan", "memory", "--params", "1e400"], "--params", "at most"),
    (["plan", "memory", "--params", "7B", "--headroom", "1.5"], "--headroom", "from 0 to under 1"),
    (["plan", "memory", "--layers", "2", "--hidden", "64", "--heads", "4", "--kv-heads", "0"], "--kv-heads", "from 1"),
    (["plan", "memory", "--layers", "2", "--hidden", "64", "--heads", "4", "--kv-heads", "3"], "--kv-heads",
     "divide"),
    (["plan", "memory", "--layers", "2", "--hidden", "64", "--heads", "4", "--experts", "0"], "--experts", "from 1"),
    (["plan", "memory", "--params", "7B", "--zero", "4"], "--zero", "from 0 to 3"),
    (["plan", "collective", "--node", "mesh-4", "--ranks", "0"], "--ranks", "from 2"),
    (["plan", "collective", "--node", "mesh-4", "--ranks", "1", "--json"], "--ranks", "from 2"),
    (["bench", "efficiency", "--sim", "mesh-4", "--caps", "nan"], "--caps", "from 1 to 10,000"),
    (["bench", "efficiency", "--sim", "mesh-4", "--caps", ""], "--caps", "no empty items"),
    (["bench", "efficiency", "--sim", "mesh-4", "--caps", "300:700:0"], "--caps", "above 0"),
    (["bench", "efficiency", "--sim", "mesh-4", "--caps", "1:10000:0.001"], "--caps", "at most 1000"),
    (["bench", "efficiency", "--sim", "mesh-4", "--size", "-1"], "--size", "from 1"),
    (["bench", "efficiency", "--sim", "mesh-4", "--size", "0"], "--size", "from 1"),
    (["bench", "efficiency", "--sim", "mesh-4", "--fraction", "nan"], "--fraction", "above 0"),
    (["watch", "--node", "mesh-4", "--interval", "1e-9"], "--interval", "10ms"),
    (["watch", "--node", "mesh-4", "--interval", "0.0001ms"], "--interval", "10ms"),
    (["watch", "--node", "mesh-4", "--interval", "0"], "--interval", "10ms"),
    (["watch", "--node", "mesh-4", "--speedup", "nan"], "--speedup", "from 1"),
    (["watch", "--node", "mesh-4", "--speedup", "0"], "--speedup", "from 1"),
    (["watch", "--node", "mesh-4", "--speedup", "1e-9"], "--speedup", "from 1"),
    (["watch", "--node", "mesh-4", "--slow-every", "0"], "--slow-every", "10ms"),
    (["watch", "--node", "mesh-4", "--horizon", "0"], "--horizon", "1.0m"),
    (["watch", "--node", "mesh-4", "--retention", "0"], "--retention", "1.0m"),
    (["watch", "--node", "mesh-4", "--duration", "0"], "--duration", "10ms"),
    (["watch", "--node", "mesh-4", "--prometheus", "127.0.0.1:99999"], "--prometheus", "1 to 65535"),
    (["watch", "--node", "mesh-4", "--prometheus", "[nonsense]:9400"], "--prometheus", "IPv6"),
    (["watch", "--node", "mesh-4", "--prometheus", "host"], "--prometheus", "HOST:PORT"),
]


@pytest.mark.parametrize(("argv", "flag", "allowed"), REFUSED, ids=[" ".join(a[:2] + a[-2:]) for a, _, _ in REFUSED])
def test_a_bad_flag_value_is_refused_with_its_range(capsys, argv, flag, allowed):
    code, out, err = call(capsys, *argv)
    assert code == 2, err
    assert err.startswith("error: ") and flag in err and allowed in err, err
    assert "Traceback" not in err and out == ""


def test_refusal_happens_before_the_work(capsys, monkeypatch):
    from gpuvet.backends import select

    def boom(**kwargs):
        raise AssertionError("the backend was opened for a bad flag")

    monkeypatch.setattr(select, "open_backend", boom)
    code, _, err = call(capsys, "watch", "--sim", "mesh-4", "--interval", "0")
    assert code == 2 and "--interval" in err


def test_json_output_never_holds_nan_or_infinity():
    text = dumps({"algbw": math.inf, "busbw": -math.inf, "x": [math.nan, 1.5], "n": {"deep": math.nan}})
    assert "Infinity" not in text and "NaN" not in text
    assert json.loads(text) == {"algbw": None, "busbw": None, "x": [None, 1.5], "n": {"deep": None}}


def test_plan_collective_on_two_modules_is_valid_json(capsys):
    code, out, _ = call(capsys, "plan", "collective", "--node", "mesh-4", "--ranks", "2", "--json")
    data = json.loads(out, parse_constant=lambda c: pytest.fail(f"{c} in JSON output"))
    assert code == 0 and data["modules"] == 2 and data["algbw"] > 0


def test_prometheus_addresses_parse_ipv6_and_say_what_is_loopback():
    assert parse_host_port("[::]:9400", "p") == ("::", 9400)
    assert parse_host_port("[::1]:9400", "p") == ("::1", 9400)
    assert parse_host_port(":9400", "p") == ("127.0.0.1", 9400)
    assert parse_host_port("9400", "p") == ("127.0.0.1", 9400)
    assert parse_host_port("0.0.0.0:80", "p") == ("0.0.0.0", 80)
    assert [is_loopback(h) for h in ("127.0.0.1", "::1", "localhost", "0.0.0.0", "::", "10.0.0.5", "gpu-host")] == \
        [True, True, True, False, False, False, False]


@pytest.mark.parametrize("address", ["0.0.0.0:0", "[::]:0"])
def test_a_port_of_zero_is_refused(address):
    with pytest.raises(GpuvetError, match="1 to 65535"):
        parse_host_port(address, "--prometheus")


def test_binding_beyond_loopback_warns_on_stderr(capsys):
    code, out, err = call(capsys, "watch", "--sim", "mesh-4", "--prometheus", "0.0.0.0:0", "--duration", "1s")
    assert code == 2  # port 0 is refused, but the warning logic is checked below with a real bind
    code, out, err = call(capsys, "watch", "--sim", "mesh-4", "--prometheus", f"0.0.0.0:{free_port()}",
                          "--duration", "2s", "--speedup", "max", "--json", "--no-log")
    assert code == 0 and "warning" in err and "every machine" in err
    code, out, err = call(capsys, "watch", "--sim", "mesh-4", "--prometheus", f"127.0.0.1:{free_port()}",
                          "--duration", "2s", "--speedup", "max", "--json", "--no-log")
    assert code == 0 and "warning" not in err


def test_ipv6_any_is_understood(capsys):
    import socket

    if not socket.has_ipv6:
        pytest.skip("no IPv6 on this machine")
    code, out, err = call(capsys, "watch", "--sim", "mesh-4", "--prometheus", f"[::1]:{free_port()}",
                          "--duration", "2s", "--speedup", "max", "--json", "--no-log")
    assert code in (0, 2) and "Traceback" not in err
    if code == 2:  # IPv6 present in Python but not configured on this host
        assert "cannot serve" in err


def test_shared_parsers_refuse_what_cannot_be_meant():
    with pytest.raises(GpuvetError, match="at most"):
        parse_count("1e400", "--params")
    with pytest.raises(GpuvetError, match="ends below"):
        parse_float_range("700:300:50", "--caps", 1, 10_000)
    assert parse_float_range("300:700:200", "--caps", 1, 10_000) == (300.0, 500.0, 700.0)
    assert parse_seconds("500ms", "--interval", 0.01, 3600) == 0.5
    with pytest.raises(GpuvetError, match="out of range"):
        parse_seconds("2h", "--interval", 0.01, 3600)


@pytest.mark.parametrize("flag", ["--report", "--junit"])
@pytest.mark.parametrize("target", ["missing/x.html", "."])
def test_validate_output_paths_are_checked_before_the_run(capsys, tmp_path, monkeypatch, flag, target):
    from gpuvet.validate import run

    monkeypatch.setattr(run.Validator, "run", lambda self: pytest.fail("validate ran despite a bad output path"))
    code, _, err = call(capsys, "validate", "--sim", "mesh-4", "--no-log", flag, str(tmp_path / target))
    assert code == 2 and flag in err and ("does not exist" in err or "is a folder" in err)


@pytest.mark.parametrize("argv", [
    ["spec", "export", "--sim", "mesh-4", "-o", "{tmp}/missing/x.yaml"],
    ["spec", "export", "--sim", "mesh-4", "-o", "{tmp}"],
    ["baseline", "make", "run1", "-o", "{tmp}/missing/b.json"],
    ["report", "run1", "-o", "{tmp}/missing/r.html"],
    ["bench", "efficiency", "--sim", "mesh-4", "--report", "{tmp}/missing/e.html"],
])
def test_other_output_paths_are_checked_up_front(capsys, tmp_path, argv):
    code, _, err = call(capsys, *[a.format(tmp=tmp_path) for a in argv])
    assert code == 2 and ("does not exist" in err or "is a folder" in err), err


def test_the_error_printer_prints_markup_literally(capsys, tmp_path):
    folder = tmp_path / "a[/]b[bold]"
    code, _, err = call(capsys, "spec", "export", "--sim", "mesh-4", "-o", str(folder / "x.yaml"))
    assert code == 2 and "a[/]b[bold]" in err


def test_a_spec_name_with_markup_prints_literally(capsys, write_spec):
    path = write_spec("base: mesh-4\nname: 'rack[/]7 [red]x'\n")
    code, out, err = call(capsys, "spec", "check", path)
    assert code == 0 and "rack[/]7 [red]x" in out


def test_an_os_error_is_one_clear_message(capsys, monkeypatch):
    import errno

    from gpuvet.cli import app as app_module

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", "/data/logbook.db")

    class Full:
        main = staticmethod(full)

    monkeypatch.setattr(app_module, "command", Full)
    code, _, err = call(capsys, "catalog")
    assert code == 2 and err.startswith("error: No space left on device (/data/logbook.db)") and "free space" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("args", [["events", "--since", "2x"], ["watch", "--replay", "x.csv", "--step", "2x"],
                                  ["health", "--sim", "mesh-4", "--timeout", "2x"]])
def test_a_duration_refusal_names_the_flag_and_the_advice_once(capsys, tmp_path, monkeypatch, args):
    monkeypatch.setenv("GPUVET_HOME", str(tmp_path))
    assert main(args) == 2
    err = capsys.readouterr().err
    flag = args[-2]
    assert err.count(flag) == 1 and err.count("write e.g.") == 1 and "'2x' is not a duration" in err, err
