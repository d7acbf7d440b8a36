"""Issue 46 (ZX1): a NIC driver's kernel lines that fail its card (mlx5_core's probe and init failures, its health
poll, the driver core's probe line; bnxt_en, ice the same) are a fault of that NIC, named by its bus id."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuvet.captures import nic_driver
from gpuvet.captures.text import clean
from gpuvet.cli.app import main

PROBE = """$ dmesg | grep mlx5
[    8.101010] mlx5_core 0000:a1:00.0: firmware version: 16.35.2000
[    8.912345] mlx5_core 0000:a1:00.0: mlx5_function_setup:1043:(pid 412): failed to allocate init pages
[    8.913000] mlx5_core 0000:a1:00.0: mlx5_init_one failed with error code -12
[    8.913500] mlx5_core 0000:a1:00.0: probe with driver mlx5_core failed with error -12
"""
HEALTH = """[ 9182.551234] mlx5_core 0000:5e:00.1: poll_health:801:(pid 0): device's health compromised - reached miss count
[ 9182.551301] mlx5_core 0000:5e:00.1: print_health_info:423:(pid 0): Fatal error 2 detected
"""
HEALTHY = """[    8.101010] mlx5_core 0000:a1:00.0: firmware version: 16.35.2000
[    9.200000] mlx5_core 0000:a1:00.0: Port module event: module 0, Cable plugged
[    9.300000] mlx5_core 0000:a1:00.0: mlx5_pcie_event:301:(pid 9): PCIe slot advertised sufficient power (75W).
"""


def test_probe_failure_is_the_nic_at_its_bus_id() -> None:
    [f] = nic_driver.parse(clean(PROBE).lines).failures
    assert (f.bus_id, f.driver, f.line, f.count, f.firmware) == ("0000:a1:00.0", "mlx5_core", 3, 3, "16.35.2000")


def test_older_core_probe_line_and_other_drivers() -> None:
    text = "[    3.1] bnxt_en: probe of 0000:17:00.0 failed with error -5\n" \
           "[    4.2] ice 0000:31:00.0: ice_init_hw failed: -105\n"
    found = {(f.bus_id, f.driver) for f in nic_driver.parse(clean(text).lines).failures}
    assert found == {("0000:17:00.0", "bnxt_en"), ("0000:31:00.0", "ice")}


def test_health_poll_is_a_failure_and_a_healthy_card_none() -> None:
    [f] = nic_driver.parse(clean(HEALTH).lines).failures
    assert (f.bus_id, f.count) == ("0000:5e:00.1", 2)
    assert nic_driver.parse(clean(HEALTHY).lines).failures == []


def test_doctor_names_the_nic_not_a_gpu(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "dmesg.txt"
    path.write_text(PROBE)
    code = main(["doctor", "--from", str(path), "--json"])
    found = [(f["cause"], f["module"], f["severity"]) for f in json.loads(capsys.readouterr().out)["findings"]]
    assert found == [("nic_driver_failed", "0000:a1:00.0", "warn")]
    assert code == 1
