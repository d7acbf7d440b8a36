"""Which module models carry ECC, and whether ECC read as off is a fault (issue 46, R13A and FX68C): the one place
every reader's ECC mode is judged against (doctor's captured -q, deviceQuery and inventories; validate's live
reading). GeForce, TITAN and the RTX workstation cards of Turing, Ampere and Ada ship with ECC off (NVIDIA's RTX
A6000 / RTX 6000 Ada user guides: off by default, `nvidia-smi -e 1` turns it on); NVS, MX and laptop GPUs, Radeon
and Arc have none. The data-center parts (Tesla; A100 … GB300; L4, L40S; Instinct; Intel's Data Center GPU) carry it
on by design. deviceQuery's 'Device has ECC support: Disabled' is printed both where ECC is missing and where it is
off, so from such a tool ECC off is a fault only on a model known to carry it on; nvidia-smi -q and NVML say N/A or
'not supported' where there is none, so their 'Disabled' is a fault unless the model ships off."""

from __future__ import annotations

import re

_ECC_OFF_AS_SHIPPED = re.compile(
    r"GeForce|\bTITAN\b|\bQuadro RTX\b|\bRTX A\d{4}\b|\bRTX \d{4}(?: SFF)? Ada\b|\bRTX \d{4}(?:\s*Ti)?\s*$|"
    r"\bNVS \d{3}|\bMX\d{3}\b|\bLaptop GPU\b|\bMax-Q\b|\bRadeon(?! Instinct| Pro VII)\b|\bArc\b", re.I
)
# the models whose design has ECC on (HBM, or GDDR with ECC on by default): NVIDIA's data-center parts (Tesla; A100,
# A800, A30, A40, A10(G), A16, A2; H100, H200, H800, H20, GH200; B100, B200, GB200, GB300; L4, L20, L40(S); T4 and
# V100, P100 named without Tesla), Quadro's HBM cards (GP100, GV100), AMD Instinct MI and Intel's Data Center GPU
_ECC_ON_BY_DESIGN = re.compile(
    r"\bTesla\b|(?<![\w-])(?:A(?:100|800|30|40|10G?|16|2)|H(?:100|200|800|20)|GH200|G?B(?:100|200|300)|"
    r"L(?:4|20|40S?)|T4|V100|P100|GP100|GV100)(?![\w])|\bInstinct\b|\bMI\d{2,3}\w*\b|\bData Center GPU\b", re.I
)


def ecc_off_as_shipped(product: str | None) -> bool:
    """A product that ships with ECC off (or has none to turn on): its 'ECC Mode Disabled' is a setting."""
    return product is not None and _ECC_OFF_AS_SHIPPED.search(product.strip()) is not None


def ecc_on_by_design(product: str | None) -> bool:
    """A model known to carry ECC, on as it ships (a data-center part): ECC off there is a fault."""
    return product is not None and not ecc_off_as_shipped(product) and _ECC_ON_BY_DESIGN.search(product) is not None


def ecc_off_is_fault(product: str | None, said_present: bool) -> bool:
    """Whether a module's ECC read as off is a fault. ``said_present``: the tool says ECC exists and is off
    (nvidia-smi -q's 'Disabled', NVML); False where its 'Disabled' also means 'no ECC' (deviceQuery's 'ECC
    support: Disabled'): then only a model known to have ECC on by design is at fault."""
    if ecc_off_as_shipped(product):
        return False
    return said_present or ecc_on_by_design(product)
