"""A slice of the root-cause matrix (benchmarks/validate_matrix.py runs it whole): one seeded
two-fault mix on each of four preset families (switched NVLink, full mesh, PCIe tree, xGMI),
validated simulated; the roots are the planted faults, every failed or warned check is attached
to one root, and the first 24 lines at 80 columns hold the verdict and every root."""

from __future__ import annotations

import pytest

from tests.harness.root_matrix import cases, run_case

SLICE = list(cases(("hgx-h200-8", "mesh-4", "pcie-8", "mi300x-8"), sizes=(2,)))


@pytest.mark.parametrize("case", SLICE, ids=[c.name for c in SLICE])
def test_roots_are_the_planted_faults_on_a_two_fault_mix(case):
    got = run_case(case)
    assert len(case.faults) == 2
    assert got.roots_match, got.detail
    assert got.all_attached, got.detail
    assert got.fits_screen, got.detail
