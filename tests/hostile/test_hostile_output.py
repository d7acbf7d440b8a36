"""Text from a spec, a capture, an envelope or a telemetry dump never reaches the terminal as a
control sequence: a node name that retitles the window or clears the screen is printed with
its escapes shown (``\\x1b``), in tables, banners, one-line formats and error messages alike."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gpuvet.cli.app import main
from gpuvet.cli.literal import line, literal

EVIL = "rack\x1b]0;pwned\x07\x1b[2J\x9b31m\u202eevil"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e]")  # what must never be printed


def call(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out + err


def stdout(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(list(args))
    return code, capsys.readouterr().out


def _clean(text: str) -> None:
    assert not RAW.search(text), repr(RAW.search(text))


@pytest.fixture
def evil_spec(tmp_path: Path) -> str:
    path = tmp_path / "s.yaml"
    faults = "[{kind: link_down, between: [gpu0, gpu1]}]"
    path.write_text(f"base: mesh-4\nname: {json.dumps(EVIL)}\nfaults: {faults}\n", encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(("argv", "shown"), [
    (["spec", "check", "{spec}"], "\\x1b]0;pwned"),
    (["spec", "show", "{spec}"], "\\e]0;pwned"),  # YAML's own escape
    (["health", "--sim", "{spec}"], "\\x1b]0;pwned\\x07\\x1b[2J"),  # BEL shown, not deleted by rich
    (["health", "--sim", "{spec}", "--format", "nhc"], None),
    (["health", "--sim", "{spec}", "--format", "npd"], None),
    (["topo", "--sim", "{spec}", "--expect", "mesh-4"], "\\x1b]0;pwned"),
    (["inventory", "--sim", "{spec}"], "\\x1b]0;pwned\\x07"),
    (["doctor", "--sim", "{spec}", "--window", "1m"], None),
])
def test_a_spec_name_with_escape_sequences_is_printed_escaped(capsys, evil_spec, argv, shown):
    code, text = call(capsys, *[a.format(spec=evil_spec) for a in argv])
    assert code in (0, 1), text
    assert shown is None or shown in text
    _clean(text)


def test_an_error_message_naming_hostile_input_is_printed_escaped(capsys, tmp_path):
    code, text = call(capsys, "spec", "check", str(tmp_path / f"{EVIL}.yaml"))
    assert code == 2 and "\\x1b]0;pwned" in text
    _clean(text)


def test_a_product_name_from_nvidia_smi_q_is_printed_escaped(capsys, tmp_path):
    real = Path(__file__).parent.parent / "data" / "captures" / "smi_q_h100_2gpu.txt"
    text = real.read_text(encoding="utf-8").replace("NVIDIA H100 80GB HBM3", f"NVIDIA {EVIL}", 1)
    capture = tmp_path / "q.txt"
    capture.write_text(text, encoding="utf-8")
    code, out = call(capsys, "inventory", "--from", str(capture))
    assert code in (0, 1, 2), out
    _clean(out)


def test_a_fleet_envelopes_node_type_is_printed_escaped(capsys, tmp_path):
    code, out = stdout(capsys, "validate", "--sim", "mesh-4", "--level", "quick", "--no-log", "--json")
    assert code in (0, 1)
    files = []
    for i in range(3):
        env = json.loads(out)
        env["environment"]["node"] = f"{EVIL}{i}"
        env["environment"]["node_type"] = EVIL
        path = tmp_path / f"e{i}.json"
        path.write_text(json.dumps(env))
        files.append(str(path))
    code, text = call(capsys, "fleet", "merge", *files)
    assert code in (0, 1, 2), text
    _clean(text)


def test_prometheus_labels_in_a_replay_are_printed_escaped(capsys, tmp_path):
    host = EVIL.replace('"', "")
    rows = "".join(f'DCGM_FI_DEV_GPU_TEMP{{gpu="0",UUID="GPU-1",modelName="{host}",Hostname="{host}"}} '
                   f'{60 + i % 3} {1700000000000 + i * 60000}\n' for i in range(30))
    dump = tmp_path / "dump.prom"
    dump.write_text(rows, encoding="utf-8")
    code, text = call(capsys, "watch", "--replay", str(dump), "--no-log")
    assert code in (0, 1, 2), text
    _clean(text)


def test_bel_backspace_and_carriage_return_are_shown_escaped_not_deleted(capsys, tmp_path):
    """rich deletes BEL, BS, VT, FF and CR when it makes a Text: a name "evil\\e]0;pwned\\a\\e[2J"
    printed as "evil\\x1b]0;pwned\\x1b[2J", hiding the BEL; every control character shows as its escape."""
    path = tmp_path / "esc.yaml"
    path.write_text('base: mesh-4\nname: "evil\\e]0;pwned\\a\\e[2J\\b\\v\\f\\rx"\n', encoding="utf-8")
    code, text = call(capsys, "health", "--sim", str(path))
    assert code in (0, 1), text
    assert "evil\\x1b]0;pwned\\x07\\x1b[2J\\x08\\x0b\\x0c\\x0dx" in text
    _clean(text)


def test_literal_escapes_controls_and_keeps_text():
    assert literal("a\x1b[2Jb\tc\nd") == "a\\x1b[2Jb\tc\nd"
    assert literal("\u202eabc") == "\\u202eabc"
    assert literal("H200 · 0000:AB:00.0 — 141 GB") == "H200 · 0000:AB:00.0 — 141 GB"
    assert line("drain\nreason\x07") == "drain\\nreason\\x07"
