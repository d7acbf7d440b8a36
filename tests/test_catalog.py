import pytest

from gpuvet.errors import CatalogError
from gpuvet.node.catalog import CATALOG, find_model, get_model


def test_catalog_has_the_required_models():
    assert {"H100-SXM", "H200-SXM", "A100-SXM-80GB", "L40S", "B200", "MI300X"} <= set(CATALOG)


@pytest.mark.parametrize("name", list(CATALOG))
def test_every_figure_has_a_source(name):
    model = CATALOG[name]
    for figure in model.figure_names():
        assert model.sources.get(figure), f"{name}.{figure} has no source"


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
