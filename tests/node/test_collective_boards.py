"""Which preset board a collective log's model is priced on (issue 46 review): the xGMI mesh only for a
module with the preset's own link count; any other model is "can't tell", naming the design figure the
catalog lacks or the board its links make, never another model's mesh."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuvet.captures.read import read
from gpuvet.doctor.collective_expect import board, judge
from gpuvet.node.catalog import find_model

_DEVICE = "#  Rank  {i} Group  0 Pid  41{i:02d} on    node1 device  {i} [0000:c{i}:00.0] AMD Instinct {model}\n"
_ROW = ("  8589934592    2147483648     float     sum      -1   110000   78.09  {busbw:.2f}      0   110500   77.74  "
        "{busbw:.2f}      0\n")


def _log(model: str, busbw: float) -> str:
    head = ("# nThread 1 nGpus 8 minBytes 8589934592 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 "
            "agg iters: 1 validation: 1 graph: 0\n#\nrccl-tests: Version develop:ae3e635\n# Using devices\n")
    table = ("#\n#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw"
             "   busbw #wrong\n#        (B)    (elements)                               (us)  (GB/s)  (GB/s)"
             "            (us)  (GB/s)  (GB/s)\n")
    devices = "".join(_DEVICE.format(i=i, model=model) for i in range(8))
    return head + devices + table + _ROW.format(busbw=busbw) + "# Errors with asserts: 0\n# Avg bus bandwidth    : 1\n"


@pytest.mark.parametrize("model", ["MI250", "MI210", "MI250X"])
def test_an_xgmi_module_without_the_presets_mesh_is_not_priced_on_it(model: str, tmp_path: Path) -> None:
    path = tmp_path / "rccl.txt"
    path.write_text(_log(model, 136.66), encoding="utf-8")
    (result,) = read(str(path)).nccl.results
    judged = judge(result)
    assert judged is not None and judged.expected is None
    assert "reach on" not in judged.basis and model in judged.basis
    assert "link count" in judged.basis or "make no mi300x-8 mesh" in judged.basis


def test_a_module_with_the_presets_seven_links_is_still_priced_on_its_mesh(tmp_path: Path) -> None:
    path = tmp_path / "rccl.txt"
    path.write_text(_log("MI325X", 300.0), encoding="utf-8")
    (result,) = read(str(path)).nccl.results
    judged = judge(result)
    assert judged is not None and judged.expected is not None and "mi300x-8" in judged.basis


@pytest.mark.parametrize(("name", "missing"), [("H800-SXM", "no NVLink link count"), ("H20-SXM", "no NVLink link count"),
                                               ("MI300A", "no xGMI (Infinity Fabric) link count"),
                                               ("MI100", "no xGMI link rate"), ("MI50", "no xGMI link rate")])
def test_the_reason_names_the_catalog_figure_that_is_missing(name: str, missing: str) -> None:
    model = find_model(name)
    assert model is not None
    said = board(model)
    assert isinstance(said, str) and missing in said and "cube mesh" not in said
