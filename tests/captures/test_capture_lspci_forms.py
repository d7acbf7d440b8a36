"""lspci -vvv as pastes carry it (issue 46 dev set dev_h_other): newer pciutils mark each half of LnkSta '(ok)' or
'(downgraded)', so a width cut at full speed reads 'Speed 16GT/s (ok), Width x4 (downgraded)'; a paste whose tabs
became spaces keeps the fields under their device line. Written in lspci's layout; bus ids and names made up."""

from __future__ import annotations

from gpuvet.captures import links
from gpuvet.captures.text import clean

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


def test_a_nic_or_an_accelerator_is_judged_by_its_trained_link_a_bridge_is_not() -> None:
    """A NIC or an accelerator carries what its trained link carries; a bridge or a USB controller is not judged."""
    fields = FIELDS
    nic = "b3:00.0 Ethernet controller: Mellanox Technologies MT2892 Family [ConnectX-6 Dx]\n" + fields
    accelerator = "01:00.0 Processing accelerators: Device 1e52:b140\n" + fields
    bridge = "00:01.1 PCI bridge: Advanced Micro Devices, Inc. [AMD] Starship/Matisse GPP Bridge\n" + fields
    assert _links(nic + "\n" + accelerator + "\n" + bridge) == [("B3:00.0", 32.0, 8, False, True),
                                                                ("01:00.0", 32.0, 8, False, True)]
    assert links.parse_lspci(clean(nic.replace("Width x8 (downgraded)", "Width x16 (ok)")).lines).links[0].width == 16
