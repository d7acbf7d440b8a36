"""Issue 46 (FX68C): ECC read as off is judged by what the model carries. deviceQuery's 'Device has ECC support:
Disabled' is printed both where ECC is missing and where it is switched off (the CUDA samples print
deviceProp.ECCEnabled), so from it ECC off is a fault only on a model known to carry ECC on by design; NVS, MX,
laptop and GeForce parts have none. nvidia-smi -q prints 'N/A' where there is no ECC, so its 'Disabled' stays a
fault on any model that does not ship with ECC off. Inputs written in deviceQuery's and nvidia-smi -q's layouts."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuvet.doctor.shipped_settings import ecc_off_is_fault, ecc_on_by_design
from tests.support.helpers import doctor_capture, found_causes


def _device_query(*names: str) -> str:
    head = ("./deviceQuery Starting...\n\n CUDA Device Query (Runtime API) version (CUDART static linking)\n\n"
            f"Detected {len(names)} CUDA Capable device(s)\n")
    body = "".join(
        f'\nDevice {i}: "{name}"\n'
        "  CUDA Driver Version / Runtime Version          11.4 / 11.4\n"
        "  CUDA Capability Major/Minor version number:    6.1\n"
        "  Total amount of global memory:                 5059 MBytes (5304745984 bytes)\n"
        "  Device has ECC support:                        Disabled\n"
        f"  Device PCI Domain ID / Bus ID / location ID:   0 / {i + 1} / 0\n"
        for i, name in enumerate(names))
    tail = (f"\ndeviceQuery, CUDA Driver = CUDART, CUDA Driver Version = 11.4, CUDA Runtime Version = 11.4, "
            f"NumDevs = {len(names)}\nResult = PASS\n")
    return head + body + tail


@pytest.mark.parametrize("names", [("NVS 310",), ("GeForce GTX 1060 6GB", "NVS 310"), ("Quadro P2000",),
                                   ("NVIDIA GeForce RTX 3060 Laptop GPU",), ("GeForce MX150",)])
def test_device_query_disabled_on_a_model_without_known_ecc_is_no_finding(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, names: tuple[str, ...]) -> None:
    code, data = doctor_capture(capsys, tmp_path, _device_query(*names))
    assert code == 0 and "ecc_disabled" not in {c for c, _ in found_causes(data)}, found_causes(data)
    ecc = next(s for s in data["steps"] if s["check"] == "ecc_health")
    assert ecc["status"] == "clear"


@pytest.mark.parametrize("name", ["Tesla V100-PCIE-16GB", "NVIDIA A100-PCIE-40GB", "Tesla T4"])
def test_device_query_disabled_on_a_datacenter_part_stays_a_fault(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str) -> None:
    code, data = doctor_capture(capsys, tmp_path, _device_query(name))
    assert code == 1 and found_causes(data) == {("ecc_disabled", "0000:01:00.0")}


def test_smi_q_disabled_on_an_unlisted_model_stays_a_fault(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """nvidia-smi -q says N/A where there is no ECC: its 'Disabled' on a model in neither list is ECC switched off."""
    q = ("==============NVSMI LOG==============\n\nDriver Version                            : 550.127.05\n\n"
         "Attached GPUs                             : 1\nGPU 00000000:3B:00.0\n"
         "    Product Name                          : NVIDIA Quadro GP100\n    ECC Mode\n"
         "        Current                           : Disabled\n        Pending                           : Disabled\n")
    code, data = doctor_capture(capsys, tmp_path, q)
    assert code == 1 and ("ecc_disabled", "0000:3B:00.0") in found_causes(data)


@pytest.mark.parametrize(("product", "present", "fault"), [
    ("NVS 310", False, False), ("NVS 310", True, False), ("GeForce GTX 1060 6GB", True, False),
    ("Quadro P2000", False, False), ("Quadro P2000", True, True), (None, False, False), (None, True, True),
    ("NVIDIA H100 80GB HBM3", False, True), ("AMD Instinct MI250X", False, True), ("NVIDIA RTX A6000", True, False),
])
def test_one_rule_for_every_reader(product: str | None, present: bool, fault: bool) -> None:
    assert ecc_off_is_fault(product, present) is fault


def test_the_design_list_names_data_center_parts_only() -> None:
    on = ["Tesla K80", "NVIDIA A10G", "NVIDIA L40S", "NVIDIA H800", "NVIDIA GH200 480GB", "NVIDIA B200", "NVIDIA A2"]
    off = ["NVIDIA RTX A1000", "NVS 510", "NVIDIA GeForce RTX 4090", "Quadro P4000", "Intel Arc A770", ""]
    assert all(ecc_on_by_design(p) for p in on) and not any(ecc_on_by_design(p) for p in off)


@pytest.mark.parametrize(("model", "warns"), [("NVIDIA H200", True), ("NVIDIA RTX A6000", False),
                                              ("NVIDIA GeForce RTX 4090", False)])
def test_validates_live_reading_uses_the_same_rule(model: str, warns: bool) -> None:
    """NVML reads 'not supported' where a model has no ECC: its off is a fault unless the model ships off."""
    from dataclasses import replace

    from gpuvet.backends.sim.backend import SimBackend
    from gpuvet.checks.software import software_checks

    inv = SimBackend.from_ref("hgx-h200-8").inventory()
    inv = replace(inv, modules=[replace(m, model=model, ecc_enabled=False) for m in inv.modules[:1]])
    (ecc,) = [c for c in software_checks(inv, {}, None) if c.name == "ecc"]
    assert (ecc.verdict.value == "warn") is warns, ecc
