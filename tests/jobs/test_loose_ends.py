"""Loose ends users hit: a spec's power cap bounded by the catalog, the plan's tied/untied output
head, firmware versions in validate's run record, the Grafana panel for the ledger's ladder step."""

import json
from dataclasses import replace
from pathlib import Path

import pytest

from gpuvet.cli.app import main
from gpuvet.node.catalog import get_model

# --- a spec's power cap is bounded by the module model's maximum (the catalog's tdp_w) -------------


def _cap_spec(base: str, module: str, watts: float) -> str:
    return f"base: {base}\nname: capped\nfaults:\n  - {{kind: power_cap_low, module: {module}, watts: {watts}}}\n"


@pytest.mark.parametrize("base, model", [("mesh-4", "H100-SXM"), ("pcie-8", "L40S")])
def test_a_power_cap_above_the_modules_maximum_is_refused_naming_file_key_and_bound(
        tmp_path, capsys, base, model):
    most = get_model(model).tdp_w
    assert most is not None
    path = tmp_path / "cap.yaml"
    path.write_text(_cap_spec(base, "gpu1", 5000), encoding="utf-8")
    assert main(["spec", "check", str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "faults[0] (power_cap_low)" in err and "`watts`" in err
    assert f"{most:g} W" in err and "5000 W" in err and "Fix:" in err
    assert main(["topo", "--node", str(path), "--json"]) == 2  # every command that loads the spec
    assert main(["topo", "--node", base, "--expect", str(path), "--json"]) == 2  # a declared node too


def test_a_power_cap_at_the_maximum_is_accepted_and_zero_is_refused(tmp_path, capsys):
    most = get_model("H100-SXM").tdp_w
    path = tmp_path / "cap.yaml"
    path.write_text(_cap_spec("mesh-4", "gpu1", most), encoding="utf-8")
    assert main(["spec", "check", str(path)]) == 0
    path.write_text(_cap_spec("mesh-4", "gpu1", 0), encoding="utf-8")
    assert main(["spec", "check", str(path)]) == 2
    assert "watts" in capsys.readouterr().err


def test_each_module_is_bounded_by_its_own_model(tmp_path, capsys):
    l40s, h100 = get_model("L40S").tdp_w, get_model("H100-SXM").tdp_w
    assert l40s is not None and h100 is not None and l40s < h100
    watts = (l40s + h100) / 2
    path = tmp_path / "mixed.yaml"
    for module, code in (("b", 0), ("a", 2)):
        path.write_text("name: mixed\nmodules: [{id: a, model: L40S}, {id: b, model: H100-SXM}]\n"
                        f"faults:\n  - {{kind: power_cap_low, module: {module}, watts: {watts}}}\n", encoding="utf-8")
        assert main(["spec", "check", str(path)]) == code, module
    assert f"L40S's maximum power limit, {l40s:g} W" in capsys.readouterr().err


def test_a_custom_model_is_bounded_by_its_own_declared_maximum(tmp_path, capsys):
    path = tmp_path / "custom.yaml"
    path.write_text(
        "name: lab\nmodules: {count: 2, custom: {name: LabCard, tdp_w: 300}}\n"
        "faults:\n  - {kind: power_cap_low, module: gpu0, watts: 301}\n", encoding="utf-8")
    assert main(["spec", "check", str(path)]) == 2
    assert "LabCard's maximum power limit, 300 W" in capsys.readouterr().err


# --- the plan counts Llama's untied output head; GPT-2's is tied -------------------------------------


def test_llama_2_7b_counts_its_untied_head_and_gpt2_its_tied_one():
    from gpuvet.plan.shapes import get_shape

    llama, gpt2 = get_shape("llama-2-7b").arch, get_shape("gpt2").arch
    assert not llama.tied and gpt2.tied
    assert llama.parameters() == 6_738_415_616 and gpt2.parameters() == 124_439_808  # the checkpoints' counts
    assert (llama.norm, gpt2.norm) == ("rmsnorm", "layernorm")
    assert llama.parameters() - replace(llama, tied=True).parameters() == llama.vocab * llama.hidden


def test_every_shape_counts_exactly_its_published_total():
    """Review finding: 4h of norms a block is GPT-2's LayerNorm (weight and bias, twice); Llama's RMSNorm
    has 2h. With the norm, GPT-2's biases and the final norm, each count is the checkpoint's exactly."""
    from gpuvet.plan.shapes import SHAPES

    for shape in SHAPES.values():
        assert shape.arch.parameters() == shape.published_parameters, shape.name
        assert shape.arch.tied == shape.name.startswith("gpt2"), shape.name


def _plan_json(capsys, *args: str) -> dict:
    assert main(["plan", "memory", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_plan_memory_shape_and_head_flags_keep_the_json_keys_and_add_the_architecture(capsys):
    shaped = _plan_json(capsys, "--shape", "llama-2-7b")
    flags = _plan_json(capsys, "--layers", "32", "--hidden", "4096", "--heads", "32", "--ffn", "11008",
                       "--gated-mlp", "--head", "untied", "--norm", "rmsnorm")
    assert shaped["params"] == flags["params"] == shaped["architecture"]["parameters"] == 6_738_415_616
    assert shaped["architecture"]["norm"] == flags["architecture"]["norm"] == "rmsnorm"
    layernorm = _plan_json(capsys, "--shape", "llama-2-7b", "--norm", "layernorm")  # a weight and a bias each
    assert layernorm["params"] - shaped["params"] == (2 * 32 + 1) * 4096
    assert {"params", "modules", "breakdown", "assumptions", "accounting", "allowances"} <= set(shaped)
    assert shaped["architecture"]["shape"] == "llama-2-7b" and shaped["architecture"]["tied"] is False
    assert any("output head untied" in note for note in shaped["assumptions"])
    retied = _plan_json(capsys, "--shape", "llama-2-7b", "--head", "tied")  # a flag replaces the shape's figure
    assert shaped["params"] - retied["params"] == 32000 * 4096
    old = _plan_json(capsys, "--layers", "32", "--hidden", "4096", "--heads", "32")  # as before: tied by default
    assert old["architecture"]["tied"] is True and "shape" in old["architecture"]


@pytest.mark.parametrize("args, flag", [(["--shape", "llama-9"], "--shape"), (["--shape", "gpt2", "--head", "both"],
                                                                               "--head")])
def test_a_bad_shape_or_head_is_refused_naming_the_flag_and_the_choices(capsys, args, flag):
    assert main(["plan", "memory", *args]) == 2
    err = capsys.readouterr().err
    assert flag in err and "Fix:" in err


def test_params_that_contradict_the_shape_are_refused_naming_both(capsys):
    """Review finding: --shape llama-2-7b --params 13e9 printed 13B while the activations and FSDP units
    were the 7B shape's. A count within 1 % of the architecture's is the same model and is taken."""
    for command in (["plan", "memory"], ["plan", "step", "--node", "mesh-4"]):
        assert main([*command, "--shape", "llama-2-7b", "--params", "13e9"]) == 2
        err = capsys.readouterr().err
        assert "--params" in err and "--shape llama-2-7b" in err and "6,738,415,616" in err and "Fix:" in err
    assert main(["plan", "memory", "--layers", "32", "--hidden", "4096", "--heads", "32", "--params", "70B"]) == 2
    assert "--layers/--hidden/--heads" in capsys.readouterr().err
    assert _plan_json(capsys, "--shape", "llama-2-7b", "--params", "6.74B")["params"] == 6.74e9
    assert main(["plan", "step", "--node", "mesh-4", "--params", "13B", "--json"]) in (0, 1)  # no shape given: as before
    capsys.readouterr()


@pytest.mark.parametrize("flag", [["--head", "untied"], ["--norm", "rmsnorm"], ["--ffn", "11008"], ["--gated-mlp"]])
def test_an_architecture_flag_without_an_architecture_is_refused_not_ignored(capsys, flag):
    assert main(["plan", "memory", "--params", "7e9", *flag]) == 2
    err = capsys.readouterr().err
    assert flag[0] in err and "no architecture is given" in err and "--shape" in err


def test_an_unknown_norm_is_refused():
    assert main(["plan", "memory", "--shape", "gpt2", "--norm", "batchnorm"]) == 2


# --- validate's run record carries each module's firmware (VBIOS) beside the driver ------------------

OLD_DOCUMENT = Path(__file__).parent.parent / "data" / "run_documents" / "validate-mesh-4-before-firmware.json"


def test_validate_json_shows_the_vbios_of_a_simulated_module_as_simulated(capsys):
    assert main(["validate", "--node", "mesh-4", "--level", "quick", "--json", "--no-log"]) == 0
    doc = json.loads(capsys.readouterr().out)
    env = doc["environment"]
    assert doc["simulated"] is True and env["driver_version"] == env["cuda_driver_version"] == "simulated"
    assert [m["vbios_version"] for m in env["modules"]] == ["simulated"] * 4
    from gpuvet.logbook.document import as_document

    assert as_document(doc).environment.modules[0].vbios_version == "simulated"  # a declared field of the schema


def test_a_live_modules_vbios_inforom_and_gsp_firmware_are_in_the_envelope_where_read():
    from gpuvet.backends.nvidia.backend import NvidiaBackend
    from gpuvet.backends.nvidia.gateway import Nvml
    from gpuvet.validate.run import Level, envelope
    from tests.fakes.fake_nvml import hgx_h200

    fake = hgx_h200(2)
    fake.gpus[1].unsupported = {"nvmlDeviceGetVbiosVersion"}
    backend = NvidiaBackend(Nvml(lib=fake))
    first, second = envelope(backend, backend.inventory(), backend.node(), {}, Level.QUICK)["modules"]
    assert (first["vbios_version"], first["inforom_version"], first["gsp_firmware"]) == (
        fake.gpus[0].vbios, fake.gpus[0].inforom_image, fake.gpus[0].gsp_firmware)
    assert "vbios_version" not in second  # not read: absent, never guessed nor "simulated"


def test_compare_names_a_vbios_change_and_an_old_document_without_firmware_still_loads():
    from gpuvet.logbook.document import as_document
    from gpuvet.validate.compare import compare, not_recorded

    old_json = json.loads(OLD_DOCUMENT.read_text())
    assert all("vbios_version" not in m for m in old_json["environment"]["modules"])  # as written before
    old = as_document(old_json)
    assert old.environment.modules[0].vbios_version is None and old.to_json() == old_json  # prints as it was
    mid = old.environment.model_copy(update={"modules": [
        m.model_copy(update={"vbios_version": "96.00.74.00.1C"}) for m in old.environment.modules]})
    new = mid.model_copy(update={"modules": [
        m.model_copy(update={"vbios_version": "96.00.99.00.01" if m.id == "gpu0" else "96.00.74.00.1C"})
        for m in mid.modules]})
    changes = {c.key: (c.a, c.b) for c in compare(mid, old.checks, new, old.checks)[0]}
    assert changes == {"gpu0.vbios_version": ("96.00.74.00.1C", "96.00.99.00.01")}  # the one module flashed
    # review finding: an older run that never recorded the firmware is no change on every module
    assert compare(old.environment, old.checks, new, old.checks)[0] == []
    assert not_recorded(old.environment, new) == ["vbios_version"]
    assert not_recorded(new, old.environment) == []  # a field the later run lacks is still a change


def test_log_compare_says_once_what_the_older_run_never_recorded(capsys, tmp_path):
    from gpuvet.logbook.store import Logbook

    old = json.loads(OLD_DOCUMENT.read_text())
    assert main(["validate", "--node", "mesh-4", "--level", "quick", "--json", "--no-log"]) == 0
    new = json.loads(capsys.readouterr().out)
    book = Logbook(tmp_path / "book.db")
    ids = []
    for doc in (old, new):
        run_id = book.begin("validate", doc["environment"], True, "mesh-4")
        book.finish(run_id, doc["verdict"], doc["checks"])
        ids.append(run_id)
    book.close()
    main(["log", "compare", *ids, "--json", "--logbook", str(tmp_path / "book.db")])
    out = json.loads(capsys.readouterr().out)
    assert not any(e["key"].endswith(".vbios_version") for e in out["environment"])
    assert "vbios_version" in out["not_recorded_in_a"] and "not recorded in the older run" in out["note"]
    main(["log", "compare", *ids, "--logbook", str(tmp_path / "book.db")])
    text = capsys.readouterr().out
    assert text.count("not recorded in the older run") == 1 and "gpu0.vbios_version" not in text


# --- the forecast's words for a falling trend: below zero is not "includes zero" (review finding) -----


@pytest.mark.parametrize("low, high, says", [(-0.00014, -0.00007, "is below zero: cooling"),
                                              (-0.00002, 0.00003, "includes zero"), (0.0, 0.0001, "includes zero")])
def test_the_forecast_confidence_says_what_the_interval_is(low, high, says):
    from gpuvet.watch.forecast_fit import Forecast
    from gpuvet.watch.forecast_text import confidence, state_reason

    f = Forecast("g0", (low + high) / 2, low, high, 0.05, 0.07, None, None, None, 4.0, 500.0, 30.0, 96)
    text = confidence(f, 0.9, 1.0)
    assert says in text and (("includes zero" in text) == (low <= 0 <= high))
    reason = state_reason("watched", f, significant=False)
    assert ("falling (cooling): no forecast of a crossing" in reason) == (high < 0)
    assert ("includes zero" in reason) == (high >= 0)
