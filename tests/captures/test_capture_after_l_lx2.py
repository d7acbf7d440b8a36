"""Batch L's after-fixes (issue 46, LX2): /proc/driver/nvidia/version's 'NVRM version: NVIDIA UNIX …' line names
the driver loaded as the kernel's loading line does, so an issue form quoting it with an nvidia-smi -L list carries
that version into the inventory; a line naming no version leaves it unsaid. Xorg's 'Failed to initialize the
NVIDIA GPU at PCI:b:d:f' is the driver's init failure on that GPU, its decimal bus read as the bus id."""

from __future__ import annotations

from pathlib import Path

from tests.support.helpers import capture_findings, capture_json

_SMI_L = ("GPU 0: NVIDIA GeForce RTX 2080 SUPER (UUID: GPU-6304bf68-46a6-459f-2dc0-682f676a8d85)\n"
          "GPU 1: NVIDIA GeForce RTX 2080 SUPER (UUID: GPU-1177f867-a501-9c09-29b9-30540e93cc9a)\n")


def _driver(tmp_path: Path, version_line: str) -> object:
    software = capture_json(tmp_path, version_line + "\n" + _SMI_L, "inventory")["software"]
    assert isinstance(software, dict)
    return software["driver_version"]


def test_the_proc_version_files_nvrm_line_is_the_driver_version(tmp_path: Path) -> None:
    for line, version in (
            ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  610.43.02  Release Build  "
             "(dvs-builder@U22-I3-H05-01-2)  GCC version:  gcc version 12.2.0", "610.43.02"),
            ("NVRM version:  NVIDIA UNIX Open Kernel Module for x86_64  515.57  Release Build", "515.57"),
            ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.183.01  Sun May 12 19:39:15 UTC 2024", "535.183.01")):
        assert _driver(tmp_path, line) == version, line


def test_an_nvrm_version_line_without_a_version_says_none(tmp_path: Path) -> None:
    assert _driver(tmp_path, "NVRM version: (see the attached log)") is None


def test_xorgs_failed_to_initialize_line_is_the_modules_init_failure_on_its_bus(tmp_path: Path) -> None:
    relayed = ("Mar 05 23:33:35 host bumblebeed[1734]: [91063.874832] [ERROR][XORG] (EE) NVIDIA(GPU-0): Failed to "
               "initialize the NVIDIA GPU at PCI:{}.  Please\n")
    assert capture_findings(tmp_path, relayed.format("1:0:0")) == {("module_init_failed", "0000:01:00.0"): "critical"}
    assert capture_findings(tmp_path, relayed.format("65:0:0")) == {("module_init_failed", "0000:41:00.0"): "critical"}
