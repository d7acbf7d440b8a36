"""Issue 17, specs and files: sizes nobody bounded, alias bombs, cycles, impossible figures —
each refused before work with exit 2 and the limit named (docs/limits.md)."""

import pytest
import yaml

from gpuvet.cli.app import main
from gpuvet.errors import GpuvetError, SpecError
from gpuvet.node import spec as spec_module
from gpuvet.node.spec import load_spec
from gpuvet.node.yamlload import MAX_DEPTH, MAX_FILE_BYTES, load_bounded
from gpuvet.validate.rules import load_rules


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUVET_HOME", str(tmp_path / "home"))


def refused(path: str, *words: str) -> str:
    with pytest.raises(SpecError) as info:
        load_spec(path)
    message = info.value.message
    assert all(w in message for w in words), message
    return message


def _bomb(levels: int = 9) -> str:
    text = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    for i in range(levels - 1):
        name, prev = chr(98 + i), chr(97 + i)
        text += f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 10) + "]\n"
    return text


def test_100000_modules_are_refused_naming_the_limit(write_spec):
    refused(write_spec("name: big\nmodules: {count: 100000, model: H200-SXM}\n"), "100,000 modules", "1,024")


def test_a_long_module_list_is_refused_before_validation(write_spec):
    rows = "".join(f"  - {{id: g{i}, model: H200-SXM}}\n" for i in range(2000))
    refused(write_spec("name: big\nmodules:\n" + rows), "more than 1,024 modules", "the limit is 1,024")


def test_576_modules_in_one_switched_fabric_are_allowed(write_spec):
    spec, _ = load_spec(write_spec("name: nvl576\nmodules: {count: 576, model: B200}\n"
                                   "fabric: {kind: switched, link: {kind: nvlink, width: 18, lane_gbps: 50}}\n"
                                   "host: {sockets: 288}\n"))
    assert spec.modules.count == 576  # type: ignore[union-attr]


def test_a_1000_module_full_mesh_is_refused_by_its_link_count(write_spec):
    refused(write_spec("name: m\nmodules: {count: 1000, model: H100-SXM}\n"
                       "fabric: {kind: full_mesh, link: {kind: nvlink, width: 4, lane_gbps: 25}}\n"),
            "500,500 links", "20,000")


@pytest.mark.parametrize(("text", "words"), [
    ("host: {sockets: 1000000}\n", ("host.sockets", "1024")),
    ("host: {sockets: 1000}\npcie: {switches_per_socket: 64, nics_per_switch: 16}\n", ("endpoints", "8,192")),
    ("pcie: {switches_per_socket: 1000000}\n", ("switches_per_socket",)),
    ("pcie: {switches_per_socket: 1, nics_per_switch: 1000000}\n", ("nics_per_switch",)),
])
def test_millions_of_switches_sockets_or_nics_are_refused(write_spec, text, words):
    refused(write_spec("name: m\nmodules: {count: 8, model: H100-SXM}\n" + text), *words)


def test_a_yaml_alias_bomb_is_refused_without_expanding_it(write_spec):
    refused(write_spec(_bomb() + "name: n\nmodules: {count: 8, model: H100-SXM}\n"), "expands to more than")


def test_too_many_aliases_are_refused():
    text = "x: &x 1\ny: [" + ", ".join(["*x"] * 1500) + "]\n"
    with pytest.raises(GpuvetError, match="more than 1000 YAML aliases"):
        load_bounded(text, "t")


def test_50_faults_through_aliases_load_and_300_are_refused(write_spec):
    fault = "&f {kind: link_degraded, between: [gpu1, nvswitch0], factor: 0.5}"
    spec, _ = load_spec(write_spec(f"base: hgx-h200-8\nfaults: [{fault}, " + ", ".join(["*f"] * 49) + "]\n"))
    assert len(spec.faults) == 50
    refused(write_spec(f"base: hgx-h200-8\nfaults: [{fault}, " + ", ".join(["*f"] * 299) + "]\n", "f300.yaml"),
            "more than 256 faults", "the limit is 256")


def test_deep_nesting_is_refused_not_a_recursion_error(write_spec):
    refused(write_spec("name: " + "[" * 40 + "]" * 40 + "\n"), f"more than {MAX_DEPTH} levels")
    refused(write_spec("name: " + "[" * 100_000 + "]" * 100_000 + "\n", "deeper.yaml"), "nesting depth")


def test_an_oversized_file_is_refused_unread(write_spec):
    refused(write_spec("name: x\n#" + "a" * (MAX_FILE_BYTES + 10) + "\n"), "limit is 262,144")


def test_a_spec_whose_base_is_itself_is_a_clear_error(write_spec, tmp_path, monkeypatch):
    path = write_spec("base: self.yaml\nname: s\n", "self.yaml")
    refused(path, "chain loops")
    monkeypatch.chdir(tmp_path)
    refused("./self.yaml", "chain loops")
    refused(str(tmp_path / "self.yaml"), "chain loops")


def test_two_specs_naming_each_other_are_a_clear_error(write_spec):
    write_spec("base: ./b.yaml\nname: a\n", "a.yaml")
    b = write_spec("base: a.yaml\nname: b\n", "b.yaml")
    refused(b, "chain loops", "a.yaml", "b.yaml")


def test_a_long_base_chain_is_refused(write_spec):
    for i in range(12):
        last = write_spec(f"base: s{i + 1}.yaml\nname: s{i}\n" if i < 11 else "base: mesh-4\nname: s11\n",
                          f"s{i}.yaml")
    assert last
    refused(str(last).replace("s11.yaml", "s0.yaml"), "longer than 8")


@pytest.mark.parametrize("value", ["1e308", ".inf", ".nan", "-5", "0"])
def test_impossible_lane_speeds_are_refused(write_spec, value):
    refused(write_spec(f"base: mesh-4\nfabric: {{kind: full_mesh, link: {{kind: nvlink, width: 4, lane_gbps: {value}}}}}\n"),
            "lane_gbps")


def test_a_module_on_a_socket_the_host_does_not_have_is_refused(write_spec):
    refused(write_spec("name: s\nhost: {sockets: 2}\nmodules: [{id: gpu0, model: H100-SXM, socket: 5}]\n"),
            "socket 5", "2 socket(s)")


@pytest.mark.parametrize("modules", [
    "[{id: gpu0, model: H100-SXM, custom: {name: x, tdp_w: 500}}]",
    "{count: 4, model: H100-SXM, custom: {name: x}}",
])
def test_a_module_with_both_model_and_custom_is_refused(write_spec, modules):
    refused(write_spec(f"name: s\nmodules: {modules}\n"), "not both")


def test_a_custom_model_with_infinite_figures_is_refused(write_spec):
    refused(write_spec("name: s\nmodules: [{id: gpu0, custom: {name: x, tflops: {bf16: .inf}}}]\n"), "tflops")


def test_refusals_through_the_cli_exit_2_naming_the_limit(capsys, write_spec):
    path = write_spec("name: big\nmodules: {count: 100000, model: H200-SXM}\n")
    for argv in (["spec", "check", path], ["topo", "--sim", path], ["plan", "collective", "--node", path]):
        code = main(argv)
        _, err = capsys.readouterr()
        assert code == 2 and "the limit is 1,024 modules" in err and "Traceback" not in err


def test_a_binary_rules_file_is_a_clear_error(tmp_path, capsys):
    path = tmp_path / "rules.yaml"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff" * 50)
    with pytest.raises(GpuvetError, match="not UTF-8 text"):
        load_rules(path)
    code = main(["validate", "--sim", "mesh-4", "--no-log", "--rules", str(path)])
    assert code == 2 and "binary file" in capsys.readouterr().err


@pytest.mark.parametrize("threshold", [".nan", ".inf", "-.inf"])
def test_a_rules_threshold_that_can_never_fire_is_refused(tmp_path, threshold):
    path = tmp_path / "rules.yaml"
    path.write_text(f"rules:\n  - {{check: '*', field: value, op: lt, threshold: {threshold}, verdict: fail}}\n")
    with pytest.raises(GpuvetError, match="finite"):
        load_rules(path)


def test_a_rules_alias_bomb_is_refused(tmp_path):
    path = tmp_path / "rules.yaml"
    path.write_text(_bomb() + "rules: []\n")
    with pytest.raises(GpuvetError, match="expands to more than"):
        load_rules(path)


def test_the_bounded_loader_reads_what_safe_load_reads():
    text = "a: &x {b: [1, 2.5, true, null, '2026-01-01']}\nc: *x\nd: {<<: *x, e: 3}\n"
    assert load_bounded(text, "t") == yaml.safe_load(text)


def test_limits_are_where_docs_say():
    assert spec_module.MAX_MODULES >= 576 and spec_module.MAX_FAULTS == 256 and spec_module.MAX_LINKS == 20_000
