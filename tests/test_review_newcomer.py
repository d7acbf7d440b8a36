"""A newcomer's run of gpuvet (the Ascend preset, replay, captures, docs): each finding, with what
gpuvet must make of it."""

from __future__ import annotations

import contextlib
import io
import json
from typing import Any

from gpuvet.cli.app import main

_ASCEND_TOPO = "tests/data/captures/real/ascend_arthurchiao_910b_topo.txt"


def _call(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    assert "Traceback" not in err.getvalue()
    return code, out.getvalue(), err.getvalue()


def _json(*args: str) -> tuple[int, dict[str, Any]]:
    code, out, err = _call(*args, "--json")
    assert code != 2, err
    return code, json.loads(out)


def test_atlas_hccs_pairs_are_all_28_and_the_unknown_pcie_path_is_assumed() -> None:
    """No pair takes the host's PCIe tree, which the preset says is not known: every HCCS pair
    shows its 28 GB/s link, and the host path is marked assumed."""
    _, data = _json("topo", "--node", "atlas-800t-a2")
    cells = [cell for row in data["matrix"].values() for cell in row.values()]
    assert {(c["label"], c["gbps"], c["assumed"]) for c in cells} == {("SD1", 28.0, False)}
    assert all(hp["assumed"] for hp in data["host_paths"].values())


def test_atlas_capture_says_its_assumed_hccs_rate_is_not_compared() -> None:
    """A topology capture names HCCS links, not their rate: "no differences" must not pass the
    assumed ~64 off as agreeing with the design's 28."""
    code, out, _ = _call("topo", "--from", _ASCEND_TOPO, "--expect", "atlas-800t-a2")
    assert code == 0
    assert "can't tell the rate of 28 fabric link(s)" in " ".join(out.split())
    assert "No differences in what was read" in out
    _, data = _json("topo", "--from", _ASCEND_TOPO, "--expect", "atlas-800t-a2")
    assert len(data["compared"]["fabric_rate_unread"]) == 28
