"""amdgpu's firmware images are named after the chip they are for (``amdgpu/navy_flounder_sos.bin``,
``amdgpu/gc_11_0_0_mes.bin``): a log that loads one names the chip where no line names the card. The code
names are the Linux amdgpu driver's (its MODULE_FIRMWARE lines and linux-firmware's amdgpu/ directory);
the chip families are those AMD's and the driver's documentation give them."""

from __future__ import annotations

import re

# amdgpu's firmware code name -> the chip (the discrete Radeon and Instinct families: GCN's Southern and Sea
# Islands, which amdgpu drives beside radeon, Volcanic Islands and Polaris (gfx_v8_0.c's MODULE_FIRMWARE), Vega,
# CDNA's Arcturus and Aldebaran, Navi 1x, 2x and 3x); the APUs' names (carrizo, raven, renoir …) are no card
CHIPS = {
    "tahiti": "Tahiti", "pitcairn": "Pitcairn", "verde": "Cape Verde", "oland": "Oland", "hainan": "Hainan",
    "bonaire": "Bonaire", "hawaii": "Hawaii", "topaz": "Topaz (Iceland)", "tonga": "Tonga", "fiji": "Fiji",
    "polaris10": "Polaris 10", "polaris11": "Polaris 11", "polaris12": "Polaris 12", "vegam": "Vega M",
    "arcturus": "Arcturus (MI100)", "aldebaran": "Aldebaran (MI200)",
    "vega10": "Vega 10", "vega12": "Vega 12", "vega20": "Vega 20",
    "navi10": "Navi 10", "navi12": "Navi 12", "navi14": "Navi 14",
    "sienna_cichlid": "Navi 21", "navy_flounder": "Navi 22", "dimgrey_cavefish": "Navi 23", "beige_goby": "Navi 24",
    "gc_11_0_0": "Navi 31", "gc_11_0_3": "Navi 32", "gc_11_0_2": "Navi 33",
}
_IMAGE = re.compile(r"\bamdgpu[/_](" + "|".join(sorted(CHIPS, key=len, reverse=True)) + r")_\w+\.bin\b")


def chips_named(texts: list[str]) -> list[tuple[str, str]]:
    """(code name, chip) of each chip the lines' firmware images name, in the order first named."""
    codes = dict.fromkeys(m.group(1) for t in texts if "amdgpu" in t for m in _IMAGE.finditer(t))
    return [(c, CHIPS[c]) for c in codes]
