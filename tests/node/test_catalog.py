import re
from pathlib import Path

import pytest

from gpuvet.errors import CatalogError
from gpuvet.node.catalog import CATALOG, _from_sheet, find_model, get_model
from gpuvet.node.catalog_more import _MIB, NOT_FOUND, SHEETS, Sheet


def test_catalog_has_the_required_models():
    assert {"H100-SXM", "H200-SXM", "A100-SXM-80GB", "L40S", "B200", "MI300X"} <= set(CATALOG)


@pytest.mark.parametrize("name", list(CATALOG))
def test_every_figure_has_a_source(name):
    assert CATALOG[name].unsourced() == [], f"{name}: {CATALOG[name].unsourced()} have no source"


def test_a_figure_of_a_sheet_no_document_gave_is_unsourced():
    """The source check can fail: a catalog_more row whose sheet was not found sources only its noted figures."""
    row = Sheet("X-1", "nvidia", NOT_FOUND, 1024, 900.0, {}, None, None, None, None, None, None, ("X-1",),
                {"memory_mib": _MIB + "a capture"})
    assert _from_sheet(row).unsourced() == ["memory_bw_gbps"]
    assert _from_sheet(row._replace(sheet="a vendor datasheet")).unsourced() == []


def test_a_driver_total_cites_a_capture_of_that_very_model():
    """Each catalog_more driver total's capture prints the model's own name and that total: none is borrowed."""
    cited = [(row, row.notes["memory_mib"][len(_MIB):].split()[0]) for row in SHEETS
             if row.memory_mib is not None and row.notes.get("memory_mib", "").startswith(_MIB)]
    assert len(cited) >= 10
    for row, path in cited:
        text = (Path("tests/data/captures") / path).read_text(encoding="utf-8", errors="replace")
        assert f"{row.memory_mib}MiB" in text.replace(" MiB", "MiB").replace(",", ""), (row.name, path)
        cut = re.findall(r"(NVIDIA [\w-]+)\.\.\.", text)  # the table's cut name: 'NVIDIA A100-PCI...'
        assert any(alias.lower() in text.lower() or any(alias.startswith(c) for c in cut) for alias in row.aliases), (
            row.name, path)


def test_dense_not_sparse():
    # H100 SXM sheet: 1,979 TFLOPS BF16 *with sparsity*; dense is half.
    assert CATALOG["H100-SXM"].tflops["bf16"] == pytest.approx(1978.9 / 2, abs=0.1)
    assert CATALOG["H200-SXM"].fabric_gbps == 450  # per direction, not the 900 GB/s duplex figure


def test_driver_names_resolve():
    assert find_model("NVIDIA H100 80GB HBM3").name == "H100-SXM"
    assert find_model("NVIDIA A100-SXM4-80GB").name == "A100-SXM-80GB"
    assert find_model("NVIDIA H200").name == "H200-SXM"
    assert find_model("Tesla K80") is None


def test_unknown_model_error_lists_known_ones():
    with pytest.raises(CatalogError) as err:
        get_model("H900", where="spec.yaml, modules[0]")
    assert "H900" in str(err.value) and "H200-SXM" in str(err.value) and "spec.yaml" in str(err.value)


def test_memory_is_the_total_nvidia_smi_reports_not_the_marketing_figure():
    assert CATALOG["H200-SXM"].memory_mib == 143_771 and CATALOG["H100-SXM"].memory_mib == 81_559
    for model in CATALOG.values():  # no driver total read for a model: both unknown (issue 46), never a round figure
        assert model.memory_bytes == (None if model.memory_mib is None else model.memory_mib * 2**20), model.name
    # an "80GB" H100 is 79.6 GiB or 85.5 GB, never "86 GB"
    assert CATALOG["H100-SXM"].memory_gib == pytest.approx(79.65, abs=0.01)
    assert CATALOG["H100-SXM"].memory_bytes / 1e9 == pytest.approx(85.52, abs=0.01)


def test_the_h100_capture_and_the_catalog_agree():
    from pathlib import Path

    xml = (Path(__file__).parent.parent / "data" / "captures" / "smi_q_x_h100_8gpu.xml").read_text()
    assert f"<total>{CATALOG['H100-SXM'].memory_mib} MiB</total>" in xml


def test_simulated_inventory_catalog_and_plan_name_the_unit(capsys):
    import json

    from gpuvet.backends.sim.backend import SimBackend
    from gpuvet.cli.app import main

    inventory = SimBackend.from_ref("hgx-h200-8").inventory()
    assert {m.memory_bytes for m in inventory.modules} == {143_771 * 2**20}
    assert main(["catalog", "--json"]) == 0
    rows = {m["name"]: m for m in json.loads(capsys.readouterr().out)}
    assert rows["H100-SXM"]["memory_mib"] == 81_559 and rows["H100-SXM"]["memory_bytes"] == 81_559 * 2**20
    assert main(["catalog"]) == 0
    table = capsys.readouterr().out
    assert "GiB" in table and "79.6" in table and " 86 " not in table
    assert main(["plan", "memory", "--params", "7B", "--module", "H100-SXM"]) == 0
    assert "79.6 GiB = 85.5 GB" in capsys.readouterr().out
