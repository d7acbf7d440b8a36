"""RCCL's init prints advisory WARNs on healthy nodes (ROCm/rccl src/init.cc: NUMA auto balancing on, the distro's
default; 'iommu=pt' missing from the kernel command line; HSA_FORCE_FINE_GRAIN_PCIE unset): each is a performance or
stability advice, printed before any communicator exists, never a collective that failed (issue 46, review RF3).
A WARN no family names beside them is still a lead. Lines written here."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import capture_json

_HEAD = "node1:1234:1234 [0] NCCL INFO RCCL version 2.18.3+hip6.0\n"
_TAIL = ("node1:1234:1234 [0] NCCL INFO comm 0x55 rank 0 nranks 2 cudaDev 0 busId 5000 - Init COMPLETE\n"
         "node1:1234:1234 [1] NCCL INFO comm 0x56 rank 1 nranks 2 cudaDev 1 busId 15000 - Init COMPLETE\n")
_SRC = "node1:1234:1234 [0] /build/rccl/hipify/src/init.cc:{n} NCCL WARN {w}\n"
_ADVICE = ('NUMA auto balancing enabled which can lead to variability in the RCCL performance! Disable by '
           '"sudo sysctl kernel.numa_balancing=0"',
           'Missing "iommu=pt" from kernel command line which can lead to system instablity or hang!',
           'Missing "HSA_FORCE_FINE_GRAIN_PCIE=1" from environment which can lead to low RCCL performance, '
           'system instablity or hang!')


def _warns(tmp_path: Path, text: str) -> list[dict[str, object]]:
    found = capture_json(tmp_path, text)["findings"]
    assert isinstance(found, list)
    return [f for f in found if f["severity"] in ("warn", "critical")]


def test_rccl_init_advisories_on_a_healthy_run_are_no_finding(tmp_path: Path) -> None:
    for n, advice in enumerate(_ADVICE):
        assert _warns(tmp_path, _HEAD + _SRC.format(n=140 + n, w=advice) + _TAIL) == [], advice


def test_an_unknown_warn_beside_the_advice_is_still_a_lead(tmp_path: Path) -> None:
    text = _HEAD + _SRC.format(n=142, w=_ADVICE[0]) + _SRC.format(n=88, w="Widget ring 3 does not loop back") + _TAIL
    found = _warns(tmp_path, text)
    assert len(found) == 1 and "Widget ring" in str(found[0]["evidence"])
