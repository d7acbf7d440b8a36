"""Issue 46 (R13A): a setting a product ships with is judged against its design, not against the card's maximum.

- ECC off on a card that ships with it off (GeForce, TITAN, the RTX workstation cards of the Turing, Ampere and Ada
  generations: NVIDIA's RTX A6000 / RTX 6000 Ada user guides say ECC is off by default and `nvidia-smi -e 1` turns
  it on) is how the card was sold, not a fault; ECC off on a datacenter part (A100, H100, A10G, L40S …) stays one.
  NVS, MX and laptop GPUs have no ECC at all. Issue 46: deviceQuery's 'Device has ECC support: Disabled' is printed
  both where ECC is missing and where it is off, so from such a tool ECC off is a fault only on a model known to
  carry ECC on by design (ecc_on_by_design: Tesla, the data-center A/H/B/L parts, Instinct); nvidia-smi -q's
  'Disabled' (N/A where there is none) says ECC exists, so there only the shipped-off models are exempt.
- A PCIe link narrower than the card's own maximum: the card trains at what the slot gives. Where the host's slot
  width is read, that is the expectation. Where it is not, a baseboard module (SXM, OAM, HGX: wired x16 by the
  board's design) below its maximum is a fault, while an add-in card at half its width or more (x8 of x16: a slot
  wired or bifurcated x8, a cloud instance whose slot is x8 by design as AWS g5's A10G) is the slot's wiring, said
  but not judged; an add-in card below half (x4, x1 of x16) stays a fault: it loses its host bandwidth.
"""

from __future__ import annotations

import re

from gpuvet.node.ecc_design import ecc_off_as_shipped as ecc_off_as_shipped  # the one place (FX68C)
from gpuvet.node.ecc_design import ecc_off_is_fault as ecc_off_is_fault
from gpuvet.node.ecc_design import ecc_on_by_design as ecc_on_by_design

_BASEBOARD = re.compile(
    r"SXM|\bHGX\b|\bOAM\b|\bG[BH]\d00\b|\bH100 80GB HBM3\b|\bH200\b(?!\s*NVL)|\bB[12]00\b|\bMI(?:250X?|3\d\dX)\b", re.I
)


# lspci's own brackets, never a product: the class and ids of -nn ('[0302]', '[10de:2330]'), the vendor's short
# name ('[AMD/ATI]', '[AMD]'), '(rev a1)' and '(prog-if 00 [VGA controller])'
_LSPCI_NOT_PRODUCT = re.compile(
    r"\[[0-9a-fA-F]{4}(?::[0-9a-fA-F]{4})?\]|\[AMD(?:/ATI)?\]|\((?:rev \w+|prog-if [^()]*(?:\[[^\]]*\])?)\)"
)
_BRACKETED = re.compile(r"\[([^\[\]]*[A-Za-z][^\[\]]*)\]")


def lspci_product(name: str | None) -> str | None:
    """The product pci.ids names in brackets on an lspci line ('GA102 [GeForce RTX 3090]' -> 'GeForce RTX 3090'),
    None where only lspci's own brackets are there (an id the pci.ids in use does not name: 'Device 2330')."""
    found = _BRACKETED.findall(_LSPCI_NOT_PRODUCT.sub("", name or ""))
    return found[-1].strip() if found else None


def narrow_by_design(
    product: str | None, width: int, width_max: int, host_width: int | None = None, peer_width: int | None = None
) -> bool:
    """A link at ``width`` of the card's ``width_max`` that the design explains: at the host slot's width where
    that is read; else a named add-in card (no baseboard module) at half its width or more, unless a peer of its
    model in the same capture trained wider (``peer_width``)."""
    if host_width is not None:
        return width >= host_width
    if peer_width is not None and peer_width > width:
        return False  # a peer of the same model in this node trained wider: the node's design gives more
    if product is None or not product.strip() or _BASEBOARD.search(product):
        return False  # no product named: no design to hold the link against but the card's own maximum
    return width * 2 >= width_max
