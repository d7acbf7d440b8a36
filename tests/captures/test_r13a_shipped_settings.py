"""Issue 46 (R13A): fields nvidia-smi and nccl-tests print as 'not read' are never a module fault, and a setting a
product ships with is judged against its design. Written in the tools' formats: nvidia-smi -q's key/value layout
(driver 550, 'GPU Link Info' with 'Host Max' under 'PCIe Generation'), --query-gpu CSV, nccl-tests' result table
(its time printed without decimals from 10000 us on, '#wrong' N/A under -c 0) and lspci -vvv's LnkCap/LnkSta."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.helpers import doctor_capture, found_causes

_Q_HEAD = ("==============NVSMI LOG==============\n\nTimestamp                                 : Mon Jun  3 10:00:00 2024\n"
           "Driver Version                            : 550.127.05\nCUDA Version                              : 12.4\n\n"
           "Attached GPUs                             : 1\n")


def _q(product: str, *, host_max: str = "4", width: str = "16x", width_max: str = "16x", ecc: str = "Enabled",
       brand: str = "NVIDIA") -> str:
    return (_Q_HEAD + "GPU 00000000:3B:00.0\n"
            f"    Product Name                          : {product}\n"
            f"    Product Brand                         : {brand}\n"
            "    ECC Mode\n"
            f"        Current                           : {ecc}\n"
            f"        Pending                           : {ecc}\n"
            "    PCI\n"
            "        Bus                               : 0x3B\n"
            "        Bus Id                            : 00000000:3B:00.0\n"
            "        GPU Link Info\n"
            "            PCIe Generation\n"
            "                Max                       : 4\n"
            "                Current                   : 4\n"
            "                Device Current            : 4\n"
            "                Device Max                : 4\n"
            f"                Host Max                  : {host_max}\n"
            "            Link Width\n"
            f"                Max                       : {width_max}\n"
            f"                Current                   : {width}\n"
            "    Performance State                     : P0\n")


@pytest.mark.parametrize("host_max", ["Unknown Error", "[Unknown Error]", "N/A", "[Not Supported]"])
def test_host_max_not_read_is_no_module_fault(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                              host_max: str) -> None:
    """A VM's passed-through slot: 'Host Max : Unknown Error' is the host's field unread, not the module."""
    code, data = doctor_capture(capsys, tmp_path, _q("Tesla V100-SXM2-16GB", host_max=host_max))
    assert code == 0 and data["findings"] == [], found_causes(data)


def test_a_module_field_unread_is_still_the_module(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, data = doctor_capture(capsys, tmp_path, _q("Tesla V100-SXM2-16GB", host_max="Unknown Error",
                                                     brand="Unknown Error"))
    assert code == 1 and found_causes(data) == {("module_unreadable", "0000:3B:00.0")}
    assert data["findings"][0]["evidence"]["fields"] == ["Product Brand"]


def test_query_gpu_host_max_error_is_no_fault(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    csv = ("pci.bus_id, name, pcie.link.gen.gpumax, pcie.link.gen.hostmax, temperature.gpu\n"
           "00000000:3B:00.0, Tesla V100-SXM2-16GB, 3, [Unknown Error], 35\n")
    code, data = doctor_capture(capsys, tmp_path, csv)
    assert code == 0 and data["findings"] == [], found_causes(data)


@pytest.mark.parametrize("product", ["NVIDIA GeForce RTX 5090", "NVIDIA A10G", "NVIDIA RTX A6000", "NVIDIA L4"])
def test_add_in_card_at_x8_of_x16_is_the_slot(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                              product: str) -> None:
    code, data = doctor_capture(capsys, tmp_path, _q(product, width="8x"))
    assert code == 0 and data["findings"] == [], found_causes(data)
    link = next(s for s in data["steps"] if s["check"] == "link_state")
    assert link["status"] == "clear" and "slot" in link["summary"]


@pytest.mark.parametrize(("product", "width"), [("NVIDIA GeForce RTX 3090", "4x"), ("NVIDIA A10G", "1x"),
                                                ("NVIDIA H100 80GB HBM3", "8x"), ("NVIDIA A100-SXM4-40GB", "8x")])
def test_link_below_design_stays_a_fault(capsys: pytest.CaptureFixture[str], tmp_path: Path, product: str,
                                         width: str) -> None:
    """Below half the card's width (x4, x1 of x16), or a baseboard module (SXM: wired x16) below its maximum."""
    code, data = doctor_capture(capsys, tmp_path, _q(product, width=width))
    assert code == 1 and found_causes(data) == {("pcie_link_downgraded", "0000:3B:00.0")}


@pytest.mark.parametrize("product", ["NVIDIA RTX 6000 Ada Generation", "NVIDIA GeForce RTX 4090", "NVIDIA RTX A5000",
                                     "Quadro RTX 8000", "NVIDIA TITAN RTX", "NVIDIA RTX 4000 SFF Ada Generation"])
def test_ecc_off_as_shipped_is_a_setting(capsys: pytest.CaptureFixture[str], tmp_path: Path, product: str) -> None:
    code, data = doctor_capture(capsys, tmp_path, _q(product, ecc="Disabled"))
    assert code == 0 and data["findings"] == [], found_causes(data)
    ecc = next(s for s in data["steps"] if s["check"] == "ecc_health")
    assert ecc["status"] == "clear" and "as the product ships" in ecc["summary"]


@pytest.mark.parametrize("product", ["NVIDIA A100-SXM4-40GB", "NVIDIA A10G", "NVIDIA L40S", "Tesla V100-PCIE-32GB"])
def test_ecc_off_on_a_datacenter_part_stays(capsys: pytest.CaptureFixture[str], tmp_path: Path, product: str) -> None:
    code, data = doctor_capture(capsys, tmp_path, _q(product, ecc="Disabled"))
    assert code == 1 and found_causes(data) == {("ecc_disabled", "0000:3B:00.0")}


_NCCL_HEAD = ("# nThread 1 nGpus 8 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 "
              "validation: 0\n#\n# Using devices\n"
              "#   Rank  0 Pid   3442 on  hostname device  0 [0x07] A100-SXM4-40GB\n#\n"
              "#                                                     out-of-place                       in-place\n"
              "#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  "
              "error\n"
              "#        (B)    (elements)                     (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n")
_NCCL_ROWS = ("     1048576        262144   float     sum    74.78   14.02   24.54    N/A    76.17   13.77   24.09    N/A\n"
              "  2147483648     536870912   float     sum    16215  132.44  231.76    N/A    16203  132.53  231.93    N/A\n"
              "  8589934592    2147483648   float     sum    63896  134.44  235.26    N/A    63959  134.30  235.03    N/A\n")
_NCCL_TAIL = "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 68.4048\n#\n"


def test_nccl_tests_unchecked_rows_are_no_corruption(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """-c 0 prints N/A in the error column; a time of 10000 us or more prints without decimals ('%7.0f'): neither
    is a root column nor a #wrong count."""
    code, data = doctor_capture(capsys, tmp_path, _NCCL_HEAD + _NCCL_ROWS + _NCCL_TAIL, name="all_reduce_perf.txt")
    assert "data_corruption_in_transfer" not in {c for c, _ in found_causes(data)}, found_causes(data)


def test_nccl_tests_wrong_count_stays_corruption(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    head = _NCCL_HEAD.replace("redop     time", "redop    root     time").replace("error\n", "#wrong\n")
    rows = ("  2147483648     536870912   float     sum      -1    16215  132.44  231.76      3    16203  132.53  "
            "231.93      0\n")
    code, data = doctor_capture(capsys, tmp_path, head + rows + "# Out of bounds values : 3 FAILED\n",
                                name="all_reduce_perf.txt")
    assert "data_corruption_in_transfer" in {c for c, _ in found_causes(data)}, found_causes(data)


def _lspci(name: str, width: str) -> str:
    return (f"3b:00.0 VGA compatible controller: NVIDIA Corporation {name} (rev a1) (prog-if 00 [VGA controller])\n"
            "\tCapabilities: [68] Express (v2) Legacy Endpoint, MSI 00\n"
            "\t\tLnkCap:\tPort #0, Speed 16GT/s, Width x16, ASPM L0s L1, Exit Latency L0s <1us, L1 <4us\n"
            f"\t\tLnkSta:\tSpeed 16GT/s, Width {width} (downgraded)\n")


@pytest.mark.parametrize(("name", "width", "fault"), [("GA102 [GeForce RTX 3090]", "x8", False),
                                                      ("GA102 [GeForce RTX 3090]", "x4", True),
                                                      ("GA100 [A100 SXM4 40GB]", "x8", True)])
def test_lspci_gpu_width_judged_against_design(capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str,
                                               width: str, fault: bool) -> None:
    code, data = doctor_capture(capsys, tmp_path, _lspci(name, width), name="lspci.txt")
    assert (("pcie_link_downgraded", "3b:00.0") in {(c, m.lower()) for c, m in found_causes(data)}) is fault, \
        found_causes(data)


def test_a_peer_of_the_same_model_trained_wider_keeps_the_warn(capsys: pytest.CaptureFixture[str],
                                                                tmp_path: Path) -> None:
    """Two RTX 5090s in one node, one at x16: the node's design gives this model x16, so the x8 one is a fault."""
    one = _q("NVIDIA GeForce RTX 5090", width="8x")
    two = _q("NVIDIA GeForce RTX 5090").split("Attached GPUs                             : 1\n", 1)[1]
    text = one.replace("Attached GPUs                             : 1", "Attached GPUs                             : 2")
    text += two.replace("3B:00.0", "5E:00.0")
    code, data = doctor_capture(capsys, tmp_path, text)
    assert code == 1 and found_causes(data) == {("pcie_link_downgraded", "0000:3B:00.0")}, found_causes(data)


def _lspci_head(head: str, width: str, bus: str = "3b:00.0") -> str:
    return (f"{bus} {head} (rev a1)\n\tCapabilities: [68] Express (v2) Endpoint, MSI 00\n"
            "\t\tLnkCap:\tPort #0, Speed 32GT/s, Width x16, ASPM L0s L1, Exit Latency L0s <1us, L1 <4us\n"
            f"\t\tLnkSta:\tSpeed 32GT/s, Width {width} (downgraded)\n")


@pytest.mark.parametrize("head", ["3D controller [0302]: NVIDIA Corporation Device 2330",
                                  "3D controller [0302]: NVIDIA Corporation Device [10de:2330]",
                                  "3D controller: NVIDIA Corporation Device 2330",
                                  "3D controller [0302]: NVIDIA Corporation GH100 [H100 SXM5 80GB] [10de:2330]",
                                  "3D controller [0302]: Advanced Micro Devices, Inc. [AMD/ATI] Device 74a1"])
def test_lspci_nn_brackets_are_no_product_name(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                               head: str) -> None:
    """REV66b: lspci -nn's class and ids ('[0302]', '[10de:2330]') and the vendor's '[AMD/ATI]' name no product; an
    unnamed or baseboard module at x8 of x16 is never excused as the slot's wiring."""
    code, data = doctor_capture(capsys, tmp_path, _lspci_head(head, "x8"), name="lspci.txt")
    assert ("pcie_link_downgraded", "3b:00.0") in {(c, m.lower()) for c, m in found_causes(data)}, found_causes(data)


def test_lspci_nn_names_an_add_in_card_by_its_product(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    head = "VGA compatible controller [0300]: NVIDIA Corporation GA102 [GeForce RTX 3090] [10de:2204]"
    code, data = doctor_capture(capsys, tmp_path, _lspci_head(head, "x8"), name="lspci.txt")
    assert ("pcie_link_downgraded", "3b:00.0") not in {(c, m.lower()) for c, m in found_causes(data)}


def test_lspci_peer_of_the_same_model_trained_wider_keeps_the_warn(capsys: pytest.CaptureFixture[str],
                                                                    tmp_path: Path) -> None:
    """REV66b: one fact, one verdict: two RTX 3090s lspci shows at x8 and x16 give the x8 one the warn -q gives."""
    text = _lspci("GA102 [GeForce RTX 3090]", "x8") + "\n" + _lspci("GA102 [GeForce RTX 3090]", "x16").replace(
        "3b:00.0", "5e:00.0").replace("Width x16 (downgraded)", "Width x16")
    code, data = doctor_capture(capsys, tmp_path, text, name="lspci.txt")
    got = {(c, m.lower()) for c, m in found_causes(data)}
    assert ("pcie_link_downgraded", "3b:00.0") in got and ("pcie_link_downgraded", "5e:00.0") not in got, got
