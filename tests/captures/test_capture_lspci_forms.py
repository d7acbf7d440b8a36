"""lspci -vvv as pastes carry it (issue 46 dev set dev_h_other): newer pciutils mark each half of LnkSta '(ok)' or
'(downgraded)', so a width cut at full speed reads 'Speed 16GT/s (ok), Width x4 (downgraded)'; a paste whose tabs
became spaces keeps the fields under their device line. Written in lspci's layout; bus ids and names made up."""

from __future__ import annotations

import json
from pathlib import Path

from gpuvet.captures import links
from gpuvet.captures.text import clean
from gpuvet.cli.app import main

HEAD = "65:00.0 3D controller: NVIDIA Corporation GH100 [H100 PCIe] (rev a1)\n"
FIELDS = ("\tSubsystem: NVIDIA Corporation Device 1839\n"
          "\tCapabilities: [68] Express (v2) Endpoint, MSI 00\n"
          "\t\tLnkCap:\tPort #0, Speed 32GT/s, Width x16, ASPM not supported\n"
          "\t\tLnkSta:\tSpeed 32GT/s (ok), Width x8 (downgraded)\n"
          "\t\t\tTrErr- Train- SlotClk+ DLActive- BWMgmt- ABWMgmt-\n")


def _links(text: str) -> list[tuple[str, float | None, int | None, bool, bool]]:
    return [(p.device, p.speed_gts, p.width, p.speed_downgraded, p.width_downgraded)
            for p in links.parse_lspci(clean(text).lines).links]


def test_a_width_downgraded_at_full_speed_is_read_with_its_ok_mark() -> None:
    assert _links(HEAD + FIELDS) == [("65:00.0", 32.0, 8, False, True)]


def test_fields_indented_with_spaces_stay_with_their_device_line() -> None:
    spaces = HEAD + FIELDS.replace("\t", "        ")
    assert _links(spaces) == [("65:00.0", 32.0, 8, False, True)]
    assert not any("no LnkCap/LnkSta" in n for n in links.parse_lspci(clean(spaces).lines).notes)


def test_a_speed_the_kernel_cannot_name_keeps_the_width() -> None:
    unknown = HEAD + FIELDS.replace("Port #0, Speed 32GT/s, Width x16", "Port #0, Speed unknown, Width x16")
    [link] = links.parse_lspci(clean(unknown).lines).links
    assert (link.cap_speed_gts, link.cap_width, link.width) == (None, 16, 8)


def test_a_nic_is_kept_for_the_nic_rule_an_accelerator_or_a_bridge_is_not_judged() -> None:
    """A NIC's trained link goes to the NIC rule (checks/nics.pcie), never to the module rule; an accelerator, a
    bridge or a USB controller is not judged as a GPU."""
    nic = "b3:00.0 Ethernet controller: Mellanox Technologies MT2892 Family [ConnectX-6 Dx]\n" + FIELDS
    accelerator = "01:00.0 Processing accelerators: Device 1e52:b140\n" + FIELDS
    bridge = "00:01.1 PCI bridge: Advanced Micro Devices, Inc. [AMD] Starship/Matisse GPP Bridge\n" + FIELDS
    got = links.parse_lspci(clean(nic + "\n" + accelerator + "\n" + bridge).lines)
    assert got.links == []
    assert [(p.device, p.speed_gts, p.width, p.cap_width) for p in got.nics] == [("B3:00.0", 32.0, 8, 16)]


NIC_LSPCI = (  # an onboard 1 GbE port wired x1 of x4 by design; a dual-port ConnectX-6 Dx at Gen4 x8 of x16
    "04:00.0 Ethernet controller: Intel Corporation I350 Gigabit Network Connection (rev 01)\n"
    "\tCapabilities: [a0] Express (v2) Endpoint, MSI 00\n"
    "\t\tLnkCap:\tPort #0, Speed 5GT/s, Width x4, ASPM L0s L1, Exit Latency L0s <4us, L1 <32us\n"
    "\t\tLnkSta:\tSpeed 5GT/s (ok), Width x1 (downgraded)\n\n"
    "b3:00.0 Ethernet controller: Mellanox Technologies MT2892 Family [ConnectX-6 Dx]\n"
    "\tCapabilities: [60] Express (v2) Endpoint, MSI 00\n"
    "\t\tLnkCap:\tPort #0, Speed 16GT/s, Width x16, ASPM not supported\n"
    "\t\tLnkSta:\tSpeed 16GT/s (ok), Width x8 (downgraded)\n\n"
    "b3:00.1 Ethernet controller: Mellanox Technologies MT2892 Family [ConnectX-6 Dx]\n"
    "\tCapabilities: [60] Express (v2) Endpoint, MSI 00\n"
    "\t\tLnkCap:\tPort #0, Speed 16GT/s, Width x16, ASPM not supported\n"
    "\t\tLnkSta:\tSpeed 16GT/s (ok), Width x8 (downgraded)\n\n"
    "17:00.0 3D controller: NVIDIA Corporation GH100 [H100 SXM5 80GB] (rev a1)\n"
    "\tCapabilities: [68] Express (v2) Endpoint, MSI 00\n"
    "\t\tLnkCap:\tPort #0, Speed 32GT/s, Width x16, ASPM not supported\n"
    "\t\tLnkSta:\tSpeed 32GT/s (ok), Width x16 (ok)\n")


def _doctor(capsys, tmp_path: Path, text: str) -> tuple[list[tuple[str, str]], str]:
    path = tmp_path / "lspci.txt"
    path.write_text(text)
    main(["doctor", "--from", str(path), "--json", "--all"])
    got = json.loads(capsys.readouterr().out)
    step = next((s["summary"] for s in got["steps"] if s["check"] == "nic_ports"), "")
    return [(f["cause"], f["severity"]) for f in got["findings"]], step


def test_a_nics_narrow_link_is_judged_by_the_nic_rule_not_as_a_gpu_link(capsys, tmp_path: Path) -> None:
    """With no port rate to judge against, a NIC's link below its capability is the NIC rule's note (one per
    card, not per function): the ConnectX-6 Dx's carries every rate its model runs at, the Intel card's model
    is not in the catalog (review 55 F18: can't tell, never 'it still carries the port's rate'); a GPU's
    downgraded link is still the module rule's warning."""
    got, step = _doctor(capsys, tmp_path, NIC_LSPCI)
    assert sorted(got) == [("nic_pcie_below_cap", "info"), ("nic_pcie_rate_unread", "info")]
    assert step.startswith("2 NIC finding(s): Intel Corporation I350 Gigabit Network Connection (0000:04:00.0) "
                           "PCIe Gen2 x1, capable of Gen2 x4")
    gpu_narrow = NIC_LSPCI.replace("Width x16 (ok)", "Width x8 (downgraded)")
    assert ("pcie_link_downgraded", "warn") in _doctor(capsys, tmp_path, gpu_narrow)[0]
